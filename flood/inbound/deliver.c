/* flood/inbound/deliver.c: the crowd's outgoing delivery queue (see deliver.h). One thread drives a
 * libcurl multi handle; deliver_post only appends to the queue and wakes it. */
#include "flood/inbound/deliver.h"

#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flood/core/clock.h"
#include "flood/core/http.h"
#include "sign/sign.h"

struct job {
    struct job *next;
    int instance, actor;
    char *inbox, *body;
    size_t body_len;
    int tries;
    uint64_t due_us;        /* CLOCK_MONOTONIC */
    struct http_call *call; /* the try in flight, or NULL */
};

struct deliver {
    struct crowd *crowd;
    char **resolve; /* curl-style HOST:PORT:ADDR entries */
    size_t n_resolve;
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t lock;
    struct job *waiting; /* queued or waiting for a retry, unordered */
    struct job *running; /* in the multi handle */
    size_t n_waiting, n_running;
    int stopping;
    uint64_t deadline_us;
    struct deliver_stats st;
};

long deliver_retry_delay_ms(int tries, long status, const char *retry_after, time_t now)
{
    if (status >= 200 && status < 300)
        return -1;
    int retryable =
        status == 0 || status == 408 || status == 429 || (status >= 500 && status < 600);
    if (!retryable || tries >= DELIVER_TRIES || tries < 1)
        return -1;
    long delay = 1000L << (tries - 1);
    if (retry_after) {
        while (*retry_after == ' ' || *retry_after == '\t')
            retry_after++;
        long ra = -1;
        if (isdigit((unsigned char)*retry_after)) {
            const char *p = retry_after;
            ra = 0;
            while (isdigit((unsigned char)*p) && ra <= DELIVER_RETRY_AFTER_MAX_S)
                ra = ra * 10 + (*p++ - '0');
            while (isdigit((unsigned char)*p))
                p++;
            while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
                p++;
            if (*p)
                ra = -1; /* "30s" or "30 x": not the RFC 9110 form */
        } else {
            time_t when;
            char buf[64];
            size_t n = strcspn(retry_after, "\r\n");
            if (n < sizeof(buf)) {
                memcpy(buf, retry_after, n);
                buf[n] = '\0';
                if (sign_parse_http_date(buf, &when) == 0)
                    ra = when > now ? (long)(when - now) : 0;
            }
        }
        if (ra > DELIVER_RETRY_AFTER_MAX_S)
            ra = DELIVER_RETRY_AFTER_MAX_S;
        if (ra >= 0 && ra * 1000 > delay)
            delay = ra * 1000;
    }
    return delay;
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void job_free(struct job *j)
{
    if (!j)
        return;
    http_call_free(j->call);
    free(j->inbox);
    free(j->body);
    free(j);
}

/* Sign and start one try of j. 0, or -1 when it cannot even be built (counted failed). */
static int start(struct deliver *d, struct job *j)
{
    char key_id[WF_URL_MAX];
    crowd_key_id(d->crowd, j->instance, j->actor, key_id);
    struct http_signer s = {.dialect = SIGN_CAVAGE,
                            .key = crowd_key(d->crowd, j->instance, j->actor),
                            .key_id = key_id};
    struct http_opts o = {.resolve = (const char *const *)d->resolve,
                          .n_resolve = d->n_resolve,
                          .timeout_ms = DELIVER_TIMEOUT_MS};
    struct http_req req = {.method = HTTP_POST,
                           .url = j->inbox,
                           .accept = "application/activity+json",
                           .content_type = "application/activity+json",
                           .body = j->body,
                           .body_len = j->body_len,
                           .signer = &s,
                           .o = &o,
                           .discard_body = 1, /* the answer's body is not needed */
                           .who = "deliver"};
    struct flood_err err = {0};
    http_call_free(j->call);
    j->call = http_call_new(&req, j, &err);
    if (!j->call)
        return -1;
    if (curl_multi_add_handle(d->multi, http_call_easy(j->call)) != CURLM_OK) {
        http_call_free(j->call);
        j->call = NULL;
        return -1;
    }
    j->tries++;
    return 0;
}

/* Move due jobs into the multi handle; the wait until the next due one, in ms. */
static long start_due(struct deliver *d)
{
    uint64_t now = clock_mono_us();
    long wait = 1000;
    pthread_mutex_lock(&d->lock);
    struct job **p = &d->waiting;
    while (*p) {
        struct job *j = *p;
        if (j->due_us <= now && d->n_running < DELIVER_RUNNING_MAX) {
            *p = j->next;
            d->n_waiting--;
            pthread_mutex_unlock(&d->lock);
            int rc = start(d, j);
            pthread_mutex_lock(&d->lock);
            if (rc < 0) {
                d->st.failed++;
                job_free(j);
            } else {
                d->n_running++;
                j->next = d->running;
                d->running = j;
            }
            continue;
        }
        if (j->due_us > now && (long)((j->due_us - now) / 1000) < wait)
            wait = (long)((j->due_us - now) / 1000) + 1;
        p = &j->next;
    }
    pthread_mutex_unlock(&d->lock);
    return wait;
}

static void finish(struct deliver *d, CURL *h, CURLcode rc)
{
    struct http_call *call = http_call_of(h);
    struct job *j = http_call_user(call);
    struct http_resp r;
    struct flood_err err;
    long status = 0; /* a transport error or a timeout: retried as a 5xx is */
    curl_multi_remove_handle(d->multi, h);
    int done = http_call_done(call, rc, &r, &err) == 0;
    if (done)
        status = r.status;
    long delay = deliver_retry_delay_ms(j->tries, status, done ? r.retry_after : NULL, time(NULL));
    if (done)
        http_resp_free(&r);
    http_call_free(call);
    j->call = NULL;
    pthread_mutex_lock(&d->lock);
    d->n_running--;
    for (struct job **p = &d->running; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    if (status >= 200 && status < 300) {
        d->st.ok++;
        job_free(j);
    } else if (delay >= 0 &&
               !(d->stopping && clock_mono_us() + (uint64_t)delay * 1000 > d->deadline_us)) {
        d->st.retried++;
        j->due_us = clock_mono_us() + (uint64_t)delay * 1000;
        j->next = d->waiting;
        d->waiting = j;
        d->n_waiting++;
    } else {
        d->st.failed++;
        job_free(j);
    }
    pthread_mutex_unlock(&d->lock);
}

static void *run(void *arg)
{
    struct deliver *d = arg;
    for (;;) {
        pthread_mutex_lock(&d->lock);
        int done =
            d->stopping && ((!d->waiting && !d->n_running) || clock_mono_us() >= d->deadline_us);
        pthread_mutex_unlock(&d->lock);
        if (done)
            break;
        long wait = start_due(d);
        int still = 0;
        curl_multi_poll(d->multi, NULL, 0, (int)(wait > 1000 ? 1000 : wait), NULL);
        curl_multi_perform(d->multi, &still);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(d->multi, &left)))
            if (m->msg == CURLMSG_DONE)
                finish(d, m->easy_handle, m->data.result);
    }
    return NULL;
}

struct deliver *deliver_new(struct crowd *crowd, const char *const *resolve, size_t n_resolve,
                            struct flood_err *err)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct deliver *d = flood_xcalloc(1, sizeof(*d));
    d->crowd = crowd;
    d->resolve = flood_xcalloc(n_resolve ? n_resolve : 1, sizeof(*d->resolve));
    for (size_t i = 0; i < n_resolve; i++)
        d->resolve[i] = flood_xstrdup(resolve[i]);
    d->n_resolve = n_resolve;
    d->multi = curl_multi_init();
    pthread_mutex_init(&d->lock, NULL);
    if (!d->multi || pthread_create(&d->thread, NULL, run, d) != 0) {
        flood_err_set(err, FLOOD_EIO, "deliver: cannot start the delivery thread");
        if (d->multi)
            curl_multi_cleanup(d->multi);
        free_strs(d->resolve, d->n_resolve);
        pthread_mutex_destroy(&d->lock);
        free(d);
        curl_global_cleanup();
        return NULL;
    }
    return d;
}

int deliver_post(struct deliver *d, int instance, int actor, const char *inbox, const char *body)
{
    pthread_mutex_lock(&d->lock);
    if (d->stopping || d->n_waiting + d->n_running >= DELIVER_QUEUE_MAX) {
        d->st.dropped++;
        pthread_mutex_unlock(&d->lock);
        return -1;
    }
    struct job *j = flood_xcalloc(1, sizeof(*j));
    j->instance = instance;
    j->actor = actor;
    j->inbox = flood_xstrdup(inbox);
    j->body = flood_xstrdup(body);
    j->body_len = strlen(body);
    j->due_us = 0;
    j->next = d->waiting;
    d->waiting = j;
    d->n_waiting++;
    d->st.queued++;
    pthread_mutex_unlock(&d->lock);
    curl_multi_wakeup(d->multi);
    return 0;
}

void deliver_get_stats(struct deliver *d, struct deliver_stats *out)
{
    pthread_mutex_lock(&d->lock);
    *out = d->st;
    out->pending = d->n_waiting + d->n_running;
    pthread_mutex_unlock(&d->lock);
}

void deliver_free(struct deliver *d, long grace_ms)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stopping = 1;
    d->deadline_us = clock_mono_us() + (uint64_t)(grace_ms > 0 ? grace_ms : 0) * 1000;
    pthread_mutex_unlock(&d->lock);
    curl_multi_wakeup(d->multi);
    pthread_join(d->thread, NULL);
    /* abandon what is left: handles still in flight, then the waiting ones */
    while (d->running) {
        struct job *j = d->running;
        d->running = j->next;
        curl_multi_remove_handle(d->multi, http_call_easy(j->call));
        d->st.failed++;
        job_free(j);
    }
    while (d->waiting) {
        struct job *j = d->waiting;
        d->waiting = j->next;
        d->st.failed++;
        job_free(j);
    }
    curl_multi_cleanup(d->multi);
    free_strs(d->resolve, d->n_resolve);
    pthread_mutex_destroy(&d->lock);
    free(d);
    curl_global_cleanup();
}

/* flood/send/sender.c: one event loop: libcurl multi on one libevent base, open loop (see
 * sender.h). sender_loops.c runs one of them in the caller's thread, or several on
 * threads of their own. */
#include "flood/send/sender.h"
#include "flood/send/sender_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#define SATURATED_LAG_US 10000
#define SATURATED_CPU    0.9
#define CURL_BUFFER      4096 /* answers are small: a small buffer keeps 10,000 in flight cheap */

int64_t sender_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define rel_now sender_rel_now

int sender_parse_source_ips(const char *s, struct sender_opts *o, struct flood_err *err)
{
    char a[64], b[64];
    const char *dash = s ? strchr(s, '-') : NULL;
    size_t la = dash ? (size_t)(dash - s) : (s ? strlen(s) : 0);
    if (!s || la == 0 || la >= sizeof(a) || (dash && strlen(dash + 1) >= sizeof(b)))
        goto bad;
    memcpy(a, s, la);
    a[la] = 0;
    snprintf(b, sizeof(b), "%s", dash ? dash + 1 : a);
    struct in_addr ia, ib;
    if (inet_pton(AF_INET, a, &ia) != 1 || inet_pton(AF_INET, b, &ib) != 1)
        goto bad;
    uint32_t ha = ntohl(ia.s_addr), hb = ntohl(ib.s_addr);
    if (ha == 0 || hb < ha || hb - ha >= 65536)
        goto bad;
    o->src_base = ha;
    o->src_count = hb - ha + 1;
    return 0;
bad:
    flood_err_set(err, FLOOD_EINVAL,
                  "--source-ips: '%s' is not an IPv4 range A-B (e.g. 127.0.0.11-127.0.0.30)",
                  s ? s : "");
    return -1;
}

/* ---- libcurl <-> libevent, as in curl's multi-event example ------------------------- */

static void check_done(struct sender_loop *s);

static void on_socket(evutil_socket_t fd, short kind, void *arg)
{
    struct sender_loop *s = arg;
    int action =
        ((kind & EV_READ) ? CURL_CSELECT_IN : 0) | ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0);
    int running;
    curl_multi_socket_action(s->multi, fd, action, &running);
    check_done(s);
}

static void on_curl_timer(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct sender_loop *s = arg;
    int running;
    curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(s);
}

static int curl_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    struct sender_loop *s = userp;
    if (timeout_ms < 0) {
        evtimer_del(s->curl_timer);
        return 0;
    }
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    evtimer_add(s->curl_timer, &tv);
    return 0;
}

static int curl_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy;
    struct sender_loop *s = userp;
    struct sockinfo *si = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (si) {
            event_del(&si->ev);
            free(si);
            curl_multi_assign(s->multi, fd, NULL);
        }
        return 0;
    }
    if (!si) {
        si = flood_xcalloc(1, sizeof(*si));
        si->s = s;
        si->fd = fd;
        curl_multi_assign(s->multi, fd, si);
    } else {
        event_del(&si->ev);
    }
    short kind = (short)(((what & CURL_POLL_IN) ? EV_READ : 0) |
                         ((what & CURL_POLL_OUT) ? EV_WRITE : 0) | EV_PERSIST);
    event_assign(&si->ev, s->base, fd, kind, on_socket, s);
    event_add(&si->ev, NULL);
    return 0;
}

/* ---- requests ------------------------------------------------------------------------ */

static CURL *easy_get(struct sender_loop *s)
{
    if (s->n_pool)
        return s->pool[--s->n_pool];
    CURL *e = curl_easy_init();
    if (!e) {
        fprintf(stderr, "flood: out of memory (curl_easy_init)\n");
        abort();
    }
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, s->o.timeout_ms);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)CURL_BUFFER);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL);
    if (s->o.resolve)
        curl_easy_setopt(e, CURLOPT_RESOLVE, s->o.resolve);
    if (s->o.insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (s->o.cacert)
        curl_easy_setopt(e, CURLOPT_CAINFO, s->o.cacert);
    return e;
}

static void easy_put(struct sender_loop *s, CURL *e)
{
    if (s->n_pool == s->cap_pool) {
        s->cap_pool = s->cap_pool ? s->cap_pool * 2 : 256;
        s->pool = flood_xrealloc(s->pool, s->cap_pool * sizeof(*s->pool));
    }
    s->pool[s->n_pool++] = e;
}

/* A write callback that drops the answer's body: only its status is measured. */
static size_t discard(char *ptr, size_t size, size_t n, void *ud)
{
    (void)ptr;
    (void)ud;
    return size * n;
}

static void open_link(struct sender_loop *s, struct signer_req *r)
{
    r->prev = NULL;
    r->next = s->open;
    if (s->open)
        s->open->prev = r;
    s->open = r;
}

static void open_unlink(struct sender_loop *s, struct signer_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        s->open = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static int add_easy(struct sender_loop *s, struct signer_req *r)
{
    CURL *e = r->easy;
    /* --timeout covers the whole activity from its start: time spent queued behind busy
     * connections (and a first knock) counts, as curl's own timeout counts its queue. */
    long left = s->o.timeout_ms - (long)((rel_now(s) - r->start_ns) / 1000000);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, left > 1 ? left : 1L);
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)r->body_len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    return curl_multi_add_handle(s->multi, e) == CURLM_OK ? 0 : -1;
}

/* The origin of a URL: everything before the path. Hand-written, not url_split: it runs
 * for every request sent and only groups requests by a prefix (the signer parsed the URL). */
static struct origin *origin_of(struct sender_loop *s, const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t len = strcspn(p, "/?#") + (size_t)(p - url);
    for (size_t i = 0; i < s->n_origins; i++)
        if (s->origins[i]->len == len && !memcmp(s->origins[i]->key, url, len))
            return s->origins[i];
    s->origins = flood_xrealloc(s->origins, (s->n_origins + 1) * sizeof(*s->origins));
    struct origin *o = flood_xcalloc(1, sizeof(*o));
    s->origins[s->n_origins++] = o;
    o->key = flood_xstrndup(url, len);
    o->len = len;
    return o;
}

static void complete_now(struct sender_loop *s, struct signer_req *r, int outcome);

/* Hand r to libcurl now, or queue it behind its origin's busy connections. */
static void submit(struct sender_loop *s, struct signer_req *r)
{
    struct origin *o = r->origin;
    if (o->active >= s->o.connections) {
        r->qnext = NULL;
        if (o->qtail)
            o->qtail->qnext = r;
        else
            o->qhead = r;
        o->qtail = r;
        return;
    }
    o->active++;
    if (add_easy(s, r)) {
        o->active--;
        complete_now(s, r, OUT_TRANSPORT); /* curl refused the handle */
    }
}

/* An origin's connection is free again: start the next queued request. Returns 1 when
 * one was handed to curl. */
static int origin_release(struct sender_loop *s, struct origin *o)
{
    int started = 0;
    o->active--;
    while (o->qhead && o->active < s->o.connections) {
        struct signer_req *r = o->qhead;
        o->qhead = r->qnext;
        if (!o->qhead)
            o->qtail = NULL;
        r->qnext = NULL;
        submit(s, r);
        started = 1;
    }
    return started;
}

static void complete_now(struct sender_loop *s, struct signer_req *r, int outcome)
{
    open_unlink(s, r);
    s->inflight--;
    int64_t now = rel_now(s);
    stats_tick(s->stats, now, s->inflight); /* the completion's second is the current one */
    stats_done(s->stats, r->op, outcome, 0, r->bad, r->intended_ns, r->start_ns, now);
    easy_put(s, r->easy);
    signer_req_free(r);
}

/* Requests still queued behind their origin's busy connections when --timeout has passed
 * since their start end as timeouts, as they would have in curl's own queue: a target that
 * stops answering shows as timeouts, not as a pile of unfinished requests at the end. The
 * queues are in start order, so only their heads are looked at. */
static void expire_queued(struct sender_loop *s, int64_t now)
{
    int64_t limit = (int64_t)s->o.timeout_ms * 1000000;
    for (size_t i = 0; i < s->n_origins; i++) {
        struct origin *o = s->origins[i];
        while (o->qhead && now - o->qhead->start_ns >= limit) {
            struct signer_req *r = o->qhead;
            o->qhead = r->qnext;
            if (!o->qhead)
                o->qtail = NULL;
            r->qnext = NULL;
            complete_now(s, r, OUT_TIMEOUT);
        }
    }
    if (s->draining && s->inflight == 0)
        event_base_loopexit(s->base, NULL);
}

static void start(struct sender_loop *s, struct signer_req *r)
{
    r->easy = easy_get(s);
    if (s->o.src_count) {
        /* instance i sends from address A + i - 1 of the range (wrapping) */
        uint32_t ip = s->o.src_base + (uint32_t)((r->instance - 1) % (int)s->o.src_count);
        struct in_addr ia = {.s_addr = htonl(ip)};
        char buf[64] = "host!";
        inet_ntop(AF_INET, &ia, buf + 5, sizeof(buf) - 5);
        curl_easy_setopt(r->easy, CURLOPT_INTERFACE, buf);
    }
    r->start_ns = rel_now(s);
    stats_sent(s->stats, r->op, r->intended_ns, r->start_ns);
    if (r->bad)
        s->stats->op[r->op].c.bad_sent[r->bad]++;
    if (r->op == OP_FOLLOW && s->o.probes)
        probes_follow_sent(s->o.probes, r->n, (uint64_t)((s->mono0 + r->start_ns) / 1000));
    s->inflight++;
    open_link(s, r);
    r->origin = origin_of(s, r->url);
    submit(s, r);
}

static void begin_drain(struct sender_loop *s, long wait_ms);

static void check_done(struct sender_loop *s)
{
    CURLMsg *m;
    int left;
    int readded = 0;
again:
    while ((m = curl_multi_info_read(s->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        CURL *e = m->easy_handle;
        CURLcode res = m->data.result;
        struct signer_req *r = NULL;
        long status = 0, os_errno = 0;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&r);
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_errno);
        curl_multi_remove_handle(s->multi, e);
        int64_t now = rel_now(s);
        int outcome = stats_classify((int)res, status, os_errno);
        if (res == CURLE_OK && (status == 400 || status == 401) && r->knocks == 1 &&
            r->dialect != SIGNER_NONE && !s->signal && !s->failed) {
            /* a second knock with the other dialect (Mastodon/Fedify do it on 400/401) */
            struct flood_err e2;
            if (signer_resign(s->signer, r, &e2) == 0 && add_easy(s, r) == 0) {
                s->stats->op[r->op].c.second_knocks++;
                readded = 1;
                continue;
            }
        }
        int retry_after = 0;
        if (outcome == OUT_429 || outcome == OUT_503) {
            struct curl_header *h;
            retry_after = curl_easy_header(e, "Retry-After", 0, CURLH_HEADER, -1, &h) == CURLHE_OK;
        }
        stats_tick(s->stats, now, s->inflight);
        stats_done(s->stats, r->op, outcome, retry_after, r->bad, r->intended_ns, r->start_ns, now);
        open_unlink(s, r);
        s->inflight--;
        struct origin *o = r->origin;
        easy_put(s, e);
        signer_req_free(r);
        if (origin_release(s, o))
            readded = 1;
    }
    if (readded) {
        /* start what was handed to curl now; it may finish more at once */
        int running;
        readded = 0;
        curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        goto again;
    }
    if (s->draining && s->inflight == 0)
        event_base_loopexit(s->base, NULL);
}

/* ---- the schedule -------------------------------------------------------------------- */

/* Walk the schedule past the activities of the other loops: this loop sends seq only when
 * seq mod count == index (the intended times stay the schedule's). */
static void skip_others(struct sender_loop *s)
{
    while (s->cfg.count > 1 && s->next_t >= 0 &&
           s->next_seq % (uint64_t)s->cfg.count != (uint64_t)s->cfg.index) {
        s->next_seq++;
        s->next_t = sched_next(&s->sched);
    }
}

static void dispatch(struct sender_loop *s)
{
    if (s->stopping || s->waiting)
        return;
    int started = 0;
    int64_t now = rel_now(s);
    stats_tick(s->stats, now, s->inflight);
    while (s->next_t >= 0 && s->next_t <= now) {
        struct signer_req *r = signer_take(s->signer, s->next_seq);
        if (!r) {
            signer_wait_for(s->signer, s->next_seq);
            r = signer_take(s->signer, s->next_seq);
            if (!r) {
                s->stats->not_ready++;
                s->waiting = 1; /* the wake event resumes */
                break;
            }
        }
        r->intended_ns = s->next_t; /* the same unless steered since it was signed */
        if (s->o.sends_log)
            fprintf(s->o.sends_log, "%" PRIu64 " %" PRId64 " %s %s\n", r->n, r->intended_ns,
                    op_name(r->op), s->inflight >= s->o.max_inflight ? "SHED" : "SENT");
        if (s->inflight >= s->o.max_inflight) {
            stats_shed(s->stats, r->op, r->intended_ns);
            signer_req_free(r);
        } else {
            start(s, r);
            started++;
        }
        s->next_seq++;
        s->next_t = sched_next(&s->sched);
        skip_others(s);
        now = rel_now(s);
    }
    if (started) {
        int running;
        curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        check_done(s);
    }
    if (s->next_t < 0 && s->o.steer && rel_now(s) < s->end_ns) {
        /* a steered schedule paused (or run dry): wait for a change or the end */
        struct timeval tv = sender_tv_of_ns(s->end_ns - rel_now(s));
        evtimer_add(s->dispatch_timer, &tv);
    } else if (s->next_t < 0) {
        s->stopping = 1;
        s->send_end_ns = rel_now(s);
        long wait = s->o.timeout_ms + 1000 > s->o.grace_ms ? s->o.timeout_ms + 1000 : s->o.grace_ms;
        begin_drain(s, wait);
    } else if (!s->waiting) {
        struct timeval tv = sender_tv_of_ns(s->next_t - rel_now(s));
        evtimer_add(s->dispatch_timer, &tv);
    }
}

static void on_dispatch(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    dispatch(arg);
}

static void on_wake(evutil_socket_t fd, short kind, void *arg)
{
    (void)kind;
    struct sender_loop *s = arg;
    uint64_t v;
    if (read(fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing pending */
    }
    if (signer_failed(s->signer, &s->fail_err)) {
        if (!s->failed) {
            s->failed = 1;
            s->stopping = 1;
            s->send_end_ns = rel_now(s);
            evtimer_del(s->dispatch_timer);
            begin_drain(s, s->o.grace_ms);
        }
        return;
    }
    if (s->waiting) {
        s->waiting = 0;
        dispatch(s);
    }
}

static void on_drain_end(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct sender_loop *s = arg;
    event_base_loopexit(s->base, NULL);
}

static void begin_drain(struct sender_loop *s, long wait_ms)
{
    s->draining = 1;
    if (s->inflight == 0) {
        event_base_loopexit(s->base, NULL);
        return;
    }
    struct timeval tv = {.tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000};
    evtimer_add(s->drain_ev, &tv);
}

static void sender_interrupt(struct sender_loop *s, int sig);

static void on_signal(evutil_socket_t sig, short kind, void *arg)
{
    (void)kind;
    sender_interrupt(arg, (int)sig);
}

static void sender_interrupt(struct sender_loop *s, int sig)
{
    if (s->signal) { /* a second signal: stop waiting */
        event_base_loopexit(s->base, NULL);
        return;
    }
    s->signal = sig;
    if (!s->stopping) {
        s->stopping = 1;
        s->send_end_ns = rel_now(s);
        evtimer_del(s->dispatch_timer);
    }
    if (!s->cfg.threaded) /* else sender_loops.c says it once for every loop */
        fprintf(stderr,
                "\nflood: %s: sending stopped, waiting up to %ld ms for %" PRIu64 " answers\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", s->o.grace_ms, s->inflight);
    evtimer_del(s->drain_ev);
    begin_drain(s, s->o.grace_ms);
}

/* A signal forwarded by sender_loops.c: each one counts (a second one stops waiting). */
static void on_ctl(evutil_socket_t fd, short kind, void *arg)
{
    (void)kind;
    struct sender_loop *s = arg;
    uint64_t v = 0;
    if (read(fd, &v, sizeof(v)) < 0)
        return;
    for (uint64_t i = 0; i < v; i++)
        sender_interrupt(s, atomic_load(&s->ctl_sig));
}

void sender_loop_signal(struct sender_loop *s, int sig)
{
    atomic_store(&s->ctl_sig, sig);
    uint64_t one = 1;
    if (write(s->ctl_fd, &one, sizeof(one)) < 0) {
        /* the counter is full: the loop is stopping anyway */
    }
}

/* ---- once a second ------------------------------------------------------------------- */

void sender_live_line(const struct sender_opts *o, const struct stats *st, size_t sec,
                      uint64_t inflight)
{
    if (sec == 0 || sec > st->n_series)
        return;
    const struct stats_sec *x = &st->series[sec - 1];
    uint64_t ok = x->outcomes[OUT_200] + x->outcomes[OUT_202] + x->outcomes[OUT_2XX_OTHER];
    uint64_t err = 0;
    for (int k = OUT_TIMEOUT; k < OUT__COUNT; k++)
        err += x->outcomes[k];
    uint64_t rej = x->completed - ok - err;
    char extra[160] = "";
    if (o->live_extra)
        o->live_extra(o->live_ctx, extra, sizeof(extra));
    fprintf(stderr,
            "\r\033[K%4zus offered %" PRIu64 " sent %" PRIu64 " ok %" PRIu64 " rej %" PRIu64
            " err %" PRIu64 " p50 %.1fms p99 %.1fms inflight %" PRIu64 " shed %" PRIu64 "%s%s",
            sec, x->offered, x->sent, ok, rej, err, x->p50_ms, x->p99_ms, inflight, x->shed,
            extra[0] ? " | " : "", extra);
    fflush(stderr);
}

static void on_tick(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct sender_loop *s = arg;
    int64_t now = rel_now(s);
    expire_queued(s, now);
    stats_tick(s->stats, now, s->inflight);
    if (s->steer_ev)
        sender_steer_state(s);
    if (s->o.tick)
        s->o.tick(s->o.tick_ctx, s->stats, s->inflight);
    if (s->o.live)
        sender_live_line(&s->o, s->stats, s->stats->cur_sec, s->inflight);
    int64_t next = (now / 1000000000 + 1) * 1000000000;
    struct timeval tv = sender_tv_of_ns(next - now);
    evtimer_add(s->tick_ev, &tv);
}

/* ---- setup --------------------------------------------------------------------------- */

struct sender_loop *sender_loop_new(const struct sender_opts *o, const struct sender_loop_cfg *cfg,
                                    struct signer *signer, const struct sched *sched,
                                    struct stats *stats, struct flood_err *err)
{
    struct sender_loop *s = flood_xcalloc(1, sizeof(*s));
    s->o = *o;
    s->cfg = *cfg;
    s->ctl_fd = -1;
    atomic_init(&s->ctl_sig, 0);
    if (s->o.max_inflight == 0)
        s->o.max_inflight = 10000;
    if (s->o.timeout_ms <= 0)
        s->o.timeout_ms = 10000;
    if (s->o.connections <= 0)
        s->o.connections = 64;
    s->signer = signer;
    s->stats = stats;
    s->interrupt = sender_interrupt;
    if (s->o.probes && !cfg->threaded)
        stats_set_probes(stats, s->o.probes); /* Follow-to-Accept per second in the series */
    s->sched = *sched;
    sched_rewind(&s->sched);
    struct event_config *ecfg = event_config_new();
    /* precise timers (timerfd, not epoll's milliseconds); the changelist folds libcurl's
     * frequent read/write interest changes into one epoll_ctl each */
    if (!ecfg ||
        event_config_set_flag(ecfg, EVENT_BASE_FLAG_PRECISE_TIMER |
                                        EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST) ||
        !(s->base = event_base_new_with_config(ecfg))) {
        if (ecfg)
            event_config_free(ecfg);
        flood_err_set(err, FLOOD_EIO, "sender: cannot make a libevent base");
        sender_loop_free(s);
        return NULL;
    }
    event_config_free(ecfg);
    s->multi = curl_multi_init();
    if (!s->multi) {
        flood_err_set(err, FLOOD_EIO, "sender: cannot make a curl multi handle");
        sender_loop_free(s);
        return NULL;
    }
    curl_multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, curl_socket_cb);
    curl_multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s);
    curl_multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
    curl_multi_setopt(s->multi, CURLMOPT_TIMERDATA, s);
    curl_multi_setopt(s->multi, CURLMOPT_MAX_HOST_CONNECTIONS, s->o.connections);
    curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, s->o.connections * 32);
    curl_multi_setopt(s->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    s->curl_timer = evtimer_new(s->base, on_curl_timer, s);
    s->dispatch_timer = evtimer_new(s->base, on_dispatch, s);
    s->tick_ev = evtimer_new(s->base, on_tick, s);
    s->drain_ev = evtimer_new(s->base, on_drain_end, s);
    s->wake_ev =
        event_new(s->base, signer_wake_fd(signer, cfg->index), EV_READ | EV_PERSIST, on_wake, s);
    if (s->o.steer && !cfg->threaded)
        s->steer_ev =
            event_new(s->base, steer_fd(s->o.steer), EV_READ | EV_PERSIST, sender_on_steer, s);
    if (cfg->threaded) { /* signals reach the main thread only: it forwards them */
        s->ctl_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (s->ctl_fd >= 0)
            s->ctl_ev = event_new(s->base, s->ctl_fd, EV_READ | EV_PERSIST, on_ctl, s);
    } else {
        s->sig_int = evsignal_new(s->base, SIGINT, on_signal, s);
        s->sig_term = evsignal_new(s->base, SIGTERM, on_signal, s);
    }
    if (!s->curl_timer || !s->dispatch_timer || !s->tick_ev || !s->drain_ev || !s->wake_ev ||
        (cfg->threaded ? !s->ctl_ev : !s->sig_int || !s->sig_term) ||
        (s->o.steer && !cfg->threaded && !s->steer_ev)) {
        flood_err_set(err, FLOOD_EIO, "sender: cannot make libevent events");
        sender_loop_free(s);
        return NULL;
    }
    return s;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int sender_loop_run(struct sender_loop *s, int64_t mono0_ns, struct sender_result *res,
                    struct flood_err *err)
{
    memset(res, 0, sizeof(*res));
    struct rusage ru0, th0, ru1, th1;
    getrusage(RUSAGE_SELF, &ru0);
    getrusage(RUSAGE_THREAD, &th0);
    s->mono0 = mono0_ns;
    s->next_seq = 0;
    s->next_t = sched_next(&s->sched);
    skip_others(s);
    event_add(s->wake_ev, NULL);
    if (s->ctl_ev)
        event_add(s->ctl_ev, NULL);
    else {
        event_add(s->sig_int, NULL);
        event_add(s->sig_term, NULL);
    }
    s->end_ns = (int64_t)(sched_duration(&s->sched) * 1e9);
    if (s->steer_ev) {
        event_add(s->steer_ev, NULL);
        sender_steer_state(s);
    }
    struct timeval tv = sender_tv_of_ns(1000000000 - rel_now(s) % 1000000000);
    evtimer_add(s->tick_ev, &tv);
    tv = sender_tv_of_ns(s->next_t - rel_now(s));
    evtimer_add(s->dispatch_timer, &tv);

    event_base_dispatch(s->base);

    int64_t end = rel_now(s);
    if (!s->send_end_ns)
        s->send_end_ns = end;
    /* what never finished: unfinished, per operation */
    while (s->open) {
        struct signer_req *r = s->open;
        open_unlink(s, r);
        curl_multi_remove_handle(s->multi, r->easy);
        stats_unfinished(s->stats, r->op, 1);
        s->inflight--;
        easy_put(s, r->easy);
        signer_req_free(r);
    }
    stats_tick(s->stats, (int64_t)(s->stats->cur_sec + 1) * 1000000000, s->inflight);
    if (s->o.live)
        fprintf(stderr, "\n");
    if (s->sig_int) {
        event_del(s->sig_int);
        event_del(s->sig_term);
    }
    if (s->steer_ev) {
        event_del(s->steer_ev);
        sender_steer_close(s);
    }

    getrusage(RUSAGE_SELF, &ru1);
    getrusage(RUSAGE_THREAD, &th1);
    res->wall_s = (double)end / 1e9;
    res->cpu_s = tv_s(ru1.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ru0.ru_utime) - tv_s(ru0.ru_stime);
    res->loop_cpu_s =
        tv_s(th1.ru_utime) + tv_s(th1.ru_stime) - tv_s(th0.ru_utime) - tv_s(th0.ru_stime);
    double send_s = (double)s->send_end_ns / 1e9;
    res->loop_cpu_share = send_s > 0.1 ? res->loop_cpu_s / res->wall_s : 0;
    struct hist *lag = hist_new();
    stats_merge_hists(s->stats, NULL, NULL, lag);
    res->lag_p99_ms = hist_value_at_percentile(lag, 99) / 1000.0;
    hist_free(lag);
    res->late_sends = s->stats->late_sends;
    res->saturated =
        res->lag_p99_ms * 1000 > SATURATED_LAG_US || res->loop_cpu_share > SATURATED_CPU;
    res->interrupted = s->signal != 0;
    res->signal = s->signal;
    if (s->failed) {
        *err = s->fail_err;
        return -1;
    }
    return 0;
}

void sender_loop_free(struct sender_loop *s)
{
    if (!s)
        return;
    while (s->open) {
        struct signer_req *r = s->open;
        open_unlink(s, r);
        curl_multi_remove_handle(s->multi, r->easy);
        curl_easy_cleanup(r->easy);
        signer_req_free(r);
    }
    for (size_t i = 0; i < s->n_pool; i++)
        curl_easy_cleanup(s->pool[i]);
    free(s->pool);
    for (size_t i = 0; i < s->n_origins; i++) {
        free(s->origins[i]->key);
        free(s->origins[i]);
    }
    free(s->origins);
    if (s->multi)
        curl_multi_cleanup(s->multi);
    struct event *evs[] = {s->curl_timer, s->dispatch_timer, s->tick_ev,  s->drain_ev, s->wake_ev,
                           s->sig_int,    s->sig_term,       s->steer_ev, s->ctl_ev};
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        if (evs[i])
            event_free(evs[i]);
    if (s->base)
        event_base_free(s->base);
    if (s->ctl_fd >= 0)
        close(s->ctl_fd);
    free(s);
}

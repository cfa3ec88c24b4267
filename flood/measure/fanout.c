/* flood/measure/fanout.c: per-post first and last delivery, lag by class, concurrency per
 * instance (see fanout.h). */
#include "flood/measure/fanout.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/hist.h"
#include "sign/err.h"

struct post {
    uint64_t key;              /* 0: empty slot */
    int64_t first_us, last_us; /* lags */
    uint64_t n;
};

struct fanout {
    pthread_mutex_t lock;
    struct post *posts; /* open addressing, FANOUT_POSTS_MAX slots */
    uint64_t n_posts, untimed, deliveries, within10, within60;
    struct hist *by_class[FANOUT_CLASSES];
    int instances;
    _Atomic int *now, *peak; /* [1..instances] */
};

struct fanout *fanout_new(int instances)
{
    struct fanout *f = flood_xcalloc(1, sizeof(*f));
    pthread_mutex_init(&f->lock, NULL);
    f->posts = flood_xcalloc(FANOUT_POSTS_MAX, sizeof(*f->posts));
    for (int k = 0; k < FANOUT_CLASSES; k++)
        f->by_class[k] = hist_new();
    f->instances = instances > 0 ? instances : 0;
    f->now = flood_xcalloc((size_t)f->instances + 1, sizeof(*f->now));
    f->peak = flood_xcalloc((size_t)f->instances + 1, sizeof(*f->peak));
    return f;
}

void fanout_free(struct fanout *f)
{
    if (!f)
        return;
    for (int k = 0; k < FANOUT_CLASSES; k++)
        hist_free(f->by_class[k]);
    free(f->posts);
    free((void *)f->now);
    free((void *)f->peak);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static uint64_t key_of(const char *id)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *p = id; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    return h ? h : 1;
}

void fanout_add(struct fanout *f, const char *id, int64_t pub_us, int64_t now_us, int cls)
{
    if (!id)
        return;
    int64_t lag = now_us > pub_us ? now_us - pub_us : 0;
    uint64_t key = key_of(id);
    pthread_mutex_lock(&f->lock);
    f->deliveries++;
    f->within10 += lag <= 10000000;
    f->within60 += lag <= 60000000;
    hist_record(f->by_class[cls >= 0 && cls < FANOUT_CLASSES ? cls : 0], (uint64_t)lag);
    size_t i = key & (FANOUT_POSTS_MAX - 1), probes = 0;
    while (f->posts[i].key && f->posts[i].key != key && probes++ < FANOUT_POSTS_MAX)
        i = (i + 1) & (FANOUT_POSTS_MAX - 1);
    struct post *p = &f->posts[i];
    if (p->key == key) {
        p->first_us = lag < p->first_us ? lag : p->first_us;
        p->last_us = lag > p->last_us ? lag : p->last_us;
        p->n++;
    } else if (!p->key && f->n_posts < FANOUT_POSTS_MAX / 2) {
        *p = (struct post){.key = key, .first_us = lag, .last_us = lag, .n = 1};
        f->n_posts++;
    } else {
        f->untimed++;
    }
    pthread_mutex_unlock(&f->lock);
}

void fanout_inflight(struct fanout *f, int instance, int delta)
{
    if (instance < 1 || instance > f->instances)
        return;
    int now = atomic_fetch_add(&f->now[instance], delta) + delta;
    int peak = atomic_load_explicit(&f->peak[instance], memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&f->peak[instance], &peak, now))
        ;
}

static json_t *pct(struct hist *h)
{
    return json_pack("{s:f, s:f, s:f, s:I}", "p50", hist_value_at_percentile(h, 50) / 1000.0, "p99",
                     hist_value_at_percentile(h, 99) / 1000.0, "max", hist_max(h) / 1000.0, "count",
                     (json_int_t)hist_count(h));
}

json_t *fanout_json(struct fanout *f, const char *const *class_names)
{
    struct hist *first = hist_new(), *last = hist_new(), *spread = hist_new();
    uint64_t nmin = 0, nmax = 0;
    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < FANOUT_POSTS_MAX; i++) {
        const struct post *p = &f->posts[i];
        if (!p->key)
            continue;
        hist_record(first, (uint64_t)p->first_us);
        hist_record(last, (uint64_t)p->last_us);
        hist_record(spread, (uint64_t)(p->last_us - p->first_us));
        nmin = !nmin || p->n < nmin ? p->n : nmin;
        nmax = p->n > nmax ? p->n : nmax;
    }
    uint64_t posts = f->n_posts, deliveries = f->deliveries;
    json_t *cls = json_object(), *exact = json_object();
    for (int k = 0; k < FANOUT_CLASSES && cls; k++)
        if (hist_count(f->by_class[k])) {
            json_object_set_new(cls, class_names[k], pct(f->by_class[k]));
            char *text = hist_encode(f->by_class[k]); /* for flood merge, exact */
            json_object_set_new(exact, class_names[k], json_string(text));
            free(text);
        }
    json_t *o = !posts
                    ? NULL
                    : json_pack("{s:I, s:I, s:I, s:{s:I, s:I}, s:o*, s:o*, s:o*, s:f, s:f, s:o*}",
                                "posts", (json_int_t)posts, "deliveries", (json_int_t)deliveries,
                                "untimed", (json_int_t)f->untimed, "per_post", "min",
                                (json_int_t)nmin, "max", (json_int_t)nmax, "first_ms", pct(first),
                                "last_ms", pct(last), "spread_ms", pct(spread), "within_10s",
                                (double)f->within10 / (double)deliveries, "within_60s",
                                (double)f->within60 / (double)deliveries, "lag_ms_by_class", cls);
    pthread_mutex_unlock(&f->lock);
    if (o)
        json_object_set_new(o, "exact", json_pack("{s:o}", "lag_us_by_class", exact));
    else {
        json_decref(cls);
        json_decref(exact);
    }
    hist_free(first);
    hist_free(last);
    hist_free(spread);
    int top = 0, seen = 0;
    double sum = 0;
    for (int i = 1; i <= f->instances; i++) {
        int p = atomic_load(&f->peak[i]);
        top = p > top ? p : top;
        seen += p > 0;
        sum += p;
    }
    if (o)
        json_object_set_new(o, "concurrent_per_instance",
                            json_pack("{s:i, s:f, s:i}", "max", top, "mean",
                                      seen ? sum / seen : 0.0, "instances", seen));
    return o;
}

/* flood/measure/attempts.c: the record of delivery attempts to faulted instances and its
 * retry curve (see attempts.h). */
#include "flood/measure/attempts.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sign/err.h"

/* a gap counts as honouring Retry-After R when it is at least R s less this */
#define ATTEMPTS_SLACK_MS 500

struct attempts {
    pthread_mutex_t lock;
    struct attempt *v;
    size_t n, cap, max;
    uint64_t dropped;
    int closed; /* attempts_close: no more are taken */
};

struct attempts *attempts_new(size_t cap)
{
    struct attempts *a = flood_xcalloc(1, sizeof(*a));
    pthread_mutex_init(&a->lock, NULL);
    a->max = cap;
    return a;
}

void attempts_free(struct attempts *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->lock);
    free(a->v);
    free(a);
}

int attempts_add(struct attempts *a, const struct attempt *at)
{
    pthread_mutex_lock(&a->lock);
    if (a->closed) {
        pthread_mutex_unlock(&a->lock);
        return 0;
    }
    if (a->n == a->cap && a->cap < a->max) {
        size_t cap = a->cap ? a->cap * 2 : 1024;
        a->v = flood_xrealloc(a->v, (cap < a->max ? cap : a->max) * sizeof(*a->v));
        a->cap = cap < a->max ? cap : a->max;
    }
    if (a->n < a->cap)
        a->v[a->n++] = *at;
    else
        a->dropped++;
    pthread_mutex_unlock(&a->lock);
    return 1;
}

void attempts_close(struct attempts *a)
{
    pthread_mutex_lock(&a->lock);
    a->closed = 1;
    pthread_mutex_unlock(&a->lock);
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
    return (h ^ 0xff) * 0x100000001b3ULL; /* a separator, so "ab"+"c" is not "a"+"bc" */
}

uint64_t attempts_key(const char *host, const char *path, const char *digest)
{
    return fnv(fnv(fnv(0xcbf29ce484222325ULL, host), path), digest);
}

static int by_key_time(const void *x, const void *y)
{
    const struct attempt *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->t_ms < b->t_ms ? -1 : a->t_ms > b->t_ms;
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

/* The p-th percentile (nearest rank) of v[n], sorted; 0 for none. */
static int64_t rank(const int64_t *v, size_t n, double p)
{
    if (!n)
        return 0;
    size_t i = (size_t)(p / 100.0 * (double)n + 0.999999);
    return v[i == 0 ? 0 : (i > n ? n - 1 : i - 1)];
}

static int got_through(const struct attempt *at)
{
    return at->status == ATTEMPT_PASSED || (at->status >= 200 && at->status < 300);
}

/* One delivery's attempts v[0..n) (sorted by time) into the curve; its gaps into gaps[],
 * the time from recovery to its success into rec[] when it recovered. */
static void one_delivery(const struct attempt *v, size_t n, int64_t recover_ms,
                         struct attempts_curve *c, int64_t *gaps, size_t *ngaps, int64_t *rec,
                         size_t *nrec)
{
    c->deliveries++;
    c->per_delivery[n <= 8 ? n : 0]++;
    if (n > c->max_attempts)
        c->max_attempts = n;
    size_t ok = n;
    for (size_t i = 0; i < n && ok == n; i++)
        if (got_through(&v[i]))
            ok = i;
    for (size_t i = 1; i < n && i <= ok; i++) {
        int64_t gap = v[i].t_ms - v[i - 1].t_ms;
        gaps[(*ngaps)++] = gap;
        if (v[i - 1].retry_after > 0) {
            c->retry_after_given++;
            if (gap + ATTEMPTS_SLACK_MS >= (int64_t)v[i - 1].retry_after * 1000)
                c->retry_after_honoured++;
            else
                c->retry_after_early++;
        }
    }
    if (ok == n) {
        c->never_arrived++;
        return;
    }
    c->delivered++;
    /* refused before the faults ended, through after: it waited for the recovery */
    if (recover_ms > 0 && ok > 0 && v[ok].t_ms >= recover_ms && v[0].t_ms < recover_ms)
        rec[(*nrec)++] = v[ok].t_ms - recover_ms;
}

void attempts_curve_of(struct attempt *v, size_t n, int64_t recover_ms, struct attempts_curve *out)
{
    memset(out, 0, sizeof(*out));
    out->attempts = n;
    out->recover_ms = recover_ms;
    if (!n)
        return;
    qsort(v, n, sizeof(*v), by_key_time);
    int64_t *gaps = flood_xcalloc(n, sizeof(*gaps)), *rec = flood_xcalloc(n, sizeof(*rec));
    size_t ngaps = 0, nrec = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].key == v[i].key)
            j++;
        one_delivery(v + i, j - i, recover_ms, out, gaps, &ngaps, rec, &nrec);
        i = j;
    }
    out->mean_attempts = (double)n / (double)out->deliveries;
    qsort(gaps, ngaps, sizeof(*gaps), cmp_i64);
    out->gaps = ngaps;
    out->gap_p50_ms = rank(gaps, ngaps, 50);
    out->gap_p90_ms = rank(gaps, ngaps, 90);
    out->gap_max_ms = ngaps ? gaps[ngaps - 1] : 0;
    qsort(rec, nrec, sizeof(*rec), cmp_i64);
    out->recovered = nrec;
    out->recovery_p50_ms = rank(rec, nrec, 50);
    out->recovery_p99_ms = rank(rec, nrec, 99);
    out->recovery_max_ms = nrec ? rec[nrec - 1] : 0;
    for (size_t i = 0; i < n; i++) {
        out->passed += got_through(&v[i]);
        out->refused_status += v[i].status >= 300;
        out->hung += v[i].status == ATTEMPT_HANG;
        out->reset += v[i].status == ATTEMPT_RESET;
    }
    for (size_t i = 0; recover_ms > 0 && i < n; i++) {
        int64_t d = v[i].t_ms - recover_ms;
        if (d < 0)
            continue;
        out->recovered_attempts++;
        if (d < 10000)
            out->herd_per_s[d / 1000]++;
    }
    for (int s = 0; s < 10; s++)
        if (out->herd_per_s[s] > out->herd_peak_per_s)
            out->herd_peak_per_s = out->herd_per_s[s];
    free(gaps);
    free(rec);
}

static json_t *num(uint64_t n)
{
    return json_integer((json_int_t)n);
}

json_t *attempts_json(struct attempts *a, int64_t recover_ms)
{
    pthread_mutex_lock(&a->lock);
    size_t n = a->n;
    uint64_t dropped = a->dropped;
    struct attempt *copy = flood_xcalloc(n ? n : 1, sizeof(*copy));
    if (n)
        memcpy(copy, a->v, n * sizeof(*copy));
    pthread_mutex_unlock(&a->lock);
    struct attempts_curve c;
    attempts_curve_of(copy, n, recover_ms, &c);
    free(copy);
    json_t *per = json_object(), *herd = json_array();
    static const char *const tries[] = {"9+", "1", "2", "3", "4", "5", "6", "7", "8"};
    for (int k = 1; k <= 9 && per; k++)
        json_object_set_new(per, tries[k % 9], num(c.per_delivery[k % 9]));
    for (int s = 0; s < 10 && herd; s++)
        json_array_append_new(herd, num(c.herd_per_s[s]));
    json_t *o = json_pack(
        "{s:I, s:I, s:{s:I, s:I, s:I, s:I}, s:I, s:I, s:I, s:f, s:I, s:o*, s:{s:I, s:I, s:I, s:I},"
        " s:{s:I, s:I, s:I},"
        " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o*}}",
        "attempts", (json_int_t)c.attempts, "dropped", (json_int_t)dropped, "answered", "passed",
        (json_int_t)c.passed, "status", (json_int_t)c.refused_status, "hang", (json_int_t)c.hung,
        "reset", (json_int_t)c.reset, "deliveries", (json_int_t)c.deliveries, "delivered",
        (json_int_t)c.delivered, "never_arrived", (json_int_t)c.never_arrived, "mean_attempts",
        c.mean_attempts, "max_attempts", (json_int_t)c.max_attempts, "attempts_per_delivery", per,
        "gap_ms", "count", (json_int_t)c.gaps, "p50", (json_int_t)c.gap_p50_ms, "p90",
        (json_int_t)c.gap_p90_ms, "max", (json_int_t)c.gap_max_ms, "retry_after", "given",
        (json_int_t)c.retry_after_given, "honoured", (json_int_t)c.retry_after_honoured, "early",
        (json_int_t)c.retry_after_early, "recovery", "at_ms", (json_int_t)c.recover_ms, "recovered",
        (json_int_t)c.recovered, "attempts_after", (json_int_t)c.recovered_attempts, "p50_ms",
        (json_int_t)c.recovery_p50_ms, "p99_ms", (json_int_t)c.recovery_p99_ms, "max_ms",
        (json_int_t)c.recovery_max_ms, "herd_peak_per_s", (json_int_t)c.herd_peak_per_s,
        "herd_per_s", herd);
    return o;
}

/* tests/unit/test_stats_merge.c: several writers' stats merged (flood/measure/stats_merge.h)
 * equal one stats that recorded every event itself: counters, per-operation histograms, the
 * series' counts and every per-second percentile, with conservation holding; a second
 * closes only once every writer closed it; stats_add counts what it adds. The reference is
 * the single-writer struct stats, the path flood run --loops 1 takes. */
#include <stdlib.h>
#include <string.h>

#include "flood/measure/stats_merge.h"
#include "tests/check.h"

#define MS   INT64_C(1000000)
#define NREQ 3000
#define NW   3
#define SECS 4

struct ev {
    int64_t t;
    int kind; /* 0 shed, 1 sent, 2 done */
    int req;
};

struct req {
    int writer, op, outcome, shed;
    int64_t intended, start, done;
};

static struct req reqs[NREQ];
static struct ev evs[NREQ * 2];
static int n_evs;

static uint64_t rng = 12345;
static uint64_t next_rand(void)
{
    rng = rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return rng >> 33;
}

static int ev_cmp(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->kind != y->kind ? x->kind - y->kind : x->req - y->req;
}

/* Requests spread over SECS seconds; some sent a little late (their intended second closed
 * before their send: counted into a closed second), some shed, answers 1..400 ms later. */
static void make_events(void)
{
    for (int i = 0; i < NREQ; i++) {
        struct req *r = &reqs[i];
        r->writer = i % NW; /* as --loops: activity n to loop n mod N */
        r->op = (int)(next_rand() % 3);
        r->outcome = next_rand() % 10 == 0 ? OUT_503 : OUT_202;
        r->intended = (int64_t)i * (SECS - 1) * 1000 * MS / NREQ;
        r->start = r->intended + (int64_t)(next_rand() % 30) * MS;
        r->done = r->start + (int64_t)(1 + next_rand() % 400) * MS;
        r->shed = next_rand() % 20 == 0;
        if (r->shed) {
            evs[n_evs++] = (struct ev){r->intended, 0, i};
        } else {
            evs[n_evs++] = (struct ev){r->start, 1, i};
            evs[n_evs++] = (struct ev){r->done, 2, i};
        }
    }
    qsort(evs, (size_t)n_evs, sizeof(evs[0]), ev_cmp);
}

static void apply(struct stats *s, const struct ev *e)
{
    const struct req *r = &reqs[e->req];
    if (e->kind == 0)
        stats_shed(s, (enum op_kind)r->op, r->intended);
    else if (e->kind == 1)
        stats_sent(s, (enum op_kind)r->op, r->intended, r->start);
    else
        stats_done(s, (enum op_kind)r->op, r->outcome, 0, BAD_NONE, r->intended, r->start, r->done);
}

struct hook_ctx {
    struct stats_merge *m;
    int w;
};

static void on_closed(void *ctx, const struct stats_closed *c)
{
    struct hook_ctx *h = ctx;
    stats_merge_closed(h->m, h->w, c);
}

static int same_hist(const struct hist *a, const struct hist *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

static void test_merge_equals_one_writer(void)
{
    make_events();
    struct stats *ref = stats_new(), *dst = stats_new(), *w[NW];
    struct stats_merge *m = stats_merge_new(dst, NW);
    struct hook_ctx hc[NW];
    for (int k = 0; k < NW; k++) {
        w[k] = stats_new();
        hc[k] = (struct hook_ctx){m, k};
        stats_set_closed(w[k], on_closed, &hc[k]);
    }
    int early_close = 0;
    for (int i = 0; i < n_evs; i++) {
        const struct ev *e = &evs[i];
        struct stats *mine = w[reqs[e->req].writer];
        /* each writer ticks only when it has an event, as a loop closes a second on its
         * own clock: the merge must wait for the slowest */
        stats_tick(mine, e->t, 1);
        stats_tick(ref, e->t, NW);
        apply(mine, e);
        apply(ref, e);
        size_t before = dst->cur_sec;
        stats_merge_flush(m, NULL);
        for (size_t t = before; t < dst->cur_sec; t++)
            for (int k = 0; k < NW; k++)
                if (w[k]->cur_sec <= t)
                    early_close = 1;
    }
    CHECK(!early_close, "a merged second closes only once every writer closed it");
    int64_t end = (int64_t)(SECS + 1) * 1000 * MS;
    for (int k = 0; k < NW; k++) {
        stats_tick(w[k], end, 1);
        stats_merge_done(m, k);
    }
    stats_tick(ref, end, NW);
    stats_merge_finish(m, w);

    struct stats_counts a, b;
    stats_totals(dst, &a);
    stats_totals(ref, &b);
    CHECK(memcmp(&a, &b, sizeof(a)) == 0, "merged totals equal one writer's (sent %llu)",
          (unsigned long long)a.sent);
    char line[256];
    CHECK(stats_conservation(dst, line, sizeof(line)) == 0, "merged: %s", line);
    int hists = 1;
    for (int i = 0; i < OP__COUNT; i++)
        hists &= same_hist(&dst->op[i].latency, &ref->op[i].latency) &&
                 same_hist(&dst->op[i].service, &ref->op[i].service) &&
                 same_hist(&dst->op[i].lag, &ref->op[i].lag);
    CHECK(hists, "per-operation histograms equal, bucket by bucket");
    CHECK(dst->late_sends == ref->late_sends && dst->late_sends > 0, "late sends summed (%llu)",
          (unsigned long long)dst->late_sends);
    CHECK(dst->n_series == ref->n_series && dst->cur_sec == ref->cur_sec,
          "the series as long (%zu seconds)", dst->n_series);
    int counts = 1, figures = 1, flight = 1;
    for (size_t t = 0; t < ref->n_series && t < dst->n_series; t++) {
        const struct stats_sec *x = &dst->series[t], *y = &ref->series[t];
        counts &= x->offered == y->offered && x->sent == y->sent && x->shed == y->shed &&
                  x->completed == y->completed && x->late == y->late &&
                  !memcmp(x->outcomes, y->outcomes, sizeof(x->outcomes));
        figures &= x->p50_ms == y->p50_ms && x->p99_ms == y->p99_ms && x->max_ms == y->max_ms &&
                   x->service_p50_ms == y->service_p50_ms &&
                   x->service_p99_ms == y->service_p99_ms && x->lag_p99_ms == y->lag_p99_ms &&
                   x->closed == y->closed;
        flight &= x->in_flight == y->in_flight;
    }
    CHECK(counts, "the series' counts equal second by second");
    CHECK(figures, "per-second p50, p99, max, service and lag equal (merged histograms)");
    CHECK(flight, "in_flight of a second is the writers' sum");
    CHECK(dst->series[1].p99_ms > 0, "the figures are not all zero (p99 %.3f ms)",
          dst->series[1].p99_ms);

    /* the negative twin: a writer added twice is counted twice, and conservation with a
     * completed count lost is violated */
    struct stats *twice = stats_new();
    stats_add(twice, w[0]);
    stats_add(twice, w[0]);
    struct stats_counts c0, c2;
    stats_totals(w[0], &c0);
    stats_totals(twice, &c2);
    CHECK(c2.sent == 2 * c0.sent && c2.sent != b.sent, "stats_add adds: twice is double");
    dst->op[0].c.completed--;
    CHECK(stats_conservation(dst, line, sizeof(line)) != 0, "a lost completion: %s", line);
    stats_free(twice);
    for (int k = 0; k < NW; k++)
        stats_free(w[k]);
    stats_merge_free(m);
    stats_free(dst);
    stats_free(ref);
}

/* A writer that is done stops holding the others' seconds; one still running holds them. */
static void test_done_writer(void)
{
    struct stats *dst = stats_new(), *a = stats_new(), *b = stats_new();
    struct stats_merge *m = stats_merge_new(dst, 2);
    stats_merge_track_hists(m);
    struct hook_ctx ha = {m, 0}, hb = {m, 1};
    stats_set_closed(a, on_closed, &ha);
    stats_set_closed(b, on_closed, &hb);
    stats_sent(a, OP_CREATE, 0, 0);
    stats_done(a, OP_CREATE, OUT_202, 0, BAD_NONE, 0, 0, 5 * MS);
    stats_tick(a, 3000 * MS, 2); /* a closes seconds 0..2 */
    CHECK(stats_merge_flush(m, NULL) == 0 && dst->cur_sec == 0,
          "b has closed nothing: no second closes");
    stats_tick(b, 1000 * MS, 5); /* b closes second 0 */
    uint64_t fl = 0;
    CHECK(stats_merge_flush(m, &fl) == 1 && dst->cur_sec == 1 && fl == 7,
          "b closed second 0: it closes, in flight 2 + 5 = %llu", (unsigned long long)fl);
    CHECK(dst->series[0].completed == 1 && dst->series[0].p50_ms == 5.0,
          "second 0 has a's answer and its 5 ms");
    CHECK(dst->op[OP_CREATE].c.sent == 1 && dst->op[OP_CREATE].c.completed == 1 &&
              hist_count(&dst->op[OP_CREATE].latency) == 1,
          "while the writers run, dst's per-operation counts and latency are current");
    stats_sent(b, OP_LIKE, 1500 * MS, 1500 * MS);
    CHECK(dst->op[OP_LIKE].c.sent == 0, "a count not yet published by a closed second is not");
    stats_merge_done(m, 1);
    CHECK(stats_merge_flush(m, NULL) == 2 && dst->cur_sec == 3,
          "b done: the seconds a closed close (1 and 2), none beyond");
    struct stats *w[2] = {a, b};
    stats_merge_finish(m, w);
    CHECK(dst->op[OP_CREATE].c.sent == 1 && dst->op[OP_LIKE].c.sent == 1 &&
              hist_count(&dst->op[OP_CREATE].latency) == 1,
          "the end: the final counts, the running copies not counted twice");
    stats_merge_free(m);
    stats_free(a);
    stats_free(b);
    stats_free(dst);
}

int main(void)
{
    test_merge_equals_one_writer();
    test_done_writer();
    return check_done();
}

/* flood/measure/stats_merge.c: several writers' stats into one (see stats_merge.h). */
#include "flood/measure/stats_merge.h"

#include <stdlib.h>
#include <string.h>

/* A second some writers closed and the others not yet: what they closed, merged. */
struct pending {
    struct stats_sec row; /* counts and in_flight summed */
    struct hist latency, service, lag;
};

/* A writer's running per-operation tables, as of its last closed second. */
struct writer_ops {
    struct stats_counts c[OP__COUNT];
    struct hist *latency[OP__COUNT], *service[OP__COUNT]; /* tracked: made when first used */
};

struct stats_merge {
    struct stats *dst;
    int n;
    struct writer_ops *ops;
    int track_hists;
    size_t *upto; /* per writer: the seconds below it are closed */
    int *done;
    struct pending **pend; /* pend[i]: second dst->cur_sec + i, or NULL */
    size_t n_pend;
    struct pending **spare; /* freed pendings, reused (a struct hist is 172 KB) */
    size_t n_spare;
};

struct stats_merge *stats_merge_new(struct stats *dst, int n)
{
    struct stats_merge *m = flood_xcalloc(1, sizeof(*m));
    m->dst = dst;
    m->n = n > 0 ? n : 1;
    m->upto = flood_xcalloc((size_t)m->n, sizeof(*m->upto));
    m->done = flood_xcalloc((size_t)m->n, sizeof(*m->done));
    m->ops = flood_xcalloc((size_t)m->n, sizeof(*m->ops));
    m->spare = flood_xcalloc((size_t)m->n + 2, sizeof(*m->spare));
    return m;
}

void stats_merge_free(struct stats_merge *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_pend; i++)
        free(m->pend[i]);
    for (size_t i = 0; i < m->n_spare; i++)
        free(m->spare[i]);
    for (int w = 0; w < m->n; w++)
        for (int op = 0; op < OP__COUNT; op++) {
            free(m->ops[w].latency[op]);
            free(m->ops[w].service[op]);
        }
    free(m->ops);
    free(m->pend);
    free(m->spare);
    free(m->upto);
    free(m->done);
    free(m);
}

void stats_merge_track_hists(struct stats_merge *m)
{
    m->track_hists = 1;
}

/* A writer's histogram into its copy, when it changed. */
static void copy_hist(struct hist **dst, const struct hist *src)
{
    if (src->total == 0 || (*dst && (*dst)->total == src->total))
        return;
    if (!*dst)
        *dst = flood_xmalloc(sizeof(**dst));
    memcpy(*dst, src, sizeof(**dst));
}

/* dst's per-operation tables: the sum of the writers' copies. */
static void ops_sum(struct stats_merge *m)
{
    for (int op = 0; op < OP__COUNT; op++) {
        struct stats_op *d = &m->dst->op[op];
        memset(&d->c, 0, sizeof(d->c));
        if (m->track_hists) {
            hist_reset(&d->latency);
            hist_reset(&d->service);
        }
        for (int w = 0; w < m->n; w++) {
            stats_counts_add(&d->c, &m->ops[w].c[op]);
            if (m->ops[w].latency[op])
                hist_merge(&d->latency, m->ops[w].latency[op]);
            if (m->ops[w].service[op])
                hist_merge(&d->service, m->ops[w].service[op]);
        }
    }
}

static struct pending *pending_new(struct stats_merge *m)
{
    struct pending *p = m->n_spare ? m->spare[--m->n_spare] : flood_xmalloc(sizeof(*p));
    memset(&p->row, 0, sizeof(p->row));
    hist_init(&p->latency);
    hist_init(&p->service);
    hist_init(&p->lag);
    return p;
}

static void pending_put(struct stats_merge *m, struct pending *p)
{
    if (p && m->n_spare < (size_t)m->n + 2)
        m->spare[m->n_spare++] = p;
    else
        free(p);
}

void stats_merge_closed(struct stats_merge *m, int w, const struct stats_closed *c)
{
    if (w < 0 || w >= m->n || c->sec < m->dst->cur_sec)
        return; /* cannot happen: dst closes a second only once every writer closed it */
    if (c->sec + 1 > m->upto[w])
        m->upto[w] = c->sec + 1;
    size_t i = c->sec - m->dst->cur_sec;
    if (i >= m->n_pend) {
        m->pend = flood_xrealloc(m->pend, (i + 1) * sizeof(*m->pend));
        memset(m->pend + m->n_pend, 0, (i + 1 - m->n_pend) * sizeof(*m->pend));
        m->n_pend = i + 1;
    }
    if (!m->pend[i])
        m->pend[i] = pending_new(m);
    struct pending *p = m->pend[i];
    stats_sec_add_counts(&p->row, c->row);
    p->row.in_flight += c->row->in_flight;
    hist_merge(&p->latency, c->latency);
    hist_merge(&p->service, c->service);
    hist_merge(&p->lag, c->lag);
    for (int op = 0; c->from && op < OP__COUNT; op++) {
        m->ops[w].c[op] = c->from->op[op].c;
        if (m->track_hists) {
            copy_hist(&m->ops[w].latency[op], &c->from->op[op].latency);
            copy_hist(&m->ops[w].service[op], &c->from->op[op].service);
        }
    }
}

void stats_merge_done(struct stats_merge *m, int w)
{
    if (w >= 0 && w < m->n)
        m->done[w] = 1;
}

/* 1 when second t may close: every writer closed it or is done, and one closed it at all. */
static int closable(const struct stats_merge *m, size_t t)
{
    int any = 0;
    for (int w = 0; w < m->n; w++) {
        if (m->upto[w] > t)
            any = 1;
        else if (!m->done[w])
            return 0;
    }
    return any;
}

size_t stats_merge_flush(struct stats_merge *m, uint64_t *in_flight)
{
    struct stats *d = m->dst;
    size_t closed = 0;
    while (closable(m, d->cur_sec)) {
        struct pending *p = m->n_pend ? m->pend[0] : NULL;
        if (m->n_pend) {
            memmove(m->pend, m->pend + 1, (m->n_pend - 1) * sizeof(*m->pend));
            m->n_pend--;
        }
        size_t t = d->cur_sec;
        hist_reset(&d->sec_latency);
        hist_reset(&d->sec_service);
        hist_reset(&d->sec_lag);
        uint64_t fl = 0;
        if (p) {
            hist_merge(&d->sec_latency, &p->latency);
            hist_merge(&d->sec_service, &p->service);
            hist_merge(&d->sec_lag, &p->lag);
            fl = p->row.in_flight;
        }
        stats_tick(d, (int64_t)(t + 1) * 1000000000, fl);
        if (p)
            stats_sec_add_counts(&d->series[t], &p->row);
        pending_put(m, p);
        if (in_flight)
            *in_flight = fl;
        closed++;
    }
    if (closed)
        ops_sum(m);
    return closed;
}

void stats_merge_finish(struct stats_merge *m, struct stats *const *w)
{
    for (int i = 0; i < m->n; i++)
        m->done[i] = 1;
    stats_merge_flush(m, NULL);
    for (size_t i = 0; i < m->dst->n_series; i++)
        stats_sec_zero_counts(&m->dst->series[i]);
    for (int op = 0; op < OP__COUNT; op++) { /* the running copies give way to the final */
        memset(&m->dst->op[op].c, 0, sizeof(m->dst->op[op].c));
        hist_reset(&m->dst->op[op].latency);
        hist_reset(&m->dst->op[op].service);
        hist_reset(&m->dst->op[op].lag);
    }
    for (int i = 0; i < m->n; i++)
        stats_add(m->dst, w[i]);
}

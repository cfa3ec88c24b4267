/* flood/measure/stats_merge.c: several writers' stats into one (see stats_merge.h). */
#include "flood/measure/stats_merge.h"

#include <stdlib.h>
#include <string.h>

/* A second some writers closed and the others not yet: what they closed, merged. */
struct pending {
    struct stats_sec row; /* counts and in_flight summed */
    struct hist latency, service, lag;
};

struct stats_merge {
    struct stats *dst;
    int n;
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
    free(m->pend);
    free(m->spare);
    free(m->upto);
    free(m->done);
    free(m);
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
    return closed;
}

void stats_merge_finish(struct stats_merge *m, struct stats *const *w)
{
    for (int i = 0; i < m->n; i++)
        m->done[i] = 1;
    stats_merge_flush(m, NULL);
    for (size_t i = 0; i < m->dst->n_series; i++)
        stats_sec_zero_counts(&m->dst->series[i]);
    for (int i = 0; i < m->n; i++)
        stats_add(m->dst, w[i]);
}

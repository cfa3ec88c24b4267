/* flood/measure/tqueue_reading.c: a reading's gauges and failure, and the adapters' names:
 * what the sampler (tqueue.c) and the adapters (tqueue_redis.c, tqueue_http.c) share. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flood/measure/tqueue_int.h"

static const char *const kind_names[] = {"sidekiq",    "bullmq", "fedify",
                                         "prometheus", "json",   "cmd"};

const char *tq_source_kind(const struct tq_source *s)
{
    return kind_names[s->kind];
}

const char *tq_source_spec(const struct tq_source *s)
{
    return s->spec;
}

void tq_add(struct tq_reading *r, const char *name, double value, enum tq_role role)
{
    if (r->n >= TQ_GAUGES_MAX)
        return;
    struct tq_gauge *g = &r->g[r->n++];
    snprintf(g->name, sizeof(g->name), "%s", name);
    g->value = value;
    g->role = role;
}

void tq_fail(struct tq_reading *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof(r->why), fmt, ap);
    va_end(ap);
    r->ok = 0;
    r->n = 0;
}

/* flood/measure/tqueue.h: the target's own queue, read once a second (--target-queue).
 *
 * A source is one spec, read by a small adapter that knows one server's layout:
 *   sidekiq:redis://[:PASS@]HOST:PORT/DB[?namespace=NS]   Mastodon (Sidekiq's lists and sets)
 *   bullmq:redis://[:PASS@]HOST:PORT/DB[?prefix=P]         Misskey, any BullMQ app
 *   fedify:URL                                             a Fedify server in benchmark mode
 *   prometheus:URL#METRIC{LABEL="V",...}                   one gauge of a text exposition
 *   json:URL#PATH                                          a number in a JSON document
 *   cmd:COMMAND                                            the first number a command prints
 * A reading is a list of named gauges, each with the role it plays (the inbound queue, the
 * deliveries, retries...). A reading that fails says why and counts as missing, never as
 * zero. Redis through hiredis; each adapter cites the server file whose layout it reads. */
#ifndef FLOOD_TQUEUE_H
#define FLOOD_TQUEUE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"

#define TQ_GAUGES_MAX  48
#define TQ_NAME_MAX    64
#define TQ_SOURCES_MAX 8

/* What a gauge counts; capacity's queue criterion sums the TQ_INBOUND ones. */
enum tq_role {
    TQ_INBOUND,   /* received activities waiting (Sidekiq ingress, BullMQ inbox, Fedify inbox) */
    TQ_OUTBOUND,  /* deliveries waiting (push, deliver, outbox, fanout) */
    TQ_FETCH,     /* fetches waiting (Mastodon's pull) */
    TQ_RETRY,     /* jobs waiting for a retry */
    TQ_SCHEDULED, /* jobs scheduled for later (delayed) */
    TQ_DEAD,      /* jobs given up (dead, failed) */
    TQ_ACTIVE,    /* jobs being worked now */
    TQ_OTHER,     /* another queue, or a measure that is not a depth */
    TQ__ROLES
};

/* The role's name in run.json: "inbound", "outbound", ... */
const char *tq_role_name(enum tq_role r);

struct tq_gauge {
    char name[TQ_NAME_MAX]; /* "ingress", "inbox.waiting", "inbox.queued", "sigverify_ms" */
    double value;
    enum tq_role role;
};

struct tq_reading {
    int ok;        /* 0: the source could not be read (why says so); gauges are missing */
    char why[200]; /* the reason, "sidekiq: redis 127.0.0.1:6379: Connection refused" */
    size_t n;
    struct tq_gauge g[TQ_GAUGES_MAX];
};

struct tq_source;

/* Parse spec into a new source (nothing is connected yet). Free with tq_source_free. NULL
 * and err ("--target-queue: ...") when the spec is not one of the forms above. */
struct tq_source *tq_source_new(const char *spec, struct flood_err *err);
void tq_source_free(struct tq_source *s);

/* The adapter's name ("sidekiq", "bullmq", "fedify", "prometheus", "json", "cmd") and the
 * spec as given (borrowed). */
const char *tq_source_kind(const struct tq_source *s);
const char *tq_source_spec(const struct tq_source *s);

/* Read the source now (connecting, or reconnecting after a failure, with a 2 s timeout):
 * fills r. Never fails as a call: a failed read is r->ok == 0 with r->why. */
void tq_source_read(struct tq_source *s, struct tq_reading *r);

/* The sum of the reading's gauges of role `role` (0 when it has none), and whether it had
 * any (*have). */
double tq_reading_sum(const struct tq_reading *r, enum tq_role role, int *have);

/* ---- the sampler: each source read at every whole second, on a thread of its own ------ */

struct tq_sampler;

/* Start reading the sources (borrowed specs, parsed here) once a second from now;
 * seconds are counted from t0_mono_ns (CLOCK_MONOTONIC), the run's start. A source's first
 * failure and each later change of reason are printed on stderr as "flood: CMD:
 * --target-queue SPEC: WHY" (unless quiet). NULL and err when a spec does not parse. */
struct tq_sampler *tq_sampler_start(const char *cmd, const char *const *specs, size_t n,
                                    int64_t t0_mono_ns, int quiet, struct flood_err *err);

/* Stop the thread and free everything. NULL is fine. */
void tq_sampler_free(struct tq_sampler *sm);

/* Stop sampling (the thread ends; the samples stay readable). */
void tq_sampler_stop(struct tq_sampler *sm);

/* The readings of second t (the last one taken in it) as a new JSON object, one member per
 * source ("sidekiq" or "sidekiq#2" for a second source of a kind): {GAUGE: value, ...}, or
 * null when that second's reading failed or none was taken. NULL when the sampler has
 * nothing for that second at all (no source read). */
json_t *tq_sampler_second(struct tq_sampler *sm, int64_t t);

/* The inbound sum of each source's last reading (TQ_INBOUND gauges): 0 and *depth, or -1
 * when no source's last reading had one (failed, or none yet). */
int tq_sampler_inbound(struct tq_sampler *sm, double *depth);

/* run.json's "target_queue" record: per source its spec, kind, readings, missing ones,
 * the first and last failure reasons, and per gauge its role, last and largest value. A
 * new reference. */
json_t *tq_sampler_json(struct tq_sampler *sm);

/* ---- parsers, exposed for the tests and fuzzers (pure) ------------------------------- */

/* The sum of the samples of metric `name` whose labels include every one of `want` (a
 * "{a=\"b\",c=\"d\"}" text, or "" for any) in a Prometheus text exposition. 0 and *value,
 * -1 when no sample matched (err says so), or when the text is malformed on a matching line. */
int tq_prom_value(const char *text, size_t len, const char *name, const char *want, double *value,
                  struct flood_err *err);

/* A Fedify benchmark stats snapshot (GET /.well-known/fedify/bench/stats) into gauges:
 * fedify.queue.depth per role and state ("inbox.queued"), and the signature verification
 * histogram's count and sum (cumulative, "sigverify.count", "sigverify.sum_ms"). 0, or -1
 * and err when the document is not such a snapshot. */
int tq_fedify_gauges(const json_t *snapshot, struct tq_reading *r, struct flood_err *err);

#endif

/* flood/send/sender.h: the open-loop sender. flood's own HTTP/1.1 client (hclient.h) on one
 * libevent base; a precise timer fires at each request's intended time and starts it
 * whatever happened to the earlier ones. The
 * requests come ready-signed from the signer's look-ahead ring; beyond --max-inflight a
 * request is shed and counted. Everything the sender measures goes into a struct stats
 * owned by the caller, from the event loop's thread only.
 *
 * The room flood/send/: everything that leaves for the target: the schedule (sched.c), the
 * workload of activities (workload.c), the signer threads (signer.c), this sender, and
 * persona discovery (target.c). It calls measure/, crowd/, core/, webfinger/ and sign/. */
#ifndef FLOOD_SENDER_H
#define FLOOD_SENDER_H

#include <signal.h>
#include <stdio.h>
#include <stdint.h>

#include "sign/err.h"
#include "flood/measure/probes.h"
#include "flood/send/sched.h"
#include "flood/send/signer.h"
#include "flood/send/steer.h"
#include "flood/measure/stats.h"

struct sender_opts {
    uint64_t max_inflight;      /* --max-inflight, default 10000 */
    long timeout_ms;            /* --timeout, per request */
    long connections;           /* --connections per target origin */
    const char *const *resolve; /* --resolve HOST:PORT:ADDR entries (borrowed) */
    size_t n_resolve;
    int insecure;               /* --insecure */
    const char *cacert;         /* --cacert FILE or NULL */
    uint32_t src_base;          /* --source-ips A-B: A in host order, 0 for none */
    uint32_t src_count;         /* B - A + 1 */
    long grace_ms;              /* after SIGINT/SIGTERM: wait this long for answers */
    int live;                   /* print a live line each second on stderr */
    struct probes *probes;      /* Follows are registered here; may be NULL */
    /* extra text for the live line (e.g. inbound_live), may be NULL */
    void (*live_extra)(void *ctx, char *buf, size_t size);
    void *live_ctx;
    /* called on the event loop's thread once a second, after the second's figures are
     * closed (e.g. metrics_pub_stats); may be NULL */
    void (*tick)(void *ctx, const struct stats *st, uint64_t in_flight);
    void *tick_ctx;
    /* commands from the dashboard, applied on the loop's thread (the signers' options
     * must say steerable too); NULL: the schedule runs as given (borrowed) */
    struct steer *steer;
    /* --log-sends: a line per activity dispatched, "N INTENDED_NS OP SENT|SHED" (borrowed;
     * written from the loop's thread), or NULL */
    FILE *sends_log;
};

/* Parse "A-B" (IPv4, A <= B) or a single address into o->src_base/src_count. */
int sender_parse_source_ips(const char *s, struct sender_opts *o, struct flood_err *err) FLOOD_WUR;

/* What the run looked like from the generator's side. */
struct sender_result {
    double wall_s;         /* from the start to the end of the drain */
    double cpu_s;          /* the whole process (user + system) */
    double loop_cpu_s;     /* the event loop's thread alone */
    double loop_cpu_share; /* loop_cpu_s / sending time */
    double lag_p99_ms;
    uint64_t late_sends;
    int saturated;   /* lag p99 over 10 ms or the loop over 90% of a core */
    int interrupted; /* SIGINT/SIGTERM stopped the sending */
    int signal;      /* which one */
};

struct sender;

/* A new sender over the signer (borrowed) walking its own copy of sched, recording into
 * stats (borrowed). NULL and err (libevent or libcurl refused). */
struct sender *sender_new(const struct sender_opts *o, struct signer *signer,
                          const struct sched *sched, struct stats *stats,
                          struct flood_err *err) FLOOD_WUR;
/* Run the schedule from mono0_ns (CLOCK_MONOTONIC ns, the signer's start too) to its end,
 * then wait for answers (the longer of the grace period and the timeout), or until
 * SIGINT/SIGTERM (then the grace period). Requests still open are counted unfinished.
 * Returns 0, or -1 and err when the run could not go on (a signer failed); the stats are
 * complete and conserved either way. */
int sender_run(struct sender *s, int64_t mono0_ns, struct sender_result *res,
               struct flood_err *err) FLOOD_WUR;
void sender_free(struct sender *s);

/* CLOCK_MONOTONIC now, in ns. */
int64_t sender_mono_ns(void);

#endif

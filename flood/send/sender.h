/* flood/send/sender.h: the open-loop sender. flood's own HTTP/1.1 client (hclient.h) on one
 * libevent base; a precise timer fires at each request's intended time and starts it
 * whatever happened to the earlier ones. The requests come ready-signed from the signer's
 * look-ahead ring; beyond --max-inflight a request is shed and counted. Everything the sender
 * measures goes into a struct stats owned by the caller.
 *
 * --loops N (sender_loops.c): N such event loops, share-nothing as wrk's threads, each on
 * a thread of its own with its own base, HTTP client, connections, timers and struct stats.
 * Activity seq (the run's number n, unless sharded) goes to loop seq mod N: every loop walks
 * the whole schedule and sends only its own, so a seeded run sends the same activities at
 * the same intended times whatever N is. --connections and --max-inflight are the run's
 * totals, divided among the loops. The loops publish each second they close; the calling
 * thread merges them into the caller's stats (flood/measure/stats_merge.h), ticks, prints
 * the live line and forwards SIGINT/SIGTERM; at the end every count is merged exactly. With
 * N = 1 the one loop runs in the calling thread straight into the caller's stats, as ever.
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
    uint64_t max_inflight;      /* --max-inflight, default 10000 (all loops together) */
    long timeout_ms;            /* --timeout, per request */
    long connections;           /* --connections per target origin (all loops together) */
    const char *const *resolve; /* --resolve HOST:PORT:ADDR entries (borrowed) */
    size_t n_resolve;
    int insecure;          /* --insecure */
    const char *cacert;    /* --cacert FILE or NULL */
    uint32_t src_base;     /* --source-ips A-B: A in host order, 0 for none */
    uint32_t src_count;    /* B - A + 1 */
    long grace_ms;         /* after SIGINT/SIGTERM: wait this long for answers */
    int live;              /* print a live line each second on stderr */
    struct probes *probes; /* Follows are registered here; may be NULL */
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
     * written from the loops' threads, one fprintf a line: stdio locks the stream for each
     * call, so lines stay whole; their order across loops is not the schedule's), or NULL */
    FILE *sends_log;
    /* --loops: event loops (0 or 1: one, in the caller's thread; at most SENDER_LOOPS_MAX;
     * more than one refuses steering, and needs connections and max_inflight >= loops) */
    int loops;
    /* --preconnect: connections to preconnect_url opened before the first send (all loops
     * together; -1: the schedule's first second's activities, at most --connections; 0:
     * none, each opened when a request needs it). preconnect_url NULL: none */
    long preconnect;
    const char *preconnect_url;
    /* --dispatch-quantum: the loop wakes to send at most once in this many ns, sending what
     * is due by then (each request at most this late; 1: every request at its own time;
     * 0: the default, 1 ms) */
    int64_t quantum_ns;
};

#define SENDER_LOOPS_MAX SIGNER_CONSUMERS_MAX

/* Parse "A-B" (IPv4, A <= B) or a single address into o->src_base/src_count. */
int sender_parse_source_ips(const char *s, struct sender_opts *o, struct flood_err *err) FLOOD_WUR;

/* What the run looked like from the generator's side. */
struct sender_result {
    double wall_s;         /* from the start to the end of the (last loop's) drain */
    double cpu_s;          /* the whole process (user + system) */
    double loop_cpu_s;     /* the event loops' threads alone, summed */
    double loop_cpu_share; /* of one core: the busiest loop's thread CPU / its wall time */
    int loops;             /* how many ran; per loop (index < loops): */
    double each_cpu_s[SENDER_LOOPS_MAX], each_cpu_share[SENDER_LOOPS_MAX];
    uint64_t each_sent[SENDER_LOOPS_MAX];
    double lag_p99_ms;
    uint64_t late_sends;
    /* What the host took from the CPUs flood may run on meanwhile (steal time, summed over
     * steal_cpus of them; steal_cpus 0: the kernel does not say). */
    double steal_s;
    int steal_cpus;
    int saturated;   /* lag p99 over 10 ms or the loop over 90% of a core */
    int interrupted; /* SIGINT/SIGTERM stopped the sending */
    int signal;      /* which one */
};

struct sender;

/* A new sender of o->loops loops over the signer (borrowed; made with as many consumers)
 * walking its own copies of sched, recording into stats (borrowed). NULL and err (libevent
 * or the HTTP client refused, or the options do not fit the loops). */
struct sender *sender_new(const struct sender_opts *o, struct signer *signer,
                          const struct sched *sched, struct stats *stats,
                          struct flood_err *err) FLOOD_WUR;
/* Run the schedule from mono0_ns (CLOCK_MONOTONIC ns, the signer's start too) to its end,
 * then wait for answers (the longer of the grace period and the timeout), or until
 * SIGINT/SIGTERM (then the grace period). Requests still open are counted unfinished.
 * Returns 0, or -1 and err when the run could not go on (a signer failed); the stats are
 * complete and conserved either way (several loops: merged into stats when it returns). */
int sender_run(struct sender *s, int64_t mono0_ns, struct sender_result *res,
               struct flood_err *err) FLOOD_WUR;
void sender_free(struct sender *s);

#endif

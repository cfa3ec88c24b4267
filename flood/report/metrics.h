/* flood/report/metrics.h: a Prometheus text exposition endpoint (GET /metrics, text format 0.0.4)
 * on its own small libmicrohttpd daemon, for `--metrics ADDR:PORT` in `flood run` and
 * `flood serve`.
 *
 * Families (Prometheus naming: base units, _total for counters, labels for dimensions):
 *   flood_info{version}                         gauge 1
 *   flood_scheduled_total{op} flood_sent_total{op} flood_shed_total{op}      counters
 *   flood_requests_total{op,outcome}            counter: answers and failures by class
 *                                               (outcome: stats_outcome_name, transport_KIND for
 *                                               the transport kinds)
 *   flood_unfinished_requests{op}               gauge: sent, never completed (set at the end)
 *   flood_in_flight_requests                    gauge
 *   flood_latency_seconds{op}                   histogram: corrected latency
 *   flood_service_seconds{op}                   histogram: service time
 *   flood_inbound_deliveries_total{type}        counter: deliveries to the crowd's inboxes
 *   flood_inbound_rejected_total{reason}        counter
 *   flood_inbound_accepts_total                 counter: Accepts of the sender's Follows
 *   flood_follow_to_accept_seconds              histogram: the Follow-to-Accept probes
 *   flood_fetches_total{kind}                   counter: GETs the target made of the crowd
 *   flood_fetch_bytes_total{kind}               counter: body bytes the crowd sent for them
 *   flood_fetch_repeats_total{kind}             counter: fetches of a URL already fetched
 *   flood_dns_queries_total{transport,result}   counter: the name server's (--dns) messages
 *   flood_egress_requests_total{outcome}        counter: requests through --proxy, by end
 *                                               (answered, failed, refused, malformed, tunnelled)
 *   flood_egress_refused_total{reason}          counter: refusals by reason
 *   flood_egress_refused_host_total{host}       counter: refusals by the host asked
 *   flood_egress_malformed_total{reason}        counter: bad input by reason
 *   flood_egress_tunnels_closed_total{end}      counter: CONNECT tunnels ended, by how
 *   flood_egress_connections_total, flood_egress_open_connections   counter, gauge
 *   flood_egress_instance_connects_total{instance}, flood_egress_instance_requests_total
 *   {instance}, flood_egress_instance_connections_total{instance}   per instance used
 *   flood_target_queue_up{source}               gauge: the last --target-queue reading worked
 *   flood_target_queue_readings_total{source}, flood_target_queue_missing_total{source}
 *   flood_target_queue_jobs{source,gauge,role}  gauge: the target's queues at the last
 *                                               reading (absent while its readings fail)
 *
 * Threads: a scrape runs on the daemon's thread and reads only what the source's snapshot
 * callback copies for it. The sender's struct stats has one writer (its event loop), so
 * its figures reach the endpoint through a struct metrics_pub: the writer publishes a copy
 * (metrics_pub_stats, e.g. once a second and once at the end) and scrapes read the last
 * copy under the pub's lock (metrics_pub_snapshot as the source's callback). */
#ifndef FLOOD_METRICS_H
#define FLOOD_METRICS_H

#include <jansson.h>
#include <stdint.h>

#include "sign/err.h"
#include "flood/crowd/dns.h"
#include "flood/measure/fetches.h"
#include "flood/measure/hist.h"
#include "flood/measure/stats.h"
#include "flood/measure/tqueue.h"

/* One scrape's figures. The caller of snapshot hands it zeroed with every hist empty. */
struct metrics_snapshot {
    int have_sender; /* the sender families are written */
    struct stats_counts op[OP__COUNT];
    struct hist latency[OP__COUNT]; /* corrected latency, us */
    struct hist service[OP__COUNT]; /* service time, us */
    uint64_t in_flight;
    json_t *inbound; /* owned (decref'd after the scrape): run.json's
                      * "inbound" object, or NULL for no inbound families */
    int have_probes;
    uint64_t probe_accepts;       /* Follows answered by an Accept */
    struct hist follow_to_accept; /* us */
    int have_fetches;
    uint64_t fetches[FETCH__COUNT], fetch_bytes[FETCH__COUNT], fetch_repeats[FETCH__COUNT];
    int have_dns;                  /* --dns: the name server's counts */
    uint64_t dns[2][DNS__RESULTS]; /* [udp 0, tcp 1][result]: see dns_stats */
    json_t *egress;                /* owned (decref'd after the scrape): egress_json(), or NULL */
    json_t *tqueue; /* owned (decref'd after the scrape): tq_sampler_json(), or NULL */
    int have_steal; /* the host's steal of the CPUs flood may run on (set by the daemon) */
    double steal_s;
    int steal_cpus;
};

struct metrics_source {
    /* Fill snap with the figures as they stand. Runs on the metrics daemon's thread: read
     * nothing that another thread writes without that thread's lock. 0, or -1 when there
     * is nothing to report (the scrape then answers 503). */
    int (*snapshot)(void *ctx, struct metrics_snapshot *snap);
    void *ctx;
};

struct metrics;

/* Serve GET /metrics on addr_port ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:0": port 0
 * picks a free one) from src (copied; src->ctx is borrowed and must outlive the daemon).
 * A new daemon (metrics_stop), or NULL and err (FLOOD_EINVAL for a bad address, FLOOD_EIO
 * when it cannot listen). */
struct metrics *metrics_start(const char *addr_port, const struct metrics_source *src,
                              struct flood_err *err) FLOOD_WUR;
/* The port listened on. */
int metrics_port(const struct metrics *m);
/* The bound address as "ADDR:PORT" ("[ADDR]:PORT" for IPv6), borrowed from m. */
const char *metrics_address(const struct metrics *m);
/* 0 when addr_port is an address metrics_start accepts, else -1 and err (FLOOD_EINVAL):
 * for option parsing, so a malformed --metrics is a usage error. */
int metrics_check_addr(const char *addr_port, struct flood_err *err) FLOOD_WUR;
/* Stop the daemon (waiting for a scrape in progress) and free m. NULL is fine. */
void metrics_stop(struct metrics *m);

/* The exposition text of snap, as GET /metrics sends it: a new string, free() it. */
char *metrics_render(const struct metrics_snapshot *snap);

/* ---- publishing a single-writer struct stats ---------------------------------------- */

struct inbound;
struct probes;

struct metrics_pub;

/* A new pub with nothing published yet (scrapes answer 503 until the first
 * metrics_pub_stats, unless it has an inbound: flood serve). in and pr (borrowed, may be
 * NULL, both thread-safe) are read at each scrape. Free with metrics_pub_free after the
 * daemon reading it is stopped. */
struct metrics_pub *metrics_pub_new(struct inbound *in, struct probes *pr);
void metrics_pub_free(struct metrics_pub *p);
/* Read the crowd's fetch accounting (borrowed, thread-safe, may be NULL) at each scrape. */
void metrics_pub_set_fetches(struct metrics_pub *p, struct fetches *f);
/* Read the name server's counts (borrowed, thread-safe, may be NULL) at each scrape. */
void metrics_pub_set_dns(struct metrics_pub *p, struct dns *d);
/* Read the egress proxy's counts (borrowed, thread-safe, may be NULL) at each scrape. */
struct egress;
void metrics_pub_set_egress(struct metrics_pub *p, struct egress *e);
/* Read the target's queue sampler (borrowed, thread-safe, may be NULL; set it to NULL
 * before freeing it) at each scrape: the flood_target_queue_* families. */
void metrics_pub_set_tqueue(struct metrics_pub *p, struct tq_sampler *sm);
/* On st's writer thread: copy st's counts and histograms (and in_flight) for scrapes. */
void metrics_pub_stats(struct metrics_pub *p, const struct stats *st, uint64_t in_flight);
/* A metrics_source.snapshot over a pub (ctx is the struct metrics_pub). */
int metrics_pub_snapshot(void *ctx, struct metrics_snapshot *snap);

#endif

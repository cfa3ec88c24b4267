/* flood/report/results.h: a run's results: run.json, the .hgrm percentile distributions and
 * summary.md in the output folder, and the final table on a stream.
 *
 * The room flood/report/: what a run leaves and shows: run.json, .hgrm and summary.md
 * (results.c), report.html (report.c, report_run.c, report_plot.c) and the Prometheus
 * endpoint (metrics.c). It reads the rooms below it (send/, inbound/, measure/) and is
 * called only by the commands. */
#ifndef FLOOD_RESULTS_H
#define FLOOD_RESULTS_H

#include <jansson.h>
#include <stdio.h>

#include "flood/report/expect.h"
#include "flood/report/users.h"
#include "sign/err.h"
#include "flood/measure/egress.h"
#include "flood/measure/fetches.h"
#include "flood/measure/probes.h"
#include "flood/send/sender.h"
#include "flood/send/steer.h"
#include "flood/measure/stats.h"
#include "flood/measure/tqueue.h"

struct server_stats; /* flood/crowd/server.h */
struct dns_stats;    /* flood/crowd/dns.h */

struct results_info {
    const char *started_at;          /* ISO-8601 UTC */
    json_t *config;                  /* borrowed: every option in force */
    json_t *inbound;                 /* borrowed: inbound_json(), or NULL for {} */
    const struct sender_result *gen; /* borrowed */
    struct probes *probes;           /* borrowed, may be NULL */
    const char *rate_text;           /* "5000/s" or the stages spec, for summary.md */
    double duration_s;               /* scheduled duration */
    const struct expect *expect;     /* borrowed: --expect thresholds, judged on run.json */
    size_t n_expect;
    FILE *expect_out;        /* where results_write prints their table (may be NULL) */
    int expect_failed;       /* set by results_write: how many failed */
    struct steer *steer;     /* borrowed, may be NULL: the run's steering (flood run --dashboard) */
    struct fetches *fetches; /* borrowed, may be NULL: what the target fetched back */
    struct egress *egress;   /* borrowed, may be NULL: --proxy's counts, run.json's "egress" */
    json_t *egress_merged;   /* borrowed, may be NULL: flood merge's "egress" (egress NULL) */
    json_t *preset;          /* borrowed, may be NULL: presets_json(), run.json's first key, its
                                "watch" metrics valued and printed on expect_out */
    json_t *shard;           /* borrowed, may be NULL: run.json's "shard" (flood run --shard) */
    json_t *mix;     /* borrowed, may be NULL: run.json's "mix" (workload_mix_json), its lines */
    json_t *presign; /* borrowed, may be NULL: run.json's "presign" (flood run --presign) */
    /* CLOCK_REALTIME - CLOCK_MONOTONIC at the start, ns: the probes' times on the wall clock
     * in follows.tsv */
    int64_t wall_minus_mono_ns;
    /* flood merge: the joined Follow log is already in probes' terms, write no follows.tsv */
    int no_follow_log;
    /* flood merge: the series' deliveries were added from the shards (a run counts them
     * through stats_set_inbound) */
    int series_added;
    /* borrowed, may be NULL: the crowd server's counts (requests by status, refusals, TLS
     * answers cut), run.json's "crowd" */
    const struct server_stats *crowd;
    const struct dns_stats *dns; /* borrowed, may be NULL: --dns's counts, run.json's "dns" */
    /* borrowed, may be NULL: the target's own queue, read each second (--target-queue):
     * the series' "target_queue" and run.json's "target_queue" */
    struct tq_sampler *tqueue;
    /* borrowed, may be NULL: the run's sent rate in active users (run.json's "users") */
    const struct users_model *users;
};

/* One second of run.json's "series" (a new reference): second i's row x; with_probes adds
 * the Follow-to-Accept keys, with_deliveries the inbound deliveries, with_fetches the
 * target's fetches by kind. The dashboard streams the same rows. */
json_t *results_series_row(const struct stats_sec *x, size_t i, int with_probes,
                           int with_deliveries, int with_fetches);
/* run.json's "steering": every change applied, in time order, {t_s, kind, value, ...}
 * (a new reference; an empty array for NULL). */
json_t *results_steering_json(struct steer *steer);

/* The host's steal time over the generator's CPUs' time in the run (0 when not known). */
double results_steal_share(const struct sender_result *gen);

/* A default output folder name, "out/run-YYYYMMDDTHHMMSSZ" for time t, into buf. */
void results_default_dir(time_t t, char *buf, size_t size);
/* ISO-8601 UTC "YYYY-MM-DDTHH:MM:SSZ" of t into buf. */
void results_iso8601(time_t t, char *buf, size_t size);

/* run.json as a new JSON object (json_decref). */
json_t *results_json(const struct stats *st, const struct results_info *ri);
/* Write run.json, the .hgrm files (latency-OP.hgrm, service-OP.hgrm, lag-OP.hgrm, the
 * same with "all", follow-to-accept.hgrm) and summary.md into dir (made, with parents,
 * when missing). With ri->n_expect, the thresholds are judged on run.json as written (its
 * "expectations"), their table printed on ri->expect_out and the failures counted in
 * ri->expect_failed. 0, or -1 and err. */
int results_write(const char *dir, const struct stats *st, struct results_info *ri,
                  struct flood_err *err) FLOOD_WUR;
/* results_exact.c. run.json's "exact": every per-operation counter as recorded and the
 * histograms as hist_encode text, so that shards add up without loss (a new reference). */
json_t *results_exact_json(const struct stats *st);
/* Add a run.json's "exact" (borrowed) into st: counters summed, histograms merged exactly.
 * 0, or -1 and err naming what is missing or malformed. */
int results_exact_add(struct stats *st, json_t *exact, struct flood_err *err) FLOOD_WUR;
/* run.json's "exact" "fetches": {"kinds": {KIND: {requests, bytes, serve: hist_encode text}},
 * "untracked"} (a new reference; NULL without f). */
json_t *results_fetches_exact(struct fetches *f);
/* A run's "exact" "fetches" (borrowed) added into f. 0, or -1 and err naming what is
 * missing or malformed. */
int results_fetches_add(struct fetches *f, json_t *exact, struct flood_err *err) FLOOD_WUR;
/* DIR/fetches.tsv: every URL the target fetched, by key (its kind in the top hex digit)
 * and count: "KEY<TAB>COUNT" a line (fetches_write_urls). 0, or -1 and err. */
int results_write_fetch_urls(const char *dir, struct fetches *f, struct flood_err *err) FLOOD_WUR;
/* DIR/fetches.tsv's URLs added into f's table. 0, or -1 and err naming the file and line. */
int results_fetch_urls_add(struct fetches *f, const char *dir, struct flood_err *err) FLOOD_WUR;
/* Write DIR/follows.tsv from the probes' event log: "F|A|R<TAB>SEQ<TAB>WALL_US" a line,
 * the probes' CLOCK_MONOTONIC times plus wall_minus_mono_ns. 0, or -1 and err. */
int results_write_follows(const char *dir, struct probes *p, int64_t wall_minus_mono_ns,
                          struct flood_err *err) FLOOD_WUR;

/* The target queue's line of the table and summary.md (md: markdown) on f: per source its
 * inbound, retry and dead gauges' last and largest value, and its missing readings with the
 * first reason. Nothing for NULL. */
void results_tqueue_line(FILE *f, struct tq_sampler *sm, int md);
/* The final table (per operation and totals, percentiles, warnings) on f. */
void results_print_table(FILE *f, const struct stats *st, const struct results_info *ri);

#endif

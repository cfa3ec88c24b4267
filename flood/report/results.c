/* flood/report/results.c: run.json, .hgrm files, summary.md and the final table. */
#include "flood/report/results.h"

#include "flood/report/report_retry.h"
#include "flood/report/results_fetches.h"
#include "flood/report/results_mix.h"

#include <curl/curl.h>
#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <math.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "flood/core/fsutil.h"

#ifndef FLOOD_VERSION
#define FLOOD_VERSION "0.0.0"
#endif

void results_iso8601(time_t t, char *buf, size_t size)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void results_default_dir(time_t t, char *buf, size_t size)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "out/run-%Y%m%dT%H%M%SZ", &tm);
}

/* Set a member, aborting like the allocator when jansson is out of memory. */
static void put(json_t *o, const char *k, json_t *v)
{
    if (!v || json_object_set_new(o, k, v)) {
        fprintf(stderr, "flood: out of memory (json)\n");
        abort();
    }
}

static json_t *jint(uint64_t v)
{
    return json_integer((json_int_t)v);
}

/* A number of milliseconds rounded to the microsecond. */
static json_t *jms(double ms)
{
    return json_real((double)llround(ms * 1000.0) / 1000.0);
}

/* run.json's "egress" (a new reference, NULL without a proxy): the live proxy's counts,
 * or flood merge's record of the shards'. */
static json_t *results_egress_json(const struct results_info *ri)
{
    if (ri->egress)
        return egress_json(ri->egress, 0);
    return ri->egress_merged ? json_incref(ri->egress_merged) : NULL;
}

static json_t *hist_json(const struct hist *h)
{
    json_t *o = json_object();
    put(o, "p50", jms(hist_value_at_percentile(h, 50) / 1000.0));
    put(o, "p90", jms(hist_value_at_percentile(h, 90) / 1000.0));
    put(o, "p95", jms(hist_value_at_percentile(h, 95) / 1000.0));
    put(o, "p99", jms(hist_value_at_percentile(h, 99) / 1000.0));
    put(o, "p99.9", jms(hist_value_at_percentile(h, 99.9) / 1000.0));
    put(o, "max", jms(hist_max(h) / 1000.0));
    put(o, "min", jms(hist_min(h) / 1000.0));
    put(o, "mean", jms(hist_mean(h) / 1000.0));
    put(o, "count", jint(hist_count(h)));
    return o;
}

/* "outcomes": the classes, with every transport kind summed as "transport". */
static json_t *outcomes_json(const uint64_t *out)
{
    json_t *o = json_object();
    uint64_t transport = 0;
    for (int k = 0; k < OUT__COUNT; k++) {
        if (k >= OUT_FIRST_TRANSPORT)
            transport += out[k];
        else
            put(o, stats_outcome_name(k), jint(out[k]));
    }
    put(o, "transport", jint(transport));
    return o;
}

static json_t *transport_json(const uint64_t *out)
{
    json_t *o = json_object();
    for (int k = OUT_FIRST_TRANSPORT; k < OUT__COUNT; k++)
        put(o, stats_outcome_name(k), jint(out[k]));
    return o;
}

static json_t *retry_after_json(const uint64_t *ra)
{
    json_t *o = json_object();
    put(o, "429", jint(ra[OUT_429]));
    put(o, "503", jint(ra[OUT_503]));
    return o;
}

static json_t *bad_json(const struct stats_counts *c)
{
    json_t *o = json_object(), *sent = json_object(), *acc = json_object();
    for (int k = 1; k < BAD__COUNT; k++) {
        put(sent, stats_bad_name(k), jint(c->bad_sent[k]));
        put(acc, stats_bad_name(k), jint(c->bad_accepted[k]));
    }
    put(o, "sent", sent);
    put(o, "accepted", acc);
    return o;
}

static uint64_t sum_bad(const uint64_t *v)
{
    uint64_t n = 0;
    for (int k = 1; k < BAD__COUNT; k++)
        n += v[k];
    return n;
}

static void counts_into(json_t *o, const struct stats_counts *c)
{
    put(o, "scheduled", jint(c->scheduled));
    put(o, "sent", jint(c->sent));
    put(o, "shed", jint(c->shed));
    put(o, "completed", jint(c->completed));
    put(o, "unfinished", jint(c->unfinished));
    put(o, "outcomes", outcomes_json(c->outcomes));
    put(o, "transport_kinds", transport_json(c->outcomes));
    put(o, "retry_after", retry_after_json(c->retry_after));
    put(o, "second_knocks", jint(c->second_knocks));
    put(o, "bad_signatures", bad_json(c));
}

static json_t *host_json(void)
{
    json_t *o = json_object();
    struct utsname u;
    if (uname(&u) == 0) {
        char buf[600];
        snprintf(buf, sizeof(buf), "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
        put(o, "uname", json_string(buf));
        put(o, "hostname", json_string(u.nodename));
    }
    put(o, "cores", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    return o;
}

static json_t *versions_json(void)
{
    json_t *o = json_object();
    put(o, "flood", json_string(FLOOD_VERSION));
    put(o, "libcurl", json_string(curl_version_info(CURLVERSION_NOW)->version));
    put(o, "libevent", json_string(event_get_version()));
    put(o, "openssl", json_string(OpenSSL_version(OPENSSL_VERSION)));
    put(o, "jansson", json_string(JANSSON_VERSION));
    return o;
}

/* Steal time worth a warning: 1% of the generator's CPUs' time, and at least 5 of
 * /proc/stat's ticks (at 100 a second), so a short run's one tick is not a share (a little
 * under 0.05 s: the difference of two tick counts in seconds may round below it). */
#define STEAL_WARN_SHARE 0.01
#define STEAL_WARN_S     0.0499

double results_steal_share(const struct sender_result *gen)
{
    double cpu_time = gen->wall_s * gen->steal_cpus;
    return cpu_time > 0 ? gen->steal_s / cpu_time : 0;
}

/* The warnings a run's results carry (also printed). */
static json_t *warnings_json(const struct stats *st, const struct results_info *ri)
{
    json_t *w = json_array();
    struct stats_counts t;
    stats_totals(st, &t);
    char buf[256];
    if (ri->gen && ri->gen->saturated) {
        snprintf(buf, sizeof(buf),
                 "generator saturated: dispatch lag p99 %.3f ms, event loop at %.0f%% of a "
                 "core; the rates measured are flood's limit, not the target's",
                 ri->gen->lag_p99_ms, ri->gen->loop_cpu_share * 100);
        json_array_append_new(w, json_string(buf));
    }
    if (ri->gen && results_steal_share(ri->gen) >= STEAL_WARN_SHARE &&
        ri->gen->steal_s >= STEAL_WARN_S) {
        snprintf(buf, sizeof(buf),
                 "the host took %.0f ms of the generator's %d CPUs (steal time, %.1f%% of theirs): "
                 "the dispatch lag and latencies include the host's stalls",
                 ri->gen->steal_s * 1000, ri->gen->steal_cpus, results_steal_share(ri->gen) * 100);
        json_array_append_new(w, json_string(buf));
    }
    if (results_crowd_warning(ri->crowd, buf, sizeof(buf)))
        json_array_append_new(w, json_string(buf));
    results_mix_warnings(ri->mix, w); /* a kind not sent at its share, and why */
    uint64_t acc = sum_bad(t.bad_accepted);
    if (acc) {
        snprintf(buf, sizeof(buf),
                 "the target accepted %" PRIu64 " deliberately bad signatures (wrong key %" PRIu64
                 ", stale date %" PRIu64 ", digest %" PRIu64 ")",
                 acc, t.bad_accepted[BAD_WRONG_KEY], t.bad_accepted[BAD_STALE_DATE],
                 t.bad_accepted[BAD_DIGEST]);
        json_array_append_new(w, json_string(buf));
    }
    if (t.shed) {
        snprintf(buf, sizeof(buf), "%" PRIu64 " activities shed beyond --max-inflight", t.shed);
        json_array_append_new(w, json_string(buf));
    }
    if (results_crowd_unreachable(st, ri, buf, sizeof(buf)))
        json_array_append_new(w, json_string(buf));
    if (ri->gen && ri->gen->interrupted) {
        snprintf(buf, sizeof(buf), "interrupted by %s",
                 ri->gen->signal == SIGINT ? "SIGINT" : "SIGTERM");
        json_array_append_new(w, json_string(buf));
    }
    return w;
}

json_t *results_series_row(const struct stats_sec *x, size_t i, int with_probes,
                           int with_deliveries, int with_fetches)
{
    json_t *e = json_object();
    put(e, "t", jint(i));
    put(e, "offered", jint(x->offered));
    put(e, "sent", jint(x->sent));
    put(e, "shed", jint(x->shed));
    put(e, "completed", jint(x->completed));
    put(e, "outcomes", outcomes_json(x->outcomes));
    put(e, "p50_ms", jms(x->p50_ms));
    put(e, "p99_ms", jms(x->p99_ms));
    put(e, "max_ms", jms(x->max_ms));
    put(e, "service_p50_ms", jms(x->service_p50_ms));
    put(e, "service_p99_ms", jms(x->service_p99_ms));
    put(e, "lag_p99_ms", jms(x->lag_p99_ms));
    put(e, "late", jint(x->late));
    put(e, "in_flight", jint(x->in_flight));
    put(e, "steal_ms", json_real(x->steal_ms));
    if (with_probes) {
        put(e, "accepts", jint(x->accepts));
        put(e, "rejects", jint(x->rejects));
        put(e, "f2a_p50_ms", jms(x->f2a_p50_ms));
        put(e, "f2a_p99_ms", jms(x->f2a_p99_ms));
    }
    if (with_deliveries)
        put(e, "deliveries", jint(x->deliveries));
    if (with_fetches) {
        json_t *fk = json_object();
        uint64_t all = 0;
        for (int k = 0; k < FETCH__COUNT; k++) {
            all += x->fetches[k];
            if (x->fetches[k])
                put(fk, fetch_kind_name(k), jint(x->fetches[k]));
        }
        put(fk, "total", jint(all));
        put(e, "fetches", fk);
    }
    return e;
}

json_t *results_steering_json(struct steer *steer)
{
    json_t *a = json_array();
    size_t n = 0;
    struct steer_change *log = steer ? steer_log(steer, &n) : NULL;
    for (size_t i = 0; i < n; i++) {
        const struct steer_change *c = &log[i];
        json_t *e = json_object();
        put(e, "t_s", json_real(round(c->t_s * 1000) / 1000));
        put(e, "kind", json_string(steer_kind_name(c->kind)));
        if (c->kind == STEER_RATE || c->kind == STEER_RESUME)
            put(e, "value", json_real(c->rate));
        if (c->kind == STEER_RATE)
            put(e, "ramp_s", json_real(c->ramp_s));
        if (c->kind == STEER_FAULT) {
            put(e, "value", json_string(c->text));
            put(e, "on", json_boolean(c->on));
        }
        json_array_append_new(a, e);
    }
    free(log);
    return a;
}

/* run.json's "series": every second's row, with the target's queue read that second. */
static json_t *series_json(const struct stats *st, const struct results_info *ri)
{
    json_t *series = json_array();
    for (size_t i = 0; i < st->n_series; i++) {
        const struct stats_sec *x = &st->series[i];
        json_t *e = results_series_row(x, i, st->probes != NULL,
                                       st->inbound_count != NULL || ri->series_added,
                                       st->fetch_count != NULL || ri->fetches);
        if (ri->tqueue) {
            json_t *q = tq_sampler_second(ri->tqueue, (int64_t)i);
            put(e, "target_queue", q ? q : json_null());
        }
        json_array_append_new(series, e);
    }
    return series;
}

json_t *results_json(const struct stats *st, const struct results_info *ri)
{
    json_t *root = json_object();
    put(root, "flood_version", json_string(FLOOD_VERSION));
    put(root, "started_at", json_string(ri->started_at ? ri->started_at : ""));
    if (ri->shard)
        put(root, "shard", json_incref(ri->shard));
    put(root, "config", ri->config ? json_incref(ri->config) : json_object());
    put(root, "versions", versions_json());
    put(root, "host", host_json());

    struct stats_counts t;
    stats_totals(st, &t);
    json_t *tot = json_object();
    counts_into(tot, &t);
    struct hist *lat = hist_new(), *svc = hist_new(), *lag = hist_new();
    stats_merge_hists(st, lat, svc, lag);
    put(tot, "latency_ms", hist_json(lat));
    put(tot, "service_ms", hist_json(svc));
    put(tot, "dispatch_lag_ms", hist_json(lag));
    put(root, "totals", tot);
    hist_free(lat);
    hist_free(svc);
    hist_free(lag);

    json_t *ops = json_object();
    for (int i = 0; i < OP__COUNT; i++) {
        const struct stats_op *o = &st->op[i];
        json_t *j = json_object();
        counts_into(j, &o->c);
        put(j, "latency_ms", hist_json(&o->latency));
        put(j, "service_ms", hist_json(&o->service));
        put(j, "dispatch_lag_ms", hist_json(&o->lag));
        put(ops, op_name((enum op_kind)i), j);
    }
    put(root, "operations", ops);
    put(root, "accepted_bad", jint(sum_bad(t.bad_accepted)));

    put(root, "inbound", ri->inbound ? json_incref(ri->inbound) : json_object());
    if (ri->probes) {
        struct probes_totals pt;
        struct hist *fa = hist_new();
        probes_snapshot(ri->probes, &pt, fa);
        json_t *p = json_object();
        put(p, "follows_sent", jint(pt.sent));
        put(p, "accepted", jint(pt.accepted));
        put(p, "rejected", jint(pt.rejected));
        put(p, "refused", jint(pt.refused)); /* their POST not taken: no Accept awaited */
        put(p, "open", jint(pt.open));
        put(p, "duplicates", jint(pt.duplicates));
        put(p, "unknown", jint(pt.unknown));
        put(p, "follow_to_accept_ms", hist_json(fa));
        /* answers that closed after the series' last second (the grace period's) */
        struct probes_second tail;
        hist_reset(fa);
        probes_peek_second(ri->probes, &tail, fa);
        json_t *a = json_object();
        put(a, "accepts", jint(tail.accepted));
        put(a, "rejects", jint(tail.rejected));
        put(a, "f2a_p50_ms", jms(hist_value_at_percentile(fa, 50) / 1000.0));
        put(a, "f2a_p99_ms", jms(hist_value_at_percentile(fa, 99) / 1000.0));
        put(p, "after_series", a);
        put(root, "probes", p);
        hist_free(fa);
    }

    json_t *g = json_object();
    const struct sender_result *gen = ri->gen;
    put(g, "cpu_s", json_real(gen ? gen->cpu_s : 0));
    put(g, "loop_cpu_s", json_real(gen ? gen->loop_cpu_s : 0));
    put(g, "loop_cpu_share", json_real(gen ? gen->loop_cpu_share : 0));
    /* --loops: loop_cpu_s is their sum, loop_cpu_share the busiest's (of one core) */
    put(g, "loops", json_integer(gen && gen->loops > 0 ? gen->loops : 1));
    json_t *each = json_array();
    for (int k = 0; gen && k < gen->loops && k < SENDER_LOOPS_MAX; k++)
        json_array_append_new(each, json_pack("{s:f, s:f, s:I}", "cpu_s", gen->each_cpu_s[k],
                                              "cpu_share", gen->each_cpu_share[k], "sent",
                                              (json_int_t)gen->each_sent[k]));
    put(g, "per_loop", each);
    put(g, "wall_s", json_real(gen ? gen->wall_s : 0));
    put(g, "late_sends", jint(st->late_sends));
    put(g, "late_over_ms", json_real((double)st->late_us / 1000.0));
    put(g, "not_ready", jint(st->not_ready));
    put(g, "lag_p99_ms", jms(gen ? gen->lag_p99_ms : 0));
    /* the host's: steal time of the CPUs flood may run on (steal_cpus 0: not known) */
    put(g, "steal_s", json_real(gen ? gen->steal_s : 0));
    put(g, "steal_cpus", json_integer(gen ? gen->steal_cpus : 0));
    put(g, "steal_share", json_real(gen ? results_steal_share(gen) : 0));
    put(g, "saturated", json_boolean(gen && gen->saturated));
    put(g, "interrupted", json_boolean(gen && gen->interrupted));
    put(root, "generator", g);
    put(root, "warnings", warnings_json(st, ri));
    if (ri->mix)
        put(root, "mix", json_deep_copy(ri->mix));
    if (ri->presign)
        put(root, "presign", json_incref(ri->presign));
    if (ri->crowd)
        put(root, "crowd", results_crowd_json(ri->crowd));
    if (ri->dns)
        put(root, "dns", results_dns_json(ri->dns));
    json_t *egress = results_egress_json(ri);
    if (egress)
        put(root, "egress", egress);
    if (ri->fetches) {
        put(root, "fetches", results_fetches_json(st, ri));
        char why[512];
        int unreachable = results_crowd_unreachable(st, ri, why, sizeof(why));
        put(root, "crowd_unreachable", json_boolean(unreachable));
        if (unreachable)
            put(root, "crowd_unreachable_reason", json_string(why));
    }

    char line[256];
    int ok = stats_conservation(st, line, sizeof(line)) == 0;
    json_t *c = json_object();
    put(c, "ok", json_boolean(ok));
    put(c, "line", json_string(line));
    put(root, "conservation", c);

    put(root, "series", series_json(st, ri));
    if (ri->tqueue)
        put(root, "target_queue", tq_sampler_json(ri->tqueue));
    if (ri->users) {
        struct stats_counts all;
        stats_totals(st, &all);
        put(root, "users",
            users_json(ri->users, ri->duration_s > 0 ? (double)all.sent / ri->duration_s : 0));
    }
    json_t *exact = results_exact_json(st);
    if (ri->fetches)
        put(exact, "fetches", results_fetches_exact(ri->fetches));
    put(root, "exact", exact);
    if (ri->steer) {
        put(root, "steering", results_steering_json(ri->steer));
        char stages[4096];
        double from = steer_stages(ri->steer, stages, sizeof(stages));
        if (stages[0]) {
            json_t *r = json_object();
            put(r, "stages", json_string(stages));
            put(r, "from_s", json_real(from));
            put(root, "steering_replay", r);
        }
    }
    return root;
}

/* Each results file is written whole under a temporary name and renamed into place, so a
 * report or a script reading the folder meanwhile never sees half a file. */
static int write_hgrm(const char *dir, const char *kind, const char *op, const struct hist *h,
                      struct flood_err *err)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s-%s.hgrm", dir, kind, op);
    struct fs_tmp t;
    if (fs_tmp_open(&t, path, 0666, "results", err))
        return -1;
    if (hist_write_hgrm(h, t.f, 1000.0)) {
        flood_err_set(err, FLOOD_EIO, "results: cannot write '%s'", path);
        fs_tmp_abort(&t);
        return -1;
    }
    return fs_tmp_commit(&t, FS_REPLACE, 0, err);
}

static uint64_t ok_of(const uint64_t *out)
{
    return out[OUT_200] + out[OUT_202] + out[OUT_2XX_OTHER];
}

static uint64_t err_of(const uint64_t *out)
{
    uint64_t n = 0;
    for (int k = OUT_TIMEOUT; k < OUT__COUNT; k++)
        n += out[k];
    return n;
}

/* summary.md's first line for a preset run: its name and the figures it watches. */
static void summary_preset(FILE *f, const json_t *preset)
{
    fprintf(f, "preset **%s**:", json_string_value(json_object_get(preset, "name")));
    const json_t *w = json_object_get(preset, "watch");
    for (size_t i = 0; i < json_array_size(w); i++) {
        const json_t *e = json_array_get(w, i), *v = json_object_get(e, "value");
        fprintf(f, "%s %s = ", i ? "," : "", json_string_value(json_object_get(e, "metric")));
        if (json_is_number(v))
            fprintf(f, "%.3f", json_number_value(v));
        else
            fprintf(f, "-");
    }
    fprintf(f, "\n\n");
}

static void users_line(FILE *f, const struct stats *st, const struct results_info *ri, int md);

static int write_summary(const char *dir, const struct stats *st, const struct results_info *ri,
                         const json_t *run, struct flood_err *err)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/summary.md", dir);
    struct fs_tmp tmp;
    if (fs_tmp_open(&tmp, path, 0666, "results", err))
        return -1;
    FILE *f = tmp.f;
    if (json_object_get(run, "preset"))
        summary_preset(f, json_object_get(run, "preset"));
    struct stats_counts t;
    stats_totals(st, &t);
    struct hist *lat = hist_new(), *fa = hist_new();
    stats_merge_hists(st, lat, NULL, NULL);
    if (ri->probes) {
        struct probes_totals pt;
        probes_snapshot(ri->probes, &pt, fa);
    }
    char fa50[32] = "-", fa95[32] = "-";
    if (hist_count(fa)) {
        snprintf(fa50, sizeof(fa50), "%.1f", hist_value_at_percentile(fa, 50) / 1000.0);
        snprintf(fa95, sizeof(fa95), "%.1f", hist_value_at_percentile(fa, 95) / 1000.0);
    }
    fprintf(f, "| rate | duration | sent | ok | 429 | errors | p50 ms | p99 ms | max ms | "
               "follow-to-accept p50 ms | p95 ms | generator saturated |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    fprintf(f,
            "| %s | %.0f s | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64
            " | %.1f | %.1f | %.1f | %s | %s | %s |\n",
            ri->rate_text ? ri->rate_text : "-", ri->duration_s, t.sent, ok_of(t.outcomes),
            t.outcomes[OUT_429], err_of(t.outcomes), hist_value_at_percentile(lat, 50) / 1000.0,
            hist_value_at_percentile(lat, 99) / 1000.0, hist_max(lat) / 1000.0, fa50, fa95,
            ri->gen && ri->gen->saturated ? "yes" : "no");
    hist_free(lat);
    hist_free(fa);
    if (ri->fetches) {
        char why[512];
        fprintf(f, "\n");
        results_fetches_line(f, st, ri, 1);
        if (results_crowd_unreachable(st, ri, why, sizeof(why)))
            fprintf(f, "\n**crowd unreachable:** %s\n", why);
    }
    if (ri->dns) {
        fprintf(f, "\n");
        results_dns_line(f, ri->dns, 1);
    }
    report_retry_summary(f, json_object_get(run, "inbound"));
    json_t *ej = results_egress_json(ri);
    if (ej) {
        fprintf(f, "\n");
        egress_line(f, ej);
        json_decref(ej);
    }
    results_tqueue_line(f, ri->tqueue, 1);
    users_line(f, st, ri, 1);
    return fs_tmp_commit(&tmp, FS_REPLACE, 0, err);
}

/* The target's queue in one line: each source's inbound gauges (last and largest), and
 * its missing readings with the first reason. Nothing without --target-queue. */
/* The sent rate as the active users whose inbound federation it is. */
static void users_line(FILE *f, const struct stats *st, const struct results_info *ri, int md)
{
    if (!ri->users || ri->duration_s <= 0)
        return;
    struct stats_counts t;
    stats_totals(st, &t);
    double rate = (double)t.sent / ri->duration_s;
    char phrase[512];
    users_phrase(ri->users, rate, phrase, sizeof(phrase));
    fprintf(f, "%s %.4g/s%s\n", md ? "\n**in users:**" : "in users:", rate, phrase);
}

void results_tqueue_line(FILE *f, struct tq_sampler *sm, int md)
{
    if (!sm)
        return;
    json_t *a = tq_sampler_json(sm);
    fprintf(f, "%s", md ? "\n**target queue:**" : "target queue:");
    size_t i;
    json_t *src;
    json_array_foreach(a, i, src)
    {
        fprintf(f, "%s %s", i ? ";" : "", json_string_value(json_object_get(src, "source")));
        const char *name;
        json_t *g;
        int shown = 0;
        json_object_foreach(json_object_get(src, "gauges"), name, g)
        {
            const char *role = json_string_value(json_object_get(g, "role"));
            if (!role || (strcmp(role, "inbound") && strcmp(role, "retry") && strcmp(role, "dead")))
                continue;
            fprintf(f, "%s %s last %g max %g", shown++ ? "," : "", name,
                    json_number_value(json_object_get(g, "last")),
                    json_number_value(json_object_get(g, "max")));
        }
        json_int_t missing = json_integer_value(json_object_get(src, "missing"));
        if (missing)
            fprintf(f, " (%lld of %lld readings missing: %s)", (long long)missing,
                    (long long)json_integer_value(json_object_get(src, "readings")),
                    json_string_value(json_object_get(src, "first_failure")));
    }
    fprintf(f, "\n");
    json_decref(a);
}

/* run.json's "preset" first: the preset and the values of the figures it watches, printed
 * on out. Returns the new root (j's keys follow); j is released. */
static json_t *put_preset(json_t *j, const json_t *preset, FILE *out)
{
    json_t *root = json_object(), *p = json_deep_copy(preset), *w = json_array();
    const json_t *names = json_object_get(preset, "watch");
    if (out)
        fprintf(out, "preset %s: %s\n", json_string_value(json_object_get(preset, "name")),
                json_string_value(json_object_get(preset, "what")));
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *m = json_string_value(json_array_get(names, i));
        double v;
        char why[160];
        int ok = m && expect_metric_value(m, j, &v, why, sizeof(why)) == 0;
        json_array_append_new(w, json_pack("{s:s, s:o}", "metric", m ? m : "", "value",
                                           ok ? json_real(v) : json_null()));
        if (out && ok)
            fprintf(out, "  watch %-44s %.3f\n", m, v);
        else if (out)
            fprintf(out, "  watch %-44s -: %s\n", m ? m : "", why);
    }
    json_object_set_new(p, "watch", w);
    json_object_set_new(root, "preset", p);
    json_object_update(root, j);
    json_decref(j);
    return root;
}

/* The files of one run, while the folder's lock is held. */
static int write_all(const char *dir, const struct stats *st, struct results_info *ri,
                     struct flood_err *err)
{
    json_t *j = results_json(st, ri);
    if (ri->preset)
        j = put_preset(j, ri->preset, ri->expect_out);
    if (ri->n_expect) /* judged on the document written, nothing else */
        json_object_set_new(
            j, "expectations",
            expect_judge_all(ri->expect, ri->n_expect, j, ri->expect_out, &ri->expect_failed));
    char path[1200];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    struct fs_tmp t;
    int rc = fs_tmp_open(&t, path, 0666, "results", err);
    if (rc == 0 && json_dumpf(j, t.f, JSON_INDENT(1) | JSON_REAL_PRECISION(10))) {
        flood_err_set(err, FLOOD_EIO, "results: cannot write '%s'", path);
        fs_tmp_abort(&t);
        rc = -1;
    } else if (rc == 0) {
        rc = fs_tmp_commit(&t, FS_REPLACE, 0, err);
    }
    json_t *preset = json_incref(json_object_get(j, "preset"));
    json_decref(j);
    if (rc) {
        json_decref(preset);
        return -1;
    }
    struct hist *lat = hist_new(), *svc = hist_new(), *lag = hist_new();
    stats_merge_hists(st, lat, svc, lag);
    rc = write_hgrm(dir, "latency", "all", lat, err) ||
         write_hgrm(dir, "service", "all", svc, err) || write_hgrm(dir, "lag", "all", lag, err);
    hist_free(lat);
    hist_free(svc);
    hist_free(lag);
    for (int i = 0; i < OP__COUNT && !rc; i++) {
        const struct stats_op *o = &st->op[i];
        const char *n = op_name((enum op_kind)i);
        rc = write_hgrm(dir, "latency", n, &o->latency, err) ||
             write_hgrm(dir, "service", n, &o->service, err) ||
             write_hgrm(dir, "lag", n, &o->lag, err);
    }
    if (!rc && ri->probes) {
        struct hist *fa = hist_new();
        struct probes_totals pt;
        probes_snapshot(ri->probes, &pt, fa);
        rc = write_hgrm(dir, "follow", "to-accept", fa, err);
        hist_free(fa);
        if (!rc && !ri->no_follow_log)
            rc = results_write_follows(dir, ri->probes, ri->wall_minus_mono_ns, err);
    }
    if (!rc && ri->fetches)
        rc = results_write_fetch_urls(dir, ri->fetches, err);
    json_t *sj = json_object();
    if (preset)
        json_object_set_new(sj, "preset", preset);
    if (ri->inbound) /* its retry curve and fan-out */
        json_object_set(sj, "inbound", ri->inbound);
    if (!rc)
        rc = write_summary(dir, st, ri, sj, err);
    json_decref(sj);
    return rc ? -1 : 0;
}

int results_write(const char *dir, const struct stats *st, struct results_info *ri,
                  struct flood_err *err)
{
    /* Two runs given one --out (a repeated shard, a script run twice) may end together:
     * the folder is made by either, and its lock keeps each set of files from one run. */
    int lock = -1;
    if (fs_mkdir_p(dir, 0755, "results: folder", err) || fs_lock(dir, NULL, &lock, "results", err))
        return -1;
    int rc = write_all(dir, st, ri, err);
    close(lock);
    return rc;
}

static void row(FILE *f, const char *name, const struct stats_counts *c, const struct hist *lat)
{
    uint64_t rej = c->completed - ok_of(c->outcomes) - err_of(c->outcomes);
    fprintf(f,
            "%-12s %9" PRIu64 " %9" PRIu64 " %7" PRIu64 " %9" PRIu64 " %7" PRIu64 " %7" PRIu64
            " %7" PRIu64 " %7" PRIu64 " %9.1f %9.1f %9.1f\n",
            name, c->scheduled, c->sent, c->shed, ok_of(c->outcomes), c->outcomes[OUT_429], rej,
            err_of(c->outcomes), c->unfinished, hist_value_at_percentile(lat, 50) / 1000.0,
            hist_value_at_percentile(lat, 99) / 1000.0, hist_max(lat) / 1000.0);
}

void results_print_table(FILE *f, const struct stats *st, const struct results_info *ri)
{
    fprintf(f, "%-12s %9s %9s %7s %9s %7s %7s %7s %7s %9s %9s %9s\n", "op", "scheduled", "sent",
            "shed", "ok", "429", "rej", "errors", "unfin", "p50 ms", "p99 ms", "max ms");
    for (int i = 0; i < OP__COUNT; i++) {
        const struct stats_op *o = &st->op[i];
        if (o->c.scheduled)
            row(f, op_name((enum op_kind)i), &o->c, &o->latency);
    }
    struct stats_counts t;
    stats_totals(st, &t);
    struct hist *lat = hist_new();
    stats_merge_hists(st, lat, NULL, NULL);
    row(f, "total", &t, lat);
    hist_free(lat);
    fprintf(f, "outcomes:");
    for (int k = 0; k < OUT__COUNT; k++)
        if (t.outcomes[k])
            fprintf(f, " %s=%" PRIu64, stats_outcome_name(k), t.outcomes[k]);
    if (t.retry_after[OUT_429] || t.retry_after[OUT_503])
        fprintf(f, " (Retry-After on 429: %" PRIu64 ", on 503: %" PRIu64 ")",
                t.retry_after[OUT_429], t.retry_after[OUT_503]);
    if (t.second_knocks)
        fprintf(f, " second_knocks=%" PRIu64, t.second_knocks);
    fprintf(f, "\n");
    if (ri->gen)
        fprintf(f,
                "generator: cpu %.2f s (%s %.2f s, %.0f%% of a core), dispatch lag p99 "
                "%.3f ms, late sends %" PRIu64 " (over %.3g ms; signers behind: %" PRIu64 "), "
                "saturated: %s, "
                "host steal %.0f ms (%.1f%%)\n",
                ri->gen->cpu_s, ri->gen->loops > 1 ? "event loops" : "event loop",
                ri->gen->loop_cpu_s, ri->gen->loop_cpu_share * 100, ri->gen->lag_p99_ms,
                st->late_sends, (double)st->late_us / 1000.0, st->not_ready,
                ri->gen->saturated ? "yes" : "no", ri->gen->steal_s * 1000,
                results_steal_share(ri->gen) * 100);
    results_fetches_line(f, st, ri, 0);
    json_t *ej = results_egress_json(ri);
    if (ej) {
        egress_line(f, ej);
        json_decref(ej);
    }
    results_mix_lines(f, ri->mix);
    results_tqueue_line(f, ri->tqueue, 0);
    users_line(f, st, ri, 0);
    json_t *w = warnings_json(st, ri);
    size_t i;
    json_t *v;
    json_array_foreach(w, i, v) fprintf(f, "warning: %s\n", json_string_value(v));
    json_decref(w);
}

/* flood/report/merge.c: flood merge (see merge.h and docs/SHARDS.md). */
#include "flood/report/merge.h"
#include "flood/report/merge_parts.h"
#include "flood/report/results_mix.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flood/core/fsutil.h"
#include "flood/crowd/server.h"
#include "flood/measure/fetches.h"
#include "flood/measure/probes.h"
#include "flood/measure/stats.h"
#include "flood/report/report.h"
#include "flood/report/results.h"
#include "flood/report/results_fetches.h"

#define MERGE_JSON_MAX ((size_t)1 << 30)

struct shard_in {
    const char *dir;
    json_t *run;   /* run.json */
    json_t *shard; /* borrowed from run */
    int64_t start; /* started_at, unix seconds */
};

struct follow {
    uint64_t seq;
    int64_t us;
    int answered;
};

struct answer {
    uint64_t seq;
    int64_t us;
    int accepted; /* 1 Accept, 0 Reject, -1 the Follow's POST refused */
};

static int64_t parse_iso(const char *s)
{
    struct tm tm = {0};
    const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
    return p && !*p ? (int64_t)timegm(&tm) : -1;
}

static int load_shard(struct shard_in *in, const char *dir, struct flood_err *err)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    in->dir = dir;
    char *text = fs_read_file(path, MERGE_JSON_MAX, NULL);
    if (!text) {
        flood_err_set(err, FLOOD_EINVAL, "merge: '%s': no run.json (missing, or not a run folder)",
                      dir);
        return -1;
    }
    json_error_t je;
    in->run = json_loads(text, 0, &je);
    free(text);
    if (!in->run) {
        flood_err_set(err, FLOOD_EINVAL, "merge: '%s/run.json': %s", dir, je.text);
        return -1;
    }
    in->shard = json_object_get(in->run, "shard");
    if (!json_is_object(in->shard) || !json_is_string(json_object_get(in->shard, "fingerprint"))) {
        flood_err_set(err, FLOOD_EINVAL, "merge: '%s': run.json has no \"shard\" record", dir);
        return -1;
    }
    in->start = parse_iso(json_string_value(json_object_get(in->run, "started_at")));
    if (in->start < 0) {
        flood_err_set(err, FLOOD_EINVAL, "merge: '%s': bad started_at", dir);
        return -1;
    }
    return 0;
}

static json_int_t sh_int(const struct shard_in *in, const char *k)
{
    return json_integer_value(json_object_get(in->shard, k));
}

/* Every folder from the same run, each shard once, none missing. */
static int check_shards(struct shard_in *in, size_t n, FILE *log, struct flood_err *err)
{
    const char *fp = json_string_value(json_object_get(in[0].shard, "fingerprint"));
    json_int_t count = sh_int(&in[0], "count");
    if (count < 1 || (size_t)count > 4096) {
        flood_err_set(err, FLOOD_EINVAL, "merge: '%s': bad shard count", in[0].dir);
        return -1;
    }
    char *seen = calloc((size_t)count, 1);
    for (size_t i = 0; i < n; i++) {
        const char *f = json_string_value(json_object_get(in[i].shard, "fingerprint"));
        json_int_t k = sh_int(&in[i], "index");
        if (strcmp(f, fp) || sh_int(&in[i], "count") != count ||
            sh_int(&in[i], "run") != sh_int(&in[0], "run") ||
            sh_int(&in[i], "start_at") != sh_int(&in[0], "start_at")) {
            flood_err_set(
                err, FLOOD_EINVAL,
                "merge: '%s' is from another run (fingerprint %s, run %" JSON_INTEGER_FORMAT
                ", %" JSON_INTEGER_FORMAT " shards) than '%s' (%s, run %" JSON_INTEGER_FORMAT
                ", %" JSON_INTEGER_FORMAT " shards)",
                in[i].dir, f, sh_int(&in[i], "run"), sh_int(&in[i], "count"), in[0].dir, fp,
                sh_int(&in[0], "run"), count);
            free(seen);
            return -1;
        }
        if (k < 0 || k >= count || seen[k]) {
            flood_err_set(err, FLOOD_EINVAL, "merge: '%s': shard %" JSON_INTEGER_FORMAT " %s",
                          in[i].dir, k, k < 0 || k >= count ? "out of range" : "given twice");
            free(seen);
            return -1;
        }
        seen[k] = 1;
        json_t *c = json_object_get(in[i].run, "conservation");
        if (!json_is_true(json_object_get(c, "ok"))) {
            flood_err_set(err, FLOOD_EINVAL, "merge: '%s': the shard's own conservation failed",
                          in[i].dir);
            free(seen);
            return -1;
        }
    }
    for (json_int_t k = 0; k < count; k++)
        if (!seen[k]) {
            flood_err_set(err, FLOOD_EINVAL,
                          "merge: shard %" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT
                          " missing: give every shard's folder of run %" JSON_INTEGER_FORMAT,
                          k, count, sh_int(&in[0], "run"));
            free(seen);
            return -1;
        }
    free(seen);
    fprintf(log, "merge: %zu shards of run %" JSON_INTEGER_FORMAT " (fingerprint %s): ok\n", n,
            sh_int(&in[0], "run"), fp);
    return 0;
}

static uint64_t jget_u64(json_t *o, const char *k)
{
    json_int_t v = json_integer_value(json_object_get(o, k));
    return v > 0 ? (uint64_t)v : 0;
}

static double jget_d(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

static struct stats_sec *sec_at(struct stats *st, size_t i)
{
    while (st->n_series <= i) {
        if (st->n_series == st->cap_series) {
            st->cap_series = st->cap_series ? st->cap_series * 2 : 64;
            st->series = flood_xrealloc(st->series, st->cap_series * sizeof(*st->series));
        }
        memset(&st->series[st->n_series], 0, sizeof(*st->series));
        st->series[st->n_series++].closed = 1;
    }
    return &st->series[i];
}

/* Shard in's series into st, second i of the shard at merged second off + i. Counts add
 * up; a merged second's percentiles are the largest of the shards' (an upper bound: the
 * exact figures are the totals'), max_ms is exact. */
static void add_series(struct stats *st, const struct shard_in *in, int64_t off)
{
    json_t *series = json_object_get(in->run, "series");
    size_t i;
    json_t *row;
    json_array_foreach(series, i, row)
    {
        struct stats_sec *x = sec_at(st, (size_t)off + i);
        x->offered += jget_u64(row, "offered");
        x->sent += jget_u64(row, "sent");
        x->shed += jget_u64(row, "shed");
        x->completed += jget_u64(row, "completed");
        x->late += jget_u64(row, "late");
        x->in_flight += jget_u64(row, "in_flight");
        x->steal_ms += jget_d(row, "steal_ms"); /* each shard's host and CPUs, as steal_s */
        x->deliveries += jget_u64(row, "deliveries");
        json_t *oc = json_object_get(row, "outcomes");
        for (int k = 0; k < OUT_FIRST_TRANSPORT; k++)
            x->outcomes[k] += jget_u64(oc, stats_outcome_name(k));
        x->outcomes[OUT_TRANSPORT] += jget_u64(oc, "transport");
        json_t *fk = json_object_get(row, "fetches");
        for (int k = 0; k < FETCH__COUNT; k++)
            x->fetches[k] += jget_u64(fk, fetch_kind_name(k));
        x->p50_ms = dmax(x->p50_ms, jget_d(row, "p50_ms"));
        x->p99_ms = dmax(x->p99_ms, jget_d(row, "p99_ms"));
        x->max_ms = dmax(x->max_ms, jget_d(row, "max_ms"));
        x->service_p50_ms = dmax(x->service_p50_ms, jget_d(row, "service_p50_ms"));
        x->service_p99_ms = dmax(x->service_p99_ms, jget_d(row, "service_p99_ms"));
        x->lag_p99_ms = dmax(x->lag_p99_ms, jget_d(row, "lag_p99_ms"));
    }
}

static int cmp_follow(const void *a, const void *b)
{
    const struct follow *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : x->us < y->us ? -1 : x->us > y->us;
}

static int cmp_answer(const void *a, const void *b)
{
    const struct answer *x = a, *y = b;
    return x->us < y->us ? -1 : x->us > y->us ? 1 : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* follows.tsv of every shard into the two arrays (appended). A shard without the file
 * sent no Follow and received no answer. 0, or -1 and err on a malformed line. */
static int read_follows(const char *dir, struct follow **f, size_t *nf, struct answer **a,
                        size_t *na, struct flood_err *err)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/follows.tsv", dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    char line[256];
    size_t cf = *nf, ca = *na;
    while (fgets(line, sizeof(line), fp)) {
        if (line[0] == '#')
            continue;
        char kind;
        uint64_t seq;
        int64_t us;
        if (sscanf(line, "%c\t%" SCNu64 "\t%" SCNd64, &kind, &seq, &us) != 3 ||
            !strchr("FARX", kind)) {
            flood_err_set(err, FLOOD_EINVAL, "merge: '%s': bad line '%.40s'", path, line);
            fclose(fp);
            return -1;
        }
        if (kind == 'F') {
            if (*nf == cf)
                *f = flood_xrealloc(*f, (cf = cf ? cf * 2 : 256) * sizeof(**f));
            (*f)[(*nf)++] = (struct follow){.seq = seq, .us = us};
        } else {
            if (*na == ca)
                *a = flood_xrealloc(*a, (ca = ca ? ca * 2 : 256) * sizeof(**a));
            (*a)[(*na)++] = (struct answer){.seq = seq,
                                            .us = us,
                                            .accepted = kind == 'A'   ? 1
                                                        : kind == 'X' ? -1
                                                                      : 0};
        }
    }
    fclose(fp);
    return 0;
}

/* Join every shard's Follows with every shard's answers: the Follow-to-Accept time is the
 * answer's arrival minus the Follow's send, both on the wall clock (the shards' clocks are
 * assumed in sync, NTP: a few ms). Into probes (the totals and the histogram) and the
 * series (each answer in its wall-clock second). */
static int join_follows(struct shard_in *in, size_t n, int64_t base, struct stats *st,
                        struct probes *p, FILE *log, struct flood_err *err)
{
    struct follow *f = NULL;
    struct answer *a = NULL;
    size_t nf = 0, na = 0;
    for (size_t i = 0; i < n; i++)
        if (read_follows(in[i].dir, &f, &nf, &a, &na, err)) {
            free(f);
            free(a);
            return -1;
        }
    if (nf) /* qsort's array may not be NULL, even for no element */
        qsort(f, nf, sizeof(*f), cmp_follow);
    if (na)
        qsort(a, na, sizeof(*a), cmp_answer);
    int64_t base_us = base * 1000000;
    for (size_t i = 0; i < nf; i++)
        probes_follow_sent(p, f[i].seq, (uint64_t)(f[i].us - base_us + 1000000000));
    struct hist *sec = hist_new();
    size_t cur = SIZE_MAX, cross = 0;
    for (size_t i = 0; i < na; i++) {
        uint64_t us = (uint64_t)(a[i].us - base_us + 1000000000);
        struct follow key = {.seq = a[i].seq, .us = INT64_MIN};
        size_t lo = 0, hi = nf;
        while (lo < hi) { /* the first send of seq */
            size_t mid = (lo + hi) / 2;
            if (cmp_follow(&f[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        int known = lo < nf && f[lo].seq == a[i].seq;
        if (a[i].accepted < 0) { /* refused: closes the probe, no answer in the series */
            (void)probes_follow_refused(p, a[i].seq, us);
            continue;
        }
        if (probes_answer(p, a[i].seq, a[i].accepted, us) != 1 || !known)
            continue;
        int64_t s = a[i].us / 1000000 - base;
        size_t si = s < 0 ? 0 : (size_t)s;
        if (si != cur && cur != SIZE_MAX) {
            struct stats_sec *x = sec_at(st, cur);
            x->f2a_p50_ms = hist_value_at_percentile(sec, 50) / 1000.0;
            x->f2a_p99_ms = hist_value_at_percentile(sec, 99) / 1000.0;
            hist_reset(sec);
        }
        cur = si;
        struct stats_sec *x = sec_at(st, si);
        if (a[i].accepted) {
            x->accepts++;
            hist_record(sec, (uint64_t)(a[i].us > f[lo].us ? a[i].us - f[lo].us : 0));
        } else
            x->rejects++;
        cross++;
    }
    if (cur != SIZE_MAX) {
        struct stats_sec *x = sec_at(st, cur);
        x->f2a_p50_ms = hist_value_at_percentile(sec, 50) / 1000.0;
        x->f2a_p99_ms = hist_value_at_percentile(sec, 99) / 1000.0;
    }
    /* the answers are all in the series: none "after" it */
    struct probes_second ps;
    probes_take_second(p, &sec, &ps);
    hist_free(sec);
    fprintf(log,
            "merge: %zu Follows, %zu answers and refusals joined across shards (%zu answers "
            "closed a Follow)\n",
            nf, na, cross);
    free(f);
    free(a);
    return 0;
}

/* The shards' fetches into one accounting (*out, NULL when no shard has any): the
 * totals and serving histograms added from "exact".fetches, the URL tables from
 * fetches.tsv (so a URL fetched once from each of two shards is one repeat, as a single
 * process would count it), the top list ranked among the shards' own. All or none. */
static int merge_fetches(struct shard_in *in, size_t n, struct fetches **out, struct flood_err *err)
{
    size_t with = 0;
    for (size_t i = 0; i < n; i++)
        with += json_object_get(json_object_get(in[i].run, "exact"), "fetches") != NULL;
    *out = NULL;
    if (with == 0)
        return 0;
    struct fetches *f = fetches_new();
    struct fetches_top *cand = flood_xcalloc(n * FETCHES_TOP, sizeof(*cand));
    size_t nc = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *x = json_object_get(json_object_get(in[i].run, "exact"), "fetches");
        if (!x) {
            flood_err_set(err, FLOOD_EINVAL,
                          "merge: '%s': no fetch record where the other shards have one "
                          "(a run by another flood?)",
                          in[i].dir);
            rc = -1;
            break;
        }
        char m[sizeof(err->msg)];
        if (results_fetches_add(f, x, err) || results_fetch_urls_add(f, in[i].dir, err)) {
            snprintf(m, sizeof(m), "%s", err->msg);
            flood_err_set(err, FLOOD_EINVAL, "merge: '%s': %s", in[i].dir, m);
            rc = -1;
            break;
        }
        size_t j;
        json_t *t;
        json_array_foreach(json_object_get(json_object_get(in[i].run, "fetches"), "top_repeats"), j,
                           t)
        {
            const char *url = json_string_value(json_object_get(t, "url"));
            const char *kind = json_string_value(json_object_get(t, "kind"));
            if (!url || !kind || nc == n * FETCHES_TOP)
                continue;
            snprintf(cand[nc].url, sizeof(cand[nc].url), "%s", url);
            cand[nc].count = jget_u64(t, "count");
            cand[nc].kind = FETCH_OTHER;
            for (int k = 0; k < FETCH__COUNT; k++)
                if (strcmp(kind, fetch_kind_name(k)) == 0)
                    cand[nc].kind = k;
            nc++;
        }
    }
    if (!rc) {
        fetches_merged(f, cand, nc);
        *out = f;
    } else
        fetches_free(f);
    free(cand);
    return rc;
}

static int write_merged(const char *out, struct shard_in *in, size_t n, struct stats *st,
                        struct probes *p, struct fetches *fetches, FILE *log, struct flood_err *err)
{
    json_t *config = json_deep_copy(json_object_get(in[0].run, "config"));
    json_object_set_new(config, "out", json_string(out));
    json_object_set_new(config, "shard", json_string("merged"));
    json_t *inbound = json_object();
    struct sender_result gen = {0};
    json_t *dirs = json_array();
    struct server_stats crowd = {0};
    struct dns_stats dns = {0};
    int with_crowd = 0, with_dns = 0;
    json_t *mix = json_object(); /* the shards' mixes, one run's */
    for (size_t i = 0; i < n; i++) {
        results_mix_add(mix, json_object_get(in[i].run, "mix"));
        merge_add_numbers(inbound, json_object_get(in[i].run, "inbound"));
        with_crowd |= json_is_object(json_object_get(in[i].run, "crowd"));
        results_crowd_add(&crowd, json_object_get(in[i].run, "crowd"));
        with_dns |= results_dns_add(&dns, json_object_get(in[i].run, "dns"));
        json_t *g = json_object_get(in[i].run, "generator");
        gen.cpu_s += jget_d(g, "cpu_s");
        gen.loop_cpu_s += jget_d(g, "loop_cpu_s");
        gen.wall_s = dmax(gen.wall_s, jget_d(g, "wall_s"));
        gen.lag_p99_ms = dmax(gen.lag_p99_ms, jget_d(g, "lag_p99_ms"));
        gen.loop_cpu_share = dmax(gen.loop_cpu_share, jget_d(g, "loop_cpu_share"));
        /* each shard's host and CPUs: their steal adds up, and so do the CPUs */
        gen.steal_s += jget_d(g, "steal_s");
        gen.steal_cpus += (int)jget_d(g, "steal_cpus");
        gen.saturated |= json_is_true(json_object_get(g, "saturated"));
        gen.interrupted |= json_is_true(json_object_get(g, "interrupted"));
        json_array_append_new(dirs, json_string(in[i].dir));
    }
    /* the records of one crowd (each shard runs a whole one): what adds up summed, the
     * rest per shard and said so (merge_parts.h) */
    json_t **runs = flood_xcalloc(n, sizeof(*runs));
    for (size_t i = 0; i < n; i++)
        runs[i] = in[i].run;
    merge_inbound(inbound, runs, n);
    json_t *egress = merge_egress(runs, n);
    free(runs);
    json_t *shard = json_deep_copy(in[0].shard);
    json_object_del(shard, "index");
    json_object_del(shard, "share");
    json_object_set_new(shard, "merged", dirs);
    char started[32], rate[128];
    int64_t base = in[0].start;
    for (size_t i = 1; i < n; i++)
        base = in[i].start < base ? in[i].start : base;
    results_iso8601((time_t)base, started, sizeof(started));
    json_t *stages = json_object_get(config, "stages");
    if (json_is_string(stages))
        snprintf(rate, sizeof(rate), "%s", json_string_value(stages));
    else
        snprintf(rate, sizeof(rate), "%g/s", jget_d(config, "rate"));
    struct results_info ri = {.started_at = started,
                              .config = config,
                              .inbound = inbound,
                              .gen = &gen,
                              .probes = p,
                              .rate_text = rate,
                              .duration_s = jget_d(config, "scheduled_duration_s"),
                              .shard = shard,
                              .fetches = fetches,
                              .crowd = with_crowd ? &crowd : NULL,
                              .dns = with_dns ? &dns : NULL,
                              .egress_merged = egress,
                              .series_added = 1,
                              .no_follow_log = 1,
                              .mix = json_object_size(mix) ? mix : NULL};
    int rc = results_write(out, st, &ri, err);
    if (rc == 0)
        rc = report_write(out, err);
    if (rc == 0)
        results_print_table(log, st, &ri);
    json_decref(config);
    json_decref(inbound);
    json_decref(egress);
    json_decref(shard);
    json_decref(mix);
    return rc;
}

int merge_run(const char *out, char *const *dirs, size_t n, FILE *log, struct flood_err *err)
{
    if (n == 0) {
        flood_err_set(err, FLOOD_EINVAL, "merge: no shard folder given");
        return -1;
    }
    struct shard_in *in = flood_xcalloc(n, sizeof(*in));
    struct stats *st = stats_new();
    struct probes *p = probes_new();
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = load_shard(&in[i], dirs[i], err);
    if (!rc)
        rc = check_shards(in, n, log, err);
    int64_t base = in[0].start;
    for (size_t i = 1; i < n && !rc; i++)
        base = in[i].start < base ? in[i].start : base;
    for (size_t i = 0; i < n && !rc; i++) {
        if (results_exact_add(st, json_object_get(in[i].run, "exact"), err)) {
            char m[sizeof(err->msg)];
            snprintf(m, sizeof(m), "%s", err->msg);
            flood_err_set(err, FLOOD_EINVAL, "merge: '%s': %s", in[i].dir, m);
            rc = -1;
        } else
            add_series(st, &in[i], in[i].start - base);
    }
    if (!rc) {
        stats_set_probes(st, p); /* the series carry the Follow-to-Accept keys */
        rc = join_follows(in, n, base, st, p, log, err);
    }
    if (!rc) {
        struct stats_counts t;
        stats_totals(st, &t);
        uint64_t want = jget_u64(in[0].shard, "activities");
        const char *arrival = json_string_value(json_object_get(in[0].shard, "arrival"));
        char line[256];
        int own = stats_conservation(st, line, sizeof(line)) == 0;
        int exact = !arrival || strcmp(arrival, "poisson") != 0;
        fprintf(log, "merge: %s\n", line);
        fprintf(log,
                "merge: across shards: scheduled %" PRIu64 " %s the run's %" PRIu64
                " activities%s\n",
                t.scheduled, exact ? "=" : "~", want,
                exact ? (t.scheduled == want ? ": ok" : ": VIOLATED") : " (Poisson: expected)");
        if (!own || (exact && t.scheduled != want)) {
            flood_err_set(err, FLOOD_EINVAL,
                          "merge: conservation across shards violated (scheduled %" PRIu64
                          ", the run has %" PRIu64 ")",
                          t.scheduled, want);
            rc = -1;
        }
    }
    struct fetches *fetches = NULL;
    if (!rc)
        rc = merge_fetches(in, n, &fetches, err);
    if (!rc)
        rc = write_merged(out, in, n, st, p, fetches, log, err);
    fetches_free(fetches);
    for (size_t i = 0; i < n; i++)
        json_decref(in[i].run);
    free(in);
    stats_set_probes(st, NULL);
    stats_free(st);
    probes_free(p);
    return rc;
}

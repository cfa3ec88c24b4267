/* flood/cmd/cmd_compare.c: `flood compare RUN_DIR...`, several runs side by side as a Markdown
 * table, and with --html an overlay page of their curves. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/cmd/cmd.h"
#include "flood/core/opt.h"
#include "flood/report/expect.h"
#include "flood/report/report.h"

/* Judge the gates of every run after the first against the first; print their table.
 * The number of failures. */
static int gates(const struct expect *g, size_t n_g, json_t **runs, char **dirs, int n)
{
    int failed = 0;
    printf("\ngates (against %s):\n", dirs[0]);
    for (int i = 1; i < n; i++)
        for (size_t k = 0; k < n_g; k++) {
            double got, ref;
            char why[160], gs[64], rs[64];
            int pass = expect_judge_gate(&g[k], runs[0], runs[i], &got, &ref, why, sizeof(why));
            failed += !pass;
            printf("  %-4s %-28s %s: %s, was %s%s%s\n", pass ? "pass" : "FAIL", g[k].text, dirs[i],
                   expect_format(&g[k], got, gs, sizeof(gs)),
                   expect_format(&g[k], ref, rs, sizeof(rs)), why[0] ? ": " : "", why);
        }
    return failed;
}

struct compare_args {
    const char *html;
    struct expect *g; /* the --expect gates (owned) */
    size_t n_g;
};

static int set_gate(void *base, const struct opt *row, const char *arg, struct flood_err *err)
{
    (void)row;
    struct compare_args *a = base;
    a->g = flood_xrealloc(a->g, (a->n_g + 1) * sizeof(*a->g));
    if (expect_parse(arg, 1, &a->g[a->n_g], err))
        return -1;
    a->n_g++;
    return 0;
}

const struct opt compare_opt_rows[] = {
    {"html", OPT_STRING, "FILE", OPT_AT(struct compare_args, html),
     .help = "also write FILE: one self-contained page overlaying the runs' percentile curves, "
             "achieved rate and p99 per second"},
    {"expect", OPT_CUSTOM, "'M within X'", .set = set_gate,
     .help = "a regression gate (repeatable): every run after the first is judged against the "
             "first, failing when metric M is worse by more than X (a share, 10%, or an amount "
             "in M's unit: 20ms, 5). Worse is higher for latencies, errors, shed and fetches, "
             "lower for 2xx, sent, completed and accepts. M as in flood run --expect"},
    {0},
};

static const char compare_usage[] =
    "usage: flood compare [--html FILE] [--expect 'METRIC within X']... RUN_DIR...\n"
    "Print a Markdown table of the runs side by side, one row a run: the LOAD.md\n"
    "row (rate, duration, sent, ok, 429, errors) and the key percentiles of the\n"
    "corrected latency, the service time and Follow-to-Accept, read from each\n"
    "RUN_DIR/run.json. The figures are run.json's, unrounded.\n";

static const char compare_tail[] =
    "Exit codes: 0 the table was printed (and every gate passed), 1 a run folder\n"
    "could not be read (or FILE written), 2 usage, 3 a gate failed.\n";

static double num(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The shortest text that reads back as v (as JSON tools print it); "-" when not a number. */
static void put_num(double v)
{
    if (!isfinite(v)) {
        fputs(" - |", stdout);
        return;
    }
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        printf(" %.0f |", v);
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    printf(" %s |", buf);
}

static double sum_keys(const json_t *o, const char *const *keys)
{
    double s = 0;
    for (; *keys; keys++) {
        double v = num(o, *keys);
        if (isfinite(v))
            s += v;
    }
    return s;
}

static void row(const char *dir, const json_t *run)
{
    static const char *const ok_keys[] = {"200", "202", "2xx_other", NULL};
    static const char *const err_keys[] = {"timeout", "transport", NULL};
    const json_t *cfg = json_object_get(run, "config"), *t = json_object_get(run, "totals");
    const json_t *out = json_object_get(t, "outcomes");
    const json_t *lat = json_object_get(t, "latency_ms"), *svc = json_object_get(t, "service_ms");
    const json_t *fa = json_object_get(json_object_get(run, "probes"), "follow_to_accept_ms");
    if (!fa)
        fa = json_object_get(json_object_get(run, "inbound"), "follow_to_accept_ms");
    if (!(num(fa, "count") > 0))
        fa = NULL;

    /* a '|' in a folder name would split the cell */
    fputs("| ", stdout);
    for (const char *p = dir; *p; p++) {
        if (*p == '|')
            putchar('\\');
        putchar(*p);
    }
    fputs(" |", stdout);
    const char *stages = json_string_value(json_object_get(cfg, "stages"));
    if (stages)
        printf(" %s |", stages);
    else if (isfinite(num(cfg, "rate")))
        printf(" %g/s |", num(cfg, "rate"));
    else
        fputs(" - |", stdout);
    double dur = num(cfg, "scheduled_duration_s");
    if (!isfinite(dur))
        dur = num(cfg, "duration_s");
    put_num(dur);
    put_num(num(t, "scheduled"));
    put_num(num(t, "sent"));
    put_num(num(t, "shed"));
    put_num(sum_keys(out, ok_keys));
    put_num(num(out, "429"));
    put_num(sum_keys(out, err_keys));
    put_num(num(t, "unfinished"));
    put_num(num(lat, "p50"));
    put_num(num(lat, "p90"));
    put_num(num(lat, "p99"));
    put_num(num(lat, "p99.9"));
    put_num(num(lat, "max"));
    put_num(num(svc, "p50"));
    put_num(num(svc, "p99"));
    put_num(fa ? num(fa, "p50") : NAN);
    put_num(fa ? num(fa, "p99") : NAN);
    json_t *sat = json_object_get(json_object_get(run, "generator"), "saturated");
    printf(" %s |\n", json_is_true(sat) ? "yes" : json_is_false(sat) ? "no" : "-");
}

int cmd_compare(int argc, char **argv)
{
    struct compare_args a = {0};
    struct opt_spec spec = {.cmd = "compare",
                            .mask = OPT_CMD_COMPARE,
                            .sets = {{compare_opt_rows, &a}},
                            .n_sets = 1,
                            .usage = compare_usage,
                            .tail = compare_tail,
                            .operands = -1};
    int prc = opt_parse(&spec, argc, argv);
    if (prc) {
        free(a.g);
        return prc == 1 ? 0 : 2;
    }
    const char *html = a.html;
    struct expect *g = a.g;
    size_t n_g = a.n_g;
    if (optind >= argc || (n_g && argc - optind < 2)) {
        fprintf(stderr, "flood: compare: %s\n",
                n_g ? "--expect gates need two run folders at least (the first is the base)"
                    : "at least one run folder is needed");
        opt_help(&spec, stderr);
        free(g);
        return 2;
    }
    int n = argc - optind;
    json_t **runs = flood_xcalloc((size_t)n, sizeof(*runs));
    int rc = 0;
    for (int i = 0; i < n; i++) {
        struct flood_err err = {0};
        runs[i] = report_load_run(argv[optind + i], &err);
        if (!runs[i]) {
            fprintf(stderr, "flood: compare: %s\n", err.msg);
            rc = 1;
        }
    }
    if (rc == 0) {
        printf("| run | rate | duration s | scheduled | sent | shed | ok | 429 | errors | "
               "unfinished | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | service p50 ms | "
               "service p99 ms | follow-to-accept p50 ms | follow-to-accept p99 ms | "
               "generator saturated |\n");
        printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
               "\n");
        for (int i = 0; i < n; i++)
            row(argv[optind + i], runs[i]);
        fflush(stdout);
        struct flood_err err = {0};
        if (html && report_compare_write(html, argv + optind, (size_t)n, &err)) {
            fprintf(stderr, "flood: compare: %s\n", err.msg);
            rc = 1;
        }
        if (rc == 0 && n_g && gates(g, n_g, runs, argv + optind, n))
            rc = 3;
    }
    free(g);
    for (int i = 0; i < n; i++)
        json_decref(runs[i]);
    free(runs);
    return rc;
}

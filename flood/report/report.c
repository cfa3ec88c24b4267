/* flood/report/report.c: report.html from a run folder, and the `flood compare --html` overlay. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/fsutil.h"
#include "flood/core/html.h"
#include "flood/core/jpath.h"
#include "flood/report/report.h"
#include "flood/report/report_retry.h"
#include "flood/report/report_fetches.h"
#include "flood/report/report_mix.h"
#include "flood/report/report_tqueue.h"
#include "flood/report/report_preset.h"
#include "flood/report/report_plot.h"
#include "flood/report/report_run.h"

#define REPORT_TARGETS_SHOWN 8 /* personas listed before the "more" toggle */

#define esc html_escape

/* ---- writing ------------------------------------------------------------------------- */

static const char css[] =
    "<style>\n"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;"
    "max-width:1100px;padding:16px 24px;color:#1b1b1b;background:#fff}\n"
    "h1{font-size:22px;margin:8px 0 2px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid #ddd;padding-bottom:3px}\n"
    ".sub{color:#555;margin:0 0 12px}\n"
    "ul.targets{margin:0 0 12px;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:4px "
    "16px}\n"
    "table.config{display:table;width:100%}table.config td:first-child{white-space:nowrap}\n"
    "table.config td+td{overflow-wrap:anywhere}\n"
    "table{border-collapse:collapse;margin:6px 0 10px;font-variant-numeric:tabular-nums;\n"
    "display:block;max-width:100%;overflow-x:auto}\n"
    "th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f4f4f4}\n"
    "td.k,th.k{text-align:left}\n"
    ".ok{color:#11703a;font-weight:600}.bad{color:#b00020;font-weight:600}\n"
    ".warn{background:#fff4e5;border-left:4px solid #e69f00;padding:6px 10px;margin:6px 0}\n"
    ".unreachable{background:#fde8eb;border:2px solid #b00020;color:#7a0016;padding:8px 12px;"
    "margin:8px 0}\n"
    "figure.chart{margin:10px 0 18px}figcaption{font-weight:600;margin-bottom:2px}\n"
    "svg.plot{width:100%;height:auto;display:block}\n"
    "svg .grid{stroke:#e6e6e6;stroke-width:1}svg .axis{stroke:#555}\n"
    "svg .frame{fill:none;stroke:#999}svg text{font:11px system-ui,sans-serif;fill:#333}\n"
    "svg .label{font-size:12px;fill:#111}svg .legend.empty{fill:#999}\n"
    ".note{color:#555;font-size:13px;margin:0 0 6px}\n"
    ".bar{display:inline-block;height:10px;background:#0072B2;vertical-align:middle}\n"
    "code{background:#f4f4f4;padding:0 3px}\n"
    "</style>\n";

void report_page_head(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          /* no favicon request, no network at all */
          "<link rel=\"icon\" href=\"data:,\">\n<title>",
          f);
    esc(f, title);
    fputs("</title>\n", f);
    fputs(css, f);
    fputs("</head><body>\n", f);
}

/* A number as a table cell: integers without decimals, others with up to 3. */
static void num_cell(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("<td>-</td>", f);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, "<td>%.0f</td>", v);
    else
        fprintf(f, "<td>%.3f</td>", v);
}

/* summary.md (the LOAD.md row) as an HTML table; 0 when the file is missing. */
static int summary_table(FILE *f, const char *dir)
{
    char *path = flood_xasprintf("%s/summary.md", dir);
    FILE *in = fopen(path, "r");
    free(path);
    if (!in)
        return 0;
    char line[2048];
    int row = 0;
    fputs("<table class=\"summary\">\n", f);
    while (fgets(line, sizeof(line), in)) {
        if (line[0] != '|' || strstr(line, "|---"))
            continue;
        line[strcspn(line, "\n")] = 0;
        fputs("<tr>", f);
        char *save = NULL;
        for (char *cell = strtok_r(line, "|", &save); cell; cell = strtok_r(NULL, "|", &save)) {
            while (*cell == ' ')
                cell++;
            size_t len = strlen(cell);
            while (len && cell[len - 1] == ' ')
                cell[--len] = 0;
            fputs(row ? "<td>" : "<th>", f);
            esc(f, cell);
            fputs(row ? "</td>" : "</th>", f);
        }
        fputs("</tr>\n", f);
        row++;
    }
    fclose(in);
    fputs("</table>\n", f);
    return 1;
}

static const char *const pct_keys[] = {"p50", "p90", "p99", "p99.9", "max"};
#define N_PCT (sizeof(pct_keys) / sizeof(pct_keys[0]))

static void pct_head(FILE *f, const char *first)
{
    fprintf(f, "<tr><th class=\"k\">%s</th><th>count</th>", first);
    for (size_t i = 0; i < N_PCT; i++)
        fprintf(f, "<th>%s ms</th>", pct_keys[i]);
    fputs("</tr>\n", f);
}

static void pct_row(FILE *f, const char *name, const json_t *pct)
{
    fputs("<tr><td class=\"k\">", f);
    esc(f, name);
    fputs("</td>", f);
    num_cell(f, report_jnum(pct, "count"));
    for (size_t i = 0; i < N_PCT; i++)
        num_cell(f, report_jnum(pct, pct_keys[i]));
    fputs("</tr>\n", f);
}

/* Every percentile object ({"p50": ...}) under o, named by its path, as table rows. */
static void pct_rows_walk(FILE *f, const json_t *o, const char *prefix)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        if (!json_is_object(v))
            continue;
        char *name = prefix[0] ? flood_xasprintf("%s.%s", prefix, k) : flood_xstrdup(k);
        if (json_object_get(v, "p50"))
            pct_row(f, name, v);
        else
            pct_rows_walk(f, v, name);
        free(name);
    }
}

/* Non-zero counts of an object of counts, as "name count bar" rows; 0 when all are zero. */
static int count_rows(FILE *f, const json_t *o)
{
    double max = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) if (json_is_number(v) && json_number_value(v) > max)
        max = json_number_value(v);
    if (max <= 0)
        return 0;
    json_object_foreach((json_t *)o, k, v)
    {
        if (!json_is_number(v) || json_number_value(v) <= 0)
            continue;
        fputs("<tr><td class=\"k\">", f);
        esc(f, k);
        fputs("</td>", f);
        num_cell(f, json_number_value(v));
        fprintf(f, "<td class=\"k\"><span class=\"bar\" style=\"width:%.0fpx\"></span></td></tr>\n",
                1 + 300 * json_number_value(v) / max);
    }
    return 1;
}

/* An array as "a, b, c" (strings bare, the rest as JSON), so a long list wraps. */
static char *array_text(const json_t *a)
{
    size_t cap = 64, len = 0;
    char *out = flood_xmalloc(cap);
    out[0] = '\0';
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);
        char *item = json_is_string(v) ? flood_xstrdup(json_string_value(v))
                                       : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        size_t n = item ? strlen(item) : 1;
        while (len + n + 3 > cap)
            out = flood_xrealloc(out, cap *= 2);
        len += (size_t)sprintf(out + len, "%s%s", i ? ", " : "", item ? item : "?");
        free(item);
    }
    return out;
}

/* config as "key value" rows, nested objects flattened to dotted keys. */
static void config_rows(FILE *f, const json_t *o, const char *prefix)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        char *name = prefix[0] ? flood_xasprintf("%s.%s", prefix, k) : flood_xstrdup(k);
        if (json_is_object(v) && json_object_size(v)) {
            config_rows(f, v, name);
        } else {
            char *text = json_is_string(v)  ? flood_xstrdup(json_string_value(v))
                         : json_is_array(v) ? array_text(v)
                                            : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            fputs("<tr><td class=\"k\"><code>", f);
            esc(f, name);
            fputs("</code></td><td class=\"k\">", f);
            esc(f, text ? text : "?");
            fputs("</td></tr>\n", f);
            free(text);
        }
        free(name);
    }
}

static void ops_table(FILE *f, const json_t *ops)
{
    fputs("<table><tr><th class=\"k\">op</th><th>scheduled</th><th>sent</th><th>shed</th>"
          "<th>completed</th><th>2xx</th><th>401/403</th><th>429</th><th>503</th>"
          "<th>unfinished</th><th>p50 ms</th><th>p99 ms</th><th>max ms</th>"
          "<th>service p50 ms</th><th>service p99 ms</th><th>lag p99 ms</th></tr>\n",
          f);
    const char *k;
    json_t *o;
    json_object_foreach((json_t *)ops, k, o)
    {
        if (!(report_jnum(o, "scheduled") > 0))
            continue;
        json_t *out = json_object_get(o, "outcomes");
        fputs("<tr><td class=\"k\">", f);
        esc(f, k);
        fputs("</td>", f);
        num_cell(f, report_jnum(o, "scheduled"));
        num_cell(f, report_jnum(o, "sent"));
        num_cell(f, report_jnum(o, "shed"));
        num_cell(f, report_jnum(o, "completed"));
        num_cell(f,
                 report_jnum(out, "200") + report_jnum(out, "202") + report_jnum(out, "2xx_other"));
        num_cell(f, report_jnum(out, "401") + report_jnum(out, "403"));
        num_cell(f, report_jnum(out, "429"));
        num_cell(f, report_jnum(out, "503"));
        num_cell(f, report_jnum(o, "unfinished"));
        json_t *lat = json_object_get(o, "latency_ms"), *svc = json_object_get(o, "service_ms");
        num_cell(f, report_jnum(lat, "p50"));
        num_cell(f, report_jnum(lat, "p99"));
        num_cell(f, report_jnum(lat, "max"));
        num_cell(f, report_jnum(svc, "p50"));
        num_cell(f, report_jnum(svc, "p99"));
        num_cell(f, report_jnum(json_object_get(o, "dispatch_lag_ms"), "p99"));
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static int any_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            return 1;
    return 0;
}

/* A series over the run's seconds, or an empty one when run.json has no such column. */
static struct plot_series per_sec(const struct report_cols *c, const char *name, size_t color,
                                  const double *y)
{
    struct plot_series s = {.name = name, .color = plot_color(color), .x = c->tmid, .y = y};
    s.n = any_finite(y, c->n) ? c->n : 0;
    return s;
}

static struct plot_series of_curve(const struct report_curve *cv, const char *name, size_t color)
{
    return (struct plot_series){
        .name = name, .color = plot_color(color), .x = cv->p, .y = cv->v, .n = cv->n};
}

/* run.json's "steering" as chart marks (at most MARKS_MAX; labels in lab). */
#define MARKS_MAX 64
static size_t steering_marks(const json_t *root, struct plot_mark *m, char (*lab)[96])
{
    const json_t *a = json_object_get(root, "steering");
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(a) && n < MARKS_MAX; i++) {
        const json_t *e = json_array_get(a, i);
        const char *kind = report_jstr(e, "kind");
        double v = report_jnum(e, "value");
        const char *text = report_jstr(e, "value");
        if (!kind)
            continue;
        if (text)
            snprintf(lab[n], 96, "%s %s%s", kind,
                     json_is_true(json_object_get(e, "on")) ? "+" : "-", text);
        else if (isfinite(v))
            snprintf(lab[n], 96, "%s %g/s", kind, v);
        else
            snprintf(lab[n], 96, "%s", kind);
        m[n] = (struct plot_mark){.x = report_jnum(e, "t_s"), .kind = kind, .label = lab[n]};
        n++;
    }
    return n;
}

static void charts(FILE *f, const struct report_run *r)
{
    const struct report_cols *c = &r->c;
    struct plot_mark marks[MARKS_MAX];
    char labels[MARKS_MAX][96];
    size_t nm = steering_marks(r->root, marks, labels);
    struct plot_series rate[] = {
        per_sec(c, "offered", 8, c->offered),
        per_sec(c, "sent", 0, c->sent),
        per_sec(c, "completed (achieved)", 2, c->completed),
        per_sec(c, "2xx", 1, c->ok),
    };
    rate[1].dashed = 1;
    plot_svg(f, &(struct plot){.id = "plot-rate",
                               .title = "Offered vs achieved rate",
                               .xlabel = "seconds since start",
                               .ylabel = "requests per second",
                               .kind = PLOT_LINES,
                               .series = rate,
                               .ns = 4,
                               .marks = marks,
                               .n_marks = nm});
    fputs("<p class=\"note\">Offered is what the schedule asked for in that second; sent left "
          "flood; completed got an answer (any class). A gap between offered and sent is "
          "shedding or a late generator; between sent and completed, a target falling "
          "behind.</p>\n",
          f);

    struct plot_series stack[] = {
        per_sec(c, "2xx", 2, c->ok),
        per_sec(c, "401/403", 4, c->auth),
        per_sec(c, "429", 1, c->r429),
        per_sec(c, "503", 3, c->r503),
        per_sec(c, "other errors", 7, c->other),
        per_sec(c, "shed", 8, c->shed),
    };
    for (size_t i = 0; i < 6; i++)
        stack[i].x = c->t; /* stacked areas span [t, t + 1] */
    plot_svg(f, &(struct plot){.id = "plot-outcomes",
                               .title = "Outcomes per second (stacked)",
                               .xlabel = "seconds since start",
                               .ylabel = "answers per second",
                               .kind = PLOT_STACKED,
                               .series = stack,
                               .ns = 6,
                               .marks = marks,
                               .n_marks = nm});
    fputs("<p class=\"note\">Answers by the second they arrived in; \"other errors\" is 408, "
          "other 4xx and 5xx, timeouts and transport errors; shed were never sent "
          "(--max-inflight reached).</p>\n",
          f);

    struct plot_series lat[] = {
        per_sec(c, "p50", 0, c->p50),
        per_sec(c, "p99", 3, c->p99),
        per_sec(c, "max", 7, c->max),
        per_sec(c, "service p50", 0, c->svc_p50),
        per_sec(c, "service p99", 3, c->svc_p99),
        per_sec(c, "dispatch lag p99", 8, c->lag_p99),
        per_sec(c, "host steal", 9, c->steal),
    };
    lat[3].dashed = lat[4].dashed = lat[5].dashed = lat[6].dashed = 1;
    /* list only what this run.json's series has: an older or newer flood may differ */
    struct plot_series shown[7];
    size_t ns = 0;
    const char *keys[] = {"p50_ms",         "p99_ms",     "max_ms",  "service_p50_ms",
                          "service_p99_ms", "lag_p99_ms", "steal_ms"};
    const json_t *series = json_object_get(r->root, "series");
    for (size_t i = 0; i < 7; i++)
        if (i < 2 || report_has_key(series, keys[i]))
            shown[ns++] = lat[i];
    plot_svg(f, &(struct plot){.id = "plot-latency",
                               .title = "Latency over time (corrected for coordinated omission)",
                               .xlabel = "seconds since start",
                               .ylabel = "milliseconds",
                               .kind = PLOT_LINES,
                               .series = shown,
                               .ns = ns,
                               .marks = marks,
                               .n_marks = nm});
    fputs("<p class=\"note\">Percentiles of the requests completed in each second, measured from "
          "their intended send time (so a stalled target or generator shows up); dashed lines "
          "are service time (from the actual send), the generator's dispatch lag, and the time "
          "the machine's host took from flood's CPUs that second (steal).</p>\n",
          f);

    struct plot_series dist[] = {
        of_curve(&r->latency, "corrected latency", 0),
        of_curve(&r->service, "service time", 2),
        of_curve(&r->lag, "dispatch lag", 8),
        of_curve(&r->f2a, "Follow-to-Accept", 4),
    };
    dist[1].dashed = dist[2].dashed = 1;
    plot_svg(f, &(struct plot){.id = "plot-distribution",
                               .title = "Latency percentile distribution (whole run)",
                               .xlabel = "percentile",
                               .ylabel = "milliseconds",
                               .kind = PLOT_PERCENTILE,
                               .series = dist,
                               .ns = 4});
    fputs("<p class=\"note\">HdrHistogram's plot: the x axis stretches the tail (each step is "
          "ten times rarer), so read p99 and p99.9 off it directly.</p>\n",
          f);

    struct plot_series inflight[] = {per_sec(c, "in flight", 5, c->in_flight)};
    inflight[0].x = c->tend; /* counted at each second's end */
    plot_svg(f, &(struct plot){.id = "plot-inflight",
                               .title = "Requests in flight (at each second's end)",
                               .xlabel = "seconds since start",
                               .ylabel = "requests",
                               .kind = PLOT_LINES,
                               .series = inflight,
                               .ns = 1,
                               .marks = marks,
                               .n_marks = nm});
}

/* The series' key per second; where the second had no Accepts (accepts 0), NAN for a
 * Follow-to-Accept key, so a line breaks there instead of dropping to 0. A new array. */
static double *follow_col(const json_t *series, const char *key, int f2a)
{
    size_t n = json_array_size(series), i;
    double *y = flood_xcalloc(n ? n : 1, sizeof(double));
    json_t *e;
    json_array_foreach(series, i, e)
    {
        double acc = report_jnum(e, "accepts");
        y[i] = f2a && !(acc > 0) ? NAN : report_jnum(e, key);
    }
    return y;
}

/* Follows answered per second, and their Follow-to-Accept per second (series keys accepts,
 * rejects, f2a_p50_ms, f2a_p99_ms), when run.json's series has them. */
static void follow_charts(FILE *f, const struct report_run *r)
{
    const json_t *series = json_object_get(r->root, "series");
    if (!report_has_key(series, "accepts"))
        return;
    const struct report_cols *c = &r->c;
    double *acc = follow_col(series, "accepts", 0), *rej = follow_col(series, "rejects", 0);
    double *p50 = follow_col(series, "f2a_p50_ms", 1), *p99 = follow_col(series, "f2a_p99_ms", 1);
    struct plot_series answers[] = {
        per_sec(c, "Accepts", 2, acc),
        per_sec(c, "Rejects", 3, rej),
    };
    plot_svg(f, &(struct plot){.id = "plot-accepts",
                               .title = "Follows answered per second",
                               .xlabel = "seconds since start",
                               .ylabel = "answers per second",
                               .kind = PLOT_LINES,
                               .series = answers,
                               .ns = 2});
    struct plot_series f2a[] = {
        per_sec(c, "Follow-to-Accept p50", 0, p50),
        per_sec(c, "Follow-to-Accept p99", 3, p99),
    };
    plot_svg(f, &(struct plot){.id = "plot-f2a",
                               .title = "Follow-to-Accept over time",
                               .xlabel = "seconds since start",
                               .ylabel = "milliseconds",
                               .kind = PLOT_LINES,
                               .series = f2a,
                               .ns = 2});
    fputs("<p class=\"note\">Accepts and Rejects of this run's Follows by the second they "
          "arrived in, and the Follow-to-Accept percentiles of that second's Accepts (no point "
          "where none arrived). Answers after the last second (the grace period) are in "
          "run.json's probes.after_series.</p>\n",
          f);
    free(acc);
    free(rej);
    free(p50);
    free(p99);
}

static void inbound_section(FILE *f, const struct report_run *r)
{
    const json_t *root = r->root;
    json_t *in = json_object_get(root, "inbound"), *pr = json_object_get(root, "probes");
    fputs("<h2 id=\"inbound\">Inbound: what the target sent back</h2>\n", f);
    if (!json_is_object(in)) {
        fputs("<p>No inbound figures in this run.json.</p>\n", f);
        return;
    }
    fputs("<table><tr><th class=\"k\">deliveries by type</th><th>count</th><th></th></tr>\n", f);
    if (!count_rows(f, json_object_get(in, "deliveries")))
        fputs("<tr><td class=\"k\" colspan=\"3\">none</td></tr>\n", f);
    fputs("</table>\n", f);
    fputs("<table><tr><th class=\"k\">rejected deliveries</th><th>count</th><th></th></tr>\n", f);
    if (!count_rows(f, json_object_get(in, "rejected")))
        fputs("<tr><td class=\"k\" colspan=\"3\">none</td></tr>\n", f);
    fputs("</table>\n", f);
    fprintf(f,
            "<p>Follows sent: %.0f; answered by an Accept: %.0f; refused (their POST answered "
            "outside 2xx, or never delivered): %.0f; still open at the end: %.0f.</p>\n",
            report_jnum(pr, "follows_sent"), report_jnum(pr, "accepted"),
            report_jnum(pr, "refused"), report_jnum(pr, "open"));
    fputs("<h3>Follow-to-Accept and the other probes</h3>\n"
          "<p class=\"note\">A Follow sent to its Accept received is the target's end-to-end "
          "processing latency (queue wait, processing, its own delivery).</p>\n<table>\n",
          f);
    pct_head(f, "probe");
    if (json_is_object(pr))
        pct_rows_walk(f, pr, "probes");
    pct_rows_walk(f, in, "inbound");
    fputs("</table>\n", f);
    follow_charts(f, r);
    fputs("<table><tr><th class=\"k\">Accepts sent by the crowd</th><th>count</th><th></th>"
          "</tr>\n",
          f);
    if (!count_rows(f, json_object_get(in, "accepts_sent")))
        fputs("<tr><td class=\"k\" colspan=\"3\">none</td></tr>\n", f);
    fputs("</table>\n", f);
}

static void faults_section(FILE *f, const json_t *root)
{
    json_t *faults = jpath_get(root, "inbound.faults");
    fputs("<h2 id=\"faults\">Faults in force</h2>\n", f);
    if (!json_array_size(faults)) {
        fputs("<p>None: every fake instance answered normally.</p>\n", f);
        return;
    }
    fputs("<ul>\n", f);
    size_t i;
    json_t *v;
    json_array_foreach(faults, i, v)
    {
        fputs("<li><code>--fault ", f);
        esc(f, json_is_string(v) ? json_string_value(v) : "?");
        fputs("</code></li>\n", f);
    }
    fputs("</ul>\n<table><tr><th class=\"k\">faulted answers</th><th>count</th><th></th></tr>\n",
          f);
    if (!count_rows(f, jpath_get(root, "inbound.faulted")))
        fputs("<tr><td class=\"k\" colspan=\"3\">none yet</td></tr>\n", f);
    fputs("</table>\n", f);
}

/* The personas as a list that wraps: a few shown, the rest behind a "more" toggle. */
static void target_list(FILE *f, const json_t *personas)
{
    size_t n = json_array_size(personas);
    if (!n)
        return;
    fputs("<ul class=\"targets\">", f);
    for (size_t i = 0; i < n; i++) {
        if (i == REPORT_TARGETS_SHOWN)
            fprintf(f, "</ul><details><summary>%zu more</summary><ul class=\"targets\">",
                    n - REPORT_TARGETS_SHOWN);
        const json_t *v = json_array_get(personas, i);
        fputs("<li><code>", f);
        esc(f, json_is_string(v) ? json_string_value(v) : "?");
        fputs("</code></li>", f);
    }
    fputs(n > REPORT_TARGETS_SHOWN ? "</ul></details>\n" : "</ul>\n", f);
}

/* The --expect thresholds and their verdicts, when the run had any. */
static void expectations(FILE *f, const json_t *ex)
{
    if (!json_array_size(ex))
        return;
    fputs("<h2 id=\"expectations\">Expectations</h2>\n<table><tr><th class=\"k\">expect</th>"
          "<th>got</th><th class=\"k\">verdict</th></tr>\n",
          f);
    size_t i;
    json_t *e;
    json_array_foreach(ex, i, e)
    {
        int pass = json_is_true(json_object_get(e, "pass"));
        const json_t *got = json_object_get(e, "got");
        fputs("<tr><td class=\"k\"><code>", f);
        esc(f, report_jstr(e, "expr") ? report_jstr(e, "expr") : "?");
        fputs("</code></td><td>", f);
        if (json_is_number(got)) {
            double v = json_number_value(got);
            if (json_is_true(json_object_get(e, "share")))
                fprintf(f, "%.2f%%", v * 100);
            else
                fprintf(f, "%.15g", v);
        } else
            fputs("-", f);
        fprintf(f, "</td><td class=\"k %s\">%s", pass ? "ok" : "bad", pass ? "pass" : "FAIL");
        if (report_jstr(e, "why")) {
            fputs(": ", f);
            esc(f, report_jstr(e, "why"));
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void header(FILE *f, const struct report_run *r)
{
    const json_t *root = r->root, *cfg = json_object_get(root, "config");
    fputs("<h1>flood run report</h1>\n<p class=\"sub\">started ", f);
    esc(f, report_jstr(root, "started_at") ? report_jstr(root, "started_at") : "?");
    fputs(" &middot; flood ", f);
    esc(f, report_jstr(root, "flood_version") ? report_jstr(root, "flood_version") : "?");
    fputs(" &middot; target ", f);
    const char *inbox = report_jstr(cfg, "inbox");
    if (inbox) {
        fputs("<code>", f);
        esc(f, inbox);
        fputs("</code>", f);
    } else {
        const json_t *p = json_object_get(cfg, "personas");
        fprintf(f, "%zu persona%s", json_array_size(p), json_array_size(p) == 1 ? "" : "s");
    }
    fputs(" &middot; folder <code>", f);
    esc(f, r->dir);
    fputs("</code></p>\n", f);
    if (!inbox)
        target_list(f, json_object_get(cfg, "personas"));
    report_preset_section(f, r); /* a preset's watched figures come first */
    fputs("<h2 id=\"summary\">Summary</h2>\n", f);
    if (!summary_table(f, r->dir)) {
        json_t *t = json_object_get(root, "totals");
        fputs("<table><tr><th>scheduled</th><th>sent</th><th>shed</th><th>completed</th>"
              "<th>unfinished</th></tr><tr>",
              f);
        num_cell(f, report_jnum(t, "scheduled"));
        num_cell(f, report_jnum(t, "sent"));
        num_cell(f, report_jnum(t, "shed"));
        num_cell(f, report_jnum(t, "completed"));
        num_cell(f, report_jnum(t, "unfinished"));
        fputs("</tr></table>\n", f);
    }
    json_t *cons = json_object_get(root, "conservation");
    const char *line = report_jstr(cons, "line");
    int ok = json_is_true(json_object_get(cons, "ok"));
    fprintf(f, "<p id=\"conservation\" class=\"%s\">", line && ok ? "ok" : "bad");
    esc(f, line ? line : "conservation: not recorded in run.json");
    fputs("</p>\n", f);
    report_mix_section(f, r); /* each kind asked and sent */
    json_t *gen = json_object_get(root, "generator");
    if (json_is_object(gen))
        fprintf(f,
                "<p>Generator: %.2f s CPU, dispatch lag p99 %.3f ms, %.0f late sends (over "
                "%.3g ms), the host's steal %.0f ms (%.1f%% of its CPUs), "
                "saturated: <span class=\"%s\">%s</span>%s.</p>\n",
                report_jnum(gen, "cpu_s"), report_jnum(gen, "lag_p99_ms"),
                report_jnum(gen, "late_sends"),
                json_object_get(gen, "late_over_ms") ? report_jnum(gen, "late_over_ms") : 1.0,
                report_jnum(gen, "steal_s") * 1000, report_jnum(gen, "steal_share") * 100,
                json_is_true(json_object_get(gen, "saturated")) ? "bad" : "ok",
                json_is_true(json_object_get(gen, "saturated")) ? "yes" : "no",
                json_is_true(json_object_get(gen, "interrupted")) ? "; interrupted by a signal"
                                                                  : "");
    json_t *warns = json_object_get(root, "warnings");
    size_t i;
    json_t *w;
    json_array_foreach(warns, i, w)
    {
        fputs("<p class=\"warn\">", f);
        if (json_is_string(w))
            esc(f, json_string_value(w));
        else {
            char *s = json_dumps(w, JSON_ENCODE_ANY | JSON_COMPACT);
            esc(f, s ? s : "?");
            free(s);
        }
        fputs("</p>\n", f);
    }
    expectations(f, json_object_get(root, "expectations"));
}

/* The page is written under a temporary name of its own and renamed into place: two
 * writers (a run and `flood report` on the same folder) each leave a whole page. */
static int write_page(const char *path, void (*body)(FILE *, const void *), const void *arg,
                      const char *title, struct flood_err *err)
{
    struct fs_tmp t;
    if (fs_tmp_open(&t, path, 0666, "report", err))
        return -1;
    report_page_head(t.f, title);
    body(t.f, arg);
    fputs("</body></html>\n", t.f);
    return fs_tmp_commit(&t, FS_REPLACE, 0, err);
}

static void report_body(FILE *f, const void *arg)
{
    const struct report_run *r = arg;
    header(f, r);
    report_unreachable_box(f, r);
    fputs("<h2 id=\"charts\">Over time</h2>\n", f);
    charts(f, r);
    fputs("<h2 id=\"operations\">Per operation</h2>\n", f);
    ops_table(f, json_object_get(r->root, "operations"));
    fputs("<table>\n", f);
    pct_head(f, "whole run");
    pct_rows_walk(f, json_object_get(r->root, "totals"), "totals");
    fputs("</table>\n", f);
    inbound_section(f, r);
    report_fetches_section(f, r);
    report_retry_section(f, r->root);
    report_egress_section(f, r);
    report_tqueue_section(f, r);
    faults_section(f, r->root);
    fputs("<h2 id=\"config\">Configuration</h2>\n<table class=\"config\">\n", f);
    config_rows(f, json_object_get(r->root, "config"), "");
    fputs("</table>\n<table class=\"config\">\n", f);
    config_rows(f, json_object_get(r->root, "versions"), "versions");
    config_rows(f, json_object_get(r->root, "host"), "host");
    fputs("</table>\n", f);
}

int report_write(const char *run_dir, struct flood_err *err)
{
    struct report_run r;
    if (report_run_load(&r, run_dir, err))
        return -1;
    char *path = flood_xasprintf("%s/report.html", run_dir);
    char *title = flood_xasprintf("flood report %s", report_jstr(r.root, "started_at")
                                                         ? report_jstr(r.root, "started_at")
                                                         : run_dir);
    int rc = write_page(path, report_body, &r, title, err);
    free(title);
    free(path);
    report_run_free(&r);
    return rc;
}

/* ---- the compare overlay ------------------------------------------------------------- */

struct runs {
    struct report_run *r;
    size_t n;
};

static void compare_body(FILE *f, const void *arg)
{
    const struct runs *rs = arg;
    size_t n = rs->n;
    fputs("<h1>flood runs compared</h1>\n<table><tr><th class=\"k\">run</th><th>started</th>"
          "<th>sent</th><th>shed</th><th>completed</th><th>p50 ms</th><th>p99 ms</th>"
          "<th>p99.9 ms</th><th>max ms</th></tr>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const json_t *t = json_object_get(rs->r[i].root, "totals");
        const json_t *lat = json_object_get(t, "latency_ms");
        fprintf(f,
                "<tr><td class=\"k\"><span class=\"bar\" style=\"width:12px;background:%s\">"
                "</span> ",
                plot_color(i));
        esc(f, rs->r[i].dir);
        fputs("</td><td>", f);
        esc(f, report_jstr(rs->r[i].root, "started_at"));
        fputs("</td>", f);
        num_cell(f, report_jnum(t, "sent"));
        num_cell(f, report_jnum(t, "shed"));
        num_cell(f, report_jnum(t, "completed"));
        num_cell(f, report_jnum(lat, "p50"));
        num_cell(f, report_jnum(lat, "p99"));
        num_cell(f, report_jnum(lat, "p99.9"));
        num_cell(f, report_jnum(lat, "max"));
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    struct plot_series *s = flood_xcalloc(n, sizeof(*s));
    for (size_t i = 0; i < n; i++)
        s[i] = of_curve(&rs->r[i].latency, rs->r[i].dir, i);
    plot_svg(f, &(struct plot){.id = "plot-distribution",
                               .title = "Corrected latency percentile distribution",
                               .xlabel = "percentile",
                               .ylabel = "milliseconds",
                               .kind = PLOT_PERCENTILE,
                               .series = s,
                               .ns = n});
    for (size_t i = 0; i < n; i++)
        s[i] = per_sec(&rs->r[i].c, rs->r[i].dir, i, rs->r[i].c.completed);
    plot_svg(f, &(struct plot){.id = "plot-rate",
                               .title = "Achieved rate (completed per second)",
                               .xlabel = "seconds since start",
                               .ylabel = "requests per second",
                               .kind = PLOT_LINES,
                               .series = s,
                               .ns = n});
    for (size_t i = 0; i < n; i++)
        s[i] = per_sec(&rs->r[i].c, rs->r[i].dir, i, rs->r[i].c.p99);
    plot_svg(f, &(struct plot){.id = "plot-p99",
                               .title = "p99 latency per second",
                               .xlabel = "seconds since start",
                               .ylabel = "milliseconds",
                               .kind = PLOT_LINES,
                               .series = s,
                               .ns = n});
    free(s);
}

int report_compare_write(const char *out_file, char *const *run_dirs, size_t n,
                         struct flood_err *err)
{
    struct runs rs = {.r = flood_xcalloc(n ? n : 1, sizeof(struct report_run)), .n = 0};
    int rc = -1;
    for (; rs.n < n; rs.n++)
        if (report_run_load(&rs.r[rs.n], run_dirs[rs.n], err))
            goto out;
    rc = write_page(out_file, compare_body, &rs, "flood runs compared", err);
out:
    for (size_t i = 0; i < rs.n; i++)
        report_run_free(&rs.r[i]);
    free(rs.r);
    return rc;
}

/* flood/report/report_fetches.c: what the target fetched, in report.html (see
 * report_fetches.h). */
#include "flood/report/report_fetches.h"

#include <math.h>
#include <stdlib.h>

#include "flood/core/html.h"
#include "flood/report/report_plot.h"

#define KINDS_MAX 16

void report_unreachable_box(FILE *f, const struct report_run *r)
{
    if (!json_is_true(json_object_get(r->root, "crowd_unreachable")))
        return;
    fputs("<div class=\"unreachable\"><strong>the target fetched nothing from the crowd: check "
          "that it can reach the crowd's URLs (--public-port)</strong><br>",
          f);
    html_escape(f, report_jstr(r->root, "crowd_unreachable_reason"));
    fputs("</div>\n", f);
}

/* series[i].fetches[kind] for every second (0 where the second has none). */
static double *kind_col(const json_t *series, size_t n, const char *kind)
{
    double *y = flood_xcalloc(n ? n : 1, sizeof(*y));
    size_t i;
    json_t *e;
    json_array_foreach(series, i, e)
    {
        if (i >= n)
            break;
        json_t *fk = json_object_get(e, "fetches");
        y[i] = fk ? (json_is_number(json_object_get(fk, kind)) ? report_jnum(fk, kind) : 0) : NAN;
    }
    return y;
}

static void chart(FILE *f, const struct report_run *r, const json_t *by_kind)
{
    const json_t *series = json_object_get(r->root, "series");
    if (!report_has_key(series, "fetches"))
        return;
    const struct report_cols *c = &r->c;
    struct plot_series s[KINDS_MAX + 1];
    double *cols[KINDS_MAX];
    size_t ns = 0, nc = 0;
    s[ns++] = (struct plot_series){.name = "activities sent",
                                   .color = plot_color(8),
                                   .x = c->tmid,
                                   .y = c->sent,
                                   .n = c->n,
                                   .dashed = 1};
    const char *kind;
    json_t *v;
    json_object_foreach((json_t *)by_kind, kind, v)
    {
        if (nc == KINDS_MAX || !(report_jnum(v, "requests") > 0))
            continue;
        cols[nc] = kind_col(series, c->n, kind);
        s[ns] = (struct plot_series){
            .name = kind, .color = plot_color(nc), .x = c->tmid, .y = cols[nc], .n = c->n};
        ns++;
        nc++;
    }
    plot_svg(f, &(struct plot){.id = "plot-fetches",
                               .title = "What the target fetched",
                               .xlabel = "seconds since start",
                               .ylabel = "per second",
                               .kind = PLOT_LINES,
                               .series = s,
                               .ns = ns});
    fputs("<p class=\"note\">GETs the target made of the crowd each second, by kind, beside the "
          "activities sent (dashed): the cost an activity carries beyond its delivery.</p>\n",
          f);
    for (size_t i = 0; i < nc; i++)
        free(cols[i]);
}

static void cell(FILE *f, double v, const char *fmt)
{
    if (!isfinite(v))
        fputs("<td>-</td>", f);
    else
        fprintf(f, fmt, v);
}

void report_fetches_section(FILE *f, const struct report_run *r)
{
    const json_t *fe = json_object_get(r->root, "fetches");
    if (!json_is_object(fe))
        return;
    const json_t *by = json_object_get(fe, "by_kind"), *amp = json_object_get(fe, "amplification");
    fputs("<h2 id=\"fetches\">What the target fetched</h2>\n", f);
    report_unreachable_box(f, r);
    chart(f, r, by);
    fputs("<table><tr><th class=\"k\">kind</th><th>requests</th><th>per activity sent</th>"
          "<th>bytes</th><th>repeats</th><th>repeated URLs</th><th>serve p50 ms</th>"
          "<th>p99 ms</th><th>max ms</th></tr>\n",
          f);
    const char *kind;
    json_t *v;
    json_object_foreach((json_t *)by, kind, v)
    {
        const json_t *ms = json_object_get(v, "serve_ms");
        fputs("<tr><td class=\"k\">", f);
        html_escape(f, kind);
        fputs("</td>", f);
        cell(f, report_jnum(v, "requests"), "<td>%.0f</td>");
        cell(f, report_jnum(amp, kind), "<td>%.3f</td>");
        cell(f, report_jnum(v, "bytes"), "<td>%.0f</td>");
        cell(f, report_jnum(v, "repeat_requests"), "<td>%.0f</td>");
        cell(f, report_jnum(v, "repeat_urls"), "<td>%.0f</td>");
        cell(f, report_jnum(ms, "p50"), "<td>%.3f</td>");
        cell(f, report_jnum(ms, "p99"), "<td>%.3f</td>");
        cell(f, report_jnum(ms, "max"), "<td>%.3f</td>");
        fputs("</tr>\n", f);
    }
    const json_t *tot = json_object_get(fe, "total");
    fputs("<tr><td class=\"k\"><strong>total</strong></td>", f);
    cell(f, report_jnum(tot, "requests"), "<td>%.0f</td>");
    cell(f, report_jnum(amp, "total"), "<td>%.3f</td>");
    cell(f, report_jnum(tot, "bytes"), "<td>%.0f</td>");
    cell(f, report_jnum(tot, "repeat_requests"), "<td>%.0f</td>");
    cell(f, report_jnum(tot, "repeat_urls"), "<td>%.0f</td>");
    fputs("<td></td><td></td><td></td></tr>\n</table>\n", f);

    const json_t *top = json_object_get(fe, "top_repeats");
    fputs("<table><tr><th class=\"k\">URL fetched more than once</th><th class=\"k\">kind</th>"
          "<th>fetches</th></tr>\n",
          f);
    size_t i;
    json_array_foreach(top, i, v)
    {
        fputs("<tr><td class=\"k\"><code>", f);
        html_escape(f, report_jstr(v, "url"));
        fputs("</code></td><td class=\"k\">", f);
        html_escape(f, report_jstr(v, "kind"));
        fputs("</td>", f);
        cell(f, report_jnum(v, "count"), "<td>%.0f</td>");
        fputs("</tr>\n", f);
    }
    if (!json_array_size(top))
        fputs("<tr><td class=\"k\" colspan=\"3\">none: every URL fetched once at most</td></tr>\n",
              f);
    fputs("</table>\n<p class=\"note\">A URL fetched more than once in a run is a cache the "
          "target lacks (or one shorter than the run). Per activity sent is the fetches of a "
          "kind divided by the activities sent; run.json's fetches.amplification_by_type "
          "divides by each activity type's sends.</p>\n",
          f);
}

/* A table of an object's integer members, "key: value" rows under a heading. */
static void count_rows(FILE *f, const char *head, const json_t *o)
{
    fprintf(f, "<table><tr><th class=\"k\">%s</th><th>requests</th></tr>\n", head);
    const char *k;
    json_t *v;
    int any = 0;
    json_object_foreach((json_t *)o, k, v)
    {
        double n = json_is_object(v) ? report_jnum(v, "requests") : json_number_value(v);
        if (!(n > 0))
            continue;
        any = 1;
        fputs("<tr><td class=\"k\">", f);
        html_escape(f, k);
        fprintf(f, "</td><td>%.0f</td></tr>\n", n);
    }
    if (!any)
        fputs("<tr><td class=\"k\" colspan=\"2\">none</td></tr>\n", f);
    fputs("</table>\n", f);
}

void report_egress_section(FILE *f, const struct report_run *r)
{
    const json_t *e = json_object_get(r->root, "egress");
    if (!json_is_object(e))
        return;
    fputs("<h2 id=\"egress\">Egress: what the target asked the proxy for</h2>\n", f);
    fputs("<table><tr><th>requests</th><th>relayed</th><th>answered</th><th>failed</th>"
          "<th>CONNECT</th><th>refused</th><th>malformed</th><th>connections</th>"
          "<th>most open at once</th></tr>\n<tr>",
          f);
    static const char *const keys[] = {"requests", "relayed", "answered", "failed",
                                       "connects", "refused", "malformed"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        cell(f, report_jnum(e, keys[i]), "<td>%.0f</td>");
    const json_t *conn = json_object_get(e, "connections");
    cell(f, report_jnum(conn, "accepted"), "<td>%.0f</td>");
    cell(f, report_jnum(conn, "open_max"), "<td>%.0f</td>");
    fputs("</tr></table>\n", f);
    count_rows(f, "refused host", json_object_get(e, "refused_by_host"));
    count_rows(f, "refused because", json_object_get(e, "refused_by_reason"));
    count_rows(f, "malformed input", json_object_get(e, "malformed_by_reason"));
    /* the instances the target used most (by connections), at most 20 */
    const json_t *in = json_object_get(e, "instances");
    fputs("<table><tr><th class=\"k\">instance</th><th>connections</th><th>most open</th>"
          "<th>requests</th><th>reused</th><th>CONNECT</th></tr>\n",
          f);
    const char *shown[20];
    size_t n_shown = 0;
    while (n_shown < 20) {
        const char *best = NULL, *k;
        double best_n = -1;
        json_t *v;
        json_object_foreach((json_t *)in, k, v)
        {
            int seen = 0;
            for (size_t j = 0; j < n_shown; j++)
                seen |= shown[j] == k;
            double c = report_jnum(v, "connections");
            if (!seen && c > best_n) {
                best = k;
                best_n = c;
            }
        }
        if (!best)
            break;
        shown[n_shown++] = best;
        const json_t *v2 = json_object_get(in, best);
        fputs("<tr><td class=\"k\">", f);
        html_escape(f, best);
        fputs("</td>", f);
        static const char *const ik[] = {"connections", "open_max", "requests", "reused",
                                         "connects"};
        for (size_t j = 0; j < 5; j++)
            cell(f, report_jnum(v2, ik[j]), "<td>%.0f</td>");
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p class=\"note\">", f);
    html_escape(f, report_jstr(json_object_get(e, "conservation"), "line"));
    fprintf(f,
            ". %zu instances used. Reused: a plain request on a connection whose previous "
            "request was for the same instance; inside a CONNECT tunnel the requests are "
            "encrypted and only the tunnel is counted.</p>\n",
            json_object_size(in));
}

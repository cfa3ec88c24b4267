/* flood/report/report_tqueue.c: the target's own queue in report.html (see report_tqueue.h). */
#include "flood/report/report_tqueue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flood/report/report_plot.h"
#include "flood/core/html.h"

#define TQ_LINES_MAX 12

/* series[i].target_queue[source][gauge] for every second: NAN where that second's reading
 * failed or none was taken. */
static double *gauge_col(const json_t *series, size_t n, const char *source, const char *gauge)
{
    double *y = flood_xcalloc(n ? n : 1, sizeof(*y));
    for (size_t i = 0; i < n; i++) {
        /* gauge names hold dots ("inbox.waiting"): each key looked up as it is */
        const json_t *g = json_object_get(
            json_object_get(json_object_get(json_array_get(series, i), "target_queue"), source),
            gauge);
        y[i] = json_is_number(g) ? json_number_value(g) : NAN;
    }
    return y;
}

/* The depths worth a line: the queue gauges (not sigverify's cumulative count and sum). */
static int charted(const char *gauge, const json_t *info)
{
    const char *role = report_jstr(info, "role");
    if (!role || !strncmp(gauge, "sigverify.", 10))
        return 0;
    return strcmp(role, "other") != 0 || report_jnum(info, "max") > 0;
}

static void chart(FILE *f, const struct report_run *r, const json_t *sources)
{
    const json_t *series = json_object_get(r->root, "series");
    const struct report_cols *c = &r->c;
    struct plot_series s[TQ_LINES_MAX];
    char names[TQ_LINES_MAX][96];
    double *cols[TQ_LINES_MAX];
    size_t ns = 0;
    size_t i;
    const json_t *src;
    json_array_foreach(sources, i, src)
    {
        const char *label = report_jstr(src, "source");
        const char *gauge;
        json_t *info;
        json_object_foreach(json_object_get(src, "gauges"), gauge, info)
        {
            if (ns == TQ_LINES_MAX || !label || !charted(gauge, info))
                continue;
            snprintf(names[ns], sizeof(names[ns]), "%s %s", label, gauge);
            cols[ns] = gauge_col(series, c->n, label, gauge);
            const char *role = report_jstr(info, "role");
            s[ns] = (struct plot_series){.name = names[ns],
                                         .color = plot_color(ns),
                                         .x = c->tmid,
                                         .y = cols[ns],
                                         .n = c->n,
                                         .dashed = role && strcmp(role, "inbound") != 0};
            ns++;
        }
    }
    if (ns)
        plot_svg(f, &(struct plot){.id = "plot-target-queue",
                                   .title = "The target's queue",
                                   .xlabel = "seconds since start",
                                   .ylabel = "jobs",
                                   .kind = PLOT_LINES,
                                   .series = s,
                                   .ns = ns});
    fputs("<p class=\"note\">The target's own queues read once a second (--target-queue): the "
          "inbound queue solid, the others dashed; a gap is a second whose reading failed. A "
          "queue that climbs while the answers stay 202 is a target falling behind.</p>\n",
          f);
    for (size_t k = 0; k < ns; k++)
        free(cols[k]);
}

void report_tqueue_section(FILE *f, const struct report_run *r)
{
    const json_t *sources = json_object_get(r->root, "target_queue");
    if (!json_is_array(sources) || !json_array_size(sources))
        return;
    fputs("<h2 id=\"target-queue\">The target's queue</h2>\n", f);
    chart(f, r, sources);
    fputs("<table>\n<tr><th>source</th><th>readings</th><th>missing</th><th>gauge</th>"
          "<th>role</th><th>last</th><th>largest</th></tr>\n",
          f);
    size_t i;
    const json_t *src;
    json_array_foreach(sources, i, src)
    {
        const json_t *gauges = json_object_get(src, "gauges");
        size_t rows = json_object_size(gauges) ? json_object_size(gauges) : 1;
        fprintf(f, "<tr><td rowspan=\"%zu\">", rows);
        html_escape(f, report_jstr(src, "spec"));
        const char *why = report_jstr(src, "first_failure");
        if (why) {
            fputs("<br><span class=\"note\">", f);
            html_escape(f, why);
            fputs("</span>", f);
        }
        fprintf(f, "</td><td rowspan=\"%zu\">%.0f</td><td rowspan=\"%zu\">%.0f</td>", rows,
                report_jnum(src, "readings"), rows, report_jnum(src, "missing"));
        const char *gauge;
        json_t *info;
        int first = 1;
        json_object_foreach((json_t *)gauges, gauge, info)
        {
            if (!first)
                fputs("<tr>", f);
            first = 0;
            fputs("<td>", f);
            html_escape(f, gauge);
            fputs("</td><td>", f);
            html_escape(f, report_jstr(info, "role"));
            fprintf(f, "</td><td>%g</td><td>%g</td></tr>\n", report_jnum(info, "last"),
                    report_jnum(info, "max"));
        }
        if (first)
            fputs("<td colspan=\"4\">no reading</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* flood/report/report_preset.c: the preset block of report.html (see report_preset.h). */
#include "flood/report/report_preset.h"

#include <jansson.h>

#include "flood/core/html.h"
#include "flood/report/report_plot.h"

/* A watched value as run.json holds it: a number with up to 3 decimals, "-" when the run
 * has no such figure (null). */
static void value_cell(FILE *f, const json_t *v)
{
    fputs("<td>", f);
    if (json_is_number(v)) {
        double d = json_number_value(v);
        if (d == (double)(long long)d)
            fprintf(f, "%lld", (long long)d);
        else
            fprintf(f, "%.3f", d);
    } else {
        fputs("-", f);
    }
    fputs("</td>", f);
}

void report_preset_section(FILE *f, const struct report_run *r)
{
    const json_t *p = json_object_get(r->root, "preset");
    if (!json_is_object(p))
        return;
    const char *name = report_jstr(p, "name"), *what = report_jstr(p, "what");
    const char *file = report_jstr(p, "file");
    fputs("<h2 id=\"preset\">Preset <code>", f);
    html_escape(f, name ? name : "?");
    fputs("</code></h2>\n", f);
    if (what && *what) {
        fputs("<p id=\"preset-what\">", f);
        html_escape(f, what);
        fputs("</p>\n", f);
    }
    if (file) {
        fputs("<p class=\"note\">file <code>", f);
        html_escape(f, file);
        fputs("</code>; docs/BACKPRESSURE.md says what each figure shows and which way it "
              "moves</p>\n",
              f);
    }
    const json_t *watch = json_object_get(p, "watch");
    if (json_array_size(watch) == 0)
        return;
    fputs("<table id=\"preset-watch\"><tr><th class=\"k\">watched</th><th>value</th></tr>\n", f);
    size_t i;
    json_t *w;
    json_array_foreach(watch, i, w)
    {
        fputs("<tr><td class=\"k\"><code>", f);
        html_escape(f, report_jstr(w, "metric") ? report_jstr(w, "metric") : "?");
        fputs("</code></td>", f);
        value_cell(f, json_object_get(w, "value"));
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

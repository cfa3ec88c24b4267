/* flood/report/report_mix.c: report.html's mix section (see report_mix.h). */
#include "flood/report/report_mix.h"

#include <jansson.h>
#include <math.h>

#include "flood/report/report_plot.h"
#include "flood/core/html.h"

void report_mix_section(FILE *f, const struct report_run *r)
{
    const json_t *m = json_object_get(r->root, "mix");
    const json_t *kinds = json_object_get(m, "kinds");
    if (!json_is_object(kinds))
        return;
    fputs("<h2 id=\"mix\">Mix: asked and sent</h2>\n"
          "<table id=\"mix-kinds\"><tr><th class=\"k\">kind</th><th>asked %</th><th>sent %</th>"
          "<th>sent</th></tr>\n",
          f);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)kinds, k, v)
    {
        double asked = report_jnum(v, "asked_pct"), sent = report_jnum(v, "sent_pct");
        fputs("<tr><td class=\"k\">", f);
        html_escape(f, k);
        fprintf(f, "</td><td>%.1f</td><td class=\"%s\">%.1f</td><td>%.0f</td></tr>\n", asked,
                fabs(asked - sent) > 1.0 ? "bad" : "ok", sent, report_jnum(v, "sent"));
    }
    fputs("</table>\n", f);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(m, "substituted"), i, s)
    {
        fprintf(f, "<p class=\"warn mix-sub\">%.0f ", report_jnum(s, "count"));
        html_escape(f, report_jstr(s, "asked") ? report_jstr(s, "asked") : "?");
        fputs(" asked were sent as ", f);
        html_escape(f, report_jstr(s, "sent_as") ? report_jstr(s, "sent_as") : "?");
        fputs(": ", f);
        html_escape(f, report_jstr(s, "why") ? report_jstr(s, "why") : "");
        fputs("</p>\n", f);
    }
    const json_t *rf = json_object_get(m, "refollows");
    if (rf)
        fprintf(f,
                "<p id=\"mix-refollows\">Refollows (a Follow from an actor that already "
                "follows; not in Follow-to-Accept): %.0f sent, %.0f accepted again, %.0f "
                "rejected, %.0f unanswered.</p>\n",
                report_jnum(rf, "sent"), report_jnum(rf, "accepted"), report_jnum(rf, "rejected"),
                report_jnum(rf, "unanswered"));
    fputs("<p class=\"note\">Each kind is drawn at its asked share; one that cannot be sent at "
          "its turn (nothing to delete yet, every actor following) is sent as another and made "
          "up later. What was not made up is listed above (README, the mix).</p>\n",
          f);
}

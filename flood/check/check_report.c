/* flood/check/check_report.c: the report of `flood check`: a table on a terminal, or JSON. */
#include <stdlib.h>
#include <string.h>

#include "flood/check/check_internal.h"

void check_print_table(FILE *f, const struct check_report *r)
{
    size_t w = 4;
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->results[i].step) > w)
            w = strlen(r->results[i].step);
    if (w > 72)
        w = 72;
    fprintf(f, "%4s  %-*s  %-11s  %9s  %s\n", "line", (int)w, "step", "result", "time", "detail");
    for (size_t i = 0; i < r->n; i++) {
        const struct check_result *x = &r->results[i];
        char t[32];
        snprintf(t, sizeof(t), "%.0f ms", x->ms);
        fprintf(f, "%4d  %-*.*s  %-11s  %9s  ", x->line, (int)w, (int)w, x->step,
                check_outcome_name(x->outcome), t);
        if (x->outcome == CHECK_FAIL)
            fprintf(f, "expected %s, got %s", x->expected ? x->expected : "?",
                    x->got ? x->got : "?");
        else if (x->outcome == CHECK_DEFERRED || x->outcome == CHECK_UNSUPPORTED)
            fprintf(f, "got %s", x->got ? x->got : "?");
        if (x->detail)
            fprintf(f, "%s%s", x->outcome == CHECK_FAIL || x->got ? "; " : "", x->detail);
        fputc('\n', f);
    }
    fprintf(f, "%zu steps: %zu pass, %zu fail, %zu skip, %zu deferred, %zu unsupported\n", r->n,
            r->counts[CHECK_PASS], r->counts[CHECK_FAIL], r->counts[CHECK_SKIP],
            r->counts[CHECK_DEFERRED], r->counts[CHECK_UNSUPPORTED]);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *check_report_json(const struct check *c, const struct scenario *s,
                          const struct check_report *r)
{
    json_t *steps = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const struct check_result *x = &r->results[i];
        /* a tenth of a millisecond is all a step's time means */
        double ms = (double)(long long)(x->ms * 10.0 + 0.5) / 10.0;
        json_t *o = json_pack("{s:i, s:s, s:s, s:f}", "line", x->line, "step", x->step, "result",
                              check_outcome_name(x->outcome), "ms", ms);
        if (!o)
            continue;
        json_object_set_new(o, "expected", str_or_null(x->expected));
        json_object_set_new(o, "got", str_or_null(x->got));
        json_object_set_new(o, "detail", str_or_null(x->detail));
        if (x->decided_by)
            json_object_set_new(o, "decided_by", json_string(x->decided_by));
        json_array_append_new(steps, o);
    }
    json_t *summary = json_object();
    for (int k = 0; k < 5; k++)
        json_object_set_new(summary, check_outcome_name((enum check_outcome)k),
                            json_integer((json_int_t)r->counts[k]));
    json_t *persona = json_object();
    json_object_set_new(persona, "spec", str_or_null(c->o.persona));
    json_object_set_new(persona, "actor", str_or_null(c->persona_ok ? c->persona.actor : NULL));
    json_object_set_new(persona, "inbox", str_or_null(c->persona_ok ? c->persona.inbox : NULL));
    json_object_set_new(persona, "error", str_or_null(c->persona_ok ? NULL : c->persona_err));
    json_t *doc = json_object();
    json_object_set_new(doc, "flood_version", json_string(FLOOD_VERSION));
    json_object_set_new(doc, "target", str_or_null(c->o.name ? c->o.name : c->o.persona));
    json_object_set_new(doc, "scenario", str_or_null(s->file));
    json_object_set_new(doc, "persona", persona);
    json_object_set_new(doc, "token", json_boolean(c->o.token != NULL));
    json_object_set_new(doc, "steps", steps);
    json_object_set_new(doc, "summary", summary);
    json_object_set_new(doc, "ok", json_boolean(r->counts[CHECK_FAIL] == 0));
    return doc;
}

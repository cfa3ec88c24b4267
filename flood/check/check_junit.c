/* flood/check/check_junit.c: a card as JUnit XML (the Ant/Jenkins format that CI systems
 * render; fixtures/junit/junit.xsd is the structure it must keep).
 *
 * Results map so that the XML agrees with `flood check`'s exit code: a fail is a
 * <failure>, skip and unsupported are <skipped> (the message says which), and deferred is
 * a passed testcase with a <system-out> note, because a 202 for later is how several
 * correct servers answer (docs/INTEROP.md) and flood check does not fail on it. A persona
 * that could not be discovered makes flood check fail with no failed step: it is one more
 * testcase, with an <error>. */
#include <stdlib.h>
#include <string.h>

#include "flood/core/html.h"
#include "flood/check/check_card.h"

#define esc html_escape_xml

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static size_t count(const json_t *steps, const char *result)
{
    size_t i, n = 0;
    const json_t *st;
    json_array_foreach(steps, i, st)
    {
        n += !strcmp(jstr(st, "result"), result);
    }
    return n;
}

/* How many steps before steps[upto] have the same text (their names must differ). */
static size_t same_before(const json_t *steps, size_t upto, const char *text, size_t *total)
{
    size_t before = 0, all = 0;
    for (size_t i = 0; i < json_array_size(steps); i++) {
        const char *s = jstr(json_array_get(steps, i), "step");
        if (strcmp(s, text))
            continue;
        all++;
        before += i < upto;
    }
    *total = all;
    return before;
}

static double seconds(const json_t *st)
{
    double ms = json_number_value(json_object_get(st, "ms"));
    return ms > 0 ? ms / 1000.0 : 0.0;
}

/* "expected E, got G; detail", "got G; detail" or "detail", into f. */
static void what(FILE *f, const json_t *st)
{
    const char *e = jstr(st, "expected"), *g = jstr(st, "got"), *d = jstr(st, "detail");
    if (e) {
        fputs("expected ", f);
        esc(f, e);
        fputs(g ? ", " : "", f);
    }
    if (g) {
        fputs("got ", f);
        esc(f, g);
    }
    if (d) {
        fputs(e || g ? "; " : "", f);
        esc(f, d);
    }
}

static void testcase(FILE *f, const json_t *steps, size_t i)
{
    const json_t *st = json_array_get(steps, i);
    const char *step = jstr(st, "step"), *r = jstr(st, "result");
    size_t total, before = same_before(steps, i, step, &total);
    fputs("    <testcase name=\"", f);
    esc(f, step);
    if (total > 1) /* a step written twice ("wait 1s") would be one test to a CI system */
        fprintf(f, " (#%zu)", before + 1);
    fprintf(f, "\" classname=\"flood.check\" time=\"%.3f\"", seconds(st));
    if (!strcmp(r, "pass")) {
        fputs("/>\n", f);
        return;
    }
    fputs(">\n", f);
    if (!strcmp(r, "fail")) {
        fputs("      <failure type=\"fail\" message=\"", f);
        what(f, st);
        fprintf(f, "\">scenario line %d: ", (int)json_integer_value(json_object_get(st, "line")));
        what(f, st);
        fputs("</failure>\n", f);
    } else if (!strcmp(r, "deferred")) {
        fputs("      <system-out>deferred (answered 2xx, no effect seen; not a failure): ", f);
        what(f, st);
        fputs("</system-out>\n", f);
    } else {
        fprintf(f, "      <skipped message=\"%s: ", r);
        what(f, st);
        fputs("\"/>\n", f);
    }
    fputs("    </testcase>\n", f);
}

static void property(FILE *f, const char *name, const char *value)
{
    fprintf(f, "      <property name=\"%s\" value=\"", name);
    esc(f, value ? value : "");
    fputs("\"/>\n", f);
}

static void junit_body(FILE *f, const void *arg)
{
    const json_t *card = arg, *steps = json_object_get(card, "steps");
    const json_t *persona = json_object_get(card, "persona");
    const char *perr = jstr(persona, "error");
    size_t n = json_array_size(steps), errors = perr ? 1 : 0;
    size_t failures = count(steps, "fail");
    size_t skipped = count(steps, "skip") + count(steps, "unsupported");
    double time = 0;
    for (size_t i = 0; i < n; i++)
        time += seconds(json_array_get(steps, i));
    const char *target = check_card_target(card);

    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f,
            "<testsuites name=\"flood check\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "skipped=\"%zu\" time=\"%.3f\">\n",
            n + errors, failures, errors, skipped, time);
    fputs("  <testsuite name=\"", f);
    esc(f, target ? target : "flood check");
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
            n + errors, failures, errors, skipped, time);
    fputs("    <properties>\n", f);
    property(f, "flood.version", jstr(card, "flood_version"));
    property(f, "scenario", jstr(card, "scenario"));
    property(f, "persona", jstr(persona, "spec"));
    property(f, "persona.actor", jstr(persona, "actor"));
    property(f, "token", json_is_true(json_object_get(card, "token")) ? "yes" : "no");
    fputs("    </properties>\n", f);
    if (perr) {
        fputs("    <testcase name=\"discover persona\" classname=\"flood.check\" time=\"0.000\">\n"
              "      <error type=\"persona\" message=\"",
              f);
        esc(f, perr);
        fputs("\"/>\n    </testcase>\n", f);
    }
    for (size_t i = 0; i < n; i++)
        testcase(f, steps, i);
    fputs("  </testsuite>\n</testsuites>\n", f);
}

int check_junit_write(const char *path, const json_t *card, struct flood_err *err)
{
    if (check_card_valid(card, err) < 0)
        return -1;
    return check_write_atomic(path, junit_body, card, err);
}

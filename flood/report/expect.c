/* flood/report/expect.c: thresholds and regression gates over run.json (see expect.h). */
#include "flood/report/expect.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/grammar.h"
#include "flood/core/jpath.h"
#include "flood/measure/stats.h"

enum kind { K_TIME, K_COUNT, K_RAW };

#define EXPECT_TIME_MAX_S (7 * 86400.0) /* a time longer than a week is no latency */

static const char *const pct_names[] = {"p50", "p90", "p95", "p99", "p99.9", "max", "mean", "min"};
static const char *const count_names[] = {"scheduled", "sent",   "shed", "completed", "unfinished",
                                          "2xx",       "4xx",    "5xx",  "errors",    "401",
                                          "403",       "408",    "429",  "503",       "timeout",
                                          "transport", "accepts"};
static const char *const higher_good[] = {"scheduled", "sent", "completed", "2xx", "accepts"};

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}
#define IN(s, list) in_list(s, list, sizeof(list) / sizeof(list[0]))

/* What kind of metric name is: -1 when it is none. */
static int kind_of(const char *name)
{
    if (!strncmp(name, "json:", 5))
        return name[5] ? K_RAW : -1;
    if (!strncmp(name, "fetch.", 6)) {
        const char *k = name + 6;
        size_t n = strcspn(k, ".");
        if (!n)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (!islower((unsigned char)k[i]))
                return -1;
        return !k[n] || !strcmp(k + n, ".repeat") ? K_COUNT : -1;
    }
    if (IN(name, pct_names) || IN(name, count_names))
        return IN(name, pct_names) ? K_TIME : K_COUNT;
    const char *dot = strrchr(name, '.');
    /* "p99.9" has a dot of its own: the prefix ends at the first dot before "p" */
    const char *p = strstr(name, ".p");
    if (!p)
        p = strstr(name, ".max") ? strstr(name, ".max") : strstr(name, ".mean");
    if (!p || !dot || !IN(p + 1, pct_names))
        return -1;
    size_t plen = (size_t)(p - name);
    if ((plen == 7 && !strncmp(name, "service", 7)) || (plen == 3 && !strncmp(name, "lag", 3)) ||
        (plen == 3 && !strncmp(name, "f2a", 3)))
        return K_TIME;
    for (int op = 0; op < OP__COUNT; op++)
        if (strlen(op_name((enum op_kind)op)) == plen &&
            !strncmp(name, op_name((enum op_kind)op), plen))
            return K_TIME;
    return -1;
}

/* The value of an expression (s, n) into out->value and out->share, by the metric's kind: a
 * time a duration (bare = ms), a count a whole or decimal number, either a share with %. */
static int expect_value(const char *text, int kind, struct expect *out, const char *s, size_t n,
                        struct flood_err *err)
{
    char what[EXPECT_TEXT_MAX + 16];
    snprintf(what, sizeof(what), "--expect '%s'", text);
    if (n == 0) {
        flood_err_set(err, FLOOD_EINVAL, "%s: expected a number >= 0 after the operator", what);
        return -1;
    }
    if (s[n - 1] == '%') {
        if (kind == K_RAW || (kind == K_TIME && out->op != EXPECT_WITHIN)) {
            flood_err_set(err, FLOOD_EINVAL, "%s: a %s takes no %%", what,
                          kind == K_TIME ? "time" : "json: value");
            return -1;
        }
        /* a share may pass 100%: fetch.actor<=110%, p99 within 200% */
        out->share = 1;
        return gram_share(what, s, n, GRAM_SHARE_PERCENT, 0, 100, &out->value, err);
    }
    if (kind == K_TIME) {
        double sec;
        if (gram_duration(what, s, n, GRAM_BARE_MS, 0, EXPECT_TIME_MAX_S, &sec, err))
            return -1;
        out->value = sec * 1e3;
        return 0;
    }
    struct flood_err ignored;
    if (gram_real(what, s, n, 0, 1e15, &out->value, &ignored) == 0)
        return 0;
    flood_err_set(err, FLOOD_EINVAL,
                  "%s: expected a count (0, 12, 1.5) or a share (99%%), got '%.*s'", what,
                  (int)(n > 40 ? 40 : n), s);
    return -1;
}

int expect_parse(const char *text, int gate, struct expect *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!text || strlen(text) >= EXPECT_TEXT_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "--expect: expected METRIC OP VALUE (at most %d bytes)",
                      EXPECT_TEXT_MAX - 1);
        return -1;
    }
    snprintf(out->text, sizeof(out->text), "%s", text);
    const char *s = text;
    while (isspace((unsigned char)*s))
        s++;
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && !strchr("<>=!", s[n]))
        n++;
    memcpy(out->metric, s, n);
    out->metric[n] = '\0';
    int kind = kind_of(out->metric);
    if (!n || kind < 0) {
        flood_err_set(err, FLOOD_EINVAL,
                      "--expect '%s': unknown metric '%s' (p99, create.p99, f2a.p95, 2xx, shed, "
                      "errors, fetch.actor.repeat, json:PATH; flood run --help)",
                      text, out->metric);
        return -1;
    }
    s += n;
    while (isspace((unsigned char)*s))
        s++;
    static const struct {
        const char *t;
        enum expect_op op;
    } ops[] = {{"<=", EXPECT_LE}, {">=", EXPECT_GE}, {"==", EXPECT_EQ},        {"!=", EXPECT_NE},
               {"<", EXPECT_LT},  {">", EXPECT_GT},  {"within", EXPECT_WITHIN}};
    size_t i;
    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (!strncmp(s, ops[i].t, strlen(ops[i].t)))
            break;
    if (i == sizeof(ops) / sizeof(ops[0]) || (ops[i].op == EXPECT_WITHIN) != !!gate) {
        flood_err_set(err, FLOOD_EINVAL, "--expect '%s': expected %s after '%s'", text,
                      gate ? "'within'" : "one of < <= > >= == !=", out->metric);
        return -1;
    }
    out->op = ops[i].op;
    s += strlen(ops[i].t);
    while (isspace((unsigned char)*s))
        s++;
    size_t vn = strcspn(s, " \t");
    if (s[vn + strspn(s + vn, " \t")]) {
        flood_err_set(err, FLOOD_EINVAL, "--expect '%s': unexpected text after the value", text);
        return -1;
    }
    if (expect_value(text, kind, out, s, vn, err))
        return -1;
    out->higher_good = IN(out->metric, higher_good);
    return 0;
}

/* ---- reading run.json ------------------------------------------------------------------ */

static int num_at(const json_t *run, const char *p, double *v)
{
    const json_t *x = jpath_get(run, p);
    if (!json_is_number(x))
        return -1;
    *v = json_number_value(x);
    return 0;
}

/* Whether the percentile at dotted path p sits in a histogram object whose count is 0: a
 * threshold on it would judge nothing. */
static int hist_empty(const json_t *run, const char *p)
{
    char parent[EXPECT_TEXT_MAX + 32];
    snprintf(parent, sizeof(parent), "%s", p);
    /* the histogram object is the path up to its last key (which may be "p99.9") */
    char *k = strstr(parent, ".p");
    if (!k)
        k = strstr(parent, ".max") ? strstr(parent, ".max") : strstr(parent, ".mean");
    if (!k)
        return 0;
    *k = '\0';
    const json_t *count = json_object_get(jpath_get(run, parent), "count");
    return json_is_number(count) && json_number_value(count) <= 0;
}

static double sum(const json_t *outcomes, const char *const *keys)
{
    double s = 0;
    for (; *keys; keys++)
        s += json_number_value(json_object_get(outcomes, *keys));
    return s;
}

/* The metric's value (and the denominator of its share) in run. 0, or -1 with why. */
static int value_of(const struct expect *e, const json_t *run, double *v, double *of, char *why,
                    size_t why_size)
{
    static const char *const k2xx[] = {"200", "202", "2xx_other", NULL};
    static const char *const k4xx[] = {"401", "403", "408", "429", "4xx_other", NULL};
    static const char *const k5xx[] = {"503", "5xx_other", NULL};
    static const char *const kerr[] = {"401", "403",       "408",     "429",       "4xx_other",
                                       "503", "5xx_other", "timeout", "transport", NULL};
    const char *m = e->metric;
    const json_t *t = json_object_get(run, "totals"), *oc = json_object_get(t, "outcomes");
    double completed = json_number_value(json_object_get(t, "completed"));
    double scheduled = json_number_value(json_object_get(t, "scheduled"));
    double sent = json_number_value(json_object_get(t, "sent"));
    char p[EXPECT_TEXT_MAX + 32];
    int rc = 0;
    *of = completed;
    if (!strncmp(m, "json:", 5))
        rc = num_at(run, m + 5, v);
    else if (!strncmp(m, "fetch.", 6)) {
        const char *k = m + 6;
        size_t n = strcspn(k, ".");
        int repeat = k[n] != '\0';
        if (n == 5 && !strncmp(k, "total", 5))
            snprintf(p, sizeof(p), "fetches.total.%s", repeat ? "repeat_requests" : "requests");
        else
            snprintf(p, sizeof(p), "fetches.by_kind.%.*s.%s", (int)n, k,
                     repeat ? "repeat_requests" : "requests");
        rc = num_at(run, p, v);
        *of = sent;
    } else if (!strcmp(m, "2xx"))
        *v = sum(oc, k2xx);
    else if (!strcmp(m, "4xx"))
        *v = sum(oc, k4xx);
    else if (!strcmp(m, "5xx"))
        *v = sum(oc, k5xx);
    else if (!strcmp(m, "errors"))
        *v = sum(oc, kerr);
    else if (!strcmp(m, "accepts")) {
        rc = num_at(run, "probes.accepted", v);
        *of = json_number_value(jpath_get(run, "probes.follows_sent"));
    } else if (IN(m, count_names)) {
        if (!strcmp(m, "sent") || !strcmp(m, "shed") || !strcmp(m, "scheduled"))
            *of = scheduled;
        else if (!strcmp(m, "completed") || !strcmp(m, "unfinished"))
            *of = sent;
        snprintf(p, sizeof(p), "totals.%s", m);
        if (num_at(run, p, v)) {
            snprintf(p, sizeof(p), "totals.outcomes.%s", m);
            rc = num_at(run, p, v);
        }
    } else if (IN(m, pct_names)) {
        snprintf(p, sizeof(p), "totals.latency_ms.%s", m);
        rc = num_at(run, p, v);
    } else {
        const char *dot = strstr(m, ".p");
        if (!dot)
            dot = strstr(m, ".max") ? strstr(m, ".max") : strstr(m, ".mean");
        size_t plen = (size_t)(dot - m);
        const char *pct = dot + 1;
        if (plen == 7 && !strncmp(m, "service", 7))
            snprintf(p, sizeof(p), "totals.service_ms.%s", pct);
        else if (plen == 3 && !strncmp(m, "lag", 3))
            snprintf(p, sizeof(p), "totals.dispatch_lag_ms.%s", pct);
        else if (plen == 3 && !strncmp(m, "f2a", 3))
            snprintf(p, sizeof(p), "probes.follow_to_accept_ms.%s", pct);
        else
            snprintf(p, sizeof(p), "operations.%.*s.latency_ms.%s", (int)plen, m, pct);
        rc = num_at(run, p, v);
    }
    if (rc) {
        snprintf(why, why_size, "run.json has no number at %s",
                 !strncmp(m, "json:", 5) ? m + 5 : p);
        return -1;
    }
    if (kind_of(m) == K_TIME && hist_empty(run, p)) {
        snprintf(why, why_size, "no samples (%s has count 0)", p);
        return -1;
    }
    if (e->share && e->op != EXPECT_WITHIN) {
        if (*of <= 0) {
            snprintf(why, why_size, "no share: nothing to divide by");
            return -1;
        }
        *v /= *of;
    }
    return 0;
}

int expect_judge(const struct expect *e, const json_t *run, double *got, char *why, size_t why_size)
{
    double v = NAN, of;
    why[0] = '\0';
    *got = NAN;
    if (value_of(e, run, &v, &of, why, why_size))
        return 0;
    *got = v;
    /* compare at the precision run.json keeps (a thousandth) */
    double a = round(v * 1e6) / 1e6, b = round(e->value * 1e6) / 1e6;
    switch (e->op) {
    case EXPECT_LT:
        return a < b;
    case EXPECT_LE:
        return a <= b;
    case EXPECT_GT:
        return a > b;
    case EXPECT_GE:
        return a >= b;
    case EXPECT_EQ:
        return a == b;
    case EXPECT_NE:
        return a != b;
    case EXPECT_WITHIN:
        break;
    }
    return 0;
}

int expect_judge_gate(const struct expect *e, const json_t *base, const json_t *cur, double *got,
                      double *ref, char *why, size_t why_size)
{
    double of;
    why[0] = '\0';
    *got = *ref = NAN;
    if (value_of(e, base, ref, &of, why, why_size) || value_of(e, cur, got, &of, why, why_size))
        return 0;
    double slack = e->share ? *ref * e->value : e->value;
    return e->higher_good ? *got >= *ref - slack - 1e-9 : *got <= *ref + slack + 1e-9;
}

int expect_metric_value(const char *metric, const json_t *run, double *got, char *why,
                        size_t why_size)
{
    struct expect e;
    struct flood_err err = {0};
    char text[EXPECT_TEXT_MAX + 8];
    double of;
    *got = NAN;
    why[0] = '\0';
    snprintf(text, sizeof(text), "%s>=0", metric);
    if (strlen(metric) >= EXPECT_TEXT_MAX - 4 || expect_parse(text, 0, &e, &err)) {
        snprintf(why, why_size, "%s", err.msg[0] ? err.msg : "metric too long");
        return -1;
    }
    return value_of(&e, run, got, &of, why, why_size) ? -1 : 0;
}

const char *expect_format(const struct expect *e, double v, char *buf, size_t size)
{
    int kind = kind_of(e->metric);
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (e->share && e->op != EXPECT_WITHIN)
        snprintf(buf, size, "%.2f%%", v * 100);
    else if (kind == K_TIME)
        snprintf(buf, size, "%.3f ms", v);
    else
        snprintf(buf, size, "%.15g", v);
    return buf;
}

json_t *expect_judge_all(const struct expect *e, size_t n, const json_t *run, FILE *out,
                         int *failed)
{
    json_t *a = json_array();
    *failed = 0;
    if (out && n)
        fprintf(out, "expectations:\n");
    for (size_t i = 0; i < n; i++) {
        double got;
        char why[160], gs[64];
        int pass = expect_judge(&e[i], run, &got, why, sizeof(why));
        *failed += !pass;
        json_t *o = json_object();
        json_object_set_new(o, "expr", json_string(e[i].text));
        json_object_set_new(o, "metric", json_string(e[i].metric));
        json_object_set_new(o, "got", isnan(got) ? json_null() : json_real(got));
        json_object_set_new(o, "want", json_real(e[i].value));
        json_object_set_new(o, "share", json_boolean(e[i].share));
        json_object_set_new(o, "pass", json_boolean(pass));
        if (why[0])
            json_object_set_new(o, "why", json_string(why));
        json_array_append_new(a, o);
        if (out)
            fprintf(out, "  %-4s %-32s got %s%s%s\n", pass ? "pass" : "FAIL", e[i].text,
                    expect_format(&e[i], got, gs, sizeof(gs)), why[0] ? ": " : "", why);
    }
    return a;
}

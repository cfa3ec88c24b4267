/* flood/report/report_run.c: reading a run folder for the reports. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/jpath.h"
#include "flood/report/report.h"
#include "flood/report/report_run.h"

double report_jnum(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *report_jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

json_t *report_load_run(const char *run_dir, struct flood_err *err)
{
    char *path = flood_xasprintf("%s/run.json", run_dir);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        FILE *f = fopen(path, "r");
        if (!f)
            flood_err_set(err, FLOOD_EIO, "report: cannot read '%s': %s", path, strerror(errno));
        else {
            fclose(f);
            flood_err_set(err, FLOOD_EINVAL, "report: '%s' line %d: %s", path, je.line, je.text);
        }
        free(path);
        return NULL;
    }
    if (!json_is_object(root) || !json_is_object(json_object_get(root, "totals")) ||
        !json_is_array(json_object_get(root, "series"))) {
        flood_err_set(err, FLOOD_EINVAL, "report: '%s' is not a flood run.json (no totals/series)",
                      path);
        json_decref(root);
        free(path);
        return NULL;
    }
    free(path);
    return root;
}

static void curve_add(struct report_curve *c, size_t *cap, double p, double v)
{
    if (c->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        c->p = flood_xrealloc(c->p, *cap * sizeof(double));
        c->v = flood_xrealloc(c->v, *cap * sizeof(double));
    }
    c->p[c->n] = p;
    c->v[c->n] = v;
    c->n++;
}

/* The "Value Percentile TotalCount 1/(1-Percentile)" rows of an .hgrm file; a missing or
 * empty file leaves c empty. */
static void curve_from_hgrm(struct report_curve *c, const char *dir, const char *name)
{
    char *path = flood_xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return;
    char line[256];
    size_t cap = 0;
    while (fgets(line, sizeof(line), f)) {
        double v, p, count;
        if (line[0] == '#')
            continue;
        if (sscanf(line, "%lf %lf %lf", &v, &p, &count) == 3 && isfinite(v) && p >= 0 && p <= 1)
            curve_add(c, &cap, p, v);
    }
    fclose(f);
}

/* Without an .hgrm file: the points of a run.json percentile object ({"p50": ms, ...}). */
static void curve_from_json(struct report_curve *c, const json_t *pct)
{
    static const struct {
        const char *key;
        double p;
    } pts[] = {{"min", 0}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}, {"max", 1}};
    if (!json_is_object(pct) || !(report_jnum(pct, "count") > 0))
        return;
    size_t cap = 0;
    for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
        double v = report_jnum(pct, pts[i].key);
        if (isfinite(v))
            curve_add(c, &cap, pts[i].p, v);
    }
}

static void curve_load(struct report_curve *c, const char *dir, const char *hgrm, const json_t *pct)
{
    curve_from_hgrm(c, dir, hgrm);
    /* an .hgrm of an empty histogram has no rows worth drawing */
    if (c->n <= 1) {
        free(c->p);
        free(c->v);
        memset(c, 0, sizeof(*c));
        curve_from_json(c, pct);
    }
}

static void curve_free(struct report_curve *c)
{
    free(c->p);
    free(c->v);
}

int report_has_key(const json_t *series, const char *key)
{
    size_t i;
    json_t *e;
    json_array_foreach(series, i, e) if (json_object_get(e, key)) return 1;
    return 0;
}

static double *col(const json_t *series, const char *key)
{
    size_t n = json_array_size(series), i;
    double *out = flood_xcalloc(n ? n : 1, sizeof(double));
    json_t *e;
    json_array_foreach(series, i, e) out[i] = report_jnum(e, key);
    return out;
}

static double outcome(const json_t *e, const char *key)
{
    double v = report_jnum(json_object_get(e, "outcomes"), key);
    return isfinite(v) ? v : 0;
}

static void cols_load(struct report_cols *c, const json_t *series)
{
    size_t n = json_array_size(series), i;
    c->n = n;
    c->t = col(series, "t");
    c->offered = col(series, "offered");
    c->sent = col(series, "sent");
    c->completed = col(series, "completed");
    c->shed = col(series, "shed");
    c->p50 = col(series, "p50_ms");
    c->p99 = col(series, "p99_ms");
    c->max = col(series, "max_ms");
    c->svc_p50 = col(series, "service_p50_ms");
    c->svc_p99 = col(series, "service_p99_ms");
    c->lag_p99 = col(series, "lag_p99_ms");
    c->steal = col(series, "steal_ms");
    c->in_flight = col(series, "in_flight");
    size_t sz = (n ? n : 1) * sizeof(double);
    c->ok = flood_xmalloc(sz);
    c->auth = flood_xmalloc(sz);
    c->r429 = flood_xmalloc(sz);
    c->r503 = flood_xmalloc(sz);
    c->other = flood_xmalloc(sz);
    c->tmid = flood_xmalloc(sz);
    c->tend = flood_xmalloc(sz);
    json_t *e;
    json_array_foreach(series, i, e)
    {
        if (!isfinite(c->t[i]))
            c->t[i] = (double)i;
        c->tmid[i] = c->t[i] + 0.5;
        c->tend[i] = c->t[i] + 1;
        /* a second with no completion has no latency (run.json writes 0): leave a gap */
        if (!(c->completed[i] > 0))
            c->p50[i] = c->p99[i] = c->max[i] = c->svc_p50[i] = c->svc_p99[i] = NAN;
        if (!isfinite(c->shed[i]))
            c->shed[i] = 0;
        c->ok[i] = outcome(e, "200") + outcome(e, "202") + outcome(e, "2xx_other");
        c->auth[i] = outcome(e, "401") + outcome(e, "403");
        c->r429[i] = outcome(e, "429");
        c->r503[i] = outcome(e, "503");
        /* every other class, whatever its name: the stack then adds up to completed */
        double all = 0;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(e, "outcomes"), k, v) if (json_is_number(v)) all +=
            json_number_value(v);
        c->other[i] = all - c->ok[i] - c->auth[i] - c->r429[i] - c->r503[i];
    }
}

static void cols_free(struct report_cols *c)
{
    free(c->tmid);
    free(c->tend);
    double *all[] = {c->t,    c->offered, c->sent,    c->completed, c->ok,        c->auth,
                     c->r429, c->r503,    c->other,   c->shed,      c->p50,       c->p99,
                     c->max,  c->svc_p50, c->svc_p99, c->lag_p99,   c->in_flight, c->steal};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        free(all[i]);
}

int report_run_load(struct report_run *r, const char *dir, struct flood_err *err)
{
    memset(r, 0, sizeof(*r));
    r->root = report_load_run(dir, err);
    if (!r->root)
        return -1;
    r->dir = flood_xstrdup(dir);
    cols_load(&r->c, json_object_get(r->root, "series"));
    curve_load(&r->latency, dir, "latency-all.hgrm", jpath_get(r->root, "totals.latency_ms"));
    curve_load(&r->service, dir, "service-all.hgrm", jpath_get(r->root, "totals.service_ms"));
    curve_load(&r->lag, dir, "lag-all.hgrm", jpath_get(r->root, "totals.dispatch_lag_ms"));
    json_t *fa = jpath_get(r->root, "probes.follow_to_accept_ms");
    if (!fa)
        fa = jpath_get(r->root, "inbound.follow_to_accept_ms");
    curve_load(&r->f2a, dir, "follow-to-accept.hgrm", fa);
    return 0;
}

void report_run_free(struct report_run *r)
{
    json_decref(r->root);
    cols_free(&r->c);
    curve_free(&r->latency);
    curve_free(&r->service);
    curve_free(&r->lag);
    curve_free(&r->f2a);
    free(r->dir);
}

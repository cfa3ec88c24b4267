/* flood/measure/tqueue_http.c: the sources read over HTTP (a Fedify server's benchmark stats,
 * a Prometheus exposition, a JSON document) and from a command.
 *
 * Fedify 2.3's benchmark mode serves GET /.well-known/fedify/bench/stats
 * (packages/fedify/src/federation/bench.ts): its OpenTelemetry meters as JSON, scopeMetrics[]
 * .metrics[] each {name, dataPointType, dataPoints[{attributes, value}]}. The queue depth is
 * the gauge "fedify.queue.depth" with attributes "fedify.queue.role" (inbox, outbox, fanout,
 * or shared for one queue serving several) and "fedify.queue.depth.state" (queued, ready,
 * delayed) (packages/fedify/src/federation/metrics.ts); signature verification time is the
 * histogram "activitypub.signature.verification.duration" in ms, cumulative. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/http.h"
#include "flood/core/jpath.h"
#include "flood/measure/tqueue_int.h"

/* ---- Prometheus text exposition (pure) ------------------------------------------------ */

/* Whether every label="value" of want (a "{...}" text, or "") is among the labels of a
 * sample line (have: the text between its braces). */
static int labels_match(const char *have, size_t have_n, const char *want)
{
    if (!*want)
        return 1;
    const char *w = want + 1, *end = want + strlen(want) - 1; /* inside the braces */
    while (w < end) {
        const char *comma = memchr(w, ',', (size_t)(end - w));
        const char *stop = comma ? comma : end;
        size_t n = (size_t)(stop - w);
        while (n && isspace((unsigned char)*w))
            w++, n--;
        if (n) {
            /* a label pair, as written in the exposition: name="value" */
            int found = 0;
            for (size_t i = 0; i + n <= have_n && !found; i++)
                found =
                    !memcmp(have + i, w, n) &&
                    (i == 0 || have[i - 1] == ',' || have[i - 1] == ' ' || have[i - 1] == '{') &&
                    (i + n == have_n || have[i + n] == ',' || have[i + n] == ' ');
            if (!found)
                return 0;
        }
        w = stop + 1;
    }
    return 1;
}

int tq_prom_value(const char *text, size_t len, const char *name, const char *want, double *value,
                  struct flood_err *err)
{
    size_t nl = strlen(name);
    double sum = 0;
    int matched = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = eol ? eol : end;
        const char *next = eol ? eol + 1 : end;
        if (line_end - p > (long)nl && !memcmp(p, name, nl) &&
            (p[nl] == '{' || p[nl] == ' ' || p[nl] == '\t')) {
            const char *q = p + nl, *labels = "";
            size_t labels_n = 0;
            if (*q == '{') {
                /* a label value may hold '}' inside quotes: find the closing brace outside */
                int quoted = 0;
                const char *c = q + 1;
                for (; c < line_end && (quoted || *c != '}'); c++) {
                    if (*c == '\\' && quoted && c + 1 < line_end)
                        c++;
                    else if (*c == '"')
                        quoted = !quoted;
                }
                if (c >= line_end) {
                    flood_err_set(err, FLOOD_EINVAL, "prometheus: '%s': unclosed labels", name);
                    return -1;
                }
                labels = q + 1;
                labels_n = (size_t)(c - q - 1);
                q = c + 1;
            }
            if (labels_match(labels, labels_n, want)) {
                char num[64];
                while (q < line_end && (*q == ' ' || *q == '\t'))
                    q++;
                size_t vn = 0;
                while (q + vn < line_end && q[vn] != ' ' && q[vn] != '\t' && q[vn] != '\r')
                    vn++;
                if (vn == 0 || vn >= sizeof(num)) {
                    flood_err_set(err, FLOOD_EINVAL, "prometheus: '%s': a sample without a value",
                                  name);
                    return -1;
                }
                memcpy(num, q, vn);
                num[vn] = '\0';
                char *e;
                double v = strtod(num, &e); /* the format's floats: 1e3, +Inf, NaN */
                if (*e) {
                    flood_err_set(err, FLOOD_EINVAL, "prometheus: '%s': bad value '%s'", name, num);
                    return -1;
                }
                if (isfinite(v)) {
                    sum += v;
                    matched++;
                }
            }
        }
        p = next;
    }
    if (!matched) {
        flood_err_set(err, FLOOD_ENOTFOUND, "prometheus: no sample of %s%s", name, want);
        return -1;
    }
    *value = sum;
    return 0;
}

/* ---- a Fedify benchmark snapshot (pure) ---------------------------------------------- */

static enum tq_role fedify_role(const char *role, const char *state)
{
    if (!strcmp(state, "delayed"))
        return TQ_SCHEDULED;
    if (!strcmp(state, "ready"))
        return TQ_OTHER; /* a share of queued: counted once, under queued */
    if (!strcmp(role, "inbox") || !strcmp(role, "shared"))
        return TQ_INBOUND;
    if (!strcmp(role, "outbox") || !strcmp(role, "fanout"))
        return TQ_OUTBOUND;
    return TQ_OTHER;
}

static void fedify_depth(const json_t *points, struct tq_reading *r)
{
    size_t i;
    const json_t *pt;
    json_array_foreach(points, i, pt)
    {
        const json_t *attrs = json_object_get(pt, "attributes");
        const json_t *v = json_object_get(pt, "value");
        const char *role = json_string_value(json_object_get(attrs, "fedify.queue.role"));
        const char *state = json_string_value(json_object_get(attrs, "fedify.queue.depth.state"));
        if (!json_is_number(v))
            continue;
        char name[TQ_NAME_MAX];
        snprintf(name, sizeof(name), "%.24s.%.24s", role ? role : "queue",
                 state ? state : "queued");
        tq_add(r, name, json_number_value(v), fedify_role(role ? role : "", state ? state : ""));
    }
}

static void fedify_sig(const json_t *points, struct tq_reading *r)
{
    double count = 0, sum = 0;
    size_t i;
    const json_t *pt;
    json_array_foreach(points, i, pt)
    {
        const json_t *v = json_object_get(pt, "value");
        count += json_number_value(json_object_get(v, "count"));
        sum += json_number_value(json_object_get(v, "sum"));
    }
    tq_add(r, "sigverify.count", count, TQ_OTHER);
    tq_add(r, "sigverify.sum_ms", sum, TQ_OTHER);
}

int tq_fedify_gauges(const json_t *snapshot, struct tq_reading *r, struct flood_err *err)
{
    const json_t *scopes = json_object_get(snapshot, "scopeMetrics");
    if (!json_is_array(scopes)) {
        flood_err_set(err, FLOOD_EINVAL,
                      "fedify: not a benchmark stats snapshot (no scopeMetrics)");
        return -1;
    }
    size_t i, k;
    const json_t *scope, *m;
    json_array_foreach(scopes, i, scope)
    {
        json_array_foreach(json_object_get(scope, "metrics"), k, m)
        {
            const char *name = json_string_value(json_object_get(m, "name"));
            const json_t *points = json_object_get(m, "dataPoints");
            if (!name || !json_is_array(points))
                continue;
            if (!strcmp(name, "fedify.queue.depth"))
                fedify_depth(points, r);
            else if (!strcmp(name, "activitypub.signature.verification.duration"))
                fedify_sig(points, r);
        }
    }
    return 0;
}

/* ---- reading over HTTP ------------------------------------------------------------------ */

/* GET the source's URL (core/http.c: the 2 s limit, a body cap, no redirect): 0 and the
 * answer (http_resp_free it), or -1 with r failed. */
static int get(struct tq_source *s, struct tq_reading *r, struct http_resp *out)
{
    struct http_opts o = {.timeout_ms = TQ_TIMEOUT_MS, .max_body = TQ_BODY_MAX};
    struct flood_err err = {0};
    char who[16];
    snprintf(who, sizeof(who), "%s", tq_source_kind(s));
    struct http_req req = {.method = HTTP_GET, .url = s->url, .o = &o, .who = who};
    if (http_fetch(&req, out, &err) < 0) {
        tq_fail(r, "%s", err.msg);
        return -1;
    }
    if (out->status != 200) {
        tq_fail(r, "%s: %s: status %ld", who, s->url, out->status);
        http_resp_free(out);
        return -1;
    }
    return 0;
}

static void read_fedify(struct tq_source *s, struct tq_reading *r, const struct http_resp *b)
{
    json_error_t je;
    json_t *j = json_loadb(b->body, b->len, 0, &je);
    struct flood_err err = {0};
    if (!j || tq_fedify_gauges(j, r, &err)) {
        tq_fail(r, "fedify: %s: %s", s->url, j ? err.msg : je.text);
        json_decref(j);
        return;
    }
    json_decref(j);
    /* the mean verification time over the second since the last reading */
    double count = -1, sum = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!strcmp(r->g[i].name, "sigverify.count"))
            count = r->g[i].value;
        else if (!strcmp(r->g[i].name, "sigverify.sum_ms"))
            sum = r->g[i].value;
    }
    if (count >= 0) {
        if (s->sig_have && count > s->sig_count)
            tq_add(r, "sigverify_ms", (sum - s->sig_sum) / (count - s->sig_count), TQ_OTHER);
        s->sig_count = count;
        s->sig_sum = sum;
        s->sig_have = 1;
    }
}

static void read_cmd(struct tq_source *s, struct tq_reading *r)
{
    FILE *p = popen(s->path, "r");
    if (!p) {
        tq_fail(r, "cmd: cannot run '%s'", s->path);
        return;
    }
    double v;
    int ok = fscanf(p, "%lf", &v) == 1 && isfinite(v);
    int rc = pclose(p);
    if (!ok || rc != 0)
        tq_fail(r, "cmd: '%.60s' %s", s->path,
                rc != 0 ? "exited with an error" : "printed no number");
    else
        tq_add(r, "depth", v, TQ_INBOUND);
}

void tq_http_read(struct tq_source *s, struct tq_reading *r)
{
    if (s->kind == TQ_CMD) {
        read_cmd(s, r);
        return;
    }
    struct http_resp b = {0};
    if (get(s, r, &b))
        return;
    if (s->kind == TQ_FEDIFY) {
        read_fedify(s, r, &b);
    } else if (s->kind == TQ_PROMETHEUS) {
        double v;
        struct flood_err err = {0};
        if (tq_prom_value(b.body, b.len, s->metric, s->labels, &v, &err))
            tq_fail(r, "%s: %s", s->url, err.msg);
        else
            tq_add(r, "depth", v, TQ_INBOUND);
    } else {
        json_t *j = json_loadb(b.body, b.len, 0, NULL);
        const json_t *v = jpath_get(j, s->path);
        if (!json_is_number(v))
            tq_fail(r, "json: %s: no number at '%s'", s->url, s->path);
        else
            tq_add(r, "depth", json_number_value(v), TQ_INBOUND);
        json_decref(j);
    }
    http_resp_free(&b);
}

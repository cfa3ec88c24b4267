/* flood/report/capacity.c: a capacity step judged from its run.json, the verdict, and
 * capacity.json / capacity.html (see capacity.h). */
#include "flood/report/capacity.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/html.h"
#include "flood/report/report.h"
#include "flood/report/report_plot.h"

const char *cap_criterion_name(enum cap_criterion c)
{
    static const char *const names[CAP__COUNT] = {"latency", "errors", "f2a", "queue"};
    return (unsigned)c < CAP__COUNT ? names[c] : "?";
}

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "YYYY-MM-DDTHH:MM:SSZ" to seconds since the epoch, or -1. */
static double iso_time(const char *s)
{
    struct tm tm = {0};
    if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
        return -1;
    return (double)timegm(&tm);
}

/* The queue depth nearest to t among the samples (-1 when there are none within 3 s). */
static double depth_at(const struct cap_sample *s, size_t n, double t)
{
    double best = -1, gap = 3.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(s[i].t - t) <= gap) {
            gap = fabs(s[i].t - t);
            best = s[i].depth;
        }
    return best;
}

/* A gauge of the run's target_queue series: its reading nearest to second t (within 3 s),
 * or -1 when none. */
static double gauge_at(const json_t *series, const char *source, const char *gauge, double t)
{
    double best = -1, gap = 3.5;
    size_t i;
    const json_t *row;
    json_array_foreach(series, i, row)
    {
        const json_t *v =
            json_object_get(json_object_get(json_object_get(row, "target_queue"), source), gauge);
        double dt = fabs(num(row, "t") - t);
        if (json_is_number(v) && dt < gap) {
            gap = dt;
            best = json_number_value(v);
        }
    }
    return best;
}

/* A gauge's growth a second over [t0, t1]: the least-squares slope of its readings there
 * (each reading is one instant of a depth that moves by whole jobs, so a slope over every
 * second of the tail wavers far less than the difference of its two ends), or from its
 * readings nearest the two ends when there are fewer than 3. NAN when it has none. */
static double gauge_growth(const json_t *series, const char *source, const char *gauge, double t0,
                           double t1)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t i;
    const json_t *row;
    json_array_foreach(series, i, row)
    {
        const json_t *v =
            json_object_get(json_object_get(json_object_get(row, "target_queue"), source), gauge);
        double t = num(row, "t");
        if (!json_is_number(v) || t < t0 || t > t1)
            continue;
        double y = json_number_value(v);
        n++;
        sx += t;
        sy += y;
        sxx += t * t;
        sxy += t * y;
    }
    double den = n * sxx - sx * sx;
    if (n >= 3 && den > 0)
        return (n * sxy - sx * sy) / den;
    double d0 = gauge_at(series, source, gauge, t0), d1 = gauge_at(series, source, gauge, t1);
    if (d0 < 0 || d1 < 0)
        return NAN;
    return (d1 - d0) / (t1 - t0 > 0 ? t1 - t0 : 1);
}

/* The growth of the inbound queues over [t0, t1] from the run's own --target-queue
 * readings: the sum of every inbound gauge's growth a second, and the one that grew most
 * into name. NAN when the run read no inbound gauge there. */
static double run_queue_growth(const json_t *run, double t0, double t1, char *name, size_t size)
{
    const json_t *sources = json_object_get(run, "target_queue"),
                 *series = json_object_get(run, "series");
    double sum = 0, most = -INFINITY;
    int any = 0;
    size_t i;
    const json_t *src;
    json_array_foreach(sources, i, src)
    {
        const char *label = json_string_value(json_object_get(src, "source"));
        const char *gauge;
        json_t *info;
        json_object_foreach(json_object_get(src, "gauges"), gauge, info)
        {
            const char *role = json_string_value(json_object_get(info, "role"));
            if (!label || !role || strcmp(role, "inbound"))
                continue;
            double g = gauge_growth(series, label, gauge, t0, t1);
            if (isnan(g))
                continue;
            sum += g;
            any = 1;
            if (g > most) {
                most = g;
                snprintf(name, size, "%s %s", label, gauge);
            }
        }
    }
    return any ? sum : NAN;
}

int cap_judge(const json_t *run, const struct cap_limits *lim, const struct cap_sample *samples,
              size_t n_samples, struct cap_step *out, struct flood_err *err)
{
    static const char *const bad_keys[] = {"401", "403",       "408",     "429",      "4xx_other",
                                           "503", "5xx_other", "timeout", "transport"};
    const json_t *series = json_object_get(run, "series");
    if (!json_is_array(series) || !json_array_size(series)) {
        flood_err_set(err, FLOOD_EINVAL, "capacity: the step's run.json has no per-second series");
        return -1;
    }
    double tail_start = lim->hold_s * (1 - lim->tail), end = lim->hold_s;
    size_t n = json_array_size(series), np99 = 0;
    double *p99 = flood_xcalloc(n, sizeof(double));
    double completed = 0, bad = 0, sent = 0, offered = 0, f2a = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(series, i);
        double t = num(s, "t");
        if (t >= tail_start && num(s, "accepts") > 0 && num(s, "f2a_p99_ms") > f2a)
            f2a = num(s, "f2a_p99_ms");
        if (t < tail_start || t >= end)
            continue;
        double c = num(s, "completed");
        completed += c;
        sent += num(s, "sent");
        offered += num(s, "offered");
        const json_t *oc = json_object_get(s, "outcomes");
        for (size_t k = 0; k < sizeof(bad_keys) / sizeof(bad_keys[0]); k++)
            bad += num(oc, bad_keys[k]);
        if (c > 0)
            p99[np99++] = num(s, "p99_ms");
    }
    const json_t *probes = json_object_get(run, "probes");
    double after = num(json_object_get(probes, "after_series"), "f2a_p99_ms");
    if (after > f2a)
        f2a = after;
    qsort(p99, np99, sizeof(double), cmp_double);
    out->value[CAP_LATENCY] =
        np99 ? (np99 % 2 ? p99[np99 / 2] : (p99[np99 / 2 - 1] + p99[np99 / 2]) / 2) : 0;
    free(p99);
    out->value[CAP_ERRORS] = completed > 0 ? bad / completed : (sent > 0 ? 1 : 0);
    /* a Follow refused (429 and the like) got no Accept either: the step did not hold */
    out->unanswered = (unsigned long)(num(probes, "open") + num(probes, "refused"));
    out->value[CAP_F2A] = out->unanswered ? INFINITY : f2a;
    double tail_s = end - tail_start > 0 ? end - tail_start : 1;
    out->sent_rate = sent / tail_s;
    out->offered_rate = offered / tail_s;
    out->queue[0] = '\0';
    out->value[CAP_QUEUE] = run_queue_growth(run, tail_start, end, out->queue, sizeof(out->queue));
    if (isnan(out->value[CAP_QUEUE])) {
        out->queue[0] = '\0';
        double t0 = iso_time(json_string_value(json_object_get(run, "started_at")));
        double d0 = t0 >= 0 ? depth_at(samples, n_samples, t0 + tail_start) : -1;
        double d1 = t0 >= 0 ? depth_at(samples, n_samples, t0 + end) : -1;
        out->value[CAP_QUEUE] = d0 >= 0 && d1 >= 0 ? (d1 - d0) / tail_s : NAN;
    }

    /* a queue that grew: what the target took in (the tail's sent rate, by the share of
     * its answers that were 2xx: a second's last answers come in the next one) less the
     * growth is what it processed, its capacity while it was behind */
    double ok = completed > 0 ? (completed - bad) / completed : 0;
    out->processed_rate = out->value[CAP_QUEUE] > 0 && ok > 0
                              ? fmax(0, out->sent_rate * ok - out->value[CAP_QUEUE])
                              : NAN;

    out->judged[CAP_LATENCY] = lim->latency_ms > 0;
    out->judged[CAP_ERRORS] = lim->errors > 0;
    out->judged[CAP_F2A] = lim->f2a_ms > 0 && num(probes, "follows_sent") > 0;
    out->judged[CAP_QUEUE] = lim->queue_share >= 0 && !isnan(out->value[CAP_QUEUE]);
    out->limit[CAP_LATENCY] = lim->latency_ms;
    out->limit[CAP_ERRORS] = lim->errors;
    out->limit[CAP_F2A] = lim->f2a_ms;
    out->limit[CAP_QUEUE] = lim->queue_share * out->rate;
    const double *limit = out->limit;
    out->pass = 1;
    out->broke = -1;
    double worst = 0;
    for (int c = 0; c < CAP__COUNT; c++) {
        if (!out->judged[c] || !(out->value[c] > limit[c] || (c == CAP_ERRORS && completed == 0)))
            continue;
        out->pass = 0;
        /* how far over: the one most over broke first */
        double over = limit[c] > 0 ? out->value[c] / limit[c] : INFINITY;
        if (out->broke < 0 || over > worst) {
            worst = over;
            out->broke = c;
        }
    }
    const json_t *gen = json_object_get(run, "generator");
    out->gen_lag_ms = num(gen, "lag_p99_ms");
    out->gen_loop_share = num(gen, "loop_cpu_share");
    out->flood_limited = json_is_true(json_object_get(gen, "saturated")) &&
                         ((offered > 0 && sent < 0.95 * offered) ||
                          (lim->latency_ms > 0 && out->gen_lag_ms >= 0.1 * lim->latency_ms));
    if (out->flood_limited)
        out->pass = 0;
    out->ran = 1;
    return 0;
}

int cap_close(const struct cap_step *s, double margin)
{
    for (int c = 0; c < CAP__COUNT; c++)
        if (s->judged[c] && isfinite(s->value[c]) &&
            fabs(s->value[c] - s->limit[c]) <= margin * s->limit[c])
            return 1;
    return 0;
}

/* A criterion's value as text: "180 ms", "2.1%", "1.2 s", "+35". */
static void value_text(int c, double v, char *buf, size_t size)
{
    if (isinf(v))
        snprintf(buf, size, "unanswered");
    else if (c == CAP_ERRORS)
        snprintf(buf, size, "%.1f%%", v * 100);
    else if (c == CAP_QUEUE)
        snprintf(buf, size, "%+.1f/s", v);
    else if (v >= 1000)
        snprintf(buf, size, "%.1f s", v / 1000);
    else
        snprintf(buf, size, "%.0f ms", v);
}

static const char *const human[CAP__COUNT] = {"p99", "errors", "Follow-to-Accept p99",
                                              "queue growth"};

void cap_verdict(const struct cap_step *best, const struct cap_step *fail,
                 const struct cap_limits *lim, char *buf, size_t size)
{
    size_t o = 0;
    char v[64];
    if (best) {
        o += (size_t)snprintf(buf + o, size - o, "sustains %.4g/s (", best->rate);
        int first = 1;
        for (int c = 0; c < CAP__COUNT && o < size; c++) {
            if (!best->judged[c])
                continue;
            value_text(c, best->value[c], v, sizeof(v));
            o += (size_t)snprintf(buf + o, size - o, "%s%s %s", first ? "" : ", ", human[c], v);
            first = 0;
        }
        o += (size_t)snprintf(buf + o, o < size ? size - o : 0, ")");
    } else
        o += (size_t)snprintf(buf, size, "sustains none of the rates tried");
    (void)lim;
    if (fail && fail->flood_limited && o < size) {
        snprintf(buf + o, size - o,
                 "; at %.4g/s flood's generator was saturated (it sent %.4g/s of %.4g/s "
                 "offered, dispatch lag p99 %.0f ms, event loop at %.0f%% of a core): the "
                 "limit there was flood's, not the target's (give it more cores, --loops or "
                 "shards)",
                 fail->rate, fail->sent_rate, fail->offered_rate, fail->gen_lag_ms,
                 fail->gen_loop_share * 100);
    } else if (fail && fail->broke >= 0 && o < size) {
        char l[64];
        value_text(fail->broke, fail->value[fail->broke], v, sizeof(v));
        value_text(fail->broke, fail->limit[fail->broke], l, sizeof(l));
        int named = fail->broke == CAP_QUEUE && fail->queue[0];
        snprintf(buf + o, size - o, "; at %.4g/s %s %s%s%s%s breaks the %s limit", fail->rate,
                 human[fail->broke], v, named ? " (" : "", named ? fail->queue : "",
                 named ? ")" : "", l);
    } else if (!fail && o < size)
        snprintf(buf + o, size - o, "; no rate tried broke a limit (raise --max-rate)");
}

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *cap_json(const struct cap_step *steps, size_t n, const struct cap_limits *lim,
                 const struct cap_step *best, const struct cap_step *fail, const char *verdict)
{
    json_t *root = json_object(), *l = json_object(), *a = json_array();
    json_object_set_new(l, "latency_p99_ms", json_real(lim->latency_ms));
    json_object_set_new(l, "errors", json_real(lim->errors));
    json_object_set_new(l, "f2a_p99_ms", json_real(lim->f2a_ms));
    json_object_set_new(l, "queue_growth_share", json_real(lim->queue_share));
    json_object_set_new(l, "tail", json_real(lim->tail));
    json_object_set_new(l, "hold_s", json_real(lim->hold_s));
    for (size_t i = 0; i < n; i++) {
        const struct cap_step *s = &steps[i];
        json_t *o = json_object(), *vals = json_object(), *lims = json_object();
        json_object_set_new(o, "rate", json_real(s->rate));
        json_object_set_new(o, "dir", json_string(s->dir));
        json_object_set_new(o, "ran", json_boolean(s->ran));
        json_object_set_new(o, "pass", json_boolean(s->pass));
        json_object_set_new(
            o, "broke", s->broke >= 0 ? json_string(cap_criterion_name(s->broke)) : json_null());
        for (int c = 0; c < CAP__COUNT; c++)
            if (s->judged[c]) {
                json_object_set_new(vals, cap_criterion_name(c), jnum(s->value[c]));
                json_object_set_new(lims, cap_criterion_name(c), jnum(s->limit[c]));
            }
        json_object_set_new(o, "values", vals);
        json_object_set_new(o, "limits", lims);
        json_object_set_new(o, "runs", json_integer(s->runs));
        json_object_set_new(o, "runs_sustained", json_integer(s->passes));
        json_object_set_new(o, "repeated_because",
                            s->runs < 2         ? json_null()
                            : s->repeat_confirm ? json_string("confirm a failure")
                                                : json_string("close to a limit"));
        json_object_set_new(o, "unanswered_follows", json_integer((json_int_t)s->unanswered));
        json_object_set_new(o, "sent_per_s", json_real(s->sent_rate));
        json_object_set_new(o, "offered_per_s", json_real(s->offered_rate));
        json_object_set_new(o, "processed_per_s", jnum(s->processed_rate));
        json_object_set_new(o, "flood_limited", json_boolean(s->flood_limited));
        json_object_set_new(o, "queue", s->queue[0] ? json_string(s->queue) : json_null());
        json_array_append_new(a, o);
    }
    json_object_set_new(root, "limits", l);
    json_object_set_new(root, "steps", a);
    json_object_set_new(root, "sustained_rate", best ? json_real(best->rate) : json_null());
    json_object_set_new(root, "first_failing_rate", fail ? json_real(fail->rate) : json_null());
    json_object_set_new(root, "broke_first",
                        fail && fail->flood_limited ? json_string("generator")
                        : fail && fail->broke >= 0  ? json_string(cap_criterion_name(fail->broke))
                                                    : json_null());
    json_object_set_new(root, "broke_queue",
                        fail && fail->broke == CAP_QUEUE && fail->queue[0]
                            ? json_string(fail->queue)
                            : json_null());
    json_object_set_new(root, "verdict", json_string(verdict));
    return root;
}

int cap_html_write(const char *dir, const json_t *cap, struct flood_err *err)
{
    char path[CAP_DIR_MAX + 32], tmp[CAP_DIR_MAX + 40];
    snprintf(path, sizeof(path), "%s/capacity.html", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "capacity: cannot write '%s': %s", tmp, strerror(errno));
        return -1;
    }
    const json_t *steps = json_object_get(cap, "steps"), *lim = json_object_get(cap, "limits");
    size_t n = json_array_size(steps);
    /* each criterion as value / limit against the rate, sorted by rate: 1.0 is the limit */
    static const char *const keys[CAP__COUNT] = {"latency", "errors", "f2a", "queue"};
    double *xs = flood_xcalloc(n + 1, sizeof(double) * (CAP__COUNT + 2));
    double *ys = xs + (n + 1) * 2;
    struct plot_series ps[CAP__COUNT + 2];
    size_t nps = 0;
    size_t *order = flood_xcalloc(n + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort by rate */
        for (size_t j = i; j > 0 && num(json_array_get(steps, order[j - 1]), "rate") >
                                        num(json_array_get(steps, order[j]), "rate");
             j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++)
        xs[i] = num(json_array_get(steps, order[i]), "rate");
    (void)lim;
    for (int c = 0; c < CAP__COUNT; c++) {
        size_t k = 0;
        double *y = ys + (size_t)c * (n + 1);
        for (size_t i = 0; i < n; i++) {
            const json_t *st = json_array_get(steps, order[i]);
            const json_t *v = json_object_get(json_object_get(st, "values"), keys[c]);
            double l = num(json_object_get(st, "limits"), keys[c]);
            y[i] = json_is_number(v) && l > 0 ? json_number_value(v) / l : NAN;
            k += json_is_number(v);
        }
        if (k)
            ps[nps++] = (struct plot_series){
                .name = keys[c], .color = plot_color((size_t)c), .x = xs, .y = y, .n = n};
    }
    double limx[2] = {n ? xs[0] : 0, n ? xs[n - 1] : 1}, limy[2] = {1, 1};
    ps[nps++] = (struct plot_series){
        .name = "limit", .color = "#c0392b", .x = limx, .y = limy, .n = 2, .dashed = 1};
    const json_t *best = json_object_get(cap, "sustained_rate");
    double kx[2] = {json_number_value(best), json_number_value(best)}, ky[2] = {0, 1.5};
    if (json_is_number(best))
        ps[nps++] = (struct plot_series){
            .name = "knee (sustained)", .color = "#27ae60", .x = kx, .y = ky, .n = 2, .dashed = 1};

    report_page_head(f, "flood capacity");
    fputs("<h1>flood capacity</h1>\n<p id=\"verdict\">", f);
    html_escape(f, json_string_value(json_object_get(cap, "verdict")));
    fputs("</p>\n", f);
    struct plot p = {.id = "plot-capacity",
                     .title = "Each criterion over its limit, by rate (1 = the limit)",
                     .xlabel = "rate (activities/s)",
                     .ylabel = "value / limit",
                     .kind = PLOT_LINES,
                     .series = ps,
                     .ns = nps};
    plot_svg(f, &p);
    fputs("<h2>Steps</h2>\n<table><tr><th>#</th><th>rate/s</th><th>sent/s (tail)</th>"
          "<th>p99 ms</th><th>errors</th><th>F2A p99 ms</th><th>queue growth/s</th><th>runs</th>"
          "<th>verdict</th><th>run</th></tr>\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(steps, i), *v = json_object_get(s, "values");
        int pass = json_is_true(json_object_get(s, "pass"));
        fprintf(f, "<tr><td>%zu</td><td>%.4g</td><td>%.1f</td>", i + 1, num(s, "rate"),
                num(s, "sent_per_s"));
        for (int c = 0; c < CAP__COUNT; c++) {
            const json_t *x = json_object_get(v, keys[c]);
            if (!x)
                fputs("<td>-</td>", f);
            else if (json_is_null(x))
                fputs("<td>unanswered</td>", f);
            else if (c == CAP_ERRORS)
                fprintf(f, "<td>%.2f%%</td>", json_number_value(x) * 100);
            else
                fprintf(f, "<td>%.1f</td>", json_number_value(x));
        }
        fprintf(f, "<td>%.0f</td><td class=\"%s\">%s", num(s, "runs"), pass ? "ok" : "bad",
                pass ? "sustained" : "broke: ");
        if (json_is_true(json_object_get(s, "flood_limited")))
            fputs("flood's generator (saturated)", f);
        else if (!pass)
            html_escape(f, json_string_value(json_object_get(s, "broke")));
        fputs("</td><td><a href=\"", f);
        html_escape(f, json_string_value(json_object_get(s, "dir")));
        fputs("/report.html\">report</a></td></tr>\n", f);
    }
    fputs("</table>\n</body></html>\n", f);
    free(xs);
    free(order);
    if (fclose(f) || rename(tmp, path)) {
        flood_err_set(err, FLOOD_EIO, "capacity: cannot write '%s'", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}

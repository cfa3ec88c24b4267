/* flood/report/merge_parts.c: the records of one crowd in flood merge (merge_parts.h). */
#include "flood/report/merge_parts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/egress.h"
#include "flood/measure/hist.h"
#include "sign/err.h"

void merge_add_numbers(json_t *acc, const json_t *v)
{
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        json_t *a = json_object_get(acc, k);
        if (!a)
            json_object_set_new(acc, k, json_deep_copy(x));
        else if (json_is_integer(a) && json_is_integer(x))
            json_integer_set(a, json_integer_value(a) + json_integer_value(x));
        else if (json_is_real(a) && json_is_number(x))
            json_real_set(a, json_real_value(a) + json_number_value(x));
        else if (json_is_object(a) && json_is_object(x))
            merge_add_numbers(a, x);
    }
}

static uint64_t u64(const json_t *o, const char *k)
{
    json_int_t v = json_integer_value(json_object_get(o, k));
    return v > 0 ? (uint64_t)v : 0;
}

static uint64_t sum_members(const json_t *o)
{
    uint64_t n = 0;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)o, k, x) n += (uint64_t)json_integer_value(x);
    return n;
}

/* ---- egress ---------------------------------------------------------------------------- */

/* The conservation of the summed record, as egress_conservation words it. */
static json_t *egress_conserved(const json_t *m, int shards_ok)
{
    struct egress_totals t = {0};
    const json_t *cn = json_object_get(m, "connections"), *tu = json_object_get(m, "tunnels");
    t.accepted = u64(cn, "accepted");
    t.closed = u64(cn, "closed");
    t.requests = u64(m, "requests");
    t.relayed = u64(m, "relayed");
    t.answered = u64(m, "answered");
    t.failed = u64(m, "failed");
    t.refused = u64(m, "refused");
    t.bad = u64(m, "malformed");
    t.connects = u64(m, "connects");
    t.tunnels_ended[0] = sum_members(json_object_get(tu, "closed_by"));
    char line[512];
    int ok = egress_conservation(&t, 0, line, sizeof(line)) == 0 && shards_ok;
    return json_pack("{s:b, s:s}", "ok", ok, "line", line);
}

json_t *merge_egress(json_t *const *runs, size_t n)
{
    json_t *m = json_object(), *proxies = json_array();
    size_t with = 0;
    int shards_ok = 1;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_object_get(runs[i], "egress");
        if (!json_is_object(e))
            continue;
        with++;
        json_array_append_new(proxies,
                              json_string(json_string_value(json_object_get(e, "proxy")) ?: ""));
        shards_ok &= json_is_true(json_object_get(json_object_get(e, "conservation"), "ok"));
        merge_add_numbers(m, e);
    }
    if (!with) {
        json_decref(m);
        json_decref(proxies);
        return NULL;
    }
    /* the text fields the sum took from the first shard */
    char joined[1024] = "";
    size_t i, at = 0;
    json_t *p;
    json_array_foreach(proxies, i, p)
    {
        int w =
            snprintf(joined + at, sizeof(joined) - at, "%s%s", i ? ", " : "", json_string_value(p));
        if (w < 0 || (size_t)w >= sizeof(joined) - at)
            break;
        at += (size_t)w;
    }
    json_object_set_new(m, "proxy", json_string(joined));
    json_object_set_new(m, "proxies", proxies);
    json_object_set_new(m, "shards", json_integer((json_int_t)with));
    json_object_set_new(m, "conservation", egress_conserved(m, shards_ok));
    json_object_set_new(
        m, "not_merged",
        json_pack("{s:s, s:s}", "connections.open_max",
                  "the sum of the shards' peaks, an upper bound: each shard's proxy counts the "
                  "connections open at once to it, and the shards' peaks need not coincide",
                  "instances.open_max",
                  "per instance, the sum of the shards' peaks: an upper bound, as above"));
    return m;
}

/* ---- inbound ----------------------------------------------------------------------------- */

/* {p50, ..., max, count}: a latency summary (inbound's and fanout's hist_json/pct). */
static int is_summary(const json_t *v)
{
    return json_is_object(v) && json_object_get(v, "p50") && json_object_get(v, "count");
}

/* A summary of the shards' summaries sh[0..n) (NULL where a shard has none): counts summed,
 * max the largest, each percentile the largest of the shards' with samples (an upper
 * bound: at that value every shard, so the whole, has reached the percentile). */
static json_t *summary_of(json_t *const *sh, size_t n)
{
    json_t *m = json_object();
    json_int_t count = 0;
    for (size_t i = 0; i < n; i++) {
        json_int_t c = json_integer_value(json_object_get(sh[i], "count"));
        if (!is_summary(sh[i]) || c <= 0)
            continue;
        count += c;
        const char *k;
        json_t *x;
        json_object_foreach(sh[i], k, x)
        {
            if (!json_is_number(x) || !strcmp(k, "count"))
                continue;
            json_t *a = json_object_get(m, k);
            if (!a || json_number_value(x) > json_number_value(a))
                json_object_set_new(m, k, json_real(json_number_value(x)));
        }
    }
    /* with no sample anywhere: the shape of the shards' summaries, zeros */
    for (size_t i = 0; i < n; i++) {
        const char *k;
        json_t *x;
        json_object_foreach(is_summary(sh[i]) ? sh[i] : NULL, k, x)
        {
            if (json_is_number(x) && !json_object_get(m, k))
                json_object_set_new(m, k, json_real(0));
        }
    }
    json_object_set_new(m, "count", json_integer(count));
    return m;
}

/* acc's summaries, at any depth, remade from the shards' objects at the same place. */
static void fix_summaries(json_t *acc, json_t *const *sh, size_t n)
{
    json_t **at = flood_xcalloc(n ? n : 1, sizeof(*at));
    const char *k;
    json_t *x;
    json_object_foreach(acc, k, x)
    {
        if (!json_is_object(x))
            continue;
        for (size_t i = 0; i < n; i++)
            at[i] = json_object_get(sh[i], k);
        if (is_summary(x))
            json_object_set_new(acc, k, summary_of(at, n));
        else
            fix_summaries(x, at, n);
    }
    free(at);
}

/* Summary k of the shards' inbound records sh[0..n) from their histograms (inbound.exact.k,
 * hist_encode text) merged: every percentile the summary has, max and count, exact; its
 * text into exact. 0, or -1 when a shard with samples has no histogram (an older flood). */
static int exact_summary(json_t *const *sh, size_t n, const char *k, json_t **out, json_t *exact)
{
    struct hist *h = hist_new(), *tmp = hist_new();
    const json_t *shape = NULL;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const json_t *v = json_object_get(sh[i], k);
        if (!is_summary(v))
            continue;
        shape = shape ? shape : v;
        if (json_integer_value(json_object_get(v, "count")) <= 0)
            continue;
        const char *t = json_string_value(json_object_get(json_object_get(sh[i], "exact"), k));
        struct flood_err err;
        if (!t || hist_decode(tmp, t, &err))
            rc = -1;
        else
            hist_merge(h, tmp);
    }
    if (!rc && shape) {
        *out = json_object();
        const char *pk;
        json_t *x;
        json_object_foreach((json_t *)shape, pk, x)
        {
            if (pk[0] == 'p')
                json_object_set_new(
                    *out, pk,
                    json_real(hist_value_at_percentile(h, strtod(pk + 1, NULL)) / 1000.0));
        }
        json_object_set_new(*out, "max", json_real(hist_max(h) / 1000.0));
        json_object_set_new(*out, "count", json_integer((json_int_t)hist_count(h)));
        char *text = hist_encode(h);
        json_object_set_new(exact, k, json_string(text));
        free(text);
    }
    hist_free(h);
    hist_free(tmp);
    return shape ? rc : -1;
}

/* inbound's own summaries (follow_to_accept_ms, delivery_lag_ms...), already bounded by
 * fix_summaries, made exact where every shard has their histograms; the names of those
 * left as bounds into not_merged. */
static void exact_summaries(json_t *inbound, json_t *const *sh, size_t n)
{
    json_t *exact = json_object();
    char bound[512] = "";
    size_t at = 0;
    const char *k;
    json_t *x;
    json_object_foreach(inbound, k, x)
    {
        json_t *v = NULL;
        if (!is_summary(x))
            continue;
        if (exact_summary(sh, n, k, &v, exact) == 0)
            json_object_set_new(inbound, k, v);
        else if (at < sizeof(bound)) {
            int w = snprintf(bound + at, sizeof(bound) - at, "%s%s", at ? ", " : "", k);
            at += w > 0 ? (size_t)w : 0;
        }
    }
    json_object_set_new(inbound, "exact", exact);
    if (at)
        json_object_set_new(
            inbound, "not_merged",
            json_pack("{s:s}", bound,
                      "a shard without their histograms (an older flood): counts and max "
                      "exact, each percentile the largest of the shards' (an upper bound)"));
}

/* The shards' records under inbound.NAME (NULL where none) into sh; how many had one. */
static size_t shard_parts(json_t *const *runs, size_t n, const char *name, json_t **sh)
{
    size_t with = 0;
    for (size_t i = 0; i < n; i++) {
        sh[i] = json_object_get(json_object_get(runs[i], "inbound"), name);
        with += json_is_object(sh[i]);
    }
    return with;
}

static json_t *per_shard(json_t *const *sh, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, sh[i] ? json_deep_copy(sh[i]) : json_null());
    return a;
}

/* The retry curve: what counts attempts adds up; what follows one delivery across its
 * attempts (its gaps, whether it got through, its recovery) is per shard. */
static json_t *merge_retry(json_t *const *sh, size_t n)
{
    json_t *m = json_pack("{s:I, s:I, s:{s:I, s:I, s:I, s:I}}", "attempts", (json_int_t)0,
                          "dropped", (json_int_t)0, "answered", "passed", (json_int_t)0, "status",
                          (json_int_t)0, "hang", (json_int_t)0, "reset", (json_int_t)0);
    static const char *const keys[] = {"attempts", "dropped", "answered"};
    for (size_t i = 0; i < n; i++) {
        json_t *part = json_object();
        for (size_t k = 0; sh[i] && k < sizeof(keys) / sizeof(*keys); k++) {
            json_t *v = json_object_get(sh[i], keys[k]);
            if (v)
                json_object_set(part, keys[k], v);
        }
        merge_add_numbers(m, part);
        json_decref(part);
    }
    return m;
}

/* Class k's lag over the shards sh[0..n), exact: each shard's histogram (fan_out.exact.
 * lag_us_by_class, hist_encode text) merged, as fanout_json words it, into *out and its
 * text into exact. 0, or -1 when a shard with samples of the class has no histogram (a run
 * by an older flood) or a bad one: then the caller falls back to the summaries. */
static int exact_lag(json_t *const *sh, size_t n, const char *k, json_t **out, json_t *exact)
{
    struct hist *h = hist_new(), *tmp = hist_new();
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!json_object_get(json_object_get(sh[i], "lag_ms_by_class"), k))
            continue;
        const char *t = json_string_value(json_object_get(
            json_object_get(json_object_get(sh[i], "exact"), "lag_us_by_class"), k));
        struct flood_err err;
        if (!t || hist_decode(tmp, t, &err))
            rc = -1;
        else
            hist_merge(h, tmp);
    }
    if (!rc) {
        *out = json_pack("{s:f, s:f, s:f, s:I}", "p50", hist_value_at_percentile(h, 50) / 1000.0,
                         "p99", hist_value_at_percentile(h, 99) / 1000.0, "max",
                         hist_max(h) / 1000.0, "count", (json_int_t)hist_count(h));
        char *text = hist_encode(h);
        json_object_set_new(exact, k, json_string(text));
        free(text);
    }
    hist_free(h);
    hist_free(tmp);
    return rc;
}

/* The fan-out: deliveries and the shares within 10 s / 60 s add up (the shares weighted by
 * each shard's deliveries), the lag by class from the shards' histograms (exact; without
 * them, as summaries); what follows one post across its deliveries, and the peaks of one
 * crowd's connections, are per shard. *inexact: a class fell back to summaries. */
static json_t *merge_fanout(json_t *const *sh, size_t n, int *inexact)
{
    json_int_t deliveries = 0, untimed = 0;
    double w10 = 0, w60 = 0;
    json_t *cls = json_object();
    for (size_t i = 0; i < n; i++) {
        if (!sh[i])
            continue;
        json_int_t d = json_integer_value(json_object_get(sh[i], "deliveries"));
        deliveries += d;
        untimed += json_integer_value(json_object_get(sh[i], "untimed"));
        w10 += json_number_value(json_object_get(sh[i], "within_10s")) * (double)d;
        w60 += json_number_value(json_object_get(sh[i], "within_60s")) * (double)d;
        const char *k;
        json_t *x;
        json_object_foreach(json_object_get(sh[i], "lag_ms_by_class"), k, x)
        {
            if (!json_object_get(cls, k))
                json_object_set_new(cls, k, json_object());
        }
    }
    json_t **at = flood_xcalloc(n, sizeof(*at)), *exact = json_object();
    const char *k;
    json_t *x;
    *inexact = 0;
    json_object_foreach(cls, k, x)
    {
        json_t *lag = NULL;
        if (exact_lag(sh, n, k, &lag, exact)) {
            for (size_t i = 0; i < n; i++)
                at[i] = json_object_get(json_object_get(sh[i], "lag_ms_by_class"), k);
            lag = summary_of(at, n);
            *inexact = 1;
        }
        json_object_set_new(cls, k, lag);
    }
    free(at);
    if (*inexact) /* all or none: a partial set would merge again wrongly */
        json_object_clear(exact);
    double d = deliveries > 0 ? (double)deliveries : 1;
    json_t *m = json_pack("{s:I, s:I, s:f, s:f, s:o}", "deliveries", deliveries, "untimed", untimed,
                          "within_10s", w10 / d, "within_60s", w60 / d, "lag_ms_by_class", cls);
    if (*inexact)
        json_decref(exact);
    else
        json_object_set_new(m, "exact", json_pack("{s:o}", "lag_us_by_class", exact));
    return m;
}

void merge_inbound(json_t *inbound, json_t *const *runs, size_t n)
{
    json_t **sh = flood_xcalloc(n ? n : 1, sizeof(*sh));
    for (size_t i = 0; i < n; i++)
        sh[i] = json_object_get(runs[i], "inbound");
    json_object_del(inbound, "retry_curve");
    json_object_del(inbound, "fan_out");
    json_object_del(inbound, "population");
    fix_summaries(inbound, sh, n);
    exact_summaries(inbound, sh, n);

    if (shard_parts(runs, n, "retry_curve", sh)) {
        json_t *r = merge_retry(sh, n);
        json_object_set_new(r, "per_shard", per_shard(sh, n));
        json_object_set_new(
            r, "not_merged",
            json_pack("{s:s}",
                      "deliveries, delivered, never_arrived, attempts_per_delivery, "
                      "mean_attempts, max_attempts, gap_ms, retry_after, recovery",
                      "per delivery, from its attempts in order: the target may send one "
                      "delivery's attempts to several shards' crowds, each of which sees only "
                      "its own (and times them from its own start), so these are each "
                      "shard's, under per_shard"));
        json_object_set_new(inbound, "retry_curve", r);
    }
    if (shard_parts(runs, n, "fan_out", sh)) {
        int inexact = 0;
        json_t *f = merge_fanout(sh, n, &inexact);
        json_object_set_new(f, "per_shard", per_shard(sh, n));
        json_object_set_new(
            f, "not_merged",
            json_pack("{s:s, s:s, s:s*}", "posts, per_post, first_ms, last_ms, spread_ms",
                      "per post, from all its deliveries: a post's deliveries reach every shard "
                      "the target spreads them over, so its first and last are no shard's own; "
                      "each shard's under per_shard",
                      "concurrent_per_instance",
                      "a peak of one crowd's: the target's POSTs to an instance split over the "
                      "shards' crowds; each shard's under per_shard",
                      "lag_ms_by_class",
                      inexact ? "a shard without its lag histograms (an older flood): count and "
                                "max exact, each percentile the largest of the shards' (an upper "
                                "bound of the merged one)"
                              : NULL));
        json_object_set_new(inbound, "fan_out", f);
    }
    if (shard_parts(runs, n, "population", sh)) {
        int same = 1;
        for (size_t i = 1; i < n; i++)
            same &= json_equal(sh[i], sh[0]);
        if (same) /* one spec, one seed, one crowd: the classes every shard drew */
            json_object_set_new(inbound, "population", json_deep_copy(sh[0]));
        else
            json_object_set_new(inbound, "population",
                                json_pack("{s:o, s:{s:s}}", "per_shard", per_shard(sh, n),
                                          "not_merged", "classes",
                                          "the shards drew different instance classes (another "
                                          "--population or seed): each shard's under per_shard"));
    }
    free(sh);
}

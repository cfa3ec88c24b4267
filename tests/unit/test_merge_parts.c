/* tests/unit/test_merge_parts.c: flood merge's records of one crowd (flood/report/
 * merge_parts.h). Conservation: the same events recorded by one process and split over two
 * shards give a merged egress record whose every count equals the single process's (the
 * peaks aside, an upper bound said so), refusals by host and the per-instance table joined;
 * the retry curve's attempt counts and the fan-out's deliveries, shares and lag counts add
 * up the same way, what does not add up is kept per shard and named; latency summaries
 * take the largest percentile and the summed count; one population is kept as it is. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/attempts.h"
#include "flood/measure/egress.h"
#include "flood/measure/fanout.h"
#include "flood/measure/hist.h"
#include "flood/report/merge_parts.h"
#include "flood/report/report_retry.h"
#include "tests/check.h"

static const struct wf_crowd wf = {.instances = 50,
                                   .actors = 2,
                                   .domain_template = "flood%d.test",
                                   .scheme = "http",
                                   .version = "1.0.0"};

static uint64_t rng = 88172645463325252ull;
static unsigned next(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* one event into the shard's record and the single process's */
static void ev2(struct egress *a, struct egress *b, struct proxy_event ev)
{
    egress_record(a, &ev);
    egress_record(b, &ev);
}

/* A connection's worth of events: opened, some requests of every kind, closed. */
static void connection(struct egress *sh, struct egress *one)
{
    static const char *const hosts[] = {"canary.example", "10.0.0.9", "evil.example:443"};
    int inst = 1 + (int)next(50);
    ev2(sh, one, (struct proxy_event){.kind = PROXY_EV_ACCEPT});
    ev2(sh, one, (struct proxy_event){.kind = PROXY_EV_INSTANCE, .instance = inst});
    int n = 1 + (int)next(5);
    for (int r = 0; r < n; r++) {
        ev2(sh, one, (struct proxy_event){.kind = PROXY_EV_REQUEST});
        switch (next(5)) {
        case 0:
        case 1:
            ev2(sh, one,
                (struct proxy_event){.kind = PROXY_EV_RELAYED, .instance = inst, .reused = r > 0});
            ev2(sh, one,
                (struct proxy_event){
                    .kind = PROXY_EV_ANSWERED, .instance = inst, .status = next(4) ? 200 : 404});
            break;
        case 2: {
            const char *h = hosts[next(3)];
            ev2(sh, one,
                (struct proxy_event){.kind = PROXY_EV_REFUSED,
                                     .host = h,
                                     .host_len = strlen(h),
                                     .refuse = 1 + (enum proxy_refuse)next(3)});
            break;
        }
        case 3:
            ev2(sh, one, (struct proxy_event){.kind = PROXY_EV_CONNECT, .instance = inst});
            ev2(sh, one,
                (struct proxy_event){.kind = PROXY_EV_TUNNEL_END,
                                     .instance = inst,
                                     .end = (enum proxy_tunnel_end)next(5),
                                     .bytes_up = next(1000),
                                     .bytes_down = next(100000)});
            r = n; /* a tunnel ends the connection's requests */
            break;
        default:
            ev2(sh, one,
                (struct proxy_event){.kind = PROXY_EV_BAD, .bad = (enum proxy_bad)next(4)});
            r = n;
            break;
        }
    }
    ev2(sh, one, (struct proxy_event){.kind = PROXY_EV_CLOSE, .prev = inst, .idle = next(2)});
}

/* Every integer of want (at any depth) equal in got, the key named skip aside; the
 * number that differ, each printed. */
static int same_counts(const json_t *got, const json_t *want, const char *path, const char *skip)
{
    int bad = 0;
    const char *k;
    json_t *w;
    json_object_foreach((json_t *)want, k, w)
    {
        char p[512];
        snprintf(p, sizeof(p), "%s.%s", path, k);
        if (!strcmp(skip, k))
            continue;
        json_t *g = json_object_get(got, k);
        if (json_is_object(w))
            bad += same_counts(g, w, p, skip);
        else if (json_is_integer(w) && json_integer_value(g) != json_integer_value(w)) {
            printf("#   %s: merged %lld, one process %lld\n", p, (long long)json_integer_value(g),
                   (long long)json_integer_value(w));
            bad++;
        }
    }
    return bad;
}

static void test_egress(void)
{
    struct egress *sh[2] = {egress_new(&wf), egress_new(&wf)}, *one = egress_new(&wf);
    egress_set_address(sh[0], "127.0.0.1:3128");
    egress_set_address(sh[1], "127.0.0.2:3128");
    for (int c = 0; c < 400; c++)
        connection(sh[next(2)], one);
    json_t *runs[3] = {json_pack("{s:o}", "egress", egress_json(sh[0], 1)),
                       json_pack("{s:o}", "egress", egress_json(sh[1], 1)), json_object()};
    json_t *m = merge_egress(runs, 3), *o = egress_json(one, 1);
    CHECK(m != NULL, "two shards with a proxy and one without: a merged egress record");
    CHECK(same_counts(m, o, "egress", "open_max") == 0,
          "every count of the merged record = the one process's that saw every event");
    CHECK(json_integer_value(json_object_get(m, "requests")) > 400, "(%lld requests)",
          (long long)json_integer_value(json_object_get(m, "requests")));
    CHECK(json_object_size(json_object_get(m, "instances")) ==
                  json_object_size(json_object_get(o, "instances")) &&
              json_object_size(json_object_get(m, "refused_by_host")) == 3,
          "the per-instance table (%zu instances) and the refused hosts (3) joined",
          json_object_size(json_object_get(m, "instances")));
    CHECK(json_is_true(json_object_get(json_object_get(m, "conservation"), "ok")),
          "the merged record conserved: %s",
          json_string_value(json_object_get(json_object_get(m, "conservation"), "line")));
    CHECK_STR(json_string_value(json_object_get(m, "proxy")), "127.0.0.1:3128, 127.0.0.2:3128",
              "proxy: the shards' proxies");
    CHECK(json_integer_value(json_object_get(m, "shards")) == 2, "shards: 2 had a proxy");
    json_int_t m0 = json_integer_value(json_object_get(
                   json_object_get(json_object_get(runs[0], "egress"), "connections"), "open_max")),
               m1 = json_integer_value(json_object_get(
                   json_object_get(json_object_get(runs[1], "egress"), "connections"), "open_max"));
    CHECK(json_integer_value(json_object_get(json_object_get(m, "connections"), "open_max")) ==
                  m0 + m1 &&
              json_object_get(json_object_get(m, "not_merged"), "connections.open_max"),
          "open_max: the sum of the shards' peaks, said to be an upper bound");
    /* a shard whose proxy's conservation failed: the merged one says so */
    json_object_set_new(json_object_get(json_object_get(runs[1], "egress"), "conservation"), "ok",
                        json_false());
    json_t *m2 = merge_egress(runs, 2);
    CHECK(!json_is_true(json_object_get(json_object_get(m2, "conservation"), "ok")),
          "a shard not conserved: the merged record not conserved");
    json_t *none[1] = {json_object()};
    CHECK(merge_egress(none, 1) == NULL, "no shard with a proxy: no egress record");
    json_decref(none[0]);
    json_decref(m2);
    json_decref(m);
    json_decref(o);
    for (int i = 0; i < 3; i++)
        json_decref(runs[i]);
    egress_free(sh[0]);
    egress_free(sh[1]);
    egress_free(one);
}

static const char *const names[] = {"fast", "slow", "error", "hang", "gone"};

/* summary.md and report.html of a merged inbound: what was summed, and where the rest is;
 * no figure absent */
static void check_rendered(json_t *inbound)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);
    report_retry_summary(mf, inbound);
    json_t *root = json_pack("{s:O}", "inbound", inbound);
    report_retry_section(mf, root);
    fclose(mf);
    CHECK(text && strstr(text, "retry curve, 2 shards merged: 300 attempts") &&
              strstr(text, "fan-out, 2 shards merged: 300 deliveries") &&
              strstr(text, "inbound.fan_out.per_shard") && !strstr(text, "-1") &&
              !strstr(text, "-100"),
          "the merged retry curve and fan-out in summary.md and report.html, per shard named");
    free(text);
    json_decref(root);
}

static void test_inbound(void)
{
    struct fanout *fs[2] = {fanout_new(50), fanout_new(50)}, *fo = fanout_new(50);
    struct attempts *as[2] = {attempts_new(1000), attempts_new(1000)}, *ao = attempts_new(1000);
    int taken_all = 1;
    for (int i = 0; i < 300; i++) {
        char id[64];
        snprintf(id, sizeof(id), "https://t/p/%u", next(20));
        int64_t pub = (int64_t)next(100) * 1000000, at = pub + (int64_t)next(90000) * 1000;
        int cls = (int)next(3), k = (int)next(2);
        fanout_add(fs[k], id, pub, at, cls);
        fanout_add(fo, id, pub, at, cls);
        static const int32_t st[] = {0, 503, 429, ATTEMPT_HANG, ATTEMPT_RESET};
        struct attempt a = {.t_ms = i * 100,
                            .key = next(40),
                            .instance = 1 + (int)next(50),
                            .status = st[next(5)],
                            .retry_after = (int32_t)next(3)};
        if (attempts_add(as[k], &a) != 1 || attempts_add(ao, &a) != 1)
            taken_all = 0;
    }
    CHECK(taken_all, "every attempt taken by the open records");
    json_t *pop = json_pack("{s:s, s:I, s:i}", "spec", "fast=90,error=10", "seed", (json_int_t)7,
                            "instances", 50);
    json_t *runs[2];
    for (int k = 0; k < 2; k++)
        runs[k] = json_pack(
            "{s:{s:o, s:o, s:O, s:{s:f, s:f, s:f, s:f, s:f, s:I}, s:{s:f, s:I}, s:I}}", "inbound",
            "fan_out", fanout_json(fs[k], names), "retry_curve", attempts_json(as[k], 0),
            "population", pop, "delivery_lag_ms", "p50", k ? 20.0 : 10.0, "p90", 30.0, "p99",
            k ? 40.0 : 90.0, "p99.9", 95.0, "max", k ? 41.0 : 99.0, "count",
            (json_int_t)(k ? 1 : 3), "follow_to_accept_ms", "p50", k ? 0.0 : 5.0, "count",
            (json_int_t)(k ? 0 : 2), "accepts", (json_int_t)(k + 2));
    json_t *inbound = json_object();
    for (int k = 0; k < 2; k++)
        merge_add_numbers(inbound, json_object_get(runs[k], "inbound"));
    merge_inbound(inbound, runs, 2);

    json_t *f = json_object_get(inbound, "fan_out"), *fone = fanout_json(fo, names);
    CHECK(json_integer_value(json_object_get(f, "deliveries")) ==
                  json_integer_value(json_object_get(fone, "deliveries")) &&
              json_integer_value(json_object_get(f, "deliveries")) == 300,
          "fan_out.deliveries: the shards' added = one process's (300)");
    double d10 = json_number_value(json_object_get(f, "within_10s")) -
                 json_number_value(json_object_get(fone, "within_10s")),
           d60 = json_number_value(json_object_get(f, "within_60s")) -
                 json_number_value(json_object_get(fone, "within_60s"));
    CHECK(d10 < 1e-9 && d10 > -1e-9 && d60 < 1e-9 && d60 > -1e-9,
          "within_10s and within_60s: the shards' weighted by deliveries = one process's");
    int cls_ok = 1;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(fone, "lag_ms_by_class"), k, v)
    {
        json_t *g = json_object_get(json_object_get(f, "lag_ms_by_class"), k);
        cls_ok &= json_equal(g, v);
    }
    CHECK(cls_ok && json_object_size(json_object_get(fone, "lag_ms_by_class")) == 3 &&
              !json_object_get(json_object_get(f, "not_merged"), "lag_ms_by_class"),
          "lag by class (3 classes): the shards' histograms merged = one process's, p50, p99, "
          "max and count");
    CHECK(json_equal(json_object_get(f, "exact"), json_object_get(fone, "exact")),
          "the merged lag histograms' text = one process's (a merge of merges stays exact)");
    CHECK(json_array_size(json_object_get(f, "per_shard")) == 2 &&
              json_object_get(json_object_get(f, "not_merged"), "concurrent_per_instance"),
          "fan_out: per post and per instance figures kept per shard, and said so");

    json_t *r = json_object_get(inbound, "retry_curve"), *rone = attempts_json(ao, 0);
    json_t *rg =
               json_pack("{s:O, s:O, s:O}", "attempts", json_object_get(r, "attempts"), "dropped",
                         json_object_get(r, "dropped"), "answered", json_object_get(r, "answered")),
           *rw = json_pack("{s:O, s:O, s:O}", "attempts", json_object_get(rone, "attempts"),
                           "dropped", json_object_get(rone, "dropped"), "answered",
                           json_object_get(rone, "answered"));
    CHECK(rg && rw && same_counts(rg, rw, "retry_curve", "") == 0 &&
              json_integer_value(json_object_get(r, "attempts")) == 300,
          "retry_curve: attempts (300) and what they were answered = one process's");
    CHECK(json_array_size(json_object_get(r, "per_shard")) == 2 &&
              json_object_get(r, "deliveries") == NULL &&
              json_object_size(json_object_get(r, "not_merged")) == 1,
          "retry_curve: the per-delivery figures per shard only, and said so");

    CHECK(json_equal(json_object_get(inbound, "population"), pop),
          "population: the shards' one population kept as it is");
    json_t *lag = json_object_get(inbound, "delivery_lag_ms");
    CHECK(json_number_value(json_object_get(lag, "p50")) == 20.0 &&
              json_number_value(json_object_get(lag, "p99")) == 90.0 &&
              json_number_value(json_object_get(lag, "max")) == 99.0 &&
              json_integer_value(json_object_get(lag, "count")) == 4,
          "a latency summary: the largest percentile and max, the counts summed (not the "
          "percentiles added)");
    json_t *fa = json_object_get(inbound, "follow_to_accept_ms");
    CHECK(json_number_value(json_object_get(fa, "p50")) == 5.0 &&
              json_integer_value(json_object_get(fa, "count")) == 2,
          "a shard with no sample does not count in the percentiles");
    CHECK(json_integer_value(json_object_get(inbound, "accepts")) == 5, "counters summed");
    {
        const char *nk = NULL;
        json_t *nv;
        json_object_foreach(json_object_get(inbound, "not_merged"), nk, nv) break;
        CHECK(nk && strstr(nk, "delivery_lag_ms") && strstr(nk, "follow_to_accept_ms") &&
                  json_object_size(json_object_get(inbound, "not_merged")) == 1,
              "summaries without the shards' histograms named as bounds (%s)", nk ? nk : "none");
    }

    check_rendered(inbound);

    /* shards that drew other classes: each kept */
    json_object_set_new(json_object_get(runs[1], "inbound"), "population",
                        json_pack("{s:s, s:I, s:i}", "spec", "fast=90,error=10", "seed",
                                  (json_int_t)8, "instances", 50));
    json_t *in2 = json_object();
    merge_inbound(in2, runs, 2);
    CHECK(json_array_size(json_object_get(json_object_get(in2, "population"), "per_shard")) == 2,
          "population: shards that drew differently kept per shard");
    json_decref(in2);
    /* a shard without the lag histograms (an older flood): the summaries' bound, said so */
    json_object_del(json_object_get(json_object_get(runs[1], "inbound"), "fan_out"), "exact");
    json_t *in3 = json_object();
    merge_inbound(in3, runs, 2);
    json_t *f3 = json_object_get(in3, "fan_out");
    int bound = 1;
    json_object_foreach(json_object_get(fone, "lag_ms_by_class"), k, v)
    {
        json_t *g = json_object_get(json_object_get(f3, "lag_ms_by_class"), k);
        bound &= json_integer_value(json_object_get(g, "count")) ==
                     json_integer_value(json_object_get(v, "count")) &&
                 json_number_value(json_object_get(g, "max")) ==
                     json_number_value(json_object_get(v, "max")) &&
                 json_number_value(json_object_get(g, "p99")) >=
                     json_number_value(json_object_get(v, "p99"));
    }
    CHECK(bound && json_object_get(json_object_get(f3, "not_merged"), "lag_ms_by_class") &&
              !json_object_get(f3, "exact"),
          "a shard without its lag histograms: count and max exact, p99 an upper bound, said so");
    json_decref(in3);
    json_decref(inbound);
    json_decref(fone);
    json_decref(rone);
    json_decref(rg);
    json_decref(rw);
    json_decref(pop);
    for (int i = 0; i < 2; i++) {
        json_decref(runs[i]);
        fanout_free(fs[i]);
        attempts_free(as[i]);
    }
    fanout_free(fo);
    attempts_free(ao);
}

/* inbound's summary of h, as inbound_json writes it */
static json_t *summary(const struct hist *h)
{
    return json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:I}", "p50", hist_value_at_percentile(h, 50) / 1000.0, "p90",
        hist_value_at_percentile(h, 90) / 1000.0, "p99", hist_value_at_percentile(h, 99) / 1000.0,
        "p99.9", hist_value_at_percentile(h, 99.9) / 1000.0, "max", hist_max(h) / 1000.0, "count",
        (json_int_t)hist_count(h));
}

/* With the shards' histograms (inbound.exact), the summaries merge exactly. */
static void test_exact_summaries(void)
{
    struct hist *h[2] = {hist_new(), hist_new()}, *all = hist_new(), *empty = hist_new();
    for (int i = 0; i < 2000; i++) {
        uint64_t us = 1000 + (uint64_t)next(5000000) * (i % 7 == 0 ? 10 : 1);
        hist_record(h[i % 3 == 0], us);
        hist_record(all, us);
    }
    json_t *runs[2];
    for (int k = 0; k < 2; k++) {
        char *t = hist_encode(h[k]);
        char *t0 = hist_encode(empty);
        runs[k] = json_pack("{s:{s:o, s:o, s:{s:s, s:s}}}", "inbound", "delivery_lag_ms",
                            summary(h[k]), "follow_to_accept_ms", summary(empty), "exact",
                            "delivery_lag_ms", t, "follow_to_accept_ms", t0);
        free(t0);
        free(t);
    }
    json_t *inbound = json_object();
    for (int k = 0; k < 2; k++)
        merge_add_numbers(inbound, json_object_get(runs[k], "inbound"));
    merge_inbound(inbound, runs, 2);
    json_t *want = summary(all);
    char *wt = hist_encode(all);
    CHECK(json_equal(json_object_get(inbound, "delivery_lag_ms"), want),
          "delivery_lag_ms from the shards' histograms = one process's (every percentile)");
    CHECK_STR(
        json_string_value(json_object_get(json_object_get(inbound, "exact"), "delivery_lag_ms")),
        wt, "and its merged histogram's text = one process's");
    CHECK(!json_object_get(inbound, "not_merged"), "nothing said to be a bound");
    json_t *none = json_object_get(inbound, "follow_to_accept_ms");
    CHECK(json_object_size(none) == 6 && json_integer_value(json_object_get(none, "count")) == 0 &&
              json_number_value(json_object_get(none, "p99")) == 0 &&
              json_object_get(json_object_get(inbound, "exact"), "follow_to_accept_ms"),
          "a summary without a sample anywhere: every figure 0, its empty histogram kept");
    free(wt);
    json_decref(want);
    json_decref(inbound);
    for (int k = 0; k < 2; k++) {
        json_decref(runs[k]);
        hist_free(h[k]);
    }
    hist_free(all);
    hist_free(empty);
}

int main(void)
{
    test_egress();
    test_inbound();
    test_exact_summaries();
    return check_done();
}

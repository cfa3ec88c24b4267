/* tests/unit/test_tqueue.c: target-queue sources: specs parsed and refused, the Prometheus
 * text exposition (samples written as the exposition format's documentation writes them),
 * a Fedify benchmark snapshot (the shape of packages/fedify/src/federation/bench.ts's
 * BenchmarkMetricSnapshot), and a source that cannot be read reported as missing. */
#include <string.h>

#include "flood/measure/tqueue.h"
#include "tests/check.h"

static void test_specs(void)
{
    static const char *const good[] = {
        "sidekiq:redis://127.0.0.1:6379/0",
        "sidekiq:redis://:secret@127.0.0.1:6379/2?namespace=mastodon",
        "bullmq:redis://127.0.0.1:6379/0?prefix=misskey.example:queue",
        "bullmq:redis://localhost:6380",
        "fedify:http://127.0.0.1:8200/.well-known/fedify/bench/stats",
        "prometheus:http://127.0.0.1:9090/metrics#jobs_waiting{queue=\"inbox\"}",
        "prometheus:http://127.0.0.1:9090/metrics#queue_depth",
        "json:http://127.0.0.1:8200/stats#queue.depth",
        "cmd:echo 3",
    };
    static const char *const kinds[] = {"sidekiq",    "sidekiq",    "bullmq", "bullmq", "fedify",
                                        "prometheus", "prometheus", "json",   "cmd"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct flood_err e = {0};
        struct tq_source *s = tq_source_new(good[i], &e);
        CHECK(s && !strcmp(tq_source_kind(s), kinds[i]) && !strcmp(tq_source_spec(s), good[i]),
              "spec '%s' is a %s source %s", good[i], kinds[i], e.msg);
        tq_source_free(s);
    }
    static const struct {
        const char *spec, *says;
    } bad[] = {
        {"redis://127.0.0.1:6379", "expected sidekiq:redis://"},
        {"sidekiq:127.0.0.1:6379", "expected redis://"},
        {"sidekiq:redis://127.0.0.1/0", "expected redis://"},
        {"sidekiq:redis://127.0.0.1:99999/0", "bad port"},
        {"sidekiq:redis://127.0.0.1:6379/x", "bad database"},
        {"sidekiq:redis://127.0.0.1:6379/0?prefix=x", "?namespace="},
        {"bullmq:redis://127.0.0.1:6379/0?namespace=x", "?prefix="},
        {"fedify:ftp://x/stats", "http(s) URL"},
        {"json:http://127.0.0.1/stats", "URL#PATH"},
        {"prometheus:http://127.0.0.1/metrics", "METRIC{LABELS}"},
        {"prometheus:http://127.0.0.1/metrics#m{a=\"b\"", "end with '}'"},
        {"cmd:", "cmd:COMMAND"},
        {"", "expected sidekiq:"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct flood_err e = {0};
        struct tq_source *s = tq_source_new(bad[i].spec, &e);
        CHECK(!s && strstr(e.msg, bad[i].says) && strstr(e.msg, "--target-queue"),
              "spec '%s' refused: %s", bad[i].spec, e.msg);
        tq_source_free(s);
    }
}

static void test_prometheus(void)
{
    static const char text[] = "# HELP jobs_waiting Jobs waiting per queue.\n"
                               "# TYPE jobs_waiting gauge\n"
                               "jobs_waiting{queue=\"inbox\",server=\"a\"} 12\n"
                               "jobs_waiting{queue=\"deliver\",server=\"a\"} 40\n"
                               "jobs_waiting{queue=\"inbox\",server=\"b\"} 3 1700000000000\n"
                               "jobs_waiting_total 99\n"
                               "odd{msg=\"a}b\",queue=\"inbox\"} 5\n"
                               "plain 7.5\n"
                               "nan_one NaN\n";
    double v = -1;
    struct flood_err e = {0};
    CHECK(tq_prom_value(text, strlen(text), "jobs_waiting", "{queue=\"inbox\"}", &v, &e) == 0 &&
              v == 15,
          "the samples of one label summed across the others (12 + 3)");
    CHECK(tq_prom_value(text, strlen(text), "jobs_waiting", "", &v, &e) == 0 && v == 55,
          "no labels asked: every sample of the metric, not of a longer name");
    CHECK(tq_prom_value(text, strlen(text), "jobs_waiting", "{queue=\"deliver\",server=\"a\"}", &v,
                        &e) == 0 &&
              v == 40,
          "two labels asked");
    CHECK(tq_prom_value(text, strlen(text), "odd", "{queue=\"inbox\"}", &v, &e) == 0 && v == 5,
          "a '}' inside a quoted label value");
    CHECK(tq_prom_value(text, strlen(text), "plain", "", &v, &e) == 0 && v == 7.5,
          "a sample without labels");
    CHECK(tq_prom_value(text, strlen(text), "jobs_waiting", "{queue=\"in\"}", &v, &e) == -1 &&
              strstr(e.msg, "no sample"),
          "a label value's prefix does not match: %s", e.msg);
    CHECK(tq_prom_value(text, strlen(text), "nan_one", "", &v, &e) == -1,
          "a NaN sample is no reading");
    static const char broken[] = "jobs_waiting{queue=\"inbox\" 12\n";
    CHECK(tq_prom_value(broken, strlen(broken), "jobs_waiting", "", &v, &e) == -1 &&
              strstr(e.msg, "unclosed"),
          "unclosed labels refused: %s", e.msg);
    static const char noval[] = "jobs_waiting{queue=\"inbox\"}\n";
    CHECK(tq_prom_value(noval, strlen(noval), "jobs_waiting", "", &v, &e) == -1 &&
              strstr(e.msg, "without a value"),
          "a sample without a value refused: %s", e.msg);
}

static void test_fedify(void)
{
    const char *doc =
        "{\"version\":1,\"source\":\"server\",\"generatedAt\":\"2026-12-03T08:00:00Z\","
        "\"errors\":[],\"scopeMetrics\":[{\"scope\":{\"name\":\"@fedify/fedify\"},\"metrics\":["
        "{\"name\":\"fedify.queue.depth\",\"dataPointType\":\"gauge\",\"dataPoints\":["
        "{\"attributes\":{\"fedify.queue.role\":\"inbox\",\"fedify.queue.depth.state\":"
        "\"queued\"},\"value\":7},"
        "{\"attributes\":{\"fedify.queue.role\":\"inbox\",\"fedify.queue.depth.state\":"
        "\"ready\"},\"value\":5},"
        "{\"attributes\":{\"fedify.queue.role\":\"outbox\",\"fedify.queue.depth.state\":"
        "\"queued\"},\"value\":2}]},"
        "{\"name\":\"activitypub.signature.verification.duration\",\"unit\":\"ms\","
        "\"dataPointType\":\"histogram\",\"dataPoints\":[{\"attributes\":{},\"value\":"
        "{\"count\":4,\"sum\":10,\"buckets\":{\"boundaries\":[5],\"counts\":[4,0]}}}]}]}]}";
    json_t *j = json_loads(doc, 0, NULL);
    struct tq_reading r;
    memset(&r, 0, sizeof(r));
    r.ok = 1;
    struct flood_err e = {0};
    CHECK(j && tq_fedify_gauges(j, &r, &e) == 0, "a snapshot read: %s", e.msg);
    int have = 0;
    CHECK(tq_reading_sum(&r, TQ_INBOUND, &have) == 7 && have,
          "inbound: the inbox's queued, not its ready share again");
    CHECK(tq_reading_sum(&r, TQ_OUTBOUND, &have) == 2 && have, "outbound: the outbox queue");
    int sig = 0;
    for (size_t i = 0; i < r.n; i++)
        sig += (!strcmp(r.g[i].name, "sigverify.count") && r.g[i].value == 4) +
               (!strcmp(r.g[i].name, "sigverify.sum_ms") && r.g[i].value == 10);
    CHECK(sig == 2, "the signature histogram's count and sum");
    json_decref(j);
    j = json_loads("{\"queue\":{\"depth\":3}}", 0, NULL);
    memset(&r, 0, sizeof(r));
    CHECK(tq_fedify_gauges(j, &r, &e) == -1 && strstr(e.msg, "scopeMetrics"),
          "another document refused: %s", e.msg);
    json_decref(j);
}

static void test_unreadable(void)
{
    struct flood_err e = {0};
    /* port 1 on loopback: refused at once, nothing listens there */
    struct tq_source *s = tq_source_new("sidekiq:redis://127.0.0.1:1/0", &e);
    struct tq_reading r;
    tq_source_read(s, &r);
    CHECK(!r.ok && r.n == 0 && strstr(r.why, "sidekiq: redis 127.0.0.1:1"),
          "a refused Redis is a failed reading with the reason: %s", r.why);
    int have = 1;
    CHECK(tq_reading_sum(&r, TQ_INBOUND, &have) == 0 && !have,
          "and has no inbound depth (missing, not zero)");
    tq_source_free(s);
    s = tq_source_new("cmd:exit 3", &e);
    tq_source_read(s, &r);
    CHECK(!r.ok && strstr(r.why, "exited with an error"), "a failing command: %s", r.why);
    tq_source_free(s);
    s = tq_source_new("cmd:echo 42", &e);
    tq_source_read(s, &r);
    CHECK(r.ok && tq_reading_sum(&r, TQ_INBOUND, NULL) == 42, "a command's number");
    tq_source_free(s);
}

int main(void)
{
    test_specs();
    test_prometheus();
    test_fedify();
    test_unreadable();
    return check_done();
}

/* tests/unit/test_capacity_queue.c: a capacity step judged on the target's own queue (its
 * run.json's --target-queue readings): the growth a least-squares slope over the tail, so a
 * depth read at one instant of a second wavers less than the two ends would; what the
 * target processed while behind (the sent rate less the growth); a queue that did not grow
 * measures nothing; and the target-queue families of /metrics, a failing source's gauges
 * left out (missing, never 0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flood/report/capacity.h"
#include "flood/report/metrics.h"
#include "tests/check.h"

/* A run.json of `secs` seconds at `rate` a second, every answer 202, its inbox queue read
 * each second as depth0 + growth x t, plus wobble[t % 4] (NULL: none). */
static json_t *run_of(int secs, double rate, double depth0, double growth, const double *wobble)
{
    json_t *series = json_array();
    for (int t = 0; t < secs; t++) {
        double d = depth0 + growth * t + (wobble ? wobble[t % 4] : 0);
        json_array_append_new(series, json_pack("{s:i, s:f, s:f, s:f, s:{s:f}, s:f, s:{s:{s:f}}}",
                                                "t", t, "sent", rate, "offered", rate, "completed",
                                                rate, "outcomes", "202", rate, "p99_ms", 5.0,
                                                "target_queue", "bullmq", "inbox.waiting", d));
    }
    return json_pack("{s:o, s:[{s:s, s:{s:{s:s}}}], s:{}, s:{}}", "series", series, "target_queue",
                     "source", "bullmq", "gauges", "inbox.waiting", "role", "inbound", "probes",
                     "generator");
}

static void test_judge(void)
{
    struct cap_limits lim = {
        .latency_ms = 1000, .errors = 0.01, .queue_share = 0.05, .tail = 0.5, .hold_s = 10};
    /* 30/s against a target that processes 20/s: +10/s, read with a wobble of a few jobs */
    static const double wobble[4] = {3, -2, 2, -3};
    json_t *run = run_of(10, 30, 0, 10, wobble);
    struct cap_step s = {.rate = 30};
    struct flood_err err = {0};
    CHECK(cap_judge(run, &lim, NULL, 0, &s, &err) == 0, "a step judged %s", err.msg);
    CHECK(s.judged[CAP_QUEUE] && fabs(s.value[CAP_QUEUE] - 10) < 1.5,
          "the growth is the slope over the tail's readings: %.2f/s, not the ends' %.2f/s",
          s.value[CAP_QUEUE], (10 * 9 + wobble[1] - (10 * 5 + wobble[1])) / 5.0);
    CHECK(!s.pass && s.broke == CAP_QUEUE && !strcmp(s.queue, "bullmq inbox.waiting"),
          "the queue broke, named '%s'", s.queue);
    CHECK(fabs(s.processed_rate - 20) < 1.5, "what it processed while behind: %.2f/s (20)",
          s.processed_rate);
    /* the tail's last answers come in the next second: the sent rate, not the answers in
     * the tail's seconds, is what came in */
    json_t *last = json_array_get(json_object_get(run, "series"), 9);
    json_object_set_new(last, "completed", json_real(12));
    json_object_set_new(json_object_get(last, "outcomes"), "202", json_real(12));
    s = (struct cap_step){.rate = 30};
    CHECK(cap_judge(run, &lim, NULL, 0, &s, &err) == 0 && fabs(s.processed_rate - 20) < 1.5,
          "  the same with the last second's answers late: %.2f/s", s.processed_rate);
    json_decref(run);

    /* below capacity: the queue stays empty, nothing is measured of the capacity */
    run = run_of(10, 15, 0, 0, NULL);
    s = (struct cap_step){.rate = 15};
    CHECK(cap_judge(run, &lim, NULL, 0, &s, &err) == 0 && s.pass, "a step below capacity passes");
    CHECK(isnan(s.processed_rate), "and its queue, not growing, measures no capacity");
    json_decref(run);

    /* two readings only: the growth from the ends */
    run = run_of(10, 30, 4, 8, NULL);
    json_t *series = json_object_get(run, "series");
    for (size_t i = 0; i < json_array_size(series); i++)
        if (i != 5 && i != 9)
            json_object_set_new(json_array_get(series, i), "target_queue", json_null());
    s = (struct cap_step){.rate = 30};
    CHECK(cap_judge(run, &lim, NULL, 0, &s, &err) == 0 && fabs(s.value[CAP_QUEUE] - 6.4) < 0.01,
          "with two readings in the tail, from its ends: %.2f/s ((76 - 44) / 5)",
          s.value[CAP_QUEUE]);
    json_decref(run);
}

static void test_metrics(void)
{
    struct metrics_snapshot *snap = calloc(1, sizeof(*snap));
    snap->tqueue = json_pack("[{s:s, s:I, s:I, s:n, s:{s:{s:s, s:f, s:f}}}, {s:s, s:I, s:I, s:s, "
                             "s:{s:{s:s, s:f, s:f}}}]",
                             "source", "bullmq", "readings", (json_int_t)9, "missing",
                             (json_int_t)1, "last_failure", "gauges", "inbox.waiting", "role",
                             "inbound", "last", 42.0, "max", 50.0, "source", "sidekiq", "readings",
                             (json_int_t)9, "missing", (json_int_t)9, "last_failure", "refused",
                             "gauges", "ingress", "role", "inbound", "last", 7.0, "max", 7.0);
    char *text = metrics_render(snap);
    CHECK(strstr(text, "flood_target_queue_jobs{source=\"bullmq\",gauge=\"inbox.waiting\","
                       "role=\"inbound\"} 42\n") != NULL,
          "a working source's depth, by source, gauge and role");
    CHECK(strstr(text, "flood_target_queue_up{source=\"bullmq\"} 1\n") &&
              strstr(text, "flood_target_queue_up{source=\"sidekiq\"} 0\n"),
          "each source up or not");
    CHECK(strstr(text, "flood_target_queue_missing_total{source=\"sidekiq\"} 9\n") != NULL,
          "its missing readings counted");
    CHECK(strstr(text, "source=\"sidekiq\",gauge") == NULL,
          "a failing source's gauges left out: missing, never 0 or stale");
    free(text);
    json_decref(snap->tqueue);
    free(snap);
}

int main(void)
{
    test_judge();
    test_metrics();
    return check_done();
}

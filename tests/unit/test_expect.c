/* tests/unit/test_expect.c: --expect thresholds and compare's gates: every operator and
 * unit parsed (values checked by hand: 2s is 2000 ms, 99% a share 0.99), bad expressions
 * refused with their reason, and verdicts judged on a run.json written here by hand. */
#include "flood/report/expect.h"
#include "tests/check.h"

#include <math.h>
#include <string.h>

static const char run_text[] =
    "{\"totals\": {\"scheduled\": 1000, \"sent\": 990, \"shed\": 10, \"completed\": 980,"
    " \"unfinished\": 10, \"outcomes\": {\"200\": 0, \"202\": 950, \"2xx_other\": 0, \"401\": 5,"
    " \"403\": 0, \"408\": 0, \"429\": 20, \"503\": 0, \"4xx_other\": 0, \"5xx_other\": 0,"
    " \"timeout\": 5, \"transport\": 0},"
    " \"latency_ms\": {\"p50\": 12.5, \"p95\": 150, \"p99\": 250, \"p99.9\": 900, \"max\": 1200,"
    " \"count\": 980},"
    " \"service_ms\": {\"p99\": 40, \"count\": 980}, \"dispatch_lag_ms\": {\"p99\": 0.3, "
    "\"count\": 990},"
    " \"retry_after\": {\"429\": 20}},"
    " \"operations\": {\"create\": {\"latency_ms\": {\"p99\": 300, \"p99.9\": 800, \"count\": "
    "700}},"
    "                  \"like\": {\"latency_ms\": {\"p99\": 0, \"count\": 0}}},"
    " \"probes\": {\"follows_sent\": 100, \"accepted\": 97,"
    "             \"follow_to_accept_ms\": {\"p95\": 1800, \"p99\": 4000, \"count\": 97}},"
    " \"fetches\": {\"by_kind\": {\"actor\": {\"requests\": 60, \"repeat_requests\": 3}},"
    "              \"total\": {\"requests\": 80, \"repeat_requests\": 3}}}";

static int judge(const json_t *run, const char *text)
{
    struct expect e;
    struct flood_err err = {0};
    if (expect_parse(text, 0, &e, &err)) {
        CHECK(0, "parse '%s': %s", text, err.msg);
        return -1;
    }
    double got;
    char why[160];
    return expect_judge(&e, run, &got, why, sizeof(why));
}

int main(void)
{
    json_error_t je;
    json_t *run = json_loads(run_text, 0, &je);
    CHECK(run != NULL, "the hand-written run.json parses (%s)", je.text);

    struct expect e;
    struct flood_err err = {0};
    static const struct {
        const char *text;
        const char *metric;
        enum expect_op op;
        double value;
        int share;
    } ok[] = {
        {"p99<300ms", "p99", EXPECT_LT, 300, 0},
        {"p99 <= 2s", "p99", EXPECT_LE, 2000, 0},
        {"p50>500us", "p50", EXPECT_GT, 0.5, 0},
        {"max>=1m", "max", EXPECT_GE, 60000, 0},
        {"p99.9==900", "p99.9", EXPECT_EQ, 900, 0},
        {"create.p99!=0", "create.p99", EXPECT_NE, 0, 0},
        {"2xx>=99%", "2xx", EXPECT_GE, 0.99, 1},
        {"shed==0", "shed", EXPECT_EQ, 0, 0},
        {"f2a.p95<2s", "f2a.p95", EXPECT_LT, 2000, 0},
        {"fetch.actor.repeat==0", "fetch.actor.repeat", EXPECT_EQ, 0, 0},
        {"json:totals.retry_after.429 == 20", "json:totals.retry_after.429", EXPECT_EQ, 20, 0},
        {"fetch.actor<=110%", "fetch.actor", EXPECT_LE, 1.1, 1},
        {"create.p99.9 <= 5s", "create.p99.9", EXPECT_LE, 5000, 0},
        {"p99 < 10ms", "p99", EXPECT_LT, 10, 0},
        {"p50<1us", "p50", EXPECT_LT, 0.001, 0},
        {"p99<1.5s", "p99", EXPECT_LT, 1500, 0},
        {"errors==0", "errors", EXPECT_EQ, 0, 0},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        int rc = expect_parse(ok[i].text, 0, &e, &err);
        CHECK(rc == 0 && !strcmp(e.metric, ok[i].metric) && e.op == ok[i].op &&
                  fabs(e.value - ok[i].value) < 1e-9 && e.share == ok[i].share,
              "parsed '%s' (%s)", ok[i].text, rc ? err.msg : e.metric);
    }
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"p99<5%", "a time takes no %"},
        {"p99<5kg", "--expect 'p99<5kg': expected a duration from 0s to 1 week (250us, 500ms, "
                    "1.5s, 2m, 1h; a plain number is milliseconds), got '5kg'"},
        {"shed<5ms", "--expect 'shed<5ms': expected a count (0, 12, 1.5) or a share (99%), got "
                     "'5ms'"},
        {"2xx>=1e2%", "--expect '2xx>=1e2%': expected a share from 0% to 10000%"},
        {"p99<1.s", "expected a duration"},
        {"p98<1s", "unknown metric"},
        {"latency<1s", "unknown metric"},
        {"p99 1s", "expected one of"},
        {"p99 within 10%", "expected one of"},
        {"p99<", "expected a number"},
        {"p99<-1", "expected a duration"},
        {"p99<1s extra", "unexpected text"},
        {"fetch.<1", "unknown metric"},
        {"json:<1", "unknown metric"},
        {"", "unknown metric"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.msg[0] = '\0';
        CHECK(expect_parse(bad[i].text, 0, &e, &err) == -1 && strstr(err.msg, bad[i].why),
              "refused '%s': %s", bad[i].text, err.msg);
    }
    CHECK(expect_parse("p99 < 1s", 1, &e, &err) == -1, "a gate takes only 'within'");
    CHECK(expect_parse("p99 within 10%", 1, &e, &err) == 0 && e.share && e.op == EXPECT_WITHIN,
          "a gate with a share");

    /* verdicts, each with its negative twin */
    CHECK(judge(run, "p99<300ms") == 1 && judge(run, "p99<250ms") == 0, "p99 250 ms");
    CHECK(judge(run, "p99<=250") == 1 && judge(run, "p99>250") == 0, "<= and >");
    CHECK(judge(run, "2xx>=96%") == 1 && judge(run, "2xx>=97%") == 0,
          "2xx 950 of 980 completed = 96.9%%");
    CHECK(judge(run, "errors==30") == 1 && judge(run, "errors<30") == 0,
          "errors: 5 + 20 + 5 non-2xx answers");
    CHECK(judge(run, "shed<=1%") == 1 && judge(run, "shed<1%") == 0, "shed 10 of 1000 scheduled");
    CHECK(judge(run, "create.p99.9<=800ms") == 1 && judge(run, "create.p99.9<800ms") == 0,
          "a per-operation p99.9 (a key with a dot)");
    CHECK(judge(run, "f2a.p95<2s") == 1 && judge(run, "f2a.p99<2s") == 0, "Follow-to-Accept");
    CHECK(judge(run, "accepts>=97%") == 1 && judge(run, "accepts==100%") == 0, "97 of 100 Accepts");
    CHECK(judge(run, "fetch.actor.repeat==3") == 1 && judge(run, "fetch.actor.repeat==0") == 0,
          "repeat fetches");
    CHECK(judge(run, "fetch.total<=10%") == 1 && judge(run, "fetch.total<8%") == 0,
          "fetches per activity sent: 80 of 990");
    CHECK(judge(run, "json:totals.retry_after.429==20") == 1 &&
              judge(run, "json:totals.retry_after.429==0") == 0,
          "a raw run.json path");
    CHECK(judge(run, "like.p99<1s") == 0,
          "a percentile of an empty histogram judges nothing: fail");
    CHECK(judge(run, "fetch.media==0") == 0, "a metric run.json lacks fails");

    /* gates */
    json_t *worse = json_deep_copy(run);
    json_object_set_new(json_object_get(json_object_get(worse, "totals"), "latency_ms"), "p99",
                        json_real(270));
    double got, ref;
    char why[160];
    CHECK(expect_parse("p99 within 10%", 1, &e, &err) == 0 &&
              expect_judge_gate(&e, run, worse, &got, &ref, why, sizeof(why)) == 1,
          "270 ms is within 10%% of 250 ms");
    CHECK(expect_parse("p99 within 5%", 1, &e, &err) == 0 &&
              expect_judge_gate(&e, run, worse, &got, &ref, why, sizeof(why)) == 0,
          "but not within 5%%");
    CHECK(expect_judge_gate(&e, worse, run, &got, &ref, why, sizeof(why)) == 1,
          "better than the base always passes");
    CHECK(expect_parse("p99 within 15ms", 1, &e, &err) == 0 &&
              expect_judge_gate(&e, run, worse, &got, &ref, why, sizeof(why)) == 0,
          "an absolute amount: 20 ms worse fails 15 ms");
    json_object_set_new(json_object_get(json_object_get(worse, "totals"), "outcomes"), "202",
                        json_integer(900));
    CHECK(expect_parse("2xx within 2%", 1, &e, &err) == 0 &&
              expect_judge_gate(&e, run, worse, &got, &ref, why, sizeof(why)) == 0,
          "fewer 2xx is worse: 900 vs 950");
    CHECK(expect_judge_gate(&e, worse, run, &got, &ref, why, sizeof(why)) == 1,
          "more 2xx is better");
    json_decref(worse);
    json_decref(run);
    return check_done();
}

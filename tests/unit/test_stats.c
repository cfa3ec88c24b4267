/* tests/unit/test_stats.c: outcome classification (from the HTTP status classes of RFC 9110
 * and libcurl's documented error codes), the per-second series (the host's steal a second
 * included), the conservation check and what counts as a late send. */
#include <curl/curl.h>
#include <errno.h>
#include <string.h>

#include "flood/measure/stats.h"
#include "flood/report/results.h"
#include "tests/check.h"

static void test_classify(void)
{
    CHECK(stats_classify(CURLE_OK, 200, 0) == OUT_200, "200");
    CHECK(stats_classify(CURLE_OK, 202, 0) == OUT_202, "202");
    CHECK(stats_classify(CURLE_OK, 204, 0) == OUT_2XX_OTHER, "204 is other 2xx");
    CHECK(stats_classify(CURLE_OK, 201, 0) == OUT_2XX_OTHER, "201 is other 2xx");
    CHECK(stats_classify(CURLE_OK, 401, 0) == OUT_401, "401");
    CHECK(stats_classify(CURLE_OK, 403, 0) == OUT_403, "403");
    CHECK(stats_classify(CURLE_OK, 408, 0) == OUT_408, "408");
    CHECK(stats_classify(CURLE_OK, 429, 0) == OUT_429, "429");
    CHECK(stats_classify(CURLE_OK, 503, 0) == OUT_503, "503");
    CHECK(stats_classify(CURLE_OK, 400, 0) == OUT_4XX_OTHER, "400 is other 4xx");
    CHECK(stats_classify(CURLE_OK, 413, 0) == OUT_4XX_OTHER, "413 is other 4xx");
    CHECK(stats_classify(CURLE_OK, 500, 0) == OUT_5XX_OTHER, "500 is other 5xx");
    CHECK(stats_classify(CURLE_OK, 502, 0) == OUT_5XX_OTHER, "502 is other 5xx");
    CHECK(stats_classify(CURLE_OK, 302, 0) == OUT_TRANSPORT, "a redirect is not an answer");
    CHECK(stats_classify(CURLE_OK, 0, 0) == OUT_TRANSPORT, "no status at all");
    CHECK(stats_classify(CURLE_OPERATION_TIMEDOUT, 0, 0) == OUT_TIMEOUT, "timeout");
    CHECK(stats_classify(CURLE_OPERATION_TIMEDOUT, 200, 0) == OUT_TIMEOUT,
          "a timeout after the status line is still a timeout");
    CHECK(stats_classify(CURLE_COULDNT_CONNECT, 0, ECONNREFUSED) == OUT_REFUSED, "refused");
    CHECK(stats_classify(CURLE_COULDNT_CONNECT, 0, EHOSTUNREACH) == OUT_TRANSPORT,
          "unreachable is other transport, not refused");
    CHECK(stats_classify(CURLE_RECV_ERROR, 0, ECONNRESET) == OUT_RESET, "reset on receive");
    CHECK(stats_classify(CURLE_GOT_NOTHING, 0, 0) == OUT_RESET, "closed with nothing");
    CHECK(stats_classify(CURLE_SEND_ERROR, 0, EPIPE) == OUT_RESET, "reset on send");
    CHECK(stats_classify(CURLE_COULDNT_RESOLVE_HOST, 0, 0) == OUT_DNS, "dns");
    CHECK(stats_classify(CURLE_PEER_FAILED_VERIFICATION, 0, 0) == OUT_TLS, "certificate");
    CHECK(stats_classify(CURLE_SSL_CONNECT_ERROR, 0, 0) == OUT_TLS, "handshake");
    CHECK(stats_classify(CURLE_URL_MALFORMAT, 0, 0) == OUT_TRANSPORT, "anything else");

    CHECK(stats_outcome_ok(OUT_202) && stats_outcome_ok(OUT_2XX_OTHER) &&
              !stats_outcome_ok(OUT_429),
          "2xx classes are ok, 429 is not");
    CHECK(stats_outcome_error(OUT_TIMEOUT) && stats_outcome_error(OUT_REFUSED) &&
              !stats_outcome_error(OUT_503),
          "timeouts and transport are errors, 503 is an answer");
    CHECK_STR(stats_outcome_name(OUT_2XX_OTHER), "2xx_other", "name of other 2xx");
    CHECK_STR(stats_outcome_name(OUT_TRANSPORT), "other", "name of other transport");
    CHECK_STR(stats_outcome_name(99), "?", "name out of range");
    CHECK_STR(stats_bad_name(BAD_STALE_DATE), "stale_date", "bad kind name");
}

static void test_counts(void)
{
    struct stats *s = stats_new();
    char line[256];
    CHECK(stats_conservation(s, line, sizeof(line)) == 0 && strstr(line, ": ok"),
          "an empty run conserves: %s", line);
    /* 3 creates sent, 1 shed, 2 complete (202 and 429 with Retry-After), 1 unfinished */
    const int64_t ms = 1000000;
    stats_sent(s, OP_CREATE, 0, 1 * ms);
    stats_sent(s, OP_CREATE, 10 * ms, 10 * ms);
    stats_sent(s, OP_CREATE, 20 * ms, 25 * ms);
    stats_shed(s, OP_CREATE, 30 * ms);
    stats_done(s, OP_CREATE, OUT_202, 0, BAD_NONE, 0, 1 * ms, 51 * ms);
    stats_done(s, OP_CREATE, OUT_429, 1, BAD_NONE, 10 * ms, 10 * ms, 20 * ms);
    const struct stats_op *o = &s->op[OP_CREATE];
    CHECK(hist_max(&o->latency) == 51000, "corrected latency from the intended time: 51 ms");
    CHECK(hist_max(&o->service) == 50000, "service time from the actual send: 50 ms");
    CHECK(hist_max(&o->lag) == 5000 && hist_min(&o->lag) == 0, "dispatch lag 0..5 ms");
    CHECK(s->late_sends == 1, "one send later than 1 ms");
    CHECK(o->c.retry_after[OUT_429] == 1, "Retry-After counted on the 429");
    CHECK(stats_conservation(s, line, sizeof(line)) == -1 && strstr(line, "VIOLATED"),
          "one request neither completed nor unfinished: %s", line);
    stats_unfinished(s, OP_CREATE, 1);
    CHECK(stats_conservation(s, line, sizeof(line)) == 0, "with it unfinished: %s", line);
    CHECK_STR(line,
              "conservation: scheduled 4 = sent 3 + shed 1; sent 3 = completed 2 + unfinished "
              "1: ok",
              "the conservation line");
    /* bad signatures accepted are counted only on 2xx */
    stats_sent(s, OP_LIKE, 0, 0);
    stats_sent(s, OP_LIKE, 0, 0);
    stats_done(s, OP_LIKE, OUT_202, 0, BAD_DIGEST, 0, 0, 1 * ms);
    stats_done(s, OP_LIKE, OUT_401, 0, BAD_WRONG_KEY, 0, 0, 1 * ms);
    CHECK(s->op[OP_LIKE].c.bad_accepted[BAD_DIGEST] == 1 &&
              s->op[OP_LIKE].c.bad_accepted[BAD_WRONG_KEY] == 0,
          "a 2xx to a bad digest is an accepted bad signature, a 401 is not");
    struct stats_counts t;
    stats_totals(s, &t);
    CHECK(t.scheduled == 6 && t.sent == 5 && t.completed == 4 && t.unfinished == 1 &&
              t.outcomes[OUT_202] == 2,
          "totals add the operations");
    /* the series: sends of second 0, a completion in second 1 */
    stats_sent(s, OP_FOLLOW, 1500 * ms, 1500 * ms);
    stats_tick(s, 1600 * ms, 7);
    stats_done(s, OP_FOLLOW, OUT_200, 0, BAD_NONE, 1500 * ms, 1500 * ms, 1700 * ms);
    stats_tick(s, 2000 * ms, 0);
    CHECK(s->n_series == 2, "two seconds in the series");
    CHECK(s->series[0].offered == 6 && s->series[0].sent == 5 && s->series[0].shed == 1 &&
              s->series[0].completed == 4,
          "second 0: offered 6, sent 5, shed 1, completed 4");
    CHECK(s->series[0].in_flight == 7, "in flight at the end of second 0");
    CHECK(s->series[1].completed == 1 && s->series[1].outcomes[OUT_200] == 1 &&
              s->series[1].p50_ms > 199.0 && s->series[1].p50_ms < 201.0,
          "second 1: one 200 at 200 ms (p50 %.3f)", s->series[1].p50_ms);
    stats_free(s);
}

/* |got - want| within HdrHistogram's 3 significant digits (a percentile is its bucket's upper
 * edge, at most 1/1000 above the sample of that rank) */
static int near_ms(double got, double want)
{
    return got >= want && got <= want * 1.001 + 0.001;
}

/* max, service percentiles and Follow-to-Accept per second: 100 requests in second 0 with
 * corrected latencies 11..110 ms, each sent 10 ms after its intended time (service 1..100
 * ms); by the HdrHistogram rank rule (round(p/100 * 100)) p50 is the 50th sample, p99 the
 * 99th. */
static void test_second_figures(void)
{
    struct stats *s = stats_new();
    struct probes *p = probes_new();
    stats_set_probes(s, p);
    const int64_t ms = 1000000;
    for (int k = 0; k < 100; k++) {
        int64_t intended = k * ms, start = intended + 10 * ms, done = start + (k + 1) * ms;
        stats_sent(s, OP_CREATE, intended, start);
        stats_done(s, OP_CREATE, OUT_202, 0, BAD_NONE, intended, start, done);
    }
    /* Follows answered while second 0 is current: Accepts after 100, 200, 300 ms, a Reject */
    for (uint64_t i = 1; i <= 4; i++)
        probes_follow_sent(p, i, 1000000);
    probes_answer(p, 1, 1, 1100000);
    probes_answer(p, 2, 1, 1200000);
    probes_answer(p, 3, 1, 1300000);
    probes_answer(p, 4, 0, 1400000);
    probes_answer(p, 1, 1, 1500000); /* a duplicate: not counted again */
    stats_tick(s, 1000 * ms, 3);
    const struct stats_sec *x = &s->series[0];
    CHECK(near_ms(x->p50_ms, 60) && near_ms(x->p99_ms, 109),
          "second 0: p50 60 ms, p99 109 ms "
          "(%.3f, %.3f)",
          x->p50_ms, x->p99_ms);
    CHECK(x->max_ms == 110.0, "second 0: max is the largest sample, 110 ms exactly (%.3f)",
          x->max_ms);
    CHECK(near_ms(x->service_p50_ms, 50) && near_ms(x->service_p99_ms, 99),
          "second 0: service p50 50 ms, p99 99 ms (%.3f, %.3f)", x->service_p50_ms,
          x->service_p99_ms);
    CHECK(x->service_p99_ms < x->p99_ms, "service time is below corrected latency");
    CHECK(x->accepts == 3 && x->rejects == 1, "second 0: 3 Accepts and 1 Reject");
    CHECK(near_ms(x->f2a_p50_ms, 200) && near_ms(x->f2a_p99_ms, 300),
          "second 0: Follow-to-Accept p50 200 ms, p99 300 ms (%.3f, %.3f)", x->f2a_p50_ms,
          x->f2a_p99_ms);

    /* second 1: one quick request and one Accept; nothing of second 0 carries over */
    stats_sent(s, OP_CREATE, 1000 * ms, 1000 * ms);
    stats_done(s, OP_CREATE, OUT_202, 0, BAD_NONE, 1000 * ms, 1000 * ms, 1005 * ms);
    probes_follow_sent(p, 5, 2000000);
    probes_answer(p, 5, 1, 2050000);
    /* a completion in second 2 while second 1 is current is not in second 1's figures */
    stats_sent(s, OP_CREATE, 1001 * ms, 1001 * ms);
    stats_done(s, OP_CREATE, OUT_202, 0, BAD_NONE, 1001 * ms, 1001 * ms, 2500 * ms);
    stats_tick(s, 3500 * ms, 0); /* closes seconds 1 and 2 at once */
    x = &s->series[1];
    CHECK(x->max_ms == 5.0 && x->p99_ms == 5.0 && x->p50_ms == 5.0,
          "second 1: max = p99 = p50 = its one 5 ms request, not second 0's 110 ms (%.3f)",
          x->max_ms);
    CHECK(x->service_p50_ms == 5.0 && x->service_p99_ms == 5.0, "second 1: service 5 ms");
    CHECK(x->accepts == 1 && x->rejects == 0 && x->f2a_p50_ms == 50.0 && x->f2a_p99_ms == 50.0,
          "second 1: one Accept after 50 ms (%.3f)", x->f2a_p50_ms);
    x = &s->series[2];
    CHECK(x->closed && x->completed == 1 && x->max_ms == 0.0 && x->p99_ms == 0.0,
          "second 2: its completion counted, with no latency taken from another second");
    CHECK(x->accepts == 0 && x->f2a_p50_ms == 0.0 && x->f2a_p99_ms == 0.0,
          "second 2: no Accepts, so no Follow-to-Accept");
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n_series; i++)
        sum += s->series[i].accepts;
    struct probes_totals t;
    probes_snapshot(p, &t, NULL);
    CHECK(sum == t.accepted && sum == 4, "per-second Accepts add up to the probes' (%llu)",
          (unsigned long long)sum);

    /* without probes the inbound figures stay zero */
    struct stats *s2 = stats_new();
    probes_follow_sent(p, 6, 3000000);
    probes_answer(p, 6, 1, 3100000);
    stats_tick(s2, 2000 * ms, 0);
    CHECK(s2->series[0].accepts == 0 && s2->series[1].accepts == 0,
          "a stats without probes takes no Accepts");
    struct probes_second ps;
    probes_peek_second(p, &ps, NULL);
    CHECK(ps.accepted == 1, "the Accept is still waiting in the probes' current second");
    stats_free(s2);
    stats_free(s);
    probes_free(p);
}

/* A fake host: its steal so far, seconds (negative: not known). */
static double fake_steal_s;
static double fake_steal(void *ctx)
{
    (void)ctx;
    return fake_steal_s;
}

/* A send is late past the sender's own quantum and a millisecond more: with a 1 ms quantum
 * (late_us 2000) a send 1.5 ms after its time is not late, one 2.5 ms after is. The
 * threshold survives the loops' merge and a shard's run.json. */
static void test_late_threshold(void)
{
    const int64_t us = 1000;
    struct stats *s = stats_new();
    CHECK(s->late_us == STATS_LATE_US, "a new stats: late past %d us", STATS_LATE_US);
    s->late_us = 2000;
    stats_sent(s, OP_CREATE, 0, 1500 * us);
    stats_sent(s, OP_CREATE, 0, 2000 * us);
    stats_sent(s, OP_CREATE, 0, 2500 * us);
    CHECK(s->late_sends == 1, "a 1 ms quantum: 1.5 and 2.0 ms on time, 2.5 ms late (%llu late)",
          (unsigned long long)s->late_sends);
    struct stats *all = stats_new();
    stats_add(all, s);
    CHECK(all->late_us == 2000 && all->late_sends == 1, "the loops' sum keeps their threshold");
    json_t *exact = results_exact_json(s);
    struct stats *shard = stats_new();
    struct flood_err err = {0};
    CHECK(results_exact_add(shard, exact, &err) == 0 && shard->late_us == 2000 &&
              shard->late_sends == 1,
          "a shard's run.json carries it: %s", err.msg);
    json_object_set_new(exact, "late_us", json_string("x"));
    struct stats *bad = stats_new();
    CHECK(results_exact_add(bad, exact, &err) == -1 && strstr(err.msg, "late_us"),
          "a threshold that is not a count is refused: %s", err.msg);
    json_object_del(exact, "late_us");
    struct stats *old = stats_new();
    CHECK(results_exact_add(old, exact, &err) == 0 && old->late_us == STATS_LATE_US,
          "a run.json written before it: %d us", STATS_LATE_US);
    json_decref(exact);
    stats_free(old);
    stats_free(bad);
    stats_free(shard);
    stats_free(all);
    stats_free(s);
}

static void test_steal_series(void)
{
    struct stats *s = stats_new();
    fake_steal_s = 1.0;
    stats_set_steal(s, fake_steal, NULL);
    fake_steal_s = 1.03;
    stats_tick(s, 1000000001, 0); /* second 0 closes: 30 ms taken */
    fake_steal_s = -1;
    stats_tick(s, 2000000001, 0); /* second 1: not known */
    fake_steal_s = 1.5;
    stats_tick(s, 3000000001, 0); /* second 2: no known start */
    fake_steal_s = 1.52;
    stats_tick(s, 4000000001, 0); /* second 3: 20 ms */
    CHECK(s->n_series >= 4 && s->series[0].steal_ms > 29.99 && s->series[0].steal_ms < 30.01 &&
              s->series[1].steal_ms == 0 && s->series[2].steal_ms == 0 &&
              s->series[3].steal_ms > 19.99 && s->series[3].steal_ms < 20.01,
          "steal a second: 30 ms, then unknown (0) twice, then 20 ms");
    stats_free(s);
}

int main(void)
{
    test_classify();
    test_counts();
    test_second_figures();
    test_steal_series();
    test_late_threshold();
    return check_done();
}

/* tests/unit/test_replay.c: reading an arrival pattern (flood/send/replay.c) from
 * fixtures/replay/. Expected times are worked out by hand: 1728568536 is
 * 2024-10-10T13:55:36Z (`date -u -d @1728568536`), the access log's seconds are spread k/n. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/stats.h"
#include "flood/send/replay.h"
#include "flood/send/sched.h"
#include "tests/check.h"

#define MS 1000000LL

static void test_access_log(void)
{
    struct replay r;
    struct flood_err e = {0};
    int rc = replay_load("fixtures/replay/access.log", &r, &e);
    CHECK(rc == 0, "access.log parses: %s", e.msg);
    if (rc)
        return;
    CHECK(r.n == 4 && r.skipped == 1, "4 inbox POSTs, the GET skipped (%zu, %llu)", r.n,
          (unsigned long long)r.skipped);
    CHECK(r.access_log && r.whole_seconds, "an access log, whole seconds");
    CHECK(r.ev[0].t_ns == 0 && r.ev[1].t_ns == 500 * MS && r.ev[2].t_ns == 1000 * MS &&
              r.ev[3].t_ns == 2000 * MS,
          "two in the first second spread at 0 and 0.5 s; +0200 taken (2 s)");
    CHECK(fabs(r.duration_s - 3) < 1e-9, "duration 3 s (the last second counted whole)");
    CHECK(r.n_origins == 3, "three origins");
    CHECK_STR(r.origins[0], "mastodon.example", "the busiest first, from the agent's +URL");
    CHECK_STR(r.origins[1], "misskey.example", "an agent's URL without '+'");
    CHECK_STR(r.origins[2], "192.0.2.9", "no URL in the agent: the client address");
    CHECK(r.ev[0].origin == 0 && r.ev[2].origin == 1 && r.ev[3].origin == 2, "events by rank");
    CHECK(r.ev[0].op == -1, "an access log has no type: the mix");
    CHECK(replay_instance(&r, 0, 20) == 1 && replay_instance(&r, 2, 20) == 3,
          "ranks below the instance count get their own instance");
    int a = replay_instance(&r, 2, 2);
    CHECK(a >= 1 && a <= 2 && a == replay_instance(&r, 2, 2), "the rest share, the same each time");
    int64_t *t = replay_times(&r, 4);
    CHECK(t[1] == 125 * MS && t[3] == 500 * MS, "--replay-speed 4 divides the times");
    CHECK(replay_peak_rate(&r, 1) == 2, "peak: 2 events within one second (0 and 0.5 s)");
    struct sched s;
    CHECK(sched_init_replay(&s, t, r.n, r.duration_s / 4, 8, &e) == 0, "a replay schedule");
    CHECK(sched_total(&s) == 4 && sched_next(&s) == 0 && sched_next(&s) == 125 * MS,
          "the schedule sends at the replayed times");
    free(t);
    replay_free(&r);
}

static void test_csv(void)
{
    struct replay r;
    struct flood_err e = {0};
    int rc = replay_load("fixtures/replay/pattern.csv", &r, &e);
    CHECK(rc == 0, "pattern.csv parses: %s", e.msg);
    if (rc)
        return;
    CHECK(r.n == 5 && !r.access_log && !r.whole_seconds, "5 rows, the header skipped");
    CHECK(r.ev[1].t_ns == 500 * MS && r.ev[2].t_ns == 1250 * MS && r.ev[3].t_ns == 1750 * MS &&
              r.ev[4].t_ns == 2000 * MS,
          "decimal seconds and ISO-8601 on one clock");
    CHECK(r.ev[0].op == OP_CREATE && r.ev[1].op == OP_LIKE && r.ev[2].op == OP_ANNOUNCE,
          "types to --mix kinds");
    CHECK(r.ev[3].op == -1 && r.untyped == 1, "Move is no kind: the mix, counted");
    CHECK(r.ev[4].op == -1, "an empty type: the mix");
    CHECK_STR(r.origins[0], "mastodon.example", "a URL origin is its host; the busiest first");
    CHECK(r.origin_events[0] == 3, "three from it");
    replay_free(&r);
}

static void test_errors(void)
{
    struct replay r;
    struct flood_err e = {0};
    CHECK(replay_load("fixtures/replay/bad-time.csv", &r, &e) == -1 &&
              strstr(e.msg, "bad-time.csv:3: bad time") && strstr(e.msg, "not-a-time"),
          "a bad time names FILE:LINE and the value: %s", e.msg);
    CHECK(replay_load("fixtures/replay/bad-month.log", &r, &e) == -1 &&
              strstr(e.msg, "bad-month.log:2: access log: bad time"),
          "a bad month in an access log: %s", e.msg);
    const char *cases[][2] = {
        {"1,a.example,Create,extra\n", "more than three fields"},
        {"1.5\n", "expected time,origin"},
        {"1,,Create\n", "no origin"},
        {"1.2.3.4 - - [10/Oct/2024:13:55:36 +0000] POST /inbox\n", "expected the \"REQUEST\""},
        {"1.2.3.4 - - [10/Oct/2024:13:55:36 +0000] \"POST /inbox HTTP/1.1\" x 0\n",
         "expected a status"},
        {"1.2.3.4 - - [10/Oct/2024:13:55:36 +0000] \"GET / HTTP/1.1\" 200 0\n",
         "nothing to replay"},
        {"# only a comment\n\n", "nothing to replay"},
        {"-5,a.example\n", "bad time"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = replay_parse(cases[i][0], strlen(cases[i][0]), "t", &r, &e);
        CHECK(rc == -1 && strstr(e.msg, cases[i][1]), "refused: %s", e.msg);
    }
    char *big = malloc(REPLAY_LINE_MAX + 10);
    memset(big, 'a', REPLAY_LINE_MAX + 9);
    big[REPLAY_LINE_MAX + 9] = 0;
    CHECK(replay_parse(big, strlen(big), "t", &r, &e) == -1 && strstr(e.msg, "t:1: line longer"),
          "a line too long: %s", e.msg);
    free(big);
    CHECK(replay_parse("1,a\0b,Create\n", 13, "t", &r, &e) == -1 && strstr(e.msg, "NUL"),
          "a NUL byte: %s", e.msg);
    CHECK(replay_load("fixtures/replay/none", &r, &e) == -1 && strstr(e.msg, "cannot read"),
          "a missing file: %s", e.msg);
}

int main(void)
{
    test_access_log();
    test_csv();
    test_errors();
    return check_done();
}

/* tests/unit/test_sched.c: the open-loop schedule. Expected values are worked out by hand
 * from the definitions (k6's linear ramp: N(t) = r0 t + (r1 - r0) t^2 / 2D; constant
 * arrivals at N(t) = k; exponential gaps of mean 1/rate for Poisson). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flood/send/sched.h"
#include "tests/check.h"

static uint64_t count_all(struct sched *s, int64_t *first, int64_t *last, int *monotone)
{
    uint64_t n = 0;
    int64_t t, prev = -1;
    *monotone = 1;
    *first = *last = -1;
    while ((t = sched_next(s)) >= 0) {
        if (n == 0)
            *first = t;
        if (t < prev)
            *monotone = 0;
        prev = *last = t;
        n++;
    }
    return n;
}

static void test_durations(void)
{
    struct flood_err e;
    double d = -1;
    CHECK(sched_parse_duration("30", &d, &e) == 0 && d == 30, "plain number is seconds");
    CHECK(sched_parse_duration("30s", &d, &e) == 0 && d == 30, "30s");
    CHECK(sched_parse_duration("500ms", &d, &e) == 0 && fabs(d - 0.5) < 1e-12, "500ms");
    CHECK(sched_parse_duration("2m", &d, &e) == 0 && d == 120, "2m");
    CHECK(sched_parse_duration("1h", &d, &e) == 0 && d == 3600, "1h");
    CHECK(sched_parse_duration("1.5s", &d, &e) == 0 && d == 1.5, "1.5s");
    CHECK(sched_parse_duration("abc", &d, &e) == -1 && strstr(e.msg, "'abc'"),
          "garbage rejected, naming it: %s", e.msg);
    CHECK(sched_parse_duration("10x", &d, &e) == -1 && strstr(e.msg, "unit"),
          "unknown unit rejected: %s", e.msg);
    CHECK(sched_parse_duration("-3s", &d, &e) == -1, "negative rejected");
    CHECK(sched_parse_duration("", &d, &e) == -1, "empty rejected");
    CHECK(sched_parse_duration("8d", &d, &e) == -1, "days are not a unit");
    CHECK(sched_parse_duration("200h", &d, &e) == -1, "over a week rejected");
    enum sched_arrival a;
    CHECK(sched_parse_arrival("poisson", &a, &e) == 0 && a == SCHED_POISSON, "poisson");
    CHECK(sched_parse_arrival("constant", &a, &e) == 0 && a == SCHED_CONSTANT, "constant");
    CHECK(sched_parse_arrival("uniform", &a, &e) == -1 && strstr(e.msg, "uniform"),
          "unknown arrival rejected");
}

static void test_constant(void)
{
    struct flood_err e;
    struct sched s;
    int64_t first, last;
    int mono;
    CHECK(sched_init_rate(&s, 10, 1, SCHED_CONSTANT, 1, &e) == 0, "10/s for 1 s");
    CHECK(sched_total(&s) == 10, "total is 10, not 11 (got %llu)",
          (unsigned long long)sched_total(&s));
    CHECK(count_all(&s, &first, &last, &mono) == 10 && first == 0 && last == 900000000 && mono,
          "10 sends at 0, 100 ms, ... 900 ms (last %lld)", (long long)last);
    sched_rewind(&s);
    int64_t t0 = sched_next(&s), t1 = sched_next(&s), t2 = sched_next(&s);
    CHECK(t0 == 0 && t1 == 100000000 && t2 == 200000000, "spacing 100 ms exactly");
    CHECK(sched_next(&s) == 300000000, "rewind then walk again gives the same times");

    CHECK(sched_init_rate(&s, 5000, 20, SCHED_CONSTANT, 1, &e) == 0, "5000/s for 20 s");
    CHECK(sched_total(&s) == 100000, "5000/s x 20 s = 100000");
    CHECK(count_all(&s, &first, &last, &mono) == 100000 && last == 19999800000LL && mono,
          "last send at 19.9998 s (got %lld)", (long long)last);

    CHECK(sched_init_rate(&s, 3, 1.5, SCHED_CONSTANT, 1, &e) == 0, "3/s for 1.5 s");
    CHECK(sched_total(&s) == 5 && count_all(&s, &first, &last, &mono) == 5,
          "4.5 expected sends give k = 0..4: 5");
    CHECK(sched_init_rate(&s, 0.5, 1, SCHED_CONSTANT, 1, &e) == 0 && sched_total(&s) == 1,
          "0.5/s for 1 s sends once (at 0)");

    CHECK(sched_init_rate(&s, 0, 10, SCHED_CONSTANT, 1, &e) == -1 && strstr(e.msg, "--rate"),
          "rate 0 rejected: %s", e.msg);
    CHECK(sched_init_rate(&s, -5, 10, SCHED_CONSTANT, 1, &e) == -1, "negative rate rejected");
    CHECK(sched_init_rate(&s, NAN, 10, SCHED_CONSTANT, 1, &e) == -1, "NaN rate rejected");
    CHECK(sched_init_rate(&s, 10, 0, SCHED_CONSTANT, 1, &e) == -1 && strstr(e.msg, "--duration"),
          "duration 0 rejected: %s", e.msg);
}

static void test_stages(void)
{
    struct flood_err e;
    struct sched s;
    int64_t first, last;
    int mono;
    /* ramp 0 -> 100/s over 10 s: N(10) = 500; N(t) = 5 t^2, so send k at sqrt(k/5) */
    CHECK(sched_init_stages(&s, "100:10s", SCHED_CONSTANT, 1, &e) == 0, "one ramp stage");
    CHECK(sched_total(&s) == 500, "ramp 0->100 over 10 s sends 500 (got %llu)",
          (unsigned long long)sched_total(&s));
    sched_rewind(&s);
    int64_t t[6];
    for (int i = 0; i < 6; i++)
        t[i] = sched_next(&s);
    CHECK(t[0] == 0, "first at 0");
    CHECK(llabs(t[5] - (int64_t)llround(sqrt(1.0) * 1e9)) < 1000, "send 5 at 1 s (N(1) = 5)");
    sched_rewind(&s);
    CHECK(count_all(&s, &first, &last, &mono) == 500 && mono, "500 sends, monotone");
    CHECK(llabs(last - (int64_t)llround(sqrt(499 / 5.0) * 1e9)) < 1000,
          "last at sqrt(499/5) s (got %lld)", (long long)last);

    /* ramp up, hold, ramp down: 0->100 in 10 s (500), 100 for 20 s (2000), 100->0 in 10 s
     * (500) */
    CHECK(sched_init_stages(&s, "100:10s,100:20s,0:10s", SCHED_CONSTANT, 1, &e) == 0,
          "three stages");
    CHECK(sched_total(&s) == 3000 && fabs(sched_duration(&s) - 40) < 1e-9, "3000 sends over 40 s");
    CHECK(count_all(&s, &first, &last, &mono) == 3000 && mono && last < 40000000000LL,
          "every send within 40 s");
    CHECK(fabs(sched_rate_at(&s, 5) - 50) < 1e-9 && fabs(sched_rate_at(&s, 15) - 100) < 1e-9 &&
              fabs(sched_rate_at(&s, 35) - 50) < 1e-9,
          "rate at 5 s, 15 s, 35 s: 50, 100, 50");
    /* count in [10 s, 30 s) must be 2000 at exactly 100/s */
    sched_rewind(&s);
    uint64_t mid = 0;
    int64_t x;
    while ((x = sched_next(&s)) >= 0)
        mid += x >= 10000000000LL && x < 30000000000LL;
    CHECK(mid == 2000, "2000 sends in the hold stage (got %llu)", (unsigned long long)mid);

    /* a step: "50:0,50:2s,200:0,200:1s": 100 then 200 */
    CHECK(sched_init_stages(&s, "50:0,50:2s,200:0,200:1s", SCHED_CONSTANT, 1, &e) == 0,
          "a step written with zero-length stages");
    CHECK(sched_total(&s) == 300, "100 + 200 = 300 (got %llu)",
          (unsigned long long)sched_total(&s));
    sched_rewind(&s);
    uint64_t in1 = 0, in2 = 0;
    while ((x = sched_next(&s)) >= 0) {
        in1 += x < 2000000000LL;
        in2 += x >= 2000000000LL;
    }
    CHECK(in1 == 100 && in2 == 200, "100 before 2 s, 200 after (%llu, %llu)",
          (unsigned long long)in1, (unsigned long long)in2);
    CHECK(sched_peak_rate(&s) == 200, "peak rate 200");

    CHECK(sched_init_stages(&s, "100", SCHED_CONSTANT, 1, &e) == -1 &&
              strstr(e.msg, "RATE:DURATION"),
          "stage without a duration rejected: %s", e.msg);
    CHECK(sched_init_stages(&s, "100:10s,,5:1s", SCHED_CONSTANT, 1, &e) == -1 &&
              strstr(e.msg, "stage 2"),
          "empty stage rejected, naming it: %s", e.msg);
    CHECK(sched_init_stages(&s, "abc:10s", SCHED_CONSTANT, 1, &e) == -1 &&
              strstr(e.msg, "bad rate"),
          "bad rate rejected: %s", e.msg);
    CHECK(sched_init_stages(&s, "10:xx", SCHED_CONSTANT, 1, &e) == -1 && strstr(e.msg, "stage 1"),
          "bad duration rejected: %s", e.msg);
    CHECK(sched_init_stages(&s, "0:10s", SCHED_CONSTANT, 1, &e) == -1 &&
              strstr(e.msg, "sends nothing"),
          "a schedule that sends nothing rejected: %s", e.msg);
    CHECK(sched_init_stages(&s, "-5:10s", SCHED_CONSTANT, 1, &e) == -1, "negative stage rate");
    CHECK(sched_init_stages(&s, "", SCHED_CONSTANT, 1, &e) == -1, "empty spec rejected");
}

static void test_poisson(void)
{
    struct flood_err e;
    struct sched s, s2;
    int64_t first, last;
    int mono;
    /* 1000/s for 100 s: 100000 expected; the count of a Poisson process has sd sqrt(1e5)
     * = 316, so 5 sd is 1581; gaps have mean 1 ms and coefficient of variation 1 */
    CHECK(sched_init_rate(&s, 1000, 100, SCHED_POISSON, 42, &e) == 0, "poisson 1000/s");
    uint64_t n = count_all(&s, &first, &last, &mono);
    CHECK(mono, "poisson times are monotone");
    CHECK(llabs((long long)n - 100000) < 1581, "count within 5 sd of 100000 (got %llu)",
          (unsigned long long)n);
    sched_rewind(&s);
    double sum = 0, sum2 = 0;
    int64_t prev = 0, t;
    uint64_t k = 0;
    while ((t = sched_next(&s)) >= 0) {
        double g = (double)(t - prev) / 1e6; /* ms */
        sum += g;
        sum2 += g * g;
        prev = t;
        k++;
    }
    double mean = sum / (double)k, var = sum2 / (double)k - mean * mean;
    CHECK(fabs(mean - 1.0) < 0.02, "mean gap 1 ms within 2%% (got %.4f)", mean);
    CHECK(fabs(sqrt(var) / mean - 1.0) < 0.03, "gap coefficient of variation 1 (got %.4f)",
          sqrt(var) / mean);
    /* same seed: same times; another seed: other times */
    CHECK(sched_init_rate(&s2, 1000, 100, SCHED_POISSON, 42, &e) == 0, "same seed again");
    sched_rewind(&s);
    int same = 1;
    for (int i = 0; i < 1000; i++)
        same &= sched_next(&s) == sched_next(&s2);
    CHECK(same, "the same seed gives the same times");
    CHECK(sched_init_rate(&s2, 1000, 100, SCHED_POISSON, 43, &e) == 0, "another seed");
    sched_rewind(&s);
    int differ = 0;
    for (int i = 0; i < 100; i++)
        differ |= sched_next(&s) != sched_next(&s2);
    CHECK(differ, "another seed gives other times");
    /* a poisson ramp keeps the ramp's shape: 0 -> 200/s over 100 s, 10000 expected, and
     * N(50) = 2500 of them in the first half */
    CHECK(sched_init_stages(&s, "200:100s", SCHED_POISSON, 7, &e) == 0, "poisson ramp");
    uint64_t half = 0, all = 0;
    while ((t = sched_next(&s)) >= 0) {
        all++;
        half += t < 50000000000LL;
    }
    CHECK(llabs((long long)all - 10000) < 500, "ramp count within 5 sd of 10000 (got %llu)",
          (unsigned long long)all);
    CHECK(llabs((long long)half - 2500) < 250, "first half holds about a quarter (got %llu)",
          (unsigned long long)half);
}

/* Shards: shard k of n returns exactly the activities n mod n == k, at the unsharded
 * times, for constant and Poisson arrivals; together the shards return every activity
 * once. Its negative twin: a schedule with no shard set returns every activity. */
static void test_shards(void)
{
    struct flood_err e;
    for (int arrival = 0; arrival < 2; arrival++) {
        struct sched all, sh;
        CHECK(sched_init_stages(&all, "100:2s,300:3s", (enum sched_arrival)arrival, 9, &e) == 0,
              "a ramp to shard");
        enum { MAXN = 4096 };
        static int64_t times[MAXN];
        uint64_t total = 0;
        int64_t t;
        uint64_t bad_index = 0;
        while ((t = sched_next(&all)) >= 0 && total < MAXN) {
            bad_index += sched_index(&all) != total;
            times[total++] = t;
        }
        CHECK(bad_index == 0 && total > 500 && total < MAXN,
              "unsharded: sched_index counts 0, 1, ... (%llu activities)",
              (unsigned long long)total);
        for (uint64_t n = 1; n <= 3; n++) {
            uint64_t seen = 0, wrong = 0;
            for (uint64_t k = 0; k < n; k++) {
                sh = all;
                sched_rewind(&sh);
                sched_set_shard(&sh, k, n);
                uint64_t got = 0;
                while ((t = sched_next(&sh)) >= 0) {
                    uint64_t i = sched_index(&sh);
                    wrong += i % n != k || i >= total || times[i] != t;
                    got++;
                }
                if (arrival == SCHED_CONSTANT)
                    CHECK(got == sched_shard_total(&sh), "constant: shard %llu/%llu count %llu",
                          (unsigned long long)k, (unsigned long long)n, (unsigned long long)got);
                seen += got;
            }
            CHECK(wrong == 0, "%s, %llu shards: each activity in its shard at its unsharded time",
                  arrival ? "poisson" : "constant", (unsigned long long)n);
            CHECK(seen == total, "%s, %llu shards: %llu activities together, the run has %llu",
                  arrival ? "poisson" : "constant", (unsigned long long)n, (unsigned long long)seen,
                  (unsigned long long)total);
        }
        sh = all;
        sched_rewind(&sh);
        sched_set_shard(&sh, 0, 1);
        uint64_t c = 0;
        while (sched_next(&sh) >= 0)
            c++;
        CHECK(c == total, "shard 0/1 is the whole run");
    }
}

int main(void)
{
    test_shards();
    test_durations();
    test_constant();
    test_stages();
    test_poisson();
    return check_done();
}

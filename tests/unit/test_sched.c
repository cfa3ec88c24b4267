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
    CHECK(sched_parse_duration("10x", &d, &e) == -1 &&
              strstr(e.msg, "expected a duration from 0s to 1 week (250us, 500ms, 1.5s, 2m, 1h; "
                            "a plain number is seconds)"),
          "unknown unit rejected, naming the forms: %s", e.msg);
    CHECK(sched_parse_duration("-3s", &d, &e) == -1, "negative rejected");
    CHECK(sched_parse_duration("", &d, &e) == -1, "empty rejected");
    CHECK(sched_parse_duration("8d", &d, &e) == -1, "days are not a unit");
    CHECK(sched_parse_duration("200h", &d, &e) == -1, "over a week rejected");
    enum sched_arrival a;
    CHECK(sched_parse_arrival("poisson", &a, &e) == 0 && a == SCHED_POISSON, "poisson");
    CHECK(sched_parse_arrival("constant", &a, &e) == 0 && a == SCHED_CONSTANT, "constant");
    CHECK(sched_parse_arrival("uniform", &a, &e) == -1 &&
              strstr(e.msg, "--arrival: expected one of constant, poisson, got 'uniform'"),
          "unknown arrival rejected: %s", e.msg);
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
              strstr(e.msg, "stage 1 rate: expected 0 or a rate above 0"),
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

/* ---- steering ------------------------------------------------------------------------
 * As the sender's loop does: it takes intended times until one lies in the future and
 * holds it; a change at t_s then retimes the held one (or it is given back), and the walk
 * goes on. Counts integrate the steered curve: ceil(N(end)) activities. */

#define NS 1000000000LL

/* Take the times before t_ns (counted into *n); the first at or after it is held and
 * returned (-1 when none). */
static int64_t walk_to(struct sched *s, int64_t t_ns, uint64_t *n)
{
    int64_t t;
    while ((t = sched_next(s)) >= 0 && t < t_ns)
        (*n)++;
    return t;
}

/* After a change: the held activity's new time, or the next one when it was given back. */
static int64_t after_change(struct sched *s, int64_t held)
{
    if (held < 0)
        return sched_next(s);
    int64_t t = sched_steer_retime(s);
    return t >= 0 ? t : sched_next(s);
}

/* Count from first (a time already taken, or -1) to the end; the largest gap between
 * times from min_ns on into *max_gap, the smallest into *min_gap. */
static uint64_t walk_rest(struct sched *s, int64_t first, int64_t min_ns, int64_t *min_gap,
                          int64_t *max_gap)
{
    uint64_t n = 0;
    int64_t prev = -1, t = first;
    *min_gap = INT64_MAX;
    *max_gap = 0;
    while (t >= 0) {
        n++;
        if (prev >= min_ns) {
            if (t - prev < *min_gap)
                *min_gap = t - prev;
            if (t - prev > *max_gap)
                *max_gap = t - prev;
        }
        prev = t;
        t = sched_next(s);
    }
    return n;
}

static void test_steer_rate(void)
{
    struct flood_err e;
    struct sched s, copy;
    uint64_t n = 0;
    int64_t lo, hi;
    /* 100/s for 10 s; at 2.005 s (N = 200.5), 50/s at once: activity 201 (held at 2.01 s)
     * moves to 2.005 + 0.5/50 = 2.015 s, then every 20 ms; N(10) = 200.5 + 50 * 7.995 =
     * 600.25, so 601 activities (no burst to catch up, none lost) */
    CHECK(sched_init_rate(&s, 100, 10, SCHED_CONSTANT, 1, &e) == 0, "100/s for 10 s");
    int64_t held = walk_to(&s, 2005000000, &n);
    CHECK(n == 201 && held == 2010000000, "201 times before 2.005 s, the next held at 2.01 s");
    copy = s;
    CHECK(sched_steer_rate(&s, 2.005, 50, 0, &e) == 0, "steer to 50/s at once");
    int64_t t = after_change(&s, held);
    CHECK(llabs(t - 2015000000) <= 1, "the held activity moves to 2.015 s (%lld)", (long long)t);
    n += walk_rest(&s, t, 0, &lo, &hi);
    CHECK(llabs(lo - 20000000) <= 2 && llabs(hi - 20000000) <= 2,
          "after the change every gap is 20 ms (%lld..%lld ns)", (long long)lo, (long long)hi);
    CHECK(n == 601, "the count integrates the steered curve: 601 (got %llu)",
          (unsigned long long)n);
    CHECK(fabs(sched_rate_at(&s, 1) - 100) < 1e-9 && fabs(sched_rate_at(&s, 5) - 50) < 1e-9,
          "the rate before the change is kept, the new one after");

    /* the negative twins: refused values leave the schedule as it was */
    e.msg[0] = 0;
    CHECK(sched_steer_rate(&copy, 2.005, -50, 0, &e) == -1 && strstr(e.msg, "steer"),
          "a negative rate is refused: %s", e.msg);
    CHECK(sched_steer_rate(&copy, 2.005, NAN, 0, &e) == -1, "a rate not a number is refused");
    CHECK(sched_steer_rate(&copy, 2.005, SCHED_RATE_MAX * 2, 0, &e) == -1,
          "a rate over the maximum is refused");
    CHECK(sched_steer_rate(&copy, 2.005, 50, -1, &e) == -1 && strstr(e.msg, "ramp"),
          "a negative ramp is refused: %s", e.msg);
    CHECK(sched_steer_rate(&copy, 2.005, 50, SCHED_DURATION_MAX + 1, &e) == -1,
          "a ramp over a week is refused");
    n = 201;
    n += walk_rest(&copy, held, 0, &lo, &hi);
    CHECK(n == 1000 && lo == 10000000 && hi == 10000000,
          "after refusals the schedule goes on at 100/s: 1000 activities (got %llu)",
          (unsigned long long)n);

    /* a ramp: at 2 s from 100/s to 300/s over 4 s: N(2 + x) = 200 + 100x + 25x^2, so
     * activity 500 is due at 4 s and 1000 at 6 s, then 300/s: 2200 in all */
    CHECK(sched_init_rate(&s, 100, 10, SCHED_CONSTANT, 1, &e) == 0, "100/s for 10 s again");
    n = 0;
    held = walk_to(&s, 2 * NS, &n);
    CHECK(n == 200 && held == 2 * NS, "200 before 2 s");
    CHECK(sched_steer_rate(&s, 2, 300, 4, &e) == 0, "steer to 300/s over 4 s");
    t = after_change(&s, held);
    uint64_t k = 200, in_ramp = 0, after = 0;
    int64_t t500 = -1, t1000 = -1, t2199 = -1, gap4 = -1, prev = -1;
    for (; t >= 0; t = sched_next(&s), k++) {
        if (k == 500)
            t500 = t;
        if (k == 1000)
            t1000 = t;
        if (k == 2199)
            t2199 = t;
        if (prev < 4 * NS && t >= 4 * NS)
            gap4 = t - prev;
        prev = t;
        in_ramp += t < 6 * NS;
        after += t >= 6 * NS;
    }
    CHECK(llabs(t500 - 4 * NS) <= 2 && llabs(t1000 - 6 * NS) <= 2,
          "activity 500 at 4 s, 1000 at 6 s (%lld, %lld)", (long long)t500, (long long)t1000);
    CHECK(llabs(gap4 - 5000000) < 50000, "mid-ramp the gap is 1/200 s (%lld ns)", (long long)gap4);
    CHECK(in_ramp == 800 && after == 1200 && k == 2200,
          "800 in the ramp, 1200 at 300/s, 2200 in all (%llu, %llu, %llu)",
          (unsigned long long)in_ramp, (unsigned long long)after, (unsigned long long)k);
    CHECK(llabs(t2199 - 9996666667LL) <= 2, "the last at 6 + 1199/300 s (%lld)", (long long)t2199);
}

static void test_steer_pause(void)
{
    struct flood_err e;
    struct sched s;
    uint64_t n = 0;
    int64_t lo, hi;
    /* 100/s for 10 s, paused at 2.005 s (N = 200.5: activities 0..200) and resumed at 5 s:
     * activity 201 (held at 2.01 s) is given back and comes at 5.005 s, every 10 ms after:
     * N(10) = 200.5 + 500, so 701 */
    CHECK(sched_init_rate(&s, 100, 10, SCHED_CONSTANT, 1, &e) == 0, "100/s for 10 s");
    int64_t held = walk_to(&s, 2005000000, &n);
    sched_pause(&s, 2.005);
    CHECK(sched_paused(&s), "paused");
    CHECK(sched_steer_retime(&s) == -1, "the held activity is given back");
    CHECK(sched_next(&s) == -1, "no intended time while paused");
    sched_pause(&s, 3);
    CHECK(sched_paused(&s) && sched_next(&s) == -1, "pausing again changes nothing");
    sched_resume(&s, 5);
    CHECK(!sched_paused(&s), "resumed");
    int64_t t = sched_next(&s);
    CHECK(llabs(t - 5005000000LL) <= 1, "the given-back activity comes at 5.005 s (%lld)",
          (long long)t);
    n += walk_rest(&s, t, 0, &lo, &hi);
    CHECK(lo >= 9999999 && hi <= 10000001, "resumed at 100/s: 10 ms gaps (%lld..%lld)",
          (long long)lo, (long long)hi);
    CHECK(n == 701, "701 activities: none during the pause (got %llu)", (unsigned long long)n);
    (void)held;

    /* the negative twin: a resume without a pause changes nothing */
    CHECK(sched_init_rate(&s, 100, 10, SCHED_CONSTANT, 1, &e) == 0, "100/s for 10 s again");
    n = 0;
    held = walk_to(&s, 2005000000, &n);
    sched_resume(&s, 2.005);
    CHECK(!sched_paused(&s) && held == 2010000000, "a resume without a pause is a no-op");
    n += walk_rest(&s, held, 0, &lo, &hi);
    CHECK(n == 1000, "and all 1000 are sent (got %llu)", (unsigned long long)n);

    /* a rate set while paused is the one the resume goes to; nothing is sent meanwhile */
    CHECK(sched_init_rate(&s, 100, 10, SCHED_CONSTANT, 1, &e) == 0, "100/s for 10 s, third");
    n = 0;
    held = walk_to(&s, 2005000000, &n);
    sched_pause(&s, 2.005);
    t = after_change(&s, held);
    CHECK(t == -1, "paused: nothing due");
    CHECK(sched_steer_rate(&s, 3, 50, 0, &e) == 0 && sched_paused(&s) && sched_next(&s) == -1,
          "a rate set while paused sends nothing yet");
    sched_resume(&s, 5);
    t = sched_next(&s);
    CHECK(llabs(t - 5010000000LL) <= 1, "the resume goes to 50/s: next at 5.01 s (%lld)",
          (long long)t);
    n += walk_rest(&s, t, 0, &lo, &hi);
    CHECK(n == 451 && lo >= 19999999 && hi <= 20000001,
          "200.5 + 50 * 5: 451 at 20 ms gaps (got %llu)", (unsigned long long)n);
}

/* The steered count of a run: 100/s for 20 s; at 2.005 s to 50/s over 1 s; paused at 4 s,
 * resumed at 6.5 s; at 7.25 s 230/s at once; at 12 s 80/s over 3 s. */
static uint64_t steered_run(struct sched *s, const char **what)
{
    static const struct {
        double t;
        int kind; /* 0 rate, 1 pause, 2 resume */
        double rate, ramp;
    } ch[] = {{2.005, 0, 50, 1}, {4, 1, 0, 0}, {6.5, 2, 0, 0}, {7.25, 0, 230, 0}, {12, 0, 80, 3}};
    struct flood_err e;
    *what = "";
    if (sched_init_rate(s, 100, 20, SCHED_CONSTANT, 1, &e))
        return 0;
    uint64_t n = 0;
    int64_t held = -1, lo, hi;
    for (size_t i = 0; i < sizeof(ch) / sizeof(ch[0]); i++) {
        held = walk_to(s, (int64_t)(ch[i].t * 1e9), &n);
        if (ch[i].kind == 1)
            sched_pause(s, ch[i].t);
        else if (ch[i].kind == 2)
            sched_resume(s, ch[i].t);
        else if (sched_steer_rate(s, ch[i].t, ch[i].rate, ch[i].ramp, &e))
            *what = "a change refused";
        if (held >= 0) { /* retimed: taken again by the next walk unless it is past the next */
            int64_t t = sched_steer_retime(s);
            if (t >= 0 && (i + 1 == sizeof(ch) / sizeof(ch[0]) || t < ch[i + 1].t * 1e9))
                n++;
            else if (t >= 0)
                *what = "a held activity past the next change";
        }
    }
    return n + walk_rest(s, sched_next(s), 0, &lo, &hi);
}

static void test_steer_stages_text(void)
{
    struct flood_err e;
    struct sched s, r;
    const char *what;
    uint64_t steered = steered_run(&s, &what);
    CHECK(!*what, "the steered run applies its changes %s", what);
    char text[1024];
    double from = -1;
    int len = sched_stages_text(&s, text, sizeof(text), &from);
    CHECK(len > 0 && from == 0, "the curve as --stages: %s", text);
    CHECK(sched_init_stages(&r, text, SCHED_CONSTANT, 1, &e) == 0, "it parses as --stages: %s",
          e.msg);
    int64_t first, last;
    int mono;
    uint64_t replay = count_all(&r, &first, &last, &mono);
    CHECK(llabs((long long)replay - (long long)steered) <= 1,
          "the equivalent --stages schedules what the steered run did (%llu vs %llu)",
          (unsigned long long)replay, (unsigned long long)steered);
    CHECK(fabs(sched_duration(&r) - 20) < 1e-6, "and lasts as long (%g s)", sched_duration(&r));
    /* N(20) by hand: 200.5 + (100+50)/2*1 + 50*0.995 + 0 (paused) + 50*0.75 + 230*4.75
     * + (230+80)/2*3 + 80*5 = 200.5 + 75 + 49.75 + 37.5 + 1092.5 + 465 + 400 = 2320.25 */
    CHECK(steered == 2321, "the steered count is ceil(2320.25) = 2321 (got %llu)",
          (unsigned long long)steered);
    for (double t = 0.5; t < 20; t += 0.5)
        if (fabs(sched_rate_at(&r, t) - sched_rate_at(&s, t)) > 1e-6) {
            CHECK(0, "the replayed rate at %g s is the steered one (%g vs %g)", t,
                  sched_rate_at(&r, t), sched_rate_at(&s, t));
            break;
        }

    /* the negative twins: a buffer too small says so; a schedule never steered is its own
     * stages */
    char small[8];
    CHECK(sched_stages_text(&s, small, sizeof(small), &from) == -1, "a small buffer: -1");
    CHECK(sched_init_rate(&s, 100, 10, SCHED_CONSTANT, 1, &e) == 0, "100/s for 10 s");
    CHECK(sched_stages_text(&s, text, sizeof(text), &from) > 0 && !strcmp(text, "100:0,100:10s"),
          "unsteered: 100:0,100:10s (got %s)", text);
    /* written without exponents, so the grammar reads it back: %g would write 1e+07 */
    CHECK(sched_init_rate(&s, 10000000, 0.00025, SCHED_CONSTANT, 1, &e) == 0, "1e7/s for 250us");
    CHECK(sched_stages_text(&s, text, sizeof(text), &from) > 0 &&
              !strcmp(text, "10000000:0,10000000:0.00025s") &&
              sched_init_stages(&r, text, SCHED_CONSTANT, 1, &e) == 0 &&
              fabs(sched_duration(&r) - 0.00025) < 1e-12,
          "a large rate and a short stage read back: %s", text);
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
    test_steer_rate();
    test_steer_pause();
    test_steer_stages_text();
    return check_done();
}

/* tests/unit/test_attempts.c: the record of delivery attempts to faulted instances and the
 * retry-curve arithmetic (flood/measure/attempts.h): attempts per delivery, gaps, Retry-After
 * honoured or not, what arrived after the recovery and how fast, what never arrived. */
#include <string.h>

#include "flood/measure/attempts.h"
#include "tests/check.h"

static void test_key(void)
{
    uint64_t a = attempts_key("flood1.test", "/inbox", "SHA-256=abc");
    CHECK(a == attempts_key("flood1.test", "/inbox", "SHA-256=abc"), "a retry has the same key");
    CHECK(a != attempts_key("flood2.test", "/inbox", "SHA-256=abc"),
          "the same body to another instance is another delivery");
    CHECK(a != attempts_key("flood1.test", "/inbox", "SHA-256=abd"), "another body, another key");
    CHECK(attempts_key("ab", "c", NULL) != attempts_key("a", "bc", NULL),
          "the parts are separated");
}

static void test_curve(void)
{
    /* delivery 1: 503 with Retry-After 5 at 1 s, retried at 2 s (early) and at 7.6 s (honoured:
     * 5 s after 2 s is 7 s), through at 12 s after the recovery at 10 s.
     * delivery 2: refused at 3 s (a hang), through at 10.5 s.
     * delivery 3: refused twice, never through.
     * delivery 4: through at once, after the recovery. */
    struct attempt v[] = {
        {.t_ms = 12000, .key = 1, .instance = 1, .status = ATTEMPT_PASSED},
        {.t_ms = 1000, .key = 1, .instance = 1, .status = 503, .retry_after = 5},
        {.t_ms = 2000, .key = 1, .instance = 1, .status = 503, .retry_after = 5},
        {.t_ms = 7600, .key = 1, .instance = 1, .status = 503, .retry_after = 5},
        {.t_ms = 3000, .key = 2, .instance = 2, .status = ATTEMPT_HANG},
        {.t_ms = 10500, .key = 2, .instance = 2, .status = 202},
        {.t_ms = 4000, .key = 3, .instance = 3, .status = 429, .retry_after = 1},
        {.t_ms = 9000, .key = 3, .instance = 3, .status = ATTEMPT_RESET},
        {.t_ms = 11000, .key = 4, .instance = 1, .status = ATTEMPT_PASSED},
    };
    struct attempts_curve c;
    attempts_curve_of(v, sizeof(v) / sizeof(v[0]), 10000, &c);
    CHECK(c.attempts == 9 && c.deliveries == 4, "9 attempts, 4 deliveries (%llu)",
          (unsigned long long)c.deliveries);
    CHECK(c.delivered == 3 && c.never_arrived == 1, "3 delivered, 1 never arrived");
    CHECK(c.passed == 3 && c.refused_status == 4 && c.hung == 1 && c.reset == 1,
          "answered: 3 passed, 4 refused with a status, 1 hung, 1 reset");
    CHECK(c.per_delivery[1] == 1 && c.per_delivery[2] == 2 && c.per_delivery[4] == 1 &&
              c.max_attempts == 4,
          "attempts per delivery: one of 1, two of 2, one of 4");
    /* gaps: 1000, 5600, 4400 (delivery 1); 7500 (2); 5000 (3) */
    CHECK(c.gaps == 5 && c.gap_p50_ms == 5000 && c.gap_max_ms == 7500,
          "5 gaps, p50 5000 ms, max 7500 ms (%lld, %lld)", (long long)c.gap_p50_ms,
          (long long)c.gap_max_ms);
    CHECK(c.retry_after_given == 4 && c.retry_after_honoured == 2 && c.retry_after_early == 2,
          "Retry-After given before 4 gaps: 2 honoured, 2 early (%llu, %llu)",
          (unsigned long long)c.retry_after_honoured, (unsigned long long)c.retry_after_early);
    CHECK(c.recovered == 2 && c.recovery_p50_ms == 500 && c.recovery_max_ms == 2000,
          "2 recovered, 0.5 s and 2 s after the recovery");
    CHECK(c.recovered_attempts == 3 && c.herd_per_s[0] == 1 && c.herd_per_s[1] == 1 &&
              c.herd_per_s[2] == 1 && c.herd_peak_per_s == 1,
          "the herd: one attempt in each of the first three seconds after recovery");

    struct attempts_curve none;
    attempts_curve_of(v, 0, 0, &none);
    CHECK(none.attempts == 0 && none.deliveries == 0 && none.mean_attempts == 0,
          "no attempts, an empty curve");
}

static void test_record(void)
{
    struct attempts *a = attempts_new(3);
    int taken = 0;
    for (int i = 0; i < 5; i++) {
        struct attempt at = {.t_ms = i * 1000, .key = 7, .status = i < 4 ? 503 : 0};
        taken += attempts_add(a, &at);
    }
    CHECK(taken == 5, "every attempt taken while the record is open (past the cap: dropped)");
    attempts_close(a);
    struct attempt late = {.t_ms = 9000, .key = 7, .status = 0};
    CHECK(attempts_add(a, &late) == 0, "a closed record takes no attempt");
    json_t *j = attempts_json(a, 0);
    CHECK(j && json_integer_value(json_object_get(j, "attempts")) == 3 &&
              json_integer_value(json_object_get(j, "dropped")) == 2,
          "a record of 3 keeps 3 and counts 2 dropped");
    CHECK(json_integer_value(json_object_get(j, "never_arrived")) == 1 &&
              json_integer_value(
                  json_object_get(json_object_get(j, "attempts_per_delivery"), "3")) == 1,
          "the kept 3 are one delivery of 3 attempts, never through");
    json_decref(j);
    attempts_free(a);
}

int main(void)
{
    test_key();
    test_curve();
    test_record();
    return check_done();
}

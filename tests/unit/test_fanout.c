/* tests/unit/test_fanout.c: the fan-out record (flood/measure/fanout.h): per post first and
 * last delivery and their spread, shares within 10 s and 60 s, lag by class, and the
 * concurrency per instance. */
#include <string.h>

#include "flood/measure/fanout.h"
#include "tests/check.h"

static const char *const names[] = {"fast", "slow", "error", "hang", "gone"};

static double get(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_number_value(v);
}

int main(void)
{
    struct fanout *f = fanout_new(4);
    CHECK(fanout_json(f, names) == NULL, "no post, no fan_out");
    /* post A published at 0: delivered at 1 s, 2 s, 12 s; post B at 100 s: 100.5 s, 170 s */
    fanout_add(f, "https://t/a", 0, 1000000, 0);
    fanout_add(f, "https://t/a", 0, 2000000, 1);
    fanout_add(f, "https://t/a", 0, 12000000, 0);
    fanout_add(f, "https://t/b", 100000000, 100500000, 0);
    fanout_add(f, "https://t/b", 100000000, 170000000, 1);
    fanout_add(f, NULL, 0, 1, 0); /* no id: not counted */
    fanout_inflight(f, 2, 1);
    fanout_inflight(f, 2, 1);
    fanout_inflight(f, 2, -1);
    fanout_inflight(f, 3, 1);
    fanout_inflight(f, 9, 1); /* outside the crowd: ignored */
    json_t *j = fanout_json(f, names);
    CHECK(j && get(j, "posts", NULL) == 2 && get(j, "deliveries", NULL) == 5,
          "2 posts, 5 deliveries");
    CHECK(get(j, "per_post", "min") == 2 && get(j, "per_post", "max") == 3,
          "per post: 2 to 3 deliveries");
    CHECK(get(j, "within_10s", NULL) > 0.599 && get(j, "within_10s", NULL) < 0.601 &&
              get(j, "within_60s", NULL) > 0.799 && get(j, "within_60s", NULL) < 0.801,
          "within 10 s: 3 of 5; within 60 s: 4 of 5");
    double first_max = get(j, "first_ms", "max"), last_max = get(j, "last_ms", "max");
    CHECK(first_max > 990 && first_max < 1010 && last_max > 69000 && last_max < 70100,
          "first delivery at most 1 s, last at most 70 s (%g, %g)", first_max, last_max);
    double spread_max = get(j, "spread_ms", "max");
    CHECK(spread_max > 69000 && spread_max < 69600, "the widest post spread 69.5 s (%g)",
          spread_max);
    json_t *cls = json_object_get(j, "lag_ms_by_class");
    CHECK(get(cls, "fast", "count") == 3 && get(cls, "slow", "count") == 2 &&
              !json_object_get(cls, "hang"),
          "lag by class: 3 fast, 2 slow, no class without deliveries");
    json_t *c = json_object_get(j, "concurrent_per_instance");
    CHECK(get(c, "max", NULL) == 2 && get(c, "instances", NULL) == 2 && get(c, "mean", NULL) == 1.5,
          "concurrency: instance 2 peaked at 2, instance 3 at 1");
    json_decref(j);
    fanout_free(f);
    return check_done();
}

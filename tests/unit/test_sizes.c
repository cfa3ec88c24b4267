/* tests/unit/test_sizes.c: --population sizes=/acts= (flood/crowd/sizes.h): the grammar,
 * the seeded layout (exact: the sizes by rank are a pure function of the counts and the
 * exponent, checked against the same water-filling worked by hand in Python), the cap, and
 * the sampler over a million seeded draws (bounds 20 sigmas wide: they cannot flake). */
#include <math.h>
#include <stdlib.h>

#include "flood/crowd/population.h"
#include "flood/crowd/sizes.h"
#include "tests/check.h"

static const char *parse_err(const char *spec)
{
    static struct flood_err e;
    struct population p;
    memset(&e, 0, sizeof(e));
    int rc = population_parse(spec, &p, &e);
    population_free(&p);
    return rc == 0 ? "" : e.msg;
}

static int cmp_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x > y ? -1 : x < y;
}

static void test_grammar(void)
{
    struct population p;
    struct flood_err e = {0};
    CHECK(population_parse("sizes=zipf:1.1", &p, &e) == 0 && p.sizes.size_s == 1.1 &&
              !p.sizes.acts_given && p.share[POP_FAST] == 1,
          "sizes=zipf:1.1 alone: every instance fast, sizes skewed");
    population_free(&p);
    CHECK(population_parse("fast=90,gone=10,sizes=zipf,acts=even,seed=3", &p, &e) == 0 &&
              p.sizes.size_s == 1 && p.sizes.act_s == 0 && p.sizes.acts_given && p.seed == 3,
          "sizes=zipf is an exponent of 1; acts=even set apart");
    population_free(&p);
    CHECK(strstr(parse_err("sizes=pareto"), "population 'sizes': expected even, zipf or zipf:S"),
          "an unknown law is refused, naming the forms: %s", parse_err("sizes=pareto"));
    CHECK(strstr(parse_err("acts=zipf:9"), "population 'acts'") != NULL,
          "an exponent past 4 is refused: %s", parse_err("acts=zipf:9"));
    CHECK(strstr(parse_err("sizes=zipf:"), "population 'sizes'") != NULL,
          "zipf: without an exponent is refused");
    CHECK(strstr(parse_err("size=zipf"), "sizes=, acts=") != NULL,
          "a misspelt key names the keys: %s", parse_err("size=zipf"));
}

static void test_layout(void)
{
    struct sizes s = {.size_s = 1.1};
    struct flood_err e = {0};
    CHECK(sizes_layout(&s, 20, 10, 1, &e) == 0 && s.total == 200 && s.act_s == 1.1,
          "20 instances of 10 actors: 200 actors, who acts skewed as the sizes");
    uint32_t v[20], sum = 0;
    for (int i = 1; i <= 20; i++) {
        v[i - 1] = s.size[i];
        sum += s.size[i];
    }
    qsort(v, 20, sizeof(uint32_t), cmp_desc);
    static const uint32_t want[20] = {57, 27, 18, 13, 11, 9, 8, 7, 6, 5,
                                      5,  5,  4,  4,  4,  4, 4, 3, 3, 3};
    CHECK(!memcmp(v, want, sizeof(want)) && sum == 200,
          "the sizes by rank, exactly: 57, 27, 18, 13, ... 3 (adding up to 200)");
    CHECK(s.width == 57 && sizes_median(&s) == 5, "the biggest 57 (the grid's width), median 5");
    uint32_t first[21];
    memcpy(first, s.size, sizeof(first));
    struct sizes t = {.size_s = 1.1};
    CHECK(sizes_layout(&t, 20, 10, 1, &e) == 0 && !memcmp(first, t.size, sizeof(first)) &&
              !memcmp(s.perm, t.perm, 200 * sizeof(uint32_t)),
          "the same seed, the same crowd");
    CHECK(sizes_layout(&t, 20, 10, 2, &e) == 0 && memcmp(first, t.size, sizeof(first)),
          "another seed, the instances ranked otherwise");
    int live = 1;
    for (int i = 1; i <= 20; i++)
        live &= sizes_live(&s, i, (int)s.size[i]) && !sizes_live(&s, i, (int)s.size[i] + 1);
    CHECK(live && !sizes_live(&s, 0, 1) && !sizes_live(&s, 21, 1),
          "actors 1..size live on each instance, none past it");
    sizes_clear(&t);

    struct sizes even = {.act_s = 1, .acts_given = 1};
    CHECK(sizes_layout(&even, 7, 3, 1, &e) == 0 && even.width == 3 && even.size[1] == 3 &&
              even.size[7] == 3 && even.act_s == 1,
          "sizes even, acts skewed: every instance --actors");
    sizes_clear(&even);

    struct sizes big = {.size_s = 1.1};
    CHECK(sizes_layout(&big, 10000, 5, 1, &e) == 0 && big.total == 50000 && big.cap == 104 &&
              big.width == 104,
          "10,000 instances of 5: the cap (2^20 grid slots) holds the biggest at 104");
    uint64_t bsum = 0;
    int ones = 0;
    for (int i = 1; i <= 10000; i++) {
        bsum += big.size[i];
        ones += big.size[i] >= 1;
    }
    CHECK(bsum == 50000 && ones == 10000 && sizes_median(&big) == 2,
          "... still 50,000 actors, each instance one at least, the median 2");
    sizes_clear(&big);

    struct sizes huge = {.size_s = 1};
    CHECK(sizes_layout(&huge, 100000, 100, 1, &e) == -1 && strstr(e.msg, "population 'sizes'"),
          "a crowd past the skewed limit is refused: %s", e.msg);
    sizes_clear(&s);
}

static uint64_t mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void test_sampler(void)
{
    struct sizes s = {.size_s = 1.1};
    struct flood_err e = {0};
    if (sizes_layout(&s, 20, 10, 1, &e))
        return;
    enum { N = 1000000 };
    uint64_t x = 42;
    int bad = 0;
    static uint32_t per_inst[21];
    for (int k = 0; k < N; k++) {
        int i, a;
        sizes_pick(&s, mix(&x), &i, &a);
        bad += !sizes_live(&s, i, a);
        per_inst[i]++;
    }
    CHECK(bad == 0, "every draw a live actor");
    /* the top 10% by rank: expected share p; a million draws, sd sqrt(p(1-p)/N) < 0.0005 */
    double p = sizes_top_share(&s, 0.1);
    json_t *j = sizes_json(&s);
    double got = json_real_value(json_object_get(j, "top10_drawn_share"));
    CHECK(p > 0.4 && p < 0.7 && fabs(got - p) < 0.01,
          "the top 10%% of the actors drew %.4f of a million, expected %.4f (20 sigmas)", got, p);
    CHECK(json_integer_value(json_object_get(j, "activities_drawn")) == N &&
              json_integer_value(json_object_get(j, "biggest")) == 57 &&
              json_integer_value(json_object_get(j, "actors")) == 200 &&
              json_integer_value(json_object_get(j, "median")) == 5,
          "sizes_json: draws, biggest, actors, median");
    json_decref(j);
    /* the rank-1 actor's share: cdf[0]; within 20 sigmas */
    uint32_t first = s.perm[0];
    double p1 = s.cdf[0], f1 = (double)s.sent[first] / N;
    CHECK(fabs(f1 - p1) < 20 * sqrt(p1 * (1 - p1) / N),
          "the busiest actor drew %.4f, expected %.4f", f1, p1);
    sizes_clear(&s);

    /* acts even: each instance draws in proportion to its size */
    struct sizes u = {.size_s = 1.1, .acts_given = 1};
    if (sizes_layout(&u, 20, 10, 1, &e))
        return;
    memset(per_inst, 0, sizeof(per_inst));
    for (int k = 0; k < N; k++) {
        int i, a;
        sizes_pick(&u, mix(&x), &i, &a);
        per_inst[i]++;
    }
    int worst = 0;
    for (int i = 1; i <= 20; i++) {
        double q = u.size[i] / 200.0, f = (double)per_inst[i] / N;
        worst |= fabs(f - q) > 20 * sqrt(q * (1 - q) / N);
    }
    CHECK(!worst, "acts=even: each instance's share of the draws its share of the actors");
    CHECK(sizes_pick_in(&u, 1, 12345) >= 1 && sizes_pick_in(&u, 1, 12345) <= (int)u.size[1],
          "an actor pinned to an instance is one of its own");
    sizes_clear(&u);
}

int main(void)
{
    test_grammar();
    test_layout();
    test_sampler();
    return check_done();
}

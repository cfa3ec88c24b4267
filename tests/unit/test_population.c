/* tests/unit/test_population.c: --population SPEC (flood/crowd/population.h): each class's
 * forms with a refused twin naming the class and the forms, the shares' sum, and the seeded
 * assignment (counts that add up, the same classes for the same seed, others for another). */
#include <string.h>

#include "flood/crowd/population.h"
#include "tests/check.h"

static const char *refusal(const char *spec)
{
    static struct flood_err e;
    struct population p;
    memset(&e, 0, sizeof(e));
    return population_parse(spec, &p, &e) == 0 ? "" : e.msg;
}

static void test_parse(void)
{
    struct population p;
    struct flood_err e = {0};
    CHECK(population_parse("fast=85,slow=10:1s-4s,error=3,hang=1,gone=1", &p, &e) == 0 &&
              p.share[POP_FAST] > 0.849 && p.share[POP_FAST] < 0.851 &&
              p.rule[POP_SLOW].delay_ms == 1000 && p.rule[POP_SLOW].jitter_ms == 3000 &&
              p.rule[POP_ERROR].status == 503 && p.rule[POP_ERROR].retry_after == 30 &&
              p.rule[POP_HANG].hang && p.rule[POP_GONE].status == 410 && p.seed == 1,
          "the documented spec: %s", e.msg);
    CHECK(population_parse("slow=10,error=5:429,seed=7", &p, &e) == 0 &&
              p.share[POP_FAST] > 0.849 && p.share[POP_FAST] < 0.851 &&
              p.rule[POP_SLOW].delay_ms == 1000 && p.rule[POP_ERROR].status == 429 && p.seed == 7,
          "fast left out takes the rest; slow's default range; error=5:429; seed=7");
    CHECK(population_parse("slow=20%:2s", &p, &e) == 0 && p.rule[POP_SLOW].delay_ms == 2000 &&
              p.rule[POP_SLOW].jitter_ms == 0,
          "slow=20%%:2s, a fixed delay");
    CHECK(strstr(refusal("slow=10:1-4s"), "population 'slow': expected a duration"),
          "slow=10:1-4s refused naming the class: %s", refusal("slow=10:1-4s"));
    CHECK(strstr(refusal("slow=10:4s-1s"), "population 'slow'"), "a backwards range is refused: %s",
          refusal("slow=10:4s-1s"));
    CHECK(strstr(refusal("error=3:404"), "population 'error'") &&
              strstr(refusal("error=3:404"), "429"),
          "error=3:404 refused: %s", refusal("error=3:404"));
    CHECK(strstr(refusal("hang=1:5s"), "population 'hang': takes only a share"),
          "hang takes no argument: %s", refusal("hang=1:5s"));
    CHECK(strstr(refusal("slow=x"), "population 'slow': expected a share"), "slow=x refused: %s",
          refusal("slow=x"));
    CHECK(strstr(refusal("dead=5"), "population: class (else sizes=, acts=, seed=): expected one "
                                    "of fast, slow, error, hang, "
                                    "gone"),
          "an unknown class: %s", refusal("dead=5"));
    CHECK(strstr(refusal("fast=90,slow=20"), "add up to 110%"), "shares over 100%%: %s",
          refusal("fast=90,slow=20"));
    CHECK(strstr(refusal("fast=50,slow=20"), "add up to 70%"),
          "fast given and the sum short of 100%%: %s", refusal("fast=50,slow=20"));
    CHECK(strstr(refusal("slow=10,slow=5"), "given twice"), "a class twice");
    CHECK(*refusal("slow=10,,hang=1") && *refusal("slow") && *refusal("") &&
              *refusal("seed=x,slow=1"),
          "an empty item, no share, an empty spec, a bad seed are refused");
}

static void test_assign(void)
{
    struct population p, q;
    struct flood_err e = {0};
    CHECK(population_parse("fast=85,slow=10:1s-4s,error=3,hang=1,gone=1", &p, &e) == 0 &&
              population_parse("fast=85,slow=10:1s-4s,error=3,hang=1,gone=1", &q, &e) == 0,
          "two parses");
    population_assign(&p, 500);
    population_assign(&q, 500);
    CHECK(p.count[POP_FAST] == 425 && p.count[POP_SLOW] == 50 && p.count[POP_ERROR] == 15 &&
              p.count[POP_HANG] == 5 && p.count[POP_GONE] == 5,
          "500 instances: 425, 50, 15, 5, 5");
    int n[POP__COUNT] = {0}, same = 1;
    for (int i = 1; i <= 500; i++) {
        n[population_class(&p, i)]++;
        same &= population_class(&p, i) == population_class(&q, i);
    }
    CHECK(n[POP_FAST] == 425 && n[POP_GONE] == 5, "the classes hold their counts");
    CHECK(same, "the same seed, the same classes");
    int slow_low = 0;
    for (int i = 1; i <= 250; i++)
        slow_low += population_class(&p, i) == POP_SLOW;
    CHECK(slow_low > 10 && slow_low < 40, "shuffled: slow instances in both halves (%d of 50 low)",
          slow_low);
    struct population r;
    CHECK(population_parse("fast=85,slow=10,error=3,hang=1,gone=1,seed=2", &r, &e) == 0, "seed 2");
    population_assign(&r, 500);
    int differ = 0;
    for (int i = 1; i <= 500; i++)
        differ += population_class(&p, i) != population_class(&r, i);
    CHECK(differ > 20, "another seed, other classes (%d differ)", differ);
    CHECK(population_class(&p, 0) == POP_FAST && population_class(&p, 501) == POP_FAST,
          "outside the crowd: fast");
    population_assign(&q, 7);
    CHECK(q.count[POP_FAST] + q.count[POP_SLOW] + q.count[POP_ERROR] + q.count[POP_HANG] +
                  q.count[POP_GONE] ==
              7,
          "7 instances: the counts add up to 7");
    json_t *j = population_json(&p);
    CHECK(j && json_integer_value(json_object_get(
                   json_object_get(json_object_get(j, "classes"), "slow"), "count")) == 50,
          "run.json's population counts the slow class");
    json_decref(j);
    population_clear(&p);
    population_clear(&q);
    population_clear(&r);
}

int main(void)
{
    test_parse();
    test_assign();
    return check_done();
}

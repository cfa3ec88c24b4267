/* flood/crowd/population.h: instance classes (--population SPEC): shares of the crowd's
 * instances that are fast, slow, erroring, hanging or gone, each instance given its class
 * by a seeded shuffle. A class is a fault rule (fault.h) applied to its instances.
 *
 * SPEC is CLASS=SHARE[:ARG][,CLASS=SHARE[:ARG]...][,seed=N], the shares percents (a plain
 * number or with '%') adding up to at most 100, `fast` taking what is left:
 *   fast=85            no fault
 *   slow=10:1s-4s      every request answered after a uniform delay in the range (default
 *                      1s-4s; one duration is a fixed delay)
 *   error=3:503        every request answered with the status (503, the default, or 429,
 *                      or any of 500..599) and Retry-After: 30
 *   hang=1             never answer
 *   gone=1             410 on everything
 *   seed=7             the shuffle's seed (default 1): the same seed, the same classes
 *   sizes=zipf:1.1     actors per instance and who acts by Zipf's law (sizes.h; even,
 *                      the default, gives every instance --actors and draws actors alike)
 *   acts=zipf:0.8      who acts by its own law (even: alike), whatever sizes= says
 * e.g. fast=85,slow=10:1s-4s,error=3,hang=1,gone=1 (the shares of a fan-out model where most
 * of a server's followers sit on healthy instances). NodeInfo stays healthy, as with --fault.
 * Parsing is pure; population_assign draws the classes for a crowd. */
#ifndef FLOOD_POPULATION_H
#define FLOOD_POPULATION_H

#include <jansson.h>
#include <stdint.h>

#include "flood/crowd/fault.h"
#include "flood/crowd/sizes.h"
#include "sign/err.h"

enum {
    POP_FAST,
    POP_SLOW,
    POP_ERROR,
    POP_HANG,
    POP_GONE,
    POP__COUNT,
};

/* The class names, indexed by POP_*. */
extern const char *const population_class_names[POP__COUNT];

struct population {
    char spec[FAULT_SPEC_MAX];
    double share[POP__COUNT];           /* fractions; fast is what the others leave */
    struct fault_rule rule[POP__COUNT]; /* [POP_FAST] unused */
    uint64_t seed;
    int instances;         /* 0 until assigned */
    uint8_t *class_of;     /* [1..instances], owned; NULL until assigned */
    int count[POP__COUNT]; /* instances in each class once assigned */
    struct sizes sizes;    /* sizes=, acts=: laid out by the run before its crowd is made
                              (its tables owned by the parsed population, population_free) */
};

/* Parse SPEC into *p (class_of NULL). 0, or -1 and err naming the class or key and the
 * forms accepted ("population 'slow': expected a duration ..."). */
int population_parse(const char *spec, struct population *p, struct flood_err *err) FLOOD_WUR;

/* Give each of the crowd's n instances its class: round(share * n) instances a class (the
 * remainders to the largest fractions, so the counts add up to n), placed by a Fisher-Yates
 * shuffle seeded with p->seed. Replaces an earlier assignment. */
void population_assign(struct population *p, int n);

/* The class of instance i (1..instances), POP_FAST outside. */
int population_class(const struct population *p, int i);

/* Free class_of (p itself is the caller's). */
void population_clear(struct population *p);

/* Free what population_parse's p owns: class_of and the sizes' layout. */
void population_free(struct population *p);

/* run.json's "population": the spec, the seed, per class its share, rule and instance count
 * and the first instances, and with sizes= or acts= the "sizes" record (sizes_json) (a new
 * reference). */
json_t *population_json(const struct population *p);

#endif

/* flood/crowd/population.c: --population SPEC, instance classes drawn by a seeded shuffle
 * (see population.h). */
#include "flood/crowd/population.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/grammar.h"

#define POP_RETRY_AFTER 30 /* seconds, with an error class's status */

const char *const population_class_names[POP__COUNT] = {"fast", "slow", "error", "hang", "gone"};

/* The fault rule of class k with its argument (arg NULL: the default). 0, or -1 and err. */
static int class_rule(struct population *p, int k, const char *arg, size_t n, struct flood_err *err)
{
    char what[48], spec[128];
    snprintf(what, sizeof(what), "population '%s'", population_class_names[k]);
    if (k == POP_SLOW) {
        long lo = 1000, hi = 4000;
        if (arg) {
            const char *dash = memchr(arg, '-', n);
            if (gram_duration_ms(what, arg, dash ? (size_t)(dash - arg) : n, GRAM_BARE_NONE, 1,
                                 3600000, &lo, err))
                return -1;
            hi = lo;
            if (dash && gram_duration_ms(what, dash + 1, n - (size_t)(dash - arg) - 1,
                                         GRAM_BARE_NONE, lo, 3600000, &hi, err))
                return -1;
        }
        if (hi > lo)
            snprintf(spec, sizeof(spec), "all:delay=%ldms,jitter=%ldms", lo, hi - lo);
        else
            snprintf(spec, sizeof(spec), "all:delay=%ldms", lo);
    } else if (k == POP_ERROR) {
        uint64_t status = 503;
        if (arg && gram_uint(what, arg, n, 429, 599, &status, err))
            return -1;
        if (status != 429 && status < 500) {
            flood_err_set(err, FLOOD_EINVAL,
                          "%s: expected 429 or a status from 500 to 599, got '%.*s'", what, (int)n,
                          arg);
            return -1;
        }
        snprintf(spec, sizeof(spec), "all:status=%d,retry-after=%d", (int)status, POP_RETRY_AFTER);
    } else {
        if (arg) {
            flood_err_set(err, FLOOD_EINVAL, "%s: takes only a share, got ':%.*s'", what, (int)n,
                          arg);
            return -1;
        }
        snprintf(spec, sizeof(spec), "all:%s", k == POP_HANG ? "hang" : "gone");
    }
    return fault_parse(spec, &p->rule[k], err);
}

/* One CLASS=SHARE[:ARG] or seed=N item. 0, or -1 and err. */
static int parse_item(struct population *p, const struct gram_item *it, unsigned *seen,
                      struct flood_err *err)
{
    if (!it->n || !it->val || !it->val_n) {
        flood_err_set(err, FLOOD_EINVAL,
                      "population: expected CLASS=SHARE (fast, slow, error, hang, gone), "
                      "sizes=, acts= or seed=N, got '%.*s' in '%s'",
                      (int)it->n, it->s, p->spec);
        return -1;
    }
    if (gram_eq(it->key, it->key_n, "seed"))
        return gram_uint("population 'seed'", it->val, it->val_n, 0, UINT64_MAX, &p->seed, err);
    if (gram_eq(it->key, it->key_n, "sizes") || gram_eq(it->key, it->key_n, "acts"))
        return sizes_parse(&p->sizes, gram_eq(it->key, it->key_n, "acts") ? "acts" : "sizes",
                           it->val, it->val_n, err);
    int k;
    if (gram_keyword("population: class (else sizes=, acts=, seed=)", it->key, it->key_n,
                     population_class_names, POP__COUNT, &k, err))
        return -1;
    if (*seen & (1u << k)) {
        flood_err_set(err, FLOOD_EINVAL, "population: class '%s' given twice in '%s'",
                      population_class_names[k], p->spec);
        return -1;
    }
    *seen |= 1u << k;
    const char *colon = memchr(it->val, ':', it->val_n);
    size_t share_n = colon ? (size_t)(colon - it->val) : it->val_n;
    char what[48];
    snprintf(what, sizeof(what), "population '%s'", population_class_names[k]);
    if (gram_share(what, it->val, share_n, GRAM_SHARE_PERCENT, 0, 1, &p->share[k], err))
        return -1;
    if (k == POP_FAST) {
        if (colon) {
            flood_err_set(err, FLOOD_EINVAL, "population 'fast': takes only a share in '%s'",
                          p->spec);
            return -1;
        }
        return 0;
    }
    return class_rule(p, k, colon ? colon + 1 : NULL, colon ? it->val_n - share_n - 1 : 0, err);
}

int population_parse(const char *spec, struct population *p, struct flood_err *err)
{
    memset(p, 0, sizeof(*p));
    p->seed = 1;
    if (!spec || !*spec || strlen(spec) >= sizeof(p->spec)) {
        flood_err_set(err, FLOOD_EINVAL, "population: expected CLASS=SHARE,... (at most %d bytes)",
                      (int)sizeof(p->spec) - 1);
        return -1;
    }
    snprintf(p->spec, sizeof(p->spec), "%s", spec);
    unsigned seen = 0;
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, p->spec, GRAM_NUL, ',');
    while (gram_list_next(&l, &it))
        if (parse_item(p, &it, &seen, err))
            return -1;
    double others = 0;
    for (int k = POP_SLOW; k < POP__COUNT; k++)
        others += p->share[k];
    if (others > 1 + 1e-9 || ((seen & 1u) && fabs(others + p->share[POP_FAST] - 1) > 1e-6)) {
        flood_err_set(err, FLOOD_EINVAL,
                      "population: the shares add up to %g%%, not 100%% (fast may be left out "
                      "to take the rest) in '%s'",
                      (others + p->share[POP_FAST]) * 100, spec);
        return -1;
    }
    p->share[POP_FAST] = 1 - others;
    if (p->share[POP_FAST] < 0)
        p->share[POP_FAST] = 0;
    return 0;
}

/* splitmix64: the shuffle's generator, its own so the classes depend on the seed alone */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void population_assign(struct population *p, int n)
{
    free(p->class_of);
    p->instances = n > 0 ? n : 0;
    p->class_of = calloc((size_t)p->instances + 1, 1);
    if (!p->class_of)
        abort();
    /* the counts: floors, then the remainders to the largest fractions */
    int total = 0;
    double rem[POP__COUNT];
    for (int k = 0; k < POP__COUNT; k++) {
        double x = p->share[k] * p->instances;
        p->count[k] = (int)floor(x + 1e-9);
        rem[k] = x - p->count[k];
        total += p->count[k];
    }
    while (total < p->instances) {
        int best = 0;
        for (int k = 1; k < POP__COUNT; k++)
            if (rem[k] > rem[best])
                best = k;
        p->count[best]++;
        rem[best] = -1;
        total++;
    }
    /* a shuffled order of the instances, then the classes in it */
    int *order = calloc((size_t)p->instances + 1, sizeof(int));
    if (!order)
        abort();
    for (int i = 0; i < p->instances; i++)
        order[i] = i + 1;
    uint64_t s = p->seed;
    for (int i = p->instances - 1; i > 0; i--) {
        int j = (int)(next(&s) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int at = 0;
    for (int k = 0; k < POP__COUNT; k++)
        for (int c = 0; c < p->count[k]; c++)
            p->class_of[order[at++]] = (uint8_t)k;
    free(order);
    for (int k = POP_SLOW; k < POP__COUNT; k++) {
        p->rule[k].first = 1;
        p->rule[k].last = p->instances;
    }
}

int population_class(const struct population *p, int i)
{
    return p->class_of && i >= 1 && i <= p->instances ? p->class_of[i] : POP_FAST;
}

void population_clear(struct population *p)
{
    free(p->class_of);
    p->class_of = NULL;
    p->instances = 0;
}

void population_free(struct population *p)
{
    population_clear(p);
    sizes_clear(&p->sizes);
}

json_t *population_json(const struct population *p)
{
    json_t *o = json_pack("{s:s, s:I, s:i}", "spec", p->spec, "seed", (json_int_t)p->seed,
                          "instances", p->instances);
    json_t *classes = json_object();
    for (int k = 0; k < POP__COUNT && o && classes; k++) {
        json_t *first = json_array();
        for (int i = 1; i <= p->instances && first && json_array_size(first) < 20; i++)
            if (p->class_of[i] == k)
                json_array_append_new(first, json_integer(i));
        json_object_set_new(
            classes, population_class_names[k],
            json_pack("{s:f, s:i, s:s, s:o*}", "share", p->share[k], "count", p->count[k], "fault",
                      k == POP_FAST ? "" : p->rule[k].spec + 4, "first_instances", first));
    }
    if (o)
        json_object_set_new(o, "classes", classes);
    if (o && p->sizes.total)
        json_object_set_new(o, "sizes", sizes_json(&p->sizes));
    return o;
}

/* flood/crowd/sizes.h: skewed instance sizes and activity (--population sizes=zipf:S,
 * acts=zipf:S): a few big instances and a long tail, and a few actors sending most of the
 * activity, as on the fediverse, where one instance holds a large share of the accounts and
 * most accounts are quiet.
 *
 * Sizes: the crowd's instances*actors accounts (the total asked with --instances and
 * --actors) are spread over the instances by Zipf's law, the instance of rank r (a seeded
 * shuffle of the instances) weighing r^-S; each instance holds at least one actor and at most
 * `cap` (SIZES_GRID_MAX / instances, at least --actors), the excess going to the others in
 * proportion, so the counts add up to the total exactly. The crowd is then a grid as wide as
 * the biggest instance: instance i's actors 1..size[i] act, the ones past its size are
 * served as any crowd actor (a reply may name one) but never send.
 *
 * Activity: which actor sends the next activity is drawn from the live actors by Zipf's law
 * too (acts=zipf:S), the actor of rank r (another seeded shuffle, of all the live actors)
 * weighing r^-S; acts=even draws them uniformly. sizes=zipf:S alone skews both with the one
 * exponent. Everything depends on the seed alone: the same seed, the same crowd. */
#ifndef FLOOD_SIZES_H
#define FLOOD_SIZES_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdint.h>

#include "sign/err.h"

/* The most grid slots (instances x the biggest instance) a skewed crowd may take: the cap
 * on one instance's size is this over the instances (10,000 instances: 104 actors). */
#define SIZES_GRID_MAX (1u << 20)
/* The most live actors a skewed crowd draws from (the per-actor tables). */
#define SIZES_ACTORS_MAX (1u << 22)

struct sizes {
    double size_s;  /* Zipf exponent of the sizes, 0: even (every instance --actors) */
    double act_s;   /* Zipf exponent of who acts, 0: even */
    int acts_given; /* acts= given; else who acts follows sizes= */
    uint64_t seed;
    int instances, asked;   /* --instances, --actors */
    int cap;                /* the most actors one instance may hold */
    int width;              /* the biggest instance: the crowd's grid width */
    uint32_t total;         /* live actors: instances * asked */
    uint32_t *size;         /* [1..instances] */
    uint32_t *start;        /* [1..instances + 1]: live index of instance i's first actor */
    uint32_t *perm;         /* [rank] = live index, the activity's order */
    double *cdf;            /* [rank]: the weights' running sum, cdf[total - 1] = 1 */
    _Atomic uint32_t *sent; /* [live index]: activities drawn for it */
};

/* Read one sizes=... or acts=... value ("zipf:1.1", "zipf" (S = 1), "even") into *s (its
 * key "sizes" or "acts"). 0, or -1 and err naming the key and the forms. */
int sizes_parse(struct sizes *s, const char *key, const char *val, size_t n,
                struct flood_err *err) FLOOD_WUR;

/* Whether s asks for anything but an even crowd. */
int sizes_skewed(const struct sizes *s);

/* Lay out the crowd: instances, asked actors each, seed. Fills size/start/perm/cdf/sent and
 * width (replacing an earlier layout). 0, or -1 and err when the crowd is too big to skew. */
int sizes_layout(struct sizes *s, int instances, int asked, uint64_t seed,
                 struct flood_err *err) FLOOD_WUR;

/* Free the layout's tables (s itself is the caller's). */
void sizes_clear(struct sizes *s);

/* The actor that sends, from a uniform 64-bit random number r: *instance (1..) and *actor
 * (1..size of that instance). Counted in sent. Thread-safe once laid out. */
void sizes_pick(struct sizes *s, uint64_t r, int *instance, int *actor);

/* An actor of instance i from r (a replay pinned to the instance): 1..size[i]. */
int sizes_pick_in(const struct sizes *s, int instance, uint64_t r);

/* Whether (instance, actor) is a live actor of the layout. */
int sizes_live(const struct sizes *s, int instance, int actor);

/* The median instance size. */
uint32_t sizes_median(const struct sizes *s);

/* The share of the weight (expected) held by the top `frac` of the actors by rank. */
double sizes_top_share(const struct sizes *s, double frac);

/* run.json's population "sizes": the model, the exponents, the total, cap, biggest,
 * median, smallest, the instances holding half the actors, the top 10% actors' expected
 * share of the activity and their share of what was drawn (a new reference). */
json_t *sizes_json(const struct sizes *s);

#endif

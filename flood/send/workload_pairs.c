/* flood/send/workload_pairs.c: who sends (uniform, or by --population sizes=), and the
 * followed pairs (crowd actor, persona) of a workload: an
 * open-addressing map from a pair's key to its place in a dense array, so that a uniform draw
 * among followed pairs is one index, with a count of followers per persona. */
#include "flood/send/workload_int.h"

#include <stdint.h>
#include <stdlib.h>

#include "flood/crowd/sizes.h"

void workload_sizes_absent(struct workload *w)
{
    const struct crowd *c = w->crowd;
    for (int i = 1; w->o.sizes && i <= c->opts.instances; i++)
        for (int a = 1; a <= c->opts.actors; a++)
            if (!sizes_live(w->o.sizes, i, a)) {
                w->revs[crowd_actor_index(c, i, a)] =
                    (struct actor_rev){.gone = 1, .gone_ns = INT64_MAX};
                w->n_gone++;
            }
}

void workload_draw_actor(const struct workload *w, uint64_t *rng, int *instance, int *actor)
{
    if (w->o.sizes) { /* --population sizes=: who acts, by Zipf's law */
        sizes_pick(w->o.sizes, workload_rng(rng), instance, actor);
        return;
    }
    *instance = 1 + (int)(workload_rng(rng) % (uint64_t)w->crowd->opts.instances);
    *actor = 1 + (int)(workload_rng(rng) % (uint64_t)w->crowd->opts.actors);
}

int workload_actor_in(const struct workload *w, int instance, int actor)
{
    if (!w->o.sizes || sizes_live(w->o.sizes, instance, actor))
        return actor;
    return sizes_pick_in(w->o.sizes, instance, (uint64_t)actor);
}

/* Whether a kind can be sent now (the kinds workload_new lets through always can, but
 * these, which need something earlier runs or activities made). */
static int sendable(const struct workload *w, enum op_kind op)
{
    switch (op) {
    case OP_UPDATE:
    case OP_DELETE:
        return w->n_posters > 0;
    case OP_UNDO: /* --refollow alternate: of a follow an earlier run made */
        return w->o.refollow == WORKLOAD_REFOLLOW_ALTERNATE ? w->n_prior_dense > 0 : w->n_dense > 0;
    case OP_REFOLLOW:
        return w->n_dense > 0;
    case OP_FOLLOW:
        return w->n_dense + w->n_held < (uint64_t)(w->n_flat - w->n_gone) * w->n_p;
    case OP_DELETE_ACTOR:
        return w->n_gone + 1 < w->n_flat;
    default:
        return 1;
    }
}

/* What a kind that cannot be sent is sent as. */
static enum op_kind stand_in(const struct workload *w, enum op_kind op)
{
    switch (op) {
    case OP_UNDO:
    case OP_REFOLLOW:
        return OP_FOLLOW;
    case OP_FOLLOW:
        return w->o.refollow != WORKLOAD_REFOLLOW_REPEAT ? OP_UNDO : OP_REFOLLOW;
    default:
        return OP_CREATE;
    }
}

enum op_kind workload_settle_op(struct workload *w, enum op_kind op, int *how)
{
    *how = 0;
    /* --refollow alternate while follows of earlier runs stand: every second Follow drawn
     * undoes one, so the Follows spread over the run and the next run has actors to follow */
    int undo_now = op == OP_FOLLOW && w->o.refollow == WORKLOAD_REFOLLOW_ALTERNATE &&
                   w->n_prior_dense > 0 && (w->alt_flip++ & 1);
    if (undo_now || !sendable(w, op)) {
        w->owed[op]++;
        *how = 1;
        enum op_kind in = stand_in(w, op);
        /* a stand-in that cannot be sent either (--refollow alternate: every pair followed
         * or undone by this run, none an earlier run's to undo): a Create */
        return sendable(w, in) ? in : OP_CREATE;
    }
    for (int k = 0; k < OP__COUNT; k++) {
        if (w->owed[k] && stand_in(w, (enum op_kind)k) == op && sendable(w, (enum op_kind)k)) {
            w->owed[k]--;
            *how = 2;
            return (enum op_kind)k;
        }
    }
    return op;
}

size_t workload_prior_pair(const struct workload *w, size_t d)
{
    for (size_t k = 0; k < w->n_dense; k++) {
        size_t j = (d + k) % w->n_dense;
        if (w->dense[j].prior)
            return j;
    }
    return d;
}

void workload_hold_out(struct workload *w, uint32_t idx, uint32_t persona)
{
    if (w->o.refollow != WORKLOAD_REFOLLOW_ALTERNATE || workload_held_out(w, idx, persona))
        return;
    if (!w->held) {
        w->held = flood_xcalloc((w->n_actor_idx * w->n_p + 7) / 8, 1);
        w->n_held_p = flood_xcalloc(w->n_p, sizeof(*w->n_held_p));
    }
    uint64_t b = (uint64_t)idx * w->n_p + persona;
    w->held[b / 8] |= (uint8_t)(1u << (b % 8));
    w->n_held++;
    w->n_held_p[persona]++;
}

int workload_held_out(const struct workload *w, uint32_t idx, uint32_t persona)
{
    uint64_t b = (uint64_t)idx * w->n_p + persona;
    return w->held && (w->held[b / 8] >> (b % 8)) & 1;
}

static size_t map_slot(uint64_t key, size_t cap)
{
    uint64_t x = key;
    return (size_t)(workload_rng(&x) & (cap - 1));
}

static void map_grow(struct workload *w)
{
    size_t cap = w->map_cap ? w->map_cap * 2 : 1024;
    uint64_t *keys = flood_xcalloc(cap, sizeof(*keys));
    uint32_t *vals = flood_xcalloc(cap, sizeof(*vals));
    for (size_t i = 0; i < w->map_cap; i++) {
        if (!w->map[i])
            continue;
        size_t j = map_slot(w->map[i] - 1, cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = w->map[i];
        vals[j] = w->map_val[i];
    }
    free(w->map);
    free(w->map_val);
    w->map = keys;
    w->map_val = vals;
    w->map_cap = cap;
}

/* Slot of key, or (size_t)-1. */
size_t workload_pair_find(const struct workload *w, uint64_t key)
{
    if (!w->map_cap)
        return (size_t)-1;
    for (size_t j = map_slot(key, w->map_cap);; j = (j + 1) & (w->map_cap - 1)) {
        if (!w->map[j])
            return (size_t)-1;
        if (w->map[j] == key + 1)
            return j;
    }
}

void workload_pair_add(struct workload *w, uint64_t key, uint64_t follow_seq, uint32_t prior)
{
    if ((w->n_dense + 1) * 2 > w->map_cap)
        map_grow(w);
    if (w->n_dense == w->dense_cap) {
        w->dense_cap = w->dense_cap ? w->dense_cap * 2 : 256;
        w->dense = flood_xrealloc(w->dense, w->dense_cap * sizeof(*w->dense));
    }
    size_t j = map_slot(key, w->map_cap);
    while (w->map[j])
        j = (j + 1) & (w->map_cap - 1);
    w->map[j] = key + 1;
    w->map_val[j] = (uint32_t)w->n_dense;
    w->dense[w->n_dense].key = key;
    w->dense[w->n_dense].follow_seq = follow_seq;
    w->dense[w->n_dense].prior = prior;
    w->n_prior_dense += prior != 0;
    w->n_dense++;
    w->n_following[(uint32_t)key]++;
}

/* Remove the pair in slot j (linear probing: shift the following cluster back). */
void workload_pair_remove(struct workload *w, size_t j)
{
    uint32_t d = w->map_val[j];
    w->n_following[(uint32_t)w->dense[d].key]--;
    w->n_prior_dense -= w->dense[d].prior != 0;
    /* move the last dense pair into d's place */
    size_t last = w->n_dense - 1;
    if (d != last) {
        w->dense[d] = w->dense[last];
        size_t k = workload_pair_find(w, w->dense[d].key);
        w->map_val[k] = d;
    }
    w->n_dense--;
    size_t mask = w->map_cap - 1;
    size_t hole = j;
    for (size_t k = (j + 1) & mask; w->map[k]; k = (k + 1) & mask) {
        size_t home = map_slot(w->map[k] - 1, w->map_cap);
        /* k may move into the hole when its home is not in (hole, k] cyclically */
        int between = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
        if (!between) {
            w->map[hole] = w->map[k];
            w->map_val[hole] = w->map_val[k];
            hole = k;
        }
    }
    w->map[hole] = 0;
}

/* flood/send/workload.c: what the sender sends (see workload.h for the rules). Choices are pure
 * functions of (seed, seq); the only state is the table of followed pairs (for the
 * Follow/Undo pairing) and a 16-byte record per built activity, from which the object hook
 * rebuilds the exact JSON that was sent. */
#include "flood/send/workload_int.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/grammar.h"
#include "flood/core/url.h"
#include "webfinger/activity.h"

/* Uniform in [0, n), n > 0. The modulo bias is below 2^-40 for every n flood uses. */
static uint64_t below(uint64_t *rng, uint64_t n)
{
    return workload_rng(rng) % n;
}

int workload_parse_mix(const char *s, unsigned mix[OP__COUNT], struct flood_err *err)
{
    static const char forms[] = "OP=WEIGHT[,OP=WEIGHT...] (create=70,like=20,follow=10)";
    const char *names[OP__COUNT];
    for (int i = 0; i < OP__COUNT; i++)
        names[i] = op_name((enum op_kind)i);
    unsigned m[OP__COUNT] = {0};
    int seen[OP__COUNT] = {0};
    unsigned total = 0;
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, s, GRAM_NUL, ',');
    if (!s || !*s) {
        flood_err_set(err, FLOOD_EINVAL, "--mix: expected %s, got ''", forms);
        return -1;
    }
    while (gram_list_next(&l, &it)) {
        int op;
        uint64_t w;
        if (!it.val) {
            flood_err_set(err, FLOOD_EINVAL, "--mix: expected %s, got '%.*s'", forms,
                          (int)(it.n > 40 ? 40 : it.n), it.s);
            return -1;
        }
        if (gram_keyword("--mix", it.key, it.key_n, names, OP__COUNT, &op, err))
            return -1;
        char what[48];
        snprintf(what, sizeof(what), "--mix %s", names[op]);
        if (gram_uint(what, it.val, it.val_n, 0, 1000000, &w, err))
            return -1;
        if (seen[op]++) {
            flood_err_set(err, FLOOD_EINVAL, "--mix: '%s' given twice", names[op]);
            return -1;
        }
        m[op] = (unsigned)w;
        total += m[op];
    }
    if (total == 0) {
        flood_err_set(err, FLOOD_EINVAL, "--mix: every weight is 0 (%s)", forms);
        return -1;
    }
    memcpy(mix, m, sizeof(m));
    return 0;
}

/* ---- followed pairs -------------------------------------------------------------------- */

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
static size_t map_find(const struct workload *w, uint64_t key)
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

static void pair_add(struct workload *w, uint64_t key, uint64_t follow_seq)
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
    w->n_dense++;
}

/* Remove the pair in slot j (linear probing: shift the following cluster back). */
static void pair_remove_slot(struct workload *w, size_t j)
{
    uint32_t d = w->map_val[j];
    /* move the last dense pair into d's place */
    size_t last = w->n_dense - 1;
    if (d != last) {
        w->dense[d] = w->dense[last];
        size_t k = map_find(w, w->dense[d].key);
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

/* ---- creation -------------------------------------------------------------------------- */

/* "scheme://host[:port]" of an http(s) url into a new string, or NULL. */
static char *origin_of(const char *url)
{
    struct url_parts u;
    struct flood_err err;
    return url && url_split(url, &u, &err) == 0 ? flood_xstrdup(u.origin) : NULL;
}

static int fill_placeholder(struct pref *r, const char *inbox_url, struct flood_err *err)
{
    char *origin = origin_of(inbox_url);
    if (!origin) {
        flood_err_set(err, FLOOD_EINVAL, "workload: bad --inbox URL '%.200s'",
                      inbox_url ? inbox_url : "(none)");
        return -1;
    }
    r->actor = flood_xasprintf("%s/users/flood", origin);
    free(origin);
    char m[WF_MENTION_MAX];
    if (wf_mention_name(NULL, r->actor, m, err) < 0)
        return -1;
    r->mention = flood_xstrdup(m);
    r->index = -1;
    return 0;
}

struct workload *workload_new(struct crowd *crowd, const struct workload_opts *o,
                              const struct persona *personas, size_t n_personas,
                              struct flood_err *err)
{
    return workload_new_at(crowd, o, personas, n_personas, time(NULL), err);
}

struct workload *workload_new_at(struct crowd *crowd, const struct workload_opts *o,
                                 const struct persona *personas, size_t n_personas, time_t start,
                                 struct flood_err *err)
{
    if (!crowd || !o) {
        flood_err_set(err, FLOOD_EINVAL, "workload: no crowd or options");
        return NULL;
    }
    uint64_t n_idx = crowd_actor_index(crowd, crowd->opts.instances, crowd->opts.actors) + 1;
    if (crowd->opts.instances < 1 || crowd->opts.actors < 1 || n_idx > ACTORS_MAX) {
        flood_err_set(err, FLOOD_ELIMIT, "workload: crowd of %d x %d actors out of range",
                      crowd->opts.instances, crowd->opts.actors);
        return NULL;
    }
    unsigned total = 0;
    for (int i = 0; i < OP__COUNT; i++) {
        if (o->mix[i] > 1000000) {
            flood_err_set(err, FLOOD_EINVAL, "workload: --mix weight of %s over 1000000",
                          op_name(i));
            return NULL;
        }
        total += o->mix[i];
    }
    if (total == 0) {
        flood_err_set(err, FLOOD_EINVAL, "workload: --mix: every weight is 0");
        return NULL;
    }
    if (n_personas == 0 && !(o->inbox_url && *o->inbox_url)) {
        flood_err_set(err, FLOOD_EINVAL, "workload: no persona and no --inbox: nothing to send to");
        return NULL;
    }
    if (n_personas > PERSONA_MASK) {
        flood_err_set(err, FLOOD_ELIMIT, "workload: %zu personas, at most %u", n_personas,
                      (unsigned)PERSONA_MASK);
        return NULL;
    }

    struct workload *w = flood_xcalloc(1, sizeof(*w));
    w->crowd = crowd;
    w->o = *o;
    w->start = start;
    w->mix_total = total;
    w->n_actor_idx = n_idx;
    uint64_t h = o->seed ^ UINT64_C(0x666c6f6f64);
    uint32_t seed7 = (uint32_t)(workload_rng(&h) & 0x7f);
    w->run = (seed7 << 17) | (uint32_t)((uint64_t)start & 0x1ffff);
    pthread_mutex_init(&w->lock, NULL);
    w->n_p = n_personas ? n_personas : 1;
    w->p = flood_xcalloc(w->n_p, sizeof(*w->p));
    w->likeable = flood_xcalloc(w->n_p, sizeof(*w->likeable));
    w->outboxes = flood_xcalloc((size_t)n_idx, sizeof(*w->outboxes));
    w->revs = flood_xcalloc((size_t)n_idx, sizeof(*w->revs));
    w->n_flat = (uint32_t)crowd->opts.instances * (uint32_t)crowd->opts.actors;
    w->depth = o->reply_depth ? o->reply_depth : 3;
    if (w->depth > w->n_flat - 1)
        w->depth = w->n_flat - 1; /* each unseen parent by another actor */
    w->content = o->content && !o->content->plain ? o->content : NULL;
    if (w->content) {
        w->crowd_content = *w->content;
    } else if (wf_content_profile("default", &w->crowd_content, err) < 0) {
        goto fail;
    }

    for (size_t i = 0; i < w->n_p; i++) {
        struct pref *r = &w->p[i];
        const struct persona *src = n_personas ? &personas[i] : NULL;
        if (!src || !src->actor) {
            if (fill_placeholder(r, o->inbox_url, err) < 0)
                goto fail;
        } else {
            char m[WF_MENTION_MAX];
            if (wf_mention_name(src->acct, src->actor, m, err) < 0)
                goto fail;
            r->actor = flood_xstrdup(src->actor);
            r->mention = flood_xstrdup(m);
            r->index = (int)i;
        }
        if (src) {
            r->posts = src->posts;
            r->n_posts = src->posts ? src->n_posts : 0;
        }
        if (o->inbox_url && *o->inbox_url)
            r->inbox = o->inbox_url;
        else if (src && o->personal_inbox)
            r->inbox = src->inbox ? src->inbox : src->shared_inbox;
        else if (src)
            r->inbox = src->shared_inbox ? src->shared_inbox : src->inbox;
        if (!r->inbox) {
            flood_err_set(err, FLOOD_EINVAL, "workload: persona '%.200s' has no inbox", r->actor);
            goto fail;
        }
        if (r->n_posts)
            w->likeable[w->n_likeable++] = (uint32_t)i;
    }
    static const enum op_kind need_posts[] = {OP_LIKE, OP_EMOJI_REACT};
    for (size_t i = 0; i < sizeof(need_posts) / sizeof(need_posts[0]); i++) {
        if (o->mix[need_posts[i]] > 0 && w->n_likeable == 0) {
            flood_err_set(err, FLOOD_EINVAL,
                          "workload: --mix %s=%u but no post to react to: give --like-object "
                          "URL or personas whose outbox has posts",
                          op_name(need_posts[i]), o->mix[need_posts[i]]);
            goto fail;
        }
    }
    return w;
fail:
    workload_free(w);
    return NULL;
}

void workload_free(struct workload *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_p; i++) {
        free(w->p[i].actor);
        free(w->p[i].mention);
    }
    free(w->p);
    free(w->likeable);
    for (size_t i = 0; i < w->n_chunks; i++)
        free(w->chunks[i]);
    free(w->chunks);
    for (uint64_t i = 0; i < w->n_actor_idx; i++)
        free(w->outboxes[i]);
    free(w->outboxes);
    free(w->revs);
    free(w->map);
    free(w->map_val);
    free(w->dense);
    free(w->edit_key);
    free(w->edit_val);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

uint64_t workload_built(struct workload *w, uint64_t by_op[OP__COUNT])
{
    pthread_mutex_lock(&w->lock);
    uint64_t n = w->built;
    if (by_op)
        memcpy(by_op, w->by_op, sizeof(w->by_op));
    pthread_mutex_unlock(&w->lock);
    return n;
}

/* ---- building -------------------------------------------------------------------------- */

/* A reaction (Like, Announce, EmojiReact) drawn with undo_pct: the Undo of an earlier one
 * (1, op and the rest rewritten), or 0 and this one remembered for a later Undo. */
static int maybe_undo(struct workload *w, uint64_t *rng, uint64_t seq, enum op_kind *op,
                      uint32_t *idx, uint32_t *persona, uint32_t *ref, uint32_t *flags)
{
    if (w->o.undo_pct == 0)
        return 0;
    if (w->n_react > 0 && below(rng, 100) < w->o.undo_pct) {
        size_t d = (size_t)below(rng, w->n_react);
        uint64_t t = w->react[d];
        w->react[d] = w->react[--w->n_react];
        const struct entry *te = workload_entry(w, t, 0);
        if (te && seq - t <= UINT32_MAX && !w->revs[te->actor_idx].gone) {
            *op = OP_UNDO;
            *idx = te->actor_idx;
            *persona = workload_entry_persona(te);
            *ref = (uint32_t)(seq - t);
            *flags = F_UNDO_REACT;
            return 1;
        }
    }
    if (w->n_react < REACT_RING)
        w->react[w->n_react++] = seq;
    else
        w->react[below(rng, REACT_RING)] = seq;
    return 0;
}

/* One of the sender's recent Creates still standing, or -1. */
static int64_t recent_create(struct workload *w, uint64_t *rng, uint32_t idx)
{
    const struct outbox *ob = w->outboxes[idx];
    if (!ob || ob->total == 0)
        return -1;
    uint64_t n = ob->total < OUTBOX_RECENT ? ob->total : OUTBOX_RECENT;
    for (int tries = 0; tries < 4; tries++) {
        uint64_t t = ob->recent[below(rng, n)];
        const struct entry *te = workload_entry(w, t, 0);
        if (te && !(te->persona_op & F_DELETED))
            return (int64_t)t;
    }
    return -1;
}

/* The first actor not deleted from idx on (flat order, wrapping): delete-actor never deletes
 * the last one standing, so there is one. */
static uint32_t live_actor(const struct workload *w, uint32_t idx)
{
    if (!w->revs[idx].gone)
        return idx;
    uint32_t f = workload_flat(w, idx);
    for (uint32_t k = 1; k < w->n_flat; k++) {
        int instance, actor;
        workload_unflat(w, (f + k) % w->n_flat, &instance, &actor);
        uint32_t j = (uint32_t)crowd_actor_index(w->crowd, instance, actor);
        if (!w->revs[j].gone)
            return j;
    }
    return idx;
}

/* delete-actor: actor idx is deleted from when_ns on; the pairs it follows are dropped (an
 * account deletion removes its follows: no Undo of them is sent later). */
static void delete_actor(struct workload *w, uint32_t idx, int64_t when_ns)
{
    struct actor_rev *r = &w->revs[idx];
    r->gone = 1;
    r->gone_ns = when_ns;
    w->n_gone++;
    for (size_t i = w->n_dense; i-- > 0;)
        if ((uint32_t)(w->dense[i].key >> 32) == idx)
            pair_remove_slot(w, map_find(w, w->dense[i].key));
}

/* The choices of issue 12's kinds (see workload.h); op may fall back to a Create. */
static void decide_more(struct workload *w, uint64_t *rng, uint64_t seq, enum op_kind *op,
                        uint32_t *idx, uint32_t *persona, uint32_t *ref, uint32_t *flags)
{
    switch (*op) {
    case OP_ANNOUNCE:
    case OP_REPLY: {
        int unseen = w->n_likeable == 0 || below(rng, 100) < w->o.unseen_pct;
        if (unseen && w->depth == 0) {
            if (w->n_likeable == 0) {
                *op = OP_CREATE;
                return;
            }
            unseen = 0;
        }
        if (unseen) {
            *flags |= F_UNSEEN;
        } else {
            *persona = w->likeable[below(rng, w->n_likeable)];
            *ref = (uint32_t)below(rng, w->p[*persona].n_posts);
        }
        if (*op == OP_ANNOUNCE)
            maybe_undo(w, rng, seq, op, idx, persona, ref, flags);
        return;
    }
    case OP_EMOJI_REACT:
        *persona = w->likeable[below(rng, w->n_likeable)];
        *ref = (uint32_t)below(rng, w->p[*persona].n_posts);
        maybe_undo(w, rng, seq, op, idx, persona, ref, flags);
        return;
    case OP_VOTE:
        if (w->depth == 0)
            *op = OP_CREATE; /* a crowd of one actor has nobody to own the poll */
        else
            *flags |= F_UNSEEN;
        return;
    case OP_UPDATE:
    case OP_DELETE: {
        int64_t t = recent_create(w, rng, *idx);
        if (t < 0 || seq - (uint64_t)t > UINT32_MAX) {
            *op = OP_CREATE;
            return;
        }
        *ref = (uint32_t)(seq - (uint64_t)t);
        if (*op == OP_DELETE)
            workload_entry(w, (uint64_t)t, 0)->persona_op |= F_DELETED;
        return;
    }
    case OP_UPDATE_ACTOR: {
        struct actor_rev *r = &w->revs[*idx];
        r->prev_rev = r->rev;
        r->prev_rot = r->rot;
        r->prev_t_off = r->t_off;
        r->rev++;
        if (w->o.rotate_pct && below(rng, 100) < w->o.rotate_pct)
            r->rot = r->rot % ROT_MAX + 1;
        *ref = (r->rot << REV_BITS) | (r->rev & REV_MASK);
        return;
    }
    default:
        return;
    }
}

/* Decide activity seq: fills e (under the lock; updates the followed pairs). */
static void decide(struct workload *w, uint64_t seq, int64_t when_ns, struct entry *e)
{
    time_t when = (time_t)(when_ns / 1000000000);
    uint64_t rng = w->o.seed ^ seq;
    uint64_t r = below(&rng, w->mix_total);
    enum op_kind op = OP_CREATE;
    for (int i = 0; i < OP__COUNT; i++) {
        if (r < w->o.mix[i]) {
            op = (enum op_kind)i;
            break;
        }
        r -= w->o.mix[i];
    }
    int instance = 1 + (int)below(&rng, (uint64_t)w->crowd->opts.instances);
    int actor = 1 + (int)below(&rng, (uint64_t)w->crowd->opts.actors);
    if (seq < w->o.n_pin) { /* a replay: the origin's instance, and the type when known */
        int pi = w->o.pin_instance[seq], po = w->o.pin_op[seq];
        if (pi >= 1 && pi <= w->crowd->opts.instances)
            instance = pi;
        if (po >= 0 && po < OP__COUNT &&
            !((po == OP_LIKE || po == OP_EMOJI_REACT) && w->n_likeable == 0))
            op = (enum op_kind)po;
    }
    uint32_t persona = (uint32_t)below(&rng, w->n_p);
    uint32_t ref = 0, flags = 0;
    /* a deleted actor sends nothing more: the next one standing sends it */
    uint32_t idx = live_actor(w, (uint32_t)crowd_actor_index(w->crowd, instance, actor));
    if (op == OP_DELETE_ACTOR && w->n_gone + 1 >= w->n_flat)
        op = OP_CREATE; /* the last actor standing is never deleted */
    if (op == OP_LIKE) {
        persona = w->likeable[below(&rng, w->n_likeable)];
        ref = (uint32_t)below(&rng, w->p[persona].n_posts);
        maybe_undo(w, &rng, seq, &op, &idx, &persona, &ref, &flags);
    } else if (op == OP_DELETE_ACTOR) {
        delete_actor(w, idx, when_ns);
    } else if (op > OP_UNDO) {
        decide_more(w, &rng, seq, &op, &idx, &persona, &ref, &flags);
    } else if (op == OP_UNDO) {
        if (w->n_dense == 0) {
            op = OP_FOLLOW; /* nothing followed: documented fallback */
        } else {
            size_t d = (size_t)below(&rng, w->n_dense);
            struct pair pr = w->dense[d];
            idx = (uint32_t)(pr.key >> 32);
            persona = (uint32_t)pr.key;
            uint64_t back = seq - pr.follow_seq;
            pair_remove_slot(w, map_find(w, pr.key));
            if (back > UINT32_MAX)
                op = OP_FOLLOW; /* too far back to record: follow afresh (the pair is free) */
            else
                ref = (uint32_t)back;
        }
    }
    if (op == OP_FOLLOW) {
        uint64_t key = ((uint64_t)idx << 32) | persona;
        size_t slot = map_find(w, key);
        if (slot != (size_t)-1) {
            uint64_t back = seq - w->dense[w->map_val[slot]].follow_seq;
            pair_remove_slot(w, slot);
            if (back <= UINT32_MAX) {
                op = OP_UNDO;
                ref = (uint32_t)back;
            }
        }
        if (op == OP_FOLLOW)
            pair_add(w, key, seq);
    }
    int64_t off = (int64_t)when - (int64_t)w->start;
    e->actor_idx = idx;
    e->persona_op = flags | ((uint32_t)(op + 1) << PERSONA_BITS) | persona;
    if (op == OP_UPDATE_ACTOR) {
        w->revs[idx].t_off = (int32_t)off;
        w->revs[idx].eff_ns = when_ns;
    }
    e->ref = ref;
    e->t_off = off > INT32_MAX ? INT32_MAX : off < INT32_MIN ? INT32_MIN : (int32_t)off;
}

int workload_build(struct workload *w, uint64_t seq, struct workload_item *out,
                   struct flood_err *err)
{
    return workload_build_at(w, seq, time(NULL), out, err);
}

/* Decide activity seq and keep its record (sent = 1: counted as built). 0, or -1 and err. */
static int record(struct workload *w, uint64_t seq, int64_t when_ns, int sent, struct entry *out,
                  uint32_t *rot, struct flood_err *err)
{
    if (seq > SEQ_MASK) {
        flood_err_set(err, FLOOD_ELIMIT, "workload: activity %" PRIu64 " past the id space", seq);
        return -1;
    }
    struct entry e;
    pthread_mutex_lock(&w->lock);
    if (seq < w->next_seq) {
        pthread_mutex_unlock(&w->lock);
        flood_err_set(err, FLOOD_EINVAL, "workload: activity %" PRIu64 " built twice or late", seq);
        return -1;
    }
    decide(w, seq, when_ns, &e);
    *rot = w->revs[e.actor_idx].rot; /* later activities: the new key */
    *workload_entry(w, seq, 1) = e;
    w->next_seq = seq + 1;
    w->count = seq + 1;
    if (sent) {
        w->built++;
        w->by_op[workload_entry_op(&e)]++;
    }
    if (workload_entry_op(&e) == OP_UPDATE)
        workload_edit_put(w, seq - e.ref, seq); /* its note is served edited from now on */
    if (workload_entry_op(&e) == OP_CREATE) {
        struct outbox **ob = &w->outboxes[e.actor_idx];
        if (!*ob)
            *ob = flood_xcalloc(1, sizeof(**ob));
        (*ob)->recent[(*ob)->total % OUTBOX_RECENT] = seq;
        (*ob)->total++;
    }
    pthread_mutex_unlock(&w->lock);
    *out = e;
    return 0;
}

int workload_skip_at_ns(struct workload *w, uint64_t seq, int64_t when_ns, struct flood_err *err)
{
    struct entry e;
    uint32_t rot;
    return record(w, seq, when_ns, 0, &e, &rot, err);
}

int workload_skip_at(struct workload *w, uint64_t seq, time_t when, struct flood_err *err)
{
    return workload_skip_at_ns(w, seq, (int64_t)when * 1000000000, err);
}

int workload_build_at(struct workload *w, uint64_t seq, time_t when, struct workload_item *out,
                      struct flood_err *err)
{
    return workload_build_at_ns(w, seq, (int64_t)when * 1000000000, out, err);
}

int workload_build_at_ns(struct workload *w, uint64_t seq, int64_t when_ns,
                         struct workload_item *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    struct entry e;
    uint32_t rot;
    if (record(w, seq, when_ns, 1, &e, &rot, err))
        return -1;

    size_t len;
    char *body = workload_render(w, seq, &e, 0, &len, err);
    if (!body)
        return -1;
    const struct pref *p = &w->p[workload_entry_persona(&e)];
    out->seq = seq;
    out->op = workload_entry_op(&e);
    workload_actor_of_index(w->crowd, e.actor_idx, &out->instance, &out->actor);
    out->persona = p->index;
    out->inbox = flood_xstrdup(p->inbox);
    out->body = body;
    out->body_len = len;
    if (w->crowd->n_keys) /* a crowd without keys (unit tests) signs nothing */
        out->key = crowd_key_rot(w->crowd, out->instance, out->actor, rot);
    return 0;
}

void workload_item_free(struct workload_item *it)
{
    if (!it)
        return;
    free(it->inbox);
    free(it->body);
    it->inbox = NULL;
    it->body = NULL;
    it->body_len = 0;
}

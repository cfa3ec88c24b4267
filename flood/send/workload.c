/* flood/send/workload.c: what the sender sends (see workload.h for the rules). Choices are pure
 * functions of (seed, seq); the only state is the table of followed pairs (for Follow/Undo)
 * and a 16-byte record per built activity, from which the object hook rebuilds its JSON. */
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

/* A kind asked for that can never be sent: refused before the run, with the reason. */
static int refuse_never_sent(const struct workload *w, struct flood_err *err)
{
    const unsigned *mix = w->o.mix;
    if ((mix[OP_ANNOUNCE] || mix[OP_REPLY]) && w->n_likeable == 0 && w->depth == 0) {
        flood_err_set(err, FLOOD_EINVAL,
                      "workload: --mix %s=%u but nothing to point at: no persona post (give "
                      "--like-object URL) and a crowd of one actor has no other actor's note",
                      mix[OP_ANNOUNCE] ? "announce" : "reply",
                      mix[OP_ANNOUNCE] ? mix[OP_ANNOUNCE] : mix[OP_REPLY]);
        return -1;
    }
    if (mix[OP_VOTE] && w->depth == 0) {
        flood_err_set(err, FLOOD_EINVAL,
                      "workload: --mix vote=%u but a crowd of one actor has no other actor's "
                      "poll to vote in (--instances/--actors)",
                      mix[OP_VOTE]);
        return -1;
    }
    if (mix[OP_DELETE_ACTOR] && w->n_flat < 2) {
        flood_err_set(err, FLOOD_EINVAL,
                      "workload: --mix delete-actor=%u but the last crowd actor standing is "
                      "never deleted and the crowd has one actor (--instances/--actors)",
                      mix[OP_DELETE_ACTOR]);
        return -1;
    }
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
    w->poster_pos = flood_xcalloc((size_t)n_idx, sizeof(*w->poster_pos));
    w->posters = flood_xcalloc((size_t)n_idx, sizeof(*w->posters));
    w->n_following = flood_xcalloc(w->n_p, sizeof(*w->n_following));
    uint64_t ho = o->seed ^ UINT64_C(0x6d6978);
    w->op_offset = workload_rng(&ho);
    w->revs = flood_xcalloc((size_t)n_idx, sizeof(*w->revs));
    w->n_flat = (uint32_t)crowd->opts.instances * (uint32_t)crowd->opts.actors;
    workload_sizes_absent(w);
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
    if (refuse_never_sent(w, err) || workload_state_read(w, err))
        goto fail;
    for (size_t i = 0; i < w->n_prior; i++) /* followed by an earlier run */
        workload_pair_add(w, ((uint64_t)w->prior[i].actor_idx << 32) | w->prior[i].persona, 0,
                          (uint32_t)i + 1);
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
    workload_chunks_free(w);
    for (uint64_t i = 0; i < w->n_actor_idx; i++)
        free(w->outboxes[i]);
    free(w->outboxes);
    free(w->posters);
    free(w->poster_pos);
    free(w->young);
    free(w->n_following);
    free(w->held);
    free(w->n_held_p);
    free(w->prior);
    free(w->events);
    free(w->ev_map);
    if (w->state_paths)
        for (size_t i = 0; i < w->n_p; i++)
            free(w->state_paths[i]);
    free(w->state_paths);
    free(w->revs);
    free(w->map);
    free(w->map_val);
    free(w->dense);
    workload_due_free(w);
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

/* ---- posters: actors with a standing recent Create ------------------------------------ */

static void poster_add(struct workload *w, uint32_t idx)
{
    if (w->poster_pos[idx])
        return;
    w->posters[w->n_posters++] = idx;
    w->poster_pos[idx] = w->n_posters;
}

static void poster_remove(struct workload *w, uint32_t idx)
{
    uint32_t pos = w->poster_pos[idx];
    if (!pos)
        return;
    uint32_t last = w->posters[--w->n_posters];
    w->posters[pos - 1] = last;
    w->poster_pos[last] = pos;
    w->poster_pos[idx] = 0;
}

/* A Create of seq by idx enters its outbox's ring (an aged one it pushes out leaves the
 * standing count) and the queue of posts to age in. */
static void outbox_push(struct workload *w, uint32_t idx, uint64_t seq)
{
    struct outbox **ob = &w->outboxes[idx];
    if (!*ob)
        *ob = flood_xcalloc(1, sizeof(**ob));
    struct outbox *o = *ob;
    if (o->total >= OUTBOX_RECENT) {
        const struct entry *old = workload_entry(w, o->recent[o->total % OUTBOX_RECENT], 0);
        if (old && (old->persona_op & (F_DELETED | F_AGED)) == F_AGED && --o->standing == 0)
            poster_remove(w, idx);
    }
    o->recent[o->total % OUTBOX_RECENT] = seq;
    o->total++;
    if (w->n_young == w->cap_young) {
        w->cap_young = w->cap_young ? w->cap_young * 2 : 1024;
        w->young = flood_xrealloc(w->young, w->cap_young * sizeof(*w->young));
    }
    w->young[w->n_young++] = seq;
}

/* One of idx's recent Creates standing and aged in (age_posts), drawn uniformly, or -1. */
static int64_t recent_create(struct workload *w, uint64_t *rng, uint32_t idx)
{
    const struct outbox *ob = w->outboxes[idx];
    if (!ob || ob->standing == 0)
        return -1;
    uint64_t n = ob->total < OUTBOX_RECENT ? ob->total : OUTBOX_RECENT,
             k = below(rng, ob->standing);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t t = ob->recent[(ob->total - 1 - i) % OUTBOX_RECENT];
        const struct entry *te = workload_entry(w, t, 0);
        if (te && (te->persona_op & (F_DELETED | F_AGED)) == F_AGED && k-- == 0)
            return (int64_t)t;
    }
    return -1;
}

/* The Creates sent by t_max (seconds after the start) become notes an update or a delete
 * may name: the target has had POST_AGE_S to take them. In seq order (intended times only
 * grow); a Create pushed out of its actor's recent ring meanwhile is skipped. */
static void age_posts(struct workload *w, int64_t t_max)
{
    while (w->young_head < w->n_young) {
        uint64_t t = w->young[w->young_head];
        struct entry *te = workload_entry(w, t, 0);
        if (te && te->t_off > t_max)
            break;
        w->young_head++;
        const struct outbox *ob = te ? w->outboxes[te->actor_idx] : NULL;
        if (!ob)
            continue;
        int in_ring = 0;
        uint64_t n = ob->total < OUTBOX_RECENT ? ob->total : OUTBOX_RECENT;
        for (uint64_t i = 0; i < n && !in_ring; i++)
            in_ring = ob->recent[(ob->total - 1 - i) % OUTBOX_RECENT] == t;
        if (!in_ring || (te->persona_op & F_DELETED) || w->revs[te->actor_idx].gone)
            continue;
        te->persona_op |= F_AGED;
        w->outboxes[te->actor_idx]->standing++;
        poster_add(w, te->actor_idx);
    }
    if (w->young_head > 4096 && w->young_head * 2 > w->n_young) { /* drop what was read */
        memmove(w->young, w->young + w->young_head,
                (w->n_young - w->young_head) * sizeof(*w->young));
        w->n_young -= w->young_head;
        w->young_head = 0;
    }
}

/* An update's or a delete's note: an aged standing post of an actor drawn among those with
 * one (settle_op saw one): 0 with *idx and *t, or -1 (a post too far back to refer to). */
static int pick_post(struct workload *w, uint64_t *rng, uint64_t seq, uint32_t *idx, int64_t *t)
{
    uint32_t j = w->posters[below(rng, w->n_posters)];
    int64_t c = recent_create(w, rng, j);
    if (c < 0 || seq - (uint64_t)c > UINT32_MAX)
        return -1;
    *idx = j;
    *t = c;
    return 0;
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
    poster_remove(w, idx);
    for (size_t i = w->n_dense; i-- > 0;)
        if ((uint32_t)(w->dense[i].key >> 32) == idx)
            workload_pair_remove(w, workload_pair_find(w, w->dense[i].key));
}

/* ---- the kind, and the actor for it ------------------------------------------------- */

/* The kind drawn for seq: a Weyl sequence over the weights (workload.h). */
static enum op_kind draw_op(const struct workload *w, uint64_t seq)
{
    uint64_t x = w->op_offset + seq * UINT64_C(0x9e3779b97f4a7c15);
    uint64_t r = ((x >> 32) * (uint64_t)w->mix_total) >> 32; /* total < 2^24 */
    for (int i = 0; i < OP__COUNT; i++) {
        if (r < w->o.mix[i])
            return (enum op_kind)i;
        r -= w->o.mix[i];
    }
    return OP_CREATE;
}

static int followed(const struct workload *w, uint32_t idx, uint32_t persona)
{
    return workload_pair_find(w, ((uint64_t)idx << 32) | persona) != (size_t)-1;
}

/* A Follow's actor and persona: the drawn actor when it does not follow the drawn persona,
 * else the next in flat order that does not, else the same over the next personas
 * (sendable(OP_FOLLOW) holds, so some pair is free). */
static void free_pair(const struct workload *w, uint32_t *idx, uint32_t *persona)
{
    uint32_t live = w->n_flat - w->n_gone;
    for (uint32_t pk = 0; pk < w->n_p; pk++) {
        uint32_t p = (uint32_t)((*persona + pk) % w->n_p);
        if (w->n_following[p] + (w->n_held_p ? w->n_held_p[p] : 0) >= live)
            continue;
        uint32_t f = workload_flat(w, *idx);
        for (uint32_t k = 0; k < w->n_flat; k++) {
            int instance, actor;
            workload_unflat(w, (f + k) % w->n_flat, &instance, &actor);
            uint32_t j = (uint32_t)crowd_actor_index(w->crowd, instance, actor);
            if (!w->revs[j].gone && !followed(w, j, p) && !workload_held_out(w, j, p)) {
                *idx = j;
                *persona = p;
                return;
            }
        }
    }
}

/* The choices of issue 12's kinds (see workload.h). */
static void decide_more(struct workload *w, uint64_t *rng, uint64_t seq, enum op_kind *op,
                        uint32_t *idx, uint32_t *persona, uint32_t *ref, uint32_t *flags)
{
    switch (*op) {
    case OP_ANNOUNCE:
    case OP_REPLY: {
        /* workload_new refused a run with neither a post nor a second actor */
        int unseen = w->n_likeable == 0 || below(rng, 100) < w->o.unseen_pct;
        if (unseen && w->depth == 0)
            unseen = 0;
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
        *flags |= F_UNSEEN; /* workload_new refused a crowd of one actor */
        return;
    case OP_UPDATE:
    case OP_DELETE: {
        /* the actor for the kind: one with a standing post old enough */
        int64_t t;
        if (pick_post(w, rng, seq, idx, &t)) {
            *op = OP_CREATE; /* a post 2^32 activities back: sent as the Create it became */
            return;
        }
        *ref = (uint32_t)(seq - (uint64_t)t);
        if (*op == OP_DELETE) {
            workload_entry(w, (uint64_t)t, 0)->persona_op |= F_DELETED;
            if (--w->outboxes[*idx]->standing == 0)
                poster_remove(w, *idx);
        }
        return;
    }
    case OP_UPDATE_ACTOR: {
        struct actor_rev *r = &w->revs[*idx];
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

/* Whether a followed pair's Follow was sent REFOLLOW_AGE_S before t_now (or by an earlier run) */
static int pair_aged(struct workload *w, const struct pair *pr, int64_t t_now)
{
    const struct entry *e = pr->prior ? NULL : workload_entry(w, pr->follow_seq, 0);
    return pr->prior || (e && e->t_off <= t_now - REFOLLOW_AGE_S);
}

/* Follow, Undo(Follow) and refollow: the pair and the followed pairs' table. */
static void decide_follow(struct workload *w, uint64_t *rng, uint64_t seq, int64_t t_now,
                          enum op_kind *op, uint32_t *idx, uint32_t *persona, uint32_t *ref,
                          uint32_t *flags)
{
    if (*op == OP_FOLLOW) {
        free_pair(w, idx, persona);
        workload_pair_add(w, ((uint64_t)*idx << 32) | *persona, seq, 0);
        return;
    }
    /* an Undo or a refollow: of a followed pair drawn uniformly (settle_op saw one); a
     * refollow's pair preferably followed REFOLLOW_AGE_S before or by an earlier run, so that
     * the target has taken the first Follow (a few draws, else the last drawn); with
     * --refollow alternate an Undo's pair one an earlier run followed */
    size_t d = (size_t)below(rng, w->n_dense);
    if (*op == OP_UNDO && w->o.refollow == WORKLOAD_REFOLLOW_ALTERNATE)
        d = workload_prior_pair(w, d);
    for (int tries = 0; *op == OP_REFOLLOW && tries < 8 && !pair_aged(w, &w->dense[d], t_now);
         tries++)
        d = (size_t)below(rng, w->n_dense);
    struct pair pr = w->dense[d];
    *idx = (uint32_t)(pr.key >> 32);
    *persona = (uint32_t)pr.key;
    if (*op == OP_REFOLLOW) { /* still followed; a later Undo embeds this Follow */
        w->dense[d].follow_seq = seq;
        w->n_prior_dense -= w->dense[d].prior != 0;
        w->dense[d].prior = 0;
        return;
    }
    workload_pair_remove(w, workload_pair_find(w, pr.key));
    if (pr.prior) {
        *flags |= F_PRIOR;
        *ref = pr.prior - 1;
    } else if (seq - pr.follow_seq <= UINT32_MAX) {
        *ref = (uint32_t)(seq - pr.follow_seq);
    } else { /* too far back to record: follow afresh (the pair is free) */
        *op = OP_FOLLOW;
        workload_pair_add(w, pr.key, seq, 0);
    }
    if (*op == OP_UNDO)
        workload_hold_out(w, *idx, *persona); /* alternate: a later run follows it again */
}

/* Decide activity seq: fills e (under the lock; updates the followed pairs), the kind drawn
 * in *drawn and how the sent one came from it in *how (settle_op). */
static void decide(struct workload *w, uint64_t seq, int64_t when_ns, struct entry *e,
                   enum op_kind *drawn, int *how)
{
    time_t when = (time_t)(when_ns / 1000000000);
    uint64_t rng = w->o.seed ^ seq;
    enum op_kind op = draw_op(w, seq);
    int instance, actor;
    workload_draw_actor(w, &rng, &instance, &actor);
    if (seq < w->o.n_pin) { /* a replay: the origin's instance, and the type when known */
        int pi = w->o.pin_instance[seq], po = w->o.pin_op[seq];
        if (pi >= 1 && pi <= w->crowd->opts.instances)
            instance = pi;
        actor = workload_actor_in(w, instance, actor);
        if (po >= 0 && po < OP__COUNT &&
            !((po == OP_LIKE || po == OP_EMOJI_REACT) && w->n_likeable == 0) &&
            !((po == OP_ANNOUNCE || po == OP_REPLY) && w->n_likeable == 0 && w->depth == 0) &&
            !(po == OP_VOTE && w->depth == 0))
            op = (enum op_kind)po;
    }
    int64_t off = (int64_t)when - (int64_t)w->start;
    age_posts(w, off - POST_AGE_S);
    *drawn = op;
    op = workload_settle_op(w, op, how);
    uint32_t persona = (uint32_t)below(&rng, w->n_p);
    uint32_t ref = 0, flags = 0;
    /* a deleted actor sends nothing more: the next one standing sends it */
    uint32_t idx = live_actor(w, (uint32_t)crowd_actor_index(w->crowd, instance, actor));
    if (op == OP_LIKE) {
        persona = w->likeable[below(&rng, w->n_likeable)];
        ref = (uint32_t)below(&rng, w->p[persona].n_posts);
        maybe_undo(w, &rng, seq, &op, &idx, &persona, &ref, &flags);
    } else if (op == OP_DELETE_ACTOR) {
        delete_actor(w, idx, when_ns);
    } else if (op == OP_FOLLOW || op == OP_UNDO || op == OP_REFOLLOW) {
        decide_follow(w, &rng, seq, off, &op, &idx, &persona, &ref, &flags);
    } else if (op > OP_UNDO) {
        decide_more(w, &rng, seq, &op, &idx, &persona, &ref, &flags);
    }

    e->actor_idx = idx;
    e->persona_op = flags | ((uint32_t)(op + 1) << PERSONA_BITS) | persona;
    if (op == OP_UPDATE_ACTOR) /* served from its time on */
        workload_due_actor(w, idx, seq, when_ns);
    e->ref = ref;
    e->t_off = off > INT32_MAX ? INT32_MAX : off < INT32_MIN ? INT32_MIN : (int32_t)off;
}

int workload_build(struct workload *w, uint64_t seq, struct workload_item *out,
                   struct flood_err *err)
{
    return workload_build_at(w, seq, time(NULL), out, err);
}

/* A Follow, Undo(Follow) or refollow this process sends, for the follow state. */
static void note_follow_event(struct workload *w, uint64_t seq, const struct entry *e)
{
    if (!w->state_paths)
        return;
    struct follow_event *v = workload_state_event(w, workload_entry_persona(e), e->actor_idx);
    v->seq = seq;
    v->op = workload_entry_op(e);
    if (v->op != OP_UNDO)
        v->id_seq = workload_id_seq(w, seq);
    else if (e->persona_op & F_PRIOR)
        v->id_seq = w->prior[e->ref].id_seq;
    else
        v->id_seq = workload_id_seq(w, seq - e->ref);
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
    enum op_kind drawn;
    int how;
    decide(w, seq, when_ns, &e, &drawn, &how);
    *rot = w->revs[e.actor_idx].rot; /* later activities: the new key */
    *workload_entry(w, seq, 1) = e;
    w->next_seq = seq + 1;
    w->count = seq + 1;
    enum op_kind op = workload_entry_op(&e);
    if (sent) {
        w->built++;
        w->by_op[op]++;
        w->drawn[drawn]++;
        if (how == 1)
            w->fell[drawn][op]++;
        else if (how == 2)
            w->repaid[drawn][op]++;
        if (op == OP_FOLLOW || op == OP_REFOLLOW ||
            (op == OP_UNDO && !(e.persona_op & F_UNDO_REACT)))
            note_follow_event(w, seq, &e);
    }
    if (op == OP_UPDATE || op == OP_DELETE) /* its note served edited or gone from its time */
        workload_due_note(w, op == OP_DELETE, seq - e.ref, seq, when_ns);
    if (op == OP_CREATE)
        outbox_push(w, e.actor_idx, seq);
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

/* flood/send/workload.c: what the sender sends (see workload.h for the rules). Choices are pure
 * functions of (seed, seq); the only state is the table of followed pairs (for the
 * Follow/Undo pairing) and a 16-byte record per built activity, from which the object hook
 * rebuilds the exact JSON that was sent. */
#include "flood/send/workload.h"

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/url.h"
#include "webfinger/activity.h"

#define RUN_BITS      24
#define SEQ_MASK      ((UINT64_C(1) << WORKLOAD_RUN_SHIFT) - 1)
#define CHUNK_SHIFT   16 /* 65536 records (1 MiB) per chunk */
#define CHUNK_LEN     ((size_t)1 << CHUNK_SHIFT)
#define PERSONA_BITS  29
#define PERSONA_MASK  ((UINT32_C(1) << PERSONA_BITS) - 1)
#define OUTBOX_RECENT 20
#define ACTORS_MAX    (UINT32_C(1) << 24) /* crowd actors the per-actor tables cover */

/* One built activity. ref: a Like's post index, an Undo's distance back to its Follow. */
struct entry {
    uint32_t actor_idx;  /* crowd_actor_index */
    uint32_t persona_op; /* (op + 1) << PERSONA_BITS | persona; 0: not built */
    uint32_t ref;
    int32_t t_off; /* published - start, seconds */
};

/* A persona as the builders see it, with the placeholder filled in. */
struct pref {
    char *actor, *mention; /* owned */
    const char *inbox;     /* borrowed (or w->o.inbox_url) */
    char *const *posts;
    size_t n_posts;
    int index; /* index given back in workload_item.persona, -1 for the placeholder */
};

struct outbox {
    uint64_t total;
    uint64_t recent[OUTBOX_RECENT]; /* ring of the last Creates' seqs */
};

/* Followed pairs: an open-addressing map from pair key to its place in a dense array (so
 * that a uniform draw among followed pairs is one index). */
struct pair {
    uint64_t key; /* actor_idx << 32 | persona */
    uint64_t follow_seq;
};

struct workload {
    struct crowd *crowd;
    struct workload_opts o;
    uint32_t run;
    time_t start;
    struct pref *p;
    size_t n_p;
    uint32_t *likeable; /* persona indexes with posts */
    size_t n_likeable;
    unsigned mix_total;

    pthread_mutex_t lock; /* everything below */
    struct entry **chunks;
    size_t n_chunks;
    uint64_t count; /* records allocated (highest seq built + 1) */
    uint64_t built, by_op[OP__COUNT];
    uint64_t next_seq;
    struct outbox **outboxes; /* per actor index, allocated on first Create */
    uint64_t n_actor_idx;
    uint64_t *map; /* key + 1, 0 = empty */
    uint32_t *map_val;
    size_t map_cap;
    struct pair *dense;
    size_t n_dense, dense_cap;
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. The modulo bias is below 2^-40 for every n flood uses. */
static uint64_t below(uint64_t *rng, uint64_t n)
{
    return splitmix64(rng) % n;
}

int workload_parse_mix(const char *s, unsigned mix[OP__COUNT], struct flood_err *err)
{
    unsigned m[OP__COUNT] = {0};
    int seen[OP__COUNT] = {0};
    const char *p = s ? s : "";
    if (!*p) {
        flood_err_set(err, FLOOD_EINVAL, "workload: --mix: empty (want create=70,like=20,...)");
        return -1;
    }
    while (*p) {
        size_t n = strcspn(p, "=,");
        int op = -1;
        for (int i = 0; i < OP__COUNT; i++)
            if (strlen(op_name((enum op_kind)i)) == n && !strncmp(p, op_name((enum op_kind)i), n))
                op = i;
        if (op < 0 || p[n] != '=') {
            flood_err_set(err, FLOOD_EINVAL,
                          "workload: --mix: unknown entry '%.*s' (want create|like|follow|undo=N)",
                          (int)(n > 40 ? 40 : n), p);
            return -1;
        }
        if (seen[op]++) {
            flood_err_set(err, FLOOD_EINVAL, "workload: --mix: '%s' given twice", op_name(op));
            return -1;
        }
        const char *v = p + n + 1;
        char *end;
        unsigned long w = (v[0] >= '0' && v[0] <= '9') ? strtoul(v, &end, 10) : 0;
        if (!(v[0] >= '0' && v[0] <= '9') || (*end && *end != ',') || (*end == ',' && !end[1]) ||
            w > 1000000) {
            flood_err_set(err, FLOOD_EINVAL, "workload: --mix: bad weight for '%s' (0..1000000)",
                          op_name(op));
            return -1;
        }
        m[op] = (unsigned)w;
        p = *end ? end + 1 : end;
    }
    unsigned total = 0;
    for (int i = 0; i < OP__COUNT; i++)
        total += m[i];
    if (total == 0) {
        flood_err_set(err, FLOOD_EINVAL, "workload: --mix: every weight is 0");
        return -1;
    }
    memcpy(mix, m, sizeof(m));
    return 0;
}

/* ---- followed pairs -------------------------------------------------------------------- */

static size_t map_slot(uint64_t key, size_t cap)
{
    uint64_t x = key;
    return (size_t)(splitmix64(&x) & (cap - 1));
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

/* ---- records --------------------------------------------------------------------------- */

static struct entry *entry_at(struct workload *w, uint64_t seq, int create)
{
    size_t c = (size_t)(seq >> CHUNK_SHIFT);
    if (c >= w->n_chunks) {
        if (!create)
            return NULL;
        size_t n = w->n_chunks ? w->n_chunks : 16;
        while (n <= c)
            n *= 2;
        w->chunks = flood_xrealloc(w->chunks, n * sizeof(*w->chunks));
        memset(w->chunks + w->n_chunks, 0, (n - w->n_chunks) * sizeof(*w->chunks));
        w->n_chunks = n;
    }
    if (!w->chunks[c]) {
        if (!create)
            return NULL;
        w->chunks[c] = flood_xcalloc(CHUNK_LEN, sizeof(struct entry));
    }
    return &w->chunks[c][seq & (CHUNK_LEN - 1)];
}

static enum op_kind entry_op(const struct entry *e)
{
    return (enum op_kind)((e->persona_op >> PERSONA_BITS) - 1);
}

static uint32_t entry_persona(const struct entry *e)
{
    return e->persona_op & PERSONA_MASK;
}

static void actor_of_index(const struct crowd *c, uint32_t idx, int *instance, int *actor)
{
    uint32_t per = (uint32_t)c->opts.actors + 1;
    *instance = (int)(idx / per) + 1;
    *actor = (int)(idx % per);
}

/* The JSON text of record e (activity seq), or with note set the Note of a Create: the same
 * bytes every time, so a GET serves exactly what was sent. A new string, or NULL and err. */
static char *render(struct workload *w, uint64_t seq, const struct entry *e, int note, size_t *len,
                    struct flood_err *err)
{
    const struct pref *p = &w->p[entry_persona(e)];
    struct wf_act_args a = {.p = {p->actor, p->mention}, .with_context = 1};
    actor_of_index(w->crowd, e->actor_idx, &a.from.instance, &a.from.actor);
    a.from.seq = workload_id_seq(w, seq);
    a.published = w->start + (time_t)e->t_off;
    switch (entry_op(e)) {
    case OP_CREATE:
        a.kind = note ? WF_ACT_NOTE : WF_ACT_CREATE;
        break;
    case OP_LIKE:
        if (e->ref >= p->n_posts) {
            flood_err_set(err, FLOOD_EINVAL, "workload: post %u of a persona with %zu",
                          (unsigned)e->ref, p->n_posts);
            return NULL;
        }
        a.kind = WF_ACT_LIKE;
        a.object_id = p->posts[e->ref];
        break;
    case OP_FOLLOW:
        a.kind = WF_ACT_FOLLOW;
        break;
    case OP_UNDO:
        a.kind = WF_ACT_UNDO_FOLLOW;
        a.follow_seq = workload_id_seq(w, seq - e->ref);
        break;
    default:
        flood_err_set(err, FLOOD_EINVAL, "workload: no activity %" PRIu64, seq);
        return NULL;
    }
    return wf_act_text(&w->crowd->wf, &a, len, err);
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
    uint32_t seed7 = (uint32_t)(splitmix64(&h) & 0x7f);
    w->run = (seed7 << 17) | (uint32_t)((uint64_t)start & 0x1ffff);
    pthread_mutex_init(&w->lock, NULL);
    w->n_p = n_personas ? n_personas : 1;
    w->p = flood_xcalloc(w->n_p, sizeof(*w->p));
    w->likeable = flood_xcalloc(w->n_p, sizeof(*w->likeable));
    w->outboxes = flood_xcalloc((size_t)n_idx, sizeof(*w->outboxes));

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
    if (o->mix[OP_LIKE] > 0 && w->n_likeable == 0) {
        flood_err_set(err, FLOOD_EINVAL,
                      "workload: --mix like=%u but no post to like: give --like-object URL or "
                      "personas whose outbox has posts",
                      o->mix[OP_LIKE]);
        goto fail;
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
    free(w->map);
    free(w->map_val);
    free(w->dense);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

uint64_t workload_id_seq(const struct workload *w, uint64_t seq)
{
    return ((uint64_t)w->run << WORKLOAD_RUN_SHIFT) | (seq & SEQ_MASK);
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

/* Decide activity seq: fills e (under the lock; updates the followed pairs). */
static void decide(struct workload *w, uint64_t seq, time_t when, struct entry *e)
{
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
    uint32_t persona = (uint32_t)below(&rng, w->n_p);
    uint32_t ref = 0;
    uint32_t idx = (uint32_t)crowd_actor_index(w->crowd, instance, actor);
    if (op == OP_LIKE) {
        persona = w->likeable[below(&rng, w->n_likeable)];
        ref = (uint32_t)below(&rng, w->p[persona].n_posts);
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
    e->persona_op = ((uint32_t)(op + 1) << PERSONA_BITS) | persona;
    e->ref = ref;
    e->t_off = off > INT32_MAX ? INT32_MAX : off < INT32_MIN ? INT32_MIN : (int32_t)off;
}

int workload_build(struct workload *w, uint64_t seq, struct workload_item *out,
                   struct flood_err *err)
{
    return workload_build_at(w, seq, time(NULL), out, err);
}

int workload_build_at(struct workload *w, uint64_t seq, time_t when, struct workload_item *out,
                      struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
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
    decide(w, seq, when, &e);
    *entry_at(w, seq, 1) = e;
    w->next_seq = seq + 1;
    w->count = seq + 1;
    w->built++;
    w->by_op[entry_op(&e)]++;
    if (entry_op(&e) == OP_CREATE) {
        struct outbox **ob = &w->outboxes[e.actor_idx];
        if (!*ob)
            *ob = flood_xcalloc(1, sizeof(**ob));
        (*ob)->recent[(*ob)->total % OUTBOX_RECENT] = seq;
        (*ob)->total++;
    }
    pthread_mutex_unlock(&w->lock);

    size_t len;
    char *body = render(w, seq, &e, 0, &len, err);
    if (!body)
        return -1;
    const struct pref *p = &w->p[entry_persona(&e)];
    out->seq = seq;
    out->op = entry_op(&e);
    actor_of_index(w->crowd, e.actor_idx, &out->instance, &out->actor);
    out->persona = p->index;
    out->inbox = flood_xstrdup(p->inbox);
    out->body = body;
    out->body_len = len;
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

/* ---- serving --------------------------------------------------------------------------- */

/* The record of an id seq sent by (instance, actor), copied into *e. 0, or -1. */
static int lookup(struct workload *w, uint64_t id_seq, int instance, int actor, uint64_t *seq,
                  struct entry *e)
{
    if ((id_seq >> WORKLOAD_RUN_SHIFT) != w->run || instance < 1 ||
        instance > w->crowd->opts.instances || actor < 1 || actor > w->crowd->opts.actors)
        return -1;
    *seq = id_seq & SEQ_MASK;
    int rc = -1;
    pthread_mutex_lock(&w->lock);
    const struct entry *p = *seq < w->count ? entry_at(w, *seq, 0) : NULL;
    if (p && p->persona_op && p->actor_idx == crowd_actor_index(w->crowd, instance, actor)) {
        *e = *p;
        rc = 0;
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

static int serve_outbox(struct workload *w, const struct wf_route *r, struct wf_doc *out)
{
    uint64_t seqs[OUTBOX_RECENT], total = 0;
    size_t n = 0;
    if (r->actor >= 1 && r->actor <= w->crowd->opts.actors && r->instance >= 1 &&
        r->instance <= w->crowd->opts.instances) {
        pthread_mutex_lock(&w->lock);
        const struct outbox *ob = w->outboxes[crowd_actor_index(w->crowd, r->instance, r->actor)];
        if (ob) {
            total = ob->total;
            /* newest first, as Mastodon orders an outbox */
            for (uint64_t k = 0; k < OUTBOX_RECENT && k < ob->total; k++)
                seqs[n++] = ob->recent[(ob->total - 1 - k) % OUTBOX_RECENT];
        }
        pthread_mutex_unlock(&w->lock);
    }
    char urls[OUTBOX_RECENT][WF_URL_MAX];
    const char *items[OUTBOX_RECENT];
    for (size_t i = 0; i < n; i++) {
        wf_activity_url(&w->crowd->wf, r->instance, r->actor, workload_id_seq(w, seqs[i]), urls[i]);
        items[i] = urls[i];
    }
    wf_collection(&w->crowd->wf, r->instance, r->actor, WF_ROUTE_OUTBOX, items, n, (size_t)total,
                  out);
    return out->status;
}

int workload_object_hook(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct workload *w = ctx;
    if (!w || !req)
        return 0;
    const struct wf_route *r = &req->route;
    if (r->kind == WF_ROUTE_OUTBOX)
        return serve_outbox(w, r, out);
    if (r->kind != WF_ROUTE_NOTE && r->kind != WF_ROUTE_ACTIVITY)
        return 0;
    uint64_t seq;
    struct entry e;
    if (lookup(w, r->seq, r->instance, r->actor, &seq, &e) < 0 ||
        (r->kind == WF_ROUTE_NOTE && entry_op(&e) != OP_CREATE)) {
        wf_error(404, "no such object", out);
        return 404;
    }
    struct flood_err err = {0};
    size_t len;
    char *body = render(w, seq, &e, r->kind == WF_ROUTE_NOTE, &len, &err);
    if (!body) {
        wf_error(500, err.msg, out);
        return 500;
    }
    out->status = 200;
    out->content_type = WF_CT_ACTIVITY;
    out->body = body;
    out->len = len;
    return 200;
}

int64_t workload_follow_seq(struct workload *w, const char *follow_id)
{
    const char *p = follow_id ? strstr(follow_id, "://") : NULL;
    if (!w || !p)
        return -1;
    /* the id must be exactly our URL: same scheme, host and path as wf_activity_url. Matched
     * by hand, not url_split: it runs for every Accept/Reject and any other text is refused */
    size_t scheme_len = (size_t)(p - follow_id);
    if (!w->crowd->wf.scheme || strlen(w->crowd->wf.scheme) != scheme_len ||
        strncmp(follow_id, w->crowd->wf.scheme, scheme_len) != 0)
        return -1;
    const char *host = p + 3;
    size_t host_len = strcspn(host, "/?#");
    const char *path = host + host_len;
    if (path[strcspn(path, "?#")] != '\0')
        return -1;
    int instance = wf_instance_of_host_n(&w->crowd->wf, host, host_len, WF_PORT_PUBLIC);
    struct wf_route r;
    if (!instance || wf_route_path(&w->crowd->wf, instance, path, strlen(path), &r) != 0 ||
        r.kind != WF_ROUTE_ACTIVITY)
        return -1;
    char want[WF_URL_MAX];
    wf_activity_url(&w->crowd->wf, r.instance, r.actor, r.seq, want);
    if (strcmp(want, follow_id) != 0)
        return -1;
    uint64_t seq;
    struct entry e;
    if (lookup(w, r.seq, r.instance, r.actor, &seq, &e) < 0 || entry_op(&e) != OP_FOLLOW)
        return -1;
    return (int64_t)seq;
}

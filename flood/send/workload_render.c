/* flood/send/workload_render.c: the records of a run and the JSON they stand for. A record
 * (struct entry, 16 bytes) holds what the seeded draws decided; everything else (content,
 * poll, reaction, the unseen crowd objects) is drawn again from (seed, seq), so what the
 * object hook serves is byte for byte what was sent. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/clock.h"
#include "flood/send/workload_int.h"
#include "webfinger/activity.h"
#include "webfinger/content.h"

uint64_t workload_rng(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t workload_id_seq(const struct workload *w, uint64_t seq)
{
    return ((uint64_t)w->run << WORKLOAD_RUN_SHIFT) | (seq & SEQ_MASK);
}

/* ---- records --------------------------------------------------------------------------- */

struct entry *workload_entry(struct workload *w, uint64_t seq, int create)
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
        w->chunks[c] = workload_chunk_new(w, c);
    }
    return &w->chunks[c][seq & (CHUNK_LEN - 1)];
}

enum op_kind workload_entry_op(const struct entry *e)
{
    return (enum op_kind)(((e->persona_op >> PERSONA_BITS) & OP_MASK) - 1);
}

uint32_t workload_entry_persona(const struct entry *e)
{
    return e->persona_op & PERSONA_MASK;
}

void workload_actor_of_index(const struct crowd *c, uint32_t idx, int *instance, int *actor)
{
    uint32_t per = (uint32_t)c->opts.actors + 1;
    *instance = (int)(idx / per) + 1;
    *actor = (int)(idx % per);
}

uint32_t workload_flat(const struct workload *w, uint32_t idx)
{
    int instance, actor;
    workload_actor_of_index(w->crowd, idx, &instance, &actor);
    return (uint32_t)(instance - 1) * (uint32_t)w->crowd->opts.actors + (uint32_t)(actor - 1);
}

void workload_unflat(const struct workload *w, uint32_t f, int *instance, int *actor)
{
    *instance = (int)(f / (uint32_t)w->crowd->opts.actors) + 1;
    *actor = (int)(f % (uint32_t)w->crowd->opts.actors) + 1;
}

/* ---- rendering ----------------------------------------------------------------------------- */

/* The per-activity generator of seq, salted for one use. */
static uint64_t draw_seed(const struct workload *w, uint64_t seq, uint64_t salt)
{
    uint64_t x = w->o.seed ^ (seq * UINT64_C(0x9e3779b97f4a7c15)) ^ salt;
    return workload_rng(&x);
}

static void draw_poll(const struct workload *w, uint64_t seq, unsigned k, time_t published,
                      struct wf_poll *poll)
{
    uint64_t rng = draw_seed(w, seq, 0x706f6c6c + k);
    memset(poll, 0, sizeof(*poll));
    poll->n = 2 + (unsigned)(workload_rng(&rng) % (WF_POLL_OPTIONS_MAX - 1));
    poll->multiple = workload_rng(&rng) % 4 == 0;
    for (unsigned i = 0; i < poll->n; i++) {
        poll->votes[i] = workload_rng(&rng) % 50;
        poll->voters += poll->votes[i];
    }
    poll->end = published + 24 * 3600;
}

/* Record seq copied under the lock: 0, or -1 when it was never built. */
static int entry_copy(struct workload *w, uint64_t seq, struct entry *out)
{
    pthread_mutex_lock(&w->lock);
    const struct entry *p = seq < w->count ? workload_entry(w, seq, 0) : NULL;
    int ok = p && p->persona_op;
    if (ok)
        *out = *p;
    pthread_mutex_unlock(&w->lock);
    return ok ? 0 : -1;
}

/* Everything one render needs kept alive while the builder runs. */
struct scratch {
    struct wf_post post;
    struct wf_poll poll;
    char url[WF_URL_MAX], author[WF_URL_MAX];
};

static const char *const reactions[6] = {"\xf0\x9f\x91\x8d", "\xe2\x9d\xa4\xef\xb8\x8f",
                                         "\xf0\x9f\x98\x86", "\xf0\x9f\x8e\x89",
                                         "\xf0\x9f\xa4\x94", "\xf0\x9f\x98\xae"};

/* Args of record e (activity seq) into a, s; -1 and err when a reference is broken. */
static int args_of(struct workload *w, uint64_t seq, const struct entry *e, struct wf_act_args *a,
                   struct scratch *s, struct flood_err *err)
{
    const struct pref *p = &w->p[workload_entry_persona(e)];
    memset(a, 0, sizeof(*a));
    a->p = (struct wf_persona_ref){p->actor, p->mention};
    a->with_context = 1;
    workload_actor_of_index(w->crowd, e->actor_idx, &a->from.instance, &a->from.actor);
    a->from.seq = workload_id_seq(w, seq);
    a->published = w->start + (time_t)e->t_off;
    enum op_kind op = workload_entry_op(e);
    int unseen = (e->persona_op & F_UNSEEN) != 0;
    int needs_post = (op == OP_LIKE || op == OP_EMOJI_REACT ||
                      ((op == OP_ANNOUNCE || op == OP_REPLY) && !unseen)) &&
                     !(e->persona_op & F_UNDO_REACT);
    if (needs_post && e->ref >= p->n_posts) {
        flood_err_set(err, FLOOD_EINVAL, "workload: post %u of a persona with %zu",
                      (unsigned)e->ref, p->n_posts);
        return -1;
    }
    if (unseen) {
        /* the first unseen object: by the actor after the sender, at this activity's ID */
        int inst, act;
        workload_unflat(w, (workload_flat(w, e->actor_idx) + 1) % w->n_flat, &inst, &act);
        wf_note_url(&w->crowd->wf, inst, act, a->from.seq, s->url);
        wf_actor_url(&w->crowd->wf, inst, act, s->author);
    }
    if (op == OP_CREATE || op == OP_REPLY || op == OP_QUESTION) {
        if (w->content) {
            wf_content_draw(w->content, draw_seed(w, seq, 0x706f7374), w->crowd->opts.instances,
                            w->crowd->opts.actors, 1, &s->post);
            a->post = &s->post;
        }
    }
    switch (op) {
    case OP_CREATE:
        a->kind = WF_ACT_CREATE;
        break;
    case OP_REPLY:
        a->kind = WF_ACT_CREATE;
        a->in_reply_to = unseen ? s->url : p->posts[e->ref];
        break;
    case OP_QUESTION:
        a->kind = WF_ACT_QUESTION;
        draw_poll(w, seq, 0, a->published, &s->poll);
        a->poll = &s->poll;
        break;
    case OP_VOTE:
        a->kind = WF_ACT_VOTE;
        a->object_id = s->url;
        a->object_author = s->author;
        draw_poll(w, seq, 1, a->published, &s->poll);
        a->choice = (unsigned)(draw_seed(w, seq, 0x766f7465) % s->poll.n);
        break;
    case OP_LIKE:
        a->kind = WF_ACT_LIKE;
        a->object_id = p->posts[e->ref];
        break;
    case OP_ANNOUNCE:
        a->kind = WF_ACT_ANNOUNCE;
        a->object_id = unseen ? s->url : p->posts[e->ref];
        a->object_author = unseen ? s->author : p->actor;
        break;
    case OP_EMOJI_REACT: {
        uint64_t r = draw_seed(w, seq, 0x7265616374);
        a->kind = WF_ACT_EMOJI_REACT;
        a->object_id = p->posts[e->ref];
        if (r % 3 != 2)
            a->reaction = reactions[(r >> 8) % 6];
        else
            a->emoji = (unsigned)((r >> 8) % WF_EMOJI_VOCAB);
        break;
    }
    case OP_FOLLOW:
    case OP_REFOLLOW: /* the same Follow, from an actor that already follows */
        a->kind = WF_ACT_FOLLOW;
        break;
    default:
        flood_err_set(err, FLOOD_EINVAL, "workload: no activity %" PRIu64, seq);
        return -1;
    }
    return 0;
}

/* Update(Person): the actor's document at this revision, embedded. */
static char *render_update_actor(struct workload *w, uint64_t seq, const struct entry *e,
                                 size_t *len, struct flood_err *err)
{
    struct wf_act_from from;
    workload_actor_of_index(w->crowd, e->actor_idx, &from.instance, &from.actor);
    from.seq = workload_id_seq(w, seq);
    struct wf_doc doc = {0};
    crowd_actor_doc_rot(w->crowd, from.instance, from.actor, e->ref >> REV_BITS, &doc);
    json_t *actor = doc.body ? json_loadb(doc.body, doc.len, 0, NULL) : NULL;
    wf_doc_free(&doc);
    const struct pref *p = &w->p[workload_entry_persona(e)];
    json_t *j = actor ? wf_act_update_actor(&w->crowd->wf, &from, actor, e->ref & REV_MASK,
                                            w->start + (time_t)e->t_off, p->actor, err)
                      : NULL;
    json_decref(actor);
    if (!j) {
        if (!err->msg[0])
            flood_err_set(err, FLOOD_EINVAL, "workload: no actor document to update");
        return NULL;
    }
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (s && len)
        *len = strlen(s);
    return s;
}

char *workload_render(struct workload *w, uint64_t seq, const struct entry *e, int note,
                      size_t *len, struct flood_err *err)
{
    struct wf_act_args a;
    struct scratch s;
    enum op_kind op = workload_entry_op(e);
    if (op == OP_UPDATE_ACTOR)
        return render_update_actor(w, seq, e, len, err);
    if (op == OP_DELETE_ACTOR) {
        const struct pref *p = &w->p[workload_entry_persona(e)];
        memset(&a, 0, sizeof(a));
        a.kind = WF_ACT_DELETE_ACTOR;
        a.p = (struct wf_persona_ref){p->actor, p->mention};
        workload_actor_of_index(w->crowd, e->actor_idx, &a.from.instance, &a.from.actor);
        a.from.seq = workload_id_seq(w, seq);
        return wf_act_text(&w->crowd->wf, &a, len, err);
    }
    if (op == OP_UNDO || op == OP_UPDATE || op == OP_DELETE) {
        struct entry t;
        uint64_t tseq = seq - e->ref;
        if (op == OP_UNDO && !(e->persona_op & F_UNDO_REACT)) {
            const struct pref *p = &w->p[workload_entry_persona(e)];
            memset(&a, 0, sizeof(a));
            a.kind = WF_ACT_UNDO_FOLLOW;
            a.p = (struct wf_persona_ref){p->actor, p->mention};
            workload_actor_of_index(w->crowd, e->actor_idx, &a.from.instance, &a.from.actor);
            a.from.seq = workload_id_seq(w, seq);
            /* a Follow an earlier run sent: its id as that run wrote it (the follow state) */
            a.follow_seq = (e->persona_op & F_PRIOR) && e->ref < w->n_prior
                               ? w->prior[e->ref].id_seq
                               : workload_id_seq(w, tseq);
            return wf_act_text(&w->crowd->wf, &a, len, err);
        }
        if (e->ref == 0 || entry_copy(w, tseq, &t) < 0 || args_of(w, tseq, &t, &a, &s, err) < 0) {
            if (!err->msg[0])
                flood_err_set(err, FLOOD_EINVAL, "workload: activity %" PRIu64 " refers to none",
                              seq);
            return NULL;
        }
        enum wf_act_kind inner = a.kind;
        a.ref_seq = a.from.seq;
        a.from.seq = workload_id_seq(w, seq);
        if (op == OP_UNDO) {
            a.kind = WF_ACT_UNDO;
            a.undo_kind = inner;
        } else {
            a.kind = op == OP_UPDATE ? WF_ACT_UPDATE_NOTE : WF_ACT_DELETE_NOTE;
            a.updated = w->start + (time_t)e->t_off;
            if (a.updated <= a.published)
                a.updated = a.published + 1; /* an edit is later than the post */
        }
        return wf_act_text(&w->crowd->wf, &a, len, err);
    }
    if (args_of(w, seq, e, &a, &s, err) < 0)
        return NULL;
    if (note) {
        uint64_t useq;
        struct entry u;
        pthread_mutex_lock(&w->lock);
        /* as its latest Update(Note) sent by now showed it */
        int edited = op == OP_CREATE && workload_due_edit(w, seq, clock_wall_ns(), &useq) == 0;
        pthread_mutex_unlock(&w->lock);
        if (edited && entry_copy(w, useq, &u) == 0) {
            a.updated = w->start + (time_t)u.t_off;
            if (a.updated <= a.published)
                a.updated = a.published + 1;
        }
        if (a.kind == WF_ACT_CREATE)
            a.kind = WF_ACT_NOTE;
        else
            a.object_only = 1;
    }
    return wf_act_text(&w->crowd->wf, &a, len, err);
}

char *workload_render_unseen(struct workload *w, uint64_t seq, const struct entry *e, unsigned k,
                             size_t *len, struct flood_err *err)
{
    const struct pref *p = &w->p[workload_entry_persona(e)];
    struct wf_act_args a = {.p = {p->actor, p->mention}, .with_context = 1, .object_only = 1};
    struct scratch s;
    uint32_t f = workload_flat(w, e->actor_idx);
    workload_unflat(w, (f + k) % w->n_flat, &a.from.instance, &a.from.actor);
    a.from.seq = workload_id_seq(w, seq);
    a.published = w->start + (time_t)e->t_off - 600 * (time_t)k; /* parents are older */
    wf_content_draw(&w->crowd_content, draw_seed(w, seq, 0x756e7365656e + k),
                    w->crowd->opts.instances, w->crowd->opts.actors, 0, &s.post);
    a.post = &s.post;
    enum op_kind op = workload_entry_op(e);
    if (op == OP_VOTE) {
        a.kind = WF_ACT_QUESTION;
        draw_poll(w, seq, 1, w->start + (time_t)e->t_off, &s.poll);
        a.poll = &s.poll;
    } else {
        a.kind = WF_ACT_NOTE;
        if (op == OP_REPLY && k < w->depth) {
            int inst, act;
            workload_unflat(w, (f + k + 1) % w->n_flat, &inst, &act);
            wf_note_url(&w->crowd->wf, inst, act, a.from.seq, s.url);
            a.in_reply_to = s.url;
        }
    }
    return wf_act_text(&w->crowd->wf, &a, len, err);
}

/* ---- serving --------------------------------------------------------------------------- */

int workload_gone_at(const struct workload *w, uint32_t idx, int64_t now_ns)
{
    return idx < w->n_actor_idx && w->revs[idx].gone && now_ns >= w->revs[idx].gone_ns;
}

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
    const struct entry *p = *seq < w->count ? workload_entry(w, *seq, 0) : NULL;
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
            int64_t now_off = clock_wall_ns() / 1000000000 - (int64_t)w->start;
            /* newest first, as Mastodon orders an outbox; a Create built ahead of its
             * intended second is not listed before it */
            for (uint64_t k = 0; k < OUTBOX_RECENT && k < ob->total; k++) {
                uint64_t q = ob->recent[(ob->total - 1 - k) % OUTBOX_RECENT];
                const struct entry *c = workload_entry(w, q, 0);
                if (c && c->t_off > now_off)
                    total--;
                else
                    seqs[n++] = q;
            }
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

/* Whether op leaves a Note (or Question) at the sender's own note id. */
static int has_own_note(enum op_kind op)
{
    return op == OP_CREATE || op == OP_REPLY || op == OP_QUESTION || op == OP_VOTE;
}

static int answer(char *body, size_t len, const struct flood_err *err, struct wf_doc *out)
{
    if (!body) {
        wf_error(500, err->msg, out);
        return 500;
    }
    out->status = 200;
    out->content_type = WF_CT_ACTIVITY;
    out->body = body;
    out->len = len;
    return 200;
}

/* GET .../notes/ID: the sender's own note, or one of the unseen crowd objects of the
 * activity numbered ID (by the actors after the sender, see workload.h). */
static int serve_note(struct workload *w, const struct wf_route *r, struct wf_doc *out)
{
    uint64_t seq = r->seq & SEQ_MASK;
    struct entry e = {0};
    int found = 0;
    if ((r->seq >> WORKLOAD_RUN_SHIFT) == w->run) {
        pthread_mutex_lock(&w->lock);
        const struct entry *p = seq < w->count ? workload_entry(w, seq, 0) : NULL;
        if (p && p->persona_op) {
            e = *p;
            found = 1;
        }
        pthread_mutex_unlock(&w->lock);
    }
    if (!found || r->instance < 1 || r->instance > w->crowd->opts.instances || r->actor < 1 ||
        r->actor > w->crowd->opts.actors) {
        wf_error(404, "no such object", out);
        return 404;
    }
    struct flood_err err = {0};
    size_t len = 0;
    uint32_t idx = (uint32_t)crowd_actor_index(w->crowd, r->instance, r->actor);
    enum op_kind op = workload_entry_op(&e);
    if (idx == e.actor_idx && has_own_note(op)) {
        pthread_mutex_lock(&w->lock);
        int64_t now = clock_wall_ns(); /* its Delete sent by now: 410 */
        int gone = workload_gone_at(w, idx, now) || workload_due_deleted(w, seq, e.persona_op, now);
        pthread_mutex_unlock(&w->lock);
        if (gone) {
            wf_error(410, "deleted", out);
            return 410;
        }
        char *body = workload_render(w, seq, &e, 1, &len, &err);
        return answer(body, len, &err, out);
    }
    if ((e.persona_op & F_UNSEEN) && op != OP_UNDO) { /* an Undo's bit is F_PRIOR */
        uint32_t f = workload_flat(w, e.actor_idx), g = workload_flat(w, idx);
        unsigned k = (g + w->n_flat - f) % w->n_flat; /* the k-th actor after the sender */
        unsigned depth = op == OP_REPLY ? w->depth : 1;
        if (k >= 1 && k <= depth) {
            char *body = workload_render_unseen(w, seq, &e, k, &len, &err);
            return answer(body, len, &err, out);
        }
    }
    wf_error(404, "no such object", out);
    return 404;
}

int workload_object_hook(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct workload *w = ctx;
    if (!w || !req)
        return 0;
    const struct wf_route *r = &req->route;
    if (r->kind == WF_ROUTE_OUTBOX)
        return serve_outbox(w, r, out);
    if (r->kind == WF_ROUTE_NOTE)
        return serve_note(w, r, out);
    if (r->kind != WF_ROUTE_ACTIVITY)
        return 0;
    uint64_t seq;
    struct entry e;
    if (lookup(w, r->seq, r->instance, r->actor, &seq, &e) < 0) {
        wf_error(404, "no such object", out);
        return 404;
    }
    struct flood_err err = {0};
    size_t len = 0;
    char *body = workload_render(w, seq, &e, 0, &len, &err);
    return answer(body, len, &err, out);
}

uint32_t workload_actor_state(struct workload *w, int instance, int actor, int64_t now_ns,
                              uint32_t *rot, time_t *when)
{
    uint32_t rev = 0, r_rot = 0;
    int32_t off = 0;
    if (w && instance >= 1 && instance <= w->crowd->opts.instances && actor >= 1 &&
        actor <= w->crowd->opts.actors) {
        pthread_mutex_lock(&w->lock);
        /* built ahead: the Update(Person) sent by now (workload_due.c) */
        uint32_t idx = (uint32_t)crowd_actor_index(w->crowd, instance, actor);
        uint64_t at = workload_due_actor_at(w, idx, now_ns);
        const struct entry *e = at ? workload_entry(w, at - 1, 0) : NULL;
        if (e) {
            rev = e->ref & REV_MASK;
            r_rot = e->ref >> REV_BITS;
            off = e->t_off;
        }
        pthread_mutex_unlock(&w->lock);
    }
    if (rot)
        *rot = r_rot;
    if (when)
        *when = w ? w->start + off : 0;
    return rev;
}

int workload_actor_gone(struct workload *w, int instance, int actor, int64_t now_ns)
{
    if (!w || instance < 1 || instance > w->crowd->opts.instances || actor < 1 ||
        actor > w->crowd->opts.actors)
        return 0;
    pthread_mutex_lock(&w->lock);
    int gone = workload_gone_at(w, (uint32_t)crowd_actor_index(w->crowd, instance, actor), now_ns);
    pthread_mutex_unlock(&w->lock);
    return gone;
}

uint32_t workload_actor_revision(struct workload *w, int instance, int actor, time_t *when)
{
    return workload_actor_state(w, instance, actor, clock_wall_ns(), NULL, when);
}

int workload_actor_hook(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct workload *w = ctx;
    if (!w || !req || (req->route.kind != WF_ROUTE_ACTOR && req->route.kind != WF_ROUTE_KEY))
        return 0;
    const struct wf_route *r = &req->route;
    uint32_t rot;
    time_t when;
    int64_t now = clock_wall_ns();
    uint32_t rev = workload_actor_state(w, r->instance, r->actor, now, &rot, &when);
    if (r->kind == WF_ROUTE_ACTOR && workload_actor_gone(w, r->instance, r->actor, now)) {
        /* deleted (delete-actor): 410 Gone, as Mastodon answers for a deleted account and as
         * its Delete(Person) handling expects on checking the actor is gone. The key document
         * is still served (below): a receiver verifies the Delete's signature first (Mastodon
         * with the key it stored, refetching it by keyId when that fails; Fedify by keyId
         * through its key cache), so a key answering 410 would turn the Delete into a
         * signature failure and the account would never be removed. */
        wf_error(410, "gone", out);
        return 410;
    }
    if (r->kind == WF_ROUTE_KEY) {
        if (rot == 0)
            return 0;
        crowd_key_doc_rot(w->crowd, r->instance, r->actor, rot, out);
        return out->status;
    }
    if (rev == 0)
        return 0;
    struct wf_doc doc = {0};
    crowd_actor_doc_rot(w->crowd, r->instance, r->actor, rot, &doc);
    json_t *j = doc.body ? json_loadb(doc.body, doc.len, 0, NULL) : NULL;
    wf_doc_free(&doc);
    char *body = NULL;
    if (j && wf_actor_revise(&w->crowd->wf, r->instance, r->actor, rev, when, j) == 0)
        body = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    struct flood_err err = {0};
    flood_err_set(&err, FLOOD_EINVAL, "actor: cannot render its revision");
    return answer(body, body ? strlen(body) : 0, &err, out);
}

/* The seq and record of an activity of this run by its id URL, or -1. */
static int64_t activity_of_id(struct workload *w, const char *follow_id, struct entry *e)
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
    if (lookup(w, r.seq, r.instance, r.actor, &seq, e) < 0)
        return -1;
    return (int64_t)seq;
}

int64_t workload_follow_seq(struct workload *w, const char *follow_id)
{
    struct entry e;
    int64_t seq = activity_of_id(w, follow_id, &e);
    return seq >= 0 && workload_entry_op(&e) == OP_FOLLOW ? seq : -1;
}

int workload_refollow_answer(struct workload *w, const char *follow_id, int accepted)
{
    struct entry e;
    int64_t seq = activity_of_id(w, follow_id, &e);
    if (seq < 0 || workload_entry_op(&e) != OP_REFOLLOW)
        return 0;
    pthread_mutex_lock(&w->lock);
    struct entry *x = workload_entry(w, (uint64_t)seq, 0);
    if (x && !(x->persona_op & F_ANSWERED)) { /* the first answer counts */
        x->persona_op |= F_ANSWERED | (accepted ? F_ACCEPTED : 0);
        if (accepted)
            w->refollow_acc++;
        else
            w->refollow_rej++;
    }
    pthread_mutex_unlock(&w->lock);
    return 1;
}

/* flood/send/workload_int.h: the workload's inside, shared by workload.c (options,
 * choices, building) and workload_render.c (the JSON of a record, serving it again). */
#ifndef FLOOD_WORKLOAD_INT_H
#define FLOOD_WORKLOAD_INT_H

#include <pthread.h>

#include "flood/send/workload.h"
#include "webfinger/content.h"

#define RUN_BITS    24
#define SEQ_MASK    ((UINT64_C(1) << WORKLOAD_RUN_SHIFT) - 1)
#define CHUNK_SHIFT 16 /* 65536 records (1 MiB) per chunk */
#define CHUNK_LEN   ((size_t)1 << CHUNK_SHIFT)
/* a chunk: its records, then a uint32_t per record (a Create's distance to its latest
 * Update, 0: never edited; workload_due.c), 1.25 MiB */
#define CHUNK_BYTES  (CHUNK_LEN * (sizeof(struct entry) + sizeof(uint32_t)))
#define SPOOL_KEEP   2 /* chunks of records kept resident (workload_spool.c) */
#define PERSONA_BITS 24
#define PERSONA_MASK ((UINT32_C(1) << PERSONA_BITS) - 1)
#define OP_MASK      0x1fu      /* op + 1, 5 bits above the persona */
#define F_UNSEEN     (1u << 29) /* announce/reply/vote of an unseen crowd object */
#define F_DELETED    (1u << 30) /* a Create whose note a later Delete removed */
#define F_UNDO_REACT (1u << 31) /* an Undo of a Like/Announce/EmojiReact, not a Follow */
/* the same bits on the records they do not otherwise mark */
#define F_PRIOR        F_UNSEEN  /* an Undo of a Follow an earlier run sent: ref indexes w->prior */
#define F_ANSWERED     F_DELETED /* a refollow answered by an Accept or a Reject */
#define F_ACCEPTED     F_UNDO_REACT /* ... by an Accept */
#define F_AGED         F_UNDO_REACT /* a Create old enough for an update or delete to name */
#define REACT_RING     4096         /* reactions an Undo may draw from */
#define OUTBOX_RECENT  20
#define POST_AGE_S     5  /* an update or delete names a post sent at least this long before */
#define REFOLLOW_AGE_S 10 /* a refollow repeats a Follow sent at least this long before */
#define ACTORS_MAX     (UINT32_C(1) << 24) /* crowd actors the per-actor tables cover */

/* One built activity. ref: a Like's, reaction's, announce's or reply's post index; an
 * Undo's, Update's or Delete's distance back to its object; an update-actor's revision. */
struct entry {
    uint32_t actor_idx;  /* crowd_actor_index */
    uint32_t persona_op; /* flags | (op + 1) << PERSONA_BITS | persona; 0: not built */
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

/* An update-actor's ref: the actor's key rotation in force (ROT_BITS) above its revision. */
#define REV_BITS 20
#define REV_MASK ((UINT32_C(1) << REV_BITS) - 1)
#define ROT_MAX  4095u /* rotations cycle through 1..ROT_MAX */

/* A crowd actor's document state as built: its latest revision and key rotation, and the
 * seq + 1 of the Update(Person) announcing them (0: none), whose record has its time; what
 * is served at an instant walks back from it (workload_due.c). */
struct actor_rev {
    uint32_t rev, rot;
    uint64_t last;
    /* delete-actor: deleted in this run (no later activity is sent by it), its document
     * served 410 Gone from gone_ns (the Delete's intended send time, wall clock ns) on */
    int gone;
    int64_t gone_ns;
};

/* An Update(Note), Delete(Note) or Update(Person) kept with its intended send time (wall
 * clock ns) and the seq + 1 of the one before it on the same object (0: none). */
struct workload_due {
    uint64_t prev;
    int64_t at_ns;
};
struct workload_due_put {
    uint64_t key;
    int64_t at_ns;
};

struct outbox {
    uint64_t total;
    uint64_t recent[OUTBOX_RECENT]; /* ring of the last Creates' seqs */
    uint32_t standing;              /* of them, aged in and not deleted */
};

/* Followed pairs: an open-addressing map from pair key to its place in a dense array (so
 * that a uniform draw among followed pairs is one index). */
struct pair {
    uint64_t key; /* actor_idx << 32 | persona */
    uint64_t follow_seq;
    uint32_t prior; /* index + 1 into w->prior: followed by an earlier run (follow_seq 0) */
};

/* A follow an earlier run left standing, from the follow state (workload_state.c). */
struct prior_follow {
    uint32_t actor_idx, persona;
    uint64_t id_seq; /* the number in its Follow's id (workload_id_seq of that run) */
};

/* A Follow, Undo(Follow) or refollow this process sent, for the follow state. */
struct follow_event {
    uint64_t seq, id_seq; /* id_seq: the Follow's (the one undone, for an Undo) */
    uint32_t actor_idx, persona;
    int op;
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
    unsigned depth;                           /* unseen parents of a reply */
    uint32_t n_flat;                          /* instances * actors */
    const struct wf_content_profile *content; /* NULL: plain */
    struct wf_content_profile crowd_content;  /* the unseen crowd notes' profile */

    pthread_mutex_t lock; /* everything below */
    struct entry **chunks;
    size_t n_chunks;
    /* the chunks' file (workload_spool.c): its descriptor (-1: none), each chunk mapped
     * from it (1) or memory (0) */
    int spool_fd, spool_tried, spool_warned;
    unsigned char *mapped;
    size_t n_mapped;
    uint64_t count; /* records allocated (highest seq built + 1) */
    uint64_t built, by_op[OP__COUNT];
    uint64_t next_seq;
    struct outbox **outboxes; /* per actor index, allocated on first Create */
    uint64_t n_actor_idx;
    uint64_t react[REACT_RING]; /* seqs of recent Like/Announce/EmojiReact, for undo_pct */
    size_t n_react;
    struct actor_rev *revs; /* per actor index */
    uint32_t n_gone;        /* actors deleted (delete-actor) */
    uint64_t *map;          /* key + 1, 0 = empty */
    uint32_t *map_val;
    size_t map_cap;
    struct pair *dense;
    size_t n_dense, dense_cap;
    /* the served state's times (workload_due.c): key + 1 (0 empty) to its entry, for the
     * entries still ahead of the wall clock; and each entry's key and time in the order
     * put (a ring of due_ring_cap from due_head, n_ring long), to drop those past */
    uint64_t *due_key;
    struct workload_due *due_val;
    size_t due_cap, n_due;
    struct workload_due_put *due_ring;
    size_t due_ring_cap, due_head, n_ring;

    /* the mix kept (see workload.h): actors with a standing recent Create (a dense set, with
     * each actor's place + 1), followed pairs per persona, kinds owed for a substitution */
    uint64_t op_offset;
    uint32_t *posters, *poster_pos;
    uint32_t n_posters;
    uint64_t *young; /* Creates not aged in yet (age_posts), from young_head on */
    size_t young_head, n_young, cap_young;
    uint32_t *n_following; /* per persona */
    /* --refollow alternate: the pairs this run undid (a bit each, idx * n_p + persona),
     * never followed again in it; how many, in all and per persona */
    uint8_t *held;
    uint64_t n_held;
    uint32_t *n_held_p;
    uint64_t n_prior_dense; /* followed pairs an earlier run left (prior != 0) */
    uint64_t alt_flip;      /* alternate: Follows drawn while n_prior_dense > 0 */
    uint64_t owed[OP__COUNT];
    /* of the activities built to send: drawn as [from], sent as [to] for want of what
     * [from] needs (fell) or to make up an earlier such fall of [to] (repaid) */
    uint64_t drawn[OP__COUNT];
    uint64_t fell[OP__COUNT][OP__COUNT], repaid[OP__COUNT][OP__COUNT];
    /* the follow state (workload_state.c): follows earlier runs left standing, this
     * process's follow events, the refollows' answers, each persona's file */
    struct prior_follow *prior;
    size_t n_prior;
    struct follow_event *events; /* the newest a pair (workload_state_event) */
    size_t n_events, cap_events;
    uint32_t *ev_map; /* pair -> its event's index + 1 (0: empty), ev_cap slots */
    size_t ev_cap;
    uint64_t refollow_acc, refollow_rej;
    char **state_paths; /* per persona; NULL when not kept */
};

uint64_t workload_rng(uint64_t *x);
/* Chunk c of the records, zeroed: a page of the state folder's unnamed file (older chunks
 * then leave the resident set) or memory. Never NULL. With the lock held. */
struct entry *workload_chunk_new(struct workload *w, size_t c);
/* Every chunk unmapped or freed, the file closed. */
void workload_chunks_free(struct workload *w);
struct entry *workload_entry(struct workload *w, uint64_t seq, int create);
enum op_kind workload_entry_op(const struct entry *e);
uint32_t workload_entry_persona(const struct entry *e);
void workload_actor_of_index(const struct crowd *c, uint32_t idx, int *instance, int *actor);
/* The JSON text of record e (activity seq), or with note set the Note at the sender's own
 * note id: the same bytes every time. A new string, or NULL and err. Takes the lock to
 * read the records e refers to (call without it). */
char *workload_render(struct workload *w, uint64_t seq, const struct entry *e, int note,
                      size_t *len, struct flood_err *err);
/* The k-th unseen crowd object (1..) of record e: a Note (a Question for a vote). */
char *workload_render_unseen(struct workload *w, uint64_t seq, const struct entry *e, unsigned k,
                             size_t *len, struct flood_err *err);
/* Record Update seq `update` of the note of Create seq; the seq of the latest Update of
 * that note built: 0 and *update, or -1 when it was never edited. Both with the lock held
 * (workload_due.c; what is served is workload_due_edit's, as of a time). */
void workload_edit_put(struct workload *w, uint64_t seq, uint64_t update);
int workload_edit_of(const struct workload *w, uint64_t seq, uint64_t *update);
/* Whether actor index idx is deleted (delete-actor) at wall-clock now_ns; with the lock. */
int workload_gone_at(const struct workload *w, uint32_t idx, int64_t now_ns);
/* Followed pairs (workload_pairs.c), with the lock: the map slot of key (actor_idx << 32 |
 * persona) or (size_t)-1; add a pair (prior: index + 1 into w->prior, or 0); remove the pair
 * in slot j. */
size_t workload_pair_find(const struct workload *w, uint64_t key);
void workload_pair_add(struct workload *w, uint64_t key, uint64_t follow_seq, uint32_t prior);
void workload_pair_remove(struct workload *w, size_t j);
/* The follow state of each persona read into w->prior (workload_new_at, before any
 * build; the caller adds them as followed pairs). 0, or -1 and err (a file that cannot be
 * read or parsed). */
int workload_state_read(struct workload *w, struct flood_err *err);
/* The served state follows the intended times (workload_due.c), with the lock: record
 * the Update (workload_edit_put too) or the Delete of the note of Create `create`, actor idx's
 * Update(Person) seq, each with its intended time (wall clock ns), seq being the Update or the
 * Delete; the Update of `create` in force at now_ns (0 and *update, or -1: none sent yet); whether
 * Create `create` (its record's persona_op) is deleted at now_ns; the seq + 1 of actor idx's
 * Update(Person) in force at now_ns (0: none); free the map. */
void workload_due_note(struct workload *w, int deleted, uint64_t create, uint64_t seq,
                       int64_t when_ns);
void workload_due_actor(struct workload *w, uint32_t idx, uint64_t seq, int64_t when_ns);
int workload_due_edit(const struct workload *w, uint64_t create, int64_t now_ns, uint64_t *update);
int workload_due_deleted(const struct workload *w, uint64_t create, uint32_t persona_op,
                         int64_t now_ns);
uint64_t workload_due_actor_at(const struct workload *w, uint32_t idx, int64_t now_ns);
void workload_due_free(struct workload *w);
/* --population sizes= (o.sizes): the grid's actors past their instance's size counted gone
 * from the start (never sending; still served: their gone_ns never comes). */
void workload_sizes_absent(struct workload *w);
/* The actor that sends next, from *rng: by o.sizes' law, else uniform over the grid. */
void workload_draw_actor(const struct workload *w, uint64_t *rng, int *instance, int *actor);
/* actor, or with o.sizes one of instance's own when actor is past its size (a replay). */
int workload_actor_in(const struct workload *w, int instance, int actor);
/* The kind sent for a draw: the drawn one, a stand-in when it cannot be sent (owed), or an
 * owed kind that the drawn one stood in for and that can be sent now. *how: 0, 1 fell, 2
 * repaid. */
enum op_kind workload_settle_op(struct workload *w, enum op_kind op, int *how);
/* The first followed pair from dense place d on (circling) that an earlier run left, else d. */
size_t workload_prior_pair(const struct workload *w, size_t d);
/* --refollow alternate: pair (idx, persona) undone by this run, held out of its Follows
 * (nothing in the other modes); whether a pair is held out. */
void workload_hold_out(struct workload *w, uint32_t idx, uint32_t persona);
int workload_held_out(const struct workload *w, uint32_t idx, uint32_t persona);
/* The event of pair (persona, actor_idx) in w->events, to overwrite with its newest: the
 * one it had, or a new one (only the newest a pair is written to the state file, so a long
 * run keeps one a pair, not one a Follow or Undo). With the lock held. */
struct follow_event *workload_state_event(struct workload *w, uint32_t persona, uint32_t actor_idx);
/* Flat crowd actor f (0..n_flat-1) of an actor index, and back. */
uint32_t workload_flat(const struct workload *w, uint32_t idx);
void workload_unflat(const struct workload *w, uint32_t f, int *instance, int *actor);

#endif

/* flood/send/workload.h: what the sender sends. Activity n of a run is built from the run's
 * seed, n and the persona table: which operation (the mix), which crowd actor sends it,
 * which persona it concerns, and its JSON body with unique ids. A compact record of every
 * built activity is kept so that the crowd can serve each activity and note at its id
 * (GET /users/NAME/activities/SEQ and /users/NAME/notes/SEQ). Thread-safe: the signer
 * threads build, the server's threads read. */
#ifndef FLOOD_WORKLOAD_H
#define FLOOD_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "flood/crowd/crowd.h"
#include "sign/err.h"
#include "flood/crowd/server.h"
#include "flood/measure/stats.h"

/* A target account, after discovery. */
struct persona {
    char *acct;         /* "acct:alice@target.test" or NULL when given by URL */
    char *actor;        /* actor id URL */
    char *inbox;        /* personal inbox */
    char *shared_inbox; /* endpoints.sharedInbox or NULL */
    char **posts;       /* object ids to Like (from --like-object or the outbox) */
    size_t n_posts;
};

struct wf_content_profile;
struct sizes;

struct workload_opts {
    uint64_t seed;
    unsigned mix[OP__COUNT]; /* weights; --mix create=70,like=20,follow=10[,undo=N] */
    int personal_inbox;      /* send to the persona's own inbox, not the shared one */
    const char *inbox_url;   /* --inbox URL: every activity there, no discovery */
    /* issue 12; zero keeps the historical traffic */
    const struct wf_content_profile *content; /* borrowed; NULL = plain */
    unsigned reply_depth;                     /* a reply's chain of unseen crowd parents (0: 3) */
    unsigned unseen_pct; /* % of announces and replies whose object is an unseen crowd note
                            (the rest: a persona's post; all unseen when none is known) */
    unsigned undo_pct;   /* % of like/announce/emoji-react draws sent as the Undo of an
                            earlier one (Undo counted as "undo") */
    unsigned rotate_pct; /* % of update-actor draws that rotate the actor's key */
    /* --replay: activity n (n < n_pin) is sent by an actor of instance pin_instance[n]
     * (1..instances) and, when pin_op[n] >= 0, is that operation (a like or emoji-react
     * with nothing to react to, and any op past OP__COUNT, follow the mix); borrowed */
    const uint16_t *pin_instance;
    const int8_t *pin_op;
    uint64_t n_pin;
    /* --refollow: a Follow drawn when every crowd actor already follows the persona is sent
     * as a refollow (WORKLOAD_REFOLLOW_REPEAT, the default) or as the Undo of one of those
     * follows (WORKLOAD_REFOLLOW_UNDO_FIRST), whose pair the next Follow takes; or
     * (WORKLOAD_REFOLLOW_ALTERNATE) as the Undo of a follow an earlier run made, whose pair
     * this run never follows again: a later run's Follow takes it, once the target has long
     * had the Undo (capacity's steps); while follows of earlier runs stand, every second
     * Follow drawn is sent as such an Undo */
    int refollow;
    /* the folder the follow state is kept in (the crowd's --state); NULL: not kept */
    const char *state_dir;
    /* --population sizes=/acts= (crowd/sizes.h), laid out for this crowd, or NULL: who acts
     * is drawn from it, the grid's actors past their instance's size never act (borrowed) */
    struct sizes *sizes;
};
enum {
    WORKLOAD_REFOLLOW_REPEAT = 0,
    WORKLOAD_REFOLLOW_UNDO_FIRST = 1,
    WORKLOAD_REFOLLOW_ALTERNATE = 2,
};

/* One built activity, ready to sign. Strings are owned by the item (workload_item_free). */
struct workload_item {
    uint64_t seq;
    enum op_kind op;
    int instance, actor; /* the crowd actor that sends it */
    int persona;         /* index into the persona table, -1 with --inbox alone */
    char *inbox;         /* URL to POST to */
    char *body;          /* the activity JSON */
    size_t body_len;
    const struct sign_key *key; /* the sender's key in force (its rotation; borrowed) */
};

struct workload;

/* A new workload over the crowd and the personas (borrowed; they outlive it). NULL and err
 * when the mix cannot be served (e.g. like=… with no post to like and no --like-object). */
struct workload *workload_new(struct crowd *crowd, const struct workload_opts *o,
                              const struct persona *personas, size_t n_personas,
                              struct flood_err *err) FLOOD_WUR;
void workload_free(struct workload *w);

/* Build activity seq (called with seq = 0, 1, 2, ... in order by one thread at a time).
 * 0, or -1 and err. */
int workload_build(struct workload *w, uint64_t seq, struct workload_item *out,
                   struct flood_err *err) FLOOD_WUR;
void workload_item_free(struct workload_item *it);

/* The server's object hook (struct server_hooks.object with ctx = the workload): serves
 * every built activity and note at its id, and the actors' outboxes. */
int workload_object_hook(void *ctx, const struct server_req *req, struct wf_doc *out);

/* The revision of a crowd actor's document: 0 until this run sends an Update(Person) for
 * it, then the number of updates sent (the crowd renders the actor with wf_actor_revise
 * and this revision, so a target that refetches sees what the Update announced), its time
 * in *when (may be NULL). A revision counts from its Update's intended send time (wall
 * clock), not from when it was built ahead. Thread-safe. */
uint32_t workload_actor_revision(struct workload *w, int instance, int actor, time_t *when);
/* The same at wall-clock time now_ns, with the key rotation in force in *rot (0: the
 * actor's own key; crowd_key_rot). */
uint32_t workload_actor_state(struct workload *w, int instance, int actor, int64_t now_ns,
                              uint32_t *rot, time_t *when);
/* The server's actor hook (struct server_hooks.actor, ctx = the workload): an actor revised
 * by an Update(Person) is served revised (name, icon, updated; the rotated publicKey), its
 * key document with the rotated key; a deleted actor (delete-actor) 410 Gone from its
 * Delete's time on (its key document still served); 0 for an actor never revised. */
int workload_actor_hook(void *ctx, const struct server_req *req, struct wf_doc *out);

/* Whether a crowd actor is deleted (a delete-actor of it sent) at wall-clock now_ns: from its
 * Delete's intended send time on, its document answers 410 Gone (workload_actor_hook) and
 * its notes 410; its key document keeps answering so that the Delete's signature can be
 * verified. Thread-safe. */
int workload_actor_gone(struct workload *w, int instance, int actor, int64_t now_ns);

/* The seq of a Follow this run sent, from its id URL, or -1 when it is not one. */
int64_t workload_follow_seq(struct workload *w, const char *follow_id);

/* ---- additions: ids, time, and the rules the sender follows ---------------------------
 *
 * Ids. Activity n of a run is served at BASE/users/NAME/activities/ID and its Note at
 * .../notes/ID with ID = (run << WORKLOAD_RUN_SHIFT) | n, run a 24-bit number made of
 * the run's start second modulo 2^17 and 7 bits of a hash of the seed: two runs started
 * in different seconds less than 36 hours apart never share an id (Fedify deduplicates
 * ids for a day), and runs started in the same second differ unless their seeds' hashes
 * agree on 7 bits. A GET whose run part is not this run's gets 404.
 *
 * Choices. Activity n draws from splitmix64 seeded with seed ^ n (pure, so a seed gives
 * the same run): the operation by the mix weights, the sending actor uniformly among the
 * crowd's actors 1..M of instances 1..N, the persona uniformly (a Like: uniformly among
 * the personas that have posts, then a post uniformly).
 * Follow/Undo. A Follow of a (crowd actor, persona) pair this run already follows is sent
 * as the Undo of that earlier Follow (embedded), and the pair counts as not followed: the
 * next Follow drawn for it follows again. An `undo` share undoes a pair drawn uniformly
 * among the followed ones, and is sent as a Follow when none is followed.
 * Issue 12's kinds (a flat crowd actor f is 0..instances*actors-1, f = (instance-1)*actors
 * + actor-1; the "unseen" objects of activity n by actor f are by actors f+1..f+D mod the
 * crowd, at .../notes/ID with activity n's ID, served by the object hook, never sent):
 *   announce: of a persona's post, or (unseen_pct) of an unseen crowd note (Announce.object
 *     a URI: the target must fetch it);
 *   reply: Create(Note) inReplyTo a persona's post, or (unseen_pct) a chain of D unseen
 *     crowd notes, each replying to the next (D = reply_depth, at most the crowd's actors
 *     minus one); the reply mentions the persona either way;
 *   update / delete: Update(Note) / Delete(Tombstone) of one of the sender's last 20 Creates
 *     (a Create when it has none); a deleted note answers 410 afterwards;
 *   update-actor: Update(Person) of the sender at its next revision;
 *   delete-actor: Delete of the sender itself (object its actor id; an account deletion);
 *     it sends nothing more: a later activity drawn for a deleted actor is sent by the next
 *     actor standing in flat order (wrapping), its Follows are forgotten (never undone), and
 *     the last actor standing is never deleted (the draw falls back to a Create);
 *   question: Create(Question) mentioning the persona; vote: Create(Note) with an option's
 *     name, inReplyTo an unseen crowd poll;
 *   emoji-react: EmojiReact of a persona's post (two in three a unicode emoji, else a custom
 *     one with its Emoji tag);
 *   undo_pct of like/announce/emoji-react draws undo an earlier one (Undo, embedded).
 * Creates, replies and questions carry content drawn from opts.content.
 * --inbox alone (no persona): the persona is a placeholder actor ORIGIN/users/flood with
 * mention @flood@HOST, ORIGIN the inbox URL's scheme://host[:port], so Creates and
 * Follows stay well-formed; a persona with actor NULL (e.g. carrying --like-object posts)
 * gets the same placeholder. Entries sent to it have persona -1. */
#define WORKLOAD_RUN_SHIFT 40

/* workload_new with the run's start (wall clock) given: the run part of the ids comes from
 * it and the seed; workload_new uses time(NULL). */
struct workload *workload_new_at(struct crowd *crowd, const struct workload_opts *o,
                                 const struct persona *personas, size_t n_personas, time_t start,
                                 struct flood_err *err) FLOOD_WUR;
/* workload_build with the intended send time (wall clock, seconds): the Create's and the
 * Note's `published`. workload_build uses time(NULL). seq must not go backwards; a seq
 * never built (skipped) is answered 404. */
int workload_build_at(struct workload *w, uint64_t seq, time_t when, struct workload_item *out,
                      struct flood_err *err) FLOOD_WUR;
/* Decide activity seq and keep its record as workload_build_at does, without rendering it
 * or counting it as built: a shard (flood run --shard) walks the activities of the other
 * shards this way, so that its own are the unsharded run's (the Follow/Undo pairs and the
 * recent Creates are history) and the crowd serves every activity of the run at its id.
 * 0, or -1 and err. */
int workload_skip_at(struct workload *w, uint64_t seq, time_t when,
                     struct flood_err *err) FLOOD_WUR;
/* The same with the intended time in wall-clock nanoseconds (as workload_build_at_ns). */
int workload_skip_at_ns(struct workload *w, uint64_t seq, int64_t when_ns,
                        struct flood_err *err) FLOOD_WUR;
/* workload_build_at with the intended time in wall-clock nanoseconds: an update-actor's
 * revision is served from that instant on (workload_actor_state). */
int workload_build_at_ns(struct workload *w, uint64_t seq, int64_t when_ns,
                         struct workload_item *out, struct flood_err *err) FLOOD_WUR;
/* The number written in the ids of activity seq: (run << WORKLOAD_RUN_SHIFT) | seq. */
uint64_t workload_id_seq(const struct workload *w, uint64_t seq);
/* How many activities were built, and of them how many of each operation. */
uint64_t workload_built(struct workload *w, uint64_t by_op[OP__COUNT]);
/* ---- the mix kept, and the follow state --------------------------------------------
 *
 * The kind of activity n is drawn from a Weyl sequence (n times the golden ratio's
 * fraction, from an offset of the seed) over the mix's weights: over any n consecutive
 * activities each kind's count is within a few of its share (about log n), where n
 * independent draws stray by sqrt(n). The actor is chosen for the kind: an update or a
 * delete is sent by an actor drawn among those with a standing recent Create, a Follow by
 * one that does not follow the persona (the drawn one, else the next in flat order, else
 * another persona), a refollow or an Undo(Follow) of a followed pair. A kind that cannot
 * be sent at its turn (nothing to delete yet, nothing followed) is sent as another (a
 * Create; a Follow for an undo or a refollow; a refollow or, with --refollow undo-first,
 * an Undo for a Follow) and owed: the next draw of that other kind while it can be sent
 * sends the owed one instead, so the shares hold. What is still owed at the end is
 * counted by kind (workload_mix_json) and warned of. A kind that can never be sent is
 * refused by workload_new (like/emoji-react with no post, announce/reply with neither a
 * post nor a second crowd actor, vote with one actor).
 *
 * The follow state: with opts.state_dir, which crowd actors follow each persona is kept
 * in STATE/follows/HASH.tsv (HASH of the persona's actor id), read by workload_new and
 * written by workload_state_write: the pairs an earlier run left followed count as
 * followed (a Follow goes to another actor; an Undo of one embeds that run's Follow). */

/* Write this process's Follows, Undos and refollows into each persona's follow state,
 * merged with what the file holds now under a lock (a pair's newest event wins, by the
 * run's start and its seq, so shards and concurrent runs each add their own). 0 (also
 * when no state is kept), or -1 and err. */
int workload_state_write(struct workload *w, struct flood_err *err) FLOOD_WUR;
/* The mix as asked and as sent (kinds, counts, shares), what is still substituted and
 * why, the refollows' answers and the follow state: a new object for run.json's "mix". */
json_t *workload_mix_json(struct workload *w);
/* Before the run: a line for each thing the run cannot do as asked (every crowd actor
 * already follows a persona), "" when none, into buf. */
void workload_notes(struct workload *w, char *buf, size_t size);
/* Refollows sent and not answered yet. Thread-safe. */
uint64_t workload_refollows_open(struct workload *w);
/* An Accept (accepted) or Reject of a refollow of this run, by the Follow's id: recorded
 * once and 1, or 0 when the id is not a refollow of this run. Thread-safe. */
int workload_refollow_answer(struct workload *w, const char *follow_id, int accepted);

/* Parse --mix "create=70,like=20,follow=10[,undo=N]" into mix[OP__COUNT] (names not given
 * get 0; weights whole numbers 0..1000000, not all 0). 0, or -1 and err naming --mix and the
 * forms ("--mix: expected one of create, like, ..., got 'post'"). */
int workload_parse_mix(const char *s, unsigned mix[OP__COUNT], struct flood_err *err) FLOOD_WUR;

#endif

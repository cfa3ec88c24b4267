/* webfinger/activity.h: the activities the sender posts, as pure functions of the crowd's
 * description, the sending crowd actor, a sequence number, the target persona and a time.
 * The same arguments always give the same JSON, so the crowd can serve every activity and
 * note again at its id without keeping the bodies (INTEROP.md, "Activities").
 *
 * Ids live on the sending actor's host: BASE/users/NAME/activities/SEQ for an activity,
 * BASE/users/NAME/notes/SEQ for the Note of a Create (the same SEQ). SEQ is the caller's
 * unique number (the sender makes it (run << 40) | n, see flood/send/workload.h), written in
 * decimal as WF_ROUTE_ACTIVITY and WF_ROUTE_NOTE parse it. */
#ifndef FLOOD_WF_ACTIVITY_H
#define FLOOD_WF_ACTIVITY_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "sign/err.h"
#include "webfinger/wf.h"

#define WF_AS_CONTEXT  "https://www.w3.org/ns/activitystreams"
#define WF_AS_PUBLIC   "https://www.w3.org/ns/activitystreams#Public"
#define WF_MENTION_MAX 320 /* "@" NAME "@" HOST[:PORT] */

/* A target persona as the builders see it. Both borrowed. */
struct wf_persona_ref {
    const char *actor;   /* the persona's actor id URL */
    const char *mention; /* "@alice@target.test" (wf_mention_name) */
};

/* The sending crowd actor and the number of the activity. */
struct wf_act_from {
    int instance; /* 1..instances */
    int actor;    /* 1..actors (0, the instance actor, is accepted too) */
    uint64_t seq;
};

/* URL of activity seq / note seq of (instance, actor) into out[WF_URL_MAX]. */
void wf_activity_url(const struct wf_crowd *c, int instance, int actor, uint64_t seq,
                     char out[WF_URL_MAX]);
void wf_note_url(const struct wf_crowd *c, int instance, int actor, uint64_t seq,
                 char out[WF_URL_MAX]);

/* The mention name of a persona into out[WF_MENTION_MAX]: "@NAME@HOST" from an acct
 * ("acct:alice@target.test", "alice@target.test" or "@alice@target.test"), else from the
 * actor URL (its last path segment and its host with any port: https://h:8200/users/bob
 * gives "@bob@h:8200"). 0, or -1 and err when neither gives a name. */
int wf_mention_name(const char *acct, const char *actor_url, char out[WF_MENTION_MAX],
                    struct flood_err *err) FLOOD_WUR;

/* "YYYY-MM-DDTHH:MM:SSZ" of t (UTC) into out[32]. */
void wf_iso_time(time_t t, char out[32]);

/* Each builder returns a new JSON reference (json_decref) or NULL and err when jansson
 * refuses a value (e.g. a persona URL that is not UTF-8). Activities carry "@context";
 * objects embedded in them do not. */

/* The public Note of a Create: id the note URL, attributedTo the actor, to Public, cc the
 * persona and the actor's followers, a Mention tag of the persona, HTML content that
 * mentions it, published. with_context adds "@context" (the Note served at its own id). */
json_t *wf_act_note(const struct wf_crowd *c, const struct wf_act_from *from,
                    const struct wf_persona_ref *p, time_t published, int with_context,
                    struct flood_err *err) FLOOD_WUR;
/* Create of that Note (embedded), same to/cc/published, id the activity URL. */
json_t *wf_act_create(const struct wf_crowd *c, const struct wf_act_from *from,
                      const struct wf_persona_ref *p, time_t published,
                      struct flood_err *err) FLOOD_WUR;
/* Like of object_id (a persona's post), to the persona. */
json_t *wf_act_like(const struct wf_crowd *c, const struct wf_act_from *from,
                    const struct wf_persona_ref *p, const char *object_id,
                    struct flood_err *err) FLOOD_WUR;
/* Follow of the persona. with_context 0 gives the form embedded in an Undo. */
json_t *wf_act_follow(const struct wf_crowd *c, const struct wf_act_from *from,
                      const struct wf_persona_ref *p, int with_context,
                      struct flood_err *err) FLOOD_WUR;
/* Undo (id from->seq) of the Follow numbered follow_seq by the same actor of the same
 * persona, embedded whole: Mastodon ignores an Undo whose object is only an id. */
json_t *wf_act_undo_follow(const struct wf_crowd *c, const struct wf_act_from *from,
                           uint64_t follow_seq, const struct wf_persona_ref *p,
                           struct flood_err *err) FLOOD_WUR;

/* ---- every activity, as a tree or as text ---------------------------------------------
 *
 * One builder per kind (activity_build.c), written once against a writer with two
 * backends (webfinger/jout.h): wf_act_json gives the jansson tree, wf_act_text compact
 * JSON text byte-equal to json_dumps(tree, JSON_COMPACT | JSON_PRESERVE_ORDER), written
 * directly (a tenth of the cost: the sender's hot path). What each kind sends, and why, is
 * in activity_build.c; INTEROP.md ("Activities", "What a server does") is the source. */

enum wf_act_kind {
    WF_ACT_CREATE,       /* Create(Note) (a reply when in_reply_to is set) */
    WF_ACT_NOTE,         /* the Note alone (as served at its id): CREATE with object_only */
    WF_ACT_LIKE,         /* Like of object_id */
    WF_ACT_FOLLOW,       /* Follow of the persona */
    WF_ACT_UNDO_FOLLOW,  /* Undo of the Follow numbered follow_seq, embedded */
    WF_ACT_ANNOUNCE,     /* Announce of object_id (by object_author) */
    WF_ACT_UPDATE_NOTE,  /* Update of note ref_seq: the Note again with `updated` */
    WF_ACT_DELETE_NOTE,  /* Delete of note ref_seq, object a Tombstone */
    WF_ACT_QUESTION,     /* Create(Question): a poll (object_only: the Question alone) */
    WF_ACT_VOTE,         /* Create(Note) with name = option `choice` of poll object_id */
    WF_ACT_EMOJI_REACT,  /* EmojiReact of object_id: content a unicode emoji or :shortcode: */
    WF_ACT_UNDO,         /* Undo of activity ref_seq of kind undo_kind (LIKE, ANNOUNCE,
                            EMOJI_REACT), embedded whole */
    WF_ACT_DELETE_ACTOR, /* Delete of the sending actor itself: object the actor's id */
    WF_ACT__COUNT
};

struct wf_post;

/* A poll's state. Option names are wf_poll_option(i). */
#define WF_POLL_OPTIONS_MAX 4
struct wf_poll {
    int multiple; /* anyOf (several choices) instead of oneOf */
    unsigned n;   /* options, 2..WF_POLL_OPTIONS_MAX */
    uint64_t votes[WF_POLL_OPTIONS_MAX];
    uint64_t voters;
    time_t end; /* endTime */
};
const char *wf_poll_option(unsigned i);

struct wf_act_args {
    enum wf_act_kind kind;
    struct wf_act_from from;
    struct wf_persona_ref p;
    time_t published;      /* CREATE, NOTE, QUESTION, VOTE, ANNOUNCE; UPDATE_NOTE: the
                              note's original publication */
    const char *object_id; /* LIKE, ANNOUNCE, EMOJI_REACT; VOTE: the poll */
    uint64_t follow_seq;   /* UNDO_FOLLOW */
    int with_context;      /* NOTE, FOLLOW ("@context" present) */
    /* the rest: zero gives the historical forms */
    int object_only;            /* CREATE, QUESTION, VOTE: the object alone, with @context */
    const struct wf_post *post; /* CREATE, QUESTION, UPDATE_NOTE: content; NULL = plain */
    const char *in_reply_to;    /* CREATE: the parent's id */
    const char *object_author;  /* ANNOUNCE: cc'd; VOTE: the poll's author, addressed */
    uint64_t ref_seq;           /* UPDATE_NOTE, DELETE_NOTE: the note; UNDO: the activity */
    time_t updated;             /* UPDATE_NOTE */
    const struct wf_poll *poll; /* QUESTION */
    unsigned choice;            /* VOTE */
    const char *reaction;       /* EMOJI_REACT: a unicode emoji, or NULL for custom */
    unsigned emoji;             /* EMOJI_REACT custom: wf_content_emoji(emoji) */
    enum wf_act_kind undo_kind; /* UNDO */
};

/* The document of a, as a new jansson reference (json_decref), or NULL and err (a persona
 * string that is not UTF-8, a kind without its object). */
json_t *wf_act_json(const struct wf_crowd *c, const struct wf_act_args *a,
                    struct flood_err *err) FLOOD_WUR;
/* The same document as compact JSON text: a new string (free) with its length in *len (may
 * be NULL), or NULL and err. */
char *wf_act_text(const struct wf_crowd *c, const struct wf_act_args *a, size_t *len,
                  struct flood_err *err) FLOOD_WUR;

/* Update(Person) of actor (instance, actor) at revision rev: actor_doc is the actor's
 * document (borrowed; its revision-0 form as wf_actor renders it) and is embedded with the
 * revision applied (wf_actor_revise). id the activity URL of seq. A new reference. */
json_t *wf_act_update_actor(const struct wf_crowd *c, const struct wf_act_from *from,
                            const json_t *actor_doc, uint32_t rev, time_t published,
                            const char *persona_actor, struct flood_err *err) FLOOD_WUR;
/* Apply revision rev (>= 1) of an actor to its document (in place): `name` becomes
 * "userN (rev R)", `icon` a new avatar (an Image whose url is a wf_media_url of
 * wf_actor_rev_avatar's image), and `updated` is set to when. Revision 0 leaves doc. The
 * crowd renders a revised actor this way (flood/send/workload.h,
 * workload_actor_revision). 0, or -1 when doc is not an object. */
int wf_actor_revise(const struct wf_crowd *c, int instance, int actor, uint32_t rev, time_t when,
                    json_t *doc);
/* The avatar image of revision rev (>= 1): square, about WF_AVATAR_BYTES, its own id. */
struct wf_media;
void wf_actor_rev_avatar(int instance, int actor, uint32_t rev, struct wf_media *m);

#endif

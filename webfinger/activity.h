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

/* ---- the same documents as text, without jansson (the sender's hot path) --------------- */

enum wf_act_kind { WF_ACT_CREATE, WF_ACT_NOTE, WF_ACT_LIKE, WF_ACT_FOLLOW, WF_ACT_UNDO_FOLLOW };

struct wf_act_args {
    enum wf_act_kind kind;
    struct wf_act_from from;
    struct wf_persona_ref p;
    time_t published;      /* CREATE, NOTE */
    const char *object_id; /* LIKE */
    uint64_t follow_seq;   /* UNDO_FOLLOW */
    int with_context;      /* NOTE, FOLLOW ("@context" present) */
};

/* The document a builder above makes, as compact JSON text byte-equal to
 * json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) of the builder's result, written
 * directly (a tenth of the cost). A new string (free) with its length in *len (may be
 * NULL), or NULL and err (a persona string that is not UTF-8, a Like without object). */
char *wf_act_text(const struct wf_crowd *c, const struct wf_act_args *a, size_t *len,
                  struct flood_err *err) FLOOD_WUR;

#endif

/* flood/check/check_internal.h: what the runner's files (check.c, check_net.c, check_host.c,
 * check_report.c) share. Not for other modules. */
#ifndef FLOOD_CHECK_INTERNAL_H
#define FLOOD_CHECK_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "flood/check/check.h"
#include "flood/send/workload.h"
#include "webfinger/activity.h"

#define CHECK_BODY_MAX   (1024 * 1024)
#define CHECK_RECV_MAX   4096 /* Accepts and Rejects remembered */
#define CHECK_OBJ_MAX    4096 /* objects served at their ids */
#define CHECK_TIMERS_MAX 32

/* The check crowd's two actors. */
enum { CHECK_ACTOR_ROTOR = 1, CHECK_ACTOR_ED = 2 };

struct check_recv {
    char *type;      /* "Accept" or "Reject" */
    char *object_id; /* the Follow's id */
    uint64_t mono_us;
};

struct check_http {
    long status; /* 0: transport error (err says why) */
    char *body;  /* NUL-terminated, may be NULL */
    size_t len;
};

struct check {
    struct crowd *crowd;
    struct inbound *inbound;
    struct check_opts o;

    /* the persona */
    struct persona persona;
    int persona_ok;
    char persona_err[256];
    char *user, *host; /* from an acct spec, else NULL */
    char *origin;      /* scheme://host[:port] of the actor: the API and NodeInfo base */
    char mention[320];
    char *account_id; /* the persona's API id */

    /* the check crowd: one instance, two actors, keys swappable */
    struct wf_crowd cwf;
    char *cdomain;
    struct sign_key *rotor_key; /* current, served and used to sign */
    char *rotor_pem;
    struct sign_key *ed_key;
    char *ed_pem, *ed_mb;
    struct sign_key *stranger; /* a key nobody publishes: the bad-key step */

    /* scenario state */
    uint64_t seq_next;
    uint64_t follow_seq;
    int follow_inst, follow_actor, following;
    char follow_id[WF_URL_MAX];
    uint64_t follow_mono_us;
    char *like_json; /* the last Like, for its Undo (owned) */
    char *like_object;
    int like_inst, like_actor, liked;
    char note_id[WF_URL_MAX]; /* the last post mention's Note */
    uint64_t note_seq;        /* ... its number, time and author */
    time_t note_at;
    int note_inst, note_actor;
    int twins_used;      /* refusal steps decided by a Follow twin so far */
    uint64_t create_seq; /* the last Create made (make_create) */
    time_t create_at;
    struct {
        char name[SCENARIO_NAME_MAX];
        uint64_t start_us;
    } timers[CHECK_TIMERS_MAX];
    size_t n_timers;

    /* shared with the server's threads */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct check_recv *recv;
    size_t n_recv;
    char **obj_url, **obj_body;
    size_t n_obj;
};

/* ---- check.c: shared helpers ---------------------------------------------------------- */

/* Fill r: outcome, expected and got (copied, may be NULL) and a printf-style detail. */
void check_set(struct check_result *r, enum check_outcome o, const char *expected, const char *got,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* "401 <the body's first 80 bytes on one line>": a new string. */
char *check_answer_text(const struct check_http *h);
int check_is_2xx(long status);
void check_sleep_ms(long ms);
/* scheme://authority of url: a new string, or NULL. */
char *check_origin_of(const char *url);

/* The persona as the activity builders see it. */
struct wf_persona_ref check_pref(const struct check *c);
/* Serve a JSON document at its id, and return it as text (a new string, or NULL). */
char *check_serve_json(struct check *c, const json_t *doc);
/* POST text as crowd actor (inst, act) to the persona's inbox and judge "a 2xx is expected":
 * pass with "WHAT: ANSWER", else fail. */
void check_send_expect_2xx(struct check *c, struct check_result *r, int inst, int act,
                           const char *text, const char *what);

/* ---- check_discover.c, check_api.c, check_traffic.c: steps ------------------------------ */

/* announce unseen, reply thread, post media, post poll, edit post, delete post. */
void check_step_traffic(struct check *c, struct check_result *r, const struct scenario_step *st);

void check_step_webfinger(struct check *c, struct check_result *r);
void check_step_actor(struct check *c, struct check_result *r, int signed_get);
void check_step_nodeinfo(struct check *c, struct check_result *r);
void check_step_api_mention(struct check *c, struct check_result *r,
                            const struct scenario_step *st);
void check_step_api_like(struct check *c, struct check_result *r, const struct scenario_step *st);
void check_step_api_follow_crowd(struct check *c, struct check_result *r,
                                 const struct scenario_step *st);
/* Poll the notifications for a mention of note_id for up to ms: 1 seen (*at_ms after how
 * long, may be NULL), 0 not seen, -1 the API failed (err). */
int check_poll_mention(struct check *c, const char *note_id, long ms, double *at_ms,
                       struct flood_err *err);
/* A post of the persona to like (borrowed): from its outbox, else made through the API;
 * NULL and err when there is none. */
const char *check_post_to_like(struct check *c, struct flood_err *err);

/* ---- check_net.c ---------------------------------------------------------------------- */

/* A request with extra header lines ("Name: value"); body may be NULL. Fills out (any
 * status; check_http_free). 0, or -1 and err for a transport error. */
int check_net_request(const struct check *c, const char *method, const char *url,
                      const char *const *lines, size_t n_lines, const char *body, size_t len,
                      struct check_http *out, struct flood_err *err) FLOOD_WUR;
void check_http_free(struct check_http *h);

enum check_variant {
    CV_GOOD = 0,
    CV_UNSIGNED,
    CV_BAD_KEY,
    CV_STALE,
    CV_DIGEST,
    CV_HS2019, /* cavage with algorithm="hs2019" */
};
/* POST body (JSON text) to inbox signed with key / key_id in dialect (SIGN_CAVAGE or
 * SIGN_RFC9421), spoiled as variant says. 0 and out, or -1 and err. */
int check_net_post(struct check *c, const char *inbox, const char *body, const struct sign_key *key,
                   const char *key_id, int dialect, enum check_variant variant,
                   struct check_http *out, struct flood_err *err) FLOOD_WUR;
/* check_twin.c: a refusal step without a token: a Follow of `variant` from (inst, act) signed
 * with (kinst, act)'s key, beside a signed twin Follow from another actor; r says which way
 * it was decided (decided_by "answer" or "follow-twin"). */
void check_refusal_by_twin(struct check *c, struct check_result *r, int inst, int act, int kinst,
                           enum check_variant variant);
/* Mastodon API call on the persona's origin with the token: method, path with query,
 * JSON body or NULL. *json gets the parsed answer (new reference) when it is JSON. 0 with
 * *status, or -1 and err. */
int check_api(struct check *c, const char *method, const char *path, const char *body, long *status,
              json_t **json, struct flood_err *err) FLOOD_WUR;

/* ---- check_host.c --------------------------------------------------------------------- */

/* Make the check crowd's keys. 0, or -1 and err. */
int check_host_init(struct check *c, struct flood_err *err) FLOOD_WUR;
void check_host_free(struct check *c);
/* Serve body (copied) at url from now on. */
void check_serve_object(struct check *c, const char *url, const char *body);
/* Wait until an Accept or Reject of follow_id arrives or deadline_us (monotonic) passes.
 * 1 Accept, 2 Reject, 0 timeout; *at_us the arrival. */
int check_wait_answer(struct check *c, const char *follow_id, uint64_t deadline_us,
                      uint64_t *at_us);
/* Replace the rotor's key (the old one is freed). 0, or -1 and err. */
int check_rotate_key(struct check *c, struct sign_key *fresh, struct flood_err *err) FLOOD_WUR;

#endif

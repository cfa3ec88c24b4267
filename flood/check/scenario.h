/* flood/check/scenario.h: the scenario language of `flood check`. A scenario is a text file, one
 * step a line; '#' starts a comment, blank lines are skipped. Pure: parsing does no I/O
 * except scenario_load reading the file. The grammar is in docs/INTEROP.md; in short:
 *
 *   discover webfinger | discover actor [signed|unsigned] | discover nodeinfo
 *   follow [as I/A]            expect accept within DUR      undo follow
 *   post mention [as I/A]      like [as I/A]                 undo like
 *   send unsigned|bad-key|stale-date|digest-mismatch|foreign-keyid expect refused [as I/A]
 *   send dialect cavage-rsa|cavage-hs2019|rfc9421-rsa|rfc9421-ed25519 [expect accepted]
 *   rotate key then send
 *   api mention-notified [within DUR]   api like-counted [within DUR]
 *   api follow-crowd expect accepted [within DUR] [as I/A]
 *   announce unseen [within DUR] [as I/A]     reply thread [within DUR] [as I/A]
 *   post media [within DUR] [as I/A]          post poll [within DUR] [as I/A]
 *   edit post [within DUR]                    delete post [within DUR]
 *   wait DUR       timer start NAME       timer stop NAME
 *
 * DUR is a number with ms, s or m ("500ms", "10s", "2m"). I/A names crowd actor A of
 * instance I: "1/1", or "flood1/user1" (the digits that end each part count). */
#ifndef FLOOD_SCENARIO_H
#define FLOOD_SCENARIO_H

#include <stddef.h>

#include "sign/err.h"

#define SCENARIO_NAME_MAX   32             /* a timer name */
#define SCENARIO_LINE_MAX   512            /* longer lines are an error */
#define SCENARIO_STEPS_MAX  1000           /* steps a file may hold */
#define SCENARIO_DUR_MAX_MS (3600L * 1000) /* one hour */

enum scenario_kind {
    SC_DISCOVER_WEBFINGER,
    SC_DISCOVER_ACTOR, /* signed: 0 unsigned, 1 signed */
    SC_DISCOVER_NODEINFO,
    SC_FOLLOW,
    SC_EXPECT_ACCEPT, /* ms */
    SC_UNDO_FOLLOW,
    SC_POST_MENTION,
    SC_LIKE,
    SC_UNDO_LIKE,
    SC_SEND_BAD,     /* bad */
    SC_SEND_DIALECT, /* dialect, expect_accepted */
    SC_ROTATE,
    SC_API_MENTION,      /* ms */
    SC_API_LIKE,         /* ms */
    SC_API_FOLLOW_CROWD, /* ms */
    SC_ANNOUNCE_UNSEEN,  /* ms: how long the API is polled for the effect */
    SC_REPLY_THREAD,     /* ms */
    SC_POST_MEDIA,       /* ms */
    SC_POST_POLL,        /* ms */
    SC_EDIT_POST,        /* ms */
    SC_DELETE_POST,      /* ms */
    SC_WAIT,             /* ms */
    SC_TIMER_START,      /* name */
    SC_TIMER_STOP,       /* name */
    SC__KINDS
};

enum scenario_bad {
    SC_BAD_UNSIGNED,
    SC_BAD_KEY,
    SC_BAD_STALE_DATE,
    SC_BAD_DIGEST,
    SC_BAD_FOREIGN_KEYID,
    SC__BADS
};

enum scenario_dialect {
    SC_DIALECT_CAVAGE_RSA,
    SC_DIALECT_CAVAGE_HS2019,
    SC_DIALECT_RFC9421_RSA,
    SC_DIALECT_RFC9421_ED25519,
    SC__DIALECTS
};

struct scenario_step {
    enum scenario_kind kind;
    int line;                      /* 1-based line in the file */
    char *text;                    /* the step as written, trimmed, comment removed (owned) */
    int has_as;                    /* an "as I/A" was given */
    int instance, actor;           /* from "as I/A", else 1/1 */
    int signed_get;                /* SC_DISCOVER_ACTOR */
    enum scenario_bad bad;         /* SC_SEND_BAD */
    enum scenario_dialect dialect; /* SC_SEND_DIALECT */
    int expect_accepted;           /* SC_SEND_DIALECT with "expect accepted" */
    long ms;                       /* durations; the default when not written */
    char name[SCENARIO_NAME_MAX];  /* timers */
};

struct scenario {
    char *file; /* the name used in messages (owned) */
    struct scenario_step *steps;
    size_t n;
};

/* The built-in default scenario (fixtures/scenarios/default.flood). */
extern const char scenario_default_text[];

/* Default waits when a step does not say "within": */
#define SCENARIO_DEFAULT_WAIT_MS 10000L
/* ... and for the traffic steps (announce, reply, media, poll, edit, delete): */
#define SCENARIO_TRAFFIC_WAIT_MS 5000L

/* Parse text (NUL-terminated) as scenario file `file` into *out (scenario_free). 0, or -1
 * and err "FILE:LINE: problem 'word'" (e.g. "x.flood:7: unknown step 'folow'"); out is
 * then empty. Also checked: a timer stopped that was never started, started twice, or
 * left running; "expect accept" or "undo follow" with no follow before; "undo like"
 * with no like before; "api mention-notified" with no post mention before; "api
 * like-counted" with no like before; "edit post" or "delete post" with no post mention
 * before, or after a "delete post" with no post mention between. */
int scenario_parse(const char *text, const char *file, struct scenario *out,
                   struct flood_err *err) FLOOD_WUR;
/* Read and parse a file (at most 1 MiB). 0, or -1 and err. */
int scenario_load(const char *path, struct scenario *out, struct flood_err *err) FLOOD_WUR;
void scenario_free(struct scenario *s);

/* Names, as written in the language: "unsigned", "bad-key", ...; "cavage-rsa", ... */
const char *scenario_bad_name(enum scenario_bad b);
const char *scenario_dialect_name(enum scenario_dialect d);

/* Parse a step's duration (the grammar's, flood/core/grammar.h: "10s", "500ms", "1.5s", "2m",
 * "1h"; a unit required; 1 ms <= d <= SCENARIO_DUR_MAX_MS) into *ms, rounded. `what` names
 * the word it follows ("within", "wait") in the refusal. 0, or -1 and err. */
int scenario_parse_duration(const char *what, const char *s, long *ms,
                            struct flood_err *err) FLOOD_WUR;
/* Parse "I/A" ("1/2", "flood1/user2"): instance >= 1, actor >= 1 (the
 * instance actor, 0, signs only the crowd's GETs). 0, or -1. */
int scenario_parse_actor(const char *s, int *instance, int *actor);

#endif

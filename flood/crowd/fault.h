/* flood/crowd/fault.h: fault injection per instance (--fault SPEC, repeatable).
 *
 * SPEC is SEL:KEY[=VAL][,KEY[=VAL]...]
 *   SEL    `all`, an instance's host label (`flood3`), its full host (`flood3.test`), or a
 *          range of either (`flood3-flood7`, inclusive).
 *   delay=500ms|2s|1.5s   answer after this long (the connection held meanwhile)
 *   jitter=100ms          add a uniform random 0..jitter to the delay
 *   status=503            answer this status (400..599) instead of the document
 *   retry-after=30        with a status: Retry-After seconds (0..86400)
 *   gone                  status=410 on everything in scope
 *   reset                 close the connection at once (RST)
 *   hang                  never answer; the client times out (the connection is closed,
 *                         unanswered, once the client has closed its end: run.json's
 *                         crowd.hangs_closed)
 *   share=20%             the share of requests in scope that get the fault (default 100%)
 *   scope=get|inbox|all|nodeinfo|KIND, joined with '+' (default all)
 *          get: every GET/HEAD but NodeInfo; inbox: POSTs to inboxes; all: every request
 *          but NodeInfo; nodeinfo: /.well-known/nodeinfo and /nodeinfo/... NodeInfo is a
 *          liveness probe for some servers (Lemmy), so it stays healthy unless a spec says
 *          `scope=nodeinfo` or `scope=all+nodeinfo`.
 *          KIND, one kind of GET/HEAD: webfinger (WebFinger and host-meta), actor, key
 *          (/main-key), note (notes and activities), media, link (pages), emoji, avatar
 *          (avatars and headers), collection (outbox, followers, following, inbox GETs).
 *   from=30s              the rule starts this long after the crowd started (default 0)
 *   until=90s             and ends then (default: never); a fault that starts and ends
 *                         shows what the target does after the instance comes back
 *
 * Values are read by flood/core/grammar.h: durations need their unit (500ms, 2s, 1.5m),
 * share= takes 20% or a plain percent, the comma and '+' lists are gram_list's; a refused
 * value's message names the key and the forms accepted.
 *
 * Several rules may match one request: each rolls its own share; the delays add up, the
 * first status wins, reset and hang are kept. Parsing is pure; the share roll uses a
 * lock-free generator, safe on any thread. */
#ifndef FLOOD_FAULT_H
#define FLOOD_FAULT_H

#include <stdint.h>

#include "sign/err.h"
#include "webfinger/wf.h"

enum {
    FAULT_SCOPE_GET = 1,
    FAULT_SCOPE_INBOX = 2,
    FAULT_SCOPE_OTHER = 4, /* any other request (a POST outside an inbox, ...) */
    FAULT_SCOPE_NODEINFO = 8,
    FAULT_SCOPE_ALL = FAULT_SCOPE_GET | FAULT_SCOPE_INBOX | FAULT_SCOPE_OTHER,
    /* one kind of GET/HEAD each (a GET has FAULT_SCOPE_GET and its kind's bit) */
    FAULT_SCOPE_WEBFINGER = 16,
    FAULT_SCOPE_ACTOR = 32,
    FAULT_SCOPE_KEY = 64,
    FAULT_SCOPE_NOTE = 128,
    FAULT_SCOPE_MEDIA = 256,
    FAULT_SCOPE_LINK = 512,
    FAULT_SCOPE_EMOJI = 1024,
    FAULT_SCOPE_AVATAR = 2048,
    FAULT_SCOPE_COLLECTION = 4096,
};

#define FAULT_SEL_MAX  128
#define FAULT_SPEC_MAX 512

/* One parsed --fault SPEC. */
struct fault_rule {
    char spec[FAULT_SPEC_MAX]; /* the spec as given, for run.json */
    char sel[FAULT_SEL_MAX];   /* the selector as given: "all", a name or a range */
    int first, last;           /* instance range once resolved (fault_rule_resolve) */
    long delay_ms, jitter_ms;
    int status;       /* 0: none */
    long retry_after; /* seconds, 0: none */
    int reset, hang;
    uint32_t share_ppm; /* 0..1,000,000 */
    unsigned scope;     /* FAULT_SCOPE_* bits */
    long from_ms;       /* active from this long after the crowd's start */
    long until_ms;      /* until then (exclusive); 0: no end */
};

/* Parse a SPEC. 0, or -1 and err ("fault: unknown key 'x' in 'flood3:x=1'"). The selector
 * is checked for form only; fault_rule_resolve maps it onto a crowd. */
int fault_parse(const char *spec, struct fault_rule *out, struct flood_err *err) FLOOD_WUR;
/* Map the selector onto the crowd's instances (first..last). 0, or -1 and err
 * ("fault: no instance 'flood99' in the crowd (in 'flood99:hang')"). */
int fault_rule_resolve(struct fault_rule *r, const struct wf_crowd *c,
                       struct flood_err *err) FLOOD_WUR;

/* What a request is, for the scope: FAULT_SCOPE_NODEINFO, FAULT_SCOPE_INBOX, or
 * FAULT_SCOPE_OTHER alone; a GET/HEAD is FAULT_SCOPE_GET with its kind's bit (none for
 * an unknown path). */
unsigned fault_scope_of(const char *method, enum wf_route_kind kind, const char *path);

/* Effects decided for one request. */
struct fault_effect {
    long delay_ms;
    int status;
    long retry_after;
    int reset, hang;
};

/* 1 when rule r's window (from=, until=) holds now_ms, the milliseconds since the crowd
 * started; a rule without a window is always active. */
int fault_active(const struct fault_rule *r, long now_ms);

/* Apply the resolved rules to a request of instance (1..) with scope bits (one of
 * FAULT_SCOPE_*) at now_ms since the crowd started (the rules' windows). Fills *eff and
 * returns 1 when any rule fired, else 0. */
int fault_decide(const struct fault_rule *rules, size_t n, int instance, unsigned scope,
                 long now_ms, struct fault_effect *eff);

/* A uniformly distributed 64-bit number; thread-safe (an atomic counter through
 * splitmix64). fault_seed sets the sequence (tests). */
uint64_t fault_random(void);
void fault_seed(uint64_t seed);

#endif

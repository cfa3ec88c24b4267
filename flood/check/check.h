/* flood/check/check.h: the runner of `flood check`. It runs a scenario (flood/scenario.h)
 * against one target persona, with the crowd serving in the same process, and gives one
 * result a step: pass, fail (expected and got), skip (why), deferred (a refusal step the
 * target answered 2xx without a visible effect) or unsupported (a dialect the target
 * refuses). docs/INTEROP.md says what every step checks and why.
 *
 * Besides the crowd, the runner serves two actors of its own on a host of its own (the
 * "check crowd", default flood-check1.test, through the server's `other` hook): user1,
 * whose RSA key the rotation step swaps at runtime, and user2, an Ed25519 actor
 * (FEP-521a) for the RFC 9421 ed25519 dialect.
 *
 * The room flood/check/: `flood check`: the scenario language (scenario.c), this runner
 * (check.c), its steps (check_discover.c, check_api.c, check_traffic.c), and what they share
 * below them (check_util.c, check_net.c, check_host.c); the runner calls the steps, never the other
 * way. What is made of its card, the JSON report (check_card.h: check_card.c, the JUnit XML of
 * check_junit.c, the interop matrix of `flood matrix` in check_matrix.c), needs only jansson.
 * It calls inbound/, send/, crowd/, core/, webfinger/ and sign/. */
#ifndef FLOOD_CHECK_H
#define FLOOD_CHECK_H

#include <jansson.h>
#include <stdio.h>

#include "flood/crowd/crowd.h"
#include "sign/err.h"
#include "flood/core/http.h"
#include "flood/inbound/inbound.h"
#include "flood/check/scenario.h"
#include "flood/crowd/server.h"

struct check_opts {
    const char *persona;      /* acct:NAME@HOST or an actor URL */
    const char *name;         /* the target's name in the card (--name), or NULL: persona */
    const char *token;        /* Mastodon API bearer token, or NULL (api steps skip) */
    int target_http;          /* WebFinger and NodeInfo over plain http */
    struct http_opts http;    /* --resolve, --connect-to, TLS options, timeout */
    const char *check_domain; /* the check crowd's host template, "flood-check%d.test" */
    long settle_ms;           /* how long a refusal step looks for an effect of a 2xx */
    int verbose;              /* progress lines on stderr */
};

enum check_outcome { CHECK_PASS, CHECK_FAIL, CHECK_SKIP, CHECK_DEFERRED, CHECK_UNSUPPORTED };

/* "pass", "fail", "skip", "deferred", "unsupported" */
const char *check_outcome_name(enum check_outcome o);

struct check_result {
    int line;
    char *step; /* the step as written (owned) */
    enum check_outcome outcome;
    double ms;      /* how long the step took, or the figure it measures (a timer, an Accept) */
    char *expected; /* fail: what was expected (owned, may be NULL) */
    char *got;      /* fail: what came back; deferred/unsupported: what came back */
    char *detail;   /* pass: what was seen; skip: why (owned, may be NULL) */
    /* a refusal step: what decided it: "answer" (the status), "api" (a token's look at the
     * effect), "follow-twin" (a refused Follow got no Accept while its signed twin did);
     * static, NULL for other steps */
    const char *decided_by;
};

struct check_report {
    struct check_result *results;
    size_t n;
    size_t counts[5]; /* by outcome */
};
void check_report_free(struct check_report *r);

struct check;

/* A new runner for the crowd (borrowed; it must outlive the runner). Makes the check
 * crowd's keys. NULL and err on failure. */
struct check *check_new(struct crowd *crowd, const struct check_opts *o,
                        struct flood_err *err) FLOOD_WUR;
void check_free(struct check *c);
/* The inbound side (borrowed) the runner's inbox hook passes deliveries to. */
void check_set_inbound(struct check *c, struct inbound *in);
/* Server hooks (ctx = the runner): inbox deliveries go to the inbound side and Accepts are
 * noted; the objects the runner sent are served at their ids; the check crowd is served. */
int check_inbox_hook(void *ctx, const struct server_req *req, struct wf_doc *out);
int check_object_hook(void *ctx, const struct server_req *req, struct wf_doc *out);
int check_other_hook(void *ctx, const struct server_req *req, struct wf_doc *out);
int check_fault_hook(void *ctx, const struct server_req *req, struct server_fault *fault);

/* The persona's host (borrowed), for --allow-host, or NULL when the spec is not usable. */
const char *check_persona_host(const struct check *c);

/* After check_run: whether the persona was discovered, and if not why (borrowed). A check
 * whose persona was not discovered fails (exit 1) even when every step skipped. */
int check_persona_ok(const struct check *c);
const char *check_persona_error(const struct check *c);

/* Discover the persona, then run every step (the server must be serving). *out is filled
 * (check_report_free). */
void check_run(struct check *c, const struct scenario *s, struct check_report *out);

/* The table, one row a step, then a summary line. */
void check_print_table(FILE *f, const struct check_report *r);
/* The report as JSON, the card (a new reference): {"target", "persona", "scenario",
 * "steps": [...], "summary": {"pass": N, ...}, "ok"}. check_card.h reads it back. */
json_t *check_report_json(const struct check *c, const struct scenario *s,
                          const struct check_report *r);

#endif

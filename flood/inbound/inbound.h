/* flood/inbound/inbound.h: the crowd's inboxes. Every delivery is verified (the sender's key
 * fetched with a signed GET from the instance actor, cached, only from allowed hosts),
 * Follows of crowd actors are answered with signed Accepts (retried with backoff),
 * Accepts of the sender's Follows close probes, everything is counted by type and reason.
 * Faults per instance (--fault) are injected here too.
 *
 * The room flood/inbound/: everything that arrives at the crowd from the target: this handler
 * (inbound.c, its options in inbound_opts.c, the pure classifier in classify.c), the key
 * cache (keycache.c) and the Accepts it sends back (deliver.c). It calls send/ (to know the
 * run's own Follows), measure/, crowd/, core/, webfinger/ and sign/. */
#ifndef FLOOD_INBOUND_H
#define FLOOD_INBOUND_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "flood/crowd/crowd.h"
#include "flood/core/opt.h"
#include "flood/crowd/fault.h"
#include "sign/err.h"
#include "flood/measure/probes.h"
#include "flood/crowd/server.h"

/* The inbound side's option rows (core/opt.h) over struct inbound_opts. */
extern const struct opt inbound_opt_rows[];

struct inbound_opts;
struct inbound_opts *inbound_opts_new(void);
void inbound_opts_free(struct inbound_opts *o);
/* Apply option --name (its row) with its argument (NULL for a flag). 0, or -1 and err. */
int inbound_opts_set(struct inbound_opts *o, const char *name, const char *arg,
                     struct flood_err *err) FLOOD_WUR;
/* Add a --resolve HOST:PORT:ADDR (checked). 0, or -1 and err. */
int inbound_opts_add_resolve(struct inbound_opts *o, const char *arg,
                             struct flood_err *err) FLOOD_WUR;
/* The --resolve entries, in order (borrowed; *n of them). o may be NULL (none). */
const char *const *inbound_opts_resolve(const struct inbound_opts *o, size_t *n);
/* --population as parsed (owned by o), or NULL without: `flood run` lays out its sizes
 * before it makes the crowd. */
struct population *inbound_opts_population(struct inbound_opts *o);
/* Allow key fetches from host (the personas' hosts, added by `flood run`). */
void inbound_opts_allow_host(struct inbound_opts *o, const char *host);

struct inbound;

/* A new inbound side for the crowd (borrowed). probes may be NULL (flood serve). Starts
 * its own delivery thread for Accepts. NULL and err on failure. */
struct inbound *inbound_new(struct crowd *crowd, const struct inbound_opts *o,
                            struct probes *probes, struct flood_err *err) FLOOD_WUR;
/* Stop the delivery thread (waiting at most grace_ms for Accepts in flight) and free. */
void inbound_free(struct inbound *in, long grace_ms);

/* Hooks for struct server_hooks (ctx = the inbound). */
int inbound_inbox_hook(void *ctx, const struct server_req *req, struct wf_doc *out);
int inbound_fault_hook(void *ctx, const struct server_req *req, struct server_fault *fault);

/* The run is over: from now on every inbox POST is cut (its connection reset) and counted,
 * not answered, and the attempts record takes no more (inbound_json reads a final one).
 * Called before the results are read, so that a delivery the target saw answered is one the
 * results hold. Thread-safe. */
void inbound_close_inboxes(struct inbound *in);
/* Inbox POSTs cut after inbound_close_inboxes. */
uint64_t inbound_refused_after_close(struct inbound *in);
/* server_hooks.inbox_flight: an inbox POST began or ended (the fan-out's concurrency). */
void inbound_flight_hook(void *ctx, int instance, int delta);

#define INBOUND_FAULTS_ADDED 32      /* rules a run may add while it runs */
#define INBOUND_ATTEMPTS_MAX 1000000 /* delivery attempts to faulted instances recorded */
/* Switch a fault rule "SEL:KEY=VAL,..." (the --fault language) on or off while the crowd
 * serves (any thread; the hook reads each rule's switch with one atomic load). A rule is
 * the same rule when its spec text is the same: off switches it off, on switches it back
 * on or adds it (at most INBOUND_FAULTS_ADDED added). 0, or -1 and err (a bad spec, an
 * unknown instance, nothing to switch off). */
int inbound_fault_switch(struct inbound *in, const char *spec, int on,
                         struct flood_err *err) FLOOD_WUR;
/* The rules and their switches (up to max) into specs/on: how many. */
size_t inbound_faults(struct inbound *in, char (*specs)[FAULT_SPEC_MAX], int *on, size_t max);

/* The "inbound" object of run.json (a new reference): deliveries by type, rejected by
 * reason, accepts, follow_to_accept_ms, delivery_lag_ms, duplicates, faults in force and
 * faulted answers, Accepts sent by the crowd and their outcomes. */
json_t *inbound_json(struct inbound *in);
/* How many deliveries the crowd's inboxes have accepted so far (thread-safe); ctx is the
 * inbound (the signature of stats_set_inbound). */
uint64_t inbound_deliveries_count(void *ctx);
/* One short line for the live display ("in 12/s acc 3"). */
void inbound_live(struct inbound *in, char *buf, size_t size);

/* ---- additions: the workload, the handler without a server, the pure classifier ------ */

struct workload;
struct keycache;

/* The run's workload (borrowed; NULL in `flood serve`): with it, an Accept or Reject of a
 * Follow this run sent closes its probe. Call before the server starts. */
void inbound_set_workload(struct inbound *in, struct workload *w);

/* An inbox POST as the handler sees it (the hook builds one from a server_req). Borrowed. */
struct inbound_req {
    const char *method, *host, *path, *query;
    const struct sign_header *headers;
    size_t n_headers;
    const char *body;
    size_t body_len;
    int instance; /* the receiving instance, 1.. */
    int actor;    /* the receiving actor (0..), -1 for the shared inbox */
};
/* Handle one inbox delivery: verify, classify, act, count. Returns the HTTP status with out
 * filled (out->body new: wf_doc_free). */
int inbound_handle(struct inbound *in, const struct inbound_req *r, struct wf_doc *out);

/* The key cache (borrowed), for tests that seed keys and tools that report on it. */
struct keycache *inbound_keycache(struct inbound *in);

#define INBOUND_JSON_DEPTH_MAX 64 /* deeper JSON is refused before parsing */

enum inbound_bad {
    INBOUND_ACTIVITY_OK = 0,
    INBOUND_BAD_JSON,     /* not JSON */
    INBOUND_TOO_DEEP,     /* nested deeper than INBOUND_JSON_DEPTH_MAX */
    INBOUND_NOT_ACTIVITY, /* not an object with a type and an actor */
};

/* What the handler reads of an activity. Strings are borrowed from doc (a reference owned
 * by the struct): valid until inbound_activity_clear. Absent ones are NULL. */
struct inbound_activity {
    json_t *doc;
    const char *type, *id, *actor;
    const char *object_id;     /* the object as an id, or the embedded object's id */
    const char *object_type;   /* the embedded object's type */
    const char *object_actor;  /* the embedded object's actor */
    const char *object_object; /* the embedded object's object, as an id */
    const char *published;     /* the embedded object's published, else the activity's */
};

/* Classify body bytes (no server, no I/O: the fuzz harness calls it). INBOUND_ACTIVITY_OK
 * and out filled (inbound_activity_clear), or an enum inbound_bad with err saying why and
 * out empty. */
int inbound_classify(const char *body, size_t len, struct inbound_activity *out,
                     struct flood_err *err);
void inbound_activity_clear(struct inbound_activity *a);

/* Parse an ISO 8601 / RFC 3339 time ("2024-05-01T12:00:00Z", fractions and offsets
 * allowed) into microseconds since the epoch. 0, or -1 when it does not parse. */
int inbound_parse_time(const char *s, int64_t *us);

#endif

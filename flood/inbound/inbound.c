/* flood/inbound/inbound.c: the crowd's inboxes (see inbound.h). The hook turns a server request
 * into an inbound_req; inbound_handle verifies the signature (keys from the key cache,
 * fetched on the server thread that handles the request, bounded by keycache's size and
 * time limits), classifies the activity, acts on Follow / Undo / Accept / Reject, and
 * counts everything. Accepts go out through the delivery thread (deliver.c). */
#include "flood/inbound/inbound.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/clock.h"
#include "flood/core/hash.h"
#include "flood/inbound/deliver.h"
#include "flood/inbound/inbound_internal.h"
#include "flood/crowd/fault.h"
#include "flood/measure/attempts.h"
#include "flood/measure/fanout.h"
#include "flood/measure/hist.h"
#include "flood/inbound/keycache.h"
#include "flood/send/workload.h"

#define INBOUND_SIG_WINDOW_S 3600
#define INBOUND_HEADERS_MAX  128
#define INBOUND_DUP_GEN      50000  /* ids kept per generation; two generations are kept */
#define INBOUND_DUP_SLOTS    131072 /* open-addressing slots per generation (power of two) */

/* ---- counters ------------------------------------------------------------------------ */

static const char *const reason_names[R__COUNT] = {
    "missing",  "syntax",       "algorithm",    "not_covered",      "digest",         "date",
    "mismatch", "key",          "key_fetch",    "host_not_allowed", "actor_mismatch", "bad_json",
    "too_deep", "not_activity", "content_type", "empty_body"};

static const char *const type_names[] = {"Create", "Announce", "Update", "Delete", "Undo",
                                         "Like",   "Follow",   "Accept", "Reject", "Add",
                                         "Remove", "Block",    "Move",   "Flag",   "EmojiReact"};
#define N_TYPES INBOUND_N_TYPES
_Static_assert(sizeof(type_names) / sizeof(type_names[0]) == INBOUND_N_TYPES,
               "INBOUND_N_TYPES counts type_names");
#define T_OTHER N_TYPES

/* 1 when id was seen recently (and remember it). Caller holds in->lock. */
static int dup_seen(struct dupset *d, const char *id)
{
    uint64_t h = hash_fnv1a_str(id);
    h ^= h >> 29;
    if (!h)
        h = 1;
    for (int g = 0; g < 2; g++) {
        uint64_t *s = d->slots[g];
        for (size_t i = h & (INBOUND_DUP_SLOTS - 1); s[i]; i = (i + 1) & (INBOUND_DUP_SLOTS - 1))
            if (s[i] == h)
                return 1;
    }
    if (d->count >= INBOUND_DUP_GEN) { /* the old generation goes, the current one ages */
        d->cur ^= 1;
        memset(d->slots[d->cur], 0, INBOUND_DUP_SLOTS * sizeof(uint64_t));
        d->count = 0;
    }
    uint64_t *s = d->slots[d->cur];
    size_t i = h & (INBOUND_DUP_SLOTS - 1);
    while (s[i])
        i = (i + 1) & (INBOUND_DUP_SLOTS - 1);
    s[i] = h;
    d->count++;
    return 0;
}

/* ---- life ---------------------------------------------------------------------------- */

struct inbound *inbound_new(struct crowd *crowd, const struct inbound_opts *o,
                            struct probes *probes, struct flood_err *err)
{
    struct inbound *in = flood_xcalloc(1, sizeof(*in));
    in->crowd = crowd;
    in->probes = probes;
    atomic_init(&in->workload, NULL);
    in->log_deliveries = o->log_deliveries;
    /* Accept ids and fault shares draw from fault_random: a new sequence per process, so
     * ids never repeat across restarts (Fedify drops a repeated id for a day) */
    fault_seed((uint64_t)clock_wall_us() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid());
    in->no_verify = o->no_verify;
    in->t0_us = clock_mono_us();
    /* room for the rules a dashboard may add; each one's switch starts on */
    in->faults = flood_xcalloc(o->n_faults + INBOUND_FAULTS_ADDED, sizeof(*in->faults));
    in->fault_on = flood_xcalloc(o->n_faults + INBOUND_FAULTS_ADDED, sizeof(*in->fault_on));
    for (size_t i = 0; i < o->n_faults + INBOUND_FAULTS_ADDED; i++)
        atomic_init(&in->fault_on[i], 1);
    atomic_init(&in->n_faults, o->n_faults);
    in->n_cli_faults = o->n_faults;
    if (o->n_faults) {
        memcpy(in->faults, o->faults, o->n_faults * sizeof(*in->faults));
        for (size_t i = 0; i < o->n_faults; i++)
            if (fault_rule_resolve(&in->faults[i], &crowd->wf, err) < 0) {
                free(in->faults);
                free((void *)in->fault_on);
                free(in);
                return NULL;
            }
    }
    in->kc = keycache_new(crowd, KEYCACHE_CAP_DEFAULT);
    for (size_t i = 0; i < o->n_allow; i++)
        keycache_allow_host(in->kc, o->allow[i]);
    for (size_t i = 0; i < o->n_resolve; i++)
        keycache_add_resolve(in->kc, o->resolve[i]);
    in->dl = deliver_new(crowd, (const char *const *)o->resolve, o->n_resolve, err);
    if (!in->dl) {
        keycache_free(in->kc);
        free(in->faults);
        free((void *)in->fault_on);
        free(in);
        return NULL;
    }
    pthread_mutex_init(&in->lock, NULL);
    in->attempts = attempts_new(INBOUND_ATTEMPTS_MAX);
    in->fanout = fanout_new(crowd->wf.instances);
    if (o->population) { /* each instance its class, drawn for this crowd */
        in->pop = *o->population;
        population_assign(&in->pop, crowd->wf.instances);
    }
    in->lag = hist_new();
    in->lag_split[0] = hist_new();
    in->lag_split[1] = hist_new();
    in->dups.slots[0] = flood_xcalloc(INBOUND_DUP_SLOTS, sizeof(uint64_t));
    in->dups.slots[1] = flood_xcalloc(INBOUND_DUP_SLOTS, sizeof(uint64_t));
    in->live_last_us = clock_mono_us();
    return in;
}

void inbound_free(struct inbound *in, long grace_ms)
{
    if (!in)
        return;
    deliver_free(in->dl, grace_ms);
    keycache_free(in->kc);
    hist_free(in->lag);
    hist_free(in->lag_split[0]);
    hist_free(in->lag_split[1]);
    free(in->dups.slots[0]);
    free(in->dups.slots[1]);
    pthread_mutex_destroy(&in->lock);
    free(in->faults);
    free((void *)in->fault_on);
    attempts_free(in->attempts);
    population_clear(&in->pop);
    fanout_free(in->fanout);
    free(in);
}

void inbound_set_workload(struct inbound *in, struct workload *w)
{
    atomic_store(&in->workload, w);
}

struct keycache *inbound_keycache(struct inbound *in)
{
    return in->kc;
}

/* ---- the handler --------------------------------------------------------------------- */

static const char *header_get(const struct inbound_req *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (r->headers[i].name && !strcasecmp(r->headers[i].name, name))
            return r->headers[i].value;
    return NULL;
}

/* activity+json, ld+json (with or without the AS2 profile) and plain JSON are taken, as
 * Mastodon takes them; anything else is 415. */
static int content_type_ok(const char *ct)
{
    if (!ct)
        return 0;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    static const char *const ok[] = {"application/activity+json", "application/ld+json",
                                     "application/json"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strlen(ok[i]) == n && !strncasecmp(ct, ok[i], n))
            return 1;
    return 0;
}

static void log_line(struct inbound *in, const struct inbound_req *r, const char *type,
                     const char *actor, int status, const char *why)
{
    if (!in->log_deliveries)
        return;
    fprintf(stderr, "inbound: %s from %s to %s%s: %d%s%s\n", type ? type : "-", actor ? actor : "-",
            r->host ? r->host : "-", r->path ? r->path : "", status, why ? " " : "",
            why ? why : "");
}

static int reject(struct inbound *in, const struct inbound_req *r, enum reason why, int status,
                  const char *detail, struct wf_doc *out)
{
    atomic_fetch_add(&in->rejected[why], 1);
    char msg[400];
    const char *prefix = status == 401 ? "signature: " : "";
    snprintf(msg, sizeof(msg), "%s%s: %s", prefix, reason_names[why], detail ? detail : "");
    wf_error(status, msg, out);
    log_line(in, r, NULL, NULL, status, msg);
    return status;
}

static enum reason reason_of_verdict(int v)
{
    switch (v) {
    case SIGN_ERR_MISSING:
        return R_MISSING;
    case SIGN_ERR_SYNTAX:
        return R_SYNTAX;
    case SIGN_ERR_ALGORITHM:
        return R_ALGORITHM;
    case SIGN_ERR_NOT_COVERED:
        return R_NOT_COVERED;
    case SIGN_ERR_DIGEST:
        return R_DIGEST;
    case SIGN_ERR_DATE:
        return R_DATE;
    case SIGN_ERR_MISMATCH:
        return R_MISMATCH;
    default:
        return R_KEY;
    }
}

/* Verify r's signature. 0 with *owner (new, or NULL when accepted unsigned under
 * --no-verify), or the status to answer with out filled. */
static int verify(struct inbound *in, const struct inbound_req *r, const struct sign_msg *msg,
                  char **owner, struct wf_doc *out)
{
    struct flood_err e = {0};
    struct sign_parsed *sp = NULL;
    *owner = NULL;
    int v = sign_parse(msg, &sp, &e);
    if (v == SIGN_ERR_MISSING && in->no_verify) {
        atomic_fetch_add(&in->accepted_unverified, 1);
        return 0;
    }
    if (v != SIGN_OK)
        return reject(in, r, reason_of_verdict(v), 401, e.msg, out);
    const char *key_id = sign_parsed_key_id(sp);
    struct keycache_key *k = NULL;
    int fetched = 0;
    int rc = keycache_get(in->kc, key_id, r->instance, 0, &k, &fetched, &e);
    if (rc != KEYCACHE_OK) {
        sign_parsed_free(sp);
        return reject(in, r,
                      rc == KEYCACHE_REFUSED  ? R_HOST_NOT_ALLOWED
                      : rc == KEYCACHE_FAILED ? R_KEY_FETCH
                                              : R_KEY,
                      401, e.msg, out);
    }
    v = sign_verify(sp, msg, k->key, time(NULL), INBOUND_SIG_WINDOW_S, &e);
    if ((v == SIGN_ERR_MISMATCH || v == SIGN_ERR_KEY || v == SIGN_ERR_ALGORITHM) && !fetched &&
        !k->local) {
        /* the sender may have a new key: fetch it once more and retry */
        struct keycache_key *k2 = NULL;
        struct flood_err e2 = {0};
        if (keycache_get(in->kc, key_id, r->instance, 1, &k2, &fetched, &e2) == KEYCACHE_OK) {
            if (fetched) {
                keycache_key_release(k);
                k = k2;
                v = sign_verify(sp, msg, k->key, time(NULL), INBOUND_SIG_WINDOW_S, &e);
            } else {
                keycache_key_release(k2);
            }
        }
    }
    sign_parsed_free(sp);
    if (v != SIGN_OK) {
        keycache_key_release(k);
        return reject(in, r, reason_of_verdict(v), 401, e.msg, out);
    }
    *owner = flood_xstrdup(k->owner);
    keycache_key_release(k);
    return 0;
}

/* The crowd actor (instance, actor) an id URL names, with the route kind it has; 0 when
 * the URL is not the crowd's. */
static int crowd_route_of(struct inbound *in, const char *url, struct wf_route *rt)
{
    char auth[WF_HOST_MAX + 8];
    if (!url || keycache_url_authority(url, auth, sizeof(auth), 1) < 0)
        return 0;
    int inst = wf_instance_of_host(&in->crowd->wf, auth);
    if (!inst)
        return 0;
    /* hand-written (hot path): keycache_url_authority's url_split vouched for the URL */
    const char *path = strstr(url, "://") + 3;
    path += strcspn(path, "/?#");
    if (*path != '/')
        return 0;
    return wf_route_path(&in->crowd->wf, inst, path, strcspn(path, "?#"), rt) == 0;
}

static void on_follow(struct inbound *in, const struct inbound_req *r,
                      const struct inbound_activity *a)
{
    struct wf_route rt;
    if (!crowd_route_of(in, a->object_id, &rt) || rt.kind != WF_ROUTE_ACTOR)
        return;
    atomic_fetch_add(&in->follows_received, 1);
    follows_add(in->crowd->follows, crowd_actor_index(in->crowd, rt.instance, rt.actor), a->actor);
    struct flood_err e = {0};
    char *inbox = keycache_inbox(in->kc, a->actor, r->instance, &e);
    if (!inbox) {
        atomic_fetch_add(&in->accept_no_inbox, 1);
        if (in->log_deliveries)
            fprintf(stderr, "inbound: no Accept for %s: %s\n", a->actor, e.msg);
        return;
    }
    char actor_url[WF_URL_MAX], id[WF_URL_MAX + 64];
    wf_actor_url(&in->crowd->wf, rt.instance, rt.actor, actor_url);
    snprintf(id, sizeof(id), "%s#accepts/%016llx", actor_url, (unsigned long long)fault_random());
    json_t *acc =
        json_pack("{s:s, s:s, s:s, s:s, s:O}", "@context", "https://www.w3.org/ns/activitystreams",
                  "id", id, "type", "Accept", "actor", actor_url, "object", a->doc);
    char *body = acc ? json_dumps(acc, JSON_COMPACT) : NULL;
    json_decref(acc);
    if (!body || deliver_post(in->dl, rt.instance, rt.actor, inbox, body) < 0)
        atomic_fetch_add(&in->accept_no_inbox, 1);
    free(body);
    free(inbox);
}

static void on_undo(struct inbound *in, const struct inbound_activity *a)
{
    struct wf_route rt;
    if (!a->object_type || strcmp(a->object_type, "Follow") || !a->object_actor ||
        strcmp(a->object_actor, a->actor))
        return;
    if (!crowd_route_of(in, a->object_object, &rt) || rt.kind != WF_ROUTE_ACTOR)
        return;
    if (follows_remove(in->crowd->follows, crowd_actor_index(in->crowd, rt.instance, rt.actor),
                       a->actor))
        atomic_fetch_add(&in->unfollows, 1);
}

static void on_answer(struct inbound *in, const struct inbound_activity *a, int accepted)
{
    struct workload *w = atomic_load(&in->workload);
    if (!a->object_id)
        return;
    if (w && workload_refollow_answer(w, a->object_id, accepted))
        return; /* a refollow's answer: counted apart, never a Follow-to-Accept */
    int64_t seq = w ? workload_follow_seq(w, a->object_id) : -1;
    if (seq < 0) {
        atomic_fetch_add(&in->answers_unknown, 1);
        return;
    }
    atomic_fetch_add(accepted ? &in->accepts : &in->rejects, 1);
    if (in->probes)
        probes_answer(in->probes, (uint64_t)seq, accepted, clock_mono_us());
    struct wf_route rt;
    if (accepted && crowd_route_of(in, a->object_actor ? a->object_actor : a->object_id, &rt) &&
        rt.actor >= 0)
        following_add(in->crowd->follows, crowd_actor_index(in->crowd, rt.instance, rt.actor),
                      a->actor);
}

static size_t type_index(const char *type)
{
    for (size_t i = 0; i < N_TYPES; i++)
        if (!strcmp(type, type_names[i]))
            return i;
    return T_OTHER;
}

int inbound_handle(struct inbound *in, const struct inbound_req *r, struct wf_doc *out)
{
    memset(out, 0, sizeof(*out));
    if (!content_type_ok(header_get(r, "content-type")))
        return reject(in, r, R_CONTENT_TYPE, 415,
                      "use application/activity+json or application/ld+json", out);
    if (!r->body || r->body_len == 0)
        return reject(in, r, R_EMPTY_BODY, 400, "an activity is needed", out);

    char target[WF_URL_MAX * 2];
    if (r->query && *r->query)
        snprintf(target, sizeof(target), "%s?%s", r->path, r->query);
    else
        snprintf(target, sizeof(target), "%s", r->path);
    struct sign_msg msg = {.method = r->method,
                           .scheme = in->crowd->wf.scheme,
                           .authority = r->host,
                           .path = target,
                           .headers = r->headers,
                           .n_headers = r->n_headers,
                           .body = r->body,
                           .body_len = r->body_len};
    char *owner = NULL;
    int status = verify(in, r, &msg, &owner, out);
    if (status)
        return status;

    struct inbound_activity a;
    struct flood_err e = {0};
    int bad = inbound_classify(r->body, r->body_len, &a, &e);
    if (bad) {
        free(owner);
        return reject(in, r,
                      bad == INBOUND_TOO_DEEP   ? R_TOO_DEEP
                      : bad == INBOUND_BAD_JSON ? R_BAD_JSON
                                                : R_NOT_ACTIVITY,
                      400, e.msg, out);
    }
    if (owner) {
        char h1[WF_HOST_MAX + 8], h2[WF_HOST_MAX + 8];
        int same = keycache_url_authority(owner, h1, sizeof(h1), 1) == 0 &&
                   keycache_url_authority(a.actor, h2, sizeof(h2), 1) == 0 && !strcmp(h1, h2);
        if (!same) {
            char detail[WF_URL_MAX * 2 + 40];
            snprintf(detail, sizeof(detail), "actor '%.400s' is not on the key owner's host",
                     a.actor);
            free(owner);
            inbound_activity_clear(&a);
            return reject(in, r, R_ACTOR_MISMATCH, 401, detail, out);
        }
        free(owner);
    }

    atomic_fetch_add(&in->deliveries[type_index(a.type)], 1);
    atomic_fetch_add(&in->accepted, 1);
    int64_t pub;
    int has_pub = a.published && inbound_parse_time(a.published, &pub) == 0;
    int64_t now = clock_wall_us();
    int faulted = inbound_inbox_faulted(in, r->instance);
    pthread_mutex_lock(&in->lock);
    int dup = a.id && dup_seen(&in->dups, a.id);
    if (has_pub) {
        hist_record(in->lag, now > pub ? (uint64_t)(now - pub) : 0);
        hist_record(in->lag_split[faulted], now > pub ? (uint64_t)(now - pub) : 0);
    }
    pthread_mutex_unlock(&in->lock);
    if (has_pub && !strcmp(a.type, "Create")) /* one id to many instances: not a dup */
        fanout_add(in->fanout, a.id, pub, now, population_class(&in->pop, r->instance));
    if (dup)
        atomic_fetch_add(&in->duplicates, 1);

    if (!strcmp(a.type, "Follow"))
        on_follow(in, r, &a);
    else if (!strcmp(a.type, "Undo"))
        on_undo(in, &a);
    else if (!strcmp(a.type, "Accept"))
        on_answer(in, &a, 1);
    else if (!strcmp(a.type, "Reject"))
        on_answer(in, &a, 0);

    log_line(in, r, a.type, a.actor, 202, NULL);
    inbound_activity_clear(&a);
    out->status = 202;
    out->content_type = WF_CT_JSON;
    out->body = flood_xstrdup("{}");
    out->len = 2;
    return 202;
}

int inbound_inbox_hook(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct inbound *in = ctx;
    struct sign_header hdrs[INBOUND_HEADERS_MAX];
    struct inbound_req r = {.method = req->method,
                            .host = req->host,
                            .path = req->path,
                            .query = req->query,
                            .headers = hdrs,
                            .n_headers = server_req_headers(req, hdrs, INBOUND_HEADERS_MAX),
                            .body = req->body,
                            .body_len = req->body_len,
                            .instance = req->route.instance,
                            .actor = req->route.kind == WF_ROUTE_INBOX ? req->route.actor : -1};
    return inbound_handle(in, &r, out);
}

/* ---- reports ------------------------------------------------------------------------- */

static json_t *hist_json(const struct hist *h)
{
    return json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:I}", "p50", hist_value_at_percentile(h, 50) / 1000.0, "p90",
        hist_value_at_percentile(h, 90) / 1000.0, "p99", hist_value_at_percentile(h, 99) / 1000.0,
        "p99.9", hist_value_at_percentile(h, 99.9) / 1000.0, "max", hist_max(h) / 1000.0, "count",
        (json_int_t)hist_count(h));
}

static void set_new(json_t *o, const char *k, json_t *v)
{
    if (v)
        json_object_set_new(o, k, v);
}

/* o.k: h's summary; exact.k: h in hist_encode text, for flood merge to merge exactly. */
static void set_hist(json_t *o, json_t *exact, const char *k, const struct hist *h)
{
    set_new(o, k, hist_json(h));
    char *text = hist_encode(h);
    set_new(exact, k, json_string(text));
    free(text);
}

static json_t *count(uint64_t n)
{
    return json_integer((json_int_t)n);
}

uint64_t inbound_deliveries_count(void *ctx)
{
    struct inbound *in = ctx;
    return atomic_load(&in->accepted);
}

json_t *inbound_json(struct inbound *in)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_t *d = json_object();
    for (size_t i = 0; i <= N_TYPES && d; i++)
        set_new(d, i < N_TYPES ? type_names[i] : "other", count(in->deliveries[i]));
    set_new(o, "deliveries", d);
    json_t *rj = json_object();
    for (size_t i = 0; i < R__COUNT && rj; i++)
        set_new(rj, reason_names[i], count(in->rejected[i]));
    set_new(o, "rejected", rj);
    set_new(o, "accepted", count(in->accepted));
    set_new(o, "accepted_unverified", count(in->accepted_unverified));
    set_new(o, "accepts", count(in->accepts));
    set_new(o, "rejects", count(in->rejects));
    set_new(o, "answers_unknown", count(in->answers_unknown));

    struct hist *h = hist_new();
    json_t *exact = json_object();
    struct probes_totals pt = {0};
    if (in->probes)
        probes_snapshot(in->probes, &pt, h);
    set_hist(o, exact, "follow_to_accept_ms", h);
    set_new(o, "follows_sent", count(pt.sent));
    set_new(o, "follows_unanswered", count(pt.open));
    hist_reset(h);
    pthread_mutex_lock(&in->lock);
    hist_merge(h, in->lag);
    pthread_mutex_unlock(&in->lock);
    set_hist(o, exact, "delivery_lag_ms", h);
    if (in->n_faults || in->pop.class_of) { /* by the instance: without an inbox fault, with */
        static const char *const split[2] = {"delivery_lag_ms_healthy", "delivery_lag_ms_faulted"};
        for (int k = 0; k < 2; k++) {
            hist_reset(h);
            pthread_mutex_lock(&in->lock);
            hist_merge(h, in->lag_split[k]);
            pthread_mutex_unlock(&in->lock);
            set_hist(o, exact, split[k], h);
        }
        /* every attempt at an inbox a fault covered: the target's retry curve */
        set_new(o, "retry_curve", attempts_json(in->attempts, inbound_faults_end_ms(in)));
    }
    if (in->pop.class_of)
        set_new(o, "population", population_json(&in->pop));
    set_new(o, "fan_out", fanout_json(in->fanout, population_class_names));
    hist_free(h);
    set_new(o, "exact", exact); /* the summaries' histograms, for flood merge */
    set_new(o, "duplicates", count(in->duplicates));
    set_new(o, "follows_received", count(in->follows_received));
    set_new(o, "unfollows_received", count(in->unfollows));

    struct deliver_stats ds;
    deliver_get_stats(in->dl, &ds);
    set_new(o, "accepts_sent",
            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "queued", (json_int_t)ds.queued, "ok",
                      (json_int_t)ds.ok, "retried", (json_int_t)ds.retried, "failed",
                      (json_int_t)(ds.failed + ds.dropped), "pending", (json_int_t)ds.pending,
                      "no_inbox", (json_int_t)in->accept_no_inbox));
    json_t *f = json_array();
    for (size_t i = 0; i < in->n_cli_faults && f; i++)
        json_array_append_new(f, json_string(in->faults[i].spec));
    set_new(o, "faults", f);
    set_new(o, "faulted",
            json_pack("{s:I, s:I, s:I, s:I}", "delay", (json_int_t)in->faulted_delay, "status",
                      (json_int_t)in->faulted_status, "reset", (json_int_t)in->faulted_reset,
                      "hang", (json_int_t)in->faulted_hang));
    struct keycache_stats ks;
    keycache_stats(in->kc, &ks);
    set_new(o, "key_fetches",
            json_pack("{s:I, s:I, s:I, s:I}", "ok", (json_int_t)ks.ok, "failed",
                      (json_int_t)ks.failed, "refused", (json_int_t)ks.refused, "cached",
                      (json_int_t)ks.cached));
    return o;
}

void inbound_live(struct inbound *in, char *buf, size_t size)
{
    uint64_t total = atomic_load(&in->accepted);
    uint64_t rej = 0;
    for (size_t i = 0; i < R__COUNT; i++)
        rej += atomic_load(&in->rejected[i]);
    uint64_t now = clock_mono_us();
    pthread_mutex_lock(&in->lock);
    double dt = (double)(now - in->live_last_us) / 1e6;
    double rate = dt > 0 ? (double)(total - in->live_last_total) / dt : 0;
    in->live_last_total = total;
    in->live_last_us = now;
    pthread_mutex_unlock(&in->lock);
    snprintf(buf, size, "in %.0f/s acc %llu rej %llu", rate,
             (unsigned long long)atomic_load(&in->accepts), (unsigned long long)rej);
}

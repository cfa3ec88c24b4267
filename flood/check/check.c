/* flood/check/check.c: the runner of `flood check`: persona discovery, then one function a step
 * kind. Each step fills one struct check_result. What each step checks, and the server
 * behaviour behind it, is in docs/INTEROP.md. */
#include "flood/check/check.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "flood/check/check_internal.h"
#include "flood/core/clock.h"
#include "flood/send/target.h"
#include "flood/core/url.h"
#include "webfinger/activity.h"

const char *check_outcome_name(enum check_outcome o)
{
    static const char *const names[] = {"pass", "fail", "skip", "deferred", "unsupported"};
    return (unsigned)o < 5 ? names[o] : "?";
}

/* ---- setup ------------------------------------------------------------------------------ */

struct check *check_new(struct crowd *crowd, const struct check_opts *o, struct flood_err *err)
{
    struct check *c = flood_xcalloc(1, sizeof(*c));
    c->crowd = crowd;
    c->o = *o;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    /* Activity ids unique across runs against one target, which may drop an id it has seen
     * ("already processed"): a microsecond base, 256 ids a microsecond apart, so two runs
     * collide only if the first sends more than 256 activities for each microsecond between
     * their starts (a second's runs used one base, and the second run's Follows were dropped). */
    c->seq_next = (uint64_t)clock_wall_us() << 8;
    if (!o->persona || target_parse_spec(o->persona, &c->user, &c->host, err) < 0 ||
        check_host_init(c, err) < 0) {
        if (!o->persona)
            flood_err_set(err, FLOOD_EINVAL, "check: --persona is required");
        check_free(c);
        return NULL;
    }
    return c;
}

void check_free(struct check *c)
{
    if (!c)
        return;
    check_host_free(c);
    persona_free(&c->persona);
    free(c->user);
    free(c->host);
    free(c->origin);
    free(c->account_id);
    free(c->like_json);
    free(c->like_object);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    free(c);
}

void check_set_inbound(struct check *c, struct inbound *in)
{
    c->inbound = in;
}

const char *check_persona_host(const struct check *c)
{
    return c->host;
}

int check_persona_ok(const struct check *c)
{
    return c->persona_ok;
}

const char *check_persona_error(const struct check *c)
{
    return c->persona_err;
}

static void discover(struct check *c)
{
    struct target_opts to = {.target_http = c->o.target_http, .http = c->o.http, .quiet = 1};
    struct flood_err e = {0};
    if (target_discover(c->o.persona, c->crowd, &to, &c->persona, &e) < 0) {
        snprintf(c->persona_err, sizeof(c->persona_err), "%s", e.msg);
        return;
    }
    c->origin = check_origin_of(c->persona.actor);
    if (!c->origin || wf_mention_name(c->persona.acct, c->persona.actor, c->mention, &e) < 0) {
        snprintf(c->persona_err, sizeof(c->persona_err), "%s",
                 c->origin ? e.msg : "check: the persona's actor id is not a URL");
        return;
    }
    c->persona_ok = 1;
}

/* ---- sending ---------------------------------------------------------------------------- */

/* A Create(Note) mentioning the persona from actor (inst, act) of crowd wf (the crowd or
 * the check crowd), served at its ids. The Note's id into note_id. New text, or NULL. */
static char *make_create(struct check *c, const struct wf_crowd *wf, int inst, int act,
                         char note_id[WF_URL_MAX], struct flood_err *err)
{
    struct wf_act_from from = {.instance = inst, .actor = act, .seq = c->seq_next++};
    struct wf_persona_ref p = check_pref(c);
    time_t now = time(NULL);
    json_t *note = wf_act_note(wf, &from, &p, now, 1, err);
    json_t *create = note ? wf_act_create(wf, &from, &p, now, err) : NULL;
    char *text = NULL;
    if (create) {
        free(check_serve_json(c, note));
        text = check_serve_json(c, create);
        wf_note_url(wf, inst, act, from.seq, note_id);
        c->create_seq = from.seq;
        c->create_at = now;
    }
    json_decref(note);
    json_decref(create);
    return text;
}

/* ---- the API ---------------------------------------------------------------------------- */

/* ---- steps ------------------------------------------------------------------------------ */

static void step_follow(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    struct wf_act_from from = {.instance = st->instance, .actor = st->actor, .seq = c->seq_next++};
    struct wf_persona_ref p = check_pref(c);
    struct flood_err e = {0};
    json_t *f = wf_act_follow(&c->crowd->wf, &from, &p, 1, &e);
    char *text = f ? check_serve_json(c, f) : NULL;
    json_decref(f);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Follow", e.msg, NULL);
        return;
    }
    c->following = 0;
    c->follow_seq = from.seq;
    c->follow_inst = st->instance;
    c->follow_actor = st->actor;
    wf_activity_url(&c->crowd->wf, st->instance, st->actor, from.seq, c->follow_id);
    c->follow_mono_us = clock_mono_us();
    check_send_expect_2xx(c, r, st->instance, st->actor, text, "Follow taken");
    c->following = r->outcome == CHECK_PASS;
    free(text);
}

static void step_expect_accept(struct check *c, struct check_result *r,
                               const struct scenario_step *st)
{
    if (!c->following) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the Follow before was not taken");
        return;
    }
    uint64_t at = 0;
    int a = check_wait_answer(c, c->follow_id, c->follow_mono_us + (uint64_t)st->ms * 1000, &at);
    char exp[64];
    snprintf(exp, sizeof(exp), "an Accept within %ld ms", st->ms);
    if (a == 1) {
        r->ms = (double)(at - c->follow_mono_us) / 1000.0;
        check_set(r, CHECK_PASS, NULL, NULL, "Follow to Accept %.0f ms", r->ms);
    } else if (a == 2) {
        check_set(r, CHECK_FAIL, exp, "a Reject", NULL);
    } else {
        check_set(r, CHECK_FAIL, exp, "nothing", NULL);
    }
}

static void step_undo_follow(struct check *c, struct check_result *r)
{
    if (!c->following) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the Follow before was not taken");
        return;
    }
    struct wf_act_from from = {
        .instance = c->follow_inst, .actor = c->follow_actor, .seq = c->seq_next++};
    struct wf_persona_ref p = check_pref(c);
    struct flood_err e = {0};
    json_t *u = wf_act_undo_follow(&c->crowd->wf, &from, c->follow_seq, &p, &e);
    char *text = u ? check_serve_json(c, u) : NULL;
    json_decref(u);
    if (!text) {
        check_set(r, CHECK_FAIL, "an Undo", e.msg, NULL);
        return;
    }
    check_send_expect_2xx(c, r, c->follow_inst, c->follow_actor, text, "Undo(Follow) taken");
    if (r->outcome == CHECK_PASS)
        c->following = 0;
    free(text);
}

static void step_post_mention(struct check *c, struct check_result *r,
                              const struct scenario_step *st)
{
    struct flood_err e = {0};
    char note[WF_URL_MAX];
    c->note_id[0] = '\0';
    char *text = make_create(c, &c->crowd->wf, st->instance, st->actor, note, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Create", e.msg, NULL);
        return;
    }
    check_send_expect_2xx(c, r, st->instance, st->actor, text, "Create(Note) taken");
    if (r->outcome == CHECK_PASS) {
        snprintf(c->note_id, sizeof(c->note_id), "%s", note);
        c->note_seq = c->create_seq;
        c->note_at = c->create_at;
        c->note_inst = st->instance;
        c->note_actor = st->actor;
    }
    free(text);
}

static void step_like(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    struct flood_err e = {0};
    c->liked = 0;
    const char *post = check_post_to_like(c, &e);
    if (!post) {
        check_set(r, CHECK_SKIP, NULL, NULL, "no post to like: %s", e.msg);
        return;
    }
    struct wf_act_from from = {.instance = st->instance, .actor = st->actor, .seq = c->seq_next++};
    struct wf_persona_ref p = check_pref(c);
    json_t *l = wf_act_like(&c->crowd->wf, &from, &p, post, &e);
    char *text = l ? check_serve_json(c, l) : NULL;
    if (!text) {
        json_decref(l);
        check_set(r, CHECK_FAIL, "a Like", e.msg, NULL);
        return;
    }
    check_send_expect_2xx(c, r, st->instance, st->actor, text, "Like taken");
    if (r->outcome == CHECK_PASS) {
        json_object_del(l, "@context");
        free(c->like_json);
        free(c->like_object);
        c->like_json = json_dumps(l, JSON_COMPACT | JSON_PRESERVE_ORDER);
        c->like_object = flood_xstrdup(post);
        c->like_inst = st->instance;
        c->like_actor = st->actor;
        c->liked = 1;
    }
    json_decref(l);
    free(text);
}

static void step_undo_like(struct check *c, struct check_result *r)
{
    if (!c->liked || !c->like_json) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the Like before was not taken");
        return;
    }
    char id[WF_URL_MAX], actor[WF_URL_MAX];
    wf_activity_url(&c->crowd->wf, c->like_inst, c->like_actor, c->seq_next++, id);
    wf_actor_url(&c->crowd->wf, c->like_inst, c->like_actor, actor);
    json_t *like = json_loads(c->like_json, 0, NULL);
    /* Mastodon ignores an Undo of a Like given by id: embed it (INTEROP.md, Activities) */
    json_t *u =
        like ? json_pack("{s:s, s:s, s:s, s:s, s:[s], s:o}", "@context", WF_AS_CONTEXT, "id", id,
                         "type", "Undo", "actor", actor, "to", c->persona.actor, "object", like)
             : NULL;
    char *text = u ? check_serve_json(c, u) : NULL;
    json_decref(u);
    if (!text) {
        check_set(r, CHECK_FAIL, "an Undo", "jansson refused the document", NULL);
        return;
    }
    check_send_expect_2xx(c, r, c->like_inst, c->like_actor, text, "Undo(Like) taken");
    if (r->outcome == CHECK_PASS)
        c->liked = 0;
    free(text);
}

/* A 2xx to a request that should have been refused: did it have an effect? */
static void judge_accepted_bad(struct check *c, struct check_result *r, const char *note,
                               const char *got)
{
    static const char exp[] = "refused (400, 401 or 403)";
    struct flood_err e = {0};
    int s = check_poll_mention(c, note, c->o.settle_ms, NULL, &e);
    if (s == 1) {
        char *g = flood_xasprintf("%s, then processed: the mention shows in notifications", got);
        check_set(r, CHECK_FAIL, exp, g, NULL);
        free(g);
    } else if (s == 0) {
        check_set(r, CHECK_DEFERRED, exp, got,
                  "answered 2xx, no mention after %ld ms: dropped later?", c->o.settle_ms);
    } else {
        check_set(r, CHECK_DEFERRED, exp, got, "answered 2xx; the API check failed: %s", e.msg);
    }
}

static void step_send_bad(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    int inst = st->instance, act = st->actor;
    int kinst = inst;
    if (st->bad == SC_BAD_FOREIGN_KEYID) {
        if (c->crowd->opts.instances < 2) {
            check_set(r, CHECK_SKIP, NULL, NULL, "the crowd has one instance: no other host");
            return;
        }
        kinst = inst % c->crowd->opts.instances + 1;
    }
    static const enum check_variant variant[SC__BADS] = {CV_UNSIGNED, CV_BAD_KEY, CV_STALE,
                                                         CV_DIGEST, CV_GOOD};
    if (!c->o.token) {
        check_refusal_by_twin(c, r, inst, act, kinst, variant[st->bad]);
        return;
    }
    r->decided_by = "api";
    struct flood_err e = {0};
    char note[WF_URL_MAX], kid[WF_URL_MAX];
    char *text = make_create(c, &c->crowd->wf, inst, act, note, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Create", e.msg, NULL);
        return;
    }
    crowd_key_id(c->crowd, kinst, act, kid);
    struct check_http h;
    if (check_net_post(c, c->persona.inbox, text, crowd_key(c->crowd, kinst, act), kid, SIGN_CAVAGE,
                       variant[st->bad], &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "refused (400, 401 or 403)", e.msg, NULL);
        free(text);
        return;
    }
    char *got = check_answer_text(&h);
    if (h.status == 400 || h.status == 401 || h.status == 403) {
        r->decided_by = "answer";
        check_set(r, CHECK_PASS, NULL, NULL, "refused: %s", got);
    } else if (check_is_2xx(h.status)) {
        judge_accepted_bad(c, r, note, got);
    } else {
        r->decided_by = "answer";
        check_set(r, CHECK_FAIL, "refused (400, 401 or 403)", got, NULL);
    }
    free(got);
    free(text);
    check_http_free(&h);
}

static void step_dialect(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    struct flood_err e = {0};
    char note[WF_URL_MAX], kid[WF_URL_MAX + 16];
    int ed = st->dialect == SC_DIALECT_RFC9421_ED25519;
    const struct wf_crowd *wf = ed ? &c->cwf : &c->crowd->wf;
    int inst = ed ? 1 : st->instance, act = ed ? CHECK_ACTOR_ED : st->actor;
    char *text = make_create(c, wf, inst, act, note, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Create", e.msg, NULL);
        return;
    }
    const struct sign_key *key;
    if (ed) {
        char actor[WF_URL_MAX];
        wf_actor_url(wf, 1, CHECK_ACTOR_ED, actor);
        snprintf(kid, sizeof(kid), "%s#main-key", actor);
        key = c->ed_key;
    } else {
        crowd_key_id(c->crowd, inst, act, kid);
        key = crowd_key(c->crowd, inst, act);
    }
    int dialect = st->dialect <= SC_DIALECT_CAVAGE_HS2019 ? SIGN_CAVAGE : SIGN_RFC9421;
    enum check_variant v = st->dialect == SC_DIALECT_CAVAGE_HS2019 ? CV_HS2019 : CV_GOOD;
    if (!ed && sign_key_type(key) != SIGN_KEY_RSA) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the crowd's keys are not RSA (--key-type)");
        free(text);
        return;
    }
    struct check_http h;
    if (check_net_post(c, c->persona.inbox, text, key, kid, dialect, v, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "2xx", e.msg, NULL);
        free(text);
        return;
    }
    char *got = check_answer_text(&h);
    if (check_is_2xx(h.status))
        check_set(r, CHECK_PASS, NULL, NULL, "accepted: %s", got);
    else if (st->expect_accepted)
        check_set(r, CHECK_FAIL, "2xx", got, NULL);
    else
        check_set(r, CHECK_UNSUPPORTED, NULL, got, "not accepted by this target");
    free(got);
    free(text);
    check_http_free(&h);
}

/* POST text as the rotor with its current key. */
static int post_rotor(struct check *c, const char *text, struct check_http *h,
                      struct flood_err *err)
{
    char actor[WF_URL_MAX], kid[WF_URL_MAX + 16];
    wf_actor_url(&c->cwf, 1, CHECK_ACTOR_ROTOR, actor);
    snprintf(kid, sizeof(kid), "%s#main-key", actor);
    return check_net_post(c, c->persona.inbox, text, c->rotor_key, kid, SIGN_CAVAGE, CV_GOOD, h,
                          err);
}

static void step_rotate(struct check *c, struct check_result *r)
{
    struct flood_err e = {0};
    char note[WF_URL_MAX], actor[WF_URL_MAX], id[WF_URL_MAX];
    struct check_http h = {0};
    char *got = NULL, *text = NULL;
    struct sign_key *fresh = NULL;
    json_t *upd = NULL;
    wf_actor_url(&c->cwf, 1, CHECK_ACTOR_ROTOR, actor);
    /* 1: the target learns the old key */
    text = make_create(c, &c->cwf, 1, CHECK_ACTOR_ROTOR, note, &e);
    if (!text || post_rotor(c, text, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "a post with the old key taken", e.msg, NULL);
        goto out;
    }
    if (!check_is_2xx(h.status)) {
        got = check_answer_text(&h);
        check_set(r, CHECK_FAIL, "a post with the old key: 2xx", got, NULL);
        goto out;
    }
    check_http_free(&h);
    free(text);
    text = NULL;
    /* 2: Update(Person) carrying the new key, signed with the old one */
    fresh = sign_key_generate(SIGN_KEY_RSA, 2048, &e);
    char *pem = fresh ? sign_key_public_pem(fresh, &e) : NULL;
    if (!pem) {
        check_set(r, CHECK_FAIL, "a new key", e.msg, NULL);
        goto out;
    }
    struct wf_key_info k = {.public_pem = pem};
    struct wf_doc doc = {0};
    wf_actor(&c->cwf, 1, CHECK_ACTOR_ROTOR, &k, &doc);
    free(pem);
    json_t *person = doc.body ? json_loadb(doc.body, doc.len, 0, NULL) : NULL;
    wf_doc_free(&doc);
    if (person)
        json_object_del(person, "@context");
    wf_activity_url(&c->cwf, 1, CHECK_ACTOR_ROTOR, c->seq_next++, id);
    upd = person ? json_pack("{s:[s,s], s:s, s:s, s:s, s:[s], s:o}", "@context", WF_AS_CONTEXT,
                             "https://w3id.org/security/v1", "id", id, "type", "Update", "actor",
                             actor, "to", WF_AS_PUBLIC, "object", person)
                 : NULL;
    text = upd ? check_serve_json(c, upd) : NULL;
    if (!text || post_rotor(c, text, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "Update(Person) taken", text ? e.msg : "no document", NULL);
        goto out;
    }
    if (!check_is_2xx(h.status)) {
        got = check_answer_text(&h);
        check_set(r, CHECK_FAIL, "Update(Person) signed with the old key: 2xx", got, NULL);
        goto out;
    }
    check_http_free(&h);
    free(text);
    text = NULL;
    /* 3: the actor now serves the new key; a post signed with it */
    if (check_rotate_key(c, fresh, &e) < 0) {
        check_set(r, CHECK_FAIL, "the key swapped", e.msg, NULL);
        goto out;
    }
    fresh = NULL;
    text = make_create(c, &c->cwf, 1, CHECK_ACTOR_ROTOR, note, &e);
    if (!text || post_rotor(c, text, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "a post with the new key taken", e.msg, NULL);
        goto out;
    }
    got = check_answer_text(&h);
    if (!check_is_2xx(h.status)) {
        check_set(r, CHECK_FAIL, "a post signed with the new key: 2xx", got,
                  "the target kept the old key after Update(Person)");
    } else if (c->o.token) {
        int s = check_poll_mention(c, note, c->o.settle_ms, NULL, &e);
        if (s == 1)
            check_set(r, CHECK_PASS, NULL, NULL, "new key taken (%s) and the post processed", got);
        else
            check_set(r, CHECK_DEFERRED, "the post signed with the new key processed", got,
                      "answered 2xx but no mention after %ld ms", c->o.settle_ms);
    } else {
        check_set(r, CHECK_PASS, NULL, NULL, "new key taken: %s", got);
    }
out:
    sign_key_free(fresh);
    json_decref(upd);
    free(text);
    free(got);
    check_http_free(&h);
}

static void step_timer(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    if (st->kind == SC_TIMER_START) {
        if (c->n_timers < CHECK_TIMERS_MAX) {
            snprintf(c->timers[c->n_timers].name, SCENARIO_NAME_MAX, "%s", st->name);
            c->timers[c->n_timers++].start_us = clock_mono_us();
        }
        check_set(r, CHECK_PASS, NULL, NULL, "timer %s started", st->name);
        return;
    }
    for (size_t i = c->n_timers; i-- > 0;)
        if (!strcmp(c->timers[i].name, st->name)) {
            r->ms = (double)(clock_mono_us() - c->timers[i].start_us) / 1000.0;
            check_set(r, CHECK_PASS, NULL, NULL, "timer %s: %.0f ms", st->name, r->ms);
            return;
        }
    check_set(r, CHECK_SKIP, NULL, NULL, "timer %s was not started", st->name);
}

static int needs_persona(enum scenario_kind k)
{
    return k != SC_DISCOVER_WEBFINGER && k != SC_DISCOVER_ACTOR && k != SC_DISCOVER_NODEINFO &&
           k != SC_WAIT && k != SC_TIMER_START && k != SC_TIMER_STOP;
}

static int needs_token(enum scenario_kind k)
{
    return k == SC_API_MENTION || k == SC_API_LIKE || k == SC_API_FOLLOW_CROWD;
}

static void run_step(struct check *c, const struct scenario_step *st, struct check_result *r)
{
    if (needs_persona(st->kind) && !c->persona_ok) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the persona was not discovered");
        return;
    }
    if (needs_token(st->kind) && !c->o.token) {
        check_set(r, CHECK_SKIP, NULL, NULL, "needs the persona's API token (--token-file)");
        return;
    }
    switch (st->kind) {
    case SC_DISCOVER_WEBFINGER:
        check_step_webfinger(c, r);
        break;
    case SC_DISCOVER_ACTOR:
        check_step_actor(c, r, st->signed_get);
        break;
    case SC_DISCOVER_NODEINFO:
        check_step_nodeinfo(c, r);
        break;
    case SC_FOLLOW:
        step_follow(c, r, st);
        break;
    case SC_EXPECT_ACCEPT:
        step_expect_accept(c, r, st);
        break;
    case SC_UNDO_FOLLOW:
        step_undo_follow(c, r);
        break;
    case SC_POST_MENTION:
        step_post_mention(c, r, st);
        break;
    case SC_LIKE:
        step_like(c, r, st);
        break;
    case SC_UNDO_LIKE:
        step_undo_like(c, r);
        break;
    case SC_SEND_BAD:
        step_send_bad(c, r, st);
        break;
    case SC_SEND_DIALECT:
        step_dialect(c, r, st);
        break;
    case SC_ROTATE:
        step_rotate(c, r);
        break;
    case SC_API_MENTION:
        check_step_api_mention(c, r, st);
        break;
    case SC_API_LIKE:
        check_step_api_like(c, r, st);
        break;
    case SC_API_FOLLOW_CROWD:
        check_step_api_follow_crowd(c, r, st);
        break;
    case SC_ANNOUNCE_UNSEEN:
    case SC_REPLY_THREAD:
    case SC_POST_MEDIA:
    case SC_POST_POLL:
    case SC_EDIT_POST:
    case SC_DELETE_POST:
        check_step_traffic(c, r, st);
        break;
    case SC_WAIT:
        check_sleep_ms(st->ms);
        check_set(r, CHECK_PASS, NULL, NULL, "waited %ld ms", st->ms);
        break;
    case SC_TIMER_START:
    case SC_TIMER_STOP:
        step_timer(c, r, st);
        break;
    default:
        check_set(r, CHECK_SKIP, NULL, NULL, "unknown step kind");
        break;
    }
}

void check_run(struct check *c, const struct scenario *s, struct check_report *out)
{
    memset(out, 0, sizeof(*out));
    discover(c);
    if (c->o.verbose && !c->persona_ok)
        fprintf(stderr, "check: %s\n", c->persona_err);
    out->results = flood_xcalloc(s->n ? s->n : 1, sizeof(*out->results));
    for (size_t i = 0; i < s->n; i++) {
        const struct scenario_step *st = &s->steps[i];
        struct check_result *r = &out->results[i];
        r->line = st->line;
        r->step = flood_xstrdup(st->text);
        uint64_t t0 = clock_mono_us();
        r->ms = -1;
        run_step(c, st, r);
        /* steps that measure something set ms themselves; the rest show their duration */
        if (r->ms < 0)
            r->ms = (double)(clock_mono_us() - t0) / 1000.0;
        out->counts[r->outcome]++;
        out->n++;
        if (c->o.verbose)
            fprintf(stderr, "check: %s:%d %s: %s\n", s->file, st->line, st->text,
                    check_outcome_name(r->outcome));
    }
}

void check_report_free(struct check_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->results[i].step);
        free(r->results[i].expected);
        free(r->results[i].got);
        free(r->results[i].detail);
    }
    free(r->results);
    memset(r, 0, sizeof(*r));
}

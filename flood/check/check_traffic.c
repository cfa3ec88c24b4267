/* flood/check/check_traffic.c: the traffic steps of `flood check`: a boost of a post the target
 * never saw, a reply to a thread it must fetch, a post with an image, a poll, an edit and a
 * delete of the last post mention. Each is sent as a crowd actor and must be answered 2xx;
 * with a token the step then polls the Mastodon API for its effect (docs/INTEROP.md). Every
 * object a step makes is served at its id, so the target can fetch what it has not seen. */
#include <stdlib.h>
#include <string.h>

#include "flood/check/check_internal.h"
#include "flood/core/clock.h"
#include "webfinger/activity.h"
#include "webfinger/content.h"
#include "webfinger/media.h"

#define POLL_MS 200

/* Build a, serve it at its id; its text (new string), or NULL and err. */
static char *serve_act(struct check *c, const struct wf_act_args *a, struct flood_err *err)
{
    json_t *j = wf_act_json(&c->crowd->wf, a, err);
    char *t = j ? check_serve_json(c, j) : NULL;
    if (j && !t)
        flood_err_set(err, FLOOD_EINVAL, "jansson refused the document");
    json_decref(j);
    return t;
}

/* The status the API shows for note uri, from the persona's mention notifications (rendered
 * as it is now): a new reference, or NULL (*api_err set when the API failed, into err). */
static json_t *notified_status(struct check *c, const char *uri, int *api_err,
                               struct flood_err *err)
{
    long st;
    json_t *j, *found = NULL;
    *api_err = 0;
    if (check_api(c, "GET", "/api/v1/notifications?types%5B%5D=mention&limit=40", NULL, &st, &j,
                  err) < 0 ||
        st != 200 || !json_is_array(j)) {
        if (j || st != 200)
            flood_err_set(err, FLOOD_EINVAL, "GET /api/v1/notifications: %ld", st);
        json_decref(j);
        *api_err = 1;
        return NULL;
    }
    size_t i;
    json_t *n;
    json_array_foreach(j, i, n)
    {
        json_t *s = json_object_get(n, "status");
        const char *u = json_string_value(json_object_get(s, "uri"));
        if (!found && u && !strcmp(u, uri))
            found = json_incref(s);
    }
    json_decref(j);
    return found;
}

/* What a step looks for in the status of its note: 1 seen, 0 not yet; got[] says what is. */
typedef int (*effect_fn)(struct check *c, json_t *status, char *got, size_t size);

static int eff_shown(struct check *c, json_t *s, char *got, size_t size)
{
    (void)c;
    snprintf(got, size, "shown as status %s", json_string_value(json_object_get(s, "id")));
    return 1;
}

static int eff_media(struct check *c, json_t *s, char *got, size_t size)
{
    (void)c;
    json_t *m = json_object_get(s, "media_attachments");
    const char *state = json_string_value(json_object_get(json_array_get(m, 0), "flood_state"));
    snprintf(got, size, "media_attachments: %zu%s%s", json_array_size(m), state ? ", state " : "",
             state ? state : "");
    return json_array_size(m) == 1;
}

static int eff_poll(struct check *c, json_t *s, char *got, size_t size)
{
    (void)c;
    json_t *o = json_object_get(json_object_get(s, "poll"), "options");
    snprintf(got, size, "poll.options: %zu", json_array_size(o));
    return json_array_size(o) == 3;
}

static int eff_edited(struct check *c, json_t *s, char *got, size_t size)
{
    (void)c;
    const char *content = json_string_value(json_object_get(s, "content"));
    const char *at = json_string_value(json_object_get(s, "edited_at"));
    int changed = content && strstr(content, "(edited)");
    snprintf(got, size, "content %s, edited_at %s", changed ? "changed" : "unchanged",
             at ? at : "null");
    return changed && at;
}

/* The reply's parent shown, and the parent's parent: the thread fetched. */
static int eff_thread(struct check *c, json_t *s, char *got, size_t size)
{
    const char *pid = json_string_value(json_object_get(s, "in_reply_to_id"));
    if (!pid) {
        snprintf(got, size, "in_reply_to_id null: the parent not fetched");
        return 0;
    }
    char *path = flood_xasprintf("/api/v1/statuses/%s", pid);
    long st = 0;
    json_t *p = NULL;
    struct flood_err e = {0};
    int rc = check_api(c, "GET", path, NULL, &st, &p, &e);
    free(path);
    int ok = rc == 0 && st == 200 && json_string_value(json_object_get(p, "in_reply_to_id"));
    snprintf(got, size, "parent %s (HTTP %ld), its parent %s", pid, st,
             ok ? "fetched too" : "not fetched");
    json_decref(p);
    return ok;
}

/* Poll the status of uri for up to ms until f sees the effect: 1 seen, 0 not (got says
 * what was), -1 API error (got). */
static int poll_effect(struct check *c, const char *uri, long ms, effect_fn f, char *got,
                       size_t size)
{
    uint64_t end = clock_mono_us() + (uint64_t)ms * 1000;
    snprintf(got, size, "no mention notification of %s", uri);
    for (;;) {
        int api_err;
        struct flood_err e = {0};
        json_t *s = notified_status(c, uri, &api_err, &e);
        if (api_err) {
            snprintf(got, size, "%.300s", e.msg);
            return -1;
        }
        int seen = s && f(c, s, got, size);
        json_decref(s);
        if (seen)
            return 1;
        if (clock_mono_us() >= end)
            return 0;
        check_sleep_ms(POLL_MS);
    }
}

/* Send text as (inst, act), then, with a token, look for the effect on note uri. */
static void send_and_see(struct check *c, struct check_result *r, const struct scenario_step *st,
                         int inst, int act, const char *text, const char *what, const char *uri,
                         effect_fn f, const char *expected)
{
    check_send_expect_2xx(c, r, inst, act, text, what);
    if (r->outcome != CHECK_PASS || !c->o.token)
        return;
    char *sent = flood_xstrdup(r->detail ? r->detail : what);
    char got[512];
    int s = poll_effect(c, uri, st->ms, f, got, sizeof(got));
    if (s == 1) {
        check_set(r, CHECK_PASS, NULL, NULL, "%s; %s", sent, got);
    } else {
        char *exp = flood_xasprintf("%s within %ld ms", expected, st->ms);
        check_set(r, CHECK_FAIL, exp, got, NULL);
        free(exp);
    }
    free(sent);
}

static struct wf_act_args args_of(struct check *c, enum wf_act_kind kind, int inst, int act)
{
    return (struct wf_act_args){.kind = kind,
                                .from = {.instance = inst, .actor = act, .seq = c->seq_next++},
                                .p = check_pref(c),
                                .published = time(NULL)};
}

/* A Note of its own (served at its id), optionally a reply; its id into id. 0, or -1. */
static int serve_note(struct check *c, int inst, int act, const char *parent, char id[WF_URL_MAX],
                      struct flood_err *err)
{
    struct wf_act_args a = args_of(c, WF_ACT_NOTE, inst, act);
    a.with_context = 1;
    a.in_reply_to = parent;
    char *t = serve_act(c, &a, err);
    wf_note_url(&c->crowd->wf, inst, act, a.from.seq, id);
    free(t);
    return t ? 0 : -1;
}

/* A Create (kind CREATE or QUESTION) with its object served too; the Note's id into id. */
static char *serve_create(struct check *c, struct wf_act_args *a, char id[WF_URL_MAX],
                          struct flood_err *err)
{
    a->object_only = 1;
    char *obj = serve_act(c, a, err);
    a->object_only = 0;
    char *t = obj ? serve_act(c, a, err) : NULL;
    free(obj);
    wf_note_url(&c->crowd->wf, a->from.instance, a->from.actor, a->from.seq, id);
    return t;
}

/* reblogs_count of uri among the statuses of crowd actor (inst, act), as the API shows them:
 * >= 0, or -1 (why into got). */
static long reblogs(struct check *c, int inst, int act, const char *uri, char *got, size_t size)
{
    char host[WF_HOST_MAX], name[WF_NAME_MAX];
    wf_host(&c->crowd->wf, inst, host);
    wf_actor_name(act, name);
    char *path = flood_xasprintf("/api/v1/accounts/lookup?acct=%s%%40%s", name, host);
    long st = 0, n = -1;
    json_t *j = NULL;
    struct flood_err e = {0};
    int rc = check_api(c, "GET", path, NULL, &st, &j, &e);
    free(path);
    const char *id = rc == 0 && st == 200 ? json_string_value(json_object_get(j, "id")) : NULL;
    if (!id) {
        snprintf(got, size, "the API shows no account %.64s@%.128s (%.120s)", name, host,
                 rc < 0 ? e.msg : "lookup failed");
        json_decref(j);
        return -1;
    }
    path = flood_xasprintf("/api/v1/accounts/%s/statuses?limit=40", id);
    json_decref(j);
    j = NULL;
    rc = check_api(c, "GET", path, NULL, &st, &j, &e);
    free(path);
    size_t i;
    json_t *s;
    json_array_foreach(j, i, s)
    {
        const char *u = json_string_value(json_object_get(s, "uri"));
        if (u && !strcmp(u, uri))
            n = (long)json_integer_value(json_object_get(s, "reblogs_count"));
    }
    json_decref(j);
    if (n < 0)
        snprintf(got, size, "the boosted note is not among %.64s@%.128s's statuses (HTTP %ld)",
                 name, host, st);
    else
        snprintf(got, size, "the boosted note fetched, reblogs_count %ld", n);
    return n;
}

/* Whether the home timeline holds a reblog of uri: 1, 0. */
static int home_reblog(struct check *c, const char *uri)
{
    long st = 0;
    json_t *j = NULL;
    struct flood_err e = {0};
    int seen = 0;
    if (check_api(c, "GET", "/api/v1/timelines/home?limit=40", NULL, &st, &j, &e) == 0) {
        size_t i;
        json_t *s;
        json_array_foreach(j, i, s)
        {
            const char *u = json_string_value(json_object_get(json_object_get(s, "reblog"), "uri"));
            if (u && !strcmp(u, uri))
                seen = 1;
        }
    }
    json_decref(j);
    return seen;
}

static void step_announce(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    int actors = c->crowd->opts.actors;
    int author = actors > 1 ? st->actor % actors + 1 : st->actor;
    char note[WF_URL_MAX], author_url[WF_URL_MAX];
    struct flood_err e = {0};
    if (serve_note(c, st->instance, author, NULL, note, &e) < 0) {
        check_set(r, CHECK_FAIL, "a Note", e.msg, NULL);
        return;
    }
    wf_actor_url(&c->crowd->wf, st->instance, author, author_url);
    struct wf_act_args a = args_of(c, WF_ACT_ANNOUNCE, st->instance, st->actor);
    a.object_id = note;
    a.object_author = author_url;
    char *text = serve_act(c, &a, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "an Announce", e.msg, NULL);
        return;
    }
    check_send_expect_2xx(c, r, st->instance, st->actor, text, "Announce taken");
    free(text);
    if (r->outcome != CHECK_PASS || !c->o.token)
        return;
    char *sent = flood_xstrdup(r->detail);
    char got[512];
    uint64_t end = clock_mono_us() + (uint64_t)st->ms * 1000;
    long n;
    for (;;) {
        n = reblogs(c, st->instance, author, note, got, sizeof(got));
        if (n >= 1 || clock_mono_us() >= end)
            break;
        check_sleep_ms(POLL_MS);
    }
    int home = n >= 1 && home_reblog(c, note);
    if (n >= 1)
        check_set(r, CHECK_PASS, NULL, NULL, "%s; %s; %s", sent, got,
                  home ? "a reblog in the home timeline" : "no reblog in the home timeline");
    else if (strstr(got, "no account"))
        check_set(r, CHECK_SKIP, NULL, NULL, "%s; the effect cannot be seen: %s", sent, got);
    else
        check_set(r, CHECK_FAIL, "the boosted note with reblogs_count >= 1", got, NULL);
    free(sent);
}

static void step_reply(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    char root[WF_URL_MAX], mid[WF_URL_MAX], note[WF_URL_MAX];
    struct flood_err e = {0};
    if (serve_note(c, st->instance, st->actor, NULL, root, &e) < 0 ||
        serve_note(c, st->instance, st->actor, root, mid, &e) < 0) {
        check_set(r, CHECK_FAIL, "two Notes", e.msg, NULL);
        return;
    }
    struct wf_act_args a = args_of(c, WF_ACT_CREATE, st->instance, st->actor);
    a.in_reply_to = mid;
    char *text = serve_create(c, &a, note, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Create", e.msg, NULL);
        return;
    }
    send_and_see(c, r, st, st->instance, st->actor, text, "Create(Note) in reply to 2 taken", note,
                 eff_thread, "the reply shown with its parent and grandparent fetched");
    free(text);
}

static void step_media(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    struct wf_act_args a = args_of(c, WF_ACT_CREATE, st->instance, st->actor);
    struct wf_post post = {.seed = a.from.seq, .length = 40, .vis = WF_VIS_PUBLIC, .persona = 1};
    post.n_media = 1;
    post.media[0] = (struct wf_media){
        .id = a.from.seq, .width = 16, .height = 16, .bytes = wf_media_min_bytes(16, 16)};
    a.post = &post;
    char note[WF_URL_MAX];
    struct flood_err e = {0};
    char *text = serve_create(c, &a, note, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Create", e.msg, NULL);
        return;
    }
    send_and_see(c, r, st, st->instance, st->actor, text, "Create(Note) with an Image taken", note,
                 eff_media, "media_attachments: 1");
    free(text);
}

static void step_poll(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    struct wf_act_args a = args_of(c, WF_ACT_QUESTION, st->instance, st->actor);
    struct wf_poll poll = {.n = 3, .end = a.published + 86400};
    a.poll = &poll;
    char note[WF_URL_MAX];
    struct flood_err e = {0};
    char *text = serve_create(c, &a, note, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Create(Question)", e.msg, NULL);
        return;
    }
    send_and_see(c, r, st, st->instance, st->actor, text, "Create(Question) taken", note, eff_poll,
                 "poll.options: 3");
    free(text);
}

static void step_edit(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    if (!c->note_id[0]) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the post mention before was not taken");
        return;
    }
    struct wf_act_args a = args_of(c, WF_ACT_UPDATE_NOTE, c->note_inst, c->note_actor);
    a.published = c->note_at;
    a.ref_seq = c->note_seq;
    a.updated = time(NULL) + 1; /* later than published even within the same second */
    struct flood_err e = {0};
    char *text = serve_act(c, &a, &e);
    /* the Note at its id is the edited one from now on */
    struct wf_act_args n = {.kind = WF_ACT_NOTE,
                            .from = {c->note_inst, c->note_actor, c->note_seq},
                            .p = a.p,
                            .published = c->note_at,
                            .with_context = 1,
                            .updated = a.updated};
    char *note = text ? serve_act(c, &n, &e) : NULL;
    if (!note) {
        check_set(r, CHECK_FAIL, "an Update", e.msg, NULL);
        free(text);
        return;
    }
    free(note);
    send_and_see(c, r, st, c->note_inst, c->note_actor, text, "Update(Note) taken", c->note_id,
                 eff_edited, "the content changed and edited_at set");
    free(text);
}

static void step_delete(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    if (!c->note_id[0]) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the post mention before was not taken");
        return;
    }
    char id[64] = "", got[512];
    if (c->o.token && poll_effect(c, c->note_id, st->ms, eff_shown, got, sizeof(got)) == 1) {
        const char *p = strstr(got, "status ");
        snprintf(id, sizeof(id), "%s", p ? p + 7 : "");
    }
    struct wf_act_args a = args_of(c, WF_ACT_DELETE_NOTE, c->note_inst, c->note_actor);
    a.ref_seq = c->note_seq;
    struct flood_err e = {0};
    char *text = serve_act(c, &a, &e);
    if (!text) {
        check_set(r, CHECK_FAIL, "a Delete", e.msg, NULL);
        return;
    }
    check_send_expect_2xx(c, r, c->note_inst, c->note_actor, text, "Delete(Tombstone) taken");
    free(text);
    if (r->outcome != CHECK_PASS || !c->o.token)
        return;
    c->note_id[0] = '\0'; /* gone: nothing more to edit or delete */
    char *sent = flood_xstrdup(r->detail);
    if (!id[0]) {
        check_set(r, CHECK_SKIP, NULL, NULL, "%s; the effect cannot be seen: %s", sent, got);
        free(sent);
        return;
    }
    char *path = flood_xasprintf("/api/v1/statuses/%s", id);
    uint64_t end = clock_mono_us() + (uint64_t)st->ms * 1000;
    long s = 0;
    for (;;) {
        json_t *j = NULL;
        if (check_api(c, "GET", path, NULL, &s, &j, &e) < 0)
            s = 0;
        json_decref(j);
        if (s == 404 || clock_mono_us() >= end)
            break;
        check_sleep_ms(POLL_MS);
    }
    free(path);
    if (s == 404) {
        check_set(r, CHECK_PASS, NULL, NULL, "%s; status %s gone (404)", sent, id);
    } else {
        char *g = flood_xasprintf("GET /api/v1/statuses/%s: %ld after %ld ms", id, s, st->ms);
        check_set(r, CHECK_FAIL, "404", g, NULL);
        free(g);
    }
    free(sent);
}

void check_step_traffic(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    switch (st->kind) {
    case SC_ANNOUNCE_UNSEEN:
        step_announce(c, r, st);
        break;
    case SC_REPLY_THREAD:
        step_reply(c, r, st);
        break;
    case SC_POST_MEDIA:
        step_media(c, r, st);
        break;
    case SC_POST_POLL:
        step_poll(c, r, st);
        break;
    case SC_EDIT_POST:
        step_edit(c, r, st);
        break;
    case SC_DELETE_POST:
        step_delete(c, r, st);
        break;
    default:
        check_set(r, CHECK_SKIP, NULL, NULL, "not a traffic step");
        break;
    }
}

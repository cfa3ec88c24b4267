/* flood/check/check_api.c: the steps of `flood check` that look through the persona's
 * Mastodon API: notifications, favourites, following a crowd actor. */
#include <stdlib.h>
#include <string.h>

#include "flood/check/check_internal.h"
#include "flood/core/clock.h"
#include "flood/send/target.h"

#define POLL_MS 200

/* Whether a mention notification of note_id shows: 1, 0, or -1 (API error into err). */
static int mention_seen(struct check *c, const char *note_id, struct flood_err *err)
{
    long st;
    json_t *j;
    if (check_api(c, "GET", "/api/v1/notifications?types%5B%5D=mention&limit=40", NULL, &st, &j,
                  err) < 0)
        return -1;
    int seen = 0;
    if (st != 200 || !json_is_array(j)) {
        flood_err_set(err, FLOOD_EINVAL, "GET /api/v1/notifications: %ld", st);
        json_decref(j);
        return -1;
    }
    size_t i;
    json_t *n;
    json_array_foreach(j, i, n)
    {
        const char *uri = json_string_value(json_object_get(json_object_get(n, "status"), "uri"));
        if (uri && !strcmp(uri, note_id))
            seen = 1;
    }
    json_decref(j);
    return seen;
}

/* Poll mention_seen for up to ms: 1 seen (*at_ms when), 0 not, -1 API error. */
int check_poll_mention(struct check *c, const char *note_id, long ms, double *at_ms,
                       struct flood_err *err)
{
    uint64_t t0 = clock_mono_us(), end = t0 + (uint64_t)ms * 1000;
    for (;;) {
        int s = mention_seen(c, note_id, err);
        if (s != 0) {
            if (at_ms)
                *at_ms = (double)(clock_mono_us() - t0) / 1000.0;
            return s;
        }
        if (clock_mono_us() >= end)
            return 0;
        check_sleep_ms(POLL_MS);
    }
}

static int account_id(struct check *c, struct flood_err *err)
{
    if (c->account_id)
        return 0;
    long st;
    json_t *j;
    if (check_api(c, "GET", "/api/v1/accounts/verify_credentials", NULL, &st, &j, err) < 0)
        return -1;
    const char *id = json_string_value(json_object_get(j, "id"));
    if (st == 200 && id)
        c->account_id = flood_xstrdup(id);
    else
        flood_err_set(err, FLOOD_EINVAL, "GET /api/v1/accounts/verify_credentials: %ld", st);
    json_decref(j);
    return c->account_id ? 0 : -1;
}

/* A post of the persona to like: from its outbox, else one made through the API. */
const char *check_post_to_like(struct check *c, struct flood_err *err)
{
    if (c->persona.n_posts > 0)
        return c->persona.posts[0];
    if (!c->o.token) {
        flood_err_set(err, FLOOD_ENOTFOUND,
                      "the persona's outbox shows no post, and without --token-file none can "
                      "be made");
        return NULL;
    }
    long st;
    json_t *j;
    if (check_api(c, "POST", "/api/v1/statuses",
                  "{\"status\":\"flood check: a post to like\",\"visibility\":\"public\"}", &st, &j,
                  err) < 0)
        return NULL;
    const char *uri = json_string_value(json_object_get(j, "uri"));
    if (st == 200 && uri) {
        c->persona.posts = flood_xrealloc(c->persona.posts, sizeof(char *));
        c->persona.posts[0] = flood_xstrdup(uri);
        c->persona.n_posts = 1;
    } else {
        flood_err_set(err, FLOOD_EINVAL, "POST /api/v1/statuses: %ld", st);
    }
    json_decref(j);
    return c->persona.n_posts ? c->persona.posts[0] : NULL;
}

void check_step_api_mention(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    if (!c->note_id[0]) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the post mention before was not taken");
        return;
    }
    struct flood_err e = {0};
    double at = 0;
    int s = check_poll_mention(c, c->note_id, st->ms, &at, &e);
    char exp[WF_URL_MAX + 64];
    snprintf(exp, sizeof(exp), "a mention notification of %s within %ld ms", c->note_id, st->ms);
    if (s == 1) {
        r->ms = at;
        check_set(r, CHECK_PASS, NULL, NULL, "notified after %.0f ms", at);
    } else {
        check_set(r, CHECK_FAIL, exp, s < 0 ? e.msg : "none", NULL);
    }
}

/* favourites_count of the persona's post uri: >= 0, or -1 when not found / error. */
static long favourites(struct check *c, const char *uri, struct flood_err *err)
{
    if (account_id(c, err) < 0)
        return -1;
    char *path = flood_xasprintf("/api/v1/accounts/%s/statuses?limit=40", c->account_id);
    long st, n = -1;
    json_t *j;
    int rc = check_api(c, "GET", path, NULL, &st, &j, err);
    free(path);
    if (rc < 0)
        return -1;
    size_t i;
    json_t *s;
    json_array_foreach(j, i, s)
    {
        const char *u = json_string_value(json_object_get(s, "uri"));
        if (u && !strcmp(u, uri))
            n = (long)json_integer_value(json_object_get(s, "favourites_count"));
    }
    if (n < 0)
        flood_err_set(err, FLOOD_ENOTFOUND, "the post is not among the persona's (HTTP %ld)", st);
    json_decref(j);
    return n;
}

void check_step_api_like(struct check *c, struct check_result *r, const struct scenario_step *st)
{
    if (!c->like_object) {
        check_set(r, CHECK_SKIP, NULL, NULL, "the like before was not taken");
        return;
    }
    struct flood_err e = {0};
    uint64_t t0 = clock_mono_us(), end = t0 + (uint64_t)st->ms * 1000;
    long n;
    for (;;) {
        n = favourites(c, c->like_object, &e);
        if (n >= 1 || clock_mono_us() >= end)
            break;
        check_sleep_ms(POLL_MS);
    }
    if (n >= 1) {
        r->ms = (double)(clock_mono_us() - t0) / 1000.0;
        check_set(r, CHECK_PASS, NULL, NULL, "favourites_count %ld", n);
    } else {
        char got[300];
        if (n == 0)
            snprintf(got, sizeof(got), "favourites_count 0 after %ld ms", st->ms);
        else
            snprintf(got, sizeof(got), "%s", e.msg);
        check_set(r, CHECK_FAIL, "favourites_count >= 1", got, NULL);
    }
}

void check_step_api_follow_crowd(struct check *c, struct check_result *r,
                                 const struct scenario_step *st)
{
    char host[WF_HOST_MAX], name[WF_NAME_MAX];
    wf_host(&c->crowd->wf, st->instance, host);
    wf_actor_name(st->actor, name);
    char *path = flood_xasprintf("/api/v1/accounts/lookup?acct=%s%%40%s", name, host);
    struct flood_err e = {0};
    long s;
    json_t *j = NULL;
    char *id = NULL, *got = NULL;
    int rc = check_api(c, "GET", path, NULL, &s, &j, &e);
    free(path);
    if (rc == 0 && s != 200) {
        /* Mastodon's lookup knows only accounts it has seen: search with resolve */
        json_decref(j);
        path = flood_xasprintf("/api/v2/search?q=%s%%40%s&resolve=true&type=accounts&limit=1", name,
                               host);
        rc = check_api(c, "GET", path, NULL, &s, &j, &e);
        free(path);
        if (rc == 0 && s == 200) {
            json_t *acc = json_array_get(json_object_get(j, "accounts"), 0);
            json_incref(acc);
            json_decref(j);
            j = acc;
        }
    }
    const char *sid = rc == 0 && s == 200 ? json_string_value(json_object_get(j, "id")) : NULL;
    if (!sid) {
        got = rc < 0 ? flood_xstrdup(e.msg)
                     : flood_xasprintf("HTTP %ld, no account for %s@%s", s, name, host);
        check_set(r, CHECK_FAIL, "the target resolves the crowd actor", got, NULL);
        goto out;
    }
    id = flood_xstrdup(sid);
    json_decref(j);
    j = NULL;
    uint64_t t0 = clock_mono_us(), end = t0 + (uint64_t)st->ms * 1000;
    path = flood_xasprintf("/api/v1/accounts/%s/follow", id);
    rc = check_api(c, "POST", path, "{}", &s, &j, &e);
    free(path);
    if (rc < 0 || s != 200) {
        got = rc < 0 ? flood_xstrdup(e.msg) : flood_xasprintf("HTTP %ld", s);
        check_set(r, CHECK_FAIL, "POST follow: 200", got, NULL);
        goto out;
    }
    int following = 0;
    path = flood_xasprintf("/api/v1/accounts/relationships?id%%5B%%5D=%s", id);
    for (;;) {
        json_decref(j);
        j = NULL;
        if (check_api(c, "GET", path, NULL, &s, &j, &e) == 0 && s == 200)
            following = json_is_true(json_object_get(json_array_get(j, 0), "following"));
        if (following || clock_mono_us() >= end)
            break;
        check_sleep_ms(POLL_MS);
    }
    free(path);
    if (following) {
        r->ms = (double)(clock_mono_us() - t0) / 1000.0;
        check_set(r, CHECK_PASS, NULL, NULL, "%s@%s followed, Accept honoured after %.0f ms", name,
                  host, r->ms);
        /* leave the persona as it was: a second run checks the same again */
        path = flood_xasprintf("/api/v1/accounts/%s/unfollow", id);
        json_decref(j);
        j = NULL;
        if (check_api(c, "POST", path, "{}", &s, &j, &e) < 0)
            s = 0;
        free(path);
    } else {
        got = flood_xasprintf("still not following after %ld ms", st->ms);
        check_set(r, CHECK_FAIL, "following: true", got, NULL);
    }
out:
    json_decref(j);
    free(id);
    free(got);
}

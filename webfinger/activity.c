/* webfinger/activity.c: ids, mention names, and Update(Person) with the actor revisions it
 * announces (activity_build.c holds every other builder, the historical ones too, and their
 * rules). */
#include "webfinger/activity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webfinger/media.h"
#include "webfinger/sput.h"

void wf_activity_url(const struct wf_crowd *c, int instance, int actor, uint64_t seq,
                     char out[WF_URL_MAX])
{
    char a[WF_URL_MAX];
    size_t n = 0;
    wf_actor_url(c, instance, actor, a);
    out[0] = '\0';
    wf_sput(out, WF_URL_MAX, &n, a, strnlen(a, 400));
    wf_sput(out, WF_URL_MAX, &n, "/activities/", 12);
    wf_sput_u(out, WF_URL_MAX, &n, seq);
}

void wf_note_url(const struct wf_crowd *c, int instance, int actor, uint64_t seq,
                 char out[WF_URL_MAX])
{
    char a[WF_URL_MAX];
    size_t n = 0;
    wf_actor_url(c, instance, actor, a);
    out[0] = '\0';
    wf_sput(out, WF_URL_MAX, &n, a, strnlen(a, 400));
    wf_sput(out, WF_URL_MAX, &n, "/notes/", 7);
    wf_sput_u(out, WF_URL_MAX, &n, seq);
}

void wf_iso_time(time_t t, char out[32])
{
    /* one second's stamp made once a thread: a run stamps thousands of activities in it */
    static _Thread_local time_t last_t = -1;
    static _Thread_local char last[32];
    if (t == last_t) {
        memcpy(out, last, 32);
        return;
    }
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        snprintf(out, 32, "1970-01-01T00:00:00Z");
    else
        strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
    memcpy(last, out, 32);
    last_t = t;
}

static int name_ok(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= ' ' || ch == '@' || ch == '/' || ch == 0x7f)
            return 0;
    }
    return 1;
}

int wf_mention_name(const char *acct, const char *actor_url, char out[WF_MENTION_MAX],
                    struct flood_err *err)
{
    if (acct && *acct) {
        const char *s = acct;
        if (!strncmp(s, "acct:", 5))
            s += 5;
        else if (*s == '@')
            s++;
        const char *at = strchr(s, '@');
        if (at && name_ok(s, (size_t)(at - s)) && name_ok(at + 1, strlen(at + 1)) &&
            strlen(s) + 2 <= WF_MENTION_MAX) {
            snprintf(out, WF_MENTION_MAX, "@%s", s);
            return 0;
        }
        flood_err_set(err, FLOOD_EINVAL, "activity: bad acct '%.200s' (want acct:NAME@HOST)", acct);
        return -1;
    }
    const char *u = actor_url ? strstr(actor_url, "://") : NULL;
    if (!u) {
        flood_err_set(err, FLOOD_EINVAL, "activity: bad actor URL '%.200s'",
                      actor_url ? actor_url : "(none)");
        return -1;
    }
    const char *host = u + 3;
    size_t host_len = strcspn(host, "/?#");
    const char *path_end = host + host_len + strcspn(host + host_len, "?#");
    const char *seg = path_end;
    while (seg > host + host_len && seg[-1] != '/')
        seg--;
    if (seg < path_end && *seg == '@') /* Mastodon-style profile paths: /@carol */
        seg++;
    size_t seg_len = (size_t)(path_end - seg);
    /* a userinfo part ("user@host") never names the account: refuse it */
    if (!name_ok(host, host_len) || !name_ok(seg, seg_len) ||
        seg_len + host_len + 3 > WF_MENTION_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "activity: no account name in actor URL '%.200s'",
                      actor_url);
        return -1;
    }
    snprintf(out, WF_MENTION_MAX, "@%.*s@%.*s", (int)seg_len, seg, (int)host_len, host);
    return 0;
}

/* ---- Update(Person) ---------------------------------------------------------------------- */

void wf_actor_rev_avatar(int instance, int actor, uint32_t rev, struct wf_media *m)
{
    /* ids of their own: far from wf_media_of_actor's and from the posts' drawn ids */
    uint64_t id = (UINT64_C(0xa7a7) << 48) ^ ((uint64_t)(unsigned)instance << 32) ^
                  ((uint64_t)(unsigned)actor << 12) ^ rev;
    wf_media_fit(id, WF_AVATAR_BYTES, 1, 1, m);
}

int wf_actor_revise(const struct wf_crowd *c, int instance, int actor, uint32_t rev, time_t when,
                    json_t *doc)
{
    if (!json_is_object(doc))
        return -1;
    if (rev == 0)
        return 0;
    char user[WF_NAME_MAX], name[WF_NAME_MAX + 32], url[WF_URL_MAX], t[32];
    wf_actor_name(actor, user);
    snprintf(name, sizeof(name), "%s (rev %u)", user, (unsigned)rev);
    struct wf_media m;
    wf_actor_rev_avatar(instance, actor, rev, &m);
    wf_media_url(c, instance, &m, url);
    wf_iso_time(when, t);
    int bad = json_object_set_new(doc, "name", json_string(name));
    bad |= json_object_set_new(
        doc, "icon",
        json_pack("{s:s,s:s,s:s}", "type", "Image", "mediaType", "image/png", "url", url));
    bad |= json_object_set_new(doc, "updated", json_string(t));
    return bad ? -1 : 0;
}

json_t *wf_act_update_actor(const struct wf_crowd *c, const struct wf_act_from *from,
                            const json_t *actor_doc, uint32_t rev, time_t published,
                            const char *persona_actor, struct flood_err *err)
{
    json_t *doc = json_deep_copy(actor_doc);
    if (!doc || wf_actor_revise(c, from->instance, from->actor, rev, published, doc) < 0) {
        json_decref(doc);
        flood_err_set(err, FLOOD_EINVAL, "activity: no actor document to update");
        return NULL;
    }
    json_object_del(doc, "@context"); /* the activity carries the context */
    char actor[WF_URL_MAX], id[WF_URL_MAX], when[32];
    wf_actor_url(c, from->instance, from->actor, actor);
    wf_activity_url(c, from->instance, from->actor, from->seq, id);
    wf_iso_time(published, when);
    /* Mastodon's own Update(Person): to Public; the actor's context (security terms)
     * carried by the activity so publicKey keeps its meaning, and the actor's terms beyond
     * ActivityStreams declared inline as Mastodon does (ContextHelper), or a JSON-LD
     * processor reads them as blank-node terms */
    json_t *ctx = json_object_get(actor_doc, "@context");
    json_t *context = json_is_array(ctx) ? json_deep_copy(ctx) : json_array();
    if (!json_is_array(ctx))
        json_array_append_new(
            context, json_string(json_is_string(ctx) ? json_string_value(ctx) : WF_AS_CONTEXT));
    json_array_append_new(context, json_pack("{s:s,s:s,s:s,s:s}", "manuallyApprovesFollowers",
                                             "as:manuallyApprovesFollowers", "toot",
                                             "http://joinmastodon.org/ns#", "discoverable",
                                             "toot:discoverable", "indexable", "toot:indexable"));
    json_t *j =
        json_pack("{s:o,s:s,s:s,s:s,s:s,s:[s],s:o}", "@context", context, "id", id, "type",
                  "Update", "actor", actor, "published", when, "to", WF_AS_PUBLIC, "object", doc);
    if (j && persona_actor)
        json_object_set_new(j, "cc", json_pack("[s]", persona_actor));
    if (!j)
        flood_err_set(err, FLOOD_EINVAL, "activity: cannot build the Update");
    return j;
}

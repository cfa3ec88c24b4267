/* webfinger/route.c: which document a request names. Exact paths only: no trailing slash,
 * no case folding, no percent-decoding, because an object's id must equal the URL it is
 * served at, byte for byte. */
#include "webfinger/media.h"
#include "webfinger/wf.h"

#include <string.h>

struct fixed_route {
    const char *path;
    enum wf_route_kind kind;
    int actor;
};

static const struct fixed_route fixed[] = {
    {"/.well-known/webfinger", WF_ROUTE_WEBFINGER, -1},
    {"/.well-known/host-meta", WF_ROUTE_HOST_META, -1},
    {"/.well-known/nodeinfo", WF_ROUTE_NODEINFO_WK, -1},
    {"/nodeinfo/2.0", WF_ROUTE_NODEINFO_20, -1},
    {"/nodeinfo/2.1", WF_ROUTE_NODEINFO_21, -1},
    {"/inbox", WF_ROUTE_SHARED_INBOX, -1},
    {"/actor", WF_ROUTE_ACTOR, 0},
    {"/actor/inbox", WF_ROUTE_INBOX, 0},
    {"/actor/outbox", WF_ROUTE_OUTBOX, 0},
    {"/actor/main-key", WF_ROUTE_KEY, 0},
    {"/actor/avatar.png", WF_ROUTE_AVATAR, 0},
    {"/actor/header.png", WF_ROUTE_HEADER, 0},
};

/* After /users/NAME. */
static const struct fixed_route per_actor[] = {
    {"", WF_ROUTE_ACTOR, 0},
    {"/inbox", WF_ROUTE_INBOX, 0},
    {"/outbox", WF_ROUTE_OUTBOX, 0},
    {"/followers", WF_ROUTE_FOLLOWERS, 0},
    {"/following", WF_ROUTE_FOLLOWING, 0},
    {"/main-key", WF_ROUTE_KEY, 0},
    {"/avatar.png", WF_ROUTE_AVATAR, 0},
    {"/header.png", WF_ROUTE_HEADER, 0},
};

/* The image an avatar or header route serves. */
static void actor_image(struct wf_route *out)
{
    if (out->kind == WF_ROUTE_AVATAR || out->kind == WF_ROUTE_HEADER)
        wf_media_of_actor(out->instance, out->actor, out->kind == WF_ROUTE_AVATAR, &out->media);
}

static int is(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len == n && memcmp(s, lit, n) == 0;
}

static int starts(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len >= n && memcmp(s, lit, n) == 0;
}

/* A sequence number: decimal digits, no sign, no leading zero (but "0"), at most
 * UINT64_MAX. 0 and *v, or -1. */
static int parse_seq(const char *s, size_t len, uint64_t *v)
{
    if (len == 0 || len > 20 || (s[0] == '0' && len > 1))
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

static int route_media(const char *name, size_t len, struct wf_route *out)
{
    if (wf_media_parse(name, len, &out->media) < 0)
        return 404;
    out->kind = WF_ROUTE_MEDIA;
    return 0;
}

int wf_route_path(const struct wf_crowd *c, int instance, const char *path, size_t len,
                  struct wf_route *out)
{
    out->kind = WF_ROUTE_NONE;
    out->instance = instance;
    out->actor = -1;
    out->seq = 0;
    out->media = (struct wf_media){0};
    if (!path)
        return 404;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (is(path, len, fixed[i].path)) {
            out->kind = fixed[i].kind;
            out->actor = fixed[i].actor;
            actor_image(out);
            return 0;
        }
    }
    if (starts(path, len, "/media/"))
        return route_media(path + 7, len - 7, out);
    if (starts(path, len, "/pages/")) {
        if (parse_seq(path + 7, len - 7, &out->seq) < 0)
            return 404;
        out->kind = WF_ROUTE_PAGE;
        return 0;
    }
    if (starts(path, len, "/emoji/")) {
        char name[WF_EMOJI_NAME_MAX];
        if (wf_emoji_name_ok(path + 7, len - 7)) {
            out->kind = WF_ROUTE_EMOJI_DOC;
            return 0;
        }
        if (wf_emoji_parse(path + 7, len - 7, name) < 0)
            return 404;
        out->kind = WF_ROUTE_EMOJI;
        wf_media_of_emoji(name, &out->media);
        return 0;
    }
    if (!starts(path, len, "/users/"))
        return 404;
    const char *name = path + 7;
    size_t rest = len - 7;
    const char *slash = memchr(name, '/', rest);
    size_t name_len = slash ? (size_t)(slash - name) : rest;
    int actor = wf_actor_of_name(c, name, name_len);
    if (actor == 0)
        return 404;
    const char *tail = name + name_len;
    size_t tail_len = rest - name_len;
    for (size_t i = 0; i < sizeof(per_actor) / sizeof(per_actor[0]); i++) {
        if (is(tail, tail_len, per_actor[i].path)) {
            out->kind = per_actor[i].kind;
            out->actor = actor;
            actor_image(out);
            return 0;
        }
    }
    enum wf_route_kind kind;
    size_t skip;
    if (starts(tail, tail_len, "/notes/")) {
        kind = WF_ROUTE_NOTE;
        skip = 7;
    } else if (starts(tail, tail_len, "/activities/")) {
        kind = WF_ROUTE_ACTIVITY;
        skip = 12;
    } else {
        return 404;
    }
    uint64_t seq;
    if (parse_seq(tail + skip, tail_len - skip, &seq) < 0)
        return 404;
    out->kind = kind;
    out->actor = actor;
    out->seq = seq;
    return 0;
}

int wf_route(const struct wf_crowd *c, const char *host, const char *path, struct wf_route *out)
{
    out->kind = WF_ROUTE_NONE;
    out->instance = 0;
    out->actor = -1;
    out->seq = 0;
    out->media = (struct wf_media){0};
    int instance = wf_instance_of_host(c, host);
    if (instance == 0)
        return 421;
    return wf_route_path(c, instance, path, path ? strlen(path) : 0, out);
}

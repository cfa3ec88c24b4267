/* webfinger/jrd.c: WebFinger (RFC 7033) and host-meta (RFC 6415).
 *
 * The instance actor answers as acct:HOST@HOST, as Mastodon's does (its preferredUsername
 * is the local domain): a host name matches Mastodon's username pattern
 * [a-z0-9_]+([.-]+[a-z0-9_]+)* and Misskey's ^\w([\w-.]*\w)?$, and the mapping needs no
 * reserved name that could collide with "user<j>". */
#include "webfinger/wf.h"

#include <stdlib.h>
#include <string.h>

#define WF_RESOURCE_MAX 512
#define WF_USERNAME_MAX 128 /* Misskey's limit; Mastodon's is 30 for local accounts */

static char lower(char ch)
{
    return (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
}

static int is_word(char ch)
{
    ch = lower(ch);
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* Mastodon's username pattern [a-z0-9_]+([.-]+[a-z0-9_]+)* (case-insensitive). */
static int valid_username(const char *s, size_t len)
{
    if (len == 0 || len > WF_USERNAME_MAX || !is_word(s[0]) || !is_word(s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_word(s[i]) && s[i] != '.' && s[i] != '-')
            return 0;
    return 1;
}

/* HOST[:PORT] with host name characters only; whether it is ours comes after. */
static int valid_authority(const char *s, size_t len)
{
    if (len == 0 || len > WF_HOST_MAX + 6)
        return 0;
    size_t i = 0;
    for (; i < len && s[i] != ':'; i++)
        if ((!is_word(s[i]) || s[i] == '_') && s[i] != '.' && s[i] != '-')
            return 0;
    if (i == 0)
        return 0;
    if (i < len) {
        if (i + 1 == len)
            return 0;
        for (i++; i < len; i++)
            if (s[i] < '0' || s[i] > '9')
                return 0;
    }
    return 1;
}

static int starts_ci(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len < n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != lit[i])
            return 0;
    return 1;
}

static void jrd(const struct wf_crowd *c, int instance, int actor, struct wf_doc *out)
{
    char host[WF_HOST_MAX], id[WF_URL_MAX], name[WF_NAME_MAX];
    wf_host(c, instance, host);
    wf_actor_url(c, instance, actor, id);
    name[0] = '\0';
    if (actor > 0)
        wf_actor_name(actor, name);
    /* The subject carries no port: Mastodon drops it from acct: handles. The instance
     * actor's username is the host name (see the top of this file). */
    char *subject = flood_xasprintf("acct:%s@%s", actor > 0 ? name : host, host);
    json_t *j =
        json_pack("{s:s, s:[s], s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "subject", subject,
                  "aliases", id, "links", "rel", "self", "type", WF_CT_ACTIVITY, "href", id, "rel",
                  "http://webfinger.net/rel/profile-page", "type", "text/html", "href", id);
    free(subject);
    wf_doc_json_steal(200, WF_CT_JRD, j, out);
}

static void by_acct(const struct wf_crowd *c, int instance, const char *s, size_t len,
                    struct wf_doc *out)
{
    const char *at = memchr(s, '@', len);
    if (!at) {
        wf_error(400, "webfinger: an acct: resource needs NAME@HOST", out);
        return;
    }
    size_t user_len = (size_t)(at - s);
    const char *authority = at + 1;
    size_t auth_len = len - user_len - 1;
    if (!valid_username(s, user_len)) {
        wf_error(400, "webfinger: the resource's username is not [a-z0-9_]+([.-]+[a-z0-9_]+)*",
                 out);
        return;
    }
    if (!valid_authority(authority, auth_len)) {
        wf_error(400, "webfinger: the resource's host is not a host name", out);
        return;
    }
    if (wf_instance_of_host_n(c, authority, auth_len, WF_PORT_PUBLIC) != instance) {
        wf_error(404, "webfinger: the resource names another host", out);
        return;
    }
    /* Usernames compare case-insensitively, as Mastodon's own lookup does; the subject
     * answered is the canonical lower-case one. */
    char user[WF_USERNAME_MAX];
    for (size_t i = 0; i < user_len; i++)
        user[i] = lower(s[i]);
    char host[WF_HOST_MAX];
    wf_host(c, instance, host);
    int actor;
    if (user_len == strlen(host) && memcmp(user, host, user_len) == 0)
        actor = 0;
    else if ((actor = wf_actor_of_name(c, user, user_len)) == 0) {
        wf_error(404, "webfinger: no such account", out);
        return;
    }
    jrd(c, instance, actor, out);
}

/* An actor URL must be an actor id exactly: same scheme, host and port spelling. */
static void by_url(const struct wf_crowd *c, int instance, const char *s, size_t len,
                   struct wf_doc *out)
{
    char base[WF_URL_MAX];
    wf_base_url(c, instance, base);
    size_t base_len = strlen(base);
    struct wf_route r;
    if (len <= base_len || memcmp(s, base, base_len) != 0 ||
        wf_route_path(c, instance, s + base_len, len - base_len, &r) != 0 ||
        r.kind != WF_ROUTE_ACTOR) {
        wf_error(404, "webfinger: no such actor", out);
        return;
    }
    jrd(c, instance, r.actor, out);
}

void wf_webfinger_n(const struct wf_crowd *c, int instance, const char *resource, size_t len,
                    struct wf_doc *out)
{
    if (!resource) {
        wf_error(400, "webfinger: missing resource parameter", out);
        return;
    }
    if (len == 0) {
        wf_error(400, "webfinger: empty resource", out);
        return;
    }
    if (len > WF_RESOURCE_MAX) {
        wf_error(400, "webfinger: resource longer than 512 bytes", out);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)resource[i];
        if (ch <= 0x20 || ch >= 0x7f) {
            wf_error(400, "webfinger: resource holds a space, control or non-ASCII byte", out);
            return;
        }
    }
    if (instance < 1 || instance > c->instances) {
        wf_error(404, "webfinger: no such instance", out);
        return;
    }
    /* URI schemes are case-insensitive (RFC 3986 3.1). */
    if (starts_ci(resource, len, "acct:"))
        by_acct(c, instance, resource + 5, len - 5, out);
    else if (starts_ci(resource, len, "https://") || starts_ci(resource, len, "http://"))
        by_url(c, instance, resource, len, out);
    else
        wf_error(400, "webfinger: resource must be acct:NAME@HOST or an actor URL", out);
}

void wf_webfinger(const struct wf_crowd *c, int instance, const char *resource, struct wf_doc *out)
{
    wf_webfinger_n(c, instance, resource, resource ? strlen(resource) : 0, out);
}

/* RFC 6415 section 3: the lrdd template points at WebFinger, as Mastodon's does. */
void wf_host_meta(const struct wf_crowd *c, int instance, struct wf_doc *out)
{
    char base[WF_URL_MAX];
    wf_base_url(c, instance, base);
    out->status = 200;
    out->content_type = WF_CT_XRD;
    out->body = flood_xasprintf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                "<XRD xmlns=\"http://docs.oasis-open.org/ns/xri/xrd-1.0\">\n"
                                "  <Link rel=\"lrdd\" template=\"%s/.well-known/webfinger?"
                                "resource={uri}\"/>\n"
                                "</XRD>\n",
                                base);
    out->len = strlen(out->body);
}

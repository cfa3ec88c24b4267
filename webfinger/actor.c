/* webfinger/actor.c: actor documents. A Person per "user<j>", an Application for the
 * instance actor, each with what Mastodon, Misskey, GoToSocial and Fedify read.
 *
 * Big crowds render actors on every GET, so this file writes the JSON itself instead of
 * building a jansson tree: jansson takes about 30 us for this document, the writer below
 * a few. The output is byte for byte what json_dumps(JSON_COMPACT) gives for the
 * same members in the same order (the golden files check it). */
#include "webfinger/media.h"
#include "webfinger/wf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AS_CONTEXT       "https://www.w3.org/ns/activitystreams"
#define SEC_CONTEXT      "https://w3id.org/security/v1"
#define MULTIKEY_CONTEXT "https://w3id.org/security/multikey/v1"
/* Fixed so a document is a pure function of the crowd: it never changes across runs. */
#define WF_PUBLISHED "2024-01-01T00:00:00Z"

/* A growing output buffer; bad is set when a string cannot be written as JSON. */
struct jw {
    char *buf;
    size_t len, cap;
    int bad;
};

static void jw_raw(struct jw *w, const char *s, size_t n)
{
    if (w->len + n + 1 > w->cap) {
        while (w->len + n + 1 > w->cap)
            w->cap *= 2;
        w->buf = flood_xrealloc(w->buf, w->cap);
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void jw_lit(struct jw *w, const char *s)
{
    jw_raw(w, s, strlen(s));
}

/* A JSON string, escaped as jansson escapes it: '"', '\\', the short forms \b \f \n \r
 * \t and \u00XX for the other control bytes. Only ASCII is accepted: every string here
 * is a URL, a host, a PEM or a multibase key, and none of those holds anything else. */
static void jw_str(struct jw *w, const char *s)
{
    jw_raw(w, "\"", 1);
    const char *run = s;
    for (;; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x20 && ch != '"' && ch != '\\' && ch < 0x80)
            continue;
        jw_raw(w, run, (size_t)(s - run));
        run = s + 1;
        if (ch == '\0')
            break;
        char esc[8];
        switch (ch) {
        case '"':
            jw_raw(w, "\\\"", 2);
            break;
        case '\\':
            jw_raw(w, "\\\\", 2);
            break;
        case '\b':
            jw_raw(w, "\\b", 2);
            break;
        case '\f':
            jw_raw(w, "\\f", 2);
            break;
        case '\n':
            jw_raw(w, "\\n", 2);
            break;
        case '\r':
            jw_raw(w, "\\r", 2);
            break;
        case '\t':
            jw_raw(w, "\\t", 2);
            break;
        default:
            if (ch >= 0x80) {
                w->bad = 1;
            } else {
                snprintf(esc, sizeof(esc), "\\u%04X", ch);
                jw_raw(w, esc, 6);
            }
        }
    }
    jw_raw(w, "\"", 1);
}

/* ,"key":"value" */
static void jw_member(struct jw *w, const char *key, const char *value)
{
    jw_raw(w, ",\"", 2);
    jw_lit(w, key);
    jw_raw(w, "\":", 2);
    jw_str(w, value);
}

/* ,"key":"<a><b>" for a URL and a suffix, without a temporary buffer. */
static void jw_member2(struct jw *w, const char *key, const char *a, const char *b)
{
    jw_raw(w, ",\"", 2);
    jw_lit(w, key);
    jw_raw(w, "\":\"", 3);
    jw_lit(w, a); /* our own URLs: nothing to escape (checked host, fixed paths) */
    jw_lit(w, b);
    jw_raw(w, "\"", 1);
}

/* Misskey, snac and Akkoma reject a publicKey array: one object. FEP-521a adds the
 * Ed25519 key as an assertionMethod Multikey beside it. */
static void jw_keys(struct jw *w, const char *id, const struct wf_key_info *key)
{
    if (!key || !key->public_pem)
        return;
    jw_lit(w, ",\"publicKey\":{\"id\":\"");
    jw_lit(w, id);
    jw_lit(w, "#main-key\"");
    jw_member(w, "owner", id);
    jw_member(w, "publicKeyPem", key->public_pem);
    jw_lit(w, "}");
    if (key->ed25519_multibase) {
        jw_lit(w, ",\"assertionMethod\":[{\"id\":\"");
        jw_lit(w, id);
        jw_lit(w, "#ed25519-key\",\"type\":\"Multikey\"");
        jw_member(w, "controller", id);
        jw_member(w, "publicKeyMultibase", key->ed25519_multibase);
        jw_lit(w, "}]");
    }
}

/* ,"icon":{...} or ,"image":{...}: the avatar or header (Mastodon reads url, and
 * mediaType when the URL has no extension it knows). */
static void jw_image(struct jw *w, const struct wf_crowd *c, int instance, int actor, int avatar)
{
    char url[WF_URL_MAX];
    wf_avatar_url(c, instance, actor, avatar, url);
    jw_lit(w, avatar ? ",\"icon\":{\"type\":\"Image\",\"mediaType\":\"image/png\""
                     : ",\"image\":{\"type\":\"Image\",\"mediaType\":\"image/png\"");
    jw_member(w, "url", url);
    jw_lit(w, "}");
}

void wf_actor(const struct wf_crowd *c, int instance, int actor, const struct wf_key_info *key,
              struct wf_doc *out)
{
    if (instance < 1 || instance > c->instances || actor < 0 || actor > c->actors) {
        wf_error(404, "webfinger: no such actor", out);
        return;
    }
    char host[WF_HOST_MAX], base[WF_URL_MAX], id[WF_URL_MAX], name[WF_NAME_MAX];
    wf_host(c, instance, host);
    wf_base_url(c, instance, base);
    wf_actor_url(c, instance, actor, id);
    size_t key_len = 0;
    if (key && key->public_pem)
        key_len += strlen(key->public_pem);
    if (key && key->ed25519_multibase)
        key_len += strlen(key->ed25519_multibase);
    struct jw w = {.cap = 2048 + 2 * key_len};
    w.buf = flood_xmalloc(w.cap);

    int multikey = key && key->public_pem && key->ed25519_multibase;
    jw_lit(&w, multikey ? "{\"@context\":[\"" AS_CONTEXT "\",\"" SEC_CONTEXT
                          "\",\"" MULTIKEY_CONTEXT "\"]"
                        : "{\"@context\":[\"" AS_CONTEXT "\",\"" SEC_CONTEXT "\"]");
    jw_member(&w, "id", id);
    if (actor == 0) {
        /* Mastodon's instance actor: an Application named after the domain. */
        jw_member(&w, "type", "Application");
        jw_member(&w, "preferredUsername", host);
        jw_member(&w, "name", host);
        jw_member2(&w, "summary", "The instance actor of ", host);
        w.len--; /* reopen the string to finish the sentence */
        jw_lit(&w, ", a flood test instance.\"");
    } else {
        wf_actor_name(actor, name);
        jw_member(&w, "type", "Person");
        jw_member(&w, "preferredUsername", name);
        jw_member(&w, "name", name);
        jw_member2(&w, "summary", "A flood test account on ", host);
        w.len--;
        jw_lit(&w, ".\"");
    }
    /* url on the actor's own host: GoToSocial accepts a fetched URL equal to id or url. */
    jw_member(&w, "url", id);
    jw_member2(&w, "inbox", id, "/inbox");
    jw_member2(&w, "outbox", id, "/outbox");
    if (actor > 0) {
        jw_member2(&w, "followers", id, "/followers");
        jw_member2(&w, "following", id, "/following");
    }
    jw_lit(&w, ",\"endpoints\":{\"sharedInbox\":\"");
    jw_lit(&w, base);
    jw_lit(&w, "/inbox\"}");
    /* The instance actor follows no one and is not a person to find or index. */
    jw_lit(&w, actor == 0 ? ",\"manuallyApprovesFollowers\":true,\"discoverable\":false,"
                            "\"indexable\":false"
                          : ",\"manuallyApprovesFollowers\":false,\"discoverable\":true,"
                            "\"indexable\":true");
    jw_member(&w, "published", WF_PUBLISHED);
    if (actor > 0) {
        jw_image(&w, c, instance, actor, 1);
        jw_image(&w, c, instance, actor, 0);
    }
    jw_keys(&w, id, key);
    jw_lit(&w, "}");
    if (w.bad) {
        free(w.buf);
        wf_error(500, "webfinger: key material is not ASCII", out);
        return;
    }
    out->status = 200;
    out->content_type = WF_CT_ACTIVITY;
    out->body = w.buf;
    out->len = w.len;
}

void wf_key_doc(const struct wf_crowd *c, int instance, int actor, const struct wf_key_info *key,
                struct wf_doc *out)
{
    if (instance < 1 || instance > c->instances || actor < 0 || actor > c->actors || !key ||
        !key->public_pem) {
        wf_error(404, "webfinger: no such key", out);
        return;
    }
    char id[WF_URL_MAX];
    wf_actor_url(c, instance, actor, id);
    struct jw w = {.cap = 1024 + strlen(key->public_pem)};
    w.buf = flood_xmalloc(w.cap);
    jw_lit(&w, "{\"@context\":\"" SEC_CONTEXT "\"");
    jw_member2(&w, "id", id, "/main-key");
    jw_member(&w, "type", "Key");
    jw_member(&w, "owner", id);
    jw_member(&w, "publicKeyPem", key->public_pem);
    jw_lit(&w, "}");
    if (w.bad) {
        free(w.buf);
        wf_error(500, "webfinger: key material is not ASCII", out);
        return;
    }
    out->status = 200;
    out->content_type = WF_CT_ACTIVITY;
    out->body = w.buf;
    out->len = w.len;
}

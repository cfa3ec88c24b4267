/* webfinger/activity.c: Create(Note), Like, Follow and Undo(Follow) as pure functions.
 * Every rule here comes from INTEROP.md ("Activities"): the Note on the actor's host and
 * attributedTo it, the persona in cc with a Mention tag whose href is its actor (Mastodon
 * drops an unrelated Create and notifies only on a Mention), the Undo's Follow embedded. */
#include "webfinger/activity.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wf_activity_url(const struct wf_crowd *c, int instance, int actor, uint64_t seq,
                     char out[WF_URL_MAX])
{
    char a[WF_URL_MAX];
    wf_actor_url(c, instance, actor, a);
    snprintf(out, WF_URL_MAX, "%.400s/activities/%" PRIu64, a, seq);
}

void wf_note_url(const struct wf_crowd *c, int instance, int actor, uint64_t seq,
                 char out[WF_URL_MAX])
{
    char a[WF_URL_MAX];
    wf_actor_url(c, instance, actor, a);
    snprintf(out, WF_URL_MAX, "%.400s/notes/%" PRIu64, a, seq);
}

void wf_iso_time(time_t t, char out[32])
{
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, 32, "1970-01-01T00:00:00Z");
        return;
    }
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
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

/* Append s to buf HTML-escaped (the persona's URL and name come from the network). */
static void html_escape(char *buf, size_t size, size_t *len, const char *s)
{
    for (; *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            break;
        }
        size_t n = rep ? strlen(rep) : 1;
        if (*len + n + 1 > size)
            return;
        if (rep)
            memcpy(buf + *len, rep, n);
        else
            buf[*len] = *s;
        *len += n;
        buf[*len] = '\0';
    }
}

static void append(char *buf, size_t size, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > size)
        n = size - *len - 1;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
}

static json_t *fail(json_t *j, const char *what, struct flood_err *err)
{
    json_decref(j);
    flood_err_set(err, FLOOD_EINVAL, "activity: cannot build the %s (a value is not UTF-8?)", what);
    return NULL;
}

static int check_ref(const struct wf_persona_ref *p, struct flood_err *err)
{
    if (!p || !p->actor || !p->mention) {
        flood_err_set(err, FLOOD_EINVAL, "activity: persona without actor or mention name");
        return -1;
    }
    return 0;
}

json_t *wf_act_note(const struct wf_crowd *c, const struct wf_act_from *from,
                    const struct wf_persona_ref *p, time_t published, int with_context,
                    struct flood_err *err)
{
    if (check_ref(p, err) < 0)
        return NULL;
    char actor[WF_URL_MAX], id[WF_URL_MAX], followers[WF_URL_MAX + 16], when[32];
    wf_actor_url(c, from->instance, from->actor, actor);
    wf_note_url(c, from->instance, from->actor, from->seq, id);
    snprintf(followers, sizeof(followers), "%s/followers", actor);
    wf_iso_time(published, when);

    char content[2048];
    size_t len = 0;
    content[0] = '\0';
    append(content, sizeof(content), &len, "<p><span class=\"h-card\"><a href=\"");
    html_escape(content, sizeof(content), &len, p->actor);
    append(content, sizeof(content), &len, "\" class=\"u-url mention\">");
    html_escape(content, sizeof(content), &len, p->mention);
    char tail[64];
    snprintf(tail, sizeof(tail), "</a></span> flood note %" PRIu64 "</p>", from->seq);
    append(content, sizeof(content), &len, tail);

    json_t *j = json_object();
    if (!j)
        return fail(NULL, "note", err);
    int bad = 0;
    if (with_context)
        bad |= json_object_set_new(j, "@context", json_string(WF_AS_CONTEXT));
    bad |= json_object_set_new(j, "id", json_string(id));
    bad |= json_object_set_new(j, "type", json_string("Note"));
    bad |= json_object_set_new(j, "attributedTo", json_string(actor));
    bad |= json_object_set_new(j, "content", json_string(content));
    bad |= json_object_set_new(j, "published", json_string(when));
    bad |= json_object_set_new(j, "to", json_pack("[s]", WF_AS_PUBLIC));
    bad |= json_object_set_new(j, "cc", json_pack("[s,s]", p->actor, followers));
    bad |= json_object_set_new(
        j, "tag",
        json_pack("[{s:s,s:s,s:s}]", "type", "Mention", "href", p->actor, "name", p->mention));
    return bad ? fail(j, "note", err) : j;
}

json_t *wf_act_create(const struct wf_crowd *c, const struct wf_act_from *from,
                      const struct wf_persona_ref *p, time_t published, struct flood_err *err)
{
    json_t *note = wf_act_note(c, from, p, published, 0, err);
    if (!note)
        return NULL;
    char actor[WF_URL_MAX], id[WF_URL_MAX], when[32];
    wf_actor_url(c, from->instance, from->actor, actor);
    wf_activity_url(c, from->instance, from->actor, from->seq, id);
    wf_iso_time(published, when);
    json_t *j = json_object();
    if (!j) {
        json_decref(note);
        return fail(NULL, "create", err);
    }
    int bad = 0;
    bad |= json_object_set_new(j, "@context", json_string(WF_AS_CONTEXT));
    bad |= json_object_set_new(j, "id", json_string(id));
    bad |= json_object_set_new(j, "type", json_string("Create"));
    bad |= json_object_set_new(j, "actor", json_string(actor));
    bad |= json_object_set_new(j, "published", json_string(when));
    bad |= json_object_set(j, "to", json_object_get(note, "to"));
    bad |= json_object_set(j, "cc", json_object_get(note, "cc"));
    bad |= json_object_set_new(j, "object", note);
    return bad ? fail(j, "create", err) : j;
}

json_t *wf_act_like(const struct wf_crowd *c, const struct wf_act_from *from,
                    const struct wf_persona_ref *p, const char *object_id, struct flood_err *err)
{
    if (check_ref(p, err) < 0)
        return NULL;
    if (!object_id || !*object_id) {
        flood_err_set(err, FLOOD_EINVAL, "activity: a Like needs an object id");
        return NULL;
    }
    char actor[WF_URL_MAX], id[WF_URL_MAX];
    wf_actor_url(c, from->instance, from->actor, actor);
    wf_activity_url(c, from->instance, from->actor, from->seq, id);
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:[s]}", "@context", WF_AS_CONTEXT, "id", id,
                          "type", "Like", "actor", actor, "object", object_id, "to", p->actor);
    return j ? j : fail(NULL, "like", err);
}

json_t *wf_act_follow(const struct wf_crowd *c, const struct wf_act_from *from,
                      const struct wf_persona_ref *p, int with_context, struct flood_err *err)
{
    if (check_ref(p, err) < 0)
        return NULL;
    char actor[WF_URL_MAX], id[WF_URL_MAX];
    wf_actor_url(c, from->instance, from->actor, actor);
    wf_activity_url(c, from->instance, from->actor, from->seq, id);
    json_t *j = json_object();
    if (!j)
        return fail(NULL, "follow", err);
    int bad = 0;
    if (with_context)
        bad |= json_object_set_new(j, "@context", json_string(WF_AS_CONTEXT));
    bad |= json_object_set_new(j, "id", json_string(id));
    bad |= json_object_set_new(j, "type", json_string("Follow"));
    bad |= json_object_set_new(j, "actor", json_string(actor));
    bad |= json_object_set_new(j, "object", json_string(p->actor));
    return bad ? fail(j, "follow", err) : j;
}

json_t *wf_act_undo_follow(const struct wf_crowd *c, const struct wf_act_from *from,
                           uint64_t follow_seq, const struct wf_persona_ref *p,
                           struct flood_err *err)
{
    struct wf_act_from f = *from;
    f.seq = follow_seq;
    json_t *follow = wf_act_follow(c, &f, p, 0, err);
    if (!follow)
        return NULL;
    char actor[WF_URL_MAX], id[WF_URL_MAX];
    wf_actor_url(c, from->instance, from->actor, actor);
    wf_activity_url(c, from->instance, from->actor, from->seq, id);
    json_t *j = json_object();
    if (!j) {
        json_decref(follow);
        return fail(NULL, "undo", err);
    }
    int bad = 0;
    bad |= json_object_set_new(j, "@context", json_string(WF_AS_CONTEXT));
    bad |= json_object_set_new(j, "id", json_string(id));
    bad |= json_object_set_new(j, "type", json_string("Undo"));
    bad |= json_object_set_new(j, "actor", json_string(actor));
    bad |= json_object_set_new(j, "object", follow);
    return bad ? fail(j, "undo", err) : j;
}

/* ---- text writer ------------------------------------------------------------------------ */

struct sb {
    char *p;
    size_t len, cap;
};

static void sb_need(struct sb *b, size_t n)
{
    if (b->len + n + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1024;
    while (b->len + n + 1 > cap)
        cap *= 2;
    b->p = flood_xrealloc(b->p, cap);
    b->cap = cap;
}

static void sb_raw(struct sb *b, const char *s)
{
    size_t n = strlen(s);
    sb_need(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* Length of the UTF-8 sequence at s (1..4), or 0 when it is not valid UTF-8 (overlong
 * forms, surrogates and code points over U+10FFFF refused, as jansson does). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* A JSON string, escaped as jansson's compact dump does (no slash escaping, UTF-8 kept). */
static int sb_str(struct sb *b, const char *s)
{
    size_t n = strlen(s);
    sb_need(b, n + 2);
    b->p[b->len++] = '"';
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        /* a run of printable ASCII needing no escape, copied at once */
        const unsigned char *run = u;
        while (*u >= 0x20 && *u < 0x80 && *u != '"' && *u != '\\')
            u++;
        if (u > run) {
            sb_need(b, (size_t)(u - run) + 1);
            memcpy(b->p + b->len, run, (size_t)(u - run));
            b->len += (size_t)(u - run);
            continue;
        }
        size_t k = utf8_len(u);
        if (k == 0)
            return -1;
        if (k > 1) {
            sb_need(b, k + 1);
            memcpy(b->p + b->len, u, k);
            b->len += k;
            u += k;
            continue;
        }
        char esc[8];
        switch (*u) {
        case '"':
            memcpy(esc, "\\\"", 3);
            break;
        case '\\':
            memcpy(esc, "\\\\", 3);
            break;
        case '\b':
            memcpy(esc, "\\b", 3);
            break;
        case '\f':
            memcpy(esc, "\\f", 3);
            break;
        case '\n':
            memcpy(esc, "\\n", 3);
            break;
        case '\r':
            memcpy(esc, "\\r", 3);
            break;
        case '\t':
            memcpy(esc, "\\t", 3);
            break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04X", *u);
        }
        sb_raw(b, esc);
        u++;
    }
    sb_need(b, 1);
    b->p[b->len++] = '"';
    b->p[b->len] = '\0';
    return 0;
}

/* "key":"value" with a leading comma unless first. */
static int sb_kv(struct sb *b, const char *key, const char *value, int first)
{
    if (!first)
        sb_raw(b, ",");
    sb_raw(b, "\"");
    sb_raw(b, key);
    sb_raw(b, "\":");
    return sb_str(b, value);
}

static int write_note(struct sb *b, const struct wf_crowd *c, const struct wf_act_args *a,
                      int with_context)
{
    char actor[WF_URL_MAX], id[WF_URL_MAX], followers[WF_URL_MAX + 16], when[32];
    wf_actor_url(c, a->from.instance, a->from.actor, actor);
    wf_note_url(c, a->from.instance, a->from.actor, a->from.seq, id);
    snprintf(followers, sizeof(followers), "%s/followers", actor);
    wf_iso_time(a->published, when);
    char content[2048];
    size_t len = 0;
    content[0] = '\0';
    append(content, sizeof(content), &len, "<p><span class=\"h-card\"><a href=\"");
    html_escape(content, sizeof(content), &len, a->p.actor);
    append(content, sizeof(content), &len, "\" class=\"u-url mention\">");
    html_escape(content, sizeof(content), &len, a->p.mention);
    char tail[64];
    snprintf(tail, sizeof(tail), "</a></span> flood note %" PRIu64 "</p>", a->from.seq);
    append(content, sizeof(content), &len, tail);

    int bad = 0;
    sb_raw(b, "{");
    if (with_context)
        bad |= sb_kv(b, "@context", WF_AS_CONTEXT, 1);
    bad |= sb_kv(b, "id", id, !with_context);
    bad |= sb_kv(b, "type", "Note", 0);
    bad |= sb_kv(b, "attributedTo", actor, 0);
    bad |= sb_kv(b, "content", content, 0);
    bad |= sb_kv(b, "published", when, 0);
    sb_raw(b, ",\"to\":[\"" WF_AS_PUBLIC "\"],\"cc\":[");
    bad |= sb_str(b, a->p.actor);
    sb_raw(b, ",");
    bad |= sb_str(b, followers);
    sb_raw(b, "],\"tag\":[{\"type\":\"Mention\"");
    bad |= sb_kv(b, "href", a->p.actor, 0);
    bad |= sb_kv(b, "name", a->p.mention, 0);
    sb_raw(b, "}]}");
    return bad ? -1 : 0;
}

static int write_follow(struct sb *b, const struct wf_crowd *c, const struct wf_act_from *from,
                        const struct wf_persona_ref *p, int with_context)
{
    char actor[WF_URL_MAX], id[WF_URL_MAX];
    wf_actor_url(c, from->instance, from->actor, actor);
    wf_activity_url(c, from->instance, from->actor, from->seq, id);
    int bad = 0;
    sb_raw(b, "{");
    if (with_context)
        bad |= sb_kv(b, "@context", WF_AS_CONTEXT, 1);
    bad |= sb_kv(b, "id", id, !with_context);
    bad |= sb_kv(b, "type", "Follow", 0);
    bad |= sb_kv(b, "actor", actor, 0);
    bad |= sb_kv(b, "object", p->actor, 0);
    sb_raw(b, "}");
    return bad ? -1 : 0;
}

char *wf_act_text(const struct wf_crowd *c, const struct wf_act_args *a, size_t *len,
                  struct flood_err *err)
{
    if (check_ref(&a->p, err) < 0)
        return NULL;
    if (a->kind == WF_ACT_LIKE && (!a->object_id || !*a->object_id)) {
        flood_err_set(err, FLOOD_EINVAL, "activity: a Like needs an object id");
        return NULL;
    }
    struct sb b = {0};
    sb_need(&b, 1500);
    int bad = 0;
    char actor[WF_URL_MAX], id[WF_URL_MAX], when[32];
    wf_actor_url(c, a->from.instance, a->from.actor, actor);
    wf_activity_url(c, a->from.instance, a->from.actor, a->from.seq, id);
    switch (a->kind) {
    case WF_ACT_NOTE:
        bad = write_note(&b, c, a, a->with_context);
        break;
    case WF_ACT_FOLLOW:
        bad = write_follow(&b, c, &a->from, &a->p, a->with_context);
        break;
    case WF_ACT_CREATE: {
        char followers[WF_URL_MAX + 16];
        snprintf(followers, sizeof(followers), "%s/followers", actor);
        wf_iso_time(a->published, when);
        sb_raw(&b, "{");
        bad |= sb_kv(&b, "@context", WF_AS_CONTEXT, 1);
        bad |= sb_kv(&b, "id", id, 0);
        bad |= sb_kv(&b, "type", "Create", 0);
        bad |= sb_kv(&b, "actor", actor, 0);
        bad |= sb_kv(&b, "published", when, 0);
        sb_raw(&b, ",\"to\":[\"" WF_AS_PUBLIC "\"],\"cc\":[");
        bad |= sb_str(&b, a->p.actor);
        sb_raw(&b, ",");
        bad |= sb_str(&b, followers);
        sb_raw(&b, "],\"object\":");
        bad |= write_note(&b, c, a, 0);
        sb_raw(&b, "}");
        break;
    }
    case WF_ACT_LIKE:
        sb_raw(&b, "{");
        bad |= sb_kv(&b, "@context", WF_AS_CONTEXT, 1);
        bad |= sb_kv(&b, "id", id, 0);
        bad |= sb_kv(&b, "type", "Like", 0);
        bad |= sb_kv(&b, "actor", actor, 0);
        bad |= sb_kv(&b, "object", a->object_id, 0);
        sb_raw(&b, ",\"to\":[");
        bad |= sb_str(&b, a->p.actor);
        sb_raw(&b, "]}");
        break;
    case WF_ACT_UNDO_FOLLOW: {
        struct wf_act_from f = a->from;
        f.seq = a->follow_seq;
        sb_raw(&b, "{");
        bad |= sb_kv(&b, "@context", WF_AS_CONTEXT, 1);
        bad |= sb_kv(&b, "id", id, 0);
        bad |= sb_kv(&b, "type", "Undo", 0);
        bad |= sb_kv(&b, "actor", actor, 0);
        sb_raw(&b, ",\"object\":");
        bad |= write_follow(&b, c, &f, &a->p, 0);
        sb_raw(&b, "}");
        break;
    }
    default:
        bad = -1;
    }
    if (bad) {
        free(b.p);
        flood_err_set(err, FLOOD_EINVAL,
                      "activity: cannot write the document (a value is not "
                      "UTF-8?)");
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.p;
}

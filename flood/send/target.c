/* flood/send/target.c: persona discovery (see target.h). */
#include "flood/send/target.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flood/core/url.h"

#define SPEC_MAX     1024
#define LINE_MAX_LEN 4096

void persona_free(struct persona *p)
{
    if (!p)
        return;
    free(p->acct);
    free(p->actor);
    free(p->inbox);
    free(p->shared_inbox);
    for (size_t i = 0; i < p->n_posts; i++)
        free(p->posts[i]);
    free(p->posts);
    memset(p, 0, sizeof(*p));
}

void target_specs_free(char **specs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(specs[i]);
    free(specs);
}

static int is_url(const char *s)
{
    return !strncasecmp(s, "http://", 7) || !strncasecmp(s, "https://", 8);
}

/* User and host parts: no blanks, no '/', no second '@'. */
static int part_ok(const char *s, size_t n)
{
    if (n == 0 || n > 255)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch <= ' ' || ch >= 0x7f || ch == '@' || ch == '/' || ch == '?' || ch == '#')
            return 0;
    }
    return 1;
}

int target_parse_spec(const char *spec, char **user, char **host, struct flood_err *err)
{
    *user = *host = NULL;
    if (!spec || !*spec || strlen(spec) > SPEC_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "target: empty or overlong persona");
        return -1;
    }
    if (is_url(spec))
        return 0;
    const char *s = spec;
    if (!strncasecmp(s, "acct:", 5))
        s += 5;
    else if (*s == '@')
        s++;
    const char *at = strchr(s, '@');
    if (!at || !part_ok(s, (size_t)(at - s)) || !part_ok(at + 1, strlen(at + 1))) {
        flood_err_set(err, FLOOD_EINVAL,
                      "target: bad persona '%.200s' (want acct:NAME@HOST or an http(s) actor URL)",
                      spec);
        return -1;
    }
    *user = flood_xstrndup(s, (size_t)(at - s));
    *host = flood_xstrdup(at + 1);
    return 1;
}

static int is_ap_type(const char *t)
{
    if (!t)
        return 0;
    if (!strcmp(t, "application/activity+json"))
        return 1;
    return !strncmp(t, "application/ld+json", 19) && (t[19] == '\0' || t[19] == ';');
}

char *target_jrd_self(const json_t *jrd)
{
    size_t i;
    const json_t *l;
    json_array_foreach(json_object_get(jrd, "links"), i, l)
    {
        const char *rel = json_string_value(json_object_get(l, "rel"));
        const char *type = json_string_value(json_object_get(l, "type"));
        const char *href = json_string_value(json_object_get(l, "href"));
        if (rel && !strcmp(rel, "self") && is_ap_type(type) && href && is_url(href))
            return flood_xstrdup(href);
    }
    return NULL;
}

static int is_activity_type(const char *t)
{
    static const char *const acts[] = {
        "Create", "Update", "Delete", "Announce", "Like",  "Follow", "Accept",
        "Reject", "Undo",   "Add",    "Remove",   "Block", "Flag",   "Move",
    };
    for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
        if (!strcmp(t, acts[i]))
            return 1;
    return 0;
}

void target_outbox_posts(const json_t *page, char ***posts, size_t *n, size_t max)
{
    const json_t *items = json_object_get(page, "orderedItems");
    if (!json_is_array(items))
        items = json_object_get(page, "items");
    size_t i;
    const json_t *it;
    json_array_foreach(items, i, it)
    {
        if (*n >= max)
            return;
        const char *type = json_string_value(json_object_get(it, "type"));
        const char *id = NULL;
        if (!type)
            continue;
        if (!strcmp(type, "Create")) {
            const json_t *obj = json_object_get(it, "object");
            id = json_is_string(obj) ? json_string_value(obj)
                                     : json_string_value(json_object_get(obj, "id"));
        } else if (!is_activity_type(type)) {
            id = json_string_value(json_object_get(it, "id"));
        }
        if (!id || !is_url(id))
            continue;
        *posts = flood_xrealloc(*posts, (*n + 1) * sizeof(**posts));
        (*posts)[(*n)++] = flood_xstrdup(id);
    }
}

/* Percent-encode s (RFC 3986 unreserved kept) into a new string. */
static char *pct_encode(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = flood_xmalloc(strlen(s) * 3 + 1), *o = out;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            *o++ = (char)ch;
        } else {
            *o++ = '%';
            *o++ = hex[ch >> 4];
            *o++ = hex[ch & 15];
        }
    }
    *o = '\0';
    return out;
}

/* Host (with port) of an http(s) URL into out, lower-cased; "" when none. */
static void host_of(const char *url, char *out, size_t size)
{
    struct url_parts u;
    struct flood_err err;
    out[0] = '\0';
    if (url && url_split(url, &u, &err) == 0 && strlen(u.authority) < size)
        memcpy(out, u.authority, strlen(u.authority) + 1);
}

/* GET url and parse a JSON object. step names it in errors. new ref, or NULL and err. */
static json_t *get_json(const char *step, const char *spec, const char *url, const char *accept,
                        const struct http_signer *s, const struct target_opts *o,
                        struct flood_err *err)
{
    struct http_opts h = o->http;
    if (h.max_redirects == 0)
        h.max_redirects = 3;
    struct http_resp r;
    struct flood_err e = {0};
    if (http_get(url, accept, s, &h, &r, &e) < 0) {
        flood_err_set(err, e.code, "target: %s of '%.200s': %s", step, spec, e.msg);
        return NULL;
    }
    if (r.status < 200 || r.status > 299) {
        flood_err_set(err, FLOOD_ENOTFOUND, "target: %s of '%.200s': HTTP %ld from '%.200s'", step,
                      spec, r.status, url);
        http_resp_free(&r);
        return NULL;
    }
    json_error_t je;
    json_t *j = json_loadb(r.body, r.len, 0, &je);
    if (!json_is_object(j)) {
        flood_err_set(err, FLOOD_EINVAL, "target: %s of '%.200s': not a JSON object (%s)", step,
                      spec, j ? "another JSON value" : je.text);
        json_decref(j);
        j = NULL;
    }
    http_resp_free(&r);
    return j;
}

static void warn(const struct target_opts *o, const char *msg)
{
    if (!o->quiet)
        fprintf(stderr, "flood: warning: %s\n", msg);
}

/* The posts of an outbox: its own items, or its first page (a link or embedded). */
static void read_outbox(const char *spec, const char *url, const struct http_signer *s,
                        const struct target_opts *o, struct persona *p)
{
    struct flood_err e = {0};
    json_t *box = get_json("outbox", spec, url, WF_CT_ACTIVITY, s, o, &e);
    if (!box) {
        warn(o, e.msg);
        return;
    }
    target_outbox_posts(box, &p->posts, &p->n_posts, TARGET_POSTS_MAX);
    const json_t *first = json_object_get(box, "first");
    if (p->n_posts == 0 && json_is_object(first)) {
        target_outbox_posts(first, &p->posts, &p->n_posts, TARGET_POSTS_MAX);
    } else if (p->n_posts == 0 && json_is_string(first)) {
        char want[URL_AUTHORITY_MAX], got[URL_AUTHORITY_MAX];
        host_of(url, want, sizeof(want));
        host_of(json_string_value(first), got, sizeof(got));
        json_t *page = NULL;
        if (strcmp(want, got) != 0) {
            flood_err_set(&e, FLOOD_EINVAL,
                          "target: outbox of '%.200s': first page on another host", spec);
        } else {
            page =
                get_json("outbox page", spec, json_string_value(first), WF_CT_ACTIVITY, s, o, &e);
        }
        if (page)
            target_outbox_posts(page, &p->posts, &p->n_posts, TARGET_POSTS_MAX);
        else
            warn(o, e.msg);
        json_decref(page);
    }
    json_decref(box);
}

int target_discover(const char *spec, const struct crowd *crowd, const struct target_opts *o,
                    struct persona *out, struct flood_err *err)
{
    static const struct target_opts defaults = {0};
    if (!o)
        o = &defaults;
    memset(out, 0, sizeof(*out));
    char *user, *host;
    int kind = target_parse_spec(spec, &user, &host, err);
    if (kind < 0)
        return -1;
    char *actor_url = NULL;
    if (kind == 1) {
        char *acct = flood_xasprintf("acct:%s@%s", user, host);
        char *res = pct_encode(acct);
        char *url = flood_xasprintf("%s://%s/.well-known/webfinger?resource=%s",
                                    o->target_http ? "http" : "https", host, res);
        free(res);
        /* WebFinger is public: no signature (a query string trips Fedify's verifier) */
        json_t *jrd = get_json("webfinger", acct, url, "application/jrd+json, application/json",
                               NULL, o, err);
        free(url);
        if (jrd) {
            actor_url = target_jrd_self(jrd);
            if (!actor_url)
                flood_err_set(err, FLOOD_ENOTFOUND,
                              "target: webfinger of '%.200s': no rel=self activity+json link",
                              acct);
        }
        json_decref(jrd);
        free(user);
        free(host);
        if (!actor_url) {
            free(acct);
            return -1;
        }
        out->acct = acct;
    } else {
        actor_url = flood_xstrdup(spec);
    }

    char key_id[WF_URL_MAX];
    crowd_key_id(crowd, 1, 0, key_id);
    struct http_signer s = {.dialect = o->dialect, .key = crowd_key(crowd, 1, 0), .key_id = key_id};
    const char *name = out->acct ? out->acct : spec;
    json_t *a = get_json("actor", name, actor_url, WF_CT_ACTIVITY, &s, o, err);
    if (!a)
        goto fail;
    const char *id = json_string_value(json_object_get(a, "id"));
    const char *inbox = json_string_value(json_object_get(a, "inbox"));
    const char *shared =
        json_string_value(json_object_get(json_object_get(a, "endpoints"), "sharedInbox"));
    const char *outbox = json_string_value(json_object_get(a, "outbox"));
    char h1[URL_AUTHORITY_MAX], h2[URL_AUTHORITY_MAX];
    host_of(actor_url, h1, sizeof(h1));
    host_of(id, h2, sizeof(h2));
    if (!id || !is_url(id) || strcmp(h1, h2) != 0) {
        flood_err_set(err, FLOOD_EINVAL, "target: actor of '%.200s': id '%.200s' is not on '%s'",
                      name, id ? id : "(none)", h1);
        json_decref(a);
        goto fail;
    }
    if (!inbox || !is_url(inbox)) {
        flood_err_set(err, FLOOD_EINVAL, "target: actor of '%.200s': no inbox", name);
        json_decref(a);
        goto fail;
    }
    out->actor = flood_xstrdup(id);
    out->inbox = flood_xstrdup(inbox);
    out->shared_inbox = shared && is_url(shared) ? flood_xstrdup(shared) : NULL;
    if (outbox && is_url(outbox))
        read_outbox(name, outbox, &s, o, out);
    json_decref(a);
    free(actor_url);
    return 0;
fail:
    free(actor_url);
    persona_free(out);
    return -1;
}

int target_read_personas_file(const char *path, char ***specs, size_t *n, struct flood_err *err)
{
    *specs = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "target: --personas '%.200s': %s", path, strerror(errno));
        return -1;
    }
    char line[LINE_MAX_LEN];
    int lineno = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof(line) - 1 && line[len - 1] != '\n' && !feof(f)) {
            flood_err_set(err, FLOOD_EINVAL, "target: %.200s:%d: line too long", path, lineno);
            goto fail;
        }
        char *s = line;
        char *hash = strchr(s, '#');
        /* '#' starts a comment at the start of a line or after a blank (URLs keep theirs) */
        if (hash && (hash == s || hash[-1] == ' ' || hash[-1] == '\t'))
            *hash = '\0';
        while (*s == ' ' || *s == '\t')
            s++;
        len = strlen(s);
        while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' ' ||
                       s[len - 1] == '\t'))
            s[--len] = '\0';
        if (!len)
            continue;
        char *u, *h;
        struct flood_err e = {0};
        int kind = target_parse_spec(s, &u, &h, &e);
        if (kind < 0) {
            flood_err_set(err, FLOOD_EINVAL, "target: %.200s:%d: %s", path, lineno, e.msg);
            goto fail;
        }
        free(u);
        free(h);
        *specs = flood_xrealloc(*specs, (*n + 1) * sizeof(**specs));
        (*specs)[(*n)++] = flood_xstrdup(s);
    }
    if (ferror(f)) {
        flood_err_set(err, FLOOD_EIO, "target: --personas '%.200s': read error", path);
        goto fail;
    }
    fclose(f);
    if (*n == 0) {
        flood_err_set(err, FLOOD_EINVAL, "target: --personas '%.200s': no persona in it", path);
        return -1;
    }
    return 0;
fail:
    fclose(f);
    target_specs_free(*specs, *n);
    *specs = NULL;
    *n = 0;
    return -1;
}

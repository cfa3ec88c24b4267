/* flood/core/http.c: a bounded, optionally signed HTTP request (see http.h). */
#include "flood/core/http.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "flood/core/url.h"

struct buf {
    char *p;
    size_t len, max;
    int over;
    int discard;
};

struct http_call {
    CURL *easy;
    void *user;
    char *url;
    const char *who, *method;
    struct curl_slist *hdrs, *resolve, *connect_to;
    struct buf body, head;
    char errbuf[CURL_ERROR_SIZE];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int buf_add(struct buf *b, const char *data, size_t n)
{
    if (b->discard)
        return 0;
    if (b->len + n > b->max) {
        b->over = 1;
        return -1;
    }
    b->p = flood_xrealloc(b->p, b->len + n + 1);
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    return buf_add(ud, data, size * n) < 0 ? 0 : size * n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    struct buf *b = ud;
    /* a new status line (after 100 Continue) starts a new block */
    if (size * n >= 5 && !strncmp(data, "HTTP/", 5))
        b->len = 0;
    return buf_add(b, data, size * n) < 0 ? 0 : size * n;
}

int http_is_json_type(const char *ct)
{
    if (!ct)
        return 0;
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    if (n == 16 && !strncasecmp(ct, "application/json", 16))
        return 1;
    return n > 17 && !strncasecmp(ct, "application/", 12) && !strncasecmp(ct + n - 5, "+json", 5);
}

void http_resp_free(struct http_resp *r)
{
    if (!r)
        return;
    free(r->body);
    free(r->content_type);
    free(r->headers);
    free(r->url);
    free(r->location);
    free(r->retry_after);
    memset(r, 0, sizeof(*r));
}

/* The value of header name in a header block (the first one), trimmed: a new string, or
 * NULL. */
static char *header_value(const char *block, const char *name)
{
    size_t nl = strlen(name);
    for (const char *l = block; l && *l;) {
        const char *end = strpbrk(l, "\r\n");
        size_t len = end ? (size_t)(end - l) : strlen(l);
        if (len > nl && l[nl] == ':' && !strncasecmp(l, name, nl)) {
            const char *v = l + nl + 1, *e = l + len;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
            return flood_xstrndup(v, (size_t)(e - v));
        }
        l = end ? end + strspn(end, "\r\n") : NULL;
    }
    return NULL;
}

static const char *method_name(enum http_method m)
{
    return m == HTTP_POST ? "POST" : m == HTTP_CONNECT_ONLY ? "connect to" : "GET";
}

static int add_line(struct curl_slist **l, const char *line)
{
    struct curl_slist *n = curl_slist_append(*l, line);
    if (!n)
        return -1;
    *l = n;
    return 0;
}

static int add_list(CURL *e, CURLoption opt, const char *const *v, size_t n,
                    struct curl_slist **keep)
{
    for (size_t i = 0; i < n; i++)
        if (add_line(keep, v[i]) < 0)
            return -1;
    if (n && curl_easy_setopt(e, opt, *keep) != CURLE_OK)
        return -1;
    return 0;
}

/* The request's header lines: the signature's (over the method, the URL, the Content-Type
 * and the body), Content-Type, Accept, the caller's, and no "Expect: 100-continue". */
static int build_headers(struct http_call *c, const struct http_req *req, const struct url_parts *u,
                         struct flood_err *err)
{
    const struct http_signer *s = req->signer;
    if (s && s->dialect != HTTP_SIGN_NONE && req->method != HTTP_CONNECT_ONLY) {
        struct sign_header ct = {"Content-Type", req->content_type};
        struct sign_params p = {.dialect = (enum sign_dialect)s->dialect,
                                .key = s->key,
                                .key_id = s->key_id,
                                .now = time(NULL)};
        struct sign_msg m = {.method = c->method,
                             .scheme = u->scheme,
                             .authority = u->authority,
                             .path = u->target,
                             .headers = req->content_type ? &ct : NULL,
                             .n_headers = req->content_type ? 1 : 0,
                             .body = req->method == HTTP_POST ? req->body : NULL,
                             .body_len = req->method == HTTP_POST ? req->body_len : 0};
        struct sign_out out = {0};
        if (sign_request(&p, &m, &out, err) < 0)
            return -1;
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < out.n; i++)
            rc = add_line(&c->hdrs, out.lines[i]);
        sign_out_free(&out);
        if (rc < 0)
            goto oom;
    }
    if (req->content_type) {
        char *l = flood_xasprintf("Content-Type: %s", req->content_type);
        int rc = add_line(&c->hdrs, l);
        free(l);
        if (rc < 0)
            goto oom;
    }
    if (req->accept) {
        char *l = flood_xasprintf("Accept: %s", req->accept);
        int rc = add_line(&c->hdrs, l);
        free(l);
        if (rc < 0)
            goto oom;
    }
    for (size_t i = 0; i < req->n_headers; i++)
        if (add_line(&c->hdrs, req->headers[i]) < 0)
            goto oom;
    if (req->method == HTTP_POST && add_line(&c->hdrs, "Expect:") < 0)
        goto oom;
    return 0;
oom:
    flood_err_set(err, FLOOD_EIO, "%s: out of memory", c->who);
    return -1;
}

static int set_options(struct http_call *c, const struct http_req *req, const struct http_opts *o)
{
    CURL *e = c->easy;
    char ua[64];
    snprintf(ua, sizeof(ua), "flood/%s", FLOOD_VERSION);
    long timeout = o->timeout_ms > 0 ? o->timeout_ms : HTTP_TIMEOUT_MS;
    char source[80] = "";
    if (o->source)
        snprintf(source, sizeof(source), "host!%s", o->source);
    if (curl_easy_setopt(e, CURLOPT_URL, c->url) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_PRIVATE, c) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->hdrs) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent ? o->user_agent : ua) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &c->body) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HEADERDATA, &c->head) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf) != CURLE_OK ||
        (!c->body.discard &&
         curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->body.max) != CURLE_OK) ||
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L) != CURLE_OK ||
        (o->cacert && curl_easy_setopt(e, CURLOPT_CAINFO, o->cacert) != CURLE_OK) ||
        (o->source && curl_easy_setopt(e, CURLOPT_INTERFACE, source) != CURLE_OK) ||
        add_list(e, CURLOPT_RESOLVE, o->resolve, o->n_resolve, &c->resolve) < 0 ||
        add_list(e, CURLOPT_CONNECT_TO, o->connect_to, o->n_connect_to, &c->connect_to) < 0)
        return -1;
    if (req->method == HTTP_POST)
        return curl_easy_setopt(e, CURLOPT_POST, 1L) != CURLE_OK ||
                       curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body ? req->body : "") !=
                           CURLE_OK ||
                       curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                                        (curl_off_t)(req->body ? req->body_len : 0)) != CURLE_OK
                   ? -1
                   : 0;
    if (req->method == HTTP_CONNECT_ONLY)
        return curl_easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L) != CURLE_OK ? -1 : 0;
    return 0;
}

struct http_call *http_call_new(const struct http_req *req, void *user, struct flood_err *err)
{
    static const struct http_opts defaults = {0};
    const struct http_opts *o = req->o ? req->o : &defaults;
    const char *who = req->who ? req->who : "http";
    if (!req->url) {
        flood_err_set(err, FLOOD_EINVAL, "%s: no URL", who);
        return NULL;
    }
    struct url_parts u;
    struct flood_err ue;
    if (url_split(req->url, &u, &ue) < 0) {
        flood_err_set(err, ue.code, "%s: bad URL '%.300s' (%s)", who, req->url, ue.msg);
        return NULL;
    }
    pthread_once(&curl_once, curl_init_once);
    struct http_call *c = flood_xcalloc(1, sizeof(*c));
    c->user = user;
    c->who = who;
    c->method = method_name(req->method);
    c->url = flood_xstrdup(req->url);
    c->body.max = o->max_body ? o->max_body : HTTP_BODY_MAX;
    c->body.discard = req->discard_body;
    c->head.max = HTTP_HEADERS_MAX;
    c->easy = curl_easy_init();
    if (!c->easy) {
        flood_err_set(err, FLOOD_EIO, "%s: cannot make a curl handle", who);
        goto fail;
    }
    if (build_headers(c, req, &u, err) < 0)
        goto fail;
    if (set_options(c, req, o) < 0) {
        flood_err_set(err, FLOOD_EIO, "%s: %s '%.300s': cannot set up curl", who, c->method,
                      c->url);
        goto fail;
    }
    return c;
fail:
    http_call_free(c);
    return NULL;
}

CURL *http_call_easy(struct http_call *c)
{
    return c->easy;
}

void *http_call_user(const struct http_call *c)
{
    return c->user;
}

struct http_call *http_call_of(CURL *easy)
{
    struct http_call *c = NULL;
    if (curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&c) != CURLE_OK)
        return NULL;
    return c;
}

int http_call_done(struct http_call *c, CURLcode cc, struct http_resp *out, struct flood_err *err)
{
    memset(out, 0, sizeof(*out));
    if (cc != CURLE_OK) {
        if (c->body.over || cc == CURLE_FILESIZE_EXCEEDED)
            flood_err_set(err, FLOOD_ELIMIT, "%s: %s '%.300s': body over %zu bytes", c->who,
                          c->method, c->url, c->body.max);
        else if (c->head.over)
            flood_err_set(err, FLOOD_ELIMIT, "%s: %s '%.300s': headers over %d bytes", c->who,
                          c->method, c->url, HTTP_HEADERS_MAX);
        else
            flood_err_set(err, cc == CURLE_OPERATION_TIMEDOUT ? FLOOD_ELIMIT : FLOOD_EIO,
                          "%s: %s '%.300s': %s", c->who, c->method, c->url,
                          c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc));
        return -1;
    }
    curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &out->status);
    char *ct = NULL, *loc = NULL;
    if (curl_easy_getinfo(c->easy, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        out->content_type = flood_xstrdup(ct);
    if (out->status >= 300 && out->status < 400 &&
        curl_easy_getinfo(c->easy, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc)
        out->location = flood_xstrdup(loc);
    out->body = c->body.p ? c->body.p : flood_xstrdup("");
    out->len = c->body.len;
    c->body.p = NULL;
    out->headers = c->head.p ? c->head.p : flood_xstrdup("");
    c->head.p = NULL;
    out->retry_after = header_value(out->headers, "Retry-After");
    out->url = flood_xstrdup(c->url);
    return 0;
}

void http_call_free(struct http_call *c)
{
    if (!c)
        return;
    if (c->easy)
        curl_easy_cleanup(c->easy);
    curl_slist_free_all(c->hdrs);
    curl_slist_free_all(c->resolve);
    curl_slist_free_all(c->connect_to);
    free(c->body.p);
    free(c->head.p);
    free(c->url);
    free(c);
}

/* The default rule: a redirect stays on the scheme, host and port it came from. */
static int same_origin(void *ctx, const char *url, const char *location, struct flood_err *err)
{
    const char *who = ctx;
    struct url_parts a, b;
    struct flood_err ue;
    if (url_split(url, &a, &ue) < 0 || url_split(location, &b, &ue) < 0) {
        flood_err_set(err, FLOOD_EINVAL, "%s: GET '%.200s': bad redirect to '%.200s' (%s)", who,
                      url, location, ue.msg);
        return 0;
    }
    if (strcmp(a.origin, b.origin)) {
        flood_err_set(err, FLOOD_EINVAL, "%s: GET '%.200s': redirect off the host to '%.200s'", who,
                      url, location);
        return 0;
    }
    return 1;
}

int http_fetch(const struct http_req *req, struct http_resp *out, struct flood_err *err)
{
    struct http_req r = *req;
    int max = r.o && r.method == HTTP_GET ? r.o->max_redirects : 0;
    char *cur = NULL;
    memset(out, 0, sizeof(*out));
    for (int hop = 0;; hop++) {
        struct http_call *c = http_call_new(&r, NULL, err);
        if (!c) {
            free(cur);
            return -1;
        }
        int rc = http_call_done(c, curl_easy_perform(c->easy), out, err);
        const char *who = c->who;
        http_call_free(c);
        if (rc < 0) {
            free(cur);
            return -1;
        }
        if (!out->location || hop >= max) {
            free(cur);
            return 0;
        }
        int ok = req->redirect_ok ? req->redirect_ok(req->redirect_ctx, r.url, out->location, err)
                                  : same_origin((void *)who, r.url, out->location, err);
        if (!ok) {
            free(cur);
            http_resp_free(out);
            return -1;
        }
        free(cur);
        cur = out->location;
        out->location = NULL;
        http_resp_free(out);
        r.url = cur;
    }
}

int http_get(const char *url, const char *accept, const struct http_signer *s,
             const struct http_opts *o, struct http_resp *out, struct flood_err *err)
{
    struct http_req req = {.method = HTTP_GET, .url = url, .accept = accept, .signer = s, .o = o};
    return http_fetch(&req, out, err);
}

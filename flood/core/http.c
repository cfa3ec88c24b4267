/* flood/core/http.c: a bounded, optionally signed, blocking GET (see http.h). */
#include "flood/core/http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct buf {
    char *p;
    size_t len, max;
    int over;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int buf_add(struct buf *b, const char *data, size_t n)
{
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
    /* a new status line (after 100 Continue, or a redirect) starts a new block */
    if (size * n >= 5 && !strncmp(data, "HTTP/", 5))
        b->len = 0;
    if (buf_add(b, data, size * n) < 0)
        return 0;
    return size * n;
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
    memset(r, 0, sizeof(*r));
}

/* Split url into the parts a signature needs. 0, or -1 and err. */
struct url_parts {
    char *scheme, *host, *port, *path, *query;
};

static void parts_free(struct url_parts *u)
{
    curl_free(u->scheme);
    curl_free(u->host);
    curl_free(u->port);
    curl_free(u->path);
    curl_free(u->query);
    memset(u, 0, sizeof(*u));
}

static int parse_url(const char *url, struct url_parts *u, struct flood_err *err)
{
    memset(u, 0, sizeof(*u));
    CURLU *h = curl_url();
    if (!h) {
        flood_err_set(err, FLOOD_EIO, "http: out of memory");
        return -1;
    }
    int rc = curl_url_set(h, CURLUPART_URL, url, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(h, CURLUPART_SCHEME, &u->scheme, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(h, CURLUPART_HOST, &u->host, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(h, CURLUPART_PATH, &u->path, 0);
    if (rc == CURLUE_OK && curl_url_get(h, CURLUPART_PORT, &u->port, 0) != CURLUE_OK)
        u->port = NULL;
    if (rc == CURLUE_OK && curl_url_get(h, CURLUPART_QUERY, &u->query, 0) != CURLUE_OK)
        u->query = NULL;
    curl_url_cleanup(h);
    if (rc != CURLUE_OK || (strcmp(u->scheme, "http") && strcmp(u->scheme, "https"))) {
        flood_err_set(err, FLOOD_EINVAL, "http: bad URL '%.300s'%s", url,
                      rc == CURLUE_OK ? " (http or https only)" : "");
        parts_free(u);
        return -1;
    }
    return 0;
}

/* The signature headers of a GET of url. */
static int sign_get(const struct http_signer *s, const struct url_parts *u,
                    struct curl_slist **hdrs, struct flood_err *err)
{
    int default_port = !u->port || (!strcmp(u->scheme, "http") && !strcmp(u->port, "80")) ||
                       (!strcmp(u->scheme, "https") && !strcmp(u->port, "443"));
    char *authority =
        default_port ? flood_xstrdup(u->host) : flood_xasprintf("%s:%s", u->host, u->port);
    char *target = u->query ? flood_xasprintf("%s?%s", u->path, u->query) : flood_xstrdup(u->path);
    struct sign_params p = {.dialect = (enum sign_dialect)s->dialect,
                            .key = s->key,
                            .key_id = s->key_id,
                            .now = time(NULL)};
    struct sign_msg m = {
        .method = "GET", .scheme = u->scheme, .authority = authority, .path = target};
    struct sign_out out = {0};
    int rc = sign_request(&p, &m, &out, err);
    for (size_t i = 0; rc == 0 && i < out.n; i++) {
        struct curl_slist *n = curl_slist_append(*hdrs, out.lines[i]);
        if (!n) {
            flood_err_set(err, FLOOD_EIO, "http: out of memory");
            rc = -1;
        } else {
            *hdrs = n;
        }
    }
    sign_out_free(&out);
    free(authority);
    free(target);
    return rc;
}

static int add_list(CURL *e, CURLoption opt, const char *const *v, size_t n,
                    struct curl_slist **keep)
{
    for (size_t i = 0; i < n; i++) {
        struct curl_slist *l = curl_slist_append(*keep, v[i]);
        if (!l)
            return -1;
        *keep = l;
    }
    if (n && curl_easy_setopt(e, opt, *keep) != CURLE_OK)
        return -1;
    return 0;
}

/* One request, no redirect handling. */
static int get_once(const char *url, const char *accept, const struct http_signer *s,
                    const struct http_opts *o, struct http_resp *out, char **location,
                    struct flood_err *err)
{
    struct url_parts u;
    if (parse_url(url, &u, err) < 0)
        return -1;
    CURL *e = curl_easy_init();
    struct curl_slist *hdrs = NULL, *resolve = NULL, *connect_to = NULL;
    struct buf body = {.max = o->max_body ? o->max_body : HTTP_BODY_MAX};
    struct buf head = {.max = HTTP_HEADERS_MAX};
    char errbuf[CURL_ERROR_SIZE] = "";
    int rc = -1;
    if (!e) {
        flood_err_set(err, FLOOD_EIO, "http: cannot make a curl handle");
        goto done;
    }
    if (s && s->dialect != HTTP_SIGN_NONE && sign_get(s, &u, &hdrs, err) < 0)
        goto done;
    if (accept) {
        char *a = flood_xasprintf("Accept: %s", accept);
        struct curl_slist *n = curl_slist_append(hdrs, a);
        free(a);
        if (!n)
            goto oom;
        hdrs = n;
    }
    char ua[64];
    snprintf(ua, sizeof(ua), "flood/%s", FLOOD_VERSION);
    long timeout = o->timeout_ms > 0 ? o->timeout_ms : HTTP_TIMEOUT_MS;
    if (curl_easy_setopt(e, CURLOPT_URL, url) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent ? o->user_agent : ua) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &body) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_HEADERDATA, &head) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)body.max) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L) != CURLE_OK ||
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L) != CURLE_OK ||
        (o->cacert && curl_easy_setopt(e, CURLOPT_CAINFO, o->cacert) != CURLE_OK) ||
        add_list(e, CURLOPT_RESOLVE, o->resolve, o->n_resolve, &resolve) < 0 ||
        add_list(e, CURLOPT_CONNECT_TO, o->connect_to, o->n_connect_to, &connect_to) < 0) {
        flood_err_set(err, FLOOD_EIO, "http: GET '%.300s': cannot set up curl", url);
        goto done;
    }
    CURLcode cc = curl_easy_perform(e);
    if (cc != CURLE_OK) {
        if (body.over || cc == CURLE_FILESIZE_EXCEEDED)
            flood_err_set(err, FLOOD_ELIMIT, "http: GET '%.300s': body over %zu bytes", url,
                          body.max);
        else
            flood_err_set(err, cc == CURLE_OPERATION_TIMEDOUT ? FLOOD_ELIMIT : FLOOD_EIO,
                          "http: GET '%.300s': %s", url,
                          errbuf[0] ? errbuf : curl_easy_strerror(cc));
        goto done;
    }
    memset(out, 0, sizeof(*out));
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &out->status);
    char *ct = NULL, *loc = NULL;
    if (curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        out->content_type = flood_xstrdup(ct);
    if (location && curl_easy_getinfo(e, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc)
        *location = flood_xstrdup(loc);
    out->body = body.p ? body.p : flood_xstrdup("");
    out->len = body.len;
    body.p = NULL;
    out->headers = head.p ? head.p : flood_xstrdup("");
    head.p = NULL;
    out->url = flood_xstrdup(url);
    rc = 0;
    goto done;
oom:
    flood_err_set(err, FLOOD_EIO, "http: out of memory");
done:
    free(body.p);
    free(head.p);
    curl_slist_free_all(hdrs);
    curl_slist_free_all(resolve);
    curl_slist_free_all(connect_to);
    if (e)
        curl_easy_cleanup(e);
    parts_free(&u);
    return rc;
}

int http_get(const char *url, const char *accept, const struct http_signer *s,
             const struct http_opts *o, struct http_resp *out, struct flood_err *err)
{
    static const struct http_opts defaults = {0};
    if (!o)
        o = &defaults;
    memset(out, 0, sizeof(*out));
    if (!url) {
        flood_err_set(err, FLOOD_EINVAL, "http: no URL");
        return -1;
    }
    pthread_once(&curl_once, curl_init_once);
    char *cur = flood_xstrdup(url);
    for (int hop = 0;; hop++) {
        char *loc = NULL;
        if (get_once(cur, accept, s, o, out, &loc, err) < 0) {
            free(cur);
            return -1;
        }
        if (out->status < 300 || out->status >= 400 || !loc || hop >= o->max_redirects) {
            free(loc);
            free(cur);
            return 0;
        }
        struct url_parts a, b;
        if (parse_url(cur, &a, err) < 0 || parse_url(loc, &b, err) < 0) {
            parts_free(&a);
            free(loc);
            free(cur);
            http_resp_free(out);
            return -1;
        }
        int same = !strcasecmp(a.host, b.host) && !strcmp(a.scheme, b.scheme) &&
                   ((!a.port && !b.port) || (a.port && b.port && !strcmp(a.port, b.port)));
        parts_free(&a);
        parts_free(&b);
        if (!same) {
            flood_err_set(err, FLOOD_EINVAL,
                          "http: GET '%.200s': redirect off the host to '%.200s'", cur, loc);
            free(loc);
            free(cur);
            http_resp_free(out);
            return -1;
        }
        http_resp_free(out);
        free(cur);
        cur = loc;
    }
}

/* flood/send/hclient_origin.c: what the client knows of an origin before connecting: its
 * address (a literal, or a --resolve entry: no DNS on the hot path), the Host header, the
 * request target of a URL, and TLS (the context, SNI, the certificate check and the
 * session resumed on each new connection). Origins are found by the URL's bytes before
 * the path, as the sender groups them, in a hash table: one look-up a request. */
#include "flood/send/hclient.h"
#include "flood/send/hclient_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flood/core/addr.h"
#include "flood/core/hash.h"

/* ---- --resolve ------------------------------------------------------------------------ */

/* "HOST:PORT:ADDR[,ADDR...]" as curl takes it ("+" in front allowed; the first address is
 * used; an IPv6 host or address may be bracketed). 0, or -1 when it is not that. */
static int parse_resolve(const char *s, struct hc_resolve *out)
{
    if (*s == '+')
        s++;
    const char *colon;
    if (*s == '[') {
        const char *rb = strchr(s, ']');
        if (!rb || rb[1] != ':')
            return -1;
        colon = rb + 1;
    } else
        colon = strchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof(out->host))
        return -1;
    memcpy(out->host, s, (size_t)(colon - s));
    out->host[colon - s] = '\0';
    for (char *h = out->host; *h; h++)
        if (*h >= 'A' && *h <= 'Z')
            *h = (char)(*h - 'A' + 'a');
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end != ':' || port == 0 || port > 65535)
        return -1;
    out->port = (unsigned)port;
    const char *a = end + 1;
    size_t alen = strcspn(a, ",");
    if (alen >= 2 && a[0] == '[' && a[alen - 1] == ']') {
        a++;
        alen -= 2;
    }
    char addr[64];
    if (alen == 0 || alen >= sizeof(addr))
        return -1;
    memcpy(addr, a, alen);
    addr[alen] = '\0';
    return addr_numeric(addr, out->port, &out->sa, &out->sa_len);
}

/* ---- TLS ------------------------------------------------------------------------------ */

/* A session (TLS 1.3: a ticket, which comes after the handshake) from the server of a
 * connection: the origin keeps the latest for its next connections. Taken through this
 * callback rather than SSL_get1_session() after the handshake, since a TLS 1.3 session
 * read then has no ticket yet and cannot be resumed. */
static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
    struct hc_conn *k = SSL_get_app_data(ssl);
    if (!k)
        return 0; /* OpenSSL frees it */
    if (k->o->sess)
        SSL_SESSION_free(k->o->sess);
    k->o->sess = sess;
    return 1; /* the reference is ours */
}

static SSL_CTX *tls_ctx(const struct hc_opts *o, struct flood_err *err)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        flood_err_set(err, FLOOD_ECRYPTO, "hclient: cannot make a TLS context");
        flood_err_openssl(err);
        return NULL;
    }
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
    if (o->insecure) {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        return ctx;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    int ok = o->cacert ? SSL_CTX_load_verify_locations(ctx, o->cacert, NULL)
                       : SSL_CTX_set_default_verify_paths(ctx);
    if (ok != 1) {
        flood_err_set(err, FLOOD_ECRYPTO, "hclient: cannot read the CA file '%s'",
                      o->cacert ? o->cacert : "(system default)");
        flood_err_openssl(err);
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

SSL *hc_tls_new(struct hc_client *c, struct hc_origin *o, struct hc_conn *k, int fd)
{
    SSL *ssl = SSL_new(c->ssl_ctx);
    if (!ssl)
        return NULL;
    /* BIO_NOCLOSE: libevent closes the fd itself when it frees the bufferevent, and a
     * closing BIO would close the same number a second time */
    BIO *bio = BIO_new_socket(fd, BIO_NOCLOSE);
    if (!bio) {
        SSL_free(ssl);
        return NULL;
    }
    SSL_set_bio(ssl, bio, bio);
    int ok = 1;
    if (!o->host_is_ip) /* RFC 6066 section 3: no literal addresses in SNI */
        ok = SSL_set_tlsext_host_name(ssl, o->host) == 1;
    if (ok && !c->insecure)
        ok = o->host_is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), o->host) == 1
                           : SSL_set1_host(ssl, o->host) == 1;
    if (ok && o->sess && SSL_SESSION_is_resumable(o->sess))
        ok = SSL_set_session(ssl, o->sess) == 1;
    if (!ok) {
        ERR_clear_error();
        SSL_free(ssl);
        return NULL;
    }
    SSL_set_app_data(ssl, k);
    return ssl;
}

/* ---- origins -------------------------------------------------------------------------- */

/* The length of url's origin part: up to the path, query or fragment; 0 without "://".
 * Hand-written as the sender's origin_of: it runs for every request. */
static size_t prefix_len(const char *url)
{
    const char *p = strstr(url, "://");
    if (!p)
        return 0;
    p += 3;
    return (size_t)(p - url) + strcspn(p, "/?#");
}

static void tab_insert(struct hc_client *c, struct hc_origin *o)
{
    if ((c->n_origins + 1) * 2 > c->tab_cap) {
        size_t cap = c->tab_cap ? c->tab_cap * 2 : 16;
        struct hc_origin **t = flood_xcalloc(cap, sizeof(*t));
        for (size_t i = 0; i < c->tab_cap; i++) {
            struct hc_origin *x = c->tab[i];
            if (!x)
                continue;
            size_t j = x->hash & (cap - 1);
            while (t[j])
                j = (j + 1) & (cap - 1);
            t[j] = x;
        }
        free(c->tab);
        c->tab = t;
        c->tab_cap = cap;
    }
    size_t j = o->hash & (c->tab_cap - 1);
    while (c->tab[j])
        j = (j + 1) & (c->tab_cap - 1);
    c->tab[j] = o;
    c->n_origins++;
}

/* Fill o's address, Host and TLS names from its key, or o->fail. */
static void origin_settle(struct hc_client *c, struct hc_origin *o)
{
    struct url_parts *u = flood_xmalloc(sizeof(*u));
    struct flood_err e;
    char *key = flood_xstrndup(o->key, o->key_len);
    if (o->key_len >= URL_INPUT_MAX || url_split(key, u, &e) < 0) {
        o->fail = HC_PROTOCOL;
        o->fail_errno = EINVAL;
        goto out;
    }
    o->tls = strcmp(u->scheme, "https") == 0;
    o->auth_len = strlen(u->authority);
    memcpy(o->authority, u->authority, o->auth_len + 1);
    const char *h = u->host;
    size_t hl = strlen(h);
    if (h[0] == '[' && hl >= 2) {
        h++;
        hl -= 2;
    }
    memcpy(o->host, h, hl);
    o->host[hl] = '\0';
    for (size_t i = 0; i < c->n_resolve; i++) {
        const struct hc_resolve *r = &c->resolve[i];
        if (r->port == u->port && strcasecmp(r->host, u->host) == 0) {
            o->sa = r->sa;
            o->sa_len = r->sa_len;
            struct sockaddr_storage tmp;
            socklen_t tl;
            o->host_is_ip = addr_numeric(o->host, u->port, &tmp, &tl) == 0;
            goto out;
        }
    }
    if (addr_numeric(o->host, u->port, &o->sa, &o->sa_len) == 0)
        o->host_is_ip = 1;
    else {
        o->fail = HC_DNS; /* a name not in --resolve: no DNS on the hot path */
        o->fail_errno = 0;
    }
out:
    free(key);
    free(u);
}

struct hc_origin *hc_origin_get(struct hc_client *c, const char *url)
{
    size_t len = prefix_len(url);
    if (len == 0)
        return NULL;
    struct hc_origin *o = c->last;
    if (o && o->key_len == len && memcmp(o->key, url, len) == 0)
        return o;
    uint64_t h = hash_fnv1a(url, len);
    if (c->tab_cap) {
        for (size_t j = h & (c->tab_cap - 1); (o = c->tab[j]); j = (j + 1) & (c->tab_cap - 1))
            if (o->hash == h && o->key_len == len && memcmp(o->key, url, len) == 0) {
                c->last = o;
                return o;
            }
    }
    o = flood_xcalloc(1, sizeof(*o));
    o->key = flood_xstrndup(url, len);
    o->key_len = len;
    o->hash = h;
    origin_settle(c, o);
    tab_insert(c, o);
    c->last = o;
    return o;
}

void hc_origin_queued(struct hc_client *c, struct hc_origin *o, int on)
{
    if (on && !o->queued) {
        o->queued = 1;
        o->qlink_prev = NULL;
        o->qlink_next = c->queued;
        if (c->queued)
            c->queued->qlink_prev = o;
        c->queued = o;
    } else if (!on && o->queued) {
        o->queued = 0;
        if (o->qlink_prev)
            o->qlink_prev->qlink_next = o->qlink_next;
        else
            c->queued = o->qlink_next;
        if (o->qlink_next)
            o->qlink_next->qlink_prev = o->qlink_prev;
        o->qlink_prev = o->qlink_next = NULL;
    }
}

void hc_origins_close_idle(struct hc_client *c, void (*close_fn)(struct hc_conn *k))
{
    for (size_t i = 0; i < c->tab_cap; i++)
        if (c->tab[i])
            while (c->tab[i]->idle)
                close_fn(c->tab[i]->idle);
}

/* "/./" or "/../" in the path, or one at its end: curl removes dot segments before it
 * sends (RFC 3986 section 5.2.4), and the signature covers the target curl would send. */
static int has_dot_segment(const char *t, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (t[i] != '/' || t[i + 1] != '.')
            continue;
        size_t j = i + 2;
        if (j < len && t[j] == '.')
            j++;
        if (j == len || t[j] == '/' || t[j] == '?')
            return 1;
    }
    return 0;
}

const char *hc_target(const struct hc_origin *o, const char *url, char *buf, size_t cap,
                      size_t *len)
{
    const char *t = url + o->key_len;
    size_t n = strcspn(t, "#"); /* the fragment is never sent (RFC 9110 section 7.1) */
    size_t path = strcspn(t, "?#");
    if (n == 0) {
        *len = 1;
        return "/";
    }
    if (t[0] == '?' && n + 2 <= cap) { /* "http://h?q": the path is "/" */
        buf[0] = '/';
        memcpy(buf + 1, t, n);
        *len = n + 1;
        return buf;
    }
    if (has_dot_segment(t, path)) {
        struct url_parts *u = malloc(sizeof(*u));
        struct flood_err e;
        if (u && url_split(url, u, &e) == 0 && strlen(u->target) < cap) {
            *len = strlen(u->target);
            memcpy(buf, u->target, *len + 1);
            free(u);
            return buf;
        }
        free(u);
    }
    *len = n;
    return t;
}

/* ---- the client's set-up -------------------------------------------------------------- */

struct hc_client *hc_client_setup(struct event_base *base, const struct hc_opts *o,
                                  struct flood_err *err)
{
    if (!base || !o) {
        flood_err_set(err, FLOOD_EINVAL, "hclient: no event base or options");
        return NULL;
    }
    struct hc_client *c = flood_xcalloc(1, sizeof(*c));
    c->efd = -1;
    c->base = base;
    c->connections = o->connections > 0 ? o->connections : 64;
    c->insecure = o->insecure;
    if (o->n_resolve)
        c->resolve = flood_xcalloc(o->n_resolve, sizeof(*c->resolve));
    for (size_t i = 0; i < o->n_resolve; i++) {
        const char *s = o->resolve[i] ? o->resolve[i] : "";
        if (*s == '-')
            continue; /* curl's "remove this entry": nothing to remove here */
        if (parse_resolve(s, &c->resolve[c->n_resolve]) < 0) {
            flood_err_set(err, FLOOD_EINVAL,
                          "hclient: --resolve '%s' is not HOST:PORT:ADDR (ADDR an IP address)", s);
            hc_client_free_setup(c);
            return NULL;
        }
        c->n_resolve++;
    }
    c->ssl_ctx = tls_ctx(o, err);
    if (!c->ssl_ctx) {
        hc_client_free_setup(c);
        return NULL;
    }
    return c;
}

void hc_client_free_setup(struct hc_client *c)
{
    for (size_t i = 0; i < c->tab_cap; i++) {
        struct hc_origin *o = c->tab[i];
        if (!o)
            continue;
        if (o->sess)
            SSL_SESSION_free(o->sess);
        free(o->key);
        free(o);
    }
    free(c->tab);
    free(c->resolve);
    if (c->ssl_ctx)
        SSL_CTX_free(c->ssl_ctx);
    free(c);
}

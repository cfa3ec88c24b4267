/* flood/core/http.h: one blocking HTTP GET with libcurl, optionally signed as a crowd actor
 * (authorized fetch). For the few requests outside the sender's hot path: persona
 * discovery, `flood fetch`, key fetches. Bounded: a body limit, a timeout, http and https
 * only, redirects followed only on the same host (each one signed anew). Thread-safe: each
 * call uses its own easy handle. */
#ifndef FLOOD_HTTP_H
#define FLOOD_HTTP_H

#include <stddef.h>

#include "sign/err.h"
#include "sign/sign.h"

#define HTTP_BODY_MAX    (1024 * 1024)
#define HTTP_HEADERS_MAX (64 * 1024)
#define HTTP_TIMEOUT_MS  10000L
#define HTTP_SIGN_NONE   (-1)

struct http_opts {
    const char *const *resolve; /* curl --resolve entries "HOST:PORT:ADDR" */
    size_t n_resolve;
    const char *const *connect_to; /* curl --connect-to entries "HOST:PORT:HOST2:PORT2" */
    size_t n_connect_to;
    int insecure;           /* do not verify TLS certificates */
    const char *cacert;     /* CA bundle file, or NULL for the system's */
    long timeout_ms;        /* whole request; 0 = HTTP_TIMEOUT_MS */
    size_t max_body;        /* 0 = HTTP_BODY_MAX */
    int max_redirects;      /* same-host redirects to follow; 0 = none */
    const char *user_agent; /* NULL = "flood/VERSION" */
};

/* Who signs: dialect SIGN_CAVAGE or SIGN_RFC9421 with a private key and its keyId, or
 * dialect HTTP_SIGN_NONE (or a NULL signer) for an unsigned request. Borrowed. */
struct http_signer {
    int dialect;
    const struct sign_key *key;
    const char *key_id;
};

/* An answer. Strings are owned (http_resp_free). */
struct http_resp {
    long status;
    char *body; /* NUL-terminated (the body may hold NULs: use len) */
    size_t len;
    char *content_type; /* or NULL */
    char *headers;      /* the final response's header block as received */
    char *url;          /* the URL that answered (after same-host redirects) */
};

/* GET url with Accept: accept (NULL: none), signed by s. Any HTTP status is a success
 * (0, out filled: the caller judges the status); -1 and err ("http: GET 'URL': ...") for a
 * bad URL, a transport error, a timeout, a body over the limit or a redirect off the host. */
int http_get(const char *url, const char *accept, const struct http_signer *s,
             const struct http_opts *o, struct http_resp *out, struct flood_err *err) FLOOD_WUR;
void http_resp_free(struct http_resp *r);

/* Whether a media type (a Content-Type value, parameters allowed) is JSON: application/json,
 * application/...+json (activity+json, ld+json, jrd+json). */
int http_is_json_type(const char *content_type);

#endif

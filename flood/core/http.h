/* flood/core/http.h: the one bounded, optionally signed HTTP request of flood's requests
 * outside the sender's hot path: persona discovery, `flood fetch`, the inbound side's key
 * fetches and Accepts, `flood check`'s requests, capacity's stats probe and `flood run`'s
 * preflight. libcurl, one easy handle a request; http and https only; a timeout, a body
 * limit, redirects followed only as the caller's rule allows (each one signed anew).
 * Blocking (http_fetch), or one step of a caller's multi handle (http_call_*). Thread-safe:
 * each request has its own handle. */
#ifndef FLOOD_HTTP_H
#define FLOOD_HTTP_H

#include <curl/curl.h>
#include <stddef.h>

#include "sign/err.h"
#include "sign/sign.h"

#define HTTP_BODY_MAX    (1024 * 1024)
#define HTTP_HEADERS_MAX (64 * 1024)
#define HTTP_TIMEOUT_MS  10000L
#define HTTP_SIGN_NONE   (-1)

/* Transport: where to connect and how long to wait. Borrowed. */
struct http_opts {
    const char *const *resolve; /* curl --resolve entries "HOST:PORT:ADDR" */
    size_t n_resolve;
    const char *const *connect_to; /* curl --connect-to entries "HOST:PORT:HOST2:PORT2" */
    size_t n_connect_to;
    int insecure;           /* do not verify TLS certificates */
    const char *cacert;     /* CA bundle file, or NULL for the system's */
    long timeout_ms;        /* whole request, connecting included; 0 = HTTP_TIMEOUT_MS */
    size_t max_body;        /* 0 = HTTP_BODY_MAX */
    int max_redirects;      /* redirects to follow (GET only); 0 = none */
    const char *user_agent; /* NULL = "flood/VERSION" */
    const char *source;     /* a numeric local address to connect from, or NULL */
};

/* Who signs: dialect SIGN_CAVAGE or SIGN_RFC9421 with a private key and its keyId, or
 * dialect HTTP_SIGN_NONE (or a NULL signer) for an unsigned request. Borrowed. */
struct http_signer {
    int dialect;
    const struct sign_key *key;
    const char *key_id;
};

enum http_method {
    HTTP_GET,
    HTTP_POST,
    HTTP_CONNECT_ONLY, /* connect (TCP, and TLS for https) and close: nothing sent or signed */
};

/* One request. Everything is borrowed; body must live until the request ends. */
struct http_req {
    enum http_method method;
    const char *url;
    const char *accept;       /* the Accept value, or NULL for none */
    const char *content_type; /* POST: the Content-Type value (signed by cavage), or NULL */
    const char *body;         /* POST: the bytes sent (NULL: none) */
    size_t body_len;
    const struct http_signer *signer; /* NULL: unsigned */
    const char *const *headers;       /* further "Name: value" lines, sent unsigned */
    size_t n_headers;
    const struct http_opts *o; /* NULL: the defaults */
    int discard_body;          /* read the answer's body and drop it: no limit */
    const char *who;           /* the errors' prefix; NULL = "http" */
    /* A redirect from url to location (o->max_redirects permitting): 1 to follow it, or 0
     * with err filled to refuse it (the request then fails). NULL: only to the same
     * scheme, host and port ("redirect off the host"). */
    int (*redirect_ok)(void *ctx, const char *url, const char *location, struct flood_err *err);
    void *redirect_ctx;
};

/* An answer. Strings are owned (http_resp_free). */
struct http_resp {
    long status;
    char *body; /* NUL-terminated (the body may hold NULs: use len); "" when discarded */
    size_t len;
    char *content_type; /* or NULL */
    char *headers;      /* the final response's header block as received */
    char *url;          /* the URL that answered (after the redirects followed) */
    char *location;     /* a 3xx's Location not followed (the limit reached), or NULL */
    char *retry_after;  /* the Retry-After value, trimmed, or NULL */
};

/* Send req and wait for its answer, following redirects as o->max_redirects and
 * req->redirect_ok allow. Any HTTP status is a success (0, out filled: the caller judges
 * the status; HTTP_CONNECT_ONLY: status 0); -1 and err ("WHO: METHOD 'URL': ...") for a
 * bad URL, a signing failure, a transport error, a timeout (FLOOD_ELIMIT), a body over
 * the limit (FLOOD_ELIMIT, "body over N bytes") or a redirect refused; out is then
 * empty (http_resp_free is harmless). HTTP_CONNECT_ONLY's errors read "WHO: connect to
 * 'URL': ...". */
int http_fetch(const struct http_req *req, struct http_resp *out, struct flood_err *err) FLOOD_WUR;

/* http_fetch of a GET of url with Accept: accept (NULL: none), signed by s (NULL: not). */
int http_get(const char *url, const char *accept, const struct http_signer *s,
             const struct http_opts *o, struct http_resp *out, struct flood_err *err) FLOOD_WUR;
void http_resp_free(struct http_resp *r);

/* ---- one request on a caller's curl multi handle ------------------------------------- */

struct http_call;

/* req built into an easy handle (signed now) that is not yet started: add
 * http_call_easy(call) to a multi handle. No redirect is followed. A new call
 * (http_call_free), or NULL and err. user is the caller's, returned by http_call_user. */
struct http_call *http_call_new(const struct http_req *req, void *user,
                                struct flood_err *err) FLOOD_WUR;
CURL *http_call_easy(struct http_call *c);
void *http_call_user(const struct http_call *c);
/* The call an easy handle of http_call_new belongs to (the multi handle's CURLMSG_DONE). */
struct http_call *http_call_of(CURL *easy);
/* The answer of a call that ended with code cc (curl_easy_perform's, or CURLMSG_DONE's):
 * 0 and out filled, or -1 and err, as http_fetch. */
int http_call_done(struct http_call *c, CURLcode cc, struct http_resp *out,
                   struct flood_err *err) FLOOD_WUR;
/* Free the call and its easy handle (first removed from any multi handle by the caller). */
void http_call_free(struct http_call *c);

/* Whether a media type (a Content-Type value, parameters allowed) is JSON: application/json,
 * application/...+json (activity+json, ld+json, jrd+json). */
int http_is_json_type(const char *content_type);

#endif

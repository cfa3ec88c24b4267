/* flood/core/url.h: an http(s) URL split into the parts flood signs, compares and connects to,
 * by libcurl's URL API (so the parts are the ones curl then sends on the wire).
 *
 * Accepted: "http" or "https" (any case), "://", a host name or an IPv4 or bracketed IPv6
 * literal, an optional port 1..65535, then an optional path, query and fragment. Refused:
 * other schemes, userinfo ("user@" hides the real host from a reader), an IPv6 zone id, an
 * empty host, spaces and control bytes, and parts longer than the buffers below. The host
 * is lower-cased; the path is normalised as curl normalises it before sending ("/a/../b"
 * becomes "/b"); the fragment is dropped, since it is never sent (RFC 9110 section 7.1).
 *
 * The room flood/core/: what every other room of the daemon may use and that knows nothing
 * of the crowd or the run: URLs (url.c), listening addresses (addr.c), the bounded signed
 * request (http.c), the clocks (clock.c), the hash (hash.h), HTML escaping (html.c),
 * JSON paths (jpath.c). It calls sign/
 * and the libraries only. */
#ifndef FLOOD_URL_H
#define FLOOD_URL_H

#include "sign/err.h"

#define URL_INPUT_MAX     4096 /* the whole URL, bytes */
#define URL_SCHEME_MAX    8    /* "https" and its NUL */
#define URL_HOST_MAX      256  /* as WF_HOST_MAX */
#define URL_AUTHORITY_MAX (URL_HOST_MAX + 6)
#define URL_ORIGIN_MAX    (URL_SCHEME_MAX + 3 + URL_AUTHORITY_MAX)
#define URL_TARGET_MAX    2048

struct url_parts {
    char scheme[URL_SCHEME_MAX];       /* "http" or "https" */
    char host[URL_HOST_MAX];           /* lower-case; an IPv6 literal keeps its brackets */
    unsigned port;                     /* the explicit port, else 80 or 443 */
    char authority[URL_AUTHORITY_MAX]; /* host[:port], the port only when not the default:
                                          what curl sends as Host: */
    char target[URL_TARGET_MAX];       /* path[?query], at least "/": the request target */
    char origin[URL_ORIGIN_MAX];       /* scheme://authority */
};

/* Split url into *out. 0, or -1 with err (FLOOD_EINVAL for a URL flood does not take,
 * FLOOD_ELIMIT for one too long for the buffers above); *out is then unspecified.
 * Thread-safe; allocates only inside libcurl, and frees it before returning. */
int url_split(const char *url, struct url_parts *out, struct flood_err *err) FLOOD_WUR;

#endif

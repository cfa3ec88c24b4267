/* flood/crowd/proxy_parse.h: what the egress proxy (proxy.c) reads off the network, as pure
 * functions over bytes: a request head (request line, headers, body framing), its authority
 * (CONNECT's host:port, an absolute-form URL's host), whether that names one of the crowd's
 * instances, the head rewritten to origin-form for the crowd's listener, an answer's head
 * and chunked framing. No I/O, no allocation: every pointer out points into the caller's
 * buffer. Fuzzed by tests/fuzz/fuzz_proxy.c.
 *
 * The grammar is RFC 9112's, strictly: CRLF line ends, a token method, one SP between the
 * three parts, HTTP/1.0 or HTTP/1.1, header names as tokens with the colon right after, no
 * obsolete line folding; Content-Length digits only (repeats must agree), Transfer-Encoding
 * "chunked" alone, never both (a proxy that guessed would let one request hide another). */
#ifndef FLOOD_PROXY_PARSE_H
#define FLOOD_PROXY_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "webfinger/wf.h"

#define PROXY_HEAD_MAX    (32 * 1024) /* a request or answer head beyond: 431, closed */
#define PROXY_HEADERS_MAX 100         /* header lines in one head */

/* Why a head is not a request the proxy can read (each answered with its status, then the
 * connection closed; counted by name). */
enum proxy_bad {
    PROXY_BAD_NONE = 0,
    PROXY_BAD_LINE,      /* 400: the request line (method, target, spaces, line end) */
    PROXY_BAD_VERSION,   /* 505: not HTTP/1.0 or HTTP/1.1 */
    PROXY_BAD_HEADER,    /* 400: a header line (name, colon, folding, control bytes) */
    PROXY_BAD_TOO_LARGE, /* 431: the head passed PROXY_HEAD_MAX or PROXY_HEADERS_MAX */
    PROXY_BAD_AUTHORITY, /* 400: CONNECT's host:port or the URL's authority */
    PROXY_BAD_FRAMING,   /* 400: Content-Length / Transfer-Encoding unreadable or both */
    PROXY_BAD__COUNT
};

/* The request-target's form (RFC 9112 3.2). */
enum proxy_form {
    PROXY_FORM_ORIGIN = 0, /* "/path": a request to the proxy itself */
    PROXY_FORM_ABSOLUTE,   /* "http://host[:port]/path" */
    PROXY_FORM_AUTHORITY,  /* CONNECT "host:port" */
    PROXY_FORM_ASTERISK,   /* OPTIONS "*" */
};

enum proxy_host_kind {
    PROXY_HOST_NAME = 0,
    PROXY_HOST_IPV4, /* four dotted decimal numbers */
    PROXY_HOST_IPV6, /* a bracketed literal */
};

/* A host and port (ptr/len into the caller's buffer). */
struct proxy_authority {
    const char *host; /* without brackets for IPv6 */
    size_t host_len;
    int port; /* 1..65535, 0 when none was given */
    enum proxy_host_kind kind;
};

enum proxy_body {
    PROXY_BODY_NONE = 0, /* no body (or Content-Length: 0) */
    PROXY_BODY_LENGTH,   /* content_length bytes */
    PROXY_BODY_CHUNKED,  /* chunked to its last chunk and trailers */
    PROXY_BODY_CLOSE,    /* answers only: until the connection closes */
};

struct proxy_head {
    size_t head_len; /* the head's bytes, its final CRLF CRLF included */
    const char *method;
    size_t method_len;
    enum proxy_form form;
    int https;                   /* absolute-form with the https scheme (or another non-http) */
    int scheme_other;            /* absolute-form with a scheme neither http nor https */
    struct proxy_authority auth; /* ABSOLUTE and AUTHORITY forms */
    const char *path;            /* ORIGIN and ABSOLUTE: path and query ("/" when absent) */
    size_t path_len;
    int minor;            /* HTTP/1.minor */
    enum proxy_body body; /* NONE, LENGTH or CHUNKED */
    uint64_t content_length;
    int close; /* Connection: close, or HTTP/1.0 without keep-alive */
    int n_headers;
};

enum proxy_parse_rc {
    PROXY_PARSE_MORE = 0, /* no end of head yet: read more (len < PROXY_HEAD_MAX) */
    PROXY_PARSE_OK,       /* *out filled */
    PROXY_PARSE_BAD,      /* *bad says why */
};

/* Parse the request head at the start of buf[len] (bytes past the head are left alone).
 * PROXY_PARSE_OK with *out filled (pointers into buf), PROXY_PARSE_MORE, or PROXY_PARSE_BAD
 * with *bad set (PROXY_BAD_TOO_LARGE once len reaches PROXY_HEAD_MAX with no end). */
enum proxy_parse_rc proxy_parse_request(const char *buf, size_t len, struct proxy_head *out,
                                        enum proxy_bad *bad);

/* Parse an authority "host[:port]" of len bytes: a name (letters, digits, '-', '.', '_'),
 * dotted IPv4 or "[v6]". need_port: the port is required (CONNECT). 0, or -1. */
int proxy_parse_authority(const char *s, size_t len, int need_port, struct proxy_authority *out);

/* Why a request that parsed is refused (403, counted by host and by reason). */
enum proxy_refuse {
    PROXY_REFUSE_NONE = 0,
    PROXY_REFUSE_NOT_CROWD, /* a name that is not one of the crowd's instances */
    PROXY_REFUSE_ADDRESS,   /* an IP literal: the target asked for an address, not a name */
    PROXY_REFUSE_SELF,      /* the proxy's own port on an address or localhost */
    PROXY_REFUSE_ORIGIN,    /* origin- or asterisk-form: a request to the proxy, not through it */
    PROXY_REFUSE_SCHEME,    /* absolute-form with a scheme other than http */
    PROXY_REFUSE__COUNT
};

/* The instance (1..instances) h is for, or 0 and *why: a crowd name by the crowd's own
 * Host rule (wf_instance_of_host_n, any port); self_port is the proxy's own port. */
int proxy_route(const struct proxy_head *h, const struct wf_crowd *c, int self_port,
                enum proxy_refuse *why);

/* The name of a reason ("malformed request line", "not a crowd name", ...) and its short
 * key for counters and run.json ("line", "not_crowd", ...). Static strings. */
const char *proxy_bad_name(enum proxy_bad b);
const char *proxy_bad_key(enum proxy_bad b);
int proxy_bad_status(enum proxy_bad b);
const char *proxy_refuse_name(enum proxy_refuse r);
const char *proxy_refuse_key(enum proxy_refuse r);

/* The head of an absolute-form request h (parsed from buf) in origin-form for the crowd's
 * listener: "METHOD PATH HTTP/1.x", Host set to the URL's authority, Proxy-Connection and
 * Proxy-Authorization dropped, every other header as sent. Bytes written to out[cap], or 0
 * when it does not fit (cap of head_len + 300 always fits). */
size_t proxy_rewrite(const struct proxy_head *h, const char *buf, char *out, size_t cap);

/* An answer's head from the crowd: status and how its body ends. head_req: the request was
 * HEAD (no body whatever the headers say). 1xx answers (100 Continue) have no body and are
 * followed by the final one. */
struct proxy_resp {
    size_t head_len;
    int status;
    enum proxy_body body;
    uint64_t content_length;
    int close;
};
enum proxy_parse_rc proxy_parse_response(const char *buf, size_t len, int head_req,
                                         struct proxy_resp *out);

/* Chunked framing, fed bytes as they pass (they are relayed unchanged). */
struct proxy_chunked {
    int state;
    uint64_t left; /* data bytes left in the chunk */
    unsigned line; /* bytes of the current size or trailer line */
    int size_digits;
};
/* Consume up to len bytes of buf; *used says how many. 1 when the last chunk and trailers
 * ended (at buf + *used), 0 when more is needed, -1 for bytes that are not chunked framing. */
int proxy_chunked_feed(struct proxy_chunked *st, const char *buf, size_t len, size_t *used);

#endif

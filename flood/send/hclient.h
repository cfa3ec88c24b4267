/* flood/send/hclient.h: the sender's own HTTP/1.1 client, the hot path's carrier. One
 * client per event loop; per origin (scheme://host:port) a fixed number of keep-alive
 * connections on libevent bufferevents (OpenSSL bufferevents for https, with the origin's
 * TLS session reused on every new connection), one request in flight per connection (no
 * pipelining), the rest queued in order at the origin. Requests are written as prebuilt
 * bytes and answers read with a packaged parser (http-parser); the body of an answer is
 * read and dropped, only its status and whether it carried Retry-After are kept. Plain
 * connections are read from an epoll set of the client's own (one recvmsg an answer, with
 * the kernel's receive time), which the caller may leave unwatched between its own wakes
 * (hc_defer_reads).
 *
 * What a target may do is handled and classified: keep-alive and Connection: close,
 * HTTP/1.0 answers, sized, chunked and close-delimited bodies, 1xx answers before the
 * final one (skipped), an early close or reset (before or during the answer), slow or
 * partial answers, never answering (the request's deadline), refused connections, TLS
 * failures. A connection that was reused and closed before any byte of the answer came is
 * retried once on a new connection (a keep-alive race, as curl and browsers do); nothing
 * else is retried.
 *
 * Nothing here knows flood's statistics: the outcome is an hc_result the caller maps. */
#ifndef FLOOD_HCLIENT_H
#define FLOOD_HCLIENT_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"

/* How a request ended. HC_OK: a final answer was read whole (status set). */
enum hc_outcome {
    HC_OK = 0,
    HC_TIMEOUT,  /* the deadline passed (connecting, writing, waiting, reading) */
    HC_REFUSED,  /* connect: ECONNREFUSED */
    HC_RESET,    /* closed or reset with no answer or half an answer */
    HC_DNS,      /* the host is not an address and not in --resolve, or did not resolve */
    HC_TLS,      /* handshake or certificate */
    HC_PROTOCOL, /* an answer that is not HTTP/1.x, or a parse error */
    HC_OTHER,    /* anything else (os_errno says what) */
};

const char *hc_outcome_name(enum hc_outcome o);

struct hc_result {
    enum hc_outcome outcome;
    int status;      /* the final answer's status (HC_OK), else 0 */
    int retry_after; /* the answer carried a Retry-After header */
    int os_errno;    /* for transport outcomes, when known */
    int reused;      /* sent on a connection that had carried an earlier request */
    /* plain http: when the answer's last bytes reached this host (the kernel's receive
     * time, SO_TIMESTAMPNS, on CLOCK_MONOTONIC), true however late the loop read them;
     * 0 where unknown (https, or a packet the kernel did not stamp: Linux turns stamps on
     * from a work queue when the host's first socket asks; the caller's clock when done is
     * called stands for it) */
    int64_t answered_ns;
};

struct hc_opts {
    long connections; /* per origin, default 64 */
    int insecure;     /* https: no certificate or name check */
    const char *cacert;
    /* --resolve entries "HOST:PORT:ADDR" (borrowed, n_resolve of them): a URL's host that
     * is not a literal address must be found here (no DNS on the hot path) */
    const char *const *resolve;
    size_t n_resolve;
};

struct hc_req {
    /* in: the caller's, kept alive until done is called */
    const char *url;  /* http:// or https:// absolute URL */
    const char *head; /* header lines, each "Name: value\r\n", without Host and
                         Content-Length (the client writes those) */
    size_t head_len;
    const char *body;
    size_t body_len;
    int64_t deadline_ns; /* CLOCK_MONOTONIC ns: the request fails HC_TIMEOUT past it */
    uint32_t src_ipv4;   /* bind this source address (host order), or 0; a connection
                            carries only requests of the source it was opened with */
    void (*done)(struct hc_req *req, const struct hc_result *res);
    void *ud;
    /* the client's */
    struct hc_req *qnext; /* the origin's queue, then the list of requests to tell */
    void *conn;           /* the connection carrying it, or NULL */
    int tries;            /* 1 once retried on a fresh connection */
    struct hc_result res; /* what done is told */
};

struct hc_client;

/* A client on base (borrowed). NULL and err (bad options, a TLS context refused). */
struct hc_client *hc_new(struct event_base *base, const struct hc_opts *o,
                         struct flood_err *err) FLOOD_WUR;
/* Start req (or queue it behind its origin's busy connections). done is always called
 * exactly once, from the loop, never from inside hc_send (a URL that cannot be parsed
 * ends HC_PROTOCOL, a host that cannot be resolved HC_DNS, on the next loop turn). done
 * may call hc_send and hc_cancel_all, not hc_free; after done the client no longer
 * touches req. Writing to a socket the peer reset raises SIGPIPE inside OpenSSL and
 * libevent: the process ignores SIGPIPE (flood run does). */
void hc_send(struct hc_client *c, struct hc_req *req);
/* Open up to n connections to url's origin now (fewer when its --connections would be
 * passed), each joining the origin's idle connections once connected (and, over https,
 * handshaken), for the requests to come; one not connected by deadline_ns
 * (CLOCK_MONOTONIC) is closed. A connection that fails is closed and nothing is told: a
 * request meets the same failure and ends in its outcome. Returns how many were started
 * (0 for a URL that cannot be reached). wrk's connections are open before it measures; a
 * sender that opened its own in the first second would be late by its handshakes. */
long hc_preconnect(struct hc_client *c, const char *url, long n, int64_t deadline_ns);
/* While reads are deferred (hc_defer_reads): read the plain connections' answers that have
 * come (done is called on the loop's next turn). Otherwise nothing: answers wake the loop.
 * Never blocks. */
void hc_poll(struct hc_client *c);
/* on = 1: an answer on a plain connection no longer wakes the loop; it waits in its socket
 * until hc_poll (the caller's next wake) or the client's deadline sweep (10 ms at most),
 * and answered_ns says when it came. For a sender whose next wake is near anyway: one
 * wake a request where an answer's own would make two. on = 0: answers wake the loop. */
void hc_defer_reads(struct hc_client *c, int on);
/* 1 when a request waits at its origin for a connection to free (all --connections busy). */
int hc_queued(const struct hc_client *c);
/* Requests started and not yet done (queued or on a connection). */
uint64_t hc_in_flight(const struct hc_client *c);
/* Connections opened so far (a measure of reuse). */
uint64_t hc_connects(const struct hc_client *c);
/* TLS connections that resumed their origin's session (an abbreviated handshake). */
uint64_t hc_tls_resumed(const struct hc_client *c);
/* End every request still open with HC_OTHER and os_errno ECANCELED (done is called, from
 * inside this call; a request sent from such a done ends the same way), close every
 * connection. */
void hc_cancel_all(struct hc_client *c);
/* hc_cancel_all, then free c. c may be NULL. Some of libevent's own bufferevent memory is
 * released only by the base's next loop turn or event_base_free. */
void hc_free(struct hc_client *c);

/* The answer parser alone, for the fuzzer and the tests: feed an answer's bytes in any
 * chunks; returns the number of final answers completed so far, or -1 once the bytes are
 * not HTTP. last_status/retry_after describe the last final answer. */
struct hc_parse;
struct hc_parse *hc_parse_new(void); /* never NULL (aborts out of memory); hc_parse_free */
int hc_parse_feed(struct hc_parse *p, const char *buf, size_t len);
int hc_parse_eof(struct hc_parse *p); /* the peer closed: completes a close-delimited body */
int hc_parse_last_status(const struct hc_parse *p);
int hc_parse_retry_after(const struct hc_parse *p);
void hc_parse_free(struct hc_parse *p);

#endif

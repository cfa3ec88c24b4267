/* flood/send/hclient_internal.h: the client's records, shared by hclient.c (connections,
 * queues, requests) and hclient_origin.c (origins, --resolve, TLS). Not for other files. */
#ifndef FLOOD_HCLIENT_INTERNAL_H
#define FLOOD_HCLIENT_INTERNAL_H

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <sys/socket.h>

#include "flood/core/url.h"
#include "flood/send/hclient.h"
#include "flood/send/hclient_parse.h"

#define HC_TARGET_MAX URL_TARGET_MAX /* a target rewritten (dot segments, no path) */

enum hc_conn_state {
    HC_CONN_CONNECTING, /* TCP connect or TLS handshake, its first request waiting */
    HC_CONN_BUSY,       /* a request written or being written, its answer awaited */
    HC_CONN_IDLE,       /* open, nothing in flight: on its origin's idle list */
};

struct hc_origin;

struct hc_conn {
    struct hc_client *c;
    struct hc_origin *o;
    struct bufferevent *bev;
    SSL *ssl;      /* https: owned by bev */
    int in_poll;   /* plain, once connected: on the client's epoll set (read there, not by bev) */
    int dead;      /* closed inside poll_reads: freed when it ends (an event may still name it) */
    int64_t rx_ns; /* the kernel's receive time (CLOCK_REALTIME) of the latest bytes read */
    struct hc_req *req;
    enum hc_conn_state state;
    uint32_t src;         /* the source address it is bound to, 0 for none */
    uint64_t served;      /* answers read whole on it */
    int got_bytes;        /* a byte of the current answer came */
    int64_t pre_deadline; /* opened ahead (hc_preconnect), not connected yet: closed past it */
    struct hc_conn *prev; /* the origin's idle list, or the client's busy list */
    struct hc_conn *next;
    struct hc_parse parse;
};

struct hc_origin {
    char *key; /* the URL's bytes before the path: "https://host:port" as written */
    size_t key_len;
    uint64_t hash;
    int tls;
    char authority[URL_AUTHORITY_MAX]; /* the Host header's value */
    size_t auth_len;
    char host[URL_HOST_MAX]; /* for SNI and the certificate check: no brackets */
    int host_is_ip;
    struct sockaddr_storage sa;
    socklen_t sa_len;
    enum hc_outcome fail; /* not HC_OK: every request to it ends so (bad URL, no address) */
    int fail_errno;
    long n_conns;
    struct hc_conn *idle;
    struct hc_req *qhead, *qtail;
    int queued; /* on the client's list of origins with a queue */
    struct hc_origin *qlink_prev, *qlink_next;
    SSL_SESSION *sess; /* the latest session its server gave, resumed by new connections */
};

struct hc_resolve {
    char host[URL_HOST_MAX];
    unsigned port;
    struct sockaddr_storage sa;
    socklen_t sa_len;
};

struct hc_client {
    struct event_base *base;
    long connections;
    int insecure;
    SSL_CTX *ssl_ctx;
    struct hc_resolve *resolve;
    size_t n_resolve;
    struct hc_origin **tab; /* open addressing on the key's hash */
    size_t tab_cap, n_origins;
    struct hc_origin *last;             /* the origin of the last request: most runs have one */
    struct hc_origin *queued;           /* origins whose queue is not empty */
    struct hc_conn *busy;               /* connections carrying a request (connecting or busy) */
    struct hc_req *fin_head, *fin_tail; /* ended, done not called yet */
    struct event *fin_ev, *sweep_ev;
    int sweep_on;
    int cancelling;
    uint64_t in_flight, connects, tls_resumed;
    long n_pre; /* connections opened ahead and still connecting */
    /* plain connections' reads: an epoll set of their own, its fd watched by eev unless
     * reads are deferred (hc_defer_reads) */
    int efd;
    struct event *eev;
    int deferring, polling;
    struct hc_conn *dead; /* closed during poll_reads, freed at its end */
};

/* hclient_conn.c */
/* CLOCK_MONOTONIC, ns. */
int64_t hc_mono_ns(void);
/* CLOCK_MONOTONIC ns of a CLOCK_REALTIME receive time: now less its age. */
int64_t hc_mono_of_real(int64_t real_ns);
/* r has ended: its result is set now, done is called from c's fin_ev (or hc_cancel_all). */
void hc_finish(struct hc_client *c, struct hc_req *r, enum hc_outcome outcome, int status,
               int os_errno);
/* Call done for every ended request, one at a time: a done may end or send more. */
void hc_flush(struct hc_client *c);
/* Close k (whatever its state) and free it (later, when closed inside poll_reads); its
 * request, if any, was taken off before. */
void hc_conn_close(struct hc_conn *k);
/* The fd of a new non-blocking TCP connection to o (bound to src_ipv4 unless 0), connect()
 * under way (or done). -1 and errno when it cannot even start. */
int hc_tcp_start(const struct hc_origin *o, uint32_t src_ipv4);
/* Write k's request: "POST target HTTP/1.1", Host, the caller's head, Content-Length, the
 * body (plain: sent at once with sendmsg). 0, or -1 and errno when the connection failed
 * under the write. */
int hc_write_request(struct hc_conn *k);
/* What a failure while connecting means (what: the bufferevent's flags). */
enum hc_outcome hc_connect_outcome(int tls, short what, int err, unsigned long sslerr);

/* hclient_origin.c */
/* A client with its options, --resolve and TLS context set up, no events yet. NULL and
 * err. Free with hc_client_free_setup. */
struct hc_client *hc_client_setup(struct event_base *base, const struct hc_opts *o,
                                  struct flood_err *err) FLOOD_WUR;
/* Free what hc_client_setup made and every origin (their connections closed before). */
void hc_client_free_setup(struct hc_client *c);
/* The origin of url, made on first sight (o->fail says when it cannot be reached); NULL
 * when url has no "scheme://". Borrowed: lives as long as c. */
struct hc_origin *hc_origin_get(struct hc_client *c, const char *url);
/* Put o on (on = 1) or off c's list of origins with a queue. */
void hc_origin_queued(struct hc_client *c, struct hc_origin *o, int on);
/* Close every idle connection of every origin with close_fn. */
void hc_origins_close_idle(struct hc_client *c, void (*close_fn)(struct hc_conn *k));
/* The request target of url on o: a pointer into url or into buf, *len its length. */
const char *hc_target(const struct hc_origin *o, const char *url, char *buf, size_t cap,
                      size_t *len);
/* A new SSL for connection k to o on fd (SNI, name check, o's session), or NULL. */
SSL *hc_tls_new(struct hc_client *c, struct hc_origin *o, struct hc_conn *k, int fd);

/* The connections' lists (an origin's idle ones, the client's busy ones) and the origins'
 * queues of requests waiting for a connection. */
static inline void hc_list_push(struct hc_conn **head, struct hc_conn *k)
{
    k->prev = NULL;
    k->next = *head;
    if (*head)
        (*head)->prev = k;
    *head = k;
}

static inline void hc_list_unlink(struct hc_conn **head, struct hc_conn *k)
{
    if (k->prev)
        k->prev->next = k->next;
    else
        *head = k->next;
    if (k->next)
        k->next->prev = k->prev;
    k->prev = k->next = NULL;
}

static inline void hc_queue_push(struct hc_client *c, struct hc_origin *o, struct hc_req *r)
{
    r->qnext = NULL;
    if (o->qtail)
        o->qtail->qnext = r;
    else {
        o->qhead = r;
        hc_origin_queued(c, o, 1);
    }
    o->qtail = r;
}

static inline void hc_queue_unshift(struct hc_client *c, struct hc_origin *o, struct hc_req *r)
{
    r->qnext = o->qhead;
    if (!o->qhead) {
        o->qtail = r;
        hc_origin_queued(c, o, 1);
    }
    o->qhead = r;
}

static inline struct hc_req *hc_queue_pop(struct hc_client *c, struct hc_origin *o)
{
    struct hc_req *r = o->qhead;
    if (!r)
        return NULL;
    o->qhead = r->qnext;
    if (!o->qhead) {
        o->qtail = NULL;
        hc_origin_queued(c, o, 0);
    }
    r->qnext = NULL;
    return r;
}

#endif

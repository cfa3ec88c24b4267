/* flood/crowd/server.c: the crowd's HTTP server on libmicrohttpd. One daemon, one listener, every
 * instance told apart by its Host header. This file only turns requests into calls of
 * webfinger/ and of the hooks, and applies faults (delays and hangs suspend the connection;
 * a reset closes it with SO_LINGER 0 so the peer sees RST). */
#include "flood/crowd/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <linux/sockios.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "flood/core/addr.h"
#include "flood/crowd/dns.h"
#include "flood/crowd/tls_sni.h"
#include "flood/core/clock.h"
#include "sign/sign.h"
#include "webfinger/page.h"
#include "webfinger/png.h"

#define SERVER_HEADER_MEMORY   (64 * 1024) /* per-connection pool: headers beyond get 431 */
#define SERVER_IDLE_TIMEOUT    30          /* seconds: slow or idle connections are cut off */
#define SERVER_MAX_CONNECTIONS 20000
#define SERVER_STREAM_BLOCK    (64 * 1024) /* bytes an image reader makes at a time */
#define SERVER_CORK_MAX        (8 * 1024)  /* TLS: an answer's body up to this goes as one record */
#define SERVER_FLUSH_MS        1000        /* TLS: how long a corked answer may wait for room */
#define SERVER_HANG_CHECK_MS   1000        /* how often hung connections are looked at */

/* A connection suspended by a fault: resumed at due (a hang: when its peer has closed, or at
 * stop). */
struct suspended {
    struct MHD_Connection *conn;
    struct request *req;
    struct timespec due;
    int hang;
    struct suspended *next;
};

struct server {
    struct crowd *crowd;
    struct server_hooks hooks;
    struct MHD_Daemon *mhd;
    struct dns *dns; /* --dns, or NULL */
    int port;
    char address[ADDR_TEXT_MAX];
    /* the fault timer: a thread resuming delayed connections at their due time */
    pthread_t timer;
    int timer_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct suspended *pending;
    int stopping;
    atomic_ullong requests, by_status[6], bad_host, too_large, faults, unflushed, hangs_closed;
};

/* Per-request state, freed in the completion callback. */
struct request {
    char *body;
    size_t len, cap;
    int too_large;
    int fault_done; /* the fault hook ran */
    struct server_fault fault;
    int resumed;     /* came back from a delay */
    int flight_inst; /* an inbox POST to this instance, counted in flight (inbox_flight) */
    /* for the served hook: a GET or HEAD of a crowd host, and what was answered */
    uint64_t t0_us;          /* the request's first call, CLOCK_MONOTONIC */
    int fetch;               /* GET/HEAD routed to a crowd host (or its unknown path) */
    int head;                /* HEAD: no body goes out */
    int status;              /* the status queued, 0 before */
    uint64_t bytes;          /* body bytes: a buffer's length, or what a stream has read */
    int streamed;            /* bytes counts as the stream goes (not the buffer's length) */
    struct wf_route route;   /* its route (kind NONE for an unknown path) */
    char *url;               /* host and path, owned */
    gnutls_session_t corked; /* TLS: the answer waits in GnuTLS, sent whole at completion */
};

const char *server_req_header(const struct server_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

struct header_walk {
    struct sign_header *hdrs;
    size_t n, max;
};

static enum MHD_Result header_cb(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    struct header_walk *w = cls;
    if (w->n >= w->max)
        return MHD_NO;
    w->hdrs[w->n].name = key;
    w->hdrs[w->n].value = value ? value : "";
    w->n++;
    return MHD_YES;
}

size_t server_req_headers(const struct server_req *req, struct sign_header *hdrs, size_t max)
{
    struct header_walk w = {.hdrs = hdrs, .max = max};
    MHD_get_connection_values(req->conn, MHD_HEADER_KIND, header_cb, &w);
    return w.n;
}

static void count_status(struct server *s, int status)
{
    int k = status / 100;
    atomic_fetch_add(&s->by_status[(k >= 1 && k <= 5) ? k : 0], 1);
}

/* ---- TLS answers as one record ------------------------------------------------------ */

/* libmicrohttpd (0.9.75) hands GnuTLS an answer's head and body in two calls: two records,
 * two sendmsg, and two reads at the other end, where a server writing the answer whole makes
 * one. An answer of at most SERVER_CORK_MAX body bytes is queued with the session corked: it
 * waits in GnuTLS and leaves as one record when the request completes (uncork). Only on an
 * empty send queue: a queue holding bytes means a client not reading its answers (pipelining
 * ahead), and there the write at completion could find the socket full. A small answer on an
 * empty queue is always taken whole. */
static void cork(struct request *rq, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ts =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int queued = 1;
    if (!ts || !ts->tls_session || !fd || ioctl(fd->connect_fd, SIOCOUTQ, &queued) != 0 ||
        queued != 0)
        return;
    rq->corked = (gnutls_session_t)ts->tls_session;
    gnutls_record_cork(rq->corked);
}

/* At completion the corked answer goes out. Should the socket be full after all, a completed
 * answer waits for room up to SERVER_FLUSH_MS; one that still cannot leave ends its
 * connection (counted: unflushed) rather than sit in GnuTLS with no write to come. 0 when
 * the answer left (or its connection was closing anyway), -1 when it was cut. */
static int uncork(struct server *s, struct request *rq, struct MHD_Connection *conn,
                  enum MHD_RequestTerminationCode toe)
{
    gnutls_session_t ts = rq->corked;
    rq->corked = NULL;
    int rc = gnutls_record_uncork(ts, 0);
    if (rc >= 0 || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        return 0; /* sent, or the connection is closing anyway */
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!fd)
        return 0;
    int64_t t0 = clock_mono_ms();
    while ((rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED) &&
           clock_mono_ms() - t0 < SERVER_FLUSH_MS) {
        /* POLLOUT waits for half the send buffer free: a record may fit sooner */
        struct pollfd p = {.fd = fd->connect_fd, .events = POLLOUT};
        poll(&p, 1, 10);
        rc = gnutls_record_uncork(ts, 0);
    }
    if (rc >= 0)
        return 0;
    atomic_fetch_add(&s->unflushed, 1);
    shutdown(fd->connect_fd, SHUT_RDWR);
    return -1;
}

/* Queue doc as the answer (taking its body). persistent: body is not ours to free. */
static enum MHD_Result answer(struct server *s, struct request *rq, struct MHD_Connection *conn,
                              struct wf_doc *doc, int persistent, int vary, long retry_after,
                              const char *allow)
{
    if (rq) {
        rq->status = doc->status;
        rq->bytes = doc->body ? doc->len : 0;
    }
    struct MHD_Response *r;
    if (doc->body)
        r = MHD_create_response_from_buffer(
            doc->len, doc->body, persistent ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
    else
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (!persistent)
            free(doc->body);
        doc->body = NULL;
        return MHD_NO;
    }
    doc->body = NULL; /* the response owns it now */
    if (doc->content_type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, doc->content_type);
    if (vary)
        MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept");
    if (retry_after > 0) {
        char ra[32];
        snprintf(ra, sizeof(ra), "%ld", retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, "flood/" FLOOD_VERSION);
    count_status(s, doc->status);
    if (rq && s->crowd->opts.tls && rq->bytes <= SERVER_CORK_MAX)
        cork(rq, conn);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)doc->status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result answer_error(struct server *s, struct request *rq,
                                    struct MHD_Connection *conn, int status, const char *msg,
                                    const char *allow)
{
    struct wf_doc d;
    wf_error(status, msg, &d);
    return answer(s, rq, conn, &d, 0, 0, 0, allow);
}

/* ---- images, streamed ---------------------------------------------------------------- */

/* An image being sent: the generator and where to count what went out. */
struct stream {
    struct wf_png png;
    uint64_t *sent; /* the request's byte count: the reader only runs before completion */
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *st = cls;
    if (pos != st->png.pos) /* no Range support: bytes go out in order */
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = wf_png_read(&st->png, (uint8_t *)buf, max);
    if (n == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    *st->sent += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    free(cls);
}

/* Answer an image of m, made as it is sent: tens of megabytes never sit in memory. */
static enum MHD_Result answer_image(struct server *s, struct request *rq,
                                    struct MHD_Connection *conn, const struct wf_media *m)
{
    struct stream *st = flood_xcalloc(1, sizeof(*st));
    wf_png_init(&st->png, m);
    st->sent = &rq->bytes;
    struct MHD_Response *r = MHD_create_response_from_callback(m->bytes, SERVER_STREAM_BLOCK,
                                                               stream_read, st, stream_free);
    if (!r) {
        free(st);
        return MHD_NO;
    }
    rq->status = 200;
    rq->bytes = 0;
    rq->streamed = 1;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, WF_CT_PNG);
    /* the bytes of an image URL never change */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
                            "public, max-age=31536000, immutable");
    MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, "flood/" FLOOD_VERSION);
    count_status(s, 200);
    enum MHD_Result ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- faults ------------------------------------------------------------------------- */

/* Has the peer of a hung connection closed its side (or reset it)? A hang holds a connection
 * the target has given up on only at flood's cost: the target sees nothing more of it (a
 * hung server's socket in CLOSE-WAIT looks the same from its end), while every one kept
 * would hold a descriptor until the run ends, as many as the target's retries over a long
 * run. A client that shut down only its sending side and still waits for the answer is let
 * go too: no HTTP client flood meets does that. */
static int peer_closed(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return 0;
    struct pollfd pfd = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
    return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static int ts_before(struct timespec a, struct timespec b)
{
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

static void *timer_main(void *arg)
{
    struct server *s = arg;
    struct timespec hang_check = clock_mono_after(SERVER_HANG_CHECK_MS);
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        struct timespec now = clock_mono_after(0);
        int check_hangs = !ts_before(now, hang_check), hangs = 0;
        if (check_hangs)
            hang_check = clock_mono_after(SERVER_HANG_CHECK_MS);
        struct suspended **pp = &s->pending, *next_due = NULL;
        while (*pp) {
            struct suspended *p = *pp;
            int due = !p->hang && !ts_before(now, p->due);
            if (p->hang && check_hangs && peer_closed(p->conn)) {
                /* resumed as a hang cut short: the handler closes it, unanswered */
                atomic_fetch_add(&s->hangs_closed, 1);
                due = 1;
            }
            hangs += p->hang && !due;
            if (due) {
                *pp = p->next;
                p->req->resumed = 1;
                MHD_resume_connection(p->conn);
                free(p);
                continue;
            }
            if (!p->hang && (!next_due || ts_before(p->due, next_due->due)))
                next_due = p;
            pp = &p->next;
        }
        /* the next delay due, or the next look at the hangs, whichever comes first */
        if (next_due || hangs) {
            struct timespec until = next_due ? next_due->due : hang_check;
            if (hangs && ts_before(hang_check, until))
                until = hang_check;
            pthread_cond_timedwait(&s->cond, &s->lock, &until);
        } else {
            pthread_cond_wait(&s->cond, &s->lock);
        }
    }
    /* At stop, every suspended connection is resumed so the daemon can close it. */
    while (s->pending) {
        struct suspended *p = s->pending;
        s->pending = p->next;
        p->req->resumed = 1;
        p->req->fault.hang = 0;
        MHD_resume_connection(p->conn);
        free(p);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* Suspend conn for delay_ms (or until the stop, hang). 0, or -1 when the server is stopping:
 * the timer thread has resumed its last connection and will resume no more, and MHD aborts
 * when it is stopped with one still suspended, so the caller answers at once. */
static int suspend_for(struct server *s, struct MHD_Connection *conn, struct request *rq,
                       long delay_ms, int hang)
{
    struct suspended *p = flood_xcalloc(1, sizeof(*p));
    p->conn = conn;
    p->req = rq;
    p->hang = hang;
    p->due = clock_mono_after(delay_ms);
    pthread_mutex_lock(&s->lock);
    if (s->stopping) {
        pthread_mutex_unlock(&s->lock);
        free(p);
        return -1;
    }
    MHD_suspend_connection(conn);
    p->next = s->pending;
    s->pending = p;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static enum MHD_Result reset_connection(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    return MHD_NO; /* MHD closes the connection: with linger 0, an RST */
}

/* ---- dispatch ----------------------------------------------------------------------- */

static int is_get(const char *m)
{
    return !strcmp(m, MHD_HTTP_METHOD_GET) || !strcmp(m, MHD_HTTP_METHOD_HEAD);
}

static enum MHD_Result dispatch(struct server *s, struct MHD_Connection *conn,
                                struct server_req *req, struct request *rq)
{
    struct crowd *c = s->crowd;
    struct wf_route *rt = &req->route;
    struct wf_doc doc = {0};
    int status;

    if (rq->fault.status) {
        atomic_fetch_add(&s->faults, 1);
        wf_error(rq->fault.status, "fault injected", &doc);
        return answer(s, rq, conn, &doc, 0, 0, rq->fault.retry_after, NULL);
    }
    int post = !strcmp(req->method, MHD_HTTP_METHOD_POST);
    switch (rt->kind) {
    case WF_ROUTE_INBOX:
    case WF_ROUTE_SHARED_INBOX:
        if (!post)
            return answer_error(s, rq, conn, 405, "inbox: POST only", "POST");
        if (rq->too_large) {
            atomic_fetch_add(&s->too_large, 1);
            return answer_error(s, rq, conn, 413, "inbox: body over 1 MiB", NULL);
        }
        if (s->hooks.inbox && (status = s->hooks.inbox(s->hooks.ctx, req, &doc)) > 0)
            return answer(s, rq, conn, &doc, 0, 0, 0, NULL);
        doc = (struct wf_doc){
            .status = 202, .content_type = WF_CT_JSON, .body = flood_xstrdup("{}"), .len = 2};
        return answer(s, rq, conn, &doc, 0, 0, 0, NULL);
    default:
        break;
    }
    if (!is_get(req->method))
        return answer_error(s, rq, conn, 405, "this resource answers GET only", "GET, HEAD");

    int vary = 0;
    switch (rt->kind) {
    case WF_ROUTE_WEBFINGER: {
        /* With its length: a resource holding %00 must not be cut short into a valid one. */
        const char *res = NULL;
        size_t res_len = 0;
        if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "resource", 8, &res,
                                          &res_len) != MHD_YES)
            res = NULL;
        wf_webfinger_n(&c->wf, rt->instance, res, res_len, &doc);
        break;
    }
    case WF_ROUTE_HOST_META:
        wf_host_meta(&c->wf, rt->instance, &doc);
        break;
    case WF_ROUTE_NODEINFO_WK:
        wf_nodeinfo_wellknown(&c->wf, rt->instance, &doc);
        break;
    case WF_ROUTE_NODEINFO_20:
        wf_nodeinfo(&c->wf, rt->instance, "2.0", &doc);
        break;
    case WF_ROUTE_NODEINFO_21:
        wf_nodeinfo(&c->wf, rt->instance, "2.1", &doc);
        break;
    case WF_ROUTE_ACTOR:
        if (!wf_accepts_activity_json(server_req_header(req, MHD_HTTP_HEADER_ACCEPT)))
            return answer_error(s, rq, conn, 406, "actor: only ActivityPub JSON is served", NULL);
        if (s->hooks.actor && (status = s->hooks.actor(s->hooks.ctx, req, &doc)) > 0) {
            vary = 1;
            break;
        }
        if (c->actor_docs) {
            /* The hot path: a pre-rendered document, served without a copy. */
            const struct crowd_doc *d =
                &c->actor_docs[crowd_actor_index(c, rt->instance, rt->actor)];
            doc = (struct wf_doc){
                .status = 200, .content_type = WF_CT_ACTIVITY, .body = d->body, .len = d->len};
            return answer(s, rq, conn, &doc, 1, 1, 0, NULL);
        }
        crowd_actor_doc(c, rt->instance, rt->actor, &doc);
        vary = 1;
        break;
    case WF_ROUTE_KEY:
        if (s->hooks.actor && (status = s->hooks.actor(s->hooks.ctx, req, &doc)) > 0)
            break;
        crowd_key_doc(c, rt->instance, rt->actor, &doc);
        break;
    case WF_ROUTE_PAGE:
        wf_page(&c->wf, rt->instance, rt->seq, &doc);
        break;
    case WF_ROUTE_EMOJI_DOC:
        wf_emoji_doc(&c->wf, rt->instance, req->path + 7, &doc); /* after "/emoji/" */
        vary = 1;
        break;
    case WF_ROUTE_MEDIA:
    case WF_ROUTE_EMOJI:
    case WF_ROUTE_AVATAR:
    case WF_ROUTE_HEADER:
        return answer_image(s, rq, conn, &rt->media);
    case WF_ROUTE_FOLLOWERS:
    case WF_ROUTE_FOLLOWING: {
        size_t n;
        uint64_t idx = crowd_actor_index(c, rt->instance, rt->actor);
        char **list = follows_list(c->follows, idx, rt->kind == WF_ROUTE_FOLLOWERS, &n);
        wf_collection(&c->wf, rt->instance, rt->actor, rt->kind, (const char *const *)list, n, n,
                      &doc);
        follows_list_free(list, n);
        vary = 1;
        break;
    }
    case WF_ROUTE_OUTBOX:
    case WF_ROUTE_NOTE:
    case WF_ROUTE_ACTIVITY:
        if (s->hooks.object && (status = s->hooks.object(s->hooks.ctx, req, &doc)) > 0) {
            vary = 1;
            break;
        }
        if (rt->kind == WF_ROUTE_OUTBOX)
            wf_collection(&c->wf, rt->instance, rt->actor, rt->kind, NULL, 0, 0, &doc);
        else
            wf_error(404, "object: no such object in this run", &doc);
        vary = 1;
        break;
    default:
        wf_error(404, "no such resource", &doc);
        break;
    }
    return answer(s, rq, conn, &doc, 0, vary, 0, NULL);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct server *s = cls;
    struct request *rq = *con_cls;
    if (!rq) {
        rq = flood_xcalloc(1, sizeof(*rq));
        rq->t0_us = clock_mono_us();
        *con_cls = rq;
        atomic_fetch_add(&s->requests, 1);
        const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
        struct wf_route r;
        if (s->hooks.inbox_flight && !strcmp(method, "POST") && host &&
            !wf_route(&s->crowd->wf, host, url, &r) &&
            (r.kind == WF_ROUTE_INBOX || r.kind == WF_ROUTE_SHARED_INBOX) && r.instance > 0) {
            rq->flight_inst = r.instance;
            s->hooks.inbox_flight(s->hooks.ctx, r.instance, 1);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (rq->too_large || rq->len + n > SERVER_BODY_MAX) {
            rq->too_large = 1;
            return MHD_YES; /* keep reading, drop the bytes: 413 at the end */
        }
        if (rq->len + n + 1 > rq->cap) {
            rq->cap = (rq->len + n + 1) * 2;
            if (rq->cap > SERVER_BODY_MAX + 1)
                rq->cap = SERVER_BODY_MAX + 1;
            rq->body = flood_xrealloc(rq->body, rq->cap);
        }
        memcpy(rq->body + rq->len, upload_data, n);
        rq->len += n;
        rq->body[rq->len] = '\0';
        return MHD_YES;
    }

    struct server_req req = {
        .method = method,
        .host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST),
        .path = url,
        .body = rq->body,
        .body_len = rq->len,
        .conn = conn,
    };
    char remote[INET6_ADDRSTRLEN] = "";
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        getnameinfo(sa,
                    sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                              : sizeof(struct sockaddr_in),
                    remote, sizeof(remote), NULL, 0, NI_NUMERICHOST);
    }
    req.remote = remote;

    int routed = req.host ? wf_route(&s->crowd->wf, req.host, url, &req.route) : 421;
    if (routed != 421 && is_get(method) && !rq->url) {
        rq->fetch = 1;
        rq->head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
        rq->route = req.route;
        size_t hl = strlen(req.host), pl = strlen(url);
        rq->url = flood_xmalloc(hl + pl + 1);
        memcpy(rq->url, req.host, hl);
        memcpy(rq->url + hl, url, pl + 1);
    }
    if (routed) {
        struct wf_doc doc = {0};
        int status;
        if (s->hooks.other && (status = s->hooks.other(s->hooks.ctx, &req, &doc)) > 0) {
            rq->fetch = 0; /* flood's own pages (metrics) are not the target's fetches */
            return answer(s, rq, conn, &doc, 0, 0, 0, NULL);
        }
        if (routed == 421) {
            atomic_fetch_add(&s->bad_host, 1);
            return answer_error(s, rq, conn, 421,
                                req.host ? "host: not one of this crowd's instances"
                                         : "host: a Host header is required",
                                NULL);
        }
        return answer_error(s, rq, conn, routed, "no such resource", NULL);
    }

    if (!rq->fault_done) {
        rq->fault_done = 1;
        if (s->hooks.fault && s->hooks.fault(s->hooks.ctx, &req, &rq->fault)) {
            if (rq->fault.reset) {
                atomic_fetch_add(&s->faults, 1);
                return reset_connection(conn);
            }
            if (rq->fault.hang || rq->fault.delay_ms > 0) {
                if (rq->fault.hang)
                    atomic_fetch_add(&s->faults, 1);
                if (suspend_for(s, conn, rq, rq->fault.delay_ms, rq->fault.hang) == 0)
                    return MHD_YES;
                rq->resumed = 1; /* stopping: a delay answers now, a hang closes */
            }
        }
    }
    if (rq->resumed && rq->fault.hang)
        return MHD_NO; /* a hang cut short by the server stopping: just close */
    return dispatch(s, conn, &req, rq);
}

/* Tell the served hook about a finished GET or HEAD: what it was, its status, the body
 * bytes that went out, and how long the crowd took from the first byte read to the last
 * byte written. */
static void report_served(struct server *s, struct request *rq, enum MHD_RequestTerminationCode toe)
{
    if (!s->hooks.served || !rq->fetch || !rq->status)
        return;
    int64_t us = (int64_t)(clock_mono_us() - rq->t0_us);
    uint64_t bytes = rq->bytes;
    if (rq->head)
        bytes = 0;
    else if (!rq->streamed && toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        bytes = 0; /* a buffer cut short: how much went out is unknown, say none */
    struct server_served f = {
        .url = rq->url,
        .route = &rq->route,
        .status = rq->status,
        .bytes = bytes,
        .serve_us = us > 0 ? (uint64_t)us : 0,
        .complete = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK,
    };
    s->hooks.served(s->hooks.ctx, &f);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct server *s = cls;
    struct request *rq = *con_cls;
    if (rq && rq->corked && uncork(s, rq, conn, toe) < 0)
        toe = MHD_REQUEST_TERMINATED_WITH_ERROR; /* the answer never left */
    if (rq) {
        report_served(s, rq, toe);
        if (rq->flight_inst)
            s->hooks.inbox_flight(s->hooks.ctx, rq->flight_inst, -1);
        free(rq->url);
        free(rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    /* The handler refuses a request only to inject a reset or end a hang, both counted
     * as faults: libmicrohttpd's line for each would flood stderr at load. */
    if (!strncmp(fmt, "Application reported internal error", 35))
        return;
    fprintf(stderr, "server: ");
    vfprintf(stderr, fmt, ap);
}

struct server *server_start(struct crowd *crowd, const struct server_hooks *hooks,
                            struct flood_err *err)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    if (addr_parse_listen(crowd->opts.listen, &ss, &sslen, err))
        return NULL;
    struct server *s = flood_xcalloc(1, sizeof(*s));
    s->crowd = crowd;
    if (hooks)
        s->hooks = *hooks;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&s->timer, NULL, timer_main, s)) {
        flood_err_set(err, FLOOD_EIO, "server: cannot start the fault timer thread");
        goto fail;
    }
    s->timer_started = 1;

    /* MHD_USE_TURBO: no shutdown() before close, so a fault's SO_LINGER 0 close is a real
     * RST (a peer sees "connection reset", not an orderly end), and optimistic reads. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO |
                     MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* With TLS, poll() rather than epoll: libmicrohttpd 0.9.75 (0.9.77 alike) lets GnuTLS
     * read the socket itself during a handshake and never learns of its EAGAIN, so an
     * edge-triggered connection stays "ready" and the thread spins over gnutls_handshake()
     * until the client's next flight arrives: about 80 failed recv() per handshake with 32
     * clients, 1.5x the CPU of each new connection. poll() is level-triggered, so a
     * handshake waits like any read; it costs O(connections) per wake-up, small for the
     * hundreds of connections a target keeps open. */
    flags |= crowd->opts.tls ? MHD_USE_TLS | MHD_USE_POLL : MHD_USE_EPOLL;
    struct MHD_OptionItem opts[16];
    int n = 0;
    /* The logger goes first, or libmicrohttpd complains through its own. */
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)log_mhd, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &ss};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, SERVER_IDLE_TIMEOUT, NULL};
    opts[n++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, SERVER_HEADER_MEMORY, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, SERVER_MAX_CONNECTIONS, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, NULL};
    if (crowd->opts.threads > 1)
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE,
                                            (intptr_t)crowd->opts.threads, NULL};
    if (crowd->opts.tls && crowd->tls_sni) { /* a leaf per instance, by SNI */
        tls_sni_activate(crowd->tls_sni);
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK,
                                            (intptr_t)tls_sni_retrieve, (void *)tls_sni_retrieve};
    } else if (crowd->opts.tls) {
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, crowd->tls_key_pem};
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, crowd->tls_cert_pem};
    }
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    (void)sslen;
    s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, opts,
                              MHD_OPTION_END);
    if (!s->mhd) {
        flood_err_set(err, FLOOD_EIO, "server: cannot listen on '%s': %s", crowd->opts.listen,
                      errno ? strerror(errno) : "libmicrohttpd refused");
        goto fail;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_LISTEN_FD);
    if (!di || addr_bound(di->listen_fd, s->address, &s->port) < 0) {
        flood_err_set(err, FLOOD_EIO, "server: cannot read the bound address");
        goto fail;
    }
    if (crowd->opts.dns) {
        struct sockaddr_storage bound;
        socklen_t bl = sizeof(bound);
        struct dns_zone z = {.wf = &crowd->wf,
                             .src_base = crowd->opts.dns_src_base,
                             .src_count = crowd->opts.dns_src_count};
        if (getsockname(di->listen_fd, (struct sockaddr *)&bound, &bl) < 0) {
            flood_err_set(err, FLOOD_EIO, "server: cannot read the bound address");
            goto fail;
        }
        if (dns_zone_address(&z, &bound, crowd->opts.dns, err) ||
            !(s->dns = dns_start(crowd->opts.dns, &z, err)))
            goto fail;
    }
    return s;
fail:
    server_stop(s);
    return NULL;
}

int server_port(const struct server *s)
{
    return s->port;
}

const char *server_address(const struct server *s)
{
    return s->address;
}

struct dns *server_dns(const struct server *s)
{
    return s ? s->dns : NULL;
}

void server_get_stats(struct server *s, struct server_stats *out)
{
    out->requests = atomic_load(&s->requests);
    for (int i = 0; i < 6; i++)
        out->by_status[i] = atomic_load(&s->by_status[i]);
    out->bad_host = atomic_load(&s->bad_host);
    out->too_large = atomic_load(&s->too_large);
    out->faults = atomic_load(&s->faults);
    out->unflushed = atomic_load(&s->unflushed);
    out->hangs_closed = atomic_load(&s->hangs_closed);
}

void server_stop(struct server *s)
{
    if (!s)
        return;
    if (s->timer_started) {
        pthread_mutex_lock(&s->lock);
        s->stopping = 1;
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->timer, NULL);
    }
    dns_stop(s->dns);
    if (s->mhd)
        MHD_stop_daemon(s->mhd);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

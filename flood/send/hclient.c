/* flood/send/hclient.c: the sender's own HTTP/1.1 client (see hclient.h): which connection
 * of an origin carries which request, the queues, the answers read (on libevent
 * bufferevents, or plain ones from an epoll set of the client's own), the deadlines. A
 * connection started, written to and closed, and a request ended, are in hclient_conn.c;
 * the origins' addresses, --resolve and TLS set-up in hclient_origin.c; the answer parser
 * in hclient_parse.c.
 *
 * The cost of a request on a reused plain connection is what wrk pays: the head is
 * formatted into the output buffer's free space, the body added by reference, and one
 * sendmsg() writes both (the bufferevent's own write event stays off unless the socket's
 * buffer is full); the answer is read by the bufferevent and parsed in place. No timer is
 * set per request: one sweep a client every HC_SWEEP_MS looks at the requests on
 * connections and the heads of the queues (see on_sweep). Every done is called from one
 * event of the client (fin_ev), never from inside the code that ended the request, so a
 * done may send again or cancel without pulling a connection from under the caller. */
#include "flood/send/hclient.h"
#include "flood/send/hclient_internal.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/clock.h"
#include "webfinger/sput.h"

/* The deadline sweep's period. A per-request timer would put every request into
 * libevent's timer heap and, with EVENT_BASE_FLAG_PRECISE_TIMER, re-arm the timerfd
 * whenever it became the earliest; common timeouts need one duration for all, and
 * deadlines here are absolute and differ. One timer walking the busy connections costs a
 * compare per request in flight every 10 ms, and 10 ms is far inside any --timeout. */
#define HC_SWEEP_MS 10
#define HC_READ_MAX 16384 /* a plain read's buffer: an answer's head fits many times */

/* ---- telling done --------------------------------------------------------------------- */

static void on_fin(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    hc_flush(arg);
}

/* ---- connections ---------------------------------------------------------------------- */

static void on_read(struct bufferevent *bev, void *arg);
static void on_write(struct bufferevent *bev, void *arg);
static void on_event(struct bufferevent *bev, short what, void *arg);
static void pump(struct hc_client *c, struct hc_origin *o);

/* A new connection to o from src (o has room: the caller checked), connecting, on the busy
 * list with no request yet. NULL and errno when it cannot be started. */
static struct hc_conn *conn_new(struct hc_client *c, struct hc_origin *o, uint32_t src)
{
    c->connects++;
    int fd = hc_tcp_start(o, src);
    if (fd < 0)
        return NULL;
    struct hc_conn *k = flood_xcalloc(1, sizeof(*k));
    k->c = c;
    k->o = o;
    k->src = src;
    k->state = HC_CONN_CONNECTING;
    if (o->tls) {
        k->ssl = hc_tls_new(c, o, k, fd);
        if (k->ssl)
            k->bev = bufferevent_openssl_socket_new(c->base, fd, k->ssl, BUFFEREVENT_SSL_CONNECTING,
                                                    BEV_OPT_CLOSE_ON_FREE);
        if (k->bev)
            /* a peer closing without close_notify ends a close-delimited body as EOF */
            bufferevent_openssl_set_allow_dirty_shutdown(k->bev, 1);
        else if (k->ssl)
            SSL_free(k->ssl);
    } else {
        k->bev = bufferevent_socket_new(c->base, fd, BEV_OPT_CLOSE_ON_FREE);
        /* connect() was ours (bound, no delay); this only waits for it to finish */
        if (k->bev && bufferevent_socket_connect(k->bev, NULL, 0) < 0) {
            bufferevent_free(k->bev);
            k->bev = NULL;
            fd = -1; /* closed with the bufferevent */
        }
    }
    if (!k->bev) {
        if (fd >= 0)
            close(fd);
        free(k);
        errno = ENOMEM;
        return NULL;
    }
    bufferevent_setcb(k->bev, on_read, on_write, on_event, k);
    o->n_conns++;
    hc_list_push(&c->busy, k);
    return k;
}

/* Open a new connection to o carrying r (o has room: the caller checked). r ends at once
 * (through finish) when the connection cannot be started. */
static void conn_open(struct hc_client *c, struct hc_origin *o, struct hc_req *r)
{
    struct hc_conn *k = conn_new(c, o, r->src_ipv4);
    if (!k) {
        int e = errno;
        hc_finish(c, r, e == ECONNREFUSED ? HC_REFUSED : HC_OTHER, 0, e);
        return;
    }
    k->req = r;
    r->conn = k;
    r->res.reused = 0;
}

static void conn_lost(struct hc_conn *k, short what, int err, unsigned long sslerr);

/* Put r on k (idle, or just connected: then busy already) and write it. k may be gone
 * when this returns. */
static void conn_assign(struct hc_conn *k, struct hc_req *r)
{
    r->res.reused = k->state == HC_CONN_IDLE;
    if (k->state == HC_CONN_IDLE) {
        hc_list_unlink(&k->o->idle, k);
        hc_list_push(&k->c->busy, k);
    }
    k->state = HC_CONN_BUSY;
    k->req = r;
    r->conn = k;
    k->got_bytes = 0;
    k->rx_ns = 0;
    hc_parse_init(&k->parse);
    if (hc_write_request(k) < 0)
        conn_lost(k, BEV_EVENT_WRITING | BEV_EVENT_ERROR, errno, 0);
}

/* Start r on o now if a connection can take it: 1, or 0 (nothing was done: queue it). */
static int start(struct hc_client *c, struct hc_origin *o, struct hc_req *r)
{
    struct hc_conn *k;
    for (k = o->idle; k; k = k->next)
        if (k->src == r->src_ipv4)
            break;
    if (k) {
        conn_assign(k, r);
        return 1;
    }
    if (o->n_conns >= c->connections) {
        /* full: an idle connection of another source makes room for this one */
        if (!o->idle)
            return 0;
        hc_conn_close(o->idle);
    }
    conn_open(c, o, r);
    return 1;
}

/* Start what o's queue can start; heads already past their deadline end HC_TIMEOUT. */
static void pump(struct hc_client *c, struct hc_origin *o)
{
    int64_t now = 0;
    struct hc_req *r;
    while ((r = o->qhead)) {
        if (!now)
            now = hc_mono_ns();
        r = hc_queue_pop(c, o);
        if (r->deadline_ns <= now) {
            hc_finish(c, r, HC_TIMEOUT, 0, 0);
            continue;
        }
        if (!start(c, o, r)) {
            hc_queue_unshift(c, o, r);
            break;
        }
    }
}

/* The final answer on k was read whole; extra: bytes came after it. */
static void answer_done(struct hc_conn *k, int eof, int extra)
{
    struct hc_client *c = k->c;
    struct hc_origin *o = k->o;
    struct hc_req *r = k->req;
    k->req = NULL;
    k->served++;
    r->res.retry_after = k->parse.last_ra;
    r->res.answered_ns = !k->ssl && k->rx_ns ? hc_mono_of_real(k->rx_ns) : 0;
    /* reusable only when the answer allows it, nothing came after it and the whole request
     * went out (an early answer leaves the body's rest behind: curl closes then too) */
    int keep = !eof && !extra && k->parse.last_keep && !c->cancelling &&
               evbuffer_get_length(bufferevent_get_input(k->bev)) == 0 &&
               evbuffer_get_length(bufferevent_get_output(k->bev)) == 0;
    hc_finish(c, r, HC_OK, k->parse.last_status, 0);
    if (keep) {
        hc_list_unlink(&c->busy, k);
        k->state = HC_CONN_IDLE;
        hc_list_push(&o->idle, k);
    } else
        hc_conn_close(k);
    pump(c, o);
}

/* k closed, failed or was reset (what: the bufferevent's flags). Its request is retried
 * once on a fresh connection when k had carried an earlier one and not a byte of this
 * answer came (the server closed an idle connection as the request left: a keep-alive
 * race, which curl and browsers retry the same way); otherwise it ends. */
static void conn_lost(struct hc_conn *k, short what, int err, unsigned long sslerr)
{
    struct hc_client *c = k->c;
    struct hc_origin *o = k->o;
    struct hc_req *r = k->req;
    enum hc_conn_state state = k->state;
    /* r went on a connection already open (it served another, or was opened ahead) */
    int reused = r && r->res.reused, got = k->got_bytes;
    k->req = NULL;
    hc_conn_close(k);
    if (!r) {
        pump(c, o);
        return;
    }
    int os_errno = (what & BEV_EVENT_ERROR) ? err : 0;
    if (state == HC_CONN_CONNECTING)
        hc_finish(c, r, hc_connect_outcome(o->tls, what, err, sslerr), 0, os_errno);
    else if (reused && !got && r->tries == 0 && !c->cancelling) {
        r->tries = 1;
        conn_open(c, o, r); /* k's place is free */
    } else
        hc_finish(c, r, sslerr ? HC_TLS : HC_RESET, 0, os_errno);
    pump(c, o);
}

/* Bytes came on k where no request waits for them: it cannot be trusted again. */
static void conn_unasked(struct hc_conn *k)
{
    struct hc_client *c = k->c;
    struct hc_origin *o = k->o;
    hc_conn_close(k);
    pump(c, o);
}

/* n bytes of k's answer for its parser, *used of them taken. 0: more are wanted; 1: the
 * final answer is whole (the caller ends it); -1: not HTTP, the request ended
 * HC_PROTOCOL and k is gone. */
static int feed(struct hc_conn *k, const char *p, size_t n, size_t *used)
{
    k->got_bytes = 1;
    int rc = hc_parse_run(&k->parse, p, n, used);
    if (rc < 0) {
        struct hc_client *c = k->c;
        struct hc_origin *o = k->o;
        struct hc_req *r = k->req;
        k->req = NULL;
        hc_conn_close(k);
        hc_finish(c, r, HC_PROTOCOL, 0, 0);
        pump(c, o);
    }
    return rc;
}

/* https: the answer as the OpenSSL bufferevent decrypted it. */
static void on_read(struct bufferevent *bev, void *arg)
{
    struct hc_conn *k = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    if (!k->req) {
        conn_unasked(k);
        return;
    }
    for (;;) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(in, -1, NULL, &v, 1) < 1 || v.iov_len == 0)
            return; /* more to come */
        size_t used = 0;
        int rc = feed(k, v.iov_base, v.iov_len, &used);
        if (rc < 0)
            return;
        evbuffer_drain(in, used);
        if (rc > 0) {
            answer_done(k, 0, 0);
            return;
        }
    }
}

static void conn_ended(struct hc_conn *k, short what, int err, unsigned long sslerr);

/* Plain: one recvmsg() into the stack, the parser fed from there (a bufferevent asks the
 * socket's size with FIONREAD before it reads into its buffer: two system calls a read,
 * and a copy), with the kernel's receive time. Level-triggered: what a full buffer leaves
 * comes at the next poll. */
static void plain_read(struct hc_conn *k)
{
    char buf[HC_READ_MAX];
    union {
        char b[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n;
    do {
        m.msg_control = ctl.b;
        m.msg_controllen = sizeof(ctl.b);
        n = recvmsg(bufferevent_getfd(k->bev), &m, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        conn_ended(k, (short)(BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR)),
                   n == 0 ? 0 : errno, 0);
        return;
    }
    if (!k->req) {
        conn_unasked(k);
        return;
    }
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
            k->rx_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        }
    const char *p = buf;
    size_t left = (size_t)n;
    while (left > 0) {
        size_t used = 0;
        int rc = feed(k, p, left, &used);
        if (rc < 0)
            return;
        p += used;
        left -= used;
        if (rc > 0) {
            answer_done(k, 0, left > 0);
            return;
        }
        if (used == 0)
            return; /* the parser took nothing and did not fail: wait for more */
    }
}

/* A plain connection just connected: its reads go to the client's epoll set. -1 and errno. */
static int plain_watch(struct hc_conn *k)
{
    int fd = bufferevent_getfd(k->bev), one = 1;
    /* the answer's arrival time, for answers read later than they came (hc_defer_reads) */
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = k};
    if (epoll_ctl(k->c->efd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -1;
    k->in_poll = 1;
    return 0;
}

static void on_write(struct bufferevent *bev, void *arg)
{
    struct hc_conn *k = arg;
    /* plain: the rest of a request went out; back to writing by hand (conn_flush) */
    if (!k->o->tls)
        bufferevent_disable(bev, EV_WRITE);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    int err = EVUTIL_SOCKET_ERROR();
    struct hc_conn *k = arg;
    if (what & BEV_EVENT_CONNECTED) {
        if (k->ssl && SSL_session_reused(k->ssl))
            k->c->tls_resumed++;
        if (k->o->tls)
            bufferevent_enable(bev, EV_READ);
        else {
            bufferevent_disable(bev, EV_WRITE); /* conn_flush writes, poll_reads reads */
            if (plain_watch(k) < 0) {
                conn_lost(k, BEV_EVENT_ERROR, errno, 0);
                return;
            }
        }
        if (!k->req) {
            struct hc_client *c = k->c;
            struct hc_origin *o = k->o;
            if (k->pre_deadline) { /* opened ahead: ready for the next request */
                k->pre_deadline = 0;
                c->n_pre--;
                hc_list_unlink(&c->busy, k);
                k->state = HC_CONN_IDLE;
                hc_list_push(&o->idle, k);
            } else /* cannot happen: a connecting connection carries its request */
                hc_conn_close(k);
            pump(c, o);
            return;
        }
        struct hc_req *r = k->req;
        k->req = NULL;
        conn_assign(k, r);
        return;
    }
    unsigned long sslerr = 0, e;
    if (k->ssl)
        while ((e = bufferevent_get_openssl_error(bev)))
            sslerr = e;
    conn_ended(k, what, err, sslerr);
}

/* k was closed, reset or failed (what: in the bufferevent's flags): a close-delimited
 * answer ends whole, anything else is lost. */
static void conn_ended(struct hc_conn *k, short what, int err, unsigned long sslerr)
{
    if ((what & BEV_EVENT_EOF) && k->req && k->state == HC_CONN_BUSY && k->got_bytes) {
        int rc = hc_parse_run_eof(&k->parse);
        if (rc > 0) { /* a close-delimited body ended */
            answer_done(k, 1, 0);
            return;
        }
    }
    conn_lost(k, what, err, sslerr);
}

/* ---- deadlines ------------------------------------------------------------------------ */

static void poll_reads(struct hc_client *c);

static void sweep_arm(struct hc_client *c)
{
    if (c->sweep_on)
        return;
    c->sweep_on = 1;
    struct timeval tv = {0, HC_SWEEP_MS * 1000};
    evtimer_add(c->sweep_ev, &tv);
}

/* Requests on connections past their deadline end HC_TIMEOUT and their connections close
 * (a late answer would otherwise arrive for the next request); then each origin with a
 * queue is pumped, which ends its expired heads. Queues are in send order, and the
 * sender's deadlines are its start plus one --timeout, so a head that has not expired
 * means none behind it has; a request that reaches a connection is checked again then. */
static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct hc_client *c = arg;
    c->sweep_on = 0;
    poll_reads(c); /* an answer waiting in its socket is not late */
    int64_t now = hc_mono_ns();
    struct hc_conn *k = c->busy, *next;
    for (; k; k = next) {
        next = k->next;
        struct hc_req *r = k->req;
        if (r && r->deadline_ns <= now) {
            k->req = NULL;
            hc_conn_close(k);
            hc_finish(c, r, HC_TIMEOUT, 0, 0);
        } else if (!r && k->pre_deadline && k->pre_deadline <= now)
            hc_conn_close(k); /* opened ahead and never connected: its place is free again */
    }
    struct hc_origin *o = c->queued, *onext;
    for (; o; o = onext) {
        onext = o->qlink_next;
        pump(c, o);
    }
    if (c->in_flight || c->n_pre)
        sweep_arm(c);
}

/* ---- the interface -------------------------------------------------------------------- */

void hc_send(struct hc_client *c, struct hc_req *req)
{
    memset(&req->res, 0, sizeof(req->res));
    req->qnext = NULL;
    req->conn = NULL;
    req->tries = 0;
    c->in_flight++;
    sweep_arm(c);
    if (c->cancelling) {
        hc_finish(c, req, HC_OTHER, 0, ECANCELED);
        return;
    }
    int os_errno = 0;
    struct hc_origin *o = hc_origin_get(c, req->url);
    if (!o || o->fail) {
        if (o)
            os_errno = o->fail_errno;
        hc_finish(c, req, o ? o->fail : HC_PROTOCOL, 0, o ? os_errno : EINVAL);
        return;
    }
    if (o->qhead || !start(c, o, req))
        hc_queue_push(c, o, req);
}

long hc_preconnect(struct hc_client *c, const char *url, long n, int64_t deadline_ns)
{
    struct hc_origin *o = hc_origin_get(c, url);
    if (!o || o->fail || c->cancelling)
        return 0;
    long started = 0;
    while (started < n && o->n_conns < c->connections) {
        struct hc_conn *k = conn_new(c, o, 0);
        if (!k)
            break; /* the requests meet it (refused, no memory) and end in its outcome */
        k->pre_deadline = deadline_ns > 0 ? deadline_ns : 1;
        c->n_pre++;
        started++;
    }
    if (started)
        sweep_arm(c);
    return started;
}

/* Read the plain connections' answers that have come: when woken for one, before the
 * deadlines are judged, and for hc_poll. */
static void poll_reads(struct hc_client *c)
{
    struct epoll_event ev[64];
    c->polling++;
    /* a few rounds at most: a socket read whole drops out; one flooding its answer does
     * not hold the loop */
    for (int round = 0; round < 4; round++) {
        int n = epoll_wait(c->efd, ev, 64, 0);
        for (int i = 0; i < n; i++) {
            struct hc_conn *k = ev[i].data.ptr;
            if (!k->dead)
                plain_read(k);
        }
        if (n < 64)
            break;
    }
    if (--c->polling == 0)
        while (c->dead) {
            struct hc_conn *k = c->dead;
            c->dead = k->next;
            free(k);
        }
}

void hc_poll(struct hc_client *c)
{
    if (c->deferring)
        poll_reads(c);
}

static void on_answers(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    poll_reads(arg);
}

void hc_defer_reads(struct hc_client *c, int on)
{
    if (!on == !c->deferring)
        return;
    if (on)
        event_del(c->eev);
    else
        event_add(c->eev, NULL);
    c->deferring = on;
}

int hc_queued(const struct hc_client *c)
{
    return c->queued != NULL;
}

uint64_t hc_in_flight(const struct hc_client *c)
{
    return c->in_flight;
}

uint64_t hc_connects(const struct hc_client *c)
{
    return c->connects;
}

uint64_t hc_tls_resumed(const struct hc_client *c)
{
    return c->tls_resumed;
}

void hc_cancel_all(struct hc_client *c)
{
    c->cancelling++;
    for (struct hc_origin *o = c->queued; o; o = c->queued) {
        struct hc_req *r;
        while ((r = hc_queue_pop(c, o)))
            hc_finish(c, r, HC_OTHER, 0, ECANCELED);
    }
    while (c->busy) {
        struct hc_conn *k = c->busy;
        struct hc_req *r = k->req;
        k->req = NULL;
        hc_conn_close(k);
        if (r)
            hc_finish(c, r, HC_OTHER, 0, ECANCELED);
    }
    hc_origins_close_idle(c, hc_conn_close);
    hc_flush(c);
    c->cancelling--;
}

void hc_free(struct hc_client *c)
{
    if (!c)
        return;
    if (c->fin_ev)
        hc_cancel_all(c);
    if (c->sweep_ev)
        event_free(c->sweep_ev);
    if (c->fin_ev)
        event_free(c->fin_ev);
    if (c->eev)
        event_free(c->eev);
    if (c->efd >= 0)
        close(c->efd);
    hc_client_free_setup(c);
}

struct hc_client *hc_new(struct event_base *base, const struct hc_opts *o, struct flood_err *err)
{
    struct hc_client *c = hc_client_setup(base, o, err);
    if (!c)
        return NULL;
    c->fin_ev = event_new(base, -1, 0, on_fin, c);
    c->sweep_ev = evtimer_new(base, on_sweep, c);
    c->efd = epoll_create1(EPOLL_CLOEXEC);
    if (c->efd >= 0)
        c->eev = event_new(base, c->efd, EV_READ | EV_PERSIST, on_answers, c);
    if (!c->fin_ev || !c->sweep_ev || !c->eev || event_add(c->eev, NULL) < 0) {
        flood_err_set(err, FLOOD_EIO, "hclient: cannot make libevent events");
        hc_free(c);
        return NULL;
    }
    return c;
}

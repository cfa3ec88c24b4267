/* flood/send/hclient_conn.c: the HTTP client's connections at their lowest (see
 * hclient_internal.h): a TCP connection started, a request's bytes written, a connection
 * closed, a request ended and its done called. hclient.c drives them: which connection
 * takes which request, the answers read, the deadlines. */
#include "flood/send/hclient.h"
#include "flood/send/hclient_internal.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "webfinger/sput.h"
#include "flood/core/clock.h"

const char *hc_outcome_name(enum hc_outcome o)
{
    switch (o) {
    case HC_OK:
        return "ok";
    case HC_TIMEOUT:
        return "timeout";
    case HC_REFUSED:
        return "refused";
    case HC_RESET:
        return "reset";
    case HC_DNS:
        return "dns";
    case HC_TLS:
        return "tls";
    case HC_PROTOCOL:
        return "protocol";
    case HC_OTHER:
        return "other";
    }
    return "?";
}

int64_t hc_mono_ns(void)
{
    return clock_mono_ns();
}

/* CLOCK_MONOTONIC ns of a CLOCK_REALTIME receive time: now less its age. */
int64_t hc_mono_of_real(int64_t real_ns)
{
    int64_t age = clock_wall_ns() - real_ns;
    return hc_mono_ns() - (age > 0 ? age : 0);
}

/* req has ended: its result is set now, done is called from fin_ev (or hc_cancel_all). */
void hc_finish(struct hc_client *c, struct hc_req *r, enum hc_outcome outcome, int status,
               int os_errno)
{
    r->res.outcome = outcome;
    r->res.status = outcome == HC_OK ? status : 0;
    if (outcome != HC_OK)
        r->res.retry_after = 0;
    r->res.os_errno = os_errno;
    r->conn = NULL;
    r->qnext = NULL;
    if (c->fin_tail)
        c->fin_tail->qnext = r;
    else {
        c->fin_head = r;
        event_active(c->fin_ev, EV_TIMEOUT, 1);
    }
    c->fin_tail = r;
}

/* Call done for every ended request, one at a time: a done may end or send more. */
void hc_flush(struct hc_client *c)
{
    struct hc_req *r;
    while ((r = c->fin_head)) {
        c->fin_head = r->qnext;
        if (!c->fin_head)
            c->fin_tail = NULL;
        r->qnext = NULL;
        c->in_flight--;
        r->done(r, &r->res);
    }
}

/* Close k (whatever its state) and free it; its request, if any, was taken off before. */
void hc_conn_close(struct hc_conn *k)
{
    struct hc_client *c = k->c;
    struct hc_origin *o = k->o;
    if (k->state == HC_CONN_IDLE)
        hc_list_unlink(&o->idle, k);
    else
        hc_list_unlink(&c->busy, k);
    o->n_conns--;
    if (k->pre_deadline)
        c->n_pre--;
    if (k->ssl) {
        SSL_set_app_data(k->ssl, NULL); /* no session callback for a gone connection */
        /* freed without a shutdown, OpenSSL would mark the session (the origin's latest,
         * shared) not resumable; no close_notify is sent either way, as curl and browsers
         * send none on a connection they drop */
        SSL_set_shutdown(k->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    }
    if (k->in_poll)
        epoll_ctl(c->efd, EPOLL_CTL_DEL, bufferevent_getfd(k->bev), NULL);
    /* frees the output buffer too: a body still referenced there is dropped unread */
    bufferevent_free(k->bev);
    k->bev = NULL;
    if (c->polling) { /* an event of this poll may still name k */
        k->dead = 1;
        k->next = c->dead;
        c->dead = k;
    } else
        free(k);
}

/* The fd of a new non-blocking TCP connection to o, connect() under way (or done).
 * -1 and errno when it cannot even start. */
int hc_tcp_start(const struct hc_origin *o, uint32_t src_ipv4)
{
    int fd = socket(o->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    /* a request is one write: Nagle would hold the body's last segment for the ACK */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (src_ipv4) {
        if (o->sa.ss_family != AF_INET) {
            close(fd);
            errno = EAFNOSUPPORT;
            return -1;
        }
#ifdef IP_BIND_ADDRESS_NO_PORT
        /* the port is picked at connect(), per destination: many sources and origins do not
         * run out of ports as bind()'s own choice would */
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
#endif
        struct sockaddr_in sin = {.sin_family = AF_INET};
        sin.sin_addr.s_addr = htonl(src_ipv4);
        if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
    }
    if (connect(fd, (const struct sockaddr *)&o->sa, o->sa_len) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* A plain request's head up to this long is written from the stack (write_direct). */
#define HC_HEAD_STACK 4096

/* Plain connections: write what the output holds with sendmsg() now (MSG_NOSIGNAL: a reset
 * peer is an error, not a signal); what the socket does not take, the bufferevent writes
 * when it can. */
static int conn_flush(struct hc_conn *k)
{
    struct evbuffer *out = bufferevent_get_output(k->bev);
    evutil_socket_t fd = bufferevent_getfd(k->bev);
    while (evbuffer_get_length(out) > 0) {
        struct evbuffer_iovec v[8];
        struct iovec iov[8];
        int n = evbuffer_peek(out, -1, NULL, v, 8);
        if (n > 8)
            n = 8;
        size_t want = 0;
        for (int i = 0; i < n; i++) {
            iov[i].iov_base = v[i].iov_base;
            iov[i].iov_len = v[i].iov_len;
            want += v[i].iov_len;
        }
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t got = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (got > 0) {
            /* the socket bufferevent keeps its output's start frozen outside its own
             * write callback (bufferevent_sock.c): thaw it as that callback does */
            evbuffer_unfreeze(out, 1);
            evbuffer_drain(out, (size_t)got);
            evbuffer_freeze(out, 1);
        }
        if (got < 0 || (size_t)got < want) {
            bufferevent_enable(k->bev, EV_WRITE);
            return 0;
        }
    }
    return 0;
}

/* The request line, Host, the caller's head and Content-Length of r, into w (room for
 * them checked by the caller): the length. */
static size_t put_head(char *w, const struct hc_origin *o, const struct hc_req *r,
                       const char *target, size_t tlen, const char *cl, size_t cln)
{
    static const char L1[] = "POST ", L2[] = " HTTP/1.1\r\nHost: ", L3[] = "\r\n";
    char *w0 = w;
#define PUT(p, n)                                                                                  \
    do {                                                                                           \
        memcpy(w, (p), (n));                                                                       \
        w += (n);                                                                                  \
    } while (0)
    PUT(L1, sizeof(L1) - 1);
    PUT(target, tlen);
    PUT(L2, sizeof(L2) - 1);
    PUT(o->authority, o->auth_len);
    PUT(L3, sizeof(L3) - 1);
    if (r->head_len)
        PUT(r->head, r->head_len);
    PUT(cl, cln);
#undef PUT
    return (size_t)(w - w0);
}

/* Plain, nothing queued before it: the head from the stack and the body by reference in
 * one sendmsg(), no buffer chain made or freed; what the socket does not take goes to the
 * output for the bufferevent to write (the body's rest by reference). 0, or -1 and errno. */
static int write_direct(struct hc_conn *k, const char *head, size_t hlen)
{
    const struct hc_req *r = k->req;
    struct iovec iov[2] = {{.iov_base = (void *)head, .iov_len = hlen},
                           {.iov_base = (void *)r->body, .iov_len = r->body_len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = r->body_len ? 2 : 1};
    ssize_t got;
    do
        got = sendmsg(bufferevent_getfd(k->bev), &m, MSG_NOSIGNAL);
    while (got < 0 && errno == EINTR);
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        return -1;
    size_t sent = got > 0 ? (size_t)got : 0;
    if (sent == hlen + r->body_len)
        return 0;
    struct evbuffer *out = bufferevent_get_output(k->bev);
    size_t from = sent > hlen ? sent - hlen : 0;
    if ((sent < hlen && evbuffer_add(out, head + sent, hlen - sent) < 0) ||
        (r->body_len > from &&
         evbuffer_add_reference(out, r->body + from, r->body_len - from, NULL, NULL) < 0)) {
        errno = ENOMEM;
        return -1;
    }
    bufferevent_enable(k->bev, EV_WRITE);
    return 0;
}

/* Write r's bytes on k: "POST target HTTP/1.1", Host, the caller's head, Content-Length,
 * the body. Returns 0, or -1 with errno when the connection failed under the write. */
int hc_write_request(struct hc_conn *k)
{
    struct hc_req *r = k->req;
    const struct hc_origin *o = k->o;
    char tbuf[HC_TARGET_MAX];
    size_t tlen;
    const char *target = hc_target(o, r->url, tbuf, sizeof(tbuf), &tlen);
    char cl[48];
    size_t cln = 0;
    wf_sput(cl, sizeof(cl), &cln, "Content-Length: ", 16);
    wf_sput_u(cl, sizeof(cl), &cln, r->body_len);
    wf_sput(cl, sizeof(cl), &cln, "\r\n\r\n", 4);
    size_t head = (sizeof("POST ") - 1) + tlen + (sizeof(" HTTP/1.1\r\nHost: ") - 1) + o->auth_len +
                  (sizeof("\r\n") - 1) + r->head_len + cln;
    struct evbuffer *out = bufferevent_get_output(k->bev);
    if (!o->tls && head <= HC_HEAD_STACK && evbuffer_get_length(out) == 0) {
        char hb[HC_HEAD_STACK];
        return write_direct(k, hb, put_head(hb, o, r, target, tlen, cl, cln));
    }
    /* TLS: the body is copied behind the head. libevent's OpenSSL bufferevent calls
     * SSL_write once per buffer chain, so a referenced body would be a second record and
     * a second write(); the encryption reads the body anyway. */
    size_t need = head + (o->tls ? r->body_len : 0);
    struct evbuffer_iovec v;
    if (evbuffer_reserve_space(out, (ev_ssize_t)need, &v, 1) < 1 || v.iov_len < need) {
        errno = ENOMEM;
        return -1;
    }
    char *w = v.iov_base;
    put_head(w, o, r, target, tlen, cl, cln);
    if (o->tls && r->body_len)
        memcpy(w + head, r->body, r->body_len);
    v.iov_len = need;
    evbuffer_commit_space(out, &v, 1);
    if (o->tls)
        return 0; /* the bufferevent writes it */
    if (r->body_len && evbuffer_add_reference(out, r->body, r->body_len, NULL, NULL) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return conn_flush(k);
}

/* What a failure while connecting means. */
enum hc_outcome hc_connect_outcome(int tls, short what, int err, unsigned long sslerr)
{
    if (sslerr)
        return HC_TLS;
    if ((what & BEV_EVENT_ERROR) && err == ECONNREFUSED)
        return HC_REFUSED;
    if ((what & BEV_EVENT_ERROR) &&
        (err == ENETUNREACH || err == EHOSTUNREACH || err == ETIMEDOUT || err == EADDRNOTAVAIL))
        return HC_OTHER;
    if (tls)
        return HC_TLS; /* the TCP connection stood; the handshake was closed or reset */
    return (what & BEV_EVENT_ERROR) && err != ECONNRESET && err != EPIPE ? HC_OTHER : HC_RESET;
}

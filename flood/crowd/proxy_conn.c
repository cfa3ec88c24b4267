/* flood/crowd/proxy_conn.c: one client connection of the egress proxy, as a state machine
 * of two modes:
 *
 *   HEAD    request heads read and parsed (proxy_parse.c); absolute-form requests for crowd
 *           names rewritten to origin-form onto one upstream connection to the crowd's
 *           listener, their answers walked (head, then Content-Length or chunked body) and
 *           relayed in order; answers of the proxy's own (403, 400, 502) wait in the same
 *           queue, so pipelined requests are answered in the order they came.
 *   TUNNEL  after a CONNECT's 200: bytes both ways unchanged; a side's end of stream is
 *           passed on as a half-close (shutdown SHUT_WR) once what it sent is written.
 *
 * Buffers are bounded: a side is read only while the buffer it fills has room. */
#include "flood/crowd/proxy_internal.h"
#include "flood/core/clock.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

int64_t pconn_now_ms(void)
{
    return clock_mono_ms();
}

void pconn_emit(struct proxy *p, const struct proxy_event *ev)
{
    if (p->hooks.event)
        p->hooks.event(p->hooks.ctx, ev);
}

void pconn_emit_kind(struct proxy *p, enum proxy_event_kind k, int instance)
{
    struct proxy_event ev = {.kind = k, .instance = instance};
    pconn_emit(p, &ev);
}

/* ---- the answers owed ------------------------------------------------------------------ */

static struct slot *q_head(struct pconn *c)
{
    return c->q_n ? &c->q[c->q_first] : NULL;
}

static struct slot *q_push(struct pconn *c)
{
    struct slot *s = &c->q[(c->q_first + c->q_n) % QUEUE_MAX];
    memset(s, 0, sizeof(*s));
    c->q_n++;
    return s;
}

static void q_pop(struct pconn *c)
{
    free(c->q[c->q_first].local);
    c->q[c->q_first].local = NULL;
    c->q_first = (c->q_first + 1) % QUEUE_MAX;
    c->q_n--;
}

/* Append to the client's buffer (compacting it first); 0, or -1 when it has no room. */
static int down_put(struct pconn *c, const char *b, size_t n)
{
    if (c->down_off && c->down_off == c->down_len)
        c->down_off = c->down_len = 0;
    if (c->down_len + n > BUF_CAP && c->down_off) {
        memmove(c->down, c->down + c->down_off, c->down_len - c->down_off);
        c->down_len -= c->down_off;
        c->down_off = 0;
    }
    if (c->down_len + n > BUF_CAP)
        return -1;
    memcpy(c->down + c->down_len, b, n);
    c->down_len += n;
    return 0;
}

static size_t down_room(const struct pconn *c)
{
    return BUF_CAP - (c->down_len - c->down_off);
}

/* Queue one of the proxy's own answers. */
void pconn_owe_local(struct pconn *c, int status, const char *reason, const char *text, int close)
{
    struct slot *s = q_push(c);
    char *b = flood_xmalloc(512);
    int n = snprintf(b, 512,
                     "HTTP/1.1 %d %s\r\nServer: flood/" FLOOD_VERSION
                     "\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n%s\r\n%s\n",
                     status, reason, strlen(text) + 1, close ? "Connection: close\r\n" : "", text);
    s->local = b;
    s->local_len = (size_t)n < 512 ? (size_t)n : 511;
    s->close = close;
}

/* The crowd's answers owed and not yet begun cannot come: each becomes a 502. */
static void fail_owed(struct pconn *c)
{
    int n = c->q_n;
    for (int k = 0; k < n; k++) {
        struct slot *s = &c->q[(c->q_first + k) % QUEUE_MAX];
        if (s->local)
            continue;
        pconn_emit_kind(c->p, PROXY_EV_FAILED, c->instance);
        char *b = flood_xmalloc(256);
        s->local_len = (size_t)snprintf(b, 256,
                                        "HTTP/1.1 502 Bad Gateway\r\nServer: flood/" FLOOD_VERSION
                                        "\r\nContent-Length: 27\r\nConnection: close\r\n\r\n"
                                        "proxy: the crowd is gone.\n\n");
        s->local = b;
        s->close = 1;
    }
}

/* The crowd's answers can no longer be told apart: every one owed fails, the proxy's own
 * are dropped with them, and the connection closes once what is written is out. */
static void fail_all(struct pconn *c)
{
    while (c->q_n) {
        if (!q_head(c)->local)
            pconn_emit_kind(c->p, PROXY_EV_FAILED, c->instance);
        q_pop(c);
    }
    c->closing = 1;
}

/* Move what can go from the crowd's bytes and the owed answers into the client's buffer. */
static void pump_answers(struct pconn *c)
{
    struct slot *s;
    while ((s = q_head(c))) {
        if (s->local) {
            if (down_put(c, s->local, s->local_len))
                return;
            if (s->close)
                c->closing = 1;
            q_pop(c);
            continue;
        }
        if (!c->resp_in_body) {
            int rc = proxy_parse_response(c->uin, c->uin_len, s->head_req, &c->resp);
            if (rc == PROXY_PARSE_MORE)
                return;
            if (rc == PROXY_PARSE_BAD || c->resp.head_len > down_room(c)) {
                if (rc == PROXY_PARSE_BAD) /* not HTTP from our own listener: give up */
                    fail_all(c);
                return;
            }
            if (down_put(c, c->uin, c->resp.head_len))
                return;
            memmove(c->uin, c->uin + c->resp.head_len, c->uin_len - c->resp.head_len);
            c->uin_len -= c->resp.head_len;
            if (c->resp.status < 200)
                continue; /* 100 Continue: the final answer follows */
            c->resp_in_body = 1;
            c->resp_left = c->resp.content_length;
            memset(&c->resp_ck, 0, sizeof(c->resp_ck));
        }
        size_t n = c->uin_len, room = down_room(c);
        if (n > room)
            n = room;
        int done = 0;
        if (c->resp.body == PROXY_BODY_NONE) {
            n = 0;
            done = 1;
        } else if (c->resp.body == PROXY_BODY_LENGTH) {
            if (n >= c->resp_left) {
                n = (size_t)c->resp_left;
                done = 1;
            }
            c->resp_left -= n;
        } else if (c->resp.body == PROXY_BODY_CHUNKED) {
            size_t used = 0;
            int rc = proxy_chunked_feed(&c->resp_ck, c->uin, n, &used);
            if (rc < 0) {
                c->resp_in_body = 0;
                fail_all(c);
                return;
            }
            n = used;
            done = rc == 1;
        } else if (c->up_eof && n == c->uin_len) {
            done = 1; /* close-delimited: the crowd closed */
        }
        if (n && down_put(c, c->uin, n))
            return;
        memmove(c->uin, c->uin + n, c->uin_len - n);
        c->uin_len -= n;
        if (!done)
            return;
        c->resp_in_body = 0;
        struct proxy_event ev = {
            .kind = PROXY_EV_ANSWERED, .instance = c->instance, .status = c->resp.status};
        pconn_emit(c->p, &ev);
        if (c->resp.close) { /* the crowd closes this connection: a new one for what follows */
            c->up_eof = 1;
        }
        q_pop(c);
    }
}

/* ---- requests -------------------------------------------------------------------------- */

static int up_connect(struct pconn *c);

/* A refused or malformed request: its answer owed, counted. */
static void refuse(struct pconn *c, const struct proxy_head *h, enum proxy_refuse why)
{
    struct proxy_event ev = {.kind = PROXY_EV_REFUSED, .refuse = why, .host = "", .host_len = 0};
    char host[WF_HOST_MAX + 16];
    if (h->form == PROXY_FORM_ABSOLUTE || h->form == PROXY_FORM_AUTHORITY) {
        int n = snprintf(host, sizeof(host), "%s%.*s%s", h->auth.kind == PROXY_HOST_IPV6 ? "[" : "",
                         (int)h->auth.host_len, h->auth.host,
                         h->auth.kind == PROXY_HOST_IPV6 ? "]" : "");
        if (h->auth.port)
            n += snprintf(host + n, sizeof(host) - (size_t)n, ":%d", h->auth.port);
        ev.host = host;
        ev.host_len = (size_t)n < sizeof(host) ? (size_t)n : sizeof(host) - 1;
    }
    pconn_emit(c->p, &ev);
    char text[160];
    snprintf(text, sizeof(text), "proxy: refused: %s", proxy_refuse_name(why));
    /* a body we will not pass on cannot be skipped safely: the connection ends after it */
    int close = h->body != PROXY_BODY_NONE || h->close;
    pconn_owe_local(c, 403, "Forbidden", text, close);
    if (close)
        c->no_more = 1;
}

static void bad_head(struct pconn *c, enum proxy_bad b)
{
    struct proxy_event ev = {.kind = PROXY_EV_REQUEST};
    pconn_emit(c->p, &ev);
    ev = (struct proxy_event){.kind = PROXY_EV_BAD, .bad = b};
    pconn_emit(c->p, &ev);
    char text[128];
    snprintf(text, sizeof(text), "proxy: %s", proxy_bad_name(b));
    int st = proxy_bad_status(b);
    pconn_owe_local(c, st,
                    st == 505   ? "HTTP Version Not Supported"
                    : st == 431 ? "Request Header Fields Too Large"
                                : "Bad Request",
                    text, 1);
    c->no_more = 1;
    c->in_len = 0;
}

static void set_instance(struct pconn *c, int inst)
{
    if (inst == c->instance)
        return;
    struct proxy_event ev = {.kind = PROXY_EV_INSTANCE, .instance = inst, .prev = c->instance};
    pconn_emit(c->p, &ev);
    c->instance = inst;
}

/* A CONNECT for instance inst: a fresh upstream connection, the 200, tunnel mode. */
static void start_tunnel(struct pconn *c, int inst, size_t head_len)
{
    if (c->up.fd >= 0) { /* a plain connection to the crowd: idle (no answer owed), dropped */
        close(c->up.fd);
        c->up.fd = -1;
        c->up.mask = 0;
        c->up_len = c->up_off = c->uin_len = 0;
        c->up_eof = 0;
    }
    if (up_connect(c)) {
        pconn_emit_kind(c->p, PROXY_EV_FAILED, inst);
        pconn_owe_local(c, 502, "Bad Gateway", "proxy: the crowd's listener refused", 1);
        c->no_more = 1;
        return;
    }
    set_instance(c, inst);
    pconn_emit_kind(c->p, PROXY_EV_CONNECT, inst);
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (down_put(c, ok, sizeof(ok) - 1))
        return; /* cannot happen: nothing is owed before a CONNECT is read */
    c->mode = M_TUNNEL;
    c->t_tunnel = pconn_now_ms();
    /* bytes sent after the head (a client that did not wait for the 200) go on */
    size_t rest = c->in_len - head_len;
    memcpy(c->upb, c->in + head_len, rest);
    c->up_len = rest;
    c->up_off = 0;
    c->in_len = 0;
    if (rest)
        c->t_tunnel = 0;
}

/* Pass body bytes of the current request on; 0 when the body is done or nothing is left. */
static void pass_body(struct pconn *c)
{
    if (c->up_off && c->up_off == c->up_len)
        c->up_off = c->up_len = 0;
    size_t room = BUF_CAP - c->up_len, n = c->in_len < room ? c->in_len : room;
    if (c->req_body == PROXY_BODY_LENGTH) {
        if (n > c->req_left)
            n = (size_t)c->req_left;
        c->req_left -= n;
        if (!c->req_left)
            c->req_body = PROXY_BODY_NONE;
    } else {
        size_t used = 0;
        int rc = proxy_chunked_feed(&c->req_ck, c->in, n, &used);
        if (rc < 0) { /* the crowd has half a request: nothing more can follow on it */
            pconn_emit_kind(c->p, PROXY_EV_BAD_BODY, c->instance);
            pconn_close(c, 0, PROXY_TUNNEL_DONE);
            return;
        }
        n = used;
        if (rc == 1)
            c->req_body = PROXY_BODY_NONE;
    }
    memcpy(c->upb + c->up_len, c->in, n);
    c->up_len += n;
    memmove(c->in, c->in + n, c->in_len - n);
    c->in_len -= n;
}

/* Read what the client sent: heads, bodies; stops when a buffer is full or a head is not
 * whole yet. */
static void take_requests(struct pconn *c)
{
    while (!c->dead && c->mode == M_HEAD && !c->no_more && c->in_len) {
        if (c->req_body != PROXY_BODY_NONE) {
            size_t before = c->in_len;
            pass_body(c);
            if (c->in_len == before)
                return;
            continue;
        }
        if (c->q_n >= QUEUE_MAX)
            return;
        struct proxy_head h;
        enum proxy_bad bad;
        int rc = proxy_parse_request(c->in, c->in_len, &h, &bad);
        if (rc == PROXY_PARSE_MORE) {
            if (!c->t_head)
                c->t_head = pconn_now_ms();
            return;
        }
        c->t_head = 0;
        if (rc == PROXY_PARSE_BAD) {
            bad_head(c, bad);
            return;
        }
        int is_connect = h.form == PROXY_FORM_AUTHORITY;
        if (is_connect && c->q_n)
            return; /* a CONNECT behind answers still owed: once they are out */
        size_t need = h.head_len + 300;
        if (c->up_off && c->up_off == c->up_len)
            c->up_off = c->up_len = 0;
        if (!is_connect && BUF_CAP - c->up_len < need)
            return; /* room for the rewritten head first */
        c->requests++;
        pconn_emit_kind(c->p, PROXY_EV_REQUEST, 0);
        enum proxy_refuse why;
        int inst = proxy_route(&h, &c->p->crowd->wf, c->p->port, &why);
        if (!inst) {
            refuse(c, &h, why);
        } else if (is_connect) {
            start_tunnel(c, inst, h.head_len);
            return;
        } else if (c->p->crowd->opts.tls) {
            /* the crowd's listener speaks TLS only, and the proxy has no second TLS stack */
            pconn_emit_kind(c->p, PROXY_EV_FAILED, inst);
            int close = h.body != PROXY_BODY_NONE || h.close;
            pconn_owe_local(c, 502, "Bad Gateway",
                            "proxy: the crowd serves https only: ask for https:// (CONNECT)",
                            close);
            if (close)
                c->no_more = 1;
        } else {
            if (c->up.fd < 0 && up_connect(c)) {
                pconn_emit_kind(c->p, PROXY_EV_FAILED, inst);
                pconn_owe_local(c, 502, "Bad Gateway", "proxy: the crowd's listener refused", 1);
                c->no_more = 1;
                return;
            }
            struct proxy_event ev = {
                .kind = PROXY_EV_RELAYED, .instance = inst, .reused = c->instance == inst};
            set_instance(c, inst);
            pconn_emit(c->p, &ev);
            c->up_len += proxy_rewrite(&h, c->in, c->upb + c->up_len, BUF_CAP - c->up_len);
            struct slot *s = q_push(c);
            s->head_req = h.method_len == 4 && !memcmp(h.method, "HEAD", 4);
            c->req_body = h.body;
            c->req_left = h.content_length;
            memset(&c->req_ck, 0, sizeof(c->req_ck));
            if (h.close)
                c->no_more = 1; /* what follows a "Connection: close" request is not read */
        }
        memmove(c->in, c->in + h.head_len, c->in_len - h.head_len);
        c->in_len -= h.head_len;
    }
}

/* ---- sockets --------------------------------------------------------------------------- */

static void watch(struct pconn *c, struct side *sd, unsigned mask)
{
    if (sd->fd < 0 || sd->mask == mask)
        return;
    struct epoll_event ev = {.events = mask, .data.ptr = sd};
    epoll_ctl(c->p->efd, EPOLL_CTL_MOD, sd->fd, &ev);
    sd->mask = mask;
}

static int up_connect(struct pconn *c)
{
    struct proxy *p = c->p;
    int fd = socket(p->up_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&p->up_addr, p->up_len) && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    c->connecting = 1;
    c->up.fd = fd;
    c->up.mask = EPOLLOUT;
    c->up_eof = c->up_shut = 0;
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = &c->up};
    if (epoll_ctl(p->efd, EPOLL_CTL_ADD, fd, &ev)) {
        close(fd);
        c->up.fd = -1;
        return -1;
    }
    return 0;
}

/* Drop the upstream connection (the crowd closed it, or it failed). */
static void up_drop(struct pconn *c)
{
    if (c->up.fd >= 0)
        close(c->up.fd);
    c->up.fd = -1;
    c->up.mask = 0;
    c->connecting = 0;
    c->up_len = c->up_off = 0;
    c->up_eof = 0;
}

/* Write what is waiting each way. -1 when a socket failed. */
static int flush(struct pconn *c)
{
    while (c->down_off < c->down_len) {
        ssize_t n = send(c->cl.fd, c->down + c->down_off, c->down_len - c->down_off, MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->down_off += (size_t)n;
        if (c->mode == M_TUNNEL)
            c->bytes_down += (uint64_t)n;
    }
    c->down_off = c->down_len = 0;
    while (c->up.fd >= 0 && !c->connecting && c->up_off < c->up_len) {
        ssize_t n = send(c->up.fd, c->upb + c->up_off, c->up_len - c->up_off, MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->up_off += (size_t)n;
        if (c->mode == M_TUNNEL)
            c->bytes_up += (uint64_t)n;
    }
    if (c->up_off == c->up_len)
        c->up_off = c->up_len = 0;
    return 0;
}

void pconn_close(struct pconn *c, int idle, enum proxy_tunnel_end end)
{
    if (c->dead)
        return;
    c->dead = 1;
    struct proxy *p = c->p;
    if (c->mode == M_TUNNEL) {
        struct proxy_event ev = {.kind = PROXY_EV_TUNNEL_END,
                                 .instance = c->instance,
                                 .end = end,
                                 .bytes_up = c->bytes_up,
                                 .bytes_down = c->bytes_down};
        pconn_emit(p, &ev);
    } else {
        for (int k = 0; k < c->q_n; k++)
            if (!c->q[(c->q_first + k) % QUEUE_MAX].local)
                pconn_emit_kind(p, PROXY_EV_FAILED, c->instance);
    }
    while (c->q_n)
        q_pop(c);
    struct proxy_event ev = {
        .kind = PROXY_EV_CLOSE, .prev = c->instance, .idle = idle, .requests = c->requests};
    pconn_emit(p, &ev);
    close(c->cl.fd);
    if (c->up.fd >= 0)
        close(c->up.fd);
    c->cl.fd = c->up.fd = -1;
    if (c->prev)
        c->prev->next = c->next;
    else
        p->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    p->n_conns--;
    c->next_dead = p->dead;
    p->dead = c;
}

/* Read from sd into buf[*len] up to cap; 1 at end of stream, -1 on an error, else 0. */
static int read_into(int fd, char *buf, size_t *len, size_t cap)
{
    while (*len < cap) {
        ssize_t n = recv(fd, buf + *len, cap - *len, 0);
        if (n > 0) {
            *len += (size_t)n;
            continue;
        }
        if (n == 0)
            return 1;
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    }
    return 0;
}

/* After any event: move bytes, decide what to wait for, close when done. */
void pconn_step(struct pconn *c)
{
    if (c->mode == M_HEAD) {
        take_requests(c);
        if (c->dead)
            return;
        int owed = c->q_n;
        pump_answers(c);
        /* answers gone out may unblock what waits in `in` (a CONNECT behind them, a full
         * queue): no read event may come for it */
        if (c->q_n < owed && c->in_len && !c->no_more) {
            take_requests(c);
            if (c->dead)
                return;
            if (c->mode == M_HEAD)
                pump_answers(c);
        }
        if (c->up_eof) {
            if (c->resp_in_body || (q_head(c) && !q_head(c)->local)) {
                if (c->resp_in_body) { /* cut inside an answer: the client cannot be told */
                    pconn_emit_kind(c->p, PROXY_EV_FAILED, c->instance);
                    q_pop(c);
                    c->resp_in_body = 0;
                    c->closing = 1;
                }
                fail_owed(c);
                pump_answers(c);
            }
            if (!c->uin_len || !c->q_n) {
                up_drop(c);
                c->uin_len = 0;
            }
        }
    }
    if (flush(c)) {
        pconn_close(c, 0, PROXY_TUNNEL_ERROR);
        return;
    }
    int down_empty = c->down_off == c->down_len, up_empty = c->up_off == c->up_len;
    if (c->mode == M_TUNNEL) {
        if (c->cl_eof && up_empty && !c->up_shut && c->up.fd >= 0 && !c->connecting) {
            shutdown(c->up.fd, SHUT_WR);
            c->up_shut = 1;
        }
        if (c->up_eof && down_empty && !c->cl_shut) {
            shutdown(c->cl.fd, SHUT_WR);
            c->cl_shut = 1;
        }
        if (c->cl_shut && c->up_shut) {
            pconn_close(c, 0, c->half_used ? PROXY_TUNNEL_HALF : PROXY_TUNNEL_DONE);
            return;
        }
    } else if (down_empty && (c->closing || (c->cl_eof && !c->q_n) ||
                              (c->no_more && !c->q_n && c->req_body == PROXY_BODY_NONE))) {
        if (c->cl_eof) {
            pconn_close(c, 0, PROXY_TUNNEL_DONE);
            return;
        }
        /* A lingering close (as nginx's lingering_close): the answer is out and the write
         * side shut; what the client still sends is read and dropped until it closes or
         * PROXY_LINGER_MS pass, since a close with unread bytes would send a reset that
         * can destroy the answer before the client reads it. */
        if (!c->t_linger) {
            shutdown(c->cl.fd, SHUT_WR);
            c->t_linger = pconn_now_ms();
            c->no_more = 1;
        }
        watch(c, &c->cl, EPOLLIN);
        watch(c, &c->up, 0);
        return;
    }
    unsigned cm = 0, um = 0;
    if (!c->cl_eof && !c->closing) {
        if (c->mode == M_TUNNEL ? c->up_len < BUF_CAP : (!c->no_more && c->in_len < IN_CAP))
            cm |= EPOLLIN;
    }
    if (!down_empty)
        cm |= EPOLLOUT;
    if (c->up.fd >= 0) {
        if (c->connecting || !up_empty)
            um |= EPOLLOUT;
        if (!c->up_eof && !c->connecting &&
            (c->mode == M_TUNNEL ? down_room(c) > 0 : c->uin_len < BUF_CAP))
            um |= EPOLLIN;
    }
    watch(c, &c->cl, cm);
    watch(c, &c->up, um);
}

void pconn_on_client(struct pconn *c, unsigned events)
{
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        int rc;
        if (c->mode == M_TUNNEL) {
            size_t before = c->up_len;
            rc = read_into(c->cl.fd, c->upb, &c->up_len, BUF_CAP);
            if (c->up_len > before && c->up_eof)
                c->half_used = 1; /* the client still sends after the crowd's end */
            if (c->up_len > before && c->t_tunnel) {
                c->t_tunnel = 0;
                if (c->p->crowd->opts.tls && (unsigned char)c->upb[before] != 0x16) {
                    pconn_close(c, 0, PROXY_TUNNEL_NOT_TLS); /* 0x16: a TLS handshake record */
                    return;
                }
            }
        } else {
            rc = read_into(c->cl.fd, c->in, &c->in_len, IN_CAP);
            if (c->t_linger)
                c->in_len = 0; /* lingering: dropped */
        }
        if (rc < 0) {
            pconn_close(c, 0, PROXY_TUNNEL_ERROR);
            return;
        }
        if (rc > 0)
            c->cl_eof = 1;
        c->t_last = pconn_now_ms();
        if (c->mode == M_HEAD && c->in_len >= IN_CAP && c->req_body == PROXY_BODY_NONE &&
            !c->no_more) {
            struct proxy_head h;
            enum proxy_bad bad;
            if (proxy_parse_request(c->in, c->in_len, &h, &bad) == PROXY_PARSE_MORE)
                bad_head(c, PROXY_BAD_TOO_LARGE);
        }
    }
    pconn_step(c);
}

void pconn_on_upstream(struct pconn *c, unsigned events)
{
    if (c->connecting) {
        int e = 0;
        socklen_t el = sizeof(e);
        getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e || (events & EPOLLERR)) {
            up_drop(c);
            if (c->mode == M_TUNNEL) { /* counted tunnelled already: the tunnel ends in error */
                pconn_close(c, 0, PROXY_TUNNEL_ERROR);
                return;
            }
            fail_owed(c);
            pconn_step(c);
            return;
        }
        c->connecting = 0;
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        size_t before = c->down_len;
        int rc = c->mode == M_TUNNEL ? read_into(c->up.fd, c->down, &c->down_len, BUF_CAP)
                                     : read_into(c->up.fd, c->uin, &c->uin_len, BUF_CAP);
        if (c->mode == M_TUNNEL && c->down_len > before && c->cl_eof)
            c->half_used = 1; /* the crowd still answers after the client's end */
        if (rc < 0 && c->mode == M_TUNNEL) {
            pconn_close(c, 0, PROXY_TUNNEL_ERROR);
            return;
        }
        if (rc)
            c->up_eof = 1;
    }
    pconn_step(c);
}

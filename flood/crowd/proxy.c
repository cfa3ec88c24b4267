/* flood/crowd/proxy.c: the egress proxy (proxy.h): one thread, one epoll set (level
 * triggered), the listener, the once-a-second sweep of slow heads, silent tunnels and idle
 * connections; each connection's state machine is proxy_conn.c's. */
#include "flood/crowd/proxy.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flood/core/addr.h"
#include "flood/crowd/proxy_internal.h"

static int listen_backlog(int fd)
{
    return listen(fd, 4096);
}

static void on_accept(struct proxy *p)
{
    for (;;) {
        int fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (p->n_conns >= PROXY_CONN_MAX) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct pconn *c = flood_xcalloc(1, sizeof(*c));
        c->p = p;
        c->cl = (struct side){.c = c, .fd = fd, .mask = EPOLLIN};
        c->up = (struct side){.c = c, .fd = -1};
        c->in = flood_xmalloc(IN_CAP);
        c->upb = flood_xmalloc(BUF_CAP);
        c->uin = flood_xmalloc(BUF_CAP);
        c->down = flood_xmalloc(BUF_CAP);
        c->t_last = pconn_now_ms();
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->cl};
        if (epoll_ctl(p->efd, EPOLL_CTL_ADD, fd, &ev)) {
            close(fd);
            free(c->in);
            free(c->upb);
            free(c->uin);
            free(c->down);
            free(c);
            continue;
        }
        c->next = p->conns;
        if (p->conns)
            p->conns->prev = c;
        p->conns = c;
        p->n_conns++;
        pconn_emit_kind(p, PROXY_EV_ACCEPT, 0);
    }
}

/* Once a second: heads too slow, tunnels that never spoke, idle connections. */
static void sweep(struct proxy *p, int64_t now)
{
    struct pconn *next;
    for (struct pconn *c = p->conns; c; c = next) {
        next = c->next;
        if (c->mode == M_TUNNEL) {
            if (c->t_tunnel && now - c->t_tunnel > PROXY_TLS_WAIT_S * 1000)
                pconn_close(c, 0, PROXY_TUNNEL_SILENT);
            continue;
        }
        if (c->t_linger) {
            if (now - c->t_linger > PROXY_LINGER_MS)
                pconn_close(c, 0, PROXY_TUNNEL_DONE);
            continue;
        }
        if (c->t_head && !c->no_more && now - c->t_head > PROXY_HEAD_WAIT_S * 1000) {
            struct proxy_event ev = {.kind = PROXY_EV_REQUEST};
            pconn_emit(p, &ev);
            ev = (struct proxy_event){.kind = PROXY_EV_BAD, .bad = PROXY_BAD_NONE};
            pconn_emit(p, &ev);
            pconn_owe_local(c, 408, "Request Timeout", "proxy: the request head did not come whole",
                            1);
            c->no_more = 1;
            c->in_len = 0;
            c->t_head = 0;
            pconn_step(c);
        } else if (!c->q_n && !c->in_len && now - c->t_last > PROXY_IDLE_S * 1000) {
            pconn_close(c, 1, PROXY_TUNNEL_DONE);
        }
    }
}

static void free_dead(struct proxy *p)
{
    while (p->dead) {
        struct pconn *c = p->dead;
        p->dead = c->next_dead;
        free(c->in);
        free(c->upb);
        free(c->uin);
        free(c->down);
        free(c);
    }
}

static void *proxy_main(void *arg)
{
    struct proxy *p = arg;
    struct epoll_event evs[128];
    int64_t last_sweep = pconn_now_ms();
    for (;;) {
        int n = epoll_wait(p->efd, evs, 128, 1000);
        for (int i = 0; i < n; i++) {
            void *ptr = evs[i].data.ptr;
            if (ptr == &p->wfd)
                goto out;
            if (ptr == &p->lfd) {
                on_accept(p);
                continue;
            }
            struct side *sd = ptr;
            if (sd->c->dead)
                continue;
            if (sd == &sd->c->cl)
                pconn_on_client(sd->c, evs[i].events);
            else
                pconn_on_upstream(sd->c, evs[i].events);
        }
        free_dead(p);
        int64_t now = pconn_now_ms();
        if (now - last_sweep >= 1000) {
            sweep(p, now);
            free_dead(p);
            last_sweep = now;
        }
    }
out:
    while (p->conns)
        pconn_close(p->conns, 0, PROXY_TUNNEL_ERROR);
    free_dead(p);
    return NULL;
}

/* The crowd's listener as a loopback address when it listens on every address. */
static int upstream_addr(struct proxy *p, const char *upstream, struct flood_err *err)
{
    if (addr_parse_listen(upstream, &p->up_addr, &p->up_len, err))
        return -1;
    if (p->up_addr.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&p->up_addr;
        if (a->sin_addr.s_addr == htonl(INADDR_ANY))
            a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&p->up_addr;
        if (!memcmp(&a->sin6_addr, &in6addr_any, sizeof(in6addr_any)))
            a->sin6_addr = in6addr_loopback;
    }
    return 0;
}

struct proxy *proxy_start(const struct crowd *crowd, const char *listen, const char *upstream,
                          const struct proxy_hooks *hooks, struct flood_err *err)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    if (addr_parse_listen(listen, &ss, &sl, err))
        return NULL;
    struct proxy *p = flood_xcalloc(1, sizeof(*p));
    p->crowd = crowd;
    if (hooks)
        p->hooks = *hooks;
    p->lfd = p->efd = p->wfd = -1;
    if (upstream_addr(p, upstream, err))
        goto fail;
    p->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (p->lfd < 0 || setsockopt(p->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(p->lfd, (struct sockaddr *)&ss, sl) || listen_backlog(p->lfd)) {
        flood_err_set(err, FLOOD_EIO, "proxy: cannot listen on '%s': %s", listen, strerror(errno));
        goto fail;
    }
    struct sockaddr_storage b;
    socklen_t bl = sizeof(b);
    char host[INET6_ADDRSTRLEN] = "?", port[16] = "0";
    if (!getsockname(p->lfd, (struct sockaddr *)&b, &bl))
        getnameinfo((struct sockaddr *)&b, bl, host, sizeof(host), port, sizeof(port),
                    NI_NUMERICHOST | NI_NUMERICSERV);
    p->port = atoi(port);
    snprintf(p->address, sizeof(p->address), b.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host,
             port);
    p->efd = epoll_create1(EPOLL_CLOEXEC);
    p->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event le = {.events = EPOLLIN, .data.ptr = &p->lfd};
    struct epoll_event we = {.events = EPOLLIN, .data.ptr = &p->wfd};
    if (p->efd < 0 || p->wfd < 0 || epoll_ctl(p->efd, EPOLL_CTL_ADD, p->lfd, &le) ||
        epoll_ctl(p->efd, EPOLL_CTL_ADD, p->wfd, &we) ||
        pthread_create(&p->thread, NULL, proxy_main, p)) {
        flood_err_set(err, FLOOD_EIO, "proxy: cannot start its thread: %s", strerror(errno));
        goto fail;
    }
    p->started = 1;
    return p;
fail:
    proxy_stop(p);
    return NULL;
}

int proxy_port(const struct proxy *p)
{
    return p->port;
}

const char *proxy_address(const struct proxy *p)
{
    return p->address;
}

void proxy_stop(struct proxy *p)
{
    if (!p)
        return;
    if (p->started) {
        uint64_t one = 1;
        if (write(p->wfd, &one, sizeof(one)) < 0)
            perror("proxy: wake");
        pthread_join(p->thread, NULL);
    }
    if (p->lfd >= 0)
        close(p->lfd);
    if (p->efd >= 0)
        close(p->efd);
    if (p->wfd >= 0)
        close(p->wfd);
    free(p);
}

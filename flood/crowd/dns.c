/* flood/crowd/dns.c: the crowd's name server on its sockets: one thread polling a UDP socket,
 * a TCP listener and up to DNS_TCP_MAX TCP connections (RFC 7766: a connection may carry
 * many queries, each after its two-byte length). The answers come from dns_answer. */
#include "flood/crowd/dns.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/addr.h"
#include "flood/core/clock.h"

#define DNS_TCP_MAX     64    /* TCP connections open at once; more are closed at accept */
#define DNS_TCP_IDLE_MS 10000 /* a TCP connection quiet this long is closed */
#define DNS_UDP_BURST   64    /* datagrams read per wake-up before the others get a turn */

struct tcp_conn {
    int fd;
    uint8_t buf[2 + 65535]; /* the length and one message */
    size_t have;
    long long last_ms; /* the last byte read */
};

struct dns {
    struct dns_zone zone;
    int udp, tcp, wake[2];
    pthread_t thread;
    int started;
    char address[128];
    int port;
    struct tcp_conn *conns[DNS_TCP_MAX];
    atomic_ullong udp_n, tcp_n, by_result[2][DNS__RESULTS], tcp_refused;
};

static long long now_ms(void)
{
    return clock_mono_ms();
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static enum dns_result answer_count(struct dns *d, const uint8_t *msg, size_t len, int tcp,
                                    uint8_t *out, size_t *out_len)
{
    atomic_fetch_add(tcp ? &d->tcp_n : &d->udp_n, 1);
    enum dns_result r = dns_answer(&d->zone, msg, len, tcp, out, DNS_MSG_MAX, out_len);
    atomic_fetch_add(&d->by_result[tcp != 0][r], 1);
    return r;
}

static void on_udp(struct dns *d)
{
    uint8_t in[65536], out[DNS_MSG_MAX];
    for (int i = 0; i < DNS_UDP_BURST; i++) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(d->udp, in, sizeof(in), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return;
        size_t ol = 0;
        if (answer_count(d, in, (size_t)n, 0, out, &ol) != DNS_MALFORMED)
            (void)sendto(d->udp, out, ol, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
    }
}

static void tcp_close(struct dns *d, int i)
{
    close(d->conns[i]->fd);
    free(d->conns[i]);
    d->conns[i] = NULL;
}

static void on_accept(struct dns *d)
{
    int fd = accept(d->tcp, NULL, NULL);
    if (fd < 0)
        return;
    for (int i = 0; i < DNS_TCP_MAX; i++) {
        if (!d->conns[i]) {
            set_nonblock(fd);
            d->conns[i] = flood_xcalloc(1, sizeof(*d->conns[i]));
            d->conns[i]->fd = fd;
            d->conns[i]->last_ms = now_ms();
            return;
        }
    }
    atomic_fetch_add(&d->tcp_refused, 1);
    close(fd);
}

/* Read what connection i has; answer each whole message. A malformed message or an answer
 * that cannot be written at once ends the connection. */
static void on_tcp(struct dns *d, int i)
{
    struct tcp_conn *c = d->conns[i];
    ssize_t n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        tcp_close(d, i);
        return;
    }
    if (n < 0)
        return;
    c->have += (size_t)n;
    c->last_ms = now_ms();
    while (c->have >= 2) {
        size_t len = (size_t)c->buf[0] << 8 | c->buf[1];
        if (c->have < 2 + len)
            return;
        uint8_t out[2 + DNS_MSG_MAX];
        size_t ol = 0;
        if (answer_count(d, c->buf + 2, len, 1, out + 2, &ol) == DNS_MALFORMED) {
            tcp_close(d, i);
            return;
        }
        out[0] = (uint8_t)(ol >> 8);
        out[1] = (uint8_t)ol;
        if (send(c->fd, out, ol + 2, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(ol + 2)) {
            tcp_close(d, i);
            return;
        }
        memmove(c->buf, c->buf + 2 + len, c->have - 2 - len);
        c->have -= 2 + len;
    }
}

static void *dns_main(void *arg)
{
    struct dns *d = arg;
    struct pollfd p[3 + DNS_TCP_MAX];
    int idx[DNS_TCP_MAX];
    for (;;) {
        p[0] = (struct pollfd){.fd = d->wake[0], .events = POLLIN};
        p[1] = (struct pollfd){.fd = d->udp, .events = POLLIN};
        p[2] = (struct pollfd){.fd = d->tcp, .events = POLLIN};
        int n = 3;
        for (int i = 0; i < DNS_TCP_MAX; i++)
            if (d->conns[i]) {
                idx[n - 3] = i;
                p[n++] = (struct pollfd){.fd = d->conns[i]->fd, .events = POLLIN};
            }
        if (poll(p, (nfds_t)n, 1000) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        if (p[1].revents)
            on_udp(d);
        if (p[2].revents)
            on_accept(d);
        long long now = now_ms();
        for (int k = 3; k < n; k++) {
            int i = idx[k - 3];
            if (!d->conns[i])
                continue;
            if (p[k].revents)
                on_tcp(d, i);
            else if (now - d->conns[i]->last_ms > DNS_TCP_IDLE_MS)
                tcp_close(d, i);
        }
    }
    return NULL;
}

/* Bind a socket of type to ss; the fd, or -1 (errno set). */
static int bind_sock(int type, const struct sockaddr_storage *ss, socklen_t len)
{
    int fd = socket(ss->ss_family, type | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    if (type == SOCK_STREAM)
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ss->ss_family == AF_INET6)
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)ss, len) || (type == SOCK_STREAM && listen(fd, 128))) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void set_port(struct sockaddr_storage *ss, int port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

/* TCP then UDP on the same port; with port 0 the TCP port is taken for UDP, tried again
 * a few times should UDP have it in use. */
static int bind_both(struct dns *d, const char *listen, struct flood_err *err)
{
    struct sockaddr_storage ss;
    socklen_t len;
    struct flood_err e2 = {0};
    if (addr_parse_listen(listen, &ss, &len, &e2)) {
        flood_err_set(err, FLOOD_EINVAL, "--dns: expected ADDR:PORT (a numeric address), got '%s'",
                      listen);
        return -1;
    }
    int any = (ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                        : ((struct sockaddr_in *)&ss)->sin_port) == 0;
    for (int tries = 0; tries < (any ? 8 : 1); tries++) {
        struct sockaddr_storage b = ss;
        d->tcp = bind_sock(SOCK_STREAM, &b, len);
        if (d->tcp < 0)
            break;
        socklen_t bl = sizeof(b);
        char host[INET6_ADDRSTRLEN], port[16];
        if (getsockname(d->tcp, (struct sockaddr *)&b, &bl) ||
            getnameinfo((struct sockaddr *)&b, bl, host, sizeof(host), port, sizeof(port),
                        NI_NUMERICHOST | NI_NUMERICSERV))
            break;
        d->port = atoi(port);
        set_port(&b, d->port);
        d->udp = bind_sock(SOCK_DGRAM, &b, len);
        if (d->udp >= 0) {
            snprintf(d->address, sizeof(d->address), b.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
                     host, port);
            return 0;
        }
        int e = errno;
        close(d->tcp);
        d->tcp = -1;
        errno = e;
        if (e != EADDRINUSE)
            break;
    }
    flood_err_set(err, FLOOD_EIO, "--dns: cannot listen on '%s': %s", listen, strerror(errno));
    return -1;
}

/* 1 when ss is 0.0.0.0 or ::; its address bytes into a[16] and their count into *n. */
static int addr_bytes(const struct sockaddr_storage *ss, uint8_t a[16], size_t *n)
{
    static const uint8_t zero[16];
    if (ss->ss_family == AF_INET6) {
        memcpy(a, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
        *n = 16;
    } else {
        memcpy(a, &((const struct sockaddr_in *)ss)->sin_addr, 4);
        *n = 4;
    }
    return memcmp(a, zero, *n) == 0;
}

int dns_zone_address(struct dns_zone *z, const struct sockaddr_storage *crowd,
                     const char *dns_listen, struct flood_err *err)
{
    size_t n;
    const struct sockaddr_storage *from = crowd;
    struct sockaddr_storage ds;
    socklen_t dl;
    struct flood_err e2 = {0};
    if (addr_bytes(crowd, z->addr, &n)) {
        if (addr_parse_listen(dns_listen, &ds, &dl, &e2) || addr_bytes(&ds, z->addr, &n)) {
            flood_err_set(err, FLOOD_EINVAL,
                          "--dns: the crowd listens on every address and so does '%s': give "
                          "either a specific address, the one the crowd's names resolve to",
                          dns_listen);
            return -1;
        }
        from = &ds;
    }
    z->family = from->ss_family == AF_INET6 ? AF_INET6 : AF_INET;
    return 0;
}

struct dns *dns_start(const char *listen, const struct dns_zone *z, struct flood_err *err)
{
    struct dns *d = flood_xcalloc(1, sizeof(*d));
    d->zone = *z;
    d->udp = d->tcp = d->wake[0] = d->wake[1] = -1;
    if (bind_both(d, listen, err))
        goto fail;
    if (pipe2(d->wake, O_CLOEXEC)) {
        flood_err_set(err, FLOOD_EIO, "--dns: cannot make a pipe: %s", strerror(errno));
        goto fail;
    }
    set_nonblock(d->udp);
    set_nonblock(d->tcp);
    if (pthread_create(&d->thread, NULL, dns_main, d)) {
        flood_err_set(err, FLOOD_EIO, "--dns: cannot start its thread");
        goto fail;
    }
    d->started = 1;
    return d;
fail:
    dns_stop(d);
    return NULL;
}

const char *dns_address(const struct dns *d)
{
    return d->address;
}

int dns_port(const struct dns *d)
{
    return d->port;
}

void dns_get_stats(struct dns *d, struct dns_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!d)
        return;
    out->udp = atomic_load(&d->udp_n);
    out->tcp = atomic_load(&d->tcp_n);
    for (int i = 0; i < DNS__RESULTS; i++)
        out->by_result[i] = atomic_load(&d->by_result[0][i]) + atomic_load(&d->by_result[1][i]);
    out->tcp_refused = atomic_load(&d->tcp_refused);
}

void dns_get_split(struct dns *d, uint64_t out[2][DNS__RESULTS])
{
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < DNS__RESULTS; i++)
            out[t][i] = d ? atomic_load(&d->by_result[t][i]) : 0;
}

void dns_stop(struct dns *d)
{
    if (!d)
        return;
    if (d->started) {
        (void)!write(d->wake[1], "x", 1);
        pthread_join(d->thread, NULL);
    }
    for (int i = 0; i < DNS_TCP_MAX; i++)
        if (d->conns[i])
            tcp_close(d, i);
    int fds[] = {d->udp, d->tcp, d->wake[0], d->wake[1]};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(d);
}

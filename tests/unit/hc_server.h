/* tests/unit/hc_server.h: a small misbehaving HTTP/1.1 server for test_hclient.c, in
 * threads of the test (one accepting, one a connection), on 127.0.0.1 and a port of the
 * kernel's choosing, plain or TLS (blocking OpenSSL). Each mode is one way a target can
 * answer; the server counts connections and requests and keeps the last request's Host
 * and body, so the test can check what went on the wire. */
#ifndef TEST_HC_SERVER_H
#define TEST_HC_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum srv_mode {
    SRV_NORMAL,       /* 202, keep-alive */
    SRV_CLOSE_AFTER,  /* the n-th answer on a connection says Connection: close, then closes */
    SRV_SILENT_AFTER, /* n answers, then the next request is read and the connection closed */
    SRV_CHUNKED,      /* 200 with a chunked body */
    SRV_CONTINUE,     /* 100 Continue, 103 Early Hints, then 202 with a body */
    SRV_SLOW,         /* the answer one byte at a time, 1 ms apart */
    SRV_RESET_MID,    /* half an answer, then a reset (SO_LINGER 0) */
    SRV_NEVER,        /* reads, never answers */
    SRV_GARBAGE,      /* not HTTP */
    SRV_HTTP10,       /* HTTP/1.0, body until close */
    SRV_429,          /* 429 with Retry-After */
    SRV_EARLY,        /* 413 after the head, the body never read */
    SRV_HELLO,        /* not HTTP and not TLS, at once on accepting, then closes */
    SRV_TRAILING,     /* 202, and bytes nobody asked for behind it in the same write */
    SRV_BIG,          /* 202 with a 40,000-byte body, keep-alive */
};

#define SRV_MAX_CONNS 256

struct srv {
    enum srv_mode mode;
    int n; /* for the *_AFTER modes */
    SSL_CTX *tls;
    int lfd;
    unsigned port;
    pthread_t accept_thread;
    pthread_t conns[SRV_MAX_CONNS];
    atomic_int n_conns;
    atomic_int requests;
    atomic_int stop;
    pthread_mutex_t mu;
    char last_host[128];
    char last_peer[64];
    size_t last_body_len;
    unsigned char last_body_sum; /* a byte sum of the body: enough to see it went whole */
};

struct srv_conn {
    struct srv *s;
    int fd;
    SSL *ssl;
    char buf[65536];
    size_t have;
};

/* Wait until fd is readable or the server stops: 1 readable, 0 stop. */
static int srv_wait(struct srv_conn *k)
{
    if (k->ssl && SSL_pending(k->ssl) > 0)
        return 1;
    while (!atomic_load(&k->s->stop)) {
        struct pollfd p = {.fd = k->fd, .events = POLLIN};
        if (poll(&p, 1, 50) > 0)
            return 1;
    }
    return 0;
}

static ssize_t srv_read(struct srv_conn *k, void *b, size_t n)
{
    if (!srv_wait(k))
        return -1;
    if (k->ssl) {
        int r = SSL_read(k->ssl, b, (int)n);
        return r > 0 ? r : (SSL_get_error(k->ssl, r) == SSL_ERROR_ZERO_RETURN ? 0 : -1);
    }
    return read(k->fd, b, n);
}

static int srv_write(struct srv_conn *k, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = k->ssl ? SSL_write(k->ssl, b, (int)n) : send(k->fd, b, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static int srv_puts(struct srv_conn *k, const char *s)
{
    return srv_write(k, s, strlen(s));
}

/* Read one request's head into k->buf (NUL-terminated); its Content-Length in *cl; the
 * head's length (up to the blank line) returned, or -1 at close. */
static long srv_read_head(struct srv_conn *k, size_t *cl)
{
    for (;;) {
        k->buf[k->have] = '\0';
        char *end = strstr(k->buf, "\r\n\r\n");
        if (end) {
            *cl = 0;
            for (char *h = strstr(k->buf, "\r\n"); h && h < end; h = strstr(h + 2, "\r\n")) {
                if (strncasecmp(h + 2, "Content-Length:", 15) == 0)
                    *cl = strtoul(h + 17, NULL, 10);
                if (strncasecmp(h + 2, "Host: ", 6) == 0) {
                    size_t l = strcspn(h + 8, "\r");
                    pthread_mutex_lock(&k->s->mu);
                    snprintf(k->s->last_host, sizeof(k->s->last_host), "%.*s", (int)l, h + 8);
                    pthread_mutex_unlock(&k->s->mu);
                }
            }
            return (long)(end + 4 - k->buf);
        }
        if (k->have + 1 >= sizeof(k->buf))
            return -1;
        ssize_t r = srv_read(k, k->buf + k->have, sizeof(k->buf) - 1 - k->have);
        if (r <= 0)
            return -1;
        k->have += (size_t)r;
    }
}

/* Consume n bytes of body (some may be in k->buf after the head of length head). */
static int srv_read_body(struct srv_conn *k, size_t head, size_t n)
{
    unsigned char sum = 0;
    size_t total = n;
    size_t inbuf = k->have - head < n ? k->have - head : n;
    for (size_t i = 0; i < inbuf; i++)
        sum = (unsigned char)(sum + (unsigned char)k->buf[head + i]);
    memmove(k->buf, k->buf + head + inbuf, k->have - head - inbuf);
    k->have -= head + inbuf;
    n -= inbuf;
    char tmp[65536];
    while (n > 0) {
        ssize_t r = srv_read(k, tmp, n < sizeof(tmp) ? n : sizeof(tmp));
        if (r <= 0)
            return -1;
        for (ssize_t i = 0; i < r; i++)
            sum = (unsigned char)(sum + (unsigned char)tmp[i]);
        n -= (size_t)r;
    }
    pthread_mutex_lock(&k->s->mu);
    k->s->last_body_len = total;
    k->s->last_body_sum = sum;
    pthread_mutex_unlock(&k->s->mu);
    return 0;
}

static void srv_sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void srv_serve(struct srv_conn *k)
{
    struct srv *s = k->s;
    if (s->mode == SRV_HELLO) {
        srv_puts(k, "220 ready\r\n");
        return;
    }
    for (int served = 0;; served++) {
        size_t cl;
        long head = srv_read_head(k, &cl);
        if (head < 0)
            return;
        if (s->mode == SRV_EARLY) {
            atomic_fetch_add(&s->requests, 1);
            srv_puts(k, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n");
            while (!atomic_load(&s->stop))
                srv_sleep_ms(20); /* the rest of the body stays unread */
            return;
        }
        if (srv_read_body(k, (size_t)head, cl) < 0)
            return;
        atomic_fetch_add(&s->requests, 1);
        switch (s->mode) {
        case SRV_NORMAL:
            if (srv_puts(k, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"))
                return;
            break;
        case SRV_CLOSE_AFTER:
            if (served + 1 >= s->n) {
                srv_puts(k, "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: "
                            "0\r\n\r\n");
                return;
            }
            if (srv_puts(k, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"))
                return;
            break;
        case SRV_SILENT_AFTER:
            if (served >= s->n)
                return;
            if (srv_puts(k, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"))
                return;
            break;
        case SRV_CHUNKED:
            if (srv_puts(k, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"
                            "6\r\n world\r\n0\r\n\r\n"))
                return;
            break;
        case SRV_CONTINUE:
            if (srv_puts(k, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: "
                            "</s.css>\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nok"))
                return;
            break;
        case SRV_SLOW: {
            const char *a = "HTTP/1.1 202 Accepted\r\nContent-Length: 4\r\n\r\nslow";
            for (; *a; a++) {
                if (srv_write(k, a, 1))
                    return;
                srv_sleep_ms(1);
            }
            break;
        }
        case SRV_RESET_MID: {
            srv_puts(k, "HTTP/1.1 202 Accepted\r\nContent-Length: 100\r\n\r\nhalf");
            srv_sleep_ms(20);
            struct linger l = {1, 0};
            setsockopt(k->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
            return;
        }
        case SRV_NEVER:
            break; /* and read the next, which never comes */
        case SRV_GARBAGE:
            srv_puts(k, "SPAM SPAM SPAM\r\n\r\n");
            return;
        case SRV_HTTP10:
            srv_puts(k, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close");
            return;
        case SRV_429:
            if (srv_puts(k, "HTTP/1.1 429 Too Many Requests\r\nretry-AFTER: 5\r\n"
                            "Content-Length: 0\r\n\r\n"))
                return;
            break;
        case SRV_TRAILING:
            if (srv_puts(k, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200"))
                return;
            break;
        case SRV_BIG: {
            static char big[40000];
            memset(big, 'b', sizeof(big));
            if (srv_puts(k, "HTTP/1.1 202 Accepted\r\nContent-Length: 40000\r\n\r\n") ||
                srv_write(k, big, sizeof(big)))
                return;
            break;
        }
        case SRV_EARLY:
        case SRV_HELLO:
            return;
        }
    }
}

static void *srv_conn_main(void *arg)
{
    struct srv_conn *k = arg;
    if (k->s->tls) {
        k->ssl = SSL_new(k->s->tls);
        SSL_set_fd(k->ssl, k->fd);
        if (SSL_accept(k->ssl) == 1)
            srv_serve(k);
        SSL_free(k->ssl);
    } else
        srv_serve(k);
    close(k->fd);
    free(k);
    return NULL;
}

static void *srv_accept_main(void *arg)
{
    struct srv *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {.fd = s->lfd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        struct sockaddr_in peer;
        socklen_t pl = sizeof(peer);
        int fd = accept(s->lfd, (struct sockaddr *)&peer, &pl);
        if (fd < 0)
            continue;
        int i = atomic_load(&s->n_conns);
        if (i >= SRV_MAX_CONNS) {
            close(fd);
            continue;
        }
        pthread_mutex_lock(&s->mu);
        inet_ntop(AF_INET, &peer.sin_addr, s->last_peer, sizeof(s->last_peer));
        pthread_mutex_unlock(&s->mu);
        struct srv_conn *k = calloc(1, sizeof(*k));
        k->s = s;
        k->fd = fd;
        pthread_create(&s->conns[i], NULL, srv_conn_main, k);
        atomic_store(&s->n_conns, i + 1);
    }
    return NULL;
}

/* Start a server in mode (n for the *_AFTER modes), TLS when tls is not NULL. 0 or -1. */
static int srv_start(struct srv *s, enum srv_mode mode, int n, SSL_CTX *tls)
{
    memset(s, 0, sizeof(*s));
    s->mode = mode;
    s->n = n;
    s->tls = tls;
    pthread_mutex_init(&s->mu, NULL);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(s->lfd, 128) < 0 || getsockname(s->lfd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    s->port = ntohs(a.sin_port);
    return pthread_create(&s->accept_thread, NULL, srv_accept_main, s) == 0 ? 0 : -1;
}

static void srv_stop(struct srv *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->accept_thread, NULL);
    for (int i = 0; i < atomic_load(&s->n_conns); i++)
        pthread_join(s->conns[i], NULL);
    close(s->lfd);
    pthread_mutex_destroy(&s->mu);
}

/* A port nothing listens on (bound, then closed). */
static unsigned srv_dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    bind(fd, (struct sockaddr *)&a, sizeof(a));
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd);
    return ntohs(a.sin_port);
}

#endif

/* tests/unit/core_server.h: a small HTTP/1.1 server for test_core.c's fetches, in a thread of
 * the test on 127.0.0.1 and a port of the kernel's choosing. One request a connection,
 * answered by its path, then closed; it keeps the last request's head, body and peer, and
 * counts requests, so the test sees what went on the wire.
 *   /ok        200, application/activity+json, a small JSON body
 *   /big       200, a 5,000-byte body
 *   /redir     302 to /ok on the same origin
 *   /off       302 to another host (localhost rather than 127.0.0.1)
 *   /loop      302 to itself
 *   /busy      503 with Retry-After: 7
 *   /slow      an answer 3 s late
 *   otherwise  202 (a POST to an inbox) */
#ifndef TEST_CORE_SERVER_H
#define TEST_CORE_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
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

struct csrv {
    int lfd;
    unsigned port;
    pthread_t thread;
    atomic_int stop;
    atomic_int requests;
    atomic_int signed_requests; /* requests that carried a Signature header */
    pthread_mutex_t mu;
    char head[8192]; /* the last request's head */
    char body[8192]; /* and its body */
    size_t body_len;
    char peer[64]; /* the last request's source address */
};

static void csrv_send(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void csrv_one(struct csrv *s, int fd, const char *peer)
{
    char buf[16384] = "";
    size_t len = 0;
    char *end = NULL;
    while (len < sizeof(buf) - 1 && !(end = strstr(buf, "\r\n\r\n"))) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0)
            return;
        ssize_t r = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
        if (r <= 0)
            return;
        len += (size_t)r;
        buf[len] = '\0';
    }
    if (!end)
        return;
    size_t head = (size_t)(end + 4 - buf);
    size_t cl = 0;
    const char *c = strcasestr(buf, "\r\ncontent-length:");
    if (c && c < end)
        cl = strtoul(c + 17, NULL, 10);
    while (len < head + cl && len < sizeof(buf) - 1) {
        ssize_t r = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    pthread_mutex_lock(&s->mu);
    snprintf(s->head, sizeof(s->head), "%.*s", (int)head, buf);
    s->body_len = len - head < sizeof(s->body) ? len - head : sizeof(s->body) - 1;
    memcpy(s->body, buf + head, s->body_len);
    s->body[s->body_len] = '\0';
    snprintf(s->peer, sizeof(s->peer), "%s", peer);
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&s->requests, 1);
    if (strcasestr(s->head, "\r\nsignature:"))
        atomic_fetch_add(&s->signed_requests, 1);
    char path[256] = "";
    sscanf(buf, "%*s %255s", path);
    path[strcspn(path, "?")] = '\0'; /* answered by the path alone */
    char out[8192];
    if (!strcmp(path, "/ok")) {
        csrv_send(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/activity+json\r\n"
                      "Content-Length: 8\r\nConnection: close\r\n\r\n{\"ok\":1}");
    } else if (!strcmp(path, "/big")) {
        csrv_send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n");
        memset(out, 'x', 5000);
        out[5000] = '\0';
        csrv_send(fd, out);
    } else if (!strcmp(path, "/redir") || !strcmp(path, "/loop")) {
        snprintf(out, sizeof(out),
                 "HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n"
                 "Connection: close\r\n\r\n",
                 !strcmp(path, "/redir") ? "/ok" : "/loop");
        csrv_send(fd, out);
    } else if (!strcmp(path, "/off")) {
        snprintf(out, sizeof(out),
                 "HTTP/1.1 301 Moved\r\nLocation: http://localhost:%u/ok\r\n"
                 "Content-Length: 0\r\nConnection: close\r\n\r\n",
                 s->port);
        csrv_send(fd, out);
    } else if (!strcmp(path, "/busy")) {
        csrv_send(fd, "HTTP/1.1 503 Busy\r\nRetry-After:  7 \r\nContent-Length: 0\r\n"
                      "Connection: close\r\n\r\n");
    } else if (!strcmp(path, "/slow")) {
        for (int i = 0; i < 30 && !atomic_load(&s->stop); i++)
            usleep(100000);
        csrv_send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    } else {
        csrv_send(fd, "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
}

static void *csrv_main(void *arg)
{
    struct csrv *s = arg;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {.fd = s->lfd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        struct sockaddr_in a;
        socklen_t al = sizeof(a);
        int fd = accept(s->lfd, (struct sockaddr *)&a, &al);
        if (fd < 0)
            continue;
        char peer[64] = "?";
        inet_ntop(AF_INET, &a.sin_addr, peer, sizeof(peer));
        csrv_one(s, fd, peer);
        close(fd);
    }
    return NULL;
}

/* Start on 127.0.0.1, port 0. 0, or -1. */
static int csrv_start(struct csrv *s)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(s->lfd, 16) < 0 || getsockname(s->lfd, (struct sockaddr *)&a, &al) < 0)
        return -1;
    s->port = ntohs(a.sin_port);
    return pthread_create(&s->thread, NULL, csrv_main, s) ? -1 : 0;
}

static void csrv_stop(struct csrv *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->thread, NULL);
    close(s->lfd);
    pthread_mutex_destroy(&s->mu);
}

#endif

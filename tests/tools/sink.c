/* tests/tools/sink.c: a tiny loopback HTTP/1.1 sink for flood's sender tests and benchmarks.
 * One thread, epoll, keep-alive. Every request is read whole (Content-Length bodies) and
 * answered with a fixed status, or never answered (--mode hang), or its connection closed
 * with no answer (--mode close), or answered in a way that tests a client's HTTP/1.1
 * (the other modes, below). It counts requests, and POST bodies by activity type
 * (the outermost of Undo, Create, Like, Follow found in the body), and the distinct client
 * addresses it accepted connections from, independently of flood.
 *
 *   sink [--listen ADDR] [--port N] [--status S] [--retry-after SEC] [--mode MODE]
 *        [--every N] [--exit-after SEC] [--stats FILE] [--dump FILE] [--per-second FILE]
 *
 * Modes that misbehave on purpose (each answer carries the --status unless said):
 *   close-after   every Nth request of a connection (--every N) answered with
 *                 Connection: close, then the connection closed
 *   drop-after    every Nth request of a connection read and never answered: the connection
 *                 closed silently (a keep-alive connection lost under a request)
 *   chunked       the answer's body in chunks (Transfer-Encoding: chunked)
 *   continue      "100 Continue" (and a 103) before the final answer
 *   trickle       the answer written one byte at a time, 0.2 ms apart
 *   reset         half an answer, then a reset (SO_LINGER 0)
 *   garbage       an answer that is not HTTP
 *   http10        an HTTP/1.0 answer, then the connection closed
 *   eof-body      a body delimited by the connection's close (no length)
 *
 * Prints "port N" on stdout once listening. On SIGTERM/SIGINT or --exit-after, writes the
 * counts ("requests N", "create N", ..., "connections N" accepted and
 * "connections_before_first N" of them when the first request came, its own too) to
 * --stats FILE (or stdout) and exits 0. --dump writes the first POST it receives (request
 * line, headers, body) to FILE. --per-second appends one line a second to FILE, "SECOND
 * REQUESTS" (requests that second, counted from the sink's start on CLOCK_MONOTONIC): the
 * rate the sink measured. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define BUF_MAX (2 * 1024 * 1024)

enum mode {
    MODE_ANSWER,
    MODE_HANG,
    MODE_CLOSE,
    MODE_CLOSE_AFTER,
    MODE_DROP_AFTER,
    MODE_CHUNKED,
    MODE_CONTINUE,
    MODE_TRICKLE,
    MODE_RESET,
    MODE_GARBAGE,
    MODE_HTTP10,
    MODE_EOF_BODY,
};

static const char *const mode_names[] = {
    "answer",   "hang",    "close", "close-after", "drop-after", "chunked",
    "continue", "trickle", "reset", "garbage",     "http10",     "eof-body",
};

struct conn {
    int fd;
    unsigned long served; /* requests read on this connection */
    char *buf;
    size_t len, cap;
};

static uint32_t peers[256]; /* distinct client IPv4 addresses seen (the first 256) */
static size_t n_peers;
static unsigned long long n_requests, n_create, n_like, n_follow, n_undo, n_other;
/* connections accepted, and how many of them before the first request came */
static unsigned long long n_conns, n_conns_first;
static int status = 202;
static long retry_after = -1;
static enum mode mode = MODE_ANSWER;
static unsigned long every = 2; /* --every N */
static char answer[256];
static const char *dump_path; /* --dump FILE: the first POST, head and body, written there */
static size_t answer_len;
static FILE *per_second; /* --per-second FILE */

static const char *reason(int s)
{
    switch (s) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 503:
        return "Service Unavailable";
    default:
        return "Status";
    }
}

static int has_type(const char *body, size_t len, const char *type)
{
    char a[64], b[64];
    snprintf(a, sizeof(a), "\"type\":\"%s\"", type);
    snprintf(b, sizeof(b), "\"type\": \"%s\"", type);
    return memmem(body, len, a, strlen(a)) || memmem(body, len, b, strlen(b));
}

static void count_body(const char *body, size_t len)
{
    if (has_type(body, len, "Undo"))
        n_undo++;
    else if (has_type(body, len, "Create"))
        n_create++;
    else if (has_type(body, len, "Like"))
        n_like++;
    else if (has_type(body, len, "Follow"))
        n_follow++;
    else
        n_other++;
}

static void conn_close(int ep, struct conn *c)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->buf);
    free(c);
}

/* Write it all (blocking on a full buffer is not done: a client not reading is dropped). */
static int write_all(int fd, const char *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, p + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* The misbehaving modes' answer to the request just read: 0 when the plain answer is to
 * be written, 1 when answered here (the connection stays), -1 when it must close now. */
static int misbehave(struct conn *c)
{
    char buf[512];
    int n;
    switch (mode) {
    case MODE_CLOSE_AFTER:
        if (c->served % every)
            return 0;
        n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status,
                     reason(status));
        write_all(c->fd, buf, (size_t)n);
        return -1;
    case MODE_CHUNKED:
        n = snprintf(buf, sizeof(buf), "HTTP/1.1 %d %s\r\n", status, reason(status));
        if (retry_after >= 0)
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, "retry-after: %ld\r\n", retry_after);
        n += snprintf(buf + n, sizeof(buf) - (size_t)n,
                      "Transfer-Encoding: chunked\r\n\r\n"
                      "5\r\nhello\r\n7; ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n");
        return write_all(c->fd, buf, (size_t)n) ? -1 : 1;
    case MODE_CONTINUE:
        n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n");
        return write_all(c->fd, buf, (size_t)n) ? -1 : 0;
    case MODE_TRICKLE:
        for (size_t i = 0; i < answer_len; i++) {
            if (write_all(c->fd, answer + i, 1))
                return -1;
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
        return 1;
    case MODE_RESET: {
        write_all(c->fd, answer, answer_len / 2);
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        return -1;
    }
    case MODE_GARBAGE:
        n = snprintf(buf, sizeof(buf), "SSH-2.0-OpenSSH_9.2\r\n\r\n");
        write_all(c->fd, buf, (size_t)n);
        return -1;
    case MODE_HTTP10:
        n = snprintf(buf, sizeof(buf), "HTTP/1.0 %d %s\r\nContent-Length: 2\r\n\r\nok", status,
                     reason(status));
        write_all(c->fd, buf, (size_t)n);
        return -1;
    case MODE_EOF_BODY:
        n = snprintf(buf, sizeof(buf),
                     "HTTP/1.1 %d %s\r\nConnection: close\r\n\r\nthe body ends here", status,
                     reason(status));
        write_all(c->fd, buf, (size_t)n);
        return -1;
    default:
        return 0;
    }
}

/* Handle every whole request in c's buffer. Returns -1 when the connection must close. */
static int handle(struct conn *c)
{
    while (1) {
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (!end)
            return c->len > 65536 ? -1 : 0;
        size_t head = (size_t)(end - c->buf) + 4;
        size_t body = 0;
        for (char *p = c->buf; p < end; p++) {
            if ((p == c->buf || p[-1] == '\n') && !strncasecmp(p, "content-length:", 15)) {
                body = strtoul(p + 15, NULL, 10);
                break;
            }
        }
        if (body > BUF_MAX)
            return -1;
        if (c->len < head + body)
            return 0;
        if (n_requests++ == 0)
            n_conns_first = n_conns;
        if (!strncmp(c->buf, "POST ", 5)) {
            count_body(c->buf + head, body);
            if (dump_path) {
                FILE *f = fopen(dump_path, "w");
                if (f) {
                    fwrite(c->buf, 1, head + body, f);
                    fclose(f);
                }
                dump_path = NULL;
            }
        }
        memmove(c->buf, c->buf + head + body, c->len - head - body);
        c->len -= head + body;
        c->served++;
        if (mode == MODE_CLOSE)
            return -1;
        if (mode == MODE_HANG)
            continue;
        if (mode == MODE_DROP_AFTER && c->served % every == 0)
            return -1;
        int r = misbehave(c);
        if (r)
            return r < 0 ? -1 : 0;
        if (write_all(c->fd, answer, answer_len))
            return -1;
    }
}

static void write_stats(const char *path)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    if (!f)
        return;
    fprintf(f,
            "requests %llu\ncreate %llu\nlike %llu\nfollow %llu\nundo %llu\nother %llu\n"
            "peers %zu\nconnections %llu\nconnections_before_first %llu\n",
            n_requests, n_create, n_like, n_follow, n_undo, n_other, n_peers, n_conns,
            n_conns_first);
    if (f != stdout)
        fclose(f);
    else
        fflush(f);
}

static void usage(void)
{
    fprintf(stderr, "usage: sink [--listen ADDR] [--port N] [--status S] [--retry-after SEC]\n"
                    "            [--mode MODE] [--every N] [--exit-after SEC] [--stats FILE]\n"
                    "            [--dump FILE] [--per-second FILE]\n");
    exit(2);
}

struct sink_args {
    const char *listen_addr, *stats_path;
    int port;
    long exit_after;
};

/* The command line into a and the globals (status, mode, ...); usage() on a bad one. */
static void parse_args(int argc, char **argv, struct sink_args *a_out)
{
    const char *listen_addr = "127.0.0.1", *stats_path = NULL;
    int port = 0;
    long exit_after = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        if (!strcmp(a, "--listen"))
            listen_addr = v;
        else if (!strcmp(a, "--port"))
            port = atoi(v);
        else if (!strcmp(a, "--status"))
            status = atoi(v);
        else if (!strcmp(a, "--retry-after"))
            retry_after = atol(v);
        else if (!strcmp(a, "--exit-after"))
            exit_after = atol(v);
        else if (!strcmp(a, "--stats"))
            stats_path = v;
        else if (!strcmp(a, "--dump"))
            dump_path = v;
        else if (!strcmp(a, "--per-second")) {
            per_second = fopen(v, "w");
            if (!per_second)
                usage();
        } else if (!strcmp(a, "--mode")) {
            size_t m = 0, nm = sizeof(mode_names) / sizeof(mode_names[0]);
            while (m < nm && strcmp(v, mode_names[m]))
                m++;
            if (m == nm)
                usage();
            mode = (enum mode)m;
        } else if (!strcmp(a, "--every")) {
            every = strtoul(v, NULL, 10);
            if (every < 1)
                usage();
        } else
            usage();
        i++;
    }
    if (status < 100 || status > 599)
        usage();
    a_out->listen_addr = listen_addr;
    a_out->stats_path = stats_path;
    a_out->port = port;
    a_out->exit_after = exit_after;
}

/* Take every connection waiting on ls, each on ep. */
static void accept_all(int ls, int ep)
{
    int fd, one = 1;
    struct sockaddr_in peer;
    socklen_t pl = sizeof(peer);
    while ((fd = accept4(ls, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
        size_t j = 0;
        while (j < n_peers && peers[j] != peer.sin_addr.s_addr)
            j++;
        if (j == n_peers && n_peers < 256)
            peers[n_peers++] = peer.sin_addr.s_addr;
        pl = sizeof(peer);
        n_conns++;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        struct conn *c = calloc(1, sizeof(*c));
        if (!c)
            abort();
        c->fd = fd;
        struct epoll_event ce = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ce);
    }
}

/* Read what c's socket holds and answer it; closed when it ended, failed or overflowed. */
static void conn_serve(int ep, struct conn *c)
{
    int dead = 0;
    while (1) {
        if (c->cap - c->len < 16384) {
            size_t cap = c->cap ? c->cap * 2 : 32768;
            if (cap > BUF_MAX) {
                dead = 1;
                break;
            }
            c->buf = realloc(c->buf, cap);
            if (!c->buf)
                abort();
            c->cap = cap;
        }
        ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);
        if (r > 0) {
            c->len += (size_t)r;
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            dead = 1;
        break;
    }
    if (handle(c) < 0)
        dead = 1;
    if (dead)
        conn_close(ep, c);
}

int main(int argc, char **argv)
{
    struct sink_args args;
    parse_args(argc, argv, &args);
    const char *listen_addr = args.listen_addr, *stats_path = args.stats_path;
    int port = args.port;
    long exit_after = args.exit_after;
    int n = snprintf(answer, sizeof(answer), "HTTP/1.1 %d %s\r\nContent-Length: 0\r\n", status,
                     reason(status));
    if (retry_after >= 0)
        n += snprintf(answer + n, sizeof(answer) - (size_t)n, "Retry-After: %ld\r\n", retry_after);
    n += snprintf(answer + n, sizeof(answer) - (size_t)n, "\r\n");
    answer_len = (size_t)n;

    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, listen_addr, &sa.sin_addr) != 1 ||
        bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 4096)) {
        fprintf(stderr, "sink: cannot listen on %s:%d: %s\n", listen_addr, port, strerror(errno));
        return 1;
    }
    socklen_t sl = sizeof(sa);
    getsockname(ls, (struct sockaddr *)&sa, &sl);
    printf("port %d\n", ntohs(sa.sin_port));
    fflush(stdout);

    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    static int sig_tag, timer_tag, sec_tag;
    if (per_second) {
        int sec_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        struct itimerspec its = {.it_value = {.tv_sec = 1}, .it_interval = {.tv_sec = 1}};
        timerfd_settime(sec_fd, 0, &its, NULL);
        struct epoll_event se = {.events = EPOLLIN, .data.ptr = &sec_tag};
        epoll_ctl(ep, EPOLL_CTL_ADD, sec_fd, &se);
        sec_tag = sec_fd;
    }
    unsigned long long sec_prev = 0, sec_n = 0;
    ev.data.ptr = &sig_tag;
    epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
    if (exit_after > 0) {
        int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        struct itimerspec its = {.it_value = {.tv_sec = exit_after}};
        timerfd_settime(tfd, 0, &its, NULL);
        ev.data.ptr = &timer_tag;
        epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
    }
    struct epoll_event evs[256];
    while (1) {
        int k = epoll_wait(ep, evs, 256, -1);
        if (k < 0 && errno == EINTR)
            continue;
        for (int i = 0; i < k; i++) {
            void *p = evs[i].data.ptr;
            if (p == &sec_tag) {
                uint64_t ticks = 0;
                if (read(sec_tag, &ticks, sizeof(ticks)) < 0)
                    ticks = 1;
                for (uint64_t j = 0; j < ticks; j++) { /* a late wake: the rest count 0 */
                    fprintf(per_second, "%llu %llu\n", sec_n++, j ? 0 : n_requests - sec_prev);
                }
                sec_prev = n_requests;
                fflush(per_second);
                continue;
            }
            if (p == &sig_tag || p == &timer_tag) {
                write_stats(stats_path);
                return 0;
            }
            if (!p)
                accept_all(ls, ep);
            else
                conn_serve(ep, p);
        }
    }
}

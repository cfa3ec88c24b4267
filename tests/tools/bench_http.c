/* tests/tools/bench_http.c: what one core's worth of HTTP/1.1 client costs, per carrier.
 * A closed-loop generator (like wrk: each keep-alive connection sends its next request when
 * the answer is in) POSTing flood's kind of request (a ~1.5 KB Create, Content-Type, Accept,
 * User-Agent, Date, Digest and a Signature: about 600 bytes of headers) to one URL for
 * SECONDS, through one of the candidate carriers of the sender's hot path:
 *   curl    libcurl multi on libevent, set up as flood's sender does (-T toggles tunings)
 *   evhttp  libevent's own HTTP client (evhttp_make_request), OpenSSL bufferevents for https
 *   own     flood's own client (flood/send/hclient.h)
 *   raw     write/read (SSL_write/SSL_read) on nonblocking sockets with http-parser: the
 *           lower bound, no timers, no buffers but one
 * and prints one line of key=value figures: requests, errors, req_s, cpu_s (getrusage: user
 * and system, all threads) and req_per_cpu_s.
 *
 *   bench_http [-b curl|evhttp|own|raw] [-c CONNS] [-d SECONDS] [-T TUNING,...] URL
 *   bench_http --emit-lua FILE     (the same request as a wrk script, for the reference)
 *
 * https is never verified (a loopback bench against a self-signed certificate). */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <event2/http.h>
#include <fcntl.h>
#include <getopt.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "flood/send/hclient.h"

#define BODY_SIZE  1500
#define MAX_HDRS   8
#define READ_BUF   16384
#define TIMEOUT_MS 10000 /* flood's default --timeout: set on every request where it costs */

/* curl tunings, each one a change from flood's sender setup (-T name,name) */
enum {
    T_NOCHANGELIST = 1 << 0, /* libevent without EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST */
    T_NOPRECISE = 1 << 1,    /* without EVENT_BASE_FLAG_PRECISE_TIMER (no timerfd) */
    T_BUFDEFAULT = 1 << 2,   /* curl's default 16 KB receive buffer, not 4 KB */
    T_NOTIMEOUT = 1 << 3,    /* no CURLOPT_TIMEOUT_MS */
    T_KEEPOPTS = 1 << 4,     /* options set once per easy handle, not on every request */
    T_EXPECT = 1 << 5,       /* leave curl's Expect: 100-continue on (bodies over 1 KiB) */
    T_NOKICK = 1 << 6,       /* a re-added handle waits for curl's timer, not kicked at once */
    T_NONODELAY = 1 << 7,    /* no TCP_NODELAY */
    T_MAXTOTAL = 1 << 8,     /* CURLMOPT_MAX_TOTAL_CONNECTIONS = CONNS as well */
};
static const struct {
    const char *name;
    unsigned bit;
} tunings[] = {{"nochangelist", T_NOCHANGELIST},
               {"noprecise", T_NOPRECISE},
               {"bufdefault", T_BUFDEFAULT},
               {"notimeout", T_NOTIMEOUT},
               {"keepopts", T_KEEPOPTS},
               {"expect", T_EXPECT},
               {"nokick", T_NOKICK},
               {"nonodelay", T_NONODELAY},
               {"maxtotal", T_MAXTOTAL}};

struct run {
    struct event_base *base;
    struct event *stop_ev;
    const char *url;
    int https;
    char host[256];
    int port;
    char path[512];
    char hostport[300];
    char body[BODY_SIZE + 1];
    size_t body_len;
    char head[1536]; /* header lines "Name: value\r\n", no Host or Content-Length */
    size_t head_len;
    char names[MAX_HDRS][32], values[MAX_HDRS][640];
    int n_hdrs;
    long conns;
    unsigned tune;
    int stopping;
    uint64_t ok, errors;
    SSL_CTX *ssl;
    /* raw: the whole request, prebuilt */
    char *wire;
    size_t wire_len;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void count(struct run *r, int status)
{
    if (status >= 200 && status < 300)
        r->ok++;
    else
        r->errors++;
}

/* ---- the request: flood's shape, fixed bytes -------------------------------------------- */

static void add_hdr(struct run *r, const char *name, const char *value)
{
    snprintf(r->names[r->n_hdrs], sizeof(r->names[0]), "%s", name);
    snprintf(r->values[r->n_hdrs], sizeof(r->values[0]), "%s", value);
    r->n_hdrs++;
    r->head_len += (size_t)snprintf(r->head + r->head_len, sizeof(r->head) - r->head_len,
                                    "%s: %s\r\n", name, value);
}

static void make_request(struct run *r)
{
    static const char *actor = "https://flood1.test/users/user1";
    int n = snprintf(r->body, sizeof(r->body),
                     "{\"@context\":\"https://www.w3.org/ns/activitystreams\","
                     "\"id\":\"%s/statuses/1/activity\",\"type\":\"Create\",\"actor\":\"%s\","
                     "\"published\":\"2026-01-01T00:00:00Z\","
                     "\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"],"
                     "\"cc\":[\"%s/followers\"],\"object\":{\"id\":\"%s/statuses/1\","
                     "\"type\":\"Note\",\"attributedTo\":\"%s\","
                     "\"published\":\"2026-01-01T00:00:00Z\","
                     "\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"],"
                     "\"cc\":[\"%s/followers\"],\"content\":\"<p>",
                     actor, actor, actor, actor, actor, actor);
    static const char *words = "the quick brown fox jumps over the lazy dog ";
    const char *tail = "</p>\"}}";
    size_t len = (size_t)n, wl = strlen(words), tl = strlen(tail);
    for (size_t i = 0; len + tl < BODY_SIZE; i++)
        r->body[len++] = words[i % wl];
    memcpy(r->body + len, tail, tl + 1);
    r->body_len = len + tl;

    unsigned char md[32], sig[256];
    char b64[400], line[640];
    EVP_Digest(r->body, r->body_len, md, NULL, EVP_sha256(), NULL);
    EVP_EncodeBlock((unsigned char *)b64, md, sizeof(md));
    add_hdr(r, "Content-Type", "application/activity+json");
    add_hdr(r, "Accept", "application/activity+json");
    add_hdr(r, "User-Agent", "flood");
    add_hdr(r, "Date", "Thu, 01 Jan 2026 00:00:00 GMT");
    snprintf(line, sizeof(line), "SHA-256=%s", b64);
    add_hdr(r, "Digest", line);
    for (size_t i = 0; i < sizeof(sig); i++) /* an RSA-2048 signature's size, fixed bytes */
        sig[i] = md[i % sizeof(md)] ^ (unsigned char)i;
    EVP_EncodeBlock((unsigned char *)b64, sig, sizeof(sig));
    snprintf(line, sizeof(line),
             "keyId=\"%s#main-key\",algorithm=\"rsa-sha256\","
             "headers=\"(request-target) host date digest content-type\",signature=\"%s\"",
             actor, b64);
    add_hdr(r, "Signature", line);

    size_t cap = r->head_len + r->body_len + 1024;
    r->wire = malloc(cap);
    if (!r->wire)
        abort();
    r->wire_len = (size_t)snprintf(r->wire, cap,
                                   "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\n%s\r\n",
                                   r->path, r->hostport, r->body_len, r->head);
    memcpy(r->wire + r->wire_len, r->body, r->body_len);
    r->wire_len += r->body_len;
}

static int emit_lua(struct run *r, const char *file)
{
    FILE *f = fopen(file, "w");
    if (!f) {
        fprintf(stderr, "bench_http: cannot write '%s': %s\n", file, strerror(errno));
        return 1;
    }
    fprintf(f, "wrk.method = \"POST\"\nwrk.body = [==[%s]==]\n", r->body);
    for (int i = 0; i < r->n_hdrs; i++)
        fprintf(f, "wrk.headers[\"%s\"] = [==[%s]==]\n", r->names[i], r->values[i]);
    return fclose(f) ? 1 : 0;
}

static int parse_url(struct run *r, const char *url)
{
    const char *p;
    if (!strncmp(url, "http://", 7)) {
        p = url + 7;
        r->port = 80;
    } else if (!strncmp(url, "https://", 8)) {
        p = url + 8;
        r->https = 1;
        r->port = 443;
    } else {
        return -1;
    }
    size_t hl = strcspn(p, ":/");
    if (hl == 0 || hl >= sizeof(r->host))
        return -1;
    memcpy(r->host, p, hl);
    r->host[hl] = 0;
    p += hl;
    if (*p == ':')
        r->port = (int)strtol(p + 1, (char **)&p, 10);
    snprintf(r->path, sizeof(r->path), "%s", *p ? p : "/");
    snprintf(r->hostport, sizeof(r->hostport), "%s:%d", r->host, r->port);
    r->url = url;
    return 0;
}

/* ---- curl: libcurl multi on libevent, as flood's sender ----------------------------------- */

struct csock {
    struct event ev;
    struct run *r;
};
static CURLM *multi;
static struct event *curl_timer;
static uint64_t curl_timer_calls, curl_socket_calls, curl_actions; /* per request, printed */
static CURL **curl_easies; /* one a connection, for the cleanup */
static struct curl_slist *curl_hdrs;

static void curl_check(struct run *r);

static void curl_on_socket(evutil_socket_t fd, short kind, void *arg)
{
    int running;
    curl_actions++;
    curl_multi_socket_action(multi, fd,
                             ((kind & EV_READ) ? CURL_CSELECT_IN : 0) |
                                 ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0),
                             &running);
    curl_check(arg);
}

static void curl_on_timer(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    int running;
    curl_actions++;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    curl_check(arg);
}

static int curl_timer_cb(CURLM *m, long timeout_ms, void *ud)
{
    (void)m;
    (void)ud;
    curl_timer_calls++;
    if (timeout_ms < 0) {
        evtimer_del(curl_timer);
        return 0;
    }
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    evtimer_add(curl_timer, &tv);
    return 0;
}

static int curl_socket_cb(CURL *e, curl_socket_t fd, int what, void *ud, void *sockp)
{
    (void)e;
    struct run *r = ud;
    struct csock *si = sockp;
    curl_socket_calls++;
    if (what == CURL_POLL_REMOVE) {
        if (si) {
            event_del(&si->ev);
            free(si);
            curl_multi_assign(multi, fd, NULL);
        }
        return 0;
    }
    if (!si) {
        si = calloc(1, sizeof(*si));
        if (!si)
            abort();
        curl_multi_assign(multi, fd, si);
    } else {
        event_del(&si->ev);
    }
    short kind = (short)(((what & CURL_POLL_IN) ? EV_READ : 0) |
                         ((what & CURL_POLL_OUT) ? EV_WRITE : 0) | EV_PERSIST);
    event_assign(&si->ev, r->base, fd, kind, curl_on_socket, r);
    event_add(&si->ev, NULL);
    return 0;
}

static size_t curl_discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return size * n;
}

/* The per-request options flood's sender sets (add_easy), unless keepopts has them once. */
static void curl_request_opts(struct run *r, CURL *e)
{
    if (!(r->tune & T_NOTIMEOUT))
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)TIMEOUT_MS);
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)r->body_len);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, curl_hdrs);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_discard);
}

static CURL *curl_new_easy(struct run *r)
{
    CURL *e = curl_easy_init();
    if (!e)
        abort();
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    if (!(r->tune & T_BUFDEFAULT))
        curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 4096L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, (r->tune & T_NONODELAY) ? 0L : 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 0L);
    if (r->tune & T_KEEPOPTS)
        curl_request_opts(r, e);
    return e;
}

static void curl_add(struct run *r, CURL *e)
{
    if (!(r->tune & T_KEEPOPTS))
        curl_request_opts(r, e);
    if (curl_multi_add_handle(multi, e) != CURLM_OK)
        r->errors++;
}

static void curl_check(struct run *r)
{
    CURLMsg *m;
    int left, readded;
    do {
        readded = 0;
        while ((m = curl_multi_info_read(multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            CURL *e = m->easy_handle;
            long status = 0;
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
            count(r, m->data.result == CURLE_OK ? (int)status : 0); /* m is gone once removed */
            curl_multi_remove_handle(multi, e);
            if (r->stopping)
                continue;
            curl_add(r, e); /* the same easy handle again: its connection is in the cache */
            readded = 1;
        }
        if (readded && !(r->tune & T_NOKICK)) {
            int running;
            curl_actions++;
            curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
    } while (readded && !(r->tune & T_NOKICK));
}

static int curl_start(struct run *r)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    multi = curl_multi_init();
    curl_timer = evtimer_new(r->base, curl_on_timer, r);
    if (!multi || !curl_timer)
        return -1;
    for (int i = 0; i < r->n_hdrs; i++) {
        char line[700];
        snprintf(line, sizeof(line), "%s: %s", r->names[i], r->values[i]);
        curl_hdrs = curl_slist_append(curl_hdrs, line);
    }
    if (!(r->tune & T_EXPECT))
        curl_hdrs = curl_slist_append(curl_hdrs, "Expect:");
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, curl_socket_cb);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, r);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, r->conns);
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, r->conns * 32);
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    if (r->tune & T_MAXTOTAL)
        curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, r->conns);
    curl_easies = calloc((size_t)r->conns, sizeof(*curl_easies));
    if (!curl_easies)
        return -1;
    for (long i = 0; i < r->conns; i++)
        curl_add(r, curl_easies[i] = curl_new_easy(r));
    return 0;
}

static void curl_stop(long conns)
{
    for (long i = 0; i < conns; i++) {
        curl_multi_remove_handle(multi, curl_easies[i]); /* a no-op for a handle done */
        curl_easy_cleanup(curl_easies[i]);
    }
    free(curl_easies);
    curl_multi_cleanup(multi);
    curl_slist_free_all(curl_hdrs);
    event_free(curl_timer);
    curl_global_cleanup();
}

/* ---- evhttp: libevent's own HTTP client ---------------------------------------------------- */

struct econn {
    struct evhttp_connection *cn;
    struct run *r;
    int nodelay;
};

static void ev_send(struct econn *c);

static void ev_done(struct evhttp_request *req, void *arg)
{
    struct econn *c = arg;
    count(c->r, req ? evhttp_request_get_response_code(req) : 0);
    if (!c->nodelay) {
        /* evhttp makes its socket itself and never sets TCP_NODELAY: over TLS a request
         * goes out as two records and Nagle holds the second one for the peer's delayed
         * ACK (40 ms a request). The socket exists once the first answer is in. */
        int one = 1, fd = bufferevent_getfd(evhttp_connection_get_bufferevent(c->cn));
        if (fd >= 0)
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        c->nodelay = 1;
    }
    if (!c->r->stopping)
        ev_send(c);
}

static void ev_send(struct econn *c)
{
    struct run *r = c->r;
    struct evhttp_request *req = evhttp_request_new(ev_done, c);
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Host", r->hostport);
    for (int i = 0; i < r->n_hdrs; i++)
        evhttp_add_header(h, r->names[i], r->values[i]);
    evbuffer_add_reference(evhttp_request_get_output_buffer(req), r->body, r->body_len, NULL, NULL);
    if (evhttp_make_request(c->cn, req, EVHTTP_REQ_POST, r->path))
        r->errors++; /* the request was freed by libevent */
}

static int ev_start(struct run *r, struct econn **out)
{
    struct econn *cs = calloc((size_t)r->conns, sizeof(*cs));
    if (!cs)
        return -1;
    *out = cs;
    for (long i = 0; i < r->conns; i++) {
        struct bufferevent *bev = NULL;
        if (r->https) {
            SSL *ssl = SSL_new(r->ssl);
            SSL_set_tlsext_host_name(ssl, r->host);
            bev = bufferevent_openssl_socket_new(r->base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
                                                 BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
            bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
        }
        cs[i].r = r;
        cs[i].cn = evhttp_connection_base_bufferevent_new(r->base, NULL, bev, r->host,
                                                          (ev_uint16_t)r->port);
        if (!cs[i].cn)
            return -1;
        ev_send(&cs[i]);
    }
    return 0;
}

/* ---- raw: nonblocking sockets, one buffer, http-parser -------------------------------------- */

struct rconn {
    int fd;
    SSL *ssl;
    struct event rev, wev;
    http_parser p;
    size_t woff;
    int complete;
    struct run *r;
};

static int raw_complete(http_parser *p)
{
    struct rconn *c = p->data;
    count(c->r, p->status_code);
    c->complete = 1;
    return 0;
}

static const http_parser_settings raw_settings = {.on_message_complete = raw_complete};

static void raw_fail(struct rconn *c)
{
    c->r->errors++;
    event_del(&c->rev);
    event_del(&c->wev);
    close(c->fd);
    c->fd = -1;
}

/* Write what is left of the request; 0 when all of it went out or waits for EV_WRITE. */
static int raw_flush(struct rconn *c)
{
    struct run *r = c->r;
    while (c->woff < r->wire_len) {
        const char *p = r->wire + c->woff;
        size_t left = r->wire_len - c->woff;
        ssize_t n;
        if (c->ssl) {
            n = SSL_write(c->ssl, p, (int)left);
            if (n <= 0) {
                int e = SSL_get_error(c->ssl, (int)n);
                if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
                    return event_add(&c->wev, NULL);
                return -1;
            }
        } else {
            n = write(c->fd, p, left);
            if (n < 0) {
                if (errno == EAGAIN)
                    return event_add(&c->wev, NULL);
                return -1;
            }
        }
        c->woff += (size_t)n;
    }
    return 0;
}

static int raw_send(struct rconn *c)
{
    c->woff = 0;
    c->complete = 0;
    return raw_flush(c);
}

static void raw_on_write(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct rconn *c = arg;
    if (raw_flush(c))
        raw_fail(c);
}

static void raw_on_read(evutil_socket_t fd, short kind, void *arg)
{
    (void)kind;
    struct rconn *c = arg;
    char buf[READ_BUF];
    for (;;) {
        ssize_t n;
        if (c->ssl) {
            n = SSL_read(c->ssl, buf, sizeof(buf));
            if (n <= 0) {
                int e = SSL_get_error(c->ssl, (int)n);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                    break;
                raw_fail(c);
                return;
            }
        } else {
            n = read(fd, buf, sizeof(buf));
            if (n < 0 && errno == EAGAIN)
                break;
            if (n <= 0) {
                raw_fail(c);
                return;
            }
        }
        size_t used = http_parser_execute(&c->p, &raw_settings, buf, (size_t)n);
        if (c->p.http_errno != HPE_OK || used != (size_t)n) {
            raw_fail(c);
            return;
        }
        if (!c->ssl && (size_t)n < sizeof(buf))
            break; /* a short read: the socket is empty, spare the EAGAIN */
    }
    if (c->complete && !c->r->stopping && raw_send(c))
        raw_fail(c);
}

static int raw_connect(struct run *r, struct rconn *c)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->port)};
    if (inet_pton(AF_INET, strcmp(r->host, "localhost") ? r->host : "127.0.0.1", &sa.sin_addr) !=
        1) {
        fprintf(stderr, "bench_http: raw: '%s' is not an IPv4 address\n", r->host);
        return -1;
    }
    int one = 1;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
        fprintf(stderr, "bench_http: raw: connect '%s': %s\n", r->hostport, strerror(errno));
        return -1;
    }
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (r->https) { /* a blocking handshake: setup, not the measured path */
        c->ssl = SSL_new(r->ssl);
        SSL_set_tlsext_host_name(c->ssl, r->host);
        SSL_set_fd(c->ssl, c->fd);
        if (SSL_connect(c->ssl) != 1) {
            fprintf(stderr, "bench_http: raw: TLS handshake with '%s' failed\n", r->hostport);
            return -1;
        }
    }
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->r = r;
    http_parser_init(&c->p, HTTP_RESPONSE);
    c->p.data = c;
    event_assign(&c->rev, r->base, c->fd, EV_READ | EV_PERSIST, raw_on_read, c);
    event_assign(&c->wev, r->base, c->fd, EV_WRITE, raw_on_write, c);
    event_add(&c->rev, NULL);
    return raw_send(c);
}

/* ---- own: flood's client (flood/send/hclient.h) ------------------------------------------- */

struct oreq {
    struct hc_req q;
    struct hc_client *hc;
    struct run *r;
};

static void own_done(struct hc_req *q, const struct hc_result *res);

static void own_send(struct oreq *o)
{
    struct run *r = o->r;
    memset(&o->q, 0, sizeof(o->q));
    o->q.url = r->url;
    o->q.head = r->head;
    o->q.head_len = r->head_len;
    o->q.body = r->body;
    o->q.body_len = r->body_len;
    o->q.deadline_ns = mono_ns() + (int64_t)TIMEOUT_MS * 1000000;
    o->q.ud = o;
    o->q.done = own_done;
    hc_send(o->hc, &o->q);
}

static void own_done(struct hc_req *q, const struct hc_result *res)
{
    struct oreq *o = q->ud;
    count(o->r, res->outcome == HC_OK ? res->status : 0);
    if (!o->r->stopping)
        own_send(o);
}

/* ---- main ------------------------------------------------------------------------------- */

static void on_stop(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct run *r = arg;
    r->stopping = 1;
    event_base_loopbreak(r->base);
}

static int parse_tunings(struct run *r, const char *s)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < sizeof(tunings) / sizeof(tunings[0]); i++)
            if (!strcmp(t, tunings[i].name))
                break;
        if (i == sizeof(tunings) / sizeof(tunings[0])) {
            fprintf(stderr, "bench_http: -T: unknown tuning '%s'\n", t);
            return -1;
        }
        r->tune |= tunings[i].bit;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_http [-b curl|evhttp|own|raw] [-c CONNS] [-d SECONDS] "
                    "[-T TUNING,...] URL\n       bench_http --emit-lua FILE\n");
}

int main(int argc, char **argv)
{
    static struct run r;
    const char *backend = "curl", *lua = NULL, *tune = "";
    double seconds = 3;
    r.conns = 64;
    static const struct option lo[] = {{"emit-lua", required_argument, NULL, 'L'},
                                       {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "b:c:d:T:", lo, NULL)) != -1) {
        switch (ch) {
        case 'b':
            backend = optarg;
            break;
        case 'c':
            r.conns = strtol(optarg, NULL, 10);
            break;
        case 'd':
            seconds = strtod(optarg, NULL);
            break;
        case 'T':
            tune = optarg;
            break;
        case 'L':
            lua = optarg;
            break;
        default:
            usage();
            return 2;
        }
    }
    if (parse_url(&r, optind < argc ? argv[optind] : "http://127.0.0.1/inbox")) {
        fprintf(stderr, "bench_http: '%s' is not an http:// or https:// URL\n", argv[optind]);
        return 2;
    }
    make_request(&r);
    if (lua)
        return emit_lua(&r, lua);
    if (optind >= argc || r.conns < 1 || seconds <= 0 || parse_tunings(&r, tune)) {
        usage();
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* a peer's reset while writing is an error counted, not death */
    if (r.https) {
        r.ssl = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_verify(r.ssl, SSL_VERIFY_NONE, NULL);
        /* a record's header and body in one read(), not two */
        SSL_CTX_set_read_ahead(r.ssl, 1);
    }
    struct event_config *cfg = event_config_new();
    int flags = 0;
    if (!(r.tune & T_NOPRECISE))
        flags |= EVENT_BASE_FLAG_PRECISE_TIMER;
    if (!(r.tune & T_NOCHANGELIST))
        flags |= EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST;
    event_config_set_flag(cfg, flags);
    r.base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    struct timeval tv = {.tv_sec = (long)seconds,
                         .tv_usec = (long)((seconds - (long)seconds) * 1e6)};
    r.stop_ev = evtimer_new(r.base, on_stop, &r);
    evtimer_add(r.stop_ev, &tv);

    double c0 = cpu_s();
    int64_t t0 = mono_ns();
    int rc = 0;
    struct econn *econns = NULL;
    struct rconn *rconns = NULL;
    struct hc_client *hc = NULL;
    struct oreq *oreqs = NULL;
    if (!strcmp(backend, "curl")) {
        rc = curl_start(&r);
    } else if (!strcmp(backend, "evhttp")) {
        rc = ev_start(&r, &econns);
    } else if (!strcmp(backend, "raw")) {
        rconns = calloc((size_t)r.conns, sizeof(*rconns));
        for (long i = 0; rconns && i < r.conns && !rc; i++)
            rc = raw_connect(&r, &rconns[i]);
    } else if (!strcmp(backend, "own")) {
        struct flood_err err = {0, ""};
        struct hc_opts o = {.connections = r.conns, .insecure = 1};
        hc = hc_new(r.base, &o, &err);
        oreqs = calloc((size_t)r.conns, sizeof(*oreqs));
        if (!hc || !oreqs) {
            fprintf(stderr, "bench_http: own: %s\n", err.msg);
            return 1;
        }
        for (long i = 0; i < r.conns; i++) {
            oreqs[i].hc = hc;
            oreqs[i].r = &r;
            own_send(&oreqs[i]);
        }
    } else {
        usage();
        return 2;
    }
    if (rc) {
        fprintf(stderr, "bench_http: %s: cannot start\n", backend);
        return 1;
    }
    event_base_dispatch(r.base);
    double wall = (double)(mono_ns() - t0) / 1e9, cpu = cpu_s() - c0;
    printf("bench_http: backend=%s scheme=%s conns=%ld tune=%s seconds=%.2f requests=%llu "
           "errors=%llu req_s=%.1f cpu_s=%.3f req_per_cpu_s=%.1f\n",
           backend, r.https ? "https" : "http", r.conns, tune[0] ? tune : "-", wall,
           (unsigned long long)r.ok, (unsigned long long)r.errors, (double)r.ok / wall, cpu,
           cpu > 0 ? (double)r.ok / cpu : 0);
    if (!strcmp(backend, "curl")) {
        double n = r.ok + r.errors ? (double)(r.ok + r.errors) : 1;
        printf("bench_http: curl callbacks a request: timer %.2f socket %.2f "
               "curl_multi_socket_action %.2f\n",
               (double)curl_timer_calls / n, (double)curl_socket_calls / n,
               (double)curl_actions / n);
        curl_stop(r.conns);
    }
    fflush(stdout);
    if (econns) {
        for (long i = 0; i < r.conns; i++)
            if (econns[i].cn)
                evhttp_connection_free(econns[i].cn);
        free(econns);
    }
    if (rconns) {
        for (long i = 0; i < r.conns; i++) {
            if (rconns[i].ssl)
                SSL_free(rconns[i].ssl);
            if (rconns[i].fd > 0) {
                event_del(&rconns[i].rev);
                event_del(&rconns[i].wev);
                close(rconns[i].fd);
            }
        }
        free(rconns);
    }
    r.stopping = 1; /* what hc_free cancels is not sent again */
    hc_free(hc);
    free(oreqs);
    event_free(r.stop_ev);
    event_base_loop(r.base, EVLOOP_NONBLOCK); /* bufferevents freed with deferred callbacks */
    event_base_free(r.base);
    SSL_CTX_free(r.ssl);
    free(r.wire);
    return r.ok > 0 ? 0 : 1;
}

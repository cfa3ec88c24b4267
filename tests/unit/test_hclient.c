/* tests/unit/test_hclient.c: the sender's HTTP/1.1 client (flood/send/hclient.c) against
 * a misbehaving server of the test's own (hc_server.h): keep-alive reuse, Connection:
 * close and silent closes (the retry of a reused connection), chunked, 1xx, slow, reset,
 * silent, garbage and HTTP/1.0 answers, Retry-After, refused connections, deadlines,
 * cancelling, source addresses, TLS (verified, insecure, failing, session resumption),
 * answers read later than they came (hc_defer_reads), and the answer parser alone fed in
 * every chunking. Outcomes and counts are asserted, never durations (deadlines have wide
 * margins), but for a floor the client's own timer sets. */
#include "tests/check.h"
#include "flood/crowd/tls.h"
#include "flood/send/hclient.h"
#include "tests/unit/hc_server.h"

#include <event2/event.h>
#include <signal.h>

#define MAXR 64

struct run {
    struct hc_client *c;
    struct event_base *base;
    struct hc_req req[MAXR];
    struct hc_result res[MAXR];
    int calls[MAXR];
    int64_t done_at[MAXR]; /* CLOCK_MONOTONIC when done was called */
    int n, sent, done;
    int sequential;
    int in_send;      /* hc_send is on the stack */
    int done_in_send; /* a done came from inside hc_send: a bug */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void send_one(struct run *r)
{
    int i = r->sent++;
    r->in_send = 1;
    hc_send(r->c, &r->req[i]);
    r->in_send = 0;
}

static void on_done(struct hc_req *req, const struct hc_result *res)
{
    struct run *r = req->ud;
    int i = (int)(req - r->req);
    if (r->in_send)
        r->done_in_send++;
    r->res[i] = *res;
    r->done_at[i] = now_ns();
    r->calls[i]++;
    r->done++;
    if (r->sequential && r->sent < r->n)
        send_one(r);
    if (r->done == r->n)
        event_base_loopexit(r->base, NULL);
}

static const char BODY[] = "{\"type\":\"Follow\",\"actor\":\"https://flood1.test/users/1\"}";
static const char HEAD[] = "Content-Type: application/activity+json\r\nDate: x\r\n";

/* n requests to url (src 0), each with deadline_ms from now; sequential: one at a time. */
static void prep(struct run *r, struct hc_client *c, struct event_base *base, const char *url,
                 int n, long deadline_ms, int sequential)
{
    memset(r, 0, sizeof(*r));
    r->c = c;
    r->base = base;
    r->n = n;
    r->sequential = sequential;
    int64_t deadline = now_ns() + deadline_ms * 1000000; /* one for all: they expire together */
    for (int i = 0; i < n; i++) {
        struct hc_req *q = &r->req[i];
        q->url = url;
        q->head = HEAD;
        q->head_len = sizeof(HEAD) - 1;
        q->body = BODY;
        q->body_len = sizeof(BODY) - 1;
        q->deadline_ns = deadline;
        q->done = on_done;
        q->ud = r;
    }
}

static void on_guard(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct run *r = arg;
    printf("# a run did not end in 30 s (%d of %d told)\n", r->done, r->n);
    event_base_loopexit(r->base, NULL);
}

/* Send what prep set up and run the loop until every done came (or 30 s: a failure). */
static void go(struct run *r)
{
    if (r->sequential)
        send_one(r);
    else
        while (r->sent < r->n)
            send_one(r);
    struct timeval tv = {30, 0};
    struct event *guard = evtimer_new(r->base, on_guard, r);
    evtimer_add(guard, &tv);
    if (r->done < r->n)
        event_base_dispatch(r->base);
    event_free(guard);
}

/* Every request told once; how many ended with outcome (and status, when not 0). */
static int count(const struct run *r, enum hc_outcome outcome, int status)
{
    int k = 0;
    for (int i = 0; i < r->n; i++)
        if (r->calls[i] == 1 && r->res[i].outcome == outcome &&
            (!status || r->res[i].status == status))
            k++;
    return k;
}

static int once_each(const struct run *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->calls[i] != 1)
            return 0;
    return r->done_in_send == 0;
}

struct env {
    struct event_base *base;
    char url[128];
};

/* One case: a server in mode, a client with opts, n requests; checks outcome counts. */
static void plain_case(const char *what, enum srv_mode mode, int mode_n, long conns, int n,
                       int sequential, long deadline_ms, enum hc_outcome want, int status,
                       int64_t want_connects)
{
    struct srv s;
    if (srv_start(&s, mode, mode_n, NULL)) {
        CHECK(0, "%s: server starts", what);
        return;
    }
    struct event_base *base = event_base_new();
    struct hc_opts o = {.connections = conns};
    struct flood_err err;
    struct hc_client *c = hc_new(base, &o, &err);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/users/1/inbox#frag", s.port);
    static struct run r;
    prep(&r, c, base, url, n, deadline_ms, sequential);
    go(&r);
    CHECK(once_each(&r), "%s: done once per request, never inside hc_send", what);
    CHECK(count(&r, want, status) == n, "%s: %d of %d end %s %d", what, count(&r, want, status), n,
          hc_outcome_name(want), status);
    CHECK(hc_in_flight(c) == 0, "%s: nothing in flight after", what);
    if (want_connects >= 0)
        CHECK((int64_t)hc_connects(c) == want_connects, "%s: %llu connections (want %lld)", what,
              (unsigned long long)hc_connects(c), (long long)want_connects);
    if (mode == SRV_NORMAL && n > 0) {
        char host[64];
        snprintf(host, sizeof(host), "127.0.0.1:%u", s.port);
        CHECK_STR(s.last_host, host, "%s: Host has the port", what);
        unsigned char sum = 0;
        for (size_t i = 0; i < sizeof(BODY) - 1; i++)
            sum = (unsigned char)(sum + (unsigned char)BODY[i]);
        CHECK(s.last_body_len == sizeof(BODY) - 1 && s.last_body_sum == sum,
              "%s: the body arrived whole", what);
    }
    hc_free(c);
    event_base_free(base);
    srv_stop(&s);
}

static void test_parser(void)
{
    /* two answers, each fed in chunks of every size from 1 byte to the whole */
    static const char first[] = "HTTP/1.1 100 Continue\r\n\r\n"
                                "HTTP/1.1 429 Too Many\r\nX-Retry-After: 1\r\nReTrY-aFtEr: 3\r\n"
                                "Content-Length: 3\r\n\r\nabc";
    static const char second[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                                 "Retry-Afterx: 1\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    size_t l1 = sizeof(first) - 1, l2 = sizeof(second) - 1;
    int all_ok = 1;
    for (size_t step = 1; step <= l1 || step <= l2; step++) {
        struct hc_parse *p = hc_parse_new();
        int got = 0;
        for (size_t at = 0; at < l1; at += step)
            got = hc_parse_feed(p, first + at, at + step <= l1 ? step : l1 - at);
        if (got != 1 || hc_parse_last_status(p) != 429 || hc_parse_retry_after(p) != 1)
            all_ok = 0;
        for (size_t at = 0; at < l2; at += step)
            got = hc_parse_feed(p, second + at, at + step <= l2 ? step : l2 - at);
        if (got != 2 || hc_parse_last_status(p) != 200 || hc_parse_retry_after(p) != 0)
            all_ok = 0;
        hc_parse_free(p);
    }
    CHECK(all_ok, "parse: 100 skipped, 429 with Retry-After, chunked 200 without, any chunking");

    struct hc_parse *p = hc_parse_new();
    CHECK(hc_parse_feed(p, "HTTP/1.0 200 OK\r\n\r\nbody", 23) == 0, "parse: close-delimited open");
    CHECK(hc_parse_eof(p) == 1 && hc_parse_last_status(p) == 200, "parse: EOF ends it");
    hc_parse_free(p);

    p = hc_parse_new();
    CHECK(hc_parse_feed(p, "HTTP/1.1 200 OK\r\nContent-Le", 27) == 0, "parse: half a head");
    CHECK(hc_parse_eof(p) == -1, "parse: EOF in the head is an error");
    hc_parse_free(p);

    p = hc_parse_new();
    CHECK(hc_parse_feed(p, "SPAM SPAM\r\n\r\n", 13) == -1, "parse: garbage is -1");
    CHECK(hc_parse_feed(p, "HTTP/1.1 200 OK\r\n\r\n", 19) == -1, "parse: and stays -1");
    hc_parse_free(p);

    p = hc_parse_new();
    CHECK(hc_parse_feed(p, "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", 38) == -1,
          "parse: HTTP/2.0 is not HTTP/1.x");
    hc_parse_free(p);

    p = hc_parse_new();
    CHECK(hc_parse_feed(p, "HTTP/1.1 503 No\r\nRetry-After:\r\nContent-Length: 0\r\n\r\n", 52) ==
                  1 &&
              hc_parse_retry_after(p) == 1,
          "parse: an empty Retry-After still counts");
    hc_parse_free(p);
}

static void test_plain(void)
{
    plain_case("keep-alive, 2 connections", SRV_NORMAL, 0, 2, 20, 0, 10000, HC_OK, 202, 2);
    plain_case("sequential, reused", SRV_NORMAL, 0, 4, 10, 1, 10000, HC_OK, 202, 1);
    plain_case("Connection: close after 3", SRV_CLOSE_AFTER, 3, 1, 9, 1, 10000, HC_OK, 202, 3);
    /* the 3rd, 5th... request meets a reused connection closed unanswered: retried */
    plain_case("silent close after 2", SRV_SILENT_AFTER, 2, 1, 6, 1, 10000, HC_OK, 202, 3);
    plain_case("fresh connection closed unanswered", SRV_SILENT_AFTER, 0, 1, 3, 1, 10000, HC_RESET,
               0, 3);
    plain_case("chunked", SRV_CHUNKED, 0, 1, 5, 1, 10000, HC_OK, 200, 1);
    plain_case("100 and 103 first", SRV_CONTINUE, 0, 1, 3, 1, 10000, HC_OK, 202, 1);
    plain_case("1 byte at a time", SRV_SLOW, 0, 1, 3, 0, 20000, HC_OK, 202, 1);
    plain_case("reset mid-answer", SRV_RESET_MID, 0, 1, 2, 1, 10000, HC_RESET, 0, 2);
    plain_case("never answering", SRV_NEVER, 0, 1, 1, 0, 300, HC_TIMEOUT, 0, 1);
    plain_case("never answering, 3 queued", SRV_NEVER, 0, 1, 4, 0, 300, HC_TIMEOUT, 0, 1);
    plain_case("garbage", SRV_GARBAGE, 0, 1, 2, 1, 10000, HC_PROTOCOL, 0, 2);
    plain_case("HTTP/1.0", SRV_HTTP10, 0, 1, 3, 1, 10000, HC_OK, 200, 3);
    plain_case("429", SRV_429, 0, 1, 2, 1, 10000, HC_OK, 429, 1);
    /* bytes behind a whole answer: it counts, the connection is not trusted again */
    plain_case("bytes after the answer", SRV_TRAILING, 0, 1, 3, 1, 10000, HC_OK, 202, 3);
    /* an answer longer than one read: read on at the next turns, the connection kept */
    plain_case("a 40,000-byte answer", SRV_BIG, 0, 1, 3, 1, 10000, HC_OK, 202, 1);
}

/* A client on base with opts; a run of n requests to url; the run is left in *r. */
static struct hc_client *one_run(struct event_base *base, const struct hc_opts *o, const char *url,
                                 int n, int sequential, struct run *r)
{
    struct flood_err err;
    struct hc_client *c = hc_new(base, o, &err);
    if (!c) {
        printf("# hc_new: %s\n", err.msg);
        return NULL;
    }
    prep(r, c, base, url, n, 10000, sequential);
    go(r);
    return c;
}

static void test_misc(void)
{
    struct event_base *base = event_base_new();
    struct hc_opts o = {.connections = 2};
    static struct run r;
    char url[128];

    struct srv s;
    srv_start(&s, SRV_429, 0, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    struct hc_client *c = one_run(base, &o, url, 1, 1, &r);
    CHECK(c && r.res[0].status == 429 && r.res[0].retry_after == 1, "Retry-After noted on a 429");
    hc_free(c);
    srv_stop(&s);
    srv_start(&s, SRV_NORMAL, 0, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    c = one_run(base, &o, url, 3, 1, &r);
    CHECK(c && r.res[0].status == 202 && r.res[0].retry_after == 0, "none noted on a 202");
    CHECK(c && !r.res[0].reused && r.res[1].reused && r.res[2].reused, "reused flags");
    hc_free(c);

    /* source addresses: two sources, one connection each, the server sees them */
    c = hc_new(base, &o, &(struct flood_err){0});
    prep(&r, c, base, url, 4, 10000, 1);
    for (int i = 0; i < 4; i++)
        r.req[i].src_ipv4 = (i % 2) ? 0x7f000003 : 0x7f000002;
    go(&r);
    CHECK(count(&r, HC_OK, 202) == 4 && hc_connects(c) == 2, "two sources, two connections");
    CHECK(strcmp(s.last_peer, "127.0.0.3") == 0 || strcmp(s.last_peer, "127.0.0.2") == 0,
          "the server saw a bound source (%s)", s.last_peer);
    hc_free(c);

    /* a body larger than the socket's buffer: written over several turns */
    static char big[8 << 20];
    memset(big, 'b', sizeof(big));
    c = hc_new(base, &o, &(struct flood_err){0});
    prep(&r, c, base, url, 2, 20000, 1);
    r.req[0].body = r.req[1].body = big;
    r.req[0].body_len = r.req[1].body_len = sizeof(big);
    go(&r);
    CHECK(count(&r, HC_OK, 202) == 2 && s.last_body_len == sizeof(big) && hc_connects(c) == 1,
          "an 8 MiB body, twice on one connection");
    hc_free(c);
    srv_stop(&s);

    /* an answer before the body was read: not reused (32 MiB: more than the socket
     * buffers on both sides hold, so the request is still being written) */
    char *huge = calloc(32, 1 << 20);
    srv_start(&s, SRV_EARLY, 0, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    c = hc_new(base, &o, &(struct flood_err){0});
    prep(&r, c, base, url, 2, 20000, 1);
    r.req[0].body = r.req[1].body = huge;
    r.req[0].body_len = r.req[1].body_len = (size_t)32 << 20;
    go(&r);
    free(huge);
    CHECK(count(&r, HC_OK, 413) == 2 && hc_connects(c) == 2,
          "413 before the body: the connection is not reused");
    hc_free(c);
    srv_stop(&s);

    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", srv_dead_port());
    c = one_run(base, &o, url, 2, 0, &r);
    CHECK(c && count(&r, HC_REFUSED, 0) == 2 && r.res[0].os_errno == ECONNREFUSED && once_each(&r),
          "refused");
    hc_free(c);

    c = one_run(base, &o, "http://nowhere.test/inbox", 2, 0, &r);
    CHECK(c && count(&r, HC_DNS, 0) == 2 && once_each(&r), "a name not in --resolve: HC_DNS");
    hc_free(c);
    c = one_run(base, &o, "not a url", 1, 0, &r);
    CHECK(c && count(&r, HC_PROTOCOL, 0) == 1 && once_each(&r), "not a URL: HC_PROTOCOL");
    hc_free(c);

    const char *bad[] = {"nohost"};
    struct hc_opts ob = {.resolve = bad, .n_resolve = 1};
    struct flood_err err;
    CHECK(hc_new(base, &ob, &err) == NULL && strstr(err.msg, "nohost"),
          "a bad --resolve is refused: %s", err.msg);

    /* cancel: requests on a connection and queued end ECANCELED */
    srv_start(&s, SRV_NEVER, 0, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    c = hc_new(base, &o, &err);
    prep(&r, c, base, url, 5, 20000, 0);
    while (r.sent < r.n)
        send_one(&r);
    struct timeval tv = {0, 200000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    hc_cancel_all(c);
    CHECK(count(&r, HC_OTHER, 0) == 5 && r.res[4].os_errno == ECANCELED && once_each(&r) &&
              hc_in_flight(c) == 0,
          "cancel ends every request once");
    hc_free(c);
    srv_stop(&s);
    event_base_free(base);
}

/* Run base in 10 ms turns until *n reaches want or 10 s pass; 1 when it did. */
static int spin_until(struct event_base *base, const atomic_int *n, int want)
{
    for (int i = 0; i < 1000 && atomic_load(n) < want; i++) {
        struct timeval tv = {0, 10000};
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
    return atomic_load(n) >= want;
}

/* Connections opened ahead (hc_preconnect): the requests take them, a reused one the
 * server closes is retried, one that never connects is closed at its deadline. */
static void test_preconnect(void)
{
    struct event_base *base = event_base_new();
    static struct run r;
    char url[128];
    struct srv s;
    struct flood_err err;

    srv_start(&s, SRV_NORMAL, 0, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    struct hc_opts o3 = {.connections = 3};
    struct hc_client *c = hc_new(base, &o3, &err);
    CHECK(hc_preconnect(c, url, 10, now_ns() + 20000000000LL) == 3,
          "preconnect: at most --connections started");
    CHECK(spin_until(base, &s.n_conns, 3), "preconnect: the server accepted 3 before any request");
    prep(&r, c, base, url, 6, 10000, 0);
    go(&r);
    CHECK(count(&r, HC_OK, 202) == 6 && hc_connects(c) == 3,
          "preconnect: 6 answers on the 3 connections opened ahead (%llu opened)",
          (unsigned long long)hc_connects(c));
    CHECK(r.res[0].reused && r.res[1].reused && r.res[2].reused,
          "preconnect: the first requests went on open connections");
    CHECK(hc_preconnect(c, "not a url", 2, 0) == 0, "preconnect: a bad URL starts none");
    hc_free(c);
    srv_stop(&s);

    /* the server closes an opened-ahead connection at its first request: retried once on
     * a fresh one (which it closes too: reset) */
    srv_start(&s, SRV_SILENT_AFTER, 0, NULL);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    struct hc_opts o1 = {.connections = 1};
    c = hc_new(base, &o1, &err);
    CHECK(hc_preconnect(c, url, 1, now_ns() + 20000000000LL) == 1, "preconnect: one started");
    CHECK(spin_until(base, &s.n_conns, 1), "preconnect: the server accepted it");
    prep(&r, c, base, url, 1, 10000, 0);
    go(&r);
    CHECK(count(&r, HC_RESET, 0) == 1 && hc_connects(c) == 2,
          "preconnect: closed unanswered, retried on a fresh connection (%llu opened)",
          (unsigned long long)hc_connects(c));
    hc_free(c);
    srv_stop(&s);

    /* https to a listener that never accepts: the handshake never ends; past its
     * deadline the connection closes and a request opens its own (which times out) */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(lfd, 8) == 0 &&
              getsockname(lfd, (struct sockaddr *)&a, &al) == 0,
          "preconnect: a listener that never accepts");
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/inbox", ntohs(a.sin_port));
    struct hc_opts oi = {.connections = 1, .insecure = 1};
    c = hc_new(base, &oi, &err);
    CHECK(hc_preconnect(c, url, 1, now_ns() + 100000000) == 1, "preconnect: started (TLS)");
    struct timeval tv = {0, 400000}; /* the sweep closes it within 10 ms of the deadline */
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    prep(&r, c, base, url, 1, 300, 0);
    go(&r);
    CHECK(count(&r, HC_TIMEOUT, 0) == 1 && hc_connects(c) == 2,
          "preconnect: one never connected is closed at its deadline (%llu opened)",
          (unsigned long long)hc_connects(c));
    hc_free(c);
    close(lfd);

    /* refused: the requests end refused, as without */
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", srv_dead_port());
    c = hc_new(base, &o3, &err);
    hc_preconnect(c, url, 3, now_ns() + 20000000000LL);
    tv = (struct timeval){0, 50000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
    prep(&r, c, base, url, 2, 10000, 0);
    go(&r);
    CHECK(count(&r, HC_REFUSED, 0) == 2 && once_each(&r), "preconnect: refused stays refused");
    hc_free(c);
    event_base_free(base);
}

static SSL_CTX *server_ctx(const struct tls_files *tf)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, tf->cert_path) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, tf->key_path, SSL_FILETYPE_PEM) != 1)
        return NULL;
    return ctx;
}

static void test_tls(void)
{
    char dir[] = "/tmp/test_hclient.XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "tls: a temporary folder");
        return;
    }
    char state[64];
    snprintf(state, sizeof(state), "%s/state", dir);
    struct tls_files tf;
    struct flood_err err;
    const char *hosts[] = {"localhost"};
    if (tls_ensure(state, hosts, 1, &tf, &err)) {
        CHECK(0, "tls: certificate made (%s)", err.msg);
        return;
    }
    SSL_CTX *sctx = server_ctx(&tf);
    CHECK(sctx != NULL, "tls: server context");
    struct event_base *base = event_base_new();
    static struct run r;
    char url[128], res[128];
    struct srv s;

    /* a new connection per request: every one after the first resumes */
    srv_start(&s, SRV_CLOSE_AFTER, 1, sctx);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/inbox", s.port);
    struct hc_opts o = {.connections = 2, .insecure = 1};
    struct hc_client *c = one_run(base, &o, url, 4, 1, &r);
    CHECK(c && count(&r, HC_OK, 202) == 4 && hc_connects(c) == 4, "tls insecure: 4 answers");
    CHECK(c && hc_tls_resumed(c) == 3, "tls: 3 of 4 connections resumed (%llu)",
          c ? (unsigned long long)hc_tls_resumed(c) : 0ULL);
    hc_free(c);
    srv_stop(&s);

    /* verified against the CA, by name through --resolve, kept alive */
    srv_start(&s, SRV_NORMAL, 0, sctx);
    snprintf(url, sizeof(url), "https://localhost:%u/inbox", s.port);
    snprintf(res, sizeof(res), "localhost:%u:127.0.0.1", s.port);
    const char *resv[] = {res};
    struct hc_opts ov = {.connections = 1, .cacert = tf.ca_path, .resolve = resv, .n_resolve = 1};
    c = one_run(base, &ov, url, 5, 1, &r);
    CHECK(c && count(&r, HC_OK, 202) == 5 && hc_connects(c) == 1,
          "tls verified by name: 5 answers on one connection");
    char host[64];
    snprintf(host, sizeof(host), "localhost:%u", s.port);
    CHECK_STR(s.last_host, host, "tls: Host names the host");
    hc_free(c);

    /* the same server, a client that does not trust its CA */
    struct hc_opts ou = {.connections = 1, .resolve = resv, .n_resolve = 1};
    c = one_run(base, &ou, url, 2, 1, &r);
    CHECK(c && count(&r, HC_TLS, 0) == 2, "tls: an untrusted certificate is HC_TLS");
    hc_free(c);
    srv_stop(&s);

    /* https to a server that is not TLS */
    srv_start(&s, SRV_HELLO, 0, NULL);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/inbox", s.port);
    c = one_run(base, &o, url, 1, 1, &r);
    CHECK(c && count(&r, HC_TLS, 0) == 1, "tls: a plain server is HC_TLS");
    hc_free(c);
    srv_stop(&s);

    event_base_free(base);
    SSL_CTX_free(sctx);
    tls_files_free(&tf);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("# could not remove %s\n", dir);
}

/* Each answer's arrival time, where the kernel stamped it, lies between its send and its
 * done, and the last one is stamped. Linux turns receive stamps on from a work queue when
 * the first socket of the host asks for them (net_enable_timestamp, net/core/dev.c): the
 * packets of the next moments may carry none, and answered_ns is then 0. */
static int arrivals_in_order(const struct run *r, int64_t t0)
{
    for (int i = 0; i < r->n; i++)
        if (r->res[i].answered_ns &&
            (r->res[i].answered_ns < t0 || r->res[i].answered_ns > r->done_at[i]))
            return 0;
    return r->n > 0 && r->res[r->n - 1].answered_ns != 0;
}

static void test_deferred(void)
{
    struct srv s;
    if (srv_start(&s, SRV_NORMAL, 0, NULL)) {
        CHECK(0, "deferred: server starts");
        return;
    }
    struct event_base *base = event_base_new();
    struct hc_opts o = {.connections = 4};
    struct flood_err err;
    struct hc_client *c = hc_new(base, &o, &err);
    char url[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    static struct run r;

    /* deferred, one at a time, nothing else polling: each answer waits for the client's
     * 10 ms sweep, so three take at least 20 ms whatever the machine */
    hc_defer_reads(c, 1);
    prep(&r, c, base, url, 3, 10000, 1);
    int64_t t0 = now_ns();
    go(&r);
    CHECK(once_each(&r) && count(&r, HC_OK, 202) == 3, "deferred: 3 of 3 end ok 202");
    CHECK(r.done_at[2] - t0 >= 20000000,
          "deferred: read at the sweeps, not when they came (%lld ms)",
          (long long)((r.done_at[2] - t0) / 1000000));
    CHECK(arrivals_in_order(&r, t0), "deferred: each arrival time lies between send and done");

    /* deferred, read by hc_poll when the caller wakes */
    prep(&r, c, base, url, 1, 10000, 0);
    t0 = now_ns();
    send_one(&r);
    for (int i = 0; i < 4000 && r.done < 1; i++) {
        struct timespec ms = {0, 500000};
        nanosleep(&ms, NULL);
        hc_poll(c);
        event_base_loop(base, EVLOOP_NONBLOCK);
    }
    CHECK(r.done == 1 && count(&r, HC_OK, 202) == 1 && arrivals_in_order(&r, t0),
          "deferred: hc_poll reads the answer, its arrival time before its done");

    /* back to reads when they come: still timed by their arrival */
    hc_defer_reads(c, 0);
    prep(&r, c, base, url, 3, 10000, 1);
    t0 = now_ns();
    go(&r);
    CHECK(once_each(&r) && count(&r, HC_OK, 202) == 3 && arrivals_in_order(&r, t0),
          "not deferred: 3 of 3 end ok 202, arrival times in order");
    hc_free(c);
    event_base_free(base);
    srv_stop(&s);

    /* deferred, every answer closing its connection: connections closed inside a poll
     * (their events may follow in the same batch) and new ones opened for the queue */
    if (srv_start(&s, SRV_CLOSE_AFTER, 1, NULL)) {
        CHECK(0, "deferred: server starts");
        return;
    }
    base = event_base_new();
    c = hc_new(base, &o, &err);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/inbox", s.port);
    hc_defer_reads(c, 1);
    prep(&r, c, base, url, 12, 10000, 0);
    t0 = now_ns();
    go(&r);
    CHECK(once_each(&r) && count(&r, HC_OK, 202) == 12 && hc_connects(c) == 12,
          "deferred, Connection: close each: 12 of 12 end ok 202 on 12 connections (%llu)",
          (unsigned long long)hc_connects(c));
    hc_free(c);
    event_base_free(base);
    srv_stop(&s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_parser();
    test_plain();
    test_misc();
    test_preconnect();
    test_deferred();
    test_tls();
    return check_done();
}

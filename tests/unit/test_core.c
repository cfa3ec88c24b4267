/* tests/unit/test_core.c: the helpers of flood/core/ every room shares: the clocks, the hash,
 * HTML escaping, listening addresses, JSON paths, the bounded fetch and unnamed files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/addr.h"
#include "flood/core/clock.h"
#include "flood/core/fsutil.h"
#include "flood/core/hash.h"
#include "flood/core/html.h"
#include "flood/core/http.h"
#include "flood/core/jpath.h"
#include "sign/sign.h"
#include "tests/unit/core_server.h"
#include "tests/check.h"

/* ---- clock ----------------------------------------------------------------------------- */

static void test_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t before = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    int64_t ns = clock_mono_ns();
    uint64_t us = clock_mono_us();
    int64_t ms = clock_mono_ms();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t after = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    CHECK(ns >= before && ns <= after, "clock_mono_ns lies between two CLOCK_MONOTONIC reads");
    CHECK((int64_t)us >= before / 1000 && (int64_t)us <= after / 1000,
          "clock_mono_us is the same clock in microseconds");
    CHECK(ms >= before / 1000000 && ms <= after / 1000000,
          "clock_mono_ms is the same clock in milliseconds");
    CHECK(clock_mono_ns() >= ns, "the monotonic clock does not go back");

    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wbefore = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    int64_t wns = clock_wall_ns();
    int64_t wus = clock_wall_us();
    double ws = clock_wall_s();
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wafter = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    CHECK(wns >= wbefore && wns <= wafter, "clock_wall_ns is CLOCK_REALTIME");
    CHECK(wus >= wbefore / 1000 && wus <= wafter / 1000, "clock_wall_us is CLOCK_REALTIME in us");
    CHECK(ws >= (double)wbefore / 1e9 - 1e-6 && ws <= (double)wafter / 1e9 + 1e-6,
          "clock_wall_s is CLOCK_REALTIME in seconds");
    CHECK(wns > 1600000000LL * 1000000000LL, "the wall clock is a date, not an uptime");

    struct timespec d = clock_mono_after(1500);
    int64_t dn = (int64_t)d.tv_sec * 1000000000 + d.tv_nsec;
    int64_t now = clock_mono_ns();
    CHECK(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L, "clock_mono_after is normalised");
    CHECK(dn > now + 1400000000LL && dn <= now + 1500000000LL,
          "clock_mono_after(1500) is 1.5 s ahead");
    struct timespec z = clock_mono_after(-5);
    int64_t zn = (int64_t)z.tv_sec * 1000000000 + z.tv_nsec;
    CHECK(zn <= clock_mono_ns() && zn >= now, "a negative delay is now, not the past");
    int normal = 1;
    for (int i = 0; i < 50; i++) { /* a carry into tv_sec whatever the current nanoseconds */
        struct timespec c = clock_mono_after(999);
        normal &= c.tv_nsec >= 0 && c.tv_nsec < 1000000000L;
    }
    CHECK(normal, "clock_mono_after(999) carries into seconds");
    struct timespec w = clock_wall_after_us(250000);
    int64_t wn = (int64_t)w.tv_sec * 1000000000 + w.tv_nsec;
    int64_t wnow = clock_wall_ns();
    CHECK(w.tv_nsec >= 0 && w.tv_nsec < 1000000000L && wn > wnow + 200000000LL &&
              wn <= wnow + 250000000LL,
          "clock_wall_after_us(250000) is a normalised quarter second ahead");
}

/* ---- hash ------------------------------------------------------------------------------ */

static void test_hash(void)
{
    /* expected values: the FNV reference code's test vectors (fnv64a of "", "a", "foobar";
     * draft-eastlake-fnv, and Python's own FNV-1a of the last two, checked apart) */
    CHECK(hash_fnv1a_str("") == 0xcbf29ce484222325ULL, "FNV-1a of \"\" is the offset basis");
    CHECK(hash_fnv1a_str("a") == 0xaf63dc4c8601ec8cULL, "FNV-1a of \"a\"");
    CHECK(hash_fnv1a_str("foobar") == 0x85944171f73967e8ULL, "FNV-1a of \"foobar\"");
    CHECK(hash_fnv1a("foobar", 6) == hash_fnv1a_str("foobar"), "the byte and string forms agree");
    CHECK(hash_fnv1a("foobar", 3) == hash_fnv1a_str("foo"), "only n bytes are hashed");
    CHECK(hash_fnv1a("a\0b", 3) != hash_fnv1a("a\0c", 3), "bytes past a NUL count");
    CHECK(hash_fnv1a_str("ab") != hash_fnv1a_str("ba"), "order counts");
    CHECK(hash_fnv1a("\xff", 1) == ((0xcbf29ce484222325ULL ^ 0xffULL) * 0x100000001b3ULL),
          "a high byte is taken unsigned");
}

/* ---- html ------------------------------------------------------------------------------ */

/* What fn writes for s, as a new string. */
static char *escaped(void (*fn)(FILE *, const char *), const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, s);
    fclose(f);
    return buf;
}

static void test_html(void)
{
    char *e = escaped(html_escape, "<a href=\"x\">Tom & Jerry's</a>");
    CHECK_STR(e, "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;",
              "html_escape: & < > \" ' as entities");
    free(e);
    e = escaped(html_escape, "plain text, caf\xc3\xa9\tand a tab\n");
    CHECK_STR(e, "plain text, caf\xc3\xa9\tand a tab\n", "html_escape: other bytes as they are");
    free(e);
    e = escaped(html_escape, NULL);
    CHECK_STR(e, "", "html_escape: NULL writes nothing");
    free(e);
    e = escaped(html_escape, "&amp;");
    CHECK_STR(e, "&amp;amp;", "html_escape: an entity is escaped again, not trusted");
    free(e);

    e = escaped(html_escape_xml, "a<b>\t\n\r\x01\x1f'\"&");
    CHECK_STR(e, "a&lt;b&gt;&#9;&#10;&#13;??&#39;&quot;&amp;",
              "html_escape_xml: tab, LF, CR as references, other C0 controls as '?'");
    free(e);
    e = escaped(html_escape_xml, "x\xef\xbf\xbey\xef\xbf\xbfz\xef\xbf\xbd");
    CHECK_STR(e, "x?y?z\xef\xbf\xbd", "html_escape_xml: U+FFFE and U+FFFF as '?', U+FFFD kept");
    free(e);
    e = escaped(html_escape_xml, "end\xef\xbf");
    CHECK_STR(e, "end\xef\xbf",
              "html_escape_xml: a truncated sequence at the end is not read past");
    free(e);
    e = escaped(html_escape, "a\x01"
                             "b");
    CHECK_STR(e,
              "a\x01"
              "b",
              "html_escape: a control byte is not the XML form's business");
    free(e);
}

/* ---- listening addresses ----------------------------------------------------------------- */

static void test_addr(void)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    struct flood_err err = {0};
    CHECK(addr_parse("127.0.0.1:8080", "t", 0, &ss, &len, &err) == 0 && ss.ss_family == AF_INET &&
              len == sizeof(struct sockaddr_in) &&
              ntohs(((struct sockaddr_in *)&ss)->sin_port) == 8080,
          "addr_parse: IPv4 and a port");
    CHECK(addr_parse("[::1]:0", "t", 0, &ss, &len, &err) == 0 && ss.ss_family == AF_INET6 &&
              len == sizeof(struct sockaddr_in6) && ((struct sockaddr_in6 *)&ss)->sin6_port == 0,
          "addr_parse: a bracketed IPv6 address, port 0");
    CHECK(addr_parse(":9000", "t", ADDR_HOST_OPTIONAL, &ss, &len, &err) == 0 &&
              ss.ss_family == AF_INET &&
              ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY),
          "addr_parse: ':PORT' with the host optional is 0.0.0.0");
    CHECK(
        addr_parse(":9000", "dashboard", 0, &ss, &len, &err) == -1 && err.code == FLOOD_EINVAL &&
            !strcmp(err.msg, "dashboard: bad address ':9000' (want ADDR:PORT, a numeric address)"),
        "addr_parse: ':PORT' refused where the host is required, named (%s)", err.msg);
    static const char *const bad[] = {
        "localhost:80",  "127.0.0.1",    "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
        "127.0.0.1:+80", "127.0.0.1:8o", "1.2.3:80",   "[::1:80",         "",
        "127.0.0.1: 80"};
    int refused = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        refused += addr_parse(bad[i], "metrics", ADDR_HOST_OPTIONAL, &ss, &len, &err) == -1;
    CHECK(refused == (int)(sizeof(bad) / sizeof(bad[0])),
          "addr_parse: a name, no port, a port out of range or not digits, a broken address: "
          "all refused (%d of %zu)",
          refused, sizeof(bad) / sizeof(bad[0]));
    CHECK(addr_parse(NULL, "metrics", 0, NULL, NULL, &err) == -1 &&
              strstr(err.msg, "metrics: bad address ''"),
          "addr_parse: NULL refused");
    CHECK(addr_parse("10.0.0.1:1", "t", 0, NULL, NULL, &err) == 0, "addr_parse: only a check");
    CHECK(addr_parse_listen("0.0.0.0:0", NULL, NULL, &err) == 0 &&
              addr_parse_listen("x:1", NULL, NULL, &err) == -1 &&
              !strncmp(err.msg, "--listen: ", 10),
          "addr_parse_listen: --listen's form and name");

    /* a bound socket read back */
    char text[ADDR_TEXT_MAX];
    int port = -1;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (addr_numeric("127.0.0.1", 0, &ss, &len) == 0 && fd >= 0 &&
        bind(fd, (struct sockaddr *)&ss, len) == 0 && listen(fd, 1) == 0) {
        char want[ADDR_TEXT_MAX];
        int rc = addr_bound(fd, text, &port);
        snprintf(want, sizeof(want), "127.0.0.1:%d", port);
        CHECK(rc == 0 && port > 0 && !strcmp(text, want), "addr_bound: the kernel's port (%s)",
              text);
    } else {
        CHECK(0, "addr_bound: a socket on 127.0.0.1");
    }
    if (fd >= 0)
        close(fd);
    fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd >= 0 && addr_numeric("::1", 0, &ss, &len) == 0 &&
        bind(fd, (struct sockaddr *)&ss, len) == 0) {
        int rc = addr_bound(fd, text, NULL);
        CHECK(rc == 0 && !strncmp(text, "[::1]:", 6) && atoi(text + 6) > 0,
              "addr_bound: IPv6 in brackets (%s)", text);
    } else {
        printf("# no IPv6 loopback here: its addr_bound case skipped\n");
    }
    if (fd >= 0)
        close(fd);
    CHECK(addr_bound(-1, text, &port) == -1, "addr_bound: no socket, -1");
}

/* ---- JSON paths -------------------------------------------------------------------------- */

static void test_jpath(void)
{
    json_error_t je;
    json_t *doc = json_loads("{\"totals\": {\"latency_ms\": {\"p99\": 12, \"p99.9\": 40},"
                             " \"n\": 3}, \"a.b\": {\"c\": 1}, \"a\": {\"b\": {\"c\": 2}},"
                             " \"list\": [1, 2], \"s\": \"x\"}",
                             0, &je);
    CHECK(doc != NULL, "jpath: the test document parses (%s)", doc ? "ok" : je.text);
    if (!doc)
        return;
    CHECK(json_integer_value(jpath_get(doc, "totals.latency_ms.p99")) == 12, "a three-key path");
    CHECK(json_integer_value(jpath_get(doc, "totals.latency_ms.p99.9")) == 40,
          "a last key holding a dot (p99.9)");
    CHECK(json_integer_value(jpath_get(doc, "a.b.c")) == 1,
          "the longest key first: \"a.b\" before \"a\" then \"b\"");
    CHECK(jpath_get(doc, "") == doc, "the empty path is the document");
    CHECK(json_integer_value(jpath_get(doc, "totals.n")) == 3, "a two-key path");
    CHECK(jpath_get(doc, "totals.nope") == NULL && jpath_get(doc, "nope") == NULL &&
              jpath_get(doc, "totals.latency_ms.p50") == NULL,
          "a missing key: NULL");
    CHECK(jpath_get(doc, "list.0") == NULL && jpath_get(doc, "s.x") == NULL,
          "through an array or a string: NULL");
    CHECK(jpath_get(NULL, "a") == NULL && jpath_get(doc, NULL) == NULL, "NULL document or path");
    CHECK(jpath_get(doc, ".totals") == NULL, "a leading dot names no key");
    json_decref(doc);
}

/* ---- the bounded fetch ----------------------------------------------------------------- */

struct fetch_env {
    struct csrv srv;
    struct sign_key *key;
    char base[64]; /* http://127.0.0.1:PORT */
};

/* A GET of base + path with options o (NULL: defaults) and signer s (NULL: unsigned). */
static int get(struct fetch_env *env, const char *path, const struct http_opts *o,
               const struct http_signer *s, struct http_resp *r, struct flood_err *err)
{
    char url[128];
    snprintf(url, sizeof(url), "%s%s", env->base, path);
    struct http_req req = {
        .method = HTTP_GET, .url = url, .accept = "application/activity+json", .signer = s, .o = o};
    return http_fetch(&req, r, err);
}

static int last_head_has(struct fetch_env *env, const char *needle)
{
    pthread_mutex_lock(&env->srv.mu);
    int has = strcasestr(env->srv.head, needle) != NULL;
    pthread_mutex_unlock(&env->srv.mu);
    return has;
}

/* Refuse every redirect, saying so. */
static int refuse_all(void *ctx, const char *url, const char *location, struct flood_err *err)
{
    (void)url;
    ++*(int *)ctx;
    flood_err_set(err, FLOOD_EINVAL, "test: no redirect to '%s'", location);
    return 0;
}

static int allow_all(void *ctx, const char *url, const char *location, struct flood_err *err)
{
    (void)url;
    (void)location;
    (void)err;
    ++*(int *)ctx;
    return 1;
}

static void test_fetch_get(struct fetch_env *env)
{
    struct http_resp r;
    struct flood_err err = {0};
    int rc = get(env, "/ok", NULL, NULL, &r, &err);
    CHECK(rc == 0 && r.status == 200 && r.len == 8 && !strcmp(r.body, "{\"ok\":1}"),
          "GET: 200 and its body (%s)", rc ? err.msg : "ok");
    CHECK(rc == 0 && http_is_json_type(r.content_type) && !r.location && !r.retry_after,
          "GET: the Content-Type kept, no Location, no Retry-After");
    CHECK(last_head_has(env, "\r\nAccept: application/activity+json\r\n") &&
              last_head_has(env, "\r\nUser-Agent: flood/") && !last_head_has(env, "signature:"),
          "GET: Accept and User-Agent sent, unsigned");
    http_resp_free(&r);

    struct http_signer s = {.dialect = SIGN_CAVAGE, .key = env->key, .key_id = "http://a/k#main"};
    rc = get(env, "/ok?x=1", NULL, &s, &r, &err);
    CHECK(rc == 0 && r.status == 200 &&
              last_head_has(env, "\r\nSignature: keyId=\"http://a/k#main\"") &&
              last_head_has(env, "headers=\"(request-target) host date\"") &&
              last_head_has(env, "\r\nDate: ") && last_head_has(env, "GET /ok?x=1 HTTP/1.1"),
          "GET signed (cavage): Signature with the keyId, over (request-target) host date");
    http_resp_free(&r);
    struct http_signer s9 = {.dialect = SIGN_RFC9421, .key = env->key, .key_id = "k9"};
    rc = get(env, "/ok", NULL, &s9, &r, &err);
    CHECK(rc == 0 && last_head_has(env, "\r\nSignature-Input: ") &&
              last_head_has(env, "keyid=\"k9\""),
          "GET signed (RFC 9421): Signature-Input with the keyid");
    http_resp_free(&r);
    struct http_signer none = {.dialect = HTTP_SIGN_NONE};
    rc = get(env, "/ok", NULL, &none, &r, &err);
    CHECK(rc == 0 && !last_head_has(env, "signature"), "HTTP_SIGN_NONE: unsigned");
    http_resp_free(&r);

    rc = get(env, "/busy", NULL, NULL, &r, &err);
    CHECK(rc == 0 && r.status == 503 && r.retry_after && !strcmp(r.retry_after, "7"),
          "a 503 is an answer; its Retry-After trimmed: '%s'",
          r.retry_after ? r.retry_after : "(none)");
    http_resp_free(&r);
}

static void test_fetch_limits(struct fetch_env *env)
{
    struct http_resp r;
    struct flood_err err = {0};
    struct http_opts o = {.max_body = 1000};
    int rc = get(env, "/big", &o, NULL, &r, &err);
    CHECK(rc == -1 && err.code == FLOOD_ELIMIT && strstr(err.msg, "body over 1000 bytes") &&
              !r.body,
          "a body over the limit: -1, FLOOD_ELIMIT, no answer (%s)", err.msg);
    o.max_body = 5000;
    rc = get(env, "/big", &o, NULL, &r, &err);
    CHECK(rc == 0 && r.len == 5000, "a body of exactly the limit is taken whole");
    http_resp_free(&r);
    char url[128];
    snprintf(url, sizeof(url), "%s/big", env->base);
    o.max_body = 10;
    struct http_req req = {.method = HTTP_GET, .url = url, .o = &o, .discard_body = 1};
    rc = http_fetch(&req, &r, &err);
    CHECK(rc == 0 && r.status == 200 && r.len == 0 && r.body && !r.body[0],
          "discard_body: the body read and dropped, no limit");
    http_resp_free(&r);

    struct http_opts quick = {.timeout_ms = 300};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = get(env, "/slow", &quick, NULL, &r, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(rc == -1 && err.code == FLOOD_ELIMIT && took < 2.5,
          "a timeout: -1, FLOOD_ELIMIT, before the late answer (%.2f s, %s)", took, err.msg);

    struct http_req bad = {.method = HTTP_GET, .url = "ftp://127.0.0.1/x", .who = "probe"};
    rc = http_fetch(&bad, &r, &err);
    CHECK(rc == -1 && err.code == FLOOD_EINVAL && !strncmp(err.msg, "probe: bad URL", 14),
          "ftp: refused, the error named by who (%s)", err.msg);
    bad.url = NULL;
    CHECK(http_fetch(&bad, &r, &err) == -1 && err.code == FLOOD_EINVAL, "no URL: refused");
    bad.url = "http://user@127.0.0.1/x";
    CHECK(http_fetch(&bad, &r, &err) == -1, "userinfo in the URL: refused");
}

static void test_fetch_redirects(struct fetch_env *env)
{
    struct http_resp r;
    struct flood_err err = {0};
    struct http_signer s = {.dialect = SIGN_CAVAGE, .key = env->key, .key_id = "k"};
    struct http_opts o = {.max_redirects = 1};
    int before = atomic_load(&env->srv.signed_requests);
    int rc = get(env, "/redir", &o, &s, &r, &err);
    CHECK(rc == 0 && r.status == 200 && r.url && strstr(r.url, "/ok") && !r.location,
          "a redirect on the same origin followed: 200 from /ok (%s)", rc ? err.msg : r.url);
    CHECK(atomic_load(&env->srv.signed_requests) - before == 2, "each hop signed anew");
    http_resp_free(&r);

    o.max_redirects = 0;
    rc = get(env, "/redir", &o, NULL, &r, &err);
    CHECK(rc == 0 && r.status == 302 && r.location && strstr(r.location, "/ok"),
          "max_redirects 0: the 302 is the answer, its Location kept");
    http_resp_free(&r);
    rc = get(env, "/redir", NULL, NULL, &r, &err);
    CHECK(rc == 0 && r.status == 302, "no options: no redirect followed");
    http_resp_free(&r);

    o.max_redirects = 2;
    int n0 = atomic_load(&env->srv.requests);
    rc = get(env, "/loop", &o, NULL, &r, &err);
    CHECK(rc == 0 && r.status == 302 && r.location && atomic_load(&env->srv.requests) - n0 == 3,
          "a loop: followed twice, then the third 302 answers with its Location");
    http_resp_free(&r);

    rc = get(env, "/off", &o, NULL, &r, &err);
    CHECK(rc == -1 && strstr(err.msg, "redirect off the host"),
          "a redirect to another host: refused (%s)", err.msg);

    char url[128];
    snprintf(url, sizeof(url), "%s/redir", env->base);
    int calls = 0;
    struct http_req req = {
        .method = HTTP_GET, .url = url, .o = &o, .redirect_ok = refuse_all, .redirect_ctx = &calls};
    rc = http_fetch(&req, &r, &err);
    CHECK(rc == -1 && calls == 1 && strstr(err.msg, "test: no redirect"),
          "the caller's rule refuses a same-origin redirect, its error kept");
    snprintf(url, sizeof(url), "%s/off", env->base);
    calls = 0;
    req.redirect_ok = allow_all;
    rc = http_fetch(&req, &r, &err);
    /* localhost may resolve to ::1 first, where nothing listens: either way the rule let it */
    CHECK(calls == 1 && (rc == -1 || r.status == 200),
          "the caller's rule lets a redirect off the host through");
    if (rc == 0)
        http_resp_free(&r);
    struct http_req post = {
        .method = HTTP_POST, .url = url, .o = &o, .redirect_ok = allow_all, .redirect_ctx = &calls};
    calls = 0;
    rc = http_fetch(&post, &r, &err);
    CHECK(rc == 0 && r.status == 301 && calls == 0, "a POST follows no redirect");
    http_resp_free(&r);
}

static void test_fetch_post(struct fetch_env *env)
{
    char url[128];
    snprintf(url, sizeof(url), "%s/inbox", env->base);
    static const char body[] = "{\"type\":\"Follow\"}";
    struct http_signer s = {.dialect = SIGN_CAVAGE, .key = env->key, .key_id = "k"};
    const char *extra[] = {"X-Test: 1"};
    struct http_req req = {.method = HTTP_POST,
                           .url = url,
                           .accept = "application/activity+json",
                           .content_type = "application/activity+json",
                           .body = body,
                           .body_len = strlen(body),
                           .signer = &s,
                           .headers = extra,
                           .n_headers = 1};
    struct http_resp r;
    struct flood_err err = {0};
    int rc = http_fetch(&req, &r, &err);
    CHECK(rc == 0 && r.status == 202, "POST: 202 (%s)", rc ? err.msg : "ok");
    pthread_mutex_lock(&env->srv.mu);
    int same = env->srv.body_len == strlen(body) && !strcmp(env->srv.body, body);
    pthread_mutex_unlock(&env->srv.mu);
    CHECK(same, "POST: the body arrives whole");
    CHECK(last_head_has(env, "\r\nDigest: SHA-256=") &&
              last_head_has(env, "date digest content-type\"") &&
              last_head_has(env, "\r\nContent-Type: application/activity+json\r\n") &&
              last_head_has(env, "\r\nX-Test: 1\r\n") && !last_head_has(env, "\r\nExpect:"),
          "POST: Digest and Content-Type signed, the extra header sent, no Expect");
    http_resp_free(&r);

    /* the same through a caller's multi handle, as the delivery queue runs it */
    CURLM *m = curl_multi_init();
    int user = 42;
    snprintf(url, sizeof(url), "%s/busy", env->base);
    struct http_call *c = http_call_new(&req, &user, &err);
    CHECK(c && http_call_user(c) == &user && http_call_of(http_call_easy(c)) == c,
          "http_call: built, its user and easy handle found back");
    int still = 1, got = 0;
    if (c && curl_multi_add_handle(m, http_call_easy(c)) == CURLM_OK) {
        for (int i = 0; i < 500 && !got; i++) {
            curl_multi_perform(m, &still);
            CURLMsg *msg;
            int left;
            while ((msg = curl_multi_info_read(m, &left)))
                if (msg->msg == CURLMSG_DONE) {
                    struct http_call *done = http_call_of(msg->easy_handle);
                    curl_multi_remove_handle(m, msg->easy_handle);
                    rc = http_call_done(done, msg->data.result, &r, &err);
                    got = 1;
                }
            if (!got)
                curl_multi_poll(m, NULL, 0, 20, NULL);
        }
    }
    CHECK(got && rc == 0 && r.status == 503 && r.retry_after && !strcmp(r.retry_after, "7"),
          "http_call on a multi handle: the 503 and its Retry-After");
    if (got && rc == 0)
        http_resp_free(&r);
    http_call_free(c);
    curl_multi_cleanup(m);
}

static void test_fetch_connect(struct fetch_env *env)
{
    struct http_resp r;
    struct flood_err err = {0};
    char url[128];
    snprintf(url, sizeof(url), "%s/inbox", env->base);
    int n0 = atomic_load(&env->srv.requests);
    struct http_req req = {.method = HTTP_CONNECT_ONLY, .url = url};
    int rc = http_fetch(&req, &r, &err);
    CHECK(rc == 0 && r.status == 0, "connect only: 0 (%s)", rc ? err.msg : "ok");
    http_resp_free(&r);
    usleep(100000);
    CHECK(atomic_load(&env->srv.requests) == n0, "connect only: no request sent");

    /* a port nothing listens on: bound, never listened */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &al) == 0) {
        snprintf(url, sizeof(url), "http://127.0.0.1:%u/", ntohs(a.sin_port));
        req.who = "preflight";
        rc = http_fetch(&req, &r, &err);
        CHECK(rc == -1 && err.code == FLOOD_EIO && !strncmp(err.msg, "preflight: connect to '", 23),
              "connect only to a closed port: -1, named (%s)", err.msg);
    }
    if (fd >= 0)
        close(fd);

    /* --resolve and a source address */
    char entry[64];
    snprintf(entry, sizeof(entry), "flood-core-test.invalid:%u:127.0.0.1", env->srv.port);
    const char *resolve[] = {entry};
    struct http_opts o = {.resolve = resolve, .n_resolve = 1, .source = "127.0.0.3"};
    snprintf(url, sizeof(url), "http://flood-core-test.invalid:%u/ok", env->srv.port);
    struct http_req g = {.method = HTTP_GET, .url = url, .o = &o};
    rc = http_fetch(&g, &r, &err);
    pthread_mutex_lock(&env->srv.mu);
    int from3 = !strcmp(env->srv.peer, "127.0.0.3");
    pthread_mutex_unlock(&env->srv.mu);
    CHECK(rc == 0 && r.status == 200 && last_head_has(env, "\r\nHost: flood-core-test.invalid:"),
          "--resolve: the name connects to its address, Host kept (%s)", rc ? err.msg : "ok");
    CHECK(rc == 0 && from3, "source: the request leaves from 127.0.0.3");
    if (rc == 0)
        http_resp_free(&r);
    o.source = "192.0.2.1"; /* TEST-NET-1: no interface here has it */
    rc = http_fetch(&g, &r, &err);
    CHECK(rc == -1, "a source address the host lacks: -1 (%s)", err.msg);
}

static void test_fetch(void)
{
    static struct fetch_env env;
    struct flood_err err;
    if (csrv_start(&env.srv) < 0) {
        CHECK(0, "fetch: the test server starts");
        return;
    }
    env.key = sign_key_generate(SIGN_KEY_ED25519, 0, &err);
    snprintf(env.base, sizeof(env.base), "http://127.0.0.1:%u", env.srv.port);
    test_fetch_get(&env);
    test_fetch_limits(&env);
    test_fetch_redirects(&env);
    test_fetch_post(&env);
    test_fetch_connect(&env);
    sign_key_free(env.key);
    csrv_stop(&env.srv);
}

/* ---- unnamed files ----------------------------------------------------------------------- */

static void test_unnamed(void)
{
    char dir[] = "/tmp/flood-test-core-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "unnamed: a temporary folder");
        return;
    }
    int fd = fs_unnamed_file(dir, "rows");
    CHECK(fd >= 0, "unnamed: a file is made in the folder");
    CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "unnamed: closed on exec");
    DIR *dh = opendir(dir);
    int names = 0;
    for (struct dirent *e; dh && (e = readdir(dh));)
        names += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (dh)
        closedir(dh);
    CHECK(names == 0, "unnamed: the folder lists nothing (%d names)", names);

    /* 300 KB at an offset, read back whole; a read past the end is short with errno 0 */
    size_t len = 300000;
    char *w = malloc(len), *r = malloc(len + 10);
    for (size_t i = 0; i < len; i++)
        w[i] = (char)(i * 7 + 3);
    CHECK(fs_pwrite_full(fd, w, len, 4096) == len, "unnamed: 300 KB written at 4096");
    CHECK(fs_pread_full(fd, r, len, 4096) == len && !memcmp(w, r, len),
          "unnamed: and read back the same");
    errno = EINVAL;
    size_t got = fs_pread_full(fd, r, len + 10, 4096);
    CHECK(got == len && errno == 0, "unnamed: a read past the end: %zu bytes, errno 0 (%d)", got,
          errno);
    CHECK(fs_pread_full(-1, r, 10, 0) == 0 && errno == EBADF, "unnamed: a bad descriptor: EBADF");
    free(w);
    free(r);
    if (fd >= 0)
        close(fd);

    char missing[sizeof(dir) + 8];
    snprintf(missing, sizeof(missing), "%s/none", dir);
    errno = 0;
    fd = fs_unnamed_file(missing, "rows");
    CHECK(fd < 0 && errno == ENOENT, "unnamed: a missing folder: -1, ENOENT (%d, %d)", fd, errno);
    if (fd >= 0)
        close(fd);
    rmdir(dir);
}

int main(void)
{
    test_clock();
    test_hash();
    test_html();
    test_addr();
    test_jpath();
    test_fetch();
    test_unnamed();
    return check_done();
}

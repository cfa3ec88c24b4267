/* tests/unit/test_proxy_parse.c: the egress proxy's parser (flood/crowd/proxy_parse.c):
 * every request-target form, every refusal reason and every malformed-input reason, the
 * origin-form rewrite byte for byte, answer heads and chunked framing, each with its
 * negative twin. */
#include "flood/crowd/proxy_parse.h"

#include <stdlib.h>

#include "tests/check.h"

static const struct wf_crowd crowd = {20, 10, "flood%d.test", "http", 0, "0.1.0"};
#define SELF 3128

static enum proxy_parse_rc parse(const char *s, struct proxy_head *h, enum proxy_bad *bad)
{
    return proxy_parse_request(s, strlen(s), h, bad);
}

/* The reason a whole head is refused, or NONE with the instance in *inst. */
static enum proxy_refuse route(const char *s, int *inst)
{
    struct proxy_head h;
    enum proxy_bad bad;
    enum proxy_refuse why = PROXY_REFUSE__COUNT;
    *inst = -1;
    if (parse(s, &h, &bad) == PROXY_PARSE_OK)
        *inst = proxy_route(&h, &crowd, SELF, &why);
    return why;
}

static enum proxy_bad bad_of(const char *s)
{
    struct proxy_head h;
    enum proxy_bad bad = PROXY_BAD_NONE;
    return parse(s, &h, &bad) == PROXY_PARSE_BAD ? bad : PROXY_BAD__COUNT;
}

static void test_forms(void)
{
    struct proxy_head h;
    enum proxy_bad bad;
    const char *a =
        "GET http://flood7.test:8080/users/user3?x=1 HTTP/1.1\r\nAccept: */*\r\n\r\nNEXT";
    CHECK(parse(a, &h, &bad) == PROXY_PARSE_OK, "absolute-form parses");
    CHECK(h.form == PROXY_FORM_ABSOLUTE && h.auth.port == 8080 && h.minor == 1 &&
              h.auth.kind == PROXY_HOST_NAME,
          "absolute-form: form, port 8080, HTTP/1.1, a name");
    CHECK(h.head_len == strlen(a) - 4, "head_len stops at the head's end (bytes after it left)");
    CHECK(h.path_len == 16 && !memcmp(h.path, "/users/user3?x=1", 16), "path and query kept");
    CHECK(parse("CONNECT flood3.test:443 HTTP/1.1\r\nHost: flood3.test:443\r\n\r\n", &h, &bad) ==
                  PROXY_PARSE_OK &&
              h.form == PROXY_FORM_AUTHORITY && h.auth.port == 443 && h.auth.host_len == 11,
          "CONNECT host:port is authority-form");
    CHECK(parse("GET /users/user1 HTTP/1.1\r\nHost: flood1.test\r\n\r\n", &h, &bad) ==
                  PROXY_PARSE_OK &&
              h.form == PROXY_FORM_ORIGIN,
          "origin-form");
    CHECK(parse("OPTIONS * HTTP/1.1\r\n\r\n", &h, &bad) == PROXY_PARSE_OK &&
              h.form == PROXY_FORM_ASTERISK,
          "asterisk-form");
    CHECK(parse("GET http://flood1.test HTTP/1.1\r\n\r\n", &h, &bad) == PROXY_PARSE_OK &&
              h.path_len == 1 && h.path[0] == '/',
          "http://host with no path: path /");
    CHECK(parse("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", &h, &bad) == PROXY_PARSE_OK &&
              h.auth.kind == PROXY_HOST_IPV6 && h.auth.host_len == 3,
          "CONNECT [::1]:443: an IPv6 literal without its brackets");
    CHECK(parse("GET http://flood1.test/ HTTP/1.1\r\nHost: flo", &h, &bad) == PROXY_PARSE_MORE,
          "a head without its end: more");
    CHECK(parse("GET http://flood1.test/ HTTP/1.1\r\nHost: flood1.test\r\n\r", &h, &bad) ==
              PROXY_PARSE_MORE,
          "a head one byte short: more");
}

static void test_framing(void)
{
    struct proxy_head h;
    enum proxy_bad bad;
    CHECK(parse("POST http://flood1.test/inbox HTTP/1.1\r\nContent-Length: 5\r\n\r\n", &h, &bad) ==
                  PROXY_PARSE_OK &&
              h.body == PROXY_BODY_LENGTH && h.content_length == 5,
          "Content-Length: 5 is a body of 5");
    CHECK(parse("POST http://flood1.test/inbox HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &h, &bad) ==
                  PROXY_PARSE_OK &&
              h.body == PROXY_BODY_NONE,
          "Content-Length: 0 is no body");
    CHECK(parse("POST http://flood1.test/inbox HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &h,
                &bad) == PROXY_PARSE_OK &&
              h.body == PROXY_BODY_CHUNKED,
          "Transfer-Encoding: chunked");
    CHECK(parse("POST http://flood1.test/inbox HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: "
                "5\r\n\r\n",
                &h, &bad) == PROXY_PARSE_OK,
          "two equal Content-Lengths");
    CHECK(parse("GET http://flood1.test/ HTTP/1.0\r\n\r\n", &h, &bad) == PROXY_PARSE_OK && h.close,
          "HTTP/1.0 closes");
    CHECK(parse("GET http://flood1.test/ HTTP/1.0\r\nProxy-Connection: Keep-Alive\r\n\r\n", &h,
                &bad) == PROXY_PARSE_OK &&
              !h.close,
          "HTTP/1.0 with keep-alive stays open");
    CHECK(parse("GET http://flood1.test/ HTTP/1.1\r\nConnection: foo, close\r\n\r\n", &h, &bad) ==
                  PROXY_PARSE_OK &&
              h.close,
          "Connection: foo, close closes");
    CHECK(parse("GET http://flood1.test/ HTTP/1.1\r\n\r\n", &h, &bad) == PROXY_PARSE_OK && !h.close,
          "HTTP/1.1 stays open");
}

static void test_bad(void)
{
    CHECK(bad_of("GET  http://flood1.test/ HTTP/1.1\r\n\r\n") == PROXY_BAD_LINE,
          "two spaces: line");
    CHECK(bad_of("GET http://flood1.test/ http/1.1\r\n\r\n") == PROXY_BAD_LINE,
          "lower-case version: line");
    CHECK(bad_of("GET http://flood1.test/\r\n\r\n") == PROXY_BAD_LINE, "no version: line");
    CHECK(bad_of("G(T http://flood1.test/ HTTP/1.1\r\n\r\n") == PROXY_BAD_LINE,
          "a method that is no token: line");
    CHECK(bad_of("GET http://flood1.test/ HTTP/1.1\n\n") == PROXY_BAD_LINE,
          "bare LF line ends: line (at the first LF, without waiting)");
    CHECK(bad_of("GET http://flood1.test/#frag HTTP/1.1\r\n\r\n") == PROXY_BAD_LINE,
          "a fragment: line");
    CHECK(bad_of("GET flood1.test/ HTTP/1.1\r\n\r\n") == PROXY_BAD_LINE,
          "neither origin- nor absolute-form: line");
    CHECK(bad_of("GET http://flood1.test/ HTTP/2.0\r\n\r\n") == PROXY_BAD_VERSION,
          "HTTP/2.0: version");
    CHECK(bad_of("GET http://flood1.test/ HTTP/1.2\r\n\r\n") == PROXY_BAD_VERSION,
          "HTTP/1.2: version");
    CHECK(bad_of("GET http://flood1.test/ HTTP/1.1\r\nNoColon\r\n\r\n") == PROXY_BAD_HEADER,
          "a header with no colon: header");
    CHECK(bad_of("GET http://flood1.test/ HTTP/1.1\r\nHost : x\r\n\r\n") == PROXY_BAD_HEADER,
          "a space before the colon: header");
    CHECK(bad_of("GET http://flood1.test/ HTTP/1.1\r\nA: b\r\n c\r\n\r\n") == PROXY_BAD_HEADER,
          "obsolete line folding: header");
    CHECK(bad_of("GET http://flood1.test/ HTTP/1.1\r\nA: b\x01\r\n\r\n") == PROXY_BAD_HEADER,
          "a control byte in a value: header");
    CHECK(bad_of("GET http://flood1.test/ HTTP/1.1\r\nA: b\nC: d\r\n\r\n") == PROXY_BAD_HEADER,
          "a bare LF inside the headers: header");
    CHECK(bad_of("CONNECT flood1.test HTTP/1.1\r\n\r\n") == PROXY_BAD_AUTHORITY,
          "CONNECT without a port: authority");
    CHECK(bad_of("CONNECT flood1.test:0 HTTP/1.1\r\n\r\n") == PROXY_BAD_AUTHORITY,
          "port 0: authority");
    CHECK(bad_of("CONNECT flood1.test:65536 HTTP/1.1\r\n\r\n") == PROXY_BAD_AUTHORITY,
          "port 65536: authority");
    CHECK(bad_of("GET http://u:p@flood1.test/ HTTP/1.1\r\n\r\n") == PROXY_BAD_AUTHORITY,
          "userinfo in the URL: authority");
    CHECK(bad_of("GET http://flo od.test/ HTTP/1.1\r\n\r\n") == PROXY_BAD_LINE,
          "a space in the host splits the line: line");
    CHECK(bad_of("GET http://[zz]/ HTTP/1.1\r\n\r\n") == PROXY_BAD_AUTHORITY,
          "a bracketed literal of no hex: authority");
    CHECK(bad_of("POST http://flood1.test/ HTTP/1.1\r\nContent-Length: 5x\r\n\r\n") ==
              PROXY_BAD_FRAMING,
          "Content-Length 5x: framing");
    CHECK(bad_of("POST http://flood1.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: "
                 "6\r\n\r\n") == PROXY_BAD_FRAMING,
          "two different Content-Lengths: framing");
    CHECK(bad_of("POST http://flood1.test/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n") == PROXY_BAD_FRAMING,
          "Content-Length and chunked: framing");
    CHECK(bad_of("POST http://flood1.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, "
                 "chunked\r\n\r\n") == PROXY_BAD_FRAMING,
          "a coding other than chunked: framing");
    /* 101 headers, then a head of 32 KiB with no end */
    char *big = malloc(PROXY_HEAD_MAX + 64);
    size_t n = (size_t)sprintf(big, "GET http://flood1.test/ HTTP/1.1\r\n");
    for (int i = 0; i <= PROXY_HEADERS_MAX; i++)
        n += (size_t)sprintf(big + n, "X-%d: y\r\n", i);
    n += (size_t)sprintf(big + n, "\r\n");
    CHECK(bad_of(big) == PROXY_BAD_TOO_LARGE, "%d header lines: too large", PROXY_HEADERS_MAX + 1);
    n = (size_t)sprintf(big, "GET http://flood1.test/ HTTP/1.1\r\nX: ");
    memset(big + n, 'a', PROXY_HEAD_MAX - n);
    big[PROXY_HEAD_MAX] = '\0';
    CHECK(bad_of(big) == PROXY_BAD_TOO_LARGE, "a head reaching %d bytes with no end: too large",
          PROXY_HEAD_MAX);
    big[PROXY_HEAD_MAX - 1] = '\0';
    struct proxy_head h;
    enum proxy_bad bad;
    CHECK(parse(big, &h, &bad) == PROXY_PARSE_MORE, "... one byte less: more");
    free(big);
    int all = 1;
    for (int b = 1; b < PROXY_BAD__COUNT; b++)
        all &= proxy_bad_key(b)[0] && proxy_bad_name(b)[0] && proxy_bad_status(b) >= 400;
    CHECK(all, "every malformed reason has a key, a name and a 4xx/5xx status");
    CHECK(proxy_bad_status(PROXY_BAD_TOO_LARGE) == 431 &&
              proxy_bad_status(PROXY_BAD_VERSION) == 505,
          "too large is 431, version 505");
}

static void test_route(void)
{
    int inst;
    CHECK(route("GET http://flood7.test/users/user3 HTTP/1.1\r\n\r\n", &inst) ==
                  PROXY_REFUSE_NONE &&
              inst == 7,
          "a crowd name: instance 7");
    CHECK(route("CONNECT FLOOD20.test.:8443 HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_NONE &&
              inst == 20,
          "CONNECT to any port, any case, a trailing dot: instance 20");
    CHECK(route("GET http://flood21.test/ HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_NOT_CROWD &&
              inst == 0,
          "one past the crowd: not_crowd");
    CHECK(route("GET http://flood07.test/ HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_NOT_CROWD,
          "a leading zero: not_crowd");
    CHECK(route("CONNECT canary.example:443 HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_NOT_CROWD,
          "the canary: not_crowd");
    CHECK(route("GET http://127.0.0.1:8080/ HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_ADDRESS,
          "an IPv4 literal: address");
    CHECK(route("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_ADDRESS,
          "an IPv6 literal: address");
    CHECK(route("GET http://127.0.0.1:3128/ HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_SELF,
          "an address at the proxy's own port: self");
    CHECK(route("CONNECT localhost:3128 HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_SELF,
          "localhost at the proxy's own port: self");
    CHECK(route("CONNECT localhost:3129 HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_NOT_CROWD,
          "localhost elsewhere: not_crowd");
    CHECK(route("GET /users/user1 HTTP/1.1\r\nHost: flood1.test\r\n\r\n", &inst) ==
              PROXY_REFUSE_ORIGIN,
          "origin-form (a request to the proxy itself): origin");
    CHECK(route("OPTIONS * HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_ORIGIN, "asterisk: origin");
    CHECK(route("GET https://flood1.test/ HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_SCHEME,
          "https:// in absolute-form: scheme");
    CHECK(route("GET ftp://flood1.test/ HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_SCHEME,
          "ftp://: scheme");
    CHECK(route("GET HTTP://flood1.test/ HTTP/1.1\r\n\r\n", &inst) == PROXY_REFUSE_NONE,
          "HTTP:// (the scheme's case does not matter)");
    int all = 1;
    for (int r = 1; r < PROXY_REFUSE__COUNT; r++)
        all &= proxy_refuse_key(r)[0] && proxy_refuse_name(r)[0];
    CHECK(all, "every refusal reason has a key and a name");
}

static void test_rewrite(void)
{
    const char *in = "GET http://flood7.test/users/user3 HTTP/1.1\r\nHost: other.example\r\n"
                     "Proxy-Connection: keep-alive\r\nAccept: application/activity+json\r\n"
                     "Proxy-Authorization: Basic eDp5\r\n\r\n";
    struct proxy_head h;
    enum proxy_bad bad;
    char out[1024];
    CHECK(parse(in, &h, &bad) == PROXY_PARSE_OK, "a head to rewrite parses");
    size_t n = proxy_rewrite(&h, in, out, sizeof(out));
    out[n] = '\0';
    CHECK_STR(out,
              "GET /users/user3 HTTP/1.1\r\nHost: flood7.test\r\n"
              "Accept: application/activity+json\r\n\r\n",
              "origin-form, Host from the URL, Proxy-* dropped, the rest as sent");
    CHECK(proxy_rewrite(&h, in, out, 20) == 0, "too small a buffer: 0, nothing half-written");
    in = "HEAD http://flood2.test:8080?q=1 HTTP/1.0\r\n\r\n";
    CHECK(parse(in, &h, &bad) == PROXY_PARSE_OK, "a query with no path parses");
    n = proxy_rewrite(&h, in, out, sizeof(out));
    out[n] = '\0';
    CHECK_STR(out, "HEAD /?q=1 HTTP/1.0\r\nHost: flood2.test:8080\r\n\r\n",
              "a query with no path gets its '/', the port stays in Host, HTTP/1.0 kept");
}

static void test_response(void)
{
    struct proxy_resp r;
    const char *a = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n";
    CHECK(proxy_parse_response(a, strlen(a), 0, &r) == PROXY_PARSE_OK && r.status == 200 &&
              r.body == PROXY_BODY_LENGTH && r.content_length == 12 && !r.close,
          "200 with Content-Length 12");
    CHECK(proxy_parse_response(a, strlen(a), 1, &r) == PROXY_PARSE_OK && r.body == PROXY_BODY_NONE,
          "the same answering HEAD: no body");
    a = "HTTP/1.1 204 No Content\r\nContent-Length: 12\r\n\r\n";
    CHECK(proxy_parse_response(a, strlen(a), 0, &r) == PROXY_PARSE_OK && r.body == PROXY_BODY_NONE,
          "204: no body");
    a = "HTTP/1.1 100 Continue\r\n\r\n";
    CHECK(proxy_parse_response(a, strlen(a), 0, &r) == PROXY_PARSE_OK && r.status == 100 &&
              r.body == PROXY_BODY_NONE,
          "100 Continue: no body");
    a = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    CHECK(proxy_parse_response(a, strlen(a), 0, &r) == PROXY_PARSE_OK &&
              r.body == PROXY_BODY_CHUNKED && r.close,
          "chunked, Connection: close");
    a = "HTTP/1.0 200 OK\r\n\r\n";
    CHECK(proxy_parse_response(a, strlen(a), 0, &r) == PROXY_PARSE_OK &&
              r.body == PROXY_BODY_CLOSE && r.close,
          "no length: until close");
    a = "HTTP/1.1 2x0 OK\r\n\r\n";
    CHECK(proxy_parse_response(a, strlen(a), 0, &r) == PROXY_PARSE_BAD, "status 2x0: bad");
    a = "HTTP/1.1 200 OK\r\nContent-Length: 1";
    CHECK(proxy_parse_response(a, strlen(a), 0, &r) == PROXY_PARSE_MORE, "half a head: more");
}

static void test_chunked(void)
{
    const char *a = "5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT";
    struct proxy_chunked st = {0};
    size_t used;
    CHECK(proxy_chunked_feed(&st, a, strlen(a), &used) == 1 && used == strlen(a) - 4,
          "chunks with an extension and a trailer: done, stopping before the next bytes");
    memset(&st, 0, sizeof(st));
    int rc = 0;
    size_t i, total = 0;
    for (i = 0; i < strlen(a) - 4 && rc == 0; i++) {
        rc = proxy_chunked_feed(&st, a + i, 1, &used);
        total += used;
    }
    CHECK(rc == 1 && total == strlen(a) - 4, "the same a byte at a time");
    memset(&st, 0, sizeof(st));
    CHECK(proxy_chunked_feed(&st, "x\r\n", 3, &used) == -1, "a size of no hex: -1");
    memset(&st, 0, sizeof(st));
    CHECK(proxy_chunked_feed(&st, "5\r\nhelloX", 9, &used) == -1, "data not followed by CRLF: -1");
    memset(&st, 0, sizeof(st));
    CHECK(proxy_chunked_feed(&st, "fffffffffffffffff\r\n", 19, &used) == -1,
          "a size of 17 hex digits: -1");
    memset(&st, 0, sizeof(st));
    CHECK(proxy_chunked_feed(&st, "5\r\nhel", 6, &used) == 0 && used == 6, "half a chunk: more");
}

int main(void)
{
    test_forms();
    test_framing();
    test_bad();
    test_route();
    test_rewrite();
    test_response();
    test_chunked();
    return check_done();
}

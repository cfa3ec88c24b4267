/* tests/fuzz/fuzz_proxy.c: libFuzzer harness for what the egress proxy reads off the network
 * (flood/crowd/proxy_parse.c): the request head (request line, authority, headers, body
 * framing), the decision whether it names a crowd instance, the origin-form rewrite, an
 * answer's head and chunked framing.
 *
 * Input: the bytes a client sent. Its length picks one of two crowds. Beyond "no crash, no
 * leak", it checks invariants and aborts when one breaks: a head that parses ends in CRLF
 * CRLF within the input, its pointers stay inside it; a request routed to instance i names
 * i by the crowd's own Host rule; a refused one has a reason; the rewritten head parses
 * again as an origin-form request of the same method, Host set to the authority, no longer
 * than promised; chunked framing gives the same answer fed whole or a byte at a time. */
#include "flood/crowd/proxy_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct wf_crowd crowds[2] = {
    {20, 10, "flood%d.test", "http", 0, "0.1.0"},
    {1000, 3, "n-%d.lab.example", "https", 8443, "1.0.0"},
};

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static int inside(const char *p, size_t n, const char *buf, size_t size)
{
    return p >= buf && p + n <= buf + size;
}

static void check_rewrite(const struct proxy_head *h, const char *buf)
{
    size_t cap = h->head_len + 300;
    char *out = malloc(cap);
    REQUIRE(out);
    size_t n = proxy_rewrite(h, buf, out, cap);
    REQUIRE(n > 0 && n <= cap);
    struct proxy_head h2;
    enum proxy_bad bad;
    enum proxy_parse_rc rc = proxy_parse_request(out, n, &h2, &bad);
    /* The rewrite puts a Host line first and drops the client's: a head of the most header
     * lines a client may send and no Host line has one more than that (the limit guards what
     * the proxy takes in, not what it forwards), and only that head */
    size_t lines = 0;
    for (const char *q = out; (q = memmem(q, (size_t)(out + n - q), "\r\n", 2)); q += 2)
        lines++;
    if (lines - 2 > PROXY_HEADERS_MAX) {
        REQUIRE(lines - 2 == PROXY_HEADERS_MAX + 1 && h->n_headers == PROXY_HEADERS_MAX);
        REQUIRE(rc == PROXY_PARSE_BAD && bad == PROXY_BAD_TOO_LARGE);
        free(out);
        return;
    }
    REQUIRE(rc == PROXY_PARSE_OK);
    REQUIRE(h2.head_len == n && h2.form == PROXY_FORM_ORIGIN);
    REQUIRE(h2.method_len == h->method_len && !memcmp(h2.method, h->method, h->method_len));
    REQUIRE(h2.body == h->body && h2.content_length == h->content_length);
    /* the first header is the authority's Host */
    const char *host = memmem(out, n, "\r\nHost: ", 8);
    REQUIRE(host && !memcmp(host + 8, h->auth.host, h->auth.host_len));
    free(out);
}

static void fuzz_request(const struct wf_crowd *c, const char *buf, size_t size)
{
    struct proxy_head h;
    enum proxy_bad bad;
    enum proxy_parse_rc rc = proxy_parse_request(buf, size, &h, &bad);
    if (rc == PROXY_PARSE_BAD) {
        REQUIRE(bad > PROXY_BAD_NONE && bad < PROXY_BAD__COUNT);
        REQUIRE(proxy_bad_status(bad) >= 400 && proxy_bad_key(bad)[0]);
        return;
    }
    if (rc == PROXY_PARSE_MORE) {
        REQUIRE(size < PROXY_HEAD_MAX);
        return;
    }
    REQUIRE(rc == PROXY_PARSE_OK);
    REQUIRE(h.head_len >= 4 && h.head_len <= size && h.head_len <= PROXY_HEAD_MAX);
    REQUIRE(!memcmp(buf + h.head_len - 4, "\r\n\r\n", 4));
    REQUIRE(inside(h.method, h.method_len, buf, h.head_len) && h.method_len > 0);
    REQUIRE(h.minor == 0 || h.minor == 1);
    REQUIRE(h.n_headers <= PROXY_HEADERS_MAX);
    REQUIRE(h.body != PROXY_BODY_CLOSE);
    if (h.form == PROXY_FORM_ABSOLUTE || h.form == PROXY_FORM_AUTHORITY) {
        REQUIRE(inside(h.auth.host, h.auth.host_len, buf, h.head_len) && h.auth.host_len > 0);
        REQUIRE(h.auth.port >= 0 && h.auth.port <= 65535);
        REQUIRE(h.form != PROXY_FORM_AUTHORITY || h.auth.port > 0);
    }
    if (h.form == PROXY_FORM_ABSOLUTE && h.path_len > 1)
        REQUIRE(inside(h.path, h.path_len, buf, h.head_len));
    enum proxy_refuse why;
    int inst = proxy_route(&h, c, 3128, &why);
    REQUIRE(inst >= 0 && inst <= c->instances);
    REQUIRE((inst != 0) == (why == PROXY_REFUSE_NONE));
    REQUIRE(why < PROXY_REFUSE__COUNT);
    if (inst) {
        REQUIRE(h.auth.kind == PROXY_HOST_NAME);
        REQUIRE(wf_instance_of_host_n(c, h.auth.host, h.auth.host_len, WF_PORT_ANY) == inst);
        if (h.form == PROXY_FORM_ABSOLUTE)
            check_rewrite(&h, buf);
    }
}

static void fuzz_answer(const char *buf, size_t size)
{
    struct proxy_resp r;
    for (int head = 0; head < 2; head++) {
        enum proxy_parse_rc rc = proxy_parse_response(buf, size, head, &r);
        if (rc != PROXY_PARSE_OK)
            continue;
        REQUIRE(r.head_len <= size && r.status >= 100 && r.status <= 999);
        REQUIRE(!head || r.body == PROXY_BODY_NONE);
    }
}

static void fuzz_chunked(const char *buf, size_t size)
{
    struct proxy_chunked a = {0}, b = {0};
    size_t used_a = 0;
    int ra = proxy_chunked_feed(&a, buf, size, &used_a);
    REQUIRE(ra >= -1 && ra <= 1 && used_a <= size);
    int rb = 0;
    size_t used_b = 0, i = 0;
    for (; i < size && rb == 0; i++) {
        size_t u;
        rb = proxy_chunked_feed(&b, buf + i, 1, &u);
        used_b += u;
    }
    REQUIRE(ra == rb);
    if (ra == 1)
        REQUIRE(used_a == used_b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: reading past it is ASan's to catch */
    char *buf = malloc(size ? size : 1);
    REQUIRE(buf);
    if (size)
        memcpy(buf, data, size);
    fuzz_request(&crowds[size % 2], buf, size);
    fuzz_answer(buf, size);
    /* the bytes after a request head as a chunked body */
    const char *e = size >= 4 ? memmem(buf, size, "\r\n\r\n", 4) : NULL;
    size_t off = e ? (size_t)(e - buf) + 4 : 0;
    fuzz_chunked(buf + off, size - off);
    free(buf);
    return 0;
}

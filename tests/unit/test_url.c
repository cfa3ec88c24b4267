/* tests/unit/test_url.c: url_split. Expected parts follow RFC 3986 (generic syntax), RFC
 * 9110 sections 4.2 and 7.1 (default ports, the request target has no fragment) and RFC
 * 3986 section 5.2.4 (dot segments removed); every accepted shape has a refused twin. */
#include <stdlib.h>
#include <string.h>

#include "flood/core/url.h"
#include "tests/check.h"

/* Split url, expecting success and these parts (NULL: not checked). */
static void ok(const char *url, const char *scheme, const char *host, unsigned port,
               const char *authority, const char *target, const char *origin)
{
    struct url_parts p;
    struct flood_err e = {0, ""};
    int rc = url_split(url, &p, &e);
    CHECK(rc == 0, "'%.60s' is taken%s%s", url, rc ? ": " : "", rc ? e.msg : "");
    if (rc)
        return;
    if (scheme)
        CHECK_STR(p.scheme, scheme, "'%.60s' scheme", url);
    if (host)
        CHECK_STR(p.host, host, "'%.60s' host", url);
    if (port)
        CHECK(p.port == port, "'%.60s' port %u (got %u)", url, port, p.port);
    if (authority)
        CHECK_STR(p.authority, authority, "'%.60s' authority", url);
    if (target)
        CHECK_STR(p.target, target, "'%.60s' target", url);
    if (origin)
        CHECK_STR(p.origin, origin, "'%.60s' origin", url);
}

/* Split url, expecting refusal with code and a message naming the module. */
static void bad(const char *url, int code, const char *what)
{
    struct url_parts p;
    struct flood_err e = {0, ""};
    int rc = url_split(url, &p, &e);
    for (char *c = e.msg; *c; c++) /* one output line per check */
        if ((unsigned char)*c < 0x20)
            *c = '?';
    CHECK(rc == -1 && e.code == code && !strncmp(e.msg, "url: ", 5), "%s is refused (%s)", what,
          rc ? e.msg : "taken");
}

static char *repeat(const char *head, char c, size_t n, const char *tail)
{
    size_t hl = strlen(head), tl = strlen(tail);
    char *s = malloc(hl + n + tl + 1);
    if (!s)
        abort();
    memcpy(s, head, hl);
    memset(s + hl, c, n);
    memcpy(s + hl + n, tail, tl + 1);
    return s;
}

int main(void)
{
    /* ports: explicit, default written, default implied; the wrong ones */
    ok("http://flood1.test:8080/users/a", "http", "flood1.test", 8080, "flood1.test:8080",
       "/users/a", "http://flood1.test:8080");
    ok("https://h.example/x", "https", "h.example", 443, "h.example", "/x", "https://h.example");
    ok("http://h.example/x", "http", NULL, 80, "h.example", NULL, "http://h.example");
    ok("https://h.example:443/x", NULL, NULL, 443, "h.example", NULL, "https://h.example");
    ok("https://h.example:80/x", NULL, NULL, 80, "h.example:80", NULL, "https://h.example:80");
    ok("http://h.example:65535/", NULL, NULL, 65535, "h.example:65535", "/", NULL);
    bad("http://h.example:65536/", FLOOD_EINVAL, "port 65536");
    bad("http://h.example:0/", FLOOD_EINVAL, "port 0");
    bad("http://h.example:8a/", FLOOD_EINVAL, "port '8a'");
    bad("http://h.example:-1/", FLOOD_EINVAL, "port '-1'");

    /* IPv6 and IPv4 literals */
    ok("http://[::1]:9/inbox", "http", "[::1]", 9, "[::1]:9", "/inbox", "http://[::1]:9");
    ok("https://[2001:DB8::A]/", NULL, "[2001:db8::a]", 443, "[2001:db8::a]", "/", NULL);
    ok("http://127.0.0.1:8080/x", NULL, "127.0.0.1", 8080, "127.0.0.1:8080", NULL, NULL);
    bad("http://[::1/x", FLOOD_EINVAL, "an unclosed IPv6 literal");
    bad("http://::1/x", FLOOD_EINVAL, "an IPv6 literal without brackets");
    bad("http://[fe80::1%25eth0]/x", FLOOD_EINVAL, "an IPv6 zone id");
    bad("http://[::1]x/", FLOOD_EINVAL, "bytes after an IPv6 literal");

    /* case: scheme and host fold, the path keeps its case */
    ok("HTTPS://Flood1.TEST/Users/A", "https", "flood1.test", 443, "flood1.test", "/Users/A",
       "https://flood1.test");
    ok("HtTp://H:81", "http", "h", 81, "h:81", "/", "http://h:81");
    bad("FTP://flood1.test/x", FLOOD_EINVAL, "an ftp URL");
    bad("httpx://flood1.test/x", FLOOD_EINVAL, "an unknown scheme");
    bad("mailto:a@flood1.test", FLOOD_EINVAL, "a mailto URI");

    /* query */
    ok("http://h/inbox?a=1&b=2", NULL, NULL, 0, NULL, "/inbox?a=1&b=2", "http://h");
    ok("http://h?a=1", NULL, NULL, 0, "h", "/?a=1", "http://h");
    ok("http://h/p?", NULL, NULL, 0, NULL, "/p?", NULL);
    ok("http://h/p", NULL, NULL, 0, NULL, "/p", NULL);

    /* fragment: never part of the request target */
    ok("https://h/users/a#main-key", NULL, NULL, 0, "h", "/users/a", "https://h");
    ok("https://h/users/a?x=1#main-key", NULL, NULL, 0, NULL, "/users/a?x=1", NULL);
    ok("https://h#k", NULL, NULL, 0, "h", "/", "https://h");
    bad("https://#k", FLOOD_EINVAL, "a fragment and no host");

    /* userinfo is refused; an @ in the path is fine (Mastodon's /@user) */
    ok("https://h/@alice", NULL, NULL, 0, "h", "/@alice", NULL);
    ok("https://h/p?to=a@b", NULL, NULL, 0, "h", "/p?to=a@b", NULL);
    bad("http://alice@h/", FLOOD_EINVAL, "userinfo");
    bad("http://alice:secret@h/", FLOOD_EINVAL, "userinfo with a password");
    bad("http://@h/", FLOOD_EINVAL, "an empty userinfo");
    bad("http://evil.example@flood1.test:8080/", FLOOD_EINVAL, "a host hidden behind userinfo");

    /* no path: the target is "/"; no host is refused */
    ok("http://flood1.test", "http", "flood1.test", 80, "flood1.test", "/", "http://flood1.test");
    ok("http://flood1.test:8080", NULL, NULL, 8080, "flood1.test:8080", "/", NULL);
    bad("http://", FLOOD_EINVAL, "no host");
    bad("http:///x", FLOOD_EINVAL, "an empty host");
    bad("http:/h/x", FLOOD_EINVAL, "one slash");
    bad("http:h/x", FLOOD_EINVAL, "no slashes");
    bad("http://:8080/x", FLOOD_EINVAL, "a port and no host");

    /* dot segments go, as curl sends them (RFC 3986 section 5.2.4) */
    ok("http://h/a/b/../c/./d", NULL, NULL, 0, NULL, "/a/c/d", NULL);
    ok("http://h/a/b/c", NULL, NULL, 0, NULL, "/a/b/c", NULL);

    /* garbage */
    bad(NULL, FLOOD_EINVAL, "NULL");
    bad("", FLOOD_EINVAL, "the empty string");
    bad("flood1.test/users/a", FLOOD_EINVAL, "no scheme");
    bad("//flood1.test/x", FLOOD_EINVAL, "a scheme-relative URL");
    bad("://flood1.test/x", FLOOD_EINVAL, "an empty scheme");
    bad("@alice@flood1.test", FLOOD_EINVAL, "a mention");
    bad("http://h/a b", FLOOD_EINVAL, "a space in the path");
    bad("http://h/a\r\nX-Evil: 1", FLOOD_EINVAL, "CR LF in the path");
    bad("http://h\x01/", FLOOD_EINVAL, "a control byte in the host");
    bad("http://h o/", FLOOD_EINVAL, "a space in the host");
    bad("http://h<o>/", FLOOD_EINVAL, "angle brackets in the host");

    /* huge input: limits give FLOOD_ELIMIT, just under them is taken */
    char *s = repeat("http://h/", 'a', URL_TARGET_MAX - 2, "");
    ok(s, NULL, NULL, 0, "h", NULL, NULL);
    free(s);
    s = repeat("http://h/", 'a', URL_TARGET_MAX - 1, "");
    bad(s, FLOOD_ELIMIT, "a target of URL_TARGET_MAX bytes");
    free(s);
    s = repeat("http://h/?", 'q', URL_TARGET_MAX, "");
    bad(s, FLOOD_ELIMIT, "a long query");
    free(s);
    s = repeat("http://h/", 'a', URL_INPUT_MAX, "");
    bad(s, FLOOD_ELIMIT, "a URL over URL_INPUT_MAX");
    free(s);
    s = repeat("http://h/", 'a', 1 << 20, "");
    bad(s, FLOOD_ELIMIT, "a megabyte URL");
    free(s);
    s = repeat("http://", 'h', URL_HOST_MAX - 1, "/x");
    ok(s, NULL, NULL, 0, NULL, "/x", NULL);
    free(s);
    s = repeat("http://", 'h', URL_HOST_MAX, "/x");
    bad(s, FLOOD_ELIMIT, "a host of URL_HOST_MAX bytes");
    free(s);
    s = repeat("http://", 'h', URL_HOST_MAX - 1, ":65535/x");
    ok(s, NULL, NULL, 65535, NULL, "/x", NULL);
    free(s);
    return check_done();
}

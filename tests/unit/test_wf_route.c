/* tests/unit/test_wf_route.c: naming, routing, WebFinger resource parsing, Accept
 * parsing and crowd checks of webfinger/, each positive case beside its negative twins.
 * Expected values come from INTEROP.md's rules and RFC 7033 / RFC 9110, not from the code. */
#include "tests/check.h"
#include "webfinger/wf.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webfinger/activity.h"
#include "webfinger/sput.h"

static const struct wf_crowd deflt = {
    .instances = 20,
    .actors = 10,
    .domain_template = "flood%d.test",
    .scheme = "https",
    .public_port = 0,
    .version = "0.1.0",
};

/* ---- wf_crowd_check ------------------------------------------------------------------ */

struct crowd_case {
    const char *tpl;
    int instances, actors;
    const char *scheme;
    int port;
    const char *version;
    int ok;
    const char *why;
};

#define LONG60  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define LONG100 LONG60 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct crowd_case crowd_cases[] = {
    {"flood%d.test", 20, 10, "https", 0, "0.1.0", 1, "default crowd"},
    {"flood%d.test", 1000000, 1000000, "http", 65535, "1.2.3+build.5", 1, "largest counts"},
    {"%d.flood.test", 1, 1, "https", 443, "10.20.30", 1, "%d as a whole label"},
    {"a-%d-b.example", 5, 1, "https", 8443, "1.0.0-rc.1", 1, "hyphens inside a label"},
    {LONG60 "%d.test", 999, 1, "https", 0, "0.1.0", 1, "63-byte label at the last instance"},
    {LONG60 "%d.test", 1000, 1, "https", 0, "0.1.0", 0, "64-byte label at the last instance"},
    {"flood.test", 20, 10, "https", 0, "0.1.0", 0, "template without %d"},
    {"flood%d-%d.test", 20, 10, "https", 0, "0.1.0", 0, "two %d"},
    {"flood%s.test", 20, 10, "https", 0, "0.1.0", 0, "%s"},
    {"flood%d%%.test", 20, 10, "https", 0, "0.1.0", 0, "%% escape"},
    {"flood%i.test", 20, 10, "https", 0, "0.1.0", 0, "%i"},
    {"flood%", 20, 10, "https", 0, "0.1.0", 0, "trailing %"},
    {"Flood%d.test", 20, 10, "https", 0, "0.1.0", 0, "upper case"},
    {"flood_%d.test", 20, 10, "https", 0, "0.1.0", 0, "underscore"},
    {"flood %d.test", 20, 10, "https", 0, "0.1.0", 0, "space"},
    {"flood%d.test/x", 20, 10, "https", 0, "0.1.0", 0, "slash"},
    {"flood%d.test:80", 20, 10, "https", 0, "0.1.0", 0, "port in the template"},
    {"flood%d..test", 20, 10, "https", 0, "0.1.0", 0, "empty label"},
    {".flood%d.test", 20, 10, "https", 0, "0.1.0", 0, "leading dot"},
    {"flood%d.test.", 20, 10, "https", 0, "0.1.0", 0, "trailing dot"},
    {"-flood%d.test", 20, 10, "https", 0, "0.1.0", 0, "label starting with a hyphen"},
    {"flood%d-.test", 20, 10, "https", 0, "0.1.0", 0, "label ending with a hyphen"},
    {"10.0.0.%d", 20, 10, "https", 0, "0.1.0", 0, "numeric last label (an address)"},
    {LONG60 "." LONG60 "." LONG60 "." LONG60 ".abcx%d", 99999, 1, "https", 0, "0.1.0", 1,
     "host of 253 bytes at the last instance"},
    {LONG60 "." LONG60 "." LONG60 "." LONG60 ".abcx%d", 100000, 1, "https", 0, "0.1.0", 0,
     "host of 254 bytes at the last instance"},
    {LONG100 LONG100 LONG100 "%d", 1, 1, "https", 0, "0.1.0", 0, "template over 250 bytes"},
    {NULL, 20, 10, "https", 0, "0.1.0", 0, "no template"},
    {"", 20, 10, "https", 0, "0.1.0", 0, "empty template"},
    {"flood%d.test", 0, 10, "https", 0, "0.1.0", 0, "instances 0"},
    {"flood%d.test", -1, 10, "https", 0, "0.1.0", 0, "instances -1"},
    {"flood%d.test", 1000001, 10, "https", 0, "0.1.0", 0, "instances 1000001"},
    {"flood%d.test", 20, 0, "https", 0, "0.1.0", 0, "actors 0"},
    {"flood%d.test", 20, 1000001, "https", 0, "0.1.0", 0, "actors 1000001"},
    {"flood%d.test", 20, 10, "ftp", 0, "0.1.0", 0, "scheme ftp"},
    {"flood%d.test", 20, 10, "HTTPS", 0, "0.1.0", 0, "scheme in upper case"},
    {"flood%d.test", 20, 10, NULL, 0, "0.1.0", 0, "no scheme"},
    {"flood%d.test", 20, 10, "https", -1, "0.1.0", 0, "port -1"},
    {"flood%d.test", 20, 10, "https", 65536, "0.1.0", 0, "port 65536"},
    {"flood%d.test", 20, 10, "https", 0, NULL, 0, "no version"},
    {"flood%d.test", 20, 10, "https", 0, "", 0, "empty version"},
    {"flood%d.test", 20, 10, "https", 0, "1.2", 0, "version 1.2"},
    {"flood%d.test", 20, 10, "https", 0, "01.2.3", 0, "version with a leading zero"},
    {"flood%d.test", 20, 10, "https", 0, "v1.2.3", 0, "version v1.2.3"},
    {"flood%d.test", 20, 10, "https", 0, "1.2.3-", 0, "version with an empty pre-release"},
    {"flood%d.test", 20, 10, "https", 0, "1.2.3 ", 0, "version with a space"},
};

static void test_crowd_check(void)
{
    for (size_t i = 0; i < sizeof(crowd_cases) / sizeof(crowd_cases[0]); i++) {
        const struct crowd_case *t = &crowd_cases[i];
        struct wf_crowd c = {t->instances, t->actors, t->tpl, t->scheme, t->port, t->version};
        struct flood_err err = {0};
        int rc = wf_crowd_check(&c, &err);
        CHECK(rc == (t->ok ? 0 : -1), "crowd check: %s -> %s", t->why, t->ok ? "ok" : "refused");
        if (!t->ok)
            CHECK(err.code == FLOOD_EINVAL && strncmp(err.msg, "webfinger: ", 11) == 0,
                  "crowd check: %s says why ('%s')", t->why, err.msg);
    }
    struct flood_err err = {0};
    CHECK(wf_crowd_check(NULL, &err) == -1, "crowd check: NULL crowd refused");
}

/* ---- naming -------------------------------------------------------------------------- */

static void test_naming(void)
{
    char host[WF_HOST_MAX], url[WF_URL_MAX], name[WF_NAME_MAX];
    wf_host(&deflt, 7, host);
    CHECK_STR(host, "flood7.test", "wf_host 7");
    wf_base_url(&deflt, 7, url);
    CHECK_STR(url, "https://flood7.test", "base url without port");
    wf_actor_url(&deflt, 7, 0, url);
    CHECK_STR(url, "https://flood7.test/actor", "instance actor url");
    wf_actor_url(&deflt, 7, 3, url);
    CHECK_STR(url, "https://flood7.test/users/user3", "actor url");
    wf_actor_name(42, name);
    CHECK_STR(name, "user42", "actor name");
    wf_activity_url(&deflt, 7, 3, UINT64_MAX, url);
    CHECK_STR(url, "https://flood7.test/users/user3/activities/18446744073709551615",
              "activity url, the largest seq");
    wf_note_url(&deflt, 7, 3, 0, url);
    CHECK_STR(url, "https://flood7.test/users/user3/notes/0", "note url, seq 0");
    {
        /* what does not fit is cut, as snprintf cuts it, and stays terminated */
        char small[8];
        size_t n = 0;
        wf_sput_str(small, sizeof(small), &n, "https://");
        CHECK_STR(small, "https:/", "wf_sput: cut to the buffer");
        wf_sput_u(small, sizeof(small), &n, 42);
        CHECK(n == 7 && !strcmp(small, "https:/"), "wf_sput_u: nothing past a full buffer");
        n = 0;
        wf_sput_i(small, sizeof(small), &n, -1234567);
        CHECK_STR(small, "-123456", "wf_sput_i: a negative number cut");
    }

    struct wf_crowd c = deflt;
    c.public_port = 8443;
    wf_base_url(&c, 1, url);
    CHECK_STR(url, "https://flood1.test:8443", "base url with port 8443");
    c.public_port = 443;
    wf_base_url(&c, 1, url);
    CHECK_STR(url, "https://flood1.test", "https on 443: port left out");
    c.scheme = "http";
    wf_base_url(&c, 1, url);
    CHECK_STR(url, "http://flood1.test:443", "http on 443: port kept");
    c.public_port = 80;
    wf_base_url(&c, 1, url);
    CHECK_STR(url, "http://flood1.test", "http on 80: port left out");
    c.scheme = "https";
    wf_base_url(&c, 1, url);
    CHECK_STR(url, "https://flood1.test:80", "https on 80: port kept");
    c.domain_template = "%d.crowd.example";
    c.instances = 1000000;
    wf_host(&c, 1000000, host);
    CHECK_STR(host, "1000000.crowd.example", "%%d first, a million instances");
    CHECK(wf_instance_of_host(&c, "1000000.crowd.example") == 1000000, "and back");
    CHECK(wf_instance_of_host(&c, "1000001.crowd.example") == 0, "one past the end");
}

/* ---- wf_instance_of_host ------------------------------------------------------------- */

struct host_case {
    const char *host;
    int want;
};

static const struct host_case host_cases[] = {
    {"flood1.test", 1},
    {"flood20.test", 20},
    {"FLOOD7.TEST", 7},
    {"Flood12.Test", 12},
    {"flood1.test:8443", 1},
    {"flood1.test:80", 1},
    {"flood1.test:65535", 1},
    {"flood1.test.", 1},
    {"flood1.test.:443", 1},
    {"flood0.test", 0},
    {"flood21.test", 0},
    {"flood01.test", 0},
    {"flood-1.test", 0},
    {"flood+1.test", 0},
    {"flood 1.test", 0},
    {"flood1 .test", 0},
    {"flood.test", 0},
    {"flood1x.test", 0},
    {"floodx1.test", 0},
    {"xflood1.test", 0},
    {"flood1.testx", 0},
    {"flood1.tes", 0},
    {"flood1.test..", 0},
    {".flood1.test", 0},
    {"flood99999999.test", 0},
    {"flood2147483648.test", 0},
    {"flood1.test:", 0},
    {"flood1.test:abc", 0},
    {"flood1.test:0", 0},
    {"flood1.test:08443", 0},
    {"flood1.test:65536", 0},
    {"flood1.test:99999", 0},
    {"flood1.test:8443:1", 0},
    {"flood1.test: 80", 0},
    {"flood1.test ", 0},
    {" flood1.test", 0},
    {"[::1]:80", 0},
    {"127.0.0.1", 0},
    {"", 0},
    {":80", 0},
    {"example.com", 0},
};

static void test_instance_of_host(void)
{
    for (size_t i = 0; i < sizeof(host_cases) / sizeof(host_cases[0]); i++)
        CHECK(wf_instance_of_host(&deflt, host_cases[i].host) == host_cases[i].want,
              "host '%s' -> %d", host_cases[i].host, host_cases[i].want);
    CHECK(wf_instance_of_host(&deflt, NULL) == 0, "NULL host -> 0");
    CHECK(wf_instance_of_host_n(&deflt, "flood1.test", 11, WF_PORT_ANY) == 1, "_n exact");
    CHECK(wf_instance_of_host_n(&deflt, "flood1\0.test", 12, WF_PORT_ANY) == 0,
          "_n with an embedded NUL -> 0");
    CHECK(wf_instance_of_host_n(&deflt, "flood1.testXYZ", 11, WF_PORT_ANY) == 1,
          "_n reads only len bytes");

    /* The public port rule (WebFinger acct: hosts). */
    CHECK(wf_instance_of_host_n(&deflt, "flood1.test:443", 15, WF_PORT_PUBLIC) == 1,
          "https, no public port: :443 is the public port");
    CHECK(wf_instance_of_host_n(&deflt, "flood1.test:8443", 16, WF_PORT_PUBLIC) == 0,
          "https, no public port: :8443 is another port");
    struct wf_crowd c = deflt;
    c.public_port = 8443;
    CHECK(wf_instance_of_host_n(&c, "flood1.test:8443", 16, WF_PORT_PUBLIC) == 1,
          "public port 8443: :8443 matches");
    CHECK(wf_instance_of_host_n(&c, "flood1.test", 11, WF_PORT_PUBLIC) == 1,
          "public port 8443: no port matches");
    CHECK(wf_instance_of_host_n(&c, "flood1.test:443", 15, WF_PORT_PUBLIC) == 0,
          "public port 8443: :443 does not");
    c.scheme = "http";
    c.public_port = 0;
    CHECK(wf_instance_of_host_n(&c, "flood1.test:80", 14, WF_PORT_PUBLIC) == 1,
          "http, no public port: :80 matches");
    CHECK(wf_instance_of_host_n(&c, "flood1.test:443", 15, WF_PORT_PUBLIC) == 0,
          "http, no public port: :443 does not");
}

/* ---- wf_route ------------------------------------------------------------------------ */

struct route_case {
    const char *host, *path;
    int status;
    enum wf_route_kind kind;
    int instance, actor;
    uint64_t seq;
};

static const struct route_case route_cases[] = {
    {"flood1.test", "/.well-known/webfinger", 0, WF_ROUTE_WEBFINGER, 1, -1, 0},
    {"flood2.test", "/.well-known/host-meta", 0, WF_ROUTE_HOST_META, 2, -1, 0},
    {"flood3.test", "/.well-known/nodeinfo", 0, WF_ROUTE_NODEINFO_WK, 3, -1, 0},
    {"flood4.test", "/nodeinfo/2.0", 0, WF_ROUTE_NODEINFO_20, 4, -1, 0},
    {"flood5.test", "/nodeinfo/2.1", 0, WF_ROUTE_NODEINFO_21, 5, -1, 0},
    {"flood6.test", "/inbox", 0, WF_ROUTE_SHARED_INBOX, 6, -1, 0},
    {"flood7.test", "/actor", 0, WF_ROUTE_ACTOR, 7, 0, 0},
    {"flood8.test", "/actor/inbox", 0, WF_ROUTE_INBOX, 8, 0, 0},
    {"flood9.test", "/actor/outbox", 0, WF_ROUTE_OUTBOX, 9, 0, 0},
    {"flood10.test", "/users/user1", 0, WF_ROUTE_ACTOR, 10, 1, 0},
    {"flood11.test:8443", "/users/user10", 0, WF_ROUTE_ACTOR, 11, 10, 0},
    {"FLOOD12.TEST", "/users/user2/inbox", 0, WF_ROUTE_INBOX, 12, 2, 0},
    {"flood13.test.", "/users/user3/outbox", 0, WF_ROUTE_OUTBOX, 13, 3, 0},
    {"flood14.test", "/users/user4/followers", 0, WF_ROUTE_FOLLOWERS, 14, 4, 0},
    {"flood15.test", "/users/user5/following", 0, WF_ROUTE_FOLLOWING, 15, 5, 0},
    {"flood16.test", "/users/user6/notes/0", 0, WF_ROUTE_NOTE, 16, 6, 0},
    {"flood17.test", "/users/user7/notes/18446744073709551615", 0, WF_ROUTE_NOTE, 17, 7,
     UINT64_MAX},
    {"flood20.test", "/users/user9/activities/42", 0, WF_ROUTE_ACTIVITY, 20, 9, 42},
    /* unknown hosts */
    {NULL, "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"flood21.test", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"flood0.test", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"flood01.test", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"example.com", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"flood1.test:bad", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"flood1.test:70000", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    {"127.0.0.1:8080", "/actor", 421, WF_ROUTE_NONE, 0, -1, 0},
    /* unknown paths and actors */
    {"flood1.test", NULL, 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/.well-known/webfinger/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/.well-known/WebFinger", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/.well-known/host-meta.json", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/nodeinfo/2.2", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/nodeinfo/2.0/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/inbox/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/actor/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/actor/followers", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/actor/notes/1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user0", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user11", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user01", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/User1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1x", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user-1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user2147483648", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/inbox/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/Inbox", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/likes", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users//user1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "//users/user1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1?x=1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/01", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/-1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/+1", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/1a", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/1/", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/18446744073709551616", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/notes/99999999999999999999", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user1/activities/184467440737095516150", 404, WF_ROUTE_NONE, 1, -1, 0},
    {"flood1.test", "/users/user11/notes/1", 404, WF_ROUTE_NONE, 1, -1, 0},
};

static void test_route(void)
{
    for (size_t i = 0; i < sizeof(route_cases) / sizeof(route_cases[0]); i++) {
        const struct route_case *t = &route_cases[i];
        struct wf_route r;
        memset(&r, 0x5a, sizeof(r));
        int st = wf_route(&deflt, t->host, t->path, &r);
        CHECK(st == t->status && r.kind == t->kind && r.actor == t->actor && r.seq == t->seq &&
                  (st == 421 || r.instance == t->instance),
              "route %s %s -> %d kind %d actor %d (got %d kind %d actor %d)",
              t->host ? t->host : "(null)", t->path ? t->path : "(null)", t->status, t->kind,
              t->actor, st, r.kind, r.actor);
    }
}

/* ---- wf_webfinger resources ---------------------------------------------------------- */

struct wf_case {
    const char *resource;
    int status;
};

static const struct wf_case wf_cases[] = {
    {"acct:user1@flood1.test", 200},
    {"acct:user10@flood1.test", 200},
    {"acct:USER1@flood1.test", 200},
    {"acct:user1@flood1.test:443", 200},
    {"acct:flood1.test@flood1.test", 200},
    {"acct:FLOOD1.TEST@flood1.test", 200},
    {"https://flood1.test/users/user1", 200},
    {"https://flood1.test/actor", 200},
    {"HTTPS://flood1.test/users/user1", 404}, /* not the id byte for byte */
    /* malformed: 400 */
    {"", 400},
    {"acct:", 400},
    {"acct:@flood1.test", 400},
    {"acct:user1", 400},
    {"acct:user1@", 400},
    {"acct:user1@@flood1.test", 400},
    {"acct:user1@flood1.test@flood1.test", 400},
    {"acct:us er1@flood1.test", 400},
    {"acct:user1@flood1.test ", 400},
    {" acct:user1@flood1.test", 400},
    {"acct:user1@flood1.test\n", 400},
    {"acct:user1@flood1.test\t", 400},
    {"acct:user1@flood1.test\x7f", 400},
    {"acct:us\xc3\xa9r@flood1.test", 400},
    {"acct:.user1@flood1.test", 400},
    {"acct:user1.@flood1.test", 400},
    {"acct:-user1@flood1.test", 400},
    {"acct:user!1@flood1.test", 400},
    {"acct:user%31@flood1.test", 400},
    {"acct:user1@flood_1.test", 400},
    {"acct:user1@flood1.test/", 400},
    {"acct:user1@flood1.test:", 400},
    {"acct:user1@flood1.test:abc", 400},
    {"acct:user1@:443", 400},
    {"acct:user1@[::1]", 400},
    {"user1@flood1.test", 400},
    {"@user1@flood1.test", 400},
    {"flood1.test", 400},
    {"user1", 400},
    {"mailto:user1@flood1.test", 400},
    {"acc:user1@flood1.test", 400},
    {"ftp://flood1.test/users/user1", 400},
    /* valid, but not an account here: 404 */
    {"acct:user0@flood1.test", 404},
    {"acct:user11@flood1.test", 404},
    {"acct:user01@flood1.test", 404},
    {"acct:alice@flood1.test", 404},
    {"acct:user1.x@flood1.test", 404},
    {"acct:actor@flood1.test", 404},
    {"acct:flood2.test@flood1.test", 404},
    {"acct:user1@flood2.test", 404},
    {"acct:user1@flood21.test", 404},
    {"acct:user1@example.com", 404},
    {"acct:user1@flood1.test:8443", 404},
    {"acct:user1@flood1.test:80", 404},
    {"acct:user1@flood1.test..", 404},
    {"https://flood1.test/users/user1/", 404},
    {"https://flood1.test/users/user11", 404},
    {"https://flood1.test/users/user01", 404},
    {"https://flood1.test/users/user1/inbox", 404},
    {"https://flood1.test/users/user1/notes/1", 404},
    {"https://flood1.test/inbox", 404},
    {"https://flood1.test/actor/", 404},
    {"https://flood1.test/", 404},
    {"https://flood1.test", 404},
    {"https://FLOOD1.test/users/user1", 404},
    {"https://flood1.test:443/users/user1", 404},
    {"https://flood1.test:8443/users/user1", 404},
    {"https://flood2.test/users/user1", 404},
    {"https://flood1.test.evil/users/user1", 404},
    {"http://flood1.test/users/user1", 404},
};

static void check_wf(const struct wf_crowd *c, int instance, const char *res, size_t len, int want,
                     const char *raw_what)
{
    /* The test name in one printable line: control and non-ASCII bytes as \xNN. */
    char what[160];
    size_t o = 0;
    for (const char *p = raw_what; *p && o + 5 < sizeof(what); p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 || ch >= 0x7f)
            o += (size_t)snprintf(what + o, sizeof(what) - o, "\\x%02x", ch);
        else
            what[o++] = (char)ch;
    }
    what[o] = '\0';
    struct wf_doc d = {0};
    wf_webfinger_n(c, instance, res, len, &d);
    int ok = d.status == want && d.body && strlen(d.body) == d.len;
    if (want == 200)
        ok = ok && strcmp(d.content_type, WF_CT_JRD) == 0;
    else
        ok = ok && strcmp(d.content_type, WF_CT_JSON) == 0 &&
             strncmp(d.body, "{\"error\":\"webfinger: ", 21) == 0 && !strchr(d.body, '\n');
    CHECK(ok, "webfinger %s -> %d (got %d %s)", what, want, d.status, d.body ? d.body : "");
    wf_doc_free(&d);
}

static void test_webfinger(void)
{
    for (size_t i = 0; i < sizeof(wf_cases) / sizeof(wf_cases[0]); i++)
        check_wf(&deflt, 1, wf_cases[i].resource, strlen(wf_cases[i].resource), wf_cases[i].status,
                 wf_cases[i].resource);
    struct wf_doc d = {0};
    wf_webfinger(&deflt, 1, NULL, &d);
    CHECK(d.status == 400 && strstr(d.body, "missing"), "webfinger NULL resource -> 400");
    wf_doc_free(&d);

    /* NUL inside a decoded value (%00): refused, not cut short into a valid handle. */
    check_wf(&deflt, 1, "acct:user1@flood1.test\0x", 24, 400, "with a NUL after the host");
    check_wf(&deflt, 1, "acct:user1\0@flood1.test", 23, 400, "with a NUL in the username");
    check_wf(&deflt, 1, "\0", 1, 400, "a lone NUL");

    /* Length limits: 512 bytes is still parsed (here: an unknown actor URL), 513 is not. */
    char big[600];
    const char *pre = "https://flood1.test/users/";
    size_t pl = strlen(pre);
    memcpy(big, pre, pl);
    memset(big + pl, 'a', sizeof(big) - pl);
    check_wf(&deflt, 1, big, 512, 404, "512-byte actor URL");
    check_wf(&deflt, 1, big, 513, 400, "513-byte resource");
    /* Usernames: 128 bytes is a valid name (no such account), 129 is malformed. */
    char acct[200];
    memcpy(acct, "acct:", 5);
    memset(acct + 5, 'a', 129);
    memcpy(acct + 5 + 128, "@flood1.test", 13);
    check_wf(&deflt, 1, acct, strlen(acct), 404, "128-byte username");
    memset(acct + 5, 'a', 129);
    memcpy(acct + 5 + 129, "@flood1.test", 13);
    check_wf(&deflt, 1, acct, strlen(acct), 400, "129-byte username");

    /* The instance asked must be the host named. */
    check_wf(&deflt, 2, "acct:user1@flood1.test", 22, 404, "flood1 handle asked of flood2");
    check_wf(&deflt, 0, "acct:user1@flood1.test", 22, 404, "instance 0");
    check_wf(&deflt, 21, "acct:user1@flood21.test", 23, 404, "instance 21 of 20");

    /* A public port: acct: host with or without it, the actor URL only with it. */
    struct wf_crowd c = deflt;
    c.public_port = 8443;
    check_wf(&c, 1, "acct:user1@flood1.test:8443", 27, 200, "port 8443, acct with :8443");
    check_wf(&c, 1, "acct:user1@flood1.test", 22, 200, "port 8443, acct without port");
    check_wf(&c, 1, "acct:user1@flood1.test:443", 26, 404, "port 8443, acct with :443");
    check_wf(&c, 1, "https://flood1.test:8443/users/user1", 36, 200, "port 8443, URL with it");
    check_wf(&c, 1, "https://flood1.test/users/user1", 31, 404, "port 8443, URL without");
    c.public_port = 0;
    c.scheme = "http";
    check_wf(&c, 1, "http://flood1.test/users/user1", 30, 200, "http crowd, http URL");
    check_wf(&c, 1, "https://flood1.test/users/user1", 31, 404, "http crowd, https URL");
    check_wf(&c, 1, "acct:user1@flood1.test:80", 25, 200, "http crowd, acct with :80");
    check_wf(&c, 1, "acct:user1@flood1.test:443", 26, 404, "http crowd, acct with :443");
}

/* ---- wf_accepts_activity_json -------------------------------------------------------- */

struct accept_case {
    const char *accept;
    int want;
};

static const struct accept_case accept_cases[] = {
    {"", 1},
    {"   ", 1},
    {"application/activity+json", 1},
    {"application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"", 1},
    {"application/ld+json", 1},
    {"application/json", 1},
    {"*/*", 1},
    {"application/*", 1},
    {"APPLICATION/Activity+JSON", 1},
    {"application/activity+json;q=0.001", 1},
    {"application/activity+json; q=1.000", 1},
    {"text/html, */*;q=0.1", 1},
    {"text/html;q=0.9,application/ld+json;Q=1.0", 1},
    {"application/ld+json;profile=\"a,b;q=0\"", 1},
    {"application/ld+json;profile=\"a\\\"b\"", 1},
    {"  application/json  ", 1},
    {"text/html ,application/activity+json", 1},
    {"application/activity+json, application/ld+json; profile=\"https://www.w3.org/ns/"
     "activitystreams\", text/html;q=0.1",
     1},
    {"application/json;q=0, application/activity+json", 1},
    {"application/json;q=0, */*", 1},
    {"garbage, application/json", 1},
    {"application/activity+json;q=2, application/json", 1},
    {"text/html", 0},
    {"text/*", 0},
    {"application/xml", 0},
    {"application/activity+jsonx", 0},
    {"application/xrd+xml, text/html;q=0.5", 0},
    {"application/activity+json;q=0", 0},
    {"application/activity+json; q=0.000", 0},
    {"application/activity+json;q=0.0", 0},
    {"*/*;q=0", 0},
    {"application/*;q=0", 0},
    {"application/*;q=0, text/html", 0},
    {"application/activity+json;q=0, application/ld+json;q=0, application/json;q=0, */*", 0},
    {"*/*, application/*;q=0", 0},
    {"application/activity+json;q=2", 0},
    {"application/activity+json;q=1.001", 0},
    {"application/activity+json;q=0.0001", 0},
    {"application/activity+json;q=0.5.1", 0},
    {"application/activity+json;q=", 0},
    {"application/activity+json;q", 0},
    {"application/activity+json; profile=\"unterminated", 0},
    {"application/activity+json junk", 0},
    {"application", 0},
    {"/json", 0},
    {"application/", 0},
    {"*/activity+json", 0},
    {"garbage", 0},
};

static void test_accept(void)
{
    CHECK(wf_accepts_activity_json(NULL) == 1, "accept NULL -> yes");
    for (size_t i = 0; i < sizeof(accept_cases) / sizeof(accept_cases[0]); i++)
        CHECK(wf_accepts_activity_json(accept_cases[i].accept) == accept_cases[i].want,
              "accept '%s' -> %s", accept_cases[i].accept, accept_cases[i].want ? "yes" : "no");
}

/* ---- consistency: every URL a document names routes back to it ----------------------- */

static int url_routes(const struct wf_crowd *c, const char *url, enum wf_route_kind kind,
                      int instance, int actor)
{
    char base[WF_URL_MAX];
    wf_base_url(c, instance, base);
    size_t n = strlen(base);
    if (strncmp(url, base, n) != 0)
        return 0;
    char host[WF_HOST_MAX + 8];
    const char *h = strstr(base, "://") + 3;
    snprintf(host, sizeof(host), "%s", h);
    struct wf_route r;
    return wf_route(c, host, url + n, &r) == 0 && r.kind == kind && r.instance == instance &&
           r.actor == actor;
}

static void test_round_trip(void)
{
    struct wf_crowd crowds[2] = {deflt, deflt};
    crowds[1].public_port = 8443;
    crowds[1].scheme = "http";
    struct wf_key_info key = {"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", NULL};
    int bad = 0, n = 0;
    for (int k = 0; k < 2; k++) {
        const struct wf_crowd *c = &crowds[k];
        for (int i = 1; i <= c->instances; i += 19) {
            for (int a = 0; a <= c->actors; a++) {
                struct wf_doc d = {0};
                wf_actor(c, i, a, &key, &d);
                json_t *j = json_loads(d.body, 0, NULL);
                const char *id = json_string_value(json_object_get(j, "id"));
                const char *inbox = json_string_value(json_object_get(j, "inbox"));
                const char *outbox = json_string_value(json_object_get(j, "outbox"));
                const char *shared = json_string_value(
                    json_object_get(json_object_get(j, "endpoints"), "sharedInbox"));
                const char *user = json_string_value(json_object_get(j, "preferredUsername"));
                int ok = d.status == 200 && id && inbox && outbox && shared && user &&
                         url_routes(c, id, WF_ROUTE_ACTOR, i, a) &&
                         url_routes(c, inbox, WF_ROUTE_INBOX, i, a) &&
                         url_routes(c, outbox, WF_ROUTE_OUTBOX, i, a) &&
                         url_routes(c, shared, WF_ROUTE_SHARED_INBOX, i, -1);
                if (a > 0) {
                    const char *fers = json_string_value(json_object_get(j, "followers"));
                    const char *fing = json_string_value(json_object_get(j, "following"));
                    ok = ok && fers && fing && url_routes(c, fers, WF_ROUTE_FOLLOWERS, i, a) &&
                         url_routes(c, fing, WF_ROUTE_FOLLOWING, i, a);
                }
                /* Mastodon's round trip: acct:<preferredUsername>@<id host> -> self = id. */
                char host[WF_HOST_MAX], res[WF_URL_MAX + WF_HOST_MAX];
                wf_host(c, i, host);
                snprintf(res, sizeof(res), "acct:%s@%s", ok ? user : "", host);
                struct wf_doc w = {0};
                wf_webfinger(c, i, res, &w);
                json_t *jw = json_loads(w.body ? w.body : "", 0, NULL);
                json_t *self = json_array_get(json_object_get(jw, "links"), 0);
                ok = ok && w.status == 200 &&
                     strcmp(json_string_value(json_object_get(jw, "subject")), res) == 0 &&
                     strcmp(json_string_value(json_object_get(self, "rel")), "self") == 0 &&
                     strcmp(json_string_value(json_object_get(self, "href")), id) == 0;
                /* and by URL */
                struct wf_doc w2 = {0};
                wf_webfinger(c, i, id ? id : "", &w2);
                ok = ok && w2.status == 200 && strcmp(w2.body, w.body) == 0;
                if (!ok && bad++ < 3)
                    printf("# round trip failed: crowd %d instance %d actor %d: %s\n", k, i, a,
                           d.body);
                n++;
                json_decref(jw);
                json_decref(j);
                wf_doc_free(&w2);
                wf_doc_free(&w);
                wf_doc_free(&d);
            }
        }
    }
    CHECK(bad == 0, "round trip: %d actors route back from every URL and WebFinger", n);
}

/* ---- odds and ends ------------------------------------------------------------------- */

static void test_docs_misc(void)
{
    struct wf_doc d = {0};
    wf_error(503, "webfinger: busy \"now\"", &d);
    CHECK(d.status == 503 && strcmp(d.content_type, WF_CT_JSON) == 0 &&
              strcmp(d.body, "{\"error\":\"webfinger: busy \\\"now\\\"\"}") == 0,
          "wf_error escapes its message");
    wf_doc_free(&d);
    CHECK(d.body == NULL && d.len == 0, "wf_doc_free clears");
    wf_doc_free(&d);
    wf_doc_free(NULL);
    wf_error(400, "bad \xff byte", &d);
    CHECK(d.status == 500 && d.body, "invalid UTF-8 in a message gives a 500 document");
    wf_doc_free(&d);
    wf_doc_json(200, WF_CT_JSON, NULL, &d);
    CHECK(d.status == 500 && d.body, "wf_doc_json of NULL gives a 500 document");
    wf_doc_free(&d);

    /* The actor writer escapes as jansson does: re-serializing its output with jansson
     * gives the same bytes, for a key holding every byte that needs escaping. */
    char odd[160];
    size_t o = 0;
    for (int ch = 1; ch < 0x80; ch++)
        odd[o++] = (char)ch;
    odd[o] = '\0';
    struct wf_key_info oddkey = {odd, "z\"\\/\x1f"};
    wf_actor(&deflt, 3, 0, &oddkey, &d);
    json_t *j = json_loads(d.body ? d.body : "", 0, NULL);
    char *again = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    CHECK(d.status == 200 && again && strcmp(again, d.body) == 0 &&
              strcmp(json_string_value(
                         json_object_get(json_object_get(j, "publicKey"), "publicKeyPem")),
                     odd) == 0,
          "actor JSON escaping matches jansson's for bytes 0x01..0x7f");
    free(again);
    json_decref(j);
    wf_doc_free(&d);
    char nonascii[] = "-----BEGIN PUBLIC KEY-----\n\xc3\xa9\n";
    oddkey.public_pem = nonascii;
    wf_actor(&deflt, 3, 1, &oddkey, &d);
    CHECK(d.status == 500 && d.body && strstr(d.body, "error"),
          "actor with non-ASCII key material -> 500 document");
    wf_doc_free(&d);

    struct wf_key_info nokey = {NULL, "z6Mk"};
    wf_actor(&deflt, 1, 1, &nokey, &d);
    CHECK(d.status == 200 && !strstr(d.body, "publicKey") && !strstr(d.body, "assertionMethod"),
          "actor without a PEM has no key members");
    wf_doc_free(&d);
    wf_actor(&deflt, 1, 1, NULL, &d);
    CHECK(d.status == 200 && !strstr(d.body, "publicKey"), "actor with a NULL key");
    wf_doc_free(&d);
    wf_actor(&deflt, 1, -1, NULL, &d);
    CHECK(d.status == 404, "actor -1 -> 404");
    wf_doc_free(&d);
    wf_nodeinfo(&deflt, 1, NULL, &d);
    CHECK(d.status == 404, "nodeinfo NULL version -> 404");
    wf_doc_free(&d);
    wf_collection(&deflt, 1, 11, WF_ROUTE_FOLLOWERS, NULL, 0, 0, &d);
    CHECK(d.status == 404, "collection of actor 11 -> 404");
    wf_doc_free(&d);
    const char *items[] = {"a", "b", "c"};
    wf_collection(&deflt, 1, 1, WF_ROUTE_FOLLOWERS, items, 3, 1, &d);
    CHECK(d.status == 200 && strstr(d.body, "\"totalItems\":3"),
          "collection totalItems is at least the items shown");
    wf_doc_free(&d);
    const char *odd_items[] = {"https://target.test/users/a", NULL, "bad \xff utf-8",
                               "https://target.test/users/b"};
    wf_collection(&deflt, 1, 1, WF_ROUTE_FOLLOWING, odd_items, 4, 4, &d);
    CHECK(d.status == 200 &&
              strstr(d.body, "\"totalItems\":4,\"orderedItems\":[\"https://target.test/users/"
                             "a\",\"https://target.test/users/b\"]"),
          "collection leaves out NULL and non-UTF-8 items (%s)", d.body);
    wf_doc_free(&d);
}

/* wf_actor is rendered on demand for big crowds: measure it. */
static void test_actor_speed(void)
{
    struct wf_crowd c = deflt;
    c.instances = 1000000;
    c.actors = 1000000;
    static const char pem[] = "-----BEGIN PUBLIC KEY-----\n"
                              "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnCg/APY+cYmP+WDajJqW\n"
                              "dkv0g5q/IpFmx2vEVhCzIoHUnEiqgsDNOC7wnzZmlqb5x45vacIg7AtQdwXbHNPp\n"
                              "UpH+KQ2jBbUNYwbbxRis8yjxTwyVkZ6bqLJfN+P6Q2daq2Nxdst7JWV9GxOAkG27\n"
                              "LX0G3iEZ9pwBy5wfm48xeCRFJE1P9l1hsytnlgihR3SSemYnmBOphurWvXYYhvWb\n"
                              "ORvogMb/xV5dovHiRVTKEp+eYvlyg/NKGAY2+S27wj5qmMoOVYlUE2CJjuKxU5FW\n"
                              "MVa5q0/S1RRt7Jwog6KDTD19Zv/Rad24YBYVTsRGQ86tMbaSfKrwJPLfsKKS0RiZ\n"
                              "owIDAQAB\n"
                              "-----END PUBLIC KEY-----\n";
    struct wf_key_info key = {pem, NULL};
    enum { N = 20000 };
    struct timespec t0, t1;
    size_t bytes = 0;
    int ok = 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (int k = 0; k < N; k++) {
        struct wf_doc d;
        wf_actor(&c, 1 + (k * 7919) % 1000000, 1 + (k * 104729) % 1000000, &key, &d);
        ok = ok && d.status == 200;
        bytes += d.len;
        wf_doc_free(&d);
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    double us =
        ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 / N;
    printf("# wf_actor: %.2f us CPU per document (%zu bytes each), 1M x 1M crowd\n", us, bytes / N);
    CHECK(ok, "wf_actor renders %d documents of a 1M x 1M crowd", N);
    /* Bounds with room for a loaded machine: a few us is the aim, jansson took ~30. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
    const double bound = 2000.0; /* ASan+UBSan: tens of us */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
    const double bound = 2000.0;
#else
    const double bound = 50.0;
#endif
#else
    const double bound = 50.0;
#endif
    CHECK(us < bound, "wf_actor under %.0f us per document (%.2f)", bound, us);

    struct wf_route r;
    int routed = 0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (int k = 0; k < 10 * N; k++)
        routed += wf_route(&c, "flood987654.test:8443", "/users/user123456/notes/42", &r) == 0;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    double ns =
        ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (10.0 * N);
    printf("# wf_route: %.0f ns CPU per request\n", ns);
    CHECK(routed == 10 * N, "wf_route routes every request of a 1M x 1M crowd");
}

int main(void)
{
    test_crowd_check();
    test_naming();
    test_instance_of_host();
    test_route();
    test_webfinger();
    test_accept();
    test_round_trip();
    test_docs_misc();
    test_actor_speed();
    return check_done();
}

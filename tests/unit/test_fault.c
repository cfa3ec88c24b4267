/* tests/unit/test_fault.c: --fault SPEC parsing (each accepted spec has a refused twin),
 * selector resolution against a crowd, scopes, and the share of a random fault. */
#include <stdio.h>
#include <string.h>

#include "flood/crowd/fault.h"
#include "tests/check.h"

static int parses(const char *spec, struct fault_rule *r)
{
    struct flood_err e = {0};
    return fault_parse(spec, r, &e) == 0;
}

/* The error text of a refused spec ("" when it parses). */
static const char *refusal(const char *spec)
{
    static struct flood_err e;
    struct fault_rule r;
    memset(&e, 0, sizeof(e));
    if (fault_parse(spec, &r, &e) == 0)
        return "";
    return e.msg;
}

static void test_parse(void)
{
    struct fault_rule r;
    CHECK(parses("flood3:delay=500ms", &r) && r.delay_ms == 500 && r.share_ppm == 1000000 &&
              r.scope == FAULT_SCOPE_ALL && !strcmp(r.sel, "flood3"),
          "delay=500ms: 500 ms, share 100%%, scope all");
    CHECK(!parses("flood3:delay=500", &r), "delay without a unit is refused");
    CHECK(parses("flood3:delay=2s", &r) && r.delay_ms == 2000, "delay=2s is 2000 ms");
    CHECK(parses("flood3:delay=1.5s", &r) && r.delay_ms == 1500, "delay=1.5s is 1500 ms");
    CHECK(!parses("flood3:delay=1.s", &r), "delay=1.s is refused");
    CHECK(!parses("flood3:delay=3601s", &r), "delay over an hour is refused");
    CHECK(!parses("flood3:delay=-5ms", &r), "a negative delay is refused");

    CHECK(parses("flood4:status=503,share=20%,retry-after=30", &r) && r.status == 503 &&
              r.share_ppm == 200000 && r.retry_after == 30,
          "status=503,share=20%%,retry-after=30");
    CHECK(!parses("flood4:status=200", &r), "status=200 is refused (not an error status)");
    CHECK(!parses("flood4:status=5031", &r), "status=5031 is refused");
    CHECK(parses("flood4:status=429,share=0.5%", &r) && r.share_ppm == 5000, "share=0.5%%");
    CHECK(!parses("flood4:status=429,share=101%", &r), "share=101%% is refused");
    CHECK(!parses("flood4:status=429,share=0%", &r), "share=0%% is refused");
    CHECK(!parses("flood4:status=429,share=x", &r), "share=x is refused");
    CHECK(!parses("flood4:retry-after=30", &r), "retry-after without a status is refused");
    CHECK(!parses("flood4:status=503,retry-after=soon", &r), "retry-after=soon is refused");

    CHECK(parses("flood5:reset", &r) && r.reset && !r.hang, "reset");
    CHECK(!parses("flood5:reset=1", &r), "reset=1 is refused (a flag)");
    CHECK(parses("flood6:hang", &r) && r.hang, "hang");
    CHECK(!parses("flood6:hang,reset", &r), "hang and reset together are refused");
    CHECK(!parses("flood6:hang,status=503", &r), "hang with a status is refused");
    CHECK(parses("flood7:gone", &r) && r.status == 410, "gone is status 410");
    CHECK(!parses("flood7:gone,status=503", &r), "gone with another status is refused");

    CHECK(parses("flood3:delay=100ms,scope=get", &r) && r.scope == FAULT_SCOPE_GET, "scope=get");
    CHECK(parses("flood3:delay=100ms,scope=inbox", &r) && r.scope == FAULT_SCOPE_INBOX,
          "scope=inbox");
    CHECK(parses("flood3:hang,scope=all+nodeinfo", &r) &&
              r.scope == (FAULT_SCOPE_ALL | FAULT_SCOPE_NODEINFO),
          "scope=all+nodeinfo");
    CHECK(parses("flood3:hang,scope=nodeinfo", &r) && r.scope == FAULT_SCOPE_NODEINFO,
          "scope=nodeinfo");
    CHECK(!parses("flood3:hang,scope=post", &r), "scope=post is refused");
    CHECK(parses("flood3:delay=2s,scope=media", &r) && r.scope == FAULT_SCOPE_MEDIA, "scope=media");
    CHECK(parses("flood3:status=503,scope=actor+key+webfinger", &r) &&
              r.scope == (FAULT_SCOPE_ACTOR | FAULT_SCOPE_KEY | FAULT_SCOPE_WEBFINGER),
          "scope=actor+key+webfinger");
    CHECK(parses("flood3:hang,scope=note+link+emoji+avatar+collection", &r) &&
              r.scope == (FAULT_SCOPE_NOTE | FAULT_SCOPE_LINK | FAULT_SCOPE_EMOJI |
                          FAULT_SCOPE_AVATAR | FAULT_SCOPE_COLLECTION),
          "scope=note+link+emoji+avatar+collection");
    CHECK(parses("flood3:hang,scope=inbox+media", &r) &&
              r.scope == (FAULT_SCOPE_INBOX | FAULT_SCOPE_MEDIA),
          "scope=inbox+media");
    CHECK(!parses("flood3:hang,scope=medias", &r) && !parses("flood3:hang,scope=Media", &r) &&
              !parses("flood3:hang,scope=media+", &r) && !parses("flood3:hang,scope=+media", &r),
          "scope=medias, Media, media+, +media are refused");
    CHECK(!parses("flood3:hang,scope=get+", &r), "scope=get+ is refused");
    CHECK(parses("flood3:jitter=100ms", &r) && r.jitter_ms == 100, "jitter alone is an effect");

    CHECK_STR(refusal("flood3:x=1"), "fault: unknown key 'x' in 'flood3:x=1'",
              "unknown key message");
    CHECK_STR(refusal("flood3"), "fault: expected INSTANCE:KEY=VAL in 'flood3'",
              "missing colon message");
    CHECK_STR(refusal("flood3:share=50%"),
              "fault: no effect (delay, jitter, status, gone, reset or hang) in "
              "'flood3:share=50%'",
              "no effect message");
    CHECK_STR(refusal("flood3:delay=1s,delay=2s"),
              "fault: key 'delay' given twice in 'flood3:delay=1s,delay=2s'", "repeat message");
    CHECK(*refusal(":hang"), "an empty instance is refused");
    CHECK(*refusal("flood3:"), "no KEY=VAL is refused");
    CHECK(*refusal("flood3:hang,,delay=1s"), "an empty item is refused");
    CHECK(*refusal("flo/od3:hang"), "a bad instance character is refused");
    CHECK(*refusal("flood3:delay="), "an empty value is refused");
}

static void test_resolve(void)
{
    struct wf_crowd c = {.instances = 20,
                         .actors = 10,
                         .domain_template = "flood%d.test",
                         .scheme = "http",
                         .version = "0.1.0"};
    struct fault_rule r;
    struct flood_err e = {0};
    CHECK(parses("flood3:hang", &r) && fault_rule_resolve(&r, &c, &e) == 0 && r.first == 3 &&
              r.last == 3,
          "flood3 is instance 3");
    CHECK(parses("flood3.test:hang", &r) && fault_rule_resolve(&r, &c, &e) == 0 && r.first == 3 &&
              r.last == 3,
          "flood3.test is instance 3");
    CHECK(parses("FLOOD12:hang", &r) && fault_rule_resolve(&r, &c, &e) == 0 && r.first == 12,
          "labels are case-insensitive");
    CHECK(parses("flood3-flood7:hang", &r) && fault_rule_resolve(&r, &c, &e) == 0 && r.first == 3 &&
              r.last == 7,
          "flood3-flood7 is 3..7");
    CHECK(parses("all:hang", &r) && fault_rule_resolve(&r, &c, &e) == 0 && r.first == 1 &&
              r.last == 20,
          "all is 1..20");
    CHECK(parses("flood21:hang", &r) && fault_rule_resolve(&r, &c, &e) < 0 &&
              !strcmp(e.msg, "fault: no instance 'flood21' in the crowd (in 'flood21:hang')"),
          "flood21 is not in a crowd of 20");
    CHECK(parses("flood7-flood3:hang", &r) && fault_rule_resolve(&r, &c, &e) < 0,
          "a backwards range is refused");
    CHECK(parses("other.test:hang", &r) && fault_rule_resolve(&r, &c, &e) < 0,
          "a host outside the crowd is refused");

    struct wf_crowd dash = c;
    dash.domain_template = "a-%d.test";
    CHECK(parses("a-2-a-4:hang", &r) && fault_rule_resolve(&r, &dash, &e) == 0 && r.first == 2 &&
              r.last == 4,
          "a range of labels holding '-' (a-2-a-4)");
}

static void test_scope_and_decide(void)
{
    CHECK(fault_scope_of("GET", WF_ROUTE_NODEINFO_20, "/nodeinfo/2.0") == FAULT_SCOPE_NODEINFO,
          "NodeInfo is its own scope");
    CHECK(fault_scope_of("GET", WF_ROUTE_NONE, "/.well-known/nodeinfo") == FAULT_SCOPE_NODEINFO,
          "the NodeInfo well-known path too");
    CHECK(fault_scope_of("POST", WF_ROUTE_SHARED_INBOX, "/inbox") == FAULT_SCOPE_INBOX,
          "POST /inbox is inbox");
    CHECK(fault_scope_of("GET", WF_ROUTE_ACTOR, "/users/user1") ==
              (FAULT_SCOPE_GET | FAULT_SCOPE_ACTOR),
          "GET of an actor is get and actor");
    static const struct {
        enum wf_route_kind kind;
        unsigned bit;
        const char *what;
    } kinds[] = {
        {WF_ROUTE_WEBFINGER, FAULT_SCOPE_WEBFINGER, "webfinger"},
        {WF_ROUTE_HOST_META, FAULT_SCOPE_WEBFINGER, "host-meta is webfinger"},
        {WF_ROUTE_KEY, FAULT_SCOPE_KEY, "key"},
        {WF_ROUTE_NOTE, FAULT_SCOPE_NOTE, "note"},
        {WF_ROUTE_ACTIVITY, FAULT_SCOPE_NOTE, "activity is note"},
        {WF_ROUTE_MEDIA, FAULT_SCOPE_MEDIA, "media"},
        {WF_ROUTE_PAGE, FAULT_SCOPE_LINK, "page is link"},
        {WF_ROUTE_EMOJI, FAULT_SCOPE_EMOJI, "emoji"},
        {WF_ROUTE_EMOJI_DOC, FAULT_SCOPE_EMOJI, "an Emoji object is emoji"},
        {WF_ROUTE_AVATAR, FAULT_SCOPE_AVATAR, "avatar"},
        {WF_ROUTE_HEADER, FAULT_SCOPE_AVATAR, "header is avatar"},
        {WF_ROUTE_FOLLOWERS, FAULT_SCOPE_COLLECTION, "followers is collection"},
        {WF_ROUTE_OUTBOX, FAULT_SCOPE_COLLECTION, "outbox is collection"},
        {WF_ROUTE_INBOX, FAULT_SCOPE_COLLECTION, "GET of an inbox is collection"},
    };
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        CHECK(fault_scope_of("GET", kinds[i].kind, "/x") == (FAULT_SCOPE_GET | kinds[i].bit) &&
                  fault_scope_of("HEAD", kinds[i].kind, "/x") == (FAULT_SCOPE_GET | kinds[i].bit),
              "GET/HEAD scope: %s", kinds[i].what);
    }
    CHECK(fault_scope_of("GET", WF_ROUTE_NONE, "/nothing") == FAULT_SCOPE_GET,
          "GET of an unknown path is get alone");
    CHECK(fault_scope_of("POST", WF_ROUTE_MEDIA, "/media/1-1x1-72.png") == FAULT_SCOPE_OTHER,
          "POST to media is other, not media");

    /* scope=media slows media only */
    struct fault_rule media;
    struct fault_effect me;
    CHECK(parses("all:delay=2s,scope=media", &media), "scope=media parses");
    media.first = 1;
    media.last = 20;
    CHECK(fault_decide(&media, 1, 3, fault_scope_of("GET", WF_ROUTE_MEDIA, "/m"), 0, &me) &&
              me.delay_ms == 2000,
          "scope=media: a media GET is delayed");
    CHECK(
        !fault_decide(&media, 1, 3, fault_scope_of("GET", WF_ROUTE_ACTOR, "/users/user1"), 0, &me),
        "scope=media: an actor GET is not");
    CHECK(!fault_decide(&media, 1, 3, FAULT_SCOPE_INBOX, 0, &me),
          "scope=media: an inbox POST is not");
    CHECK(!fault_decide(&media, 1, 3, FAULT_SCOPE_NODEINFO, 0, &me),
          "scope=media: NodeInfo is not");
    CHECK(fault_scope_of("POST", WF_ROUTE_ACTOR, "/users/user1") == FAULT_SCOPE_OTHER,
          "POST to an actor is other");

    struct wf_crowd c = {.instances = 20,
                         .actors = 10,
                         .domain_template = "flood%d.test",
                         .scheme = "http",
                         .version = "0.1.0"};
    struct fault_rule rules[2];
    struct flood_err e = {0};
    struct fault_effect eff;
    CHECK(parses("flood3:delay=100ms,scope=inbox", &rules[0]) &&
              fault_rule_resolve(&rules[0], &c, &e) == 0,
          "rule 1");
    CHECK(parses("flood3-flood4:status=503,retry-after=7", &rules[1]) &&
              fault_rule_resolve(&rules[1], &c, &e) == 0,
          "rule 2");
    CHECK(fault_decide(rules, 2, 3, FAULT_SCOPE_INBOX, 0, &eff) && eff.delay_ms == 100 &&
              eff.status == 503 && eff.retry_after == 7,
          "both rules apply to an inbox POST on flood3");
    CHECK(fault_decide(rules, 2, 3, FAULT_SCOPE_GET, 0, &eff) && eff.delay_ms == 0 &&
              eff.status == 503,
          "only the status applies to a GET on flood3");
    CHECK(!fault_decide(rules, 2, 3, FAULT_SCOPE_NODEINFO, 0, &eff),
          "NodeInfo stays healthy under scope all");
    CHECK(!fault_decide(rules, 2, 5, FAULT_SCOPE_INBOX, 0, &eff), "flood5 has no fault");

    /* the share: 20% of 100,000 draws, within 4 standard deviations (sd = 126.5) */
    struct fault_rule s;
    CHECK(parses("all:status=503,share=20%", &s) && fault_rule_resolve(&s, &c, &e) == 0,
          "share rule");
    fault_seed(42);
    int hits = 0;
    for (int i = 0; i < 100000; i++)
        hits += fault_decide(&s, 1, 1, FAULT_SCOPE_GET, 0, &eff);
    CHECK(hits > 20000 - 506 && hits < 20000 + 506, "share=20%% fires %d times in 100000", hits);

    struct fault_rule j;
    CHECK(parses("all:delay=100ms,jitter=50ms", &j) && fault_rule_resolve(&j, &c, &e) == 0,
          "jitter rule");
    long lo = 1000000, hi = -1;
    for (int i = 0; i < 10000; i++) {
        fault_decide(&j, 1, 1, FAULT_SCOPE_GET, 0, &eff);
        lo = eff.delay_ms < lo ? eff.delay_ms : lo;
        hi = eff.delay_ms > hi ? eff.delay_ms : hi;
    }
    CHECK(lo >= 100 && hi <= 150 && hi - lo > 40, "jittered delays lie in 100..150 (%ld..%ld)", lo,
          hi);
}

/* The keys the grammar reads, each with a refused twin whose message names the key and the
 * forms accepted; and the windows (from=, until=). */
static void test_grammar_and_windows(void)
{
    struct fault_rule r;
    CHECK(parses("flood3:delay=2m", &r) && r.delay_ms == 120000, "delay=2m (the grammar's units)");
    CHECK(parses("flood3:delay=250us,jitter=1ms", &r) && r.delay_ms == 0 &&
              !parses("flood3:delay=0s", &r),
          "delay=250us rounds to 0 ms; a delay of 0 alone is no effect");
    CHECK(strstr(refusal("flood3:delay=500"), "fault 'delay': expected a duration") &&
              strstr(refusal("flood3:delay=500"), "500ms") &&
              strstr(refusal("flood3:delay=500"), "got '500' in 'flood3:delay=500'"),
          "delay=500 refused naming the key, the forms and the spec: %s",
          refusal("flood3:delay=500"));
    CHECK(strstr(refusal("flood3:jitter=1x"), "fault 'jitter': expected a duration"),
          "jitter=1x refused naming the key");
    CHECK(strstr(refusal("flood4:status=200"), "fault 'status': expected a whole number from 400 "
                                               "to 599"),
          "status=200 refused with its range: %s", refusal("flood4:status=200"));
    CHECK(strstr(refusal("flood4:status=503,retry-after=soon"),
                 "fault 'retry-after': expected a whole number from 0 to 86400"),
          "retry-after=soon refused with its range");
    CHECK(parses("flood4:status=429,share=20", &r) && r.share_ppm == 200000,
          "share=20 is 20%% (a plain number is percent)");
    CHECK(parses("flood4:status=429,share=0.0001%", &r) && r.share_ppm == 1,
          "share=0.0001%% is one in a million");
    CHECK(strstr(refusal("flood4:status=429,share=101%"), "fault 'share': expected a share") &&
              strstr(refusal("flood4:status=429,share=101%"), "20%"),
          "share=101%% refused naming the key and the forms: %s",
          refusal("flood4:status=429,share=101%"));
    CHECK(strstr(refusal("flood3:hang,scope=medias"), "fault 'scope' (joined with '+'): expected "
                                                      "one of get, inbox, all"),
          "scope=medias refused listing the scopes: %s", refusal("flood3:hang,scope=medias"));
    CHECK(strstr(refusal("flood3:hang,scope=media+"), "got ''"),
          "scope=media+ refused for its empty item");

    CHECK(parses("flood3:status=503,from=30s,until=90s", &r) && r.from_ms == 30000 &&
              r.until_ms == 90000,
          "from=30s,until=90s");
    CHECK(parses("flood3:hang,from=1.5m", &r) && r.from_ms == 90000 && r.until_ms == 0,
          "from=1.5m with no end");
    CHECK(parses("flood3:hang,until=10s", &r) && r.from_ms == 0 && r.until_ms == 10000,
          "until=10s from the start");
    CHECK(strstr(refusal("flood3:hang,from=30"), "fault 'from': expected a duration"),
          "from=30 (no unit) refused naming the key: %s", refusal("flood3:hang,from=30"));
    CHECK(strstr(refusal("flood3:hang,until=0s"), "fault 'until': expected a duration from 1ms"),
          "until=0s refused: %s", refusal("flood3:hang,until=0s"));
    CHECK(strstr(refusal("flood3:hang,from=90s,until=30s"),
                 "'until' (30000 ms) must come after 'from' (90000 ms)"),
          "until before from refused: %s", refusal("flood3:hang,from=90s,until=30s"));
    CHECK(strstr(refusal("flood3:hang,from=8d"), "fault 'from'"), "from=8d refused");
    CHECK(*refusal("flood3:hang,from=1s,from=2s"), "from given twice refused");
    CHECK(*refusal("flood3:hang,from"), "from without a value refused");

    struct wf_crowd c = {.instances = 4,
                         .actors = 1,
                         .domain_template = "flood%d.test",
                         .scheme = "http",
                         .version = "0.1.0"};
    struct flood_err e = {0};
    struct fault_effect eff;
    CHECK(parses("flood2:status=503,retry-after=5,from=10s,until=20s", &r) &&
              fault_rule_resolve(&r, &c, &e) == 0,
          "a windowed rule resolves");
    CHECK(!fault_decide(&r, 1, 2, FAULT_SCOPE_INBOX, 9999, &eff), "not yet at 9.999 s");
    CHECK(fault_decide(&r, 1, 2, FAULT_SCOPE_INBOX, 10000, &eff) && eff.status == 503 &&
              eff.retry_after == 5,
          "active from 10 s");
    CHECK(fault_decide(&r, 1, 2, FAULT_SCOPE_INBOX, 19999, &eff), "active at 19.999 s");
    CHECK(!fault_decide(&r, 1, 2, FAULT_SCOPE_INBOX, 20000, &eff), "over at 20 s (until is out)");
    CHECK(fault_active(&r, 15000) && !fault_active(&r, 25000), "fault_active follows the window");
}

int main(void)
{
    test_parse();
    test_grammar_and_windows();
    test_resolve();
    test_scope_and_decide();
    return check_done();
}

/* tests/unit/test_core.c: the helpers of flood/core/ every room shares: the clocks, the hash,
 * HTML escaping, listening addresses, JSON paths and the bounded fetch. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flood/core/clock.h"
#include "flood/core/hash.h"
#include "flood/core/html.h"
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

int main(void)
{
    test_clock();
    test_hash();
    test_html();
    return check_done();
}

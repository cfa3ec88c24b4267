/* tests/unit/test_grammar.c: the value grammar (flood/core/grammar.h), as tables: every form
 * the docs show with the value it must give, and its refused twins with the message. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "flood/core/grammar.h"
#include "tests/check.h"

static const struct {
    const char *text;
    enum gram_bare bare;
    double seconds; /* < 0: refused */
} durations[] = {
    {"30", GRAM_BARE_SECONDS, 30},
    {"30s", GRAM_BARE_SECONDS, 30},
    {"500ms", GRAM_BARE_SECONDS, 0.5},
    {"2m", GRAM_BARE_SECONDS, 120},
    {"1h", GRAM_BARE_SECONDS, 3600},
    {"1.5s", GRAM_BARE_SECONDS, 1.5},
    {"250us", GRAM_BARE_SECONDS, 250e-6},
    {"0", GRAM_BARE_SECONDS, 0},
    {"300", GRAM_BARE_MS, 0.3},
    {"300", GRAM_BARE_NONE, -1},
    {"2s", GRAM_BARE_NONE, 2},
    {"1.5m", GRAM_BARE_NONE, 90},
    {"abc", GRAM_BARE_SECONDS, -1},
    {"", GRAM_BARE_SECONDS, -1},
    {"-1s", GRAM_BARE_SECONDS, -1},
    {" 1s", GRAM_BARE_SECONDS, -1},
    {"1 s", GRAM_BARE_SECONDS, -1},
    {"1sec", GRAM_BARE_SECONDS, -1},
    {"1e3", GRAM_BARE_SECONDS, -1},
    {"inf", GRAM_BARE_SECONDS, -1},
    {"nan", GRAM_BARE_SECONDS, -1},
    {"1.s", GRAM_BARE_SECONDS, -1},
    {"169h", GRAM_BARE_SECONDS, -1}, /* over the week bound of the test */
};

static void test_durations(void)
{
    for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
        struct flood_err e = {0};
        double v = -7;
        int rc = gram_duration("--test", durations[i].text, GRAM_NUL, durations[i].bare, 0,
                               7 * 86400, &v, &e);
        if (durations[i].seconds >= 0)
            CHECK(rc == 0 && fabs(v - durations[i].seconds) < 1e-9, "duration '%s' is %g s",
                  durations[i].text, durations[i].seconds);
        else
            CHECK(rc == -1 && v == -7 && strstr(e.msg, "--test: expected a duration") &&
                      strstr(e.msg, "got '"),
                  "duration '%s' refused: %s", durations[i].text, e.msg);
    }
    struct flood_err e = {0};
    double v;
    CHECK(gram_duration("--timeout", "0.5ms", GRAM_NUL, GRAM_BARE_SECONDS, 0.001, 60, &v, &e) ==
                  -1 &&
              strstr(e.msg, "from 1ms to 1m"),
          "below the lower bound, the bounds named: %s", e.msg);
    CHECK(gram_duration("--timeout", "1ms", GRAM_NUL, GRAM_BARE_SECONDS, 0.001, 60, &v, &e) == 0,
          "exactly the lower bound");
    long ms = 0;
    CHECK(gram_duration_ms("delay", "1.5s", GRAM_NUL, GRAM_BARE_NONE, 0, 600000, &ms, &e) == 0 &&
              ms == 1500,
          "1.5s in ms");
    CHECK(gram_duration("d", "2s,x", 2, GRAM_BARE_NONE, 0, 10, &v, &e) == 0 && v == 2,
          "a span inside a longer text");
}

static void test_sizes(void)
{
    static const struct {
        const char *text;
        double bytes; /* < 0: refused */
    } t[] = {
        {"300", 300},     {"300k", 300e3}, {"300K", 300e3},   {"1.5m", 1.5e6},
        {"2M", 2e6},      {"1g", 1e9},     {"2MiB", 2 << 20}, {"1kib", 1024},
        {"300kB", 300e3}, {"100b", 100},   {"k", -1},         {"1x", -1},
        {"-1", -1},       {"5e3", -1},     {"99", -1}, /* under 100 */
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct flood_err e = {0};
        uint64_t v = 7;
        int rc = gram_size("media-size", t[i].text, GRAM_NUL, 100, 40ULL << 30, &v, &e);
        if (t[i].bytes >= 0)
            CHECK(rc == 0 && v == (uint64_t)t[i].bytes, "size '%s' is %.0f", t[i].text, t[i].bytes);
        else
            CHECK(rc == -1 && v == 7 && strstr(e.msg, "media-size: expected a size"),
                  "size '%s' refused: %s", t[i].text, e.msg);
    }
}

static void test_shares(void)
{
    static const struct {
        const char *text;
        enum gram_share_bare bare;
        double v; /* < 0: refused */
    } t[] = {
        {"20%", GRAM_SHARE_PERCENT, 0.2},    {"20", GRAM_SHARE_PERCENT, 0.2},
        {"0.5%", GRAM_SHARE_PERCENT, 0.005}, {"100%", GRAM_SHARE_PERCENT, 1},
        {"0.2", GRAM_SHARE_FRACTION, 0.2},   {"8%", GRAM_SHARE_FRACTION, 0.08},
        {"101%", GRAM_SHARE_PERCENT, -1},    {"2", GRAM_SHARE_FRACTION, -1},
        {"%", GRAM_SHARE_PERCENT, -1},       {"20%%", GRAM_SHARE_PERCENT, -1},
        {"-5%", GRAM_SHARE_PERCENT, -1},     {"x", GRAM_SHARE_PERCENT, -1},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct flood_err e = {0};
        double v = -7;
        int rc = gram_share("--share", t[i].text, GRAM_NUL, t[i].bare, 0, 1, &v, &e);
        if (t[i].v >= 0)
            CHECK(rc == 0 && fabs(v - t[i].v) < 1e-12, "share '%s' is %g", t[i].text, t[i].v);
        else
            CHECK(rc == -1 && v == -7 && strstr(e.msg, "--share: expected a share"),
                  "share '%s' refused: %s", t[i].text, e.msg);
    }
    /* a relative share may pass the whole where the caller says so (--expect's 110%) */
    struct flood_err e = {0};
    double v = -7;
    CHECK(gram_share("--expect", "110%", GRAM_NUL, GRAM_SHARE_PERCENT, 0, 100, &v, &e) == 0 &&
              fabs(v - 1.1) < 1e-12,
          "110%% with a bound of 10000%%");
    CHECK(gram_share("--expect", "20000%", GRAM_NUL, GRAM_SHARE_PERCENT, 0, 100, &v, &e) == -1 &&
              strstr(e.msg, "from 0% to 10000%"),
          "and over that bound refused: %s", e.msg);
}

static void test_rates(void)
{
    static const struct {
        const char *text;
        double v; /* < 0: refused */
    } t[] = {
        {"300", 300},    {"300/s", 300},  {"1.5k", 1500}, {"1500/m", 25},
        {"90000/h", 25}, {"0.5", 0.5},    {"0", -1},      {"-3", -1},
        {"3/d", -1},     {"2000001", -1}, {"1e3", -1},    {"", -1},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct flood_err e = {0};
        double v = -7;
        int rc = gram_rate("--rate", t[i].text, GRAM_NUL, 2e6, &v, &e);
        if (t[i].v >= 0)
            CHECK(rc == 0 && fabs(v - t[i].v) < 1e-9, "rate '%s' is %g/s", t[i].text, t[i].v);
        else
            CHECK(rc == -1 && v == -7 && strstr(e.msg, "--rate: expected a rate"),
                  "rate '%s' refused: %s", t[i].text, e.msg);
    }
}

static void test_numbers(void)
{
    struct flood_err e = {0};
    uint64_t u = 0, a = 0, b = 0;
    double d = 0;
    CHECK(gram_uint("--n", "42", GRAM_NUL, 1, 100, &u, &e) == 0 && u == 42, "42");
    CHECK(gram_uint("--n", "18446744073709551615", GRAM_NUL, 0, UINT64_MAX, &u, &e) == 0 &&
              u == UINT64_MAX,
          "the largest u64");
    CHECK(gram_uint("--n", "18446744073709551616", GRAM_NUL, 0, UINT64_MAX, &u, &e) == -1,
          "one past it refused");
    CHECK(gram_uint("--n", "0", GRAM_NUL, 1, 100, &u, &e) == -1 &&
              strstr(e.msg, "--n: expected a whole number from 1 to 100, got '0'"),
          "below the range: %s", e.msg);
    CHECK(gram_uint("--n", "+1", GRAM_NUL, 0, 100, &u, &e) == -1, "a sign refused");
    CHECK(gram_uint("--n", "1.0", GRAM_NUL, 0, 100, &u, &e) == -1, "a fraction refused");
    CHECK(gram_real("--x", "0.001", GRAM_NUL, 0.001, 1e6, &d, &e) == 0 && d == 0.001, "0.001");
    CHECK(gram_real("--x", "1e6", GRAM_NUL, 0, 1e7, &d, &e) == -1, "an exponent refused");
    CHECK(gram_uint_range("mentions", "1-4", GRAM_NUL, 0, 10, &a, &b, &e) == 0 && a == 1 && b == 4,
          "a range");
    CHECK(gram_uint_range("mentions", "3", GRAM_NUL, 0, 10, &a, &b, &e) == 0 && a == 3 && b == 3,
          "a one-number range");
    CHECK(gram_uint_range("mentions", "4-1", GRAM_NUL, 0, 10, &a, &b, &e) == -1 &&
              strstr(e.msg, "A <= B"),
          "a reversed range refused: %s", e.msg);
    CHECK(gram_uint_range("mentions", "1-", GRAM_NUL, 0, 10, &a, &b, &e) == -1, "1- refused");
    static const char *const names[] = {"constant", "poisson"};
    int k = -1;
    CHECK(gram_keyword("--arrival", "poisson", GRAM_NUL, names, 2, &k, &e) == 0 && k == 1,
          "a keyword");
    CHECK(gram_keyword("--arrival", "poiss", GRAM_NUL, names, 2, &k, &e) == -1 &&
              strstr(e.msg, "one of constant, poisson"),
          "a prefix refused, every name listed: %s", e.msg);
}

static void test_lists(void)
{
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, "create=70,like=20,follow", GRAM_NUL, ',');
    CHECK(gram_list_next(&l, &it) && gram_eq(it.key, it.key_n, "create") &&
              gram_eq(it.val, it.val_n, "70"),
          "first item split at '='");
    CHECK(gram_list_next(&l, &it) && gram_eq(it.key, it.key_n, "like"), "second item");
    CHECK(gram_list_next(&l, &it) && gram_eq(it.key, it.key_n, "follow") && !it.val,
          "an item without '=' has no value");
    CHECK(!gram_list_next(&l, &it), "then the end");
    gram_list_init(&l, "a,,b,", GRAM_NUL, ',');
    int n = 0, empty = 0;
    while (gram_list_next(&l, &it))
        n++, empty += it.n == 0;
    CHECK(n == 4 && empty == 2, "empty items are returned for the caller to refuse");
    gram_list_init(&l, "", GRAM_NUL, ',');
    CHECK(!gram_list_next(&l, &it), "an empty text is no items");
    gram_list_init(&l, "get+media", 9, '+');
    CHECK(gram_list_next(&l, &it) && gram_eq(it.s, it.n, "get") && gram_list_next(&l, &it) &&
              gram_eq(it.s, it.n, "media") && !gram_list_next(&l, &it),
          "another separator");
    gram_list_init(&l, "k=a=b", GRAM_NUL, ',');
    CHECK(gram_list_next(&l, &it) && gram_eq(it.val, it.val_n, "a=b"), "the value keeps later '='");
}

int main(void)
{
    test_durations();
    test_sizes();
    test_shares();
    test_rates();
    test_numbers();
    test_lists();
    return check_done();
}

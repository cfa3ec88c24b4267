/* tests/unit/test_hist.c: the log-linear histogram against exact answers computed from the
 * raw samples (sorted), for several distributions; exact merging; clamping; the .hgrm text
 * read back. Percentile rank, as HdrHistogram defines it: round(p/100 * n), at least 1;
 * the claimed precision is 0 <= got - exact <= max(1 us, exact / 1000). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flood/measure/hist.h"
#include "tests/check.h"

/* xorshift64*: deterministic samples, independent of libc's rand(). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static double rng_unit(void) /* (0, 1] */
{
    return ((double)(rng() >> 11) + 1.0) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The exact value at percentile p of sorted[0..n), by the rank rule above. */
static uint64_t exact_at(const uint64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    if (p <= 0.0)
        return sorted[0];
    if (p >= 100.0)
        return sorted[n - 1];
    uint64_t rank = (uint64_t)(p / 100.0 * (double)n + 0.5);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static int within(uint64_t got, uint64_t exact)
{
    if (got < exact)
        return 0;
    uint64_t d = got - exact;
    return d <= 1 || d * 1000 <= exact;
}

static const double pcts[] = {0,  0.1, 1,    10,   25,    50,     75, 90,
                              95, 99,  99.5, 99.9, 99.99, 99.999, 100};
#define N_PCTS (sizeof(pcts) / sizeof(pcts[0]))

enum dist { UNIFORM, EXPONENTIAL, BIMODAL, LOGUNIFORM, CONSTANT };
static const char *dist_name[] = {"uniform", "exponential", "bimodal", "log-uniform", "constant"};

static uint64_t draw(enum dist d)
{
    switch (d) {
    case UNIFORM: /* 0 .. 5 s */
        return rng() % 5000001;
    case EXPONENTIAL: /* mean 20 ms */
        return (uint64_t)(-log(rng_unit()) * 20000.0);
    case BIMODAL: /* 90% around 2 ms, 10% around 800 ms */
        if (rng() % 10)
            return 1500 + rng() % 1001;
        return 700000 + rng() % 200001;
    case LOGUNIFORM: /* 1 us .. 1000 s: every bucket */
        return (uint64_t)exp(rng_unit() * log(1e9));
    case CONSTANT:
        return 12345;
    }
    return 0;
}

/* Record n samples of d into whole (and alternately into a or b), then check percentiles,
 * min, max, mean against the sorted samples, and that a merged with b equals whole. */
static void check_distribution(enum dist d, size_t n)
{
    uint64_t *s = calloc(n ? n : 1, sizeof(*s));
    struct hist *whole = hist_new(), *a = hist_new(), *b = hist_new();
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        s[i] = draw(d);
        sum += s[i];
        hist_record(whole, s[i]);
        hist_record(rng() & 1 ? a : b, s[i]);
    }
    qsort(s, n, sizeof(*s), cmp_u64);
    const char *name = dist_name[d];

    CHECK(hist_count(whole) == n, "%s n=%zu: count", name, n);
    CHECK(hist_min(whole) == (n ? s[0] : 0), "%s n=%zu: min exact (%" PRIu64 ")", name, n,
          hist_min(whole));
    CHECK(hist_max(whole) == (n ? s[n - 1] : 0), "%s n=%zu: max exact (%" PRIu64 ")", name, n,
          hist_max(whole));
    double mean = n ? (double)sum / (double)n : 0.0;
    CHECK(fabs(hist_mean(whole) - mean) <= 1e-9 * (mean + 1), "%s n=%zu: mean exact (%.3f)", name,
          n, hist_mean(whole));

    int all_within = 1;
    for (size_t k = 0; k < N_PCTS; k++) {
        uint64_t got = hist_value_at_percentile(whole, pcts[k]);
        uint64_t want = exact_at(s, n, pcts[k]);
        if (!within(got, want)) {
            all_within = 0;
            printf("#   %s p%g: got %" PRIu64 ", exact %" PRIu64 "\n", name, pcts[k], got, want);
        }
    }
    CHECK(all_within, "%s n=%zu: %zu percentiles within 1/1000 of exact", name, n, N_PCTS);

    /* the text form keeps everything: decode(encode(x)) == x, and shards merge exactly */
    char *ta = hist_encode(a), *tb = hist_encode(b);
    struct hist *da = hist_new(), *db = hist_new();
    struct flood_err err = {0};
    int dec = hist_decode(da, ta, &err) == 0 && hist_decode(db, tb, &err) == 0;
    CHECK(dec && memcmp(da, a, sizeof(*a)) == 0 && memcmp(db, b, sizeof(*b)) == 0,
          "%s n=%zu: decode(encode(h)) equals h (%s)", name, n, dec ? "ok" : err.msg);
    hist_merge(da, db);
    CHECK(memcmp(da, whole, sizeof(*da)) == 0, "%s n=%zu: decoded shards merge to the whole", name,
          n);
    free(ta);
    free(tb);
    hist_free(da);
    hist_free(db);

    hist_merge(a, b);
    int same_pcts = 1;
    for (double p = 0.0; p <= 100.0; p += 0.5)
        same_pcts &= hist_value_at_percentile(a, p) == hist_value_at_percentile(whole, p);
    CHECK(memcmp(a, whole, sizeof(*a)) == 0, "%s n=%zu: merged halves equal whole (every count)",
          name, n);
    CHECK(same_pcts && hist_min(a) == hist_min(whole) && hist_max(a) == hist_max(whole),
          "%s n=%zu: merged halves give the same percentiles, min, max", name, n);

    hist_free(whole);
    hist_free(a);
    hist_free(b);
    free(s);
}

static void test_empty(void)
{
    struct hist h;
    hist_init(&h);
    CHECK(hist_count(&h) == 0 && hist_min(&h) == 0 && hist_max(&h) == 0 && hist_mean(&h) == 0.0,
          "empty: count, min, max, mean are 0");
    CHECK(hist_value_at_percentile(&h, 0) == 0 && hist_value_at_percentile(&h, 50) == 0 &&
              hist_value_at_percentile(&h, 100) == 0,
          "empty: percentiles are 0");
    size_t pos = 0;
    uint64_t lo, hi, c;
    CHECK(hist_next_bucket(&h, &pos, &lo, &hi, &c) == 0, "empty: no bucket");

    /* Negative twin: a merge of an empty histogram changes nothing, min stays unset. */
    struct hist *one = hist_new();
    hist_record(one, 7);
    hist_merge(one, &h);
    CHECK(hist_count(one) == 1 && hist_min(one) == 7 && hist_max(one) == 7,
          "merging an empty histogram changes nothing");
    hist_merge(&h, one);
    CHECK(hist_count(&h) == 1 && hist_min(&h) == 7, "merging into an empty histogram copies it");
    hist_free(one);
}

static void test_zero_and_small(void)
{
    struct hist h;
    hist_init(&h);
    hist_record(&h, 0);
    CHECK(hist_count(&h) == 1 && hist_min(&h) == 0 && hist_max(&h) == 0,
          "a 0 us sample is counted, min = max = 0");
    CHECK(hist_value_at_percentile(&h, 50) == 0 && hist_value_at_percentile(&h, 100) == 0,
          "a 0 us sample: percentiles 0");
    hist_record_n(&h, 5, 0);
    CHECK(hist_count(&h) == 1 && hist_max(&h) == 0, "record_n with n = 0 records nothing");

    /* Below 2048 us every value is its own bucket: exact. */
    hist_reset(&h);
    for (uint64_t v = 0; v < 2048; v++)
        hist_record(&h, v);
    int exact = 1;
    for (uint64_t v = 1; v <= 2048; v++)
        exact &= hist_value_at_percentile(&h, 100.0 * (double)v / 2048.0) == v - 1;
    CHECK(exact, "values 0..2047 come back exactly");

    hist_reset(&h);
    hist_record_n(&h, 1000, 3);
    hist_record_n(&h, 3000, 1);
    CHECK(hist_count(&h) == 4 && hist_value_at_percentile(&h, 75) == 1000 &&
              hist_value_at_percentile(&h, 90) == 3000,
          "record_n counts n samples (p75 = 1000, p90 = 3000)");
    CHECK(hist_mean(&h) == 1500.0, "record_n mean exact (1500)");
    CHECK(hist_value_at_percentile(&h, NAN) == 1000 && hist_value_at_percentile(&h, -5) == 1000 &&
              hist_value_at_percentile(&h, 250) == 3000,
          "out-of-range percentiles clamp to min / max");
}

static void test_one_sample(void)
{
    struct hist h;
    hist_init(&h);
    hist_record(&h, 123456789);
    int all = 1;
    for (size_t k = 0; k < N_PCTS; k++)
        all &= hist_value_at_percentile(&h, pcts[k]) == 123456789;
    CHECK(all, "one sample: every percentile is the sample itself (clipped to min/max)");
    CHECK(hist_min(&h) == 123456789 && hist_max(&h) == 123456789, "one sample: min = max");
}

static void test_clamp(void)
{
    struct hist h;
    hist_init(&h);
    hist_record(&h, HIST_MAX_VALUE);
    CHECK(hist_overflow(&h) == 0 && hist_max(&h) == HIST_MAX_VALUE,
          "the max value itself is no overflow");
    hist_record(&h, 600000000); /* 10 minutes */
    CHECK(hist_overflow(&h) == 0, "10 minutes is within range");
    CHECK(within(hist_value_at_percentile(&h, 50), 600000000),
          "10 minutes comes back within 1/1000 (%" PRIu64 ")", hist_value_at_percentile(&h, 50));
    hist_record(&h, HIST_MAX_VALUE + 1);
    hist_record(&h, UINT64_MAX);
    hist_record_n(&h, 1000000000000ull, 3);
    CHECK(hist_count(&h) == 7 && hist_overflow(&h) == 5,
          "values above the max: counted, overflow 5");
    CHECK(hist_max(&h) == HIST_MAX_VALUE && hist_value_at_percentile(&h, 100) == HIST_MAX_VALUE,
          "values above the max are clamped into the top bucket");
    CHECK(hist_value_at_percentile(&h, 99) == HIST_MAX_VALUE, "p99 of clamped samples is the max");

    struct hist g;
    hist_init(&g);
    hist_record(&g, UINT64_MAX);
    hist_merge(&g, &h);
    CHECK(hist_overflow(&g) == 6 && hist_count(&g) == 8, "merge adds overflow counts");
}

static void test_buckets(void)
{
    struct hist h, copy;
    hist_init(&h);
    hist_init(&copy);
    for (int i = 0; i < 20000; i++)
        hist_record(&h, draw(LOGUNIFORM));
    size_t pos = 0, n = 0;
    uint64_t lo, hi, c, sum = 0, prev_hi = 0;
    int ordered = 1, widths = 1;
    while (hist_next_bucket(&h, &pos, &lo, &hi, &c)) {
        ordered &= n == 0 || lo > prev_hi;
        /* bucket width: 1 below 2048, else at most lo / 1024 */
        widths &= lo < 2048 ? hi == lo : (hi - lo + 1) * 1024 <= lo;
        prev_hi = hi;
        sum += c;
        n++;
        hist_record_n(&copy, lo, c);
    }
    CHECK(ordered && sum == hist_count(&h), "buckets come in value order and sum to count");
    CHECK(widths, "bucket widths are at most 1/1024 of their value");
    CHECK(memcmp(copy.counts, h.counts, sizeof(h.counts)) == 0,
          "re-recording each bucket's low edge rebuilds the same counts");
}

struct hgrm_line {
    double value, pct, inv;
    uint64_t count;
    int fields;
};

/* Parse f as .hgrm text; returns the number of data lines (up to max), -1 on a bad line.
 * The footer's total count and max go to *total and *max. */
static int parse_hgrm(FILE *f, struct hgrm_line *out, int max, uint64_t *total, double *maxv,
                      int *buckets, int *subs)
{
    char line[512];
    int n = 0, header = 0;
    *total = UINT64_MAX;
    while (fgets(line, sizeof(line), f)) {
        if (!header) {
            char a[32], b[32], c[32], d[32];
            if (sscanf(line, "%31s %31s %31s %31s", a, b, c, d) != 4 || strcmp(a, "Value") ||
                strcmp(b, "Percentile") || strcmp(c, "TotalCount") || strcmp(d, "1/(1-Percentile)"))
                return -1;
            header = 1;
            continue;
        }
        if (line[0] == '\n')
            continue;
        if (line[0] == '#') {
            double m, s;
            uint64_t t;
            int b, sb;
            if (sscanf(line, "#[Max = %lf, Total count = %" SCNu64 "]", &m, &t) == 2) {
                *total = t;
                *maxv = m;
            } else if (sscanf(line, "#[Buckets = %d, SubBuckets = %d]", &b, &sb) == 2) {
                *buckets = b;
                *subs = sb;
            } else if (sscanf(line, "#[Mean = %lf, StdDeviation = %lf]", &m, &s) != 2) {
                return -1;
            }
            continue;
        }
        if (n >= max)
            return -1;
        struct hgrm_line *l = &out[n];
        l->fields = sscanf(line, "%lf %lf %" SCNu64 " %lf", &l->value, &l->pct, &l->count, &l->inv);
        if (l->fields < 3)
            return -1;
        n++;
    }
    return header ? n : -1;
}

static void test_hgrm(void)
{
    enum { N = 50000, MAXL = 4096 };
    uint64_t *s = malloc(N * sizeof(*s));
    struct hist *h = hist_new();
    for (int i = 0; i < N; i++) {
        s[i] = draw(i % 3 ? EXPONENTIAL : BIMODAL);
        hist_record(h, s[i]);
    }
    qsort(s, N, sizeof(*s), cmp_u64);
    struct hgrm_line *l = calloc(MAXL, sizeof(*l));

    FILE *f = tmpfile();
    CHECK(f && hist_write_hgrm(h, f, 1.0) == 0, "hgrm: written (unit us)");
    rewind(f);
    uint64_t total = 0;
    double maxv = 0;
    int buckets = 0, subs = 0;
    int n = parse_hgrm(f, l, MAXL, &total, &maxv, &buckets, &subs);
    fclose(f);
    CHECK(n > 10, "hgrm: parses (%d lines)", n);
    int mono = n > 0, last4 = 1, samples_ok = 1;
    for (int i = 1; i < n; i++)
        mono &= l[i].value >= l[i - 1].value && l[i].pct >= l[i - 1].pct &&
                l[i].count >= l[i - 1].count;
    for (int i = 0; i < n - 1; i++)
        last4 &= l[i].fields == 4 && fabs(l[i].inv - 1.0 / (1.0 - l[i].pct)) < 0.01;
    /* each line's value is the upper edge of the bucket holding the sample of rank
     * TotalCount: never below it, within 1/1000 above it */
    for (int i = 0; i < n; i++)
        samples_ok &= l[i].count >= 1 && l[i].count <= N &&
                      within((uint64_t)l[i].value, s[l[i].count - 1]) &&
                      (double)l[i].count / N >= l[i].pct - 1e-12;
    CHECK(mono, "hgrm: value, percentile and count columns are monotone");
    CHECK(last4, "hgrm: every line but the last has 1/(1-Percentile)");
    CHECK(samples_ok, "hgrm: each value matches the sorted sample at its TotalCount");
    CHECK(n > 0 && l[0].pct == 0.0 && l[n - 1].pct == 1.0 && l[n - 1].fields == 3,
          "hgrm: starts at percentile 0, ends at 1.0 with three columns");
    CHECK(n > 0 && l[n - 1].count == N && total == N, "hgrm: total count right (%" PRIu64 ")",
          total);
    CHECK(n > 0 && l[n - 1].value == (double)s[N - 1] && maxv == (double)s[N - 1],
          "hgrm: last value and footer max are the exact max");
    CHECK(buckets == HIST_BUCKETS && subs == 2048, "hgrm: buckets %d, sub-buckets %d", buckets,
          subs);

    /* milliseconds: the same lines divided by 1000 */
    f = tmpfile();
    CHECK(f && hist_write_hgrm(h, f, 1000.0) == 0, "hgrm: written (unit ms)");
    rewind(f);
    struct hgrm_line *m = calloc(MAXL, sizeof(*m));
    int nm = parse_hgrm(f, m, MAXL, &total, &maxv, &buckets, &subs);
    fclose(f);
    int scaled = nm == n;
    for (int i = 0; scaled && i < n; i++)
        scaled &= fabs(m[i].value * 1000.0 - l[i].value) < 0.5 && m[i].count == l[i].count;
    CHECK(scaled, "hgrm: unit_divisor 1000 scales every value");
    free(m);

    /* negative twins */
    struct hist e;
    hist_init(&e);
    f = tmpfile();
    CHECK(f && hist_write_hgrm(&e, f, 1000.0) == 0, "hgrm: empty histogram written");
    rewind(f);
    n = parse_hgrm(f, l, MAXL, &total, &maxv, &buckets, &subs);
    fclose(f);
    CHECK(n == 0 && total == 0, "hgrm: empty histogram has no lines and total count 0");
    errno = 0;
    CHECK(hist_write_hgrm(h, stdout, 0.0) == -1 && errno == EINVAL, "hgrm: unit 0 is EINVAL");
    f = fopen("/dev/full", "w");
    if (f) {
        CHECK(hist_write_hgrm(h, f, 1.0) == -1, "hgrm: a full device is an error (%s)",
              strerror(errno));
        fclose(f);
    }

    free(l);
    free(s);
    hist_free(h);
}

static void test_codec(void)
{
    struct hist h, d;
    struct flood_err err = {0};
    hist_init(&h);
    char *t = hist_encode(&h);
    CHECK_STR(t, "hist1 count=0 overflow=0 min=0 max=0 sum=0 buckets=", "encode: empty");
    CHECK(hist_decode(&d, t, &err) == 0 && memcmp(&d, &h, sizeof(h)) == 0, "decode: empty");
    free(t);
    hist_record(&h, 5);
    hist_record_n(&h, 3000, 2);
    hist_record(&h, UINT64_MAX);
    t = hist_encode(&h);
    /* 3000 lies in the slot [3000, 3001]; the clamped sample in the top slot's low edge */
    CHECK_STR(t,
              "hist1 count=4 overflow=1 min=5 max=1073741823 sum=1073747828 "
              "buckets=5:1,3000:2,1073217536:1",
              "encode: counts, min, max, sum, overflow and slot edges");
    CHECK(hist_decode(&d, t, &err) == 0 && memcmp(&d, &h, sizeof(h)) == 0, "decode: round trip");
    free(t);

    static const char *const bad[] = {
        "",
        "hist2 count=0 overflow=0 min=0 max=0 sum=0 buckets=",
        "hist1 count=1 overflow=0 min=5 max=5 sum=5 buckets=5:2",      /* counts do not add up */
        "hist1 count=1 overflow=0 min=5 max=5 sum=5 buckets=3001:1",   /* not a slot edge */
        "hist1 count=2 overflow=0 min=5 max=9 sum=14 buckets=9:1,5:1", /* out of order */
        "hist1 count=1 overflow=0 min=5 max=5 sum=5 buckets=5:0,5:1",  /* empty bucket */
        "hist1 count=1 overflow=0 min=4 max=5 sum=5 buckets=5:1",      /* min outside */
        "hist1 count=1 overflow=0 min=5 max=5 sum=6 buckets=5:1",      /* sum outside */
        "hist1 count=1 overflow=1 min=5 max=5 sum=5 buckets=5:1",      /* overflow below max */
        "hist1 count=1 overflow=0 min=5 max=5 sum=5 buckets=5:1,",     /* trailing comma */
        "hist1 count=1 overflow=0 min=5 max=5 sum=5 buckets=5:1 x",    /* trailing junk */
        "hist1 count=0 overflow=0 min=1 max=0 sum=0 buckets=",         /* empty with a min */
        "hist1 count=99999999999999999999 overflow=0 min=5 max=5 sum=5 buckets=5:1",
        "hist1 count=-1 overflow=0 min=5 max=5 sum=5 buckets=5:1",
        "hist1 count=1 overflow=0 min=5 max=5 sum=5 buckets=2000000000:1", /* beyond the max */
        "hist1 count=1 overflow=0 min=5 max=5 sum=5",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hist_record(&d, 77); /* must be emptied by the failed decode */
        int rc = hist_decode(&d, bad[i], &err);
        CHECK(rc == -1 && err.code == FLOOD_EINVAL && strncmp(err.msg, "hist: ", 6) == 0 &&
                  hist_count(&d) == 0,
              "decode refuses bad text %zu (%s)", i, err.msg);
    }
    CHECK(hist_decode(&d, NULL, &err) == -1, "decode refuses NULL");
}

int main(void)
{
    test_empty();
    test_zero_and_small();
    test_one_sample();
    test_clamp();
    test_buckets();
    test_codec();
    for (enum dist d = UNIFORM; d <= CONSTANT; d++)
        check_distribution(d, 100000);
    check_distribution(EXPONENTIAL, 1);
    check_distribution(BIMODAL, 7);
    check_distribution(UNIFORM, 0);
    test_hgrm();
    return check_done();
}

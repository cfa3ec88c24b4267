/* tests/tools/bench_hist.c: what the histogram costs. Prints nanoseconds per hist_record
 * (against a plain array increment as the reference, run alongside), per hist_merge and
 * per hist_value_at_percentile, and the size of a struct hist.
 *   bench_hist [samples]     default 50,000,000 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "flood/measure/hist.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Values spread over 1 us .. 1 s (log-uniform-ish), precomputed so the timing sees only
 * the histogram. */
static uint64_t *make_values(size_t n)
{
    uint64_t *v = malloc(n * sizeof(*v));
    if (!v)
        return NULL;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v[i] = (s & 0xFFFFF) >> (s >> 60); /* 20 bits, shifted down 0..15 */
    }
    return v;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 50000000;
    enum { NV = 1 << 16 };
    uint64_t *v = make_values(NV);
    uint64_t *plain = calloc(1 << 20, sizeof(*plain));
    struct hist *h = hist_new(), *g = hist_new();
    if (!v || !plain || n == 0) {
        fprintf(stderr, "bench_hist: out of memory or no samples\n");
        return 1;
    }

    double t0 = now_ns();
    for (size_t i = 0; i < n; i++)
        plain[v[i & (NV - 1)] & ((1 << 20) - 1)]++;
    double t_plain = (now_ns() - t0) / (double)n;

    t0 = now_ns();
    for (size_t i = 0; i < n; i++)
        hist_record(h, v[i & (NV - 1)]);
    double t_rec = (now_ns() - t0) / (double)n;

    int rounds = 2000;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++)
        hist_merge(g, h);
    double t_merge = (now_ns() - t0) / rounds;

    volatile uint64_t sink = 0;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++)
        sink += hist_value_at_percentile(h, 99.9);
    double t_pct = (now_ns() - t0) / rounds;

    printf("struct hist: %zu bytes (%d counts)\n", sizeof(struct hist), HIST_COUNTS_LEN);
    printf("record:      %.2f ns/sample (plain array increment: %.2f ns; ratio %.2f)\n", t_rec,
           t_plain, t_rec / t_plain);
    printf("merge:       %.1f us\n", t_merge / 1e3);
    printf("p99.9:       %.1f us (= %" PRIu64 " us of %" PRIu64 " samples)\n", t_pct / 1e3,
           hist_value_at_percentile(h, 99.9), hist_count(h));
    (void)sink;
    hist_free(h);
    hist_free(g);
    free(plain);
    free(v);
    return 0;
}

/* flood/measure/hist.h: a log-linear latency histogram in the manner of HdrHistogram.
 *
 * Values are microseconds (uint64_t) from 0 to HIST_MAX_VALUE (2^30 - 1 us, about 17.9
 * minutes). Larger values are clamped to HIST_MAX_VALUE and also counted in `overflow`.
 * Three significant digits: values below 2048 us are kept exactly; above, a value shares its
 * bucket with at most v/1024 others, so any reported value is within 1/1000 of the truth.
 *
 * Layout: 20 buckets of 2048 sub-buckets (the lower half of each bucket above the first
 * overlaps the one below and is not stored): HIST_COUNTS_LEN = 21 * 1024 = 21504 counts of
 * 8 bytes inline in the struct, so sizeof(struct hist) is 172,072 bytes, fixed. Recording
 * is a bit scan, a shift and an add: no floating point, no allocation, no lock.
 *
 * Threads: one writer per histogram. Give each thread its own histograms and merge them
 * (hist_merge) when reading; a reader concurrent with the writer needs its own lock.
 * A struct hist holds no pointers: it may be copied with memcpy or plain assignment. */
#ifndef FLOOD_HIST_H
#define FLOOD_HIST_H

#include <stdint.h>
#include <stdio.h>

#include "sign/err.h"

#define HIST_SUB_BUCKETS 2048 /* 2^11: 3 significant digits */
#define HIST_BUCKETS     20   /* bucket b covers [1024 << b, 2048 << b) (b = 0: [0, 2048)) */
#define HIST_MAX_VALUE   ((UINT64_C(1) << 30) - 1)
#define HIST_COUNTS_LEN  ((HIST_BUCKETS + 1) * (HIST_SUB_BUCKETS / 2))

struct hist {
    uint64_t total;    /* samples recorded, overflow included */
    uint64_t overflow; /* samples above HIST_MAX_VALUE (recorded as HIST_MAX_VALUE) */
    uint64_t min;      /* UINT64_MAX while empty (hist_min says 0) */
    uint64_t max;
    uint64_t sum; /* of the (clamped) values, for an exact mean */
    uint64_t counts[HIST_COUNTS_LEN];
};

/* Empty h (a struct hist embedded elsewhere, or on the heap). Same as hist_reset. */
void hist_init(struct hist *h);
/* A new empty histogram on the heap (never NULL: aborts when out of memory); hist_free. */
struct hist *hist_new(void);
void hist_free(struct hist *h);
/* Forget every sample. */
void hist_reset(struct hist *h);

/* Record one sample of us microseconds (clamped to HIST_MAX_VALUE; 0 is a valid sample). */
void hist_record(struct hist *h, uint64_t us);
/* Record n samples of us microseconds at once (n = 0 records nothing). */
void hist_record_n(struct hist *h, uint64_t us, uint64_t n);
/* Add every sample of src to dst, exactly: the result equals a histogram that recorded both
 * streams. src is unchanged; dst == src doubles it. */
void hist_merge(struct hist *dst, const struct hist *src);

uint64_t hist_count(const struct hist *h);    /* samples, overflow included */
uint64_t hist_overflow(const struct hist *h); /* samples clamped at HIST_MAX_VALUE */
/* Exact smallest and largest recorded (clamped) sample; 0 for an empty histogram. */
uint64_t hist_min(const struct hist *h);
uint64_t hist_max(const struct hist *h);
/* Exact mean of the (clamped) samples, in microseconds; 0.0 for an empty histogram. */
double hist_mean(const struct hist *h);

/* The value at a percentile (0..100; out of range is clamped, NaN reads as 0), as
 * HdrHistogram computes it: the rank is round(percentile/100 * count), at least 1, and the
 * answer is the UPPER edge (highest equivalent value) of the bucket where the cumulative
 * count reaches that rank, clipped to the exact max, so it is never below the true sample
 * of that rank and at most 1/1000 above it. Percentile 0 gives the exact min, 100 the
 * exact max. An empty histogram gives 0. */
uint64_t hist_value_at_percentile(const struct hist *h, double percentile);

/* Write h's percentile distribution in HdrHistogram's .hgrm text format (what
 * outputPercentileDistribution prints with 5 ticks per half distance: columns Value,
 * Percentile, TotalCount, 1/(1-Percentile), then the #[Mean/#[Max/#[Buckets footer), values
 * divided by unit_divisor (1000.0 gives milliseconds) and printed with 3 decimals. Values are
 * bucket upper edges clipped to the exact max, as hist_value_at_percentile gives them; the
 * footer's Mean and Max are exact, StdDeviation is HdrHistogram's (from bucket middles).
 * Otherwise the lines are those HdrHistogram prints for the same samples.
 * Returns 0, or -1 with errno set (EINVAL for unit_divisor not > 0, else the stream's). */
int hist_write_hgrm(const struct hist *h, FILE *f, double unit_divisor);

/* Buckets, for a caller that serialises a histogram: the non-empty count slots in value
 * order. Start with *pos = 0; each call fills lo..hi (the value range of the slot, in us)
 * and count, advances *pos and returns 1, or returns 0 after the last one.
 * Re-recording hist_record_n(copy, lo, count) for every slot rebuilds the same counts. */
int hist_next_bucket(const struct hist *h, size_t *pos, uint64_t *lo, uint64_t *hi,
                     uint64_t *count);

/* A text form of h that keeps everything exact (counts, min, max, sum, overflow), for
 * run.json and for merging the results of shards:
 *   "hist1 count=N overflow=N min=US max=US sum=US buckets=LO:COUNT,LO:COUNT,..."
 * with LO the low edge of each non-empty slot, ascending. A new string; free() it. */
char *hist_encode(const struct hist *h);
/* Parse hist_encode's text into h (initialised here). Every field is checked (slot edges,
 * order, counts adding up, min and max inside the first and last slots). Returns 0, or -1
 * and err (FLOOD_EINVAL, "hist: ..."); h is then empty. */
int hist_decode(struct hist *h, const char *text, struct flood_err *err) FLOOD_WUR;

#endif

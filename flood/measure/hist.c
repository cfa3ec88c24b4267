/* flood/measure/hist.c: the log-linear histogram (see hist.h for the layout). The index arithmetic
 * follows HdrHistogram with lowest discernible value 1 and 3 significant digits:
 * sub_bucket_count 2048, unit magnitude 0, sub_bucket_half_count_magnitude 10. */
#include "flood/measure/hist.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sign/err.h"

#define SUB_HALF     (HIST_SUB_BUCKETS / 2) /* 1024 */
#define SUB_HALF_MAG 10
#define SUB_MASK     ((uint64_t)HIST_SUB_BUCKETS - 1)

_Static_assert(sizeof(struct hist) == 5 * 8 + HIST_COUNTS_LEN * 8, "struct hist is fixed");
_Static_assert(HIST_COUNTS_LEN == 21504, "20 buckets of 2048 sub-buckets");

/* The count slot of v (v <= HIST_MAX_VALUE). The bucket is how far v's highest set bit sits
 * above bit 10; the sub-bucket is v shifted down by the bucket, in [1024, 2048) above
 * bucket 0. Slot = bucket * 1024 + sub-bucket. */
static inline size_t slot_of(uint64_t v)
{
    unsigned bucket = (unsigned)(64 - __builtin_clzll(v | SUB_MASK)) - (SUB_HALF_MAG + 1);
    return ((size_t)bucket << SUB_HALF_MAG) + (size_t)(v >> bucket);
}

/* The bucket of slot i (the shift of its values). */
static inline unsigned bucket_of_slot(size_t i)
{
    return i < HIST_SUB_BUCKETS ? 0 : (unsigned)(i >> SUB_HALF_MAG) - 1;
}

/* The lowest value counted in slot i. */
static inline uint64_t slot_lo(size_t i)
{
    unsigned b = bucket_of_slot(i);
    return (uint64_t)(i - ((size_t)b << SUB_HALF_MAG)) << b;
}

/* The highest value counted in slot i (HdrHistogram's highest equivalent value). */
static inline uint64_t slot_hi(size_t i)
{
    return slot_lo(i) + (UINT64_C(1) << bucket_of_slot(i)) - 1;
}

/* The middle of slot i (HdrHistogram's median equivalent value), for the deviation. */
static inline uint64_t slot_mid(size_t i)
{
    return slot_lo(i) + ((UINT64_C(1) << bucket_of_slot(i)) >> 1);
}

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

struct hist *hist_new(void)
{
    struct hist *h = flood_xmalloc(sizeof(*h));
    hist_init(h);
    return h;
}

void hist_free(struct hist *h)
{
    free(h);
}

void hist_reset(struct hist *h)
{
    hist_init(h);
}

void hist_record_n(struct hist *h, uint64_t us, uint64_t n)
{
    if (n == 0)
        return;
    if (us > HIST_MAX_VALUE) {
        us = HIST_MAX_VALUE;
        h->overflow += n;
    }
    h->counts[slot_of(us)] += n;
    h->total += n;
    h->sum += us * n;
    if (us < h->min)
        h->min = us;
    if (us > h->max)
        h->max = us;
}

void hist_record(struct hist *h, uint64_t us)
{
    hist_record_n(h, us, 1);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->total == 0)
        return;
    for (size_t i = 0; i < HIST_COUNTS_LEN; i++)
        dst->counts[i] += src->counts[i];
    dst->total += src->total;
    dst->overflow += src->overflow;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t hist_count(const struct hist *h)
{
    return h->total;
}

uint64_t hist_overflow(const struct hist *h)
{
    return h->overflow;
}

uint64_t hist_min(const struct hist *h)
{
    return h->total ? h->min : 0;
}

uint64_t hist_max(const struct hist *h)
{
    return h->total ? h->max : 0;
}

double hist_mean(const struct hist *h)
{
    return h->total ? (double)h->sum / (double)h->total : 0.0;
}

/* v clipped to the exact [min, max] of h (h not empty). */
static uint64_t clip(const struct hist *h, uint64_t v)
{
    if (v > h->max)
        return h->max;
    if (v < h->min)
        return h->min;
    return v;
}

uint64_t hist_value_at_percentile(const struct hist *h, double percentile)
{
    if (h->total == 0)
        return 0;
    if (!(percentile > 0.0)) /* NaN too */
        return h->min;
    if (percentile >= 100.0)
        return h->max;
    /* HdrHistogram: count_at_percentile = (long)(p / 100 * total + 0.5), at least 1. */
    double want = percentile / 100.0 * (double)h->total + 0.5;
    uint64_t rank = want >= (double)h->total ? h->total : (uint64_t)want;
    if (rank < 1)
        rank = 1;
    uint64_t cum = 0;
    for (size_t i = 0; i < HIST_COUNTS_LEN; i++) {
        cum += h->counts[i];
        if (cum >= rank)
            return clip(h, slot_hi(i));
    }
    return h->max; /* not reached: the counts sum to total */
}

int hist_next_bucket(const struct hist *h, size_t *pos, uint64_t *lo, uint64_t *hi, uint64_t *count)
{
    for (size_t i = *pos; i < HIST_COUNTS_LEN; i++) {
        if (h->counts[i]) {
            *lo = slot_lo(i);
            *hi = slot_hi(i);
            *count = h->counts[i];
            *pos = i + 1;
            return 1;
        }
    }
    *pos = HIST_COUNTS_LEN;
    return 0;
}

/* HdrHistogram's PercentileIterator step: the next percentile level after level, with
 * ticks_per_half ticks in each halving of the distance to 100%. */
static double next_level(double level, int ticks_per_half)
{
    double halvings = floor(log2(100.0 / (100.0 - level)));
    if (halvings > 60.0)
        halvings = 60.0;
    double ticks = (double)ticks_per_half * ldexp(1.0, (int)halvings + 1);
    return level + 100.0 / ticks;
}

int hist_write_hgrm(const struct hist *h, FILE *f, double unit_divisor)
{
    if (!(unit_divisor > 0.0) || !isfinite(unit_divisor)) {
        errno = EINVAL;
        return -1;
    }
    errno = 0;
    fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");

    /* The iteration of HdrHistogram's outputPercentileDistribution: walk the slots, and
     * each time the cumulative percentile reaches the next level print a line for the
     * current slot; after the last sample, one more line at exactly 100%. */
    const uint64_t total = h->total;
    double level = 0.0;
    uint64_t cum = 0;
    size_t i = 0;
    int fresh = 1, last_done = 0;
    while (total > 0) {
        if (cum >= total) {
            if (last_done)
                break;
            level = 100.0;
            last_done = 1;
        }
        int printed = 0;
        while (i < HIST_COUNTS_LEN) {
            uint64_t c = h->counts[i];
            if (fresh) {
                cum += c;
                fresh = 0;
            }
            if (c != 0 && 100.0 * (double)cum / (double)total >= level) {
                double value = (double)clip(h, slot_hi(i)) / unit_divisor;
                if (level != 100.0)
                    fprintf(f, "%12.3f %2.12f %10" PRIu64 " %14.2f\n", value, level / 100.0, cum,
                            1.0 / (1.0 - level / 100.0));
                else
                    fprintf(f, "%12.3f %2.12f %10" PRIu64 "\n", value, 1.0, cum);
                if (level < 100.0)
                    level = next_level(level, 5);
                printed = 1;
                break;
            }
            i++;
            fresh = 1;
        }
        if (!printed)
            break; /* not reached: the counts sum to total */
    }

    /* The deviation as HdrHistogram computes it, from slot middles around their own mean
     * (so one sample, or samples sharing a slot, deviate by 0); the mean printed is exact. */
    double mean = hist_mean(h), dev = 0.0;
    if (total > 0) {
        double mid_sum = 0.0, acc = 0.0;
        for (size_t j = 0; j < HIST_COUNTS_LEN; j++)
            mid_sum += (double)slot_mid(j) * (double)h->counts[j];
        double mid_mean = mid_sum / (double)total;
        for (size_t j = 0; j < HIST_COUNTS_LEN; j++) {
            if (h->counts[j]) {
                double d = (double)slot_mid(j) - mid_mean;
                acc += d * d * (double)h->counts[j];
            }
        }
        dev = sqrt(acc / (double)total);
    }
    fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", mean / unit_divisor,
            dev / unit_divisor);
    fprintf(f, "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n",
            (double)hist_max(h) / unit_divisor, total);
    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", HIST_BUCKETS, HIST_SUB_BUCKETS);
    if (fflush(f) != 0 || ferror(f)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

char *hist_encode(const struct hist *h)
{
    /* at most HIST_COUNTS_LEN slots of "LO:COUNT," (10 + 1 + 20 + 1 bytes) */
    size_t cap = 160, len = 0;
    for (size_t i = 0; i < HIST_COUNTS_LEN; i++)
        cap += h->counts[i] ? 32 : 0;
    char *out = flood_xmalloc(cap);
    len = (size_t)snprintf(out, cap,
                           "hist1 count=%" PRIu64 " overflow=%" PRIu64 " min=%" PRIu64
                           " max=%" PRIu64 " sum=%" PRIu64 " buckets=",
                           h->total, h->overflow, hist_min(h), hist_max(h), h->sum);
    for (size_t i = 0; i < HIST_COUNTS_LEN; i++) {
        if (h->counts[i])
            len += (size_t)snprintf(out + len, cap - len, "%s%" PRIu64 ":%" PRIu64,
                                    out[len - 1] == '=' ? "" : ",", slot_lo(i), h->counts[i]);
    }
    return out;
}

/* An unsigned decimal at *p (digits only), advancing *p; -1 when absent or too big. */
static int parse_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -1;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *p = s;
    *v = x;
    return 0;
}

/* "NAME=" then a number, then the separator sep (0 for none). */
static int parse_field(const char **p, const char *name, uint64_t *v, char sep)
{
    size_t n = strlen(name);
    if (strncmp(*p, name, n) != 0 || (*p)[n] != '=')
        return -1;
    *p += n + 1;
    if (parse_u64(p, v))
        return -1;
    if (sep) {
        if (**p != sep)
            return -1;
        (*p)++;
    }
    return 0;
}

int hist_decode(struct hist *h, const char *text, struct flood_err *err)
{
    hist_init(h);
    const char *p = text, *why = NULL;
    uint64_t count, overflow, min, max, sum;
    if (!text || strncmp(p, "hist1 ", 6) != 0) {
        flood_err_set(err, FLOOD_EINVAL, "hist: not a histogram (want 'hist1 ...')");
        return -1;
    }
    p += 6;
    if (parse_field(&p, "count", &count, ' ') || parse_field(&p, "overflow", &overflow, ' ') ||
        parse_field(&p, "min", &min, ' ') || parse_field(&p, "max", &max, ' ') ||
        parse_field(&p, "sum", &sum, ' ') || strncmp(p, "buckets=", 8) != 0) {
        why = "bad header field";
        goto bad;
    }
    p += 8;
    size_t prev = 0, first = SIZE_MAX, last = 0;
    uint64_t added = 0, lo_sum = 0, hi_sum = 0;
    int sums_known = 1;
    while (*p) {
        uint64_t lo, c;
        if ((first != SIZE_MAX && *p++ != ',') || parse_u64(&p, &lo) || *p++ != ':' ||
            parse_u64(&p, &c)) {
            why = "bad bucket";
            goto bad;
        }
        size_t i = lo <= HIST_MAX_VALUE ? slot_of(lo) : 0;
        if (lo > HIST_MAX_VALUE || slot_lo(i) != lo) {
            why = "bucket value is not a slot's low edge";
            goto bad;
        }
        if ((first != SIZE_MAX && i <= prev) || c == 0 || c > UINT64_MAX - added) {
            why = "buckets out of order, empty or too big";
            goto bad;
        }
        uint64_t a, b;
        if (__builtin_mul_overflow(lo, c, &a) || __builtin_mul_overflow(slot_hi(i), c, &b) ||
            __builtin_add_overflow(lo_sum, a, &lo_sum) ||
            __builtin_add_overflow(hi_sum, b, &hi_sum))
            sums_known = 0;
        h->counts[i] = c;
        added += c;
        if (first == SIZE_MAX)
            first = i;
        prev = last = i;
    }
    if (added != count) {
        why = "bucket counts do not add up to count";
        goto bad;
    }
    if (count == 0) {
        if (overflow || min || max || sum) {
            why = "an empty histogram with values";
            goto bad;
        }
        return 0;
    }
    if (min < slot_lo(first) || min > slot_hi(first) || max < slot_lo(last) ||
        max > slot_hi(last) || max > HIST_MAX_VALUE || overflow > h->counts[last] ||
        (overflow && max != HIST_MAX_VALUE) || (sums_known && (sum < lo_sum || sum > hi_sum))) {
        why = "min, max, sum or overflow outside the buckets";
        goto bad;
    }
    h->total = count;
    h->overflow = overflow;
    h->min = min;
    h->max = max;
    h->sum = sum;
    return 0;
bad:
    flood_err_set(err, FLOOD_EINVAL, "hist: %s at offset %zu", why, (size_t)(p - text));
    hist_init(h);
    return -1;
}

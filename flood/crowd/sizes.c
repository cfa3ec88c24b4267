/* flood/crowd/sizes.c: skewed instance sizes and activity (see sizes.h). */
#include "flood/crowd/sizes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flood/core/grammar.h"

int sizes_parse(struct sizes *s, const char *key, const char *val, size_t n, struct flood_err *err)
{
    char what[48];
    snprintf(what, sizeof(what), "population '%s'", key);
    double e = 0;
    if (gram_eq(val, n, "even")) {
        e = 0;
    } else if (gram_eq(val, n, "zipf")) {
        e = 1;
    } else if (n > 5 && !memcmp(val, "zipf:", 5)) {
        if (gram_real(what, val + 5, n - 5, 0.01, 4, &e, err))
            return -1;
    } else {
        flood_err_set(err, FLOOD_EINVAL,
                      "%s: expected even, zipf or zipf:S (an exponent from 0.01 to 4), got "
                      "'%.*s'",
                      what, (int)n, val);
        return -1;
    }
    if (!strcmp(key, "acts")) {
        s->act_s = e;
        s->acts_given = 1;
    } else {
        s->size_s = e;
    }
    return 0;
}

int sizes_skewed(const struct sizes *s)
{
    return s->size_s > 0 || s->act_s > 0;
}

/* splitmix64, seeded: the shuffles depend on the seed alone */
static uint64_t next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void shuffle(uint32_t *v, uint32_t n, uint64_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        v[i] = i;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)(next(&seed) % i);
        uint32_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* For the remainders: ranks by the fraction their share left, largest first (ties: rank). */
static int cmp_frac(const void *a, const void *b, void *ctx)
{
    const double *frac_of = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double fx = frac_of[x] - floor(frac_of[x]), fy = frac_of[y] - floor(frac_of[y]);
    return fx > fy ? -1 : fx < fy ? 1 : x < y ? -1 : x > y;
}

/* The sizes by rank: n instances, total actors, each 1..cap, Zipf weights r^-e (e 0: even
 * within the cap), by water-filling then largest remainders, into out[0..n). */
static void zipf_sizes(uint32_t *out, uint32_t n, uint32_t total, uint32_t cap, double e)
{
    double *w = calloc(n, sizeof(double)), *want = calloc(n, sizeof(double));
    unsigned char *full = calloc(n, 1);
    uint32_t *by_frac = calloc(n, sizeof(uint32_t));
    if (!w || !want || !full || !by_frac)
        abort();
    for (uint32_t r = 0; r < n; r++)
        w[r] = pow((double)(r + 1), -e);
    double left = (double)(total - n); /* each instance has one actor; the rest by weight */
    for (;;) { /* the biggest ranks saturate at the cap, the rest share what is left */
        double wsum = 0;
        for (uint32_t r = 0; r < n; r++)
            wsum += full[r] ? 0 : w[r];
        int saturated = 0;
        for (uint32_t r = 0; r < n; r++) {
            if (full[r])
                continue;
            want[r] = left * w[r] / wsum;
            if (want[r] > cap - 1) {
                full[r] = 1;
                want[r] = cap - 1;
                left -= cap - 1;
                saturated = 1;
            }
        }
        if (!saturated)
            break;
    }
    uint32_t sum = 0;
    for (uint32_t r = 0; r < n; r++) {
        out[r] = 1 + (uint32_t)floor(want[r] + 1e-9);
        sum += out[r];
        by_frac[r] = r;
    }
    qsort_r(by_frac, n, sizeof(uint32_t), cmp_frac, want);
    for (uint32_t k = 0; sum < total && k < n; k++) /* the remainders, largest first */
        if (out[by_frac[k]] < cap) {
            out[by_frac[k]]++;
            sum++;
        }
    free(w);
    free(want);
    free(full);
    free(by_frac);
}

int sizes_layout(struct sizes *s, int instances, int asked, uint64_t seed, struct flood_err *err)
{
    sizes_clear(s);
    if (!s->acts_given) /* sizes= alone skews who acts as well */
        s->act_s = s->size_s;
    uint64_t total = (uint64_t)instances * (uint64_t)asked;
    if (instances < 1 || asked < 1 || total > SIZES_ACTORS_MAX) {
        flood_err_set(err, FLOOD_ELIMIT,
                      "population 'sizes': %d instances of %d actors is %llu actors, more than "
                      "the %u a skewed crowd holds",
                      instances, asked, (unsigned long long)total, SIZES_ACTORS_MAX);
        return -1;
    }
    s->instances = instances;
    s->asked = asked;
    s->seed = seed;
    s->total = (uint32_t)total;
    uint32_t cap = SIZES_GRID_MAX / (uint32_t)instances;
    s->cap = (int)(cap < (uint32_t)asked ? (uint32_t)asked : cap);
    uint32_t n = (uint32_t)instances;
    s->size = calloc(n + 1, sizeof(uint32_t));
    s->start = calloc(n + 2, sizeof(uint32_t));
    s->perm = calloc(s->total, sizeof(uint32_t));
    s->cdf = calloc(s->total, sizeof(double));
    s->sent = calloc(s->total, sizeof(*s->sent));
    uint32_t *by_rank = calloc(n, sizeof(uint32_t)), *order = calloc(n, sizeof(uint32_t));
    if (!s->size || !s->start || !s->perm || !s->cdf || !s->sent || !by_rank || !order)
        abort();
    zipf_sizes(by_rank, n, s->total, (uint32_t)s->cap, s->size_s);
    shuffle(order, n, seed ^ 0x73697a6573ULL); /* "sizes": the rank of each instance */
    s->width = 1;
    for (uint32_t r = 0; r < n; r++) {
        s->size[order[r] + 1] = by_rank[r];
        if ((int)by_rank[r] > s->width)
            s->width = (int)by_rank[r];
    }
    free(by_rank);
    free(order);
    s->start[1] = 0;
    for (uint32_t i = 1; i <= n; i++)
        s->start[i + 1] = s->start[i] + s->size[i];
    shuffle(s->perm, s->total, seed ^ 0x61637473ULL); /* "acts": the rank of each actor */
    double sum = 0;
    for (uint32_t r = 0; r < s->total; r++) {
        sum += s->act_s > 0 ? pow((double)(r + 1), -s->act_s) : 1.0;
        s->cdf[r] = sum;
    }
    for (uint32_t r = 0; r < s->total; r++)
        s->cdf[r] /= sum;
    s->cdf[s->total - 1] = 1;
    return 0;
}

void sizes_clear(struct sizes *s)
{
    free(s->size);
    free(s->start);
    free(s->perm);
    free(s->cdf);
    free((void *)s->sent);
    s->size = s->start = s->perm = NULL;
    s->cdf = NULL;
    s->sent = NULL;
    s->total = 0;
    s->instances = 0;
}

/* The instance holding live index x (binary search over start). */
static int instance_of(const struct sizes *s, uint32_t x)
{
    int lo = 1, hi = s->instances;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (s->start[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void sizes_pick(struct sizes *s, uint64_t r, int *instance, int *actor)
{
    double u = (double)(r >> 11) * 0x1.0p-53; /* [0, 1) */
    uint32_t lo = 0, hi = s->total - 1;
    while (lo < hi) { /* the first rank whose running sum passes u */
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    uint32_t x = s->perm[lo];
    atomic_fetch_add_explicit(&s->sent[x], 1, memory_order_relaxed);
    *instance = instance_of(s, x);
    *actor = (int)(x - s->start[*instance]) + 1;
}

int sizes_pick_in(const struct sizes *s, int instance, uint64_t r)
{
    if (instance < 1 || instance > s->instances)
        return 1;
    return 1 + (int)(r % s->size[instance]);
}

int sizes_live(const struct sizes *s, int instance, int actor)
{
    return instance >= 1 && instance <= s->instances && actor >= 1 &&
           (uint32_t)actor <= s->size[instance];
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t sizes_median(const struct sizes *s)
{
    if (!s->instances)
        return 0;
    uint32_t *v = malloc((size_t)s->instances * sizeof(uint32_t));
    if (!v)
        abort();
    memcpy(v, s->size + 1, (size_t)s->instances * sizeof(uint32_t));
    qsort(v, (size_t)s->instances, sizeof(uint32_t), cmp_u32);
    uint32_t m = v[s->instances / 2];
    free(v);
    return m;
}

double sizes_top_share(const struct sizes *s, double frac)
{
    if (!s->total)
        return 0;
    uint32_t k = (uint32_t)ceil(frac * s->total);
    if (k < 1)
        k = 1;
    return s->cdf[k > s->total ? s->total - 1 : k - 1];
}

json_t *sizes_json(const struct sizes *s)
{
    if (!s->total)
        return NULL;
    uint32_t smallest = UINT32_MAX, *v = malloc((size_t)s->instances * sizeof(uint32_t));
    int biggest_at = 1;
    if (!v)
        abort();
    for (int i = 1; i <= s->instances; i++) {
        v[i - 1] = s->size[i];
        smallest = s->size[i] < smallest ? s->size[i] : smallest;
        if (s->size[i] > s->size[biggest_at])
            biggest_at = i;
    }
    qsort(v, (size_t)s->instances, sizeof(uint32_t), cmp_u32);
    /* the fewest instances, biggest first, that hold half the actors */
    uint64_t held = 0;
    int half = 0;
    for (int k = s->instances - 1; k >= 0 && held * 2 < s->total; k--, half++)
        held += v[k];
    free(v);
    /* what was drawn: the top 10% of the actors by rank, their share of the draws */
    uint32_t k10 = (uint32_t)ceil(0.1 * s->total);
    uint64_t top = 0, all = 0;
    for (uint32_t r = 0; r < s->total; r++) {
        uint64_t c = atomic_load_explicit(&s->sent[s->perm[r]], memory_order_relaxed);
        all += c;
        top += r < k10 ? c : 0;
    }
    return json_pack("{s:s, s:f, s:s, s:f, s:I, s:i, s:i, s:i, s:i, s:I, s:i, s:i, s:i, s:f, "
                     "s:I, s:o}",
                     "sizes", s->size_s > 0 ? "zipf" : "even", "sizes_s", s->size_s, "acts",
                     s->act_s > 0 ? "zipf" : "even", "acts_s", s->act_s, "actors",
                     (json_int_t)s->total, "per_instance_asked", s->asked, "cap", s->cap, "biggest",
                     s->width, "biggest_instance", biggest_at, "median",
                     (json_int_t)sizes_median(s), "smallest", (int)smallest,
                     "instances_holding_half", half, "grid_width", s->width, "top10_expected_share",
                     sizes_top_share(s, 0.1), "activities_drawn", (json_int_t)all,
                     "top10_drawn_share", all ? json_real((double)top / (double)all) : json_null());
}

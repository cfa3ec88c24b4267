/* flood/send/sched.c: the open-loop schedule (see sched.h for the model). */
#include "flood/send/sched.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "flood/core/grammar.h"

int sched_parse_duration(const char *s, double *out, struct flood_err *err)
{
    return gram_duration("duration", s, GRAM_NUL, GRAM_BARE_SECONDS, 0, SCHED_DURATION_MAX, out,
                         err);
}

int sched_parse_arrival(const char *s, enum sched_arrival *out, struct flood_err *err)
{
    static const char *const names[] = {"constant", "poisson"};
    int i;
    if (gram_keyword("--arrival", s, GRAM_NUL, names, 2, &i, err))
        return -1;
    *out = i ? SCHED_POISSON : SCHED_CONSTANT;
    return 0;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* An exponential variate of mean 1: -ln(1 - U), U uniform in [0, 1) with 53 bits. */
static double exp1(uint64_t *rng)
{
    double u = (double)(splitmix64(rng) >> 11) * 0x1.0p-53;
    return -log1p(-u);
}

static int check_rate(double r, const char *what, struct flood_err *err)
{
    if (!isfinite(r) || r < 0 || r > SCHED_RATE_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "%s: rate must be 0..%.0f per second", what,
                      SCHED_RATE_MAX);
        return -1;
    }
    return 0;
}

/* Fill the derived fields (start times, counts) and rewind. */
static int finish(struct sched *s, struct flood_err *err)
{
    double t = 0, n = 0;
    for (int i = 0; i < s->n_stages; i++) {
        struct sched_stage *st = &s->stages[i];
        st->start_s = t;
        st->count0 = n;
        st->count = (st->rate0 + st->rate1) / 2 * st->dur_s;
        t += st->dur_s;
        n += st->count;
    }
    s->duration_s = t;
    s->total_count = n;
    if (t > SCHED_DURATION_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "schedule: longer than a week (%.0f s)", t);
        return -1;
    }
    if (n > 1e12) {
        flood_err_set(err, FLOOD_EINVAL, "schedule: too many activities (%.3g)", n);
        return -1;
    }
    sched_rewind(s);
    return 0;
}

int sched_init_rate(struct sched *s, double rate, double dur_s, enum sched_arrival arrival,
                    uint64_t seed, struct flood_err *err)
{
    memset(s, 0, sizeof(*s));
    if (check_rate(rate, "--rate", err))
        return -1;
    if (rate <= 0) {
        flood_err_set(err, FLOOD_EINVAL, "--rate: must be above 0");
        return -1;
    }
    if (!isfinite(dur_s) || dur_s <= 0) {
        flood_err_set(err, FLOOD_EINVAL, "--duration: must be above 0");
        return -1;
    }
    s->arrival = arrival;
    s->seed = seed;
    s->n_stages = 1;
    s->stages[0].rate0 = s->stages[0].rate1 = rate;
    s->stages[0].dur_s = dur_s;
    return finish(s, err);
}

/* The rate of a stage: 0 (a pause, or the start of a ramp) or a rate as gram_rate reads it. */
static int stage_rate(int idx, const char *s, size_t n, double *rate, struct flood_err *err)
{
    char what[48];
    struct flood_err ignored;
    snprintf(what, sizeof(what), "--stages: stage %d rate", idx);
    if (gram_real(what, s, n, 0, 0, rate, &ignored) == 0 ||
        gram_rate(what, s, n, SCHED_RATE_MAX, rate, &ignored) == 0)
        return 0;
    flood_err_set(err, FLOOD_EINVAL,
                  "%s: expected 0 or a rate above 0 and at most %.0f a second (300, 300/s, 1.5k, "
                  "1500/m, 90000/h), got '%.*s'",
                  what, SCHED_RATE_MAX, (int)(n > 40 ? 40 : n), s);
    return -1;
}

int sched_init_stages(struct sched *s, const char *spec, enum sched_arrival arrival, uint64_t seed,
                      struct flood_err *err)
{
    memset(s, 0, sizeof(*s));
    s->arrival = arrival;
    s->seed = seed;
    if (!spec || !*spec) {
        flood_err_set(err, FLOOD_EINVAL,
                      "--stages: expected RATE:DURATION[,RATE:DURATION...], "
                      "got ''");
        return -1;
    }
    double prev = 0;
    struct gram_list l;
    struct gram_item it;
    gram_list_init(&l, spec, GRAM_NUL, ',');
    while (gram_list_next(&l, &it)) {
        int idx = s->n_stages + 1;
        if (s->n_stages == SCHED_MAX_STAGES) {
            flood_err_set(err, FLOOD_EINVAL, "--stages: more than %d stages", SCHED_MAX_STAGES);
            return -1;
        }
        const char *colon = memchr(it.s, ':', it.n);
        if (!colon) {
            flood_err_set(err, FLOOD_EINVAL,
                          "--stages: stage %d: expected RATE:DURATION (10:30s, 0:0, 1.5k:2m), "
                          "got '%.*s'",
                          idx, (int)(it.n > 40 ? 40 : it.n), it.s);
            return -1;
        }
        double rate, dur;
        char what[48];
        snprintf(what, sizeof(what), "--stages: stage %d duration", idx);
        size_t rn = (size_t)(colon - it.s);
        if (stage_rate(idx, it.s, rn, &rate, err) ||
            gram_duration(what, colon + 1, it.n - rn - 1, GRAM_BARE_SECONDS, 0, SCHED_DURATION_MAX,
                          &dur, err))
            return -1;
        struct sched_stage *st = &s->stages[s->n_stages++];
        st->rate0 = prev;
        st->rate1 = rate;
        st->dur_s = dur;
        prev = rate;
    }
    if (finish(s, err))
        return -1;
    if (s->duration_s <= 0 || s->total_count <= 0) {
        flood_err_set(err, FLOOD_EINVAL, "--stages: '%s' sends nothing", spec);
        return -1;
    }
    return 0;
}

/* The integer count of constant arrivals: integers k >= 0 with k < total_count, with a
 * tolerance so that 10/s for 1 s is 10, not 11 through rounding. */
static uint64_t constant_total(const struct sched *s)
{
    double n = s->total_count;
    double r = nearbyint(n);
    if (fabs(n - r) < 1e-6)
        return (uint64_t)r;
    return (uint64_t)ceil(n);
}

void sched_rewind(struct sched *s)
{
    s->next_k = 0;
    s->rng = s->seed ^ UINT64_C(0x5eed5eed5eed5eed);
    s->cur_stage = 0;
    s->next_u = s->arrival == SCHED_POISSON ? exp1(&s->rng) : 0;
}

/* The time in seconds where the cumulative count reaches u (u < total_count). */
static double inverse(struct sched *s, double u)
{
    int i = s->cur_stage;
    while (i + 1 < s->n_stages && u >= s->stages[i].count0 + s->stages[i].count)
        i++;
    /* u is never below the stage found, lookups go forward */
    while (i > 0 && u < s->stages[i].count0)
        i--;
    s->cur_stage = i;
    const struct sched_stage *st = &s->stages[i];
    double du = u - st->count0;
    if (du <= 0)
        return st->start_s;
    double t;
    if (st->dur_s <= 0)
        t = 0;
    else {
        double a = (st->rate1 - st->rate0) / st->dur_s;
        /* solve a/2 t^2 + r0 t = du, in the form that stays exact for a = 0 */
        double disc = st->rate0 * st->rate0 + 2 * a * du;
        if (disc < 0)
            disc = 0;
        double den = st->rate0 + sqrt(disc);
        t = den > 0 ? 2 * du / den : st->dur_s;
        if (t > st->dur_s)
            t = st->dur_s;
    }
    return st->start_s + t;
}

int sched_init_replay(struct sched *s, const int64_t *times, uint64_t n, double dur_s, double peak,
                      struct flood_err *err)
{
    memset(s, 0, sizeof(*s));
    if (n == 0 || !isfinite(dur_s) || dur_s <= 0) {
        flood_err_set(err, FLOOD_EINVAL, "--replay: nothing to send");
        return -1;
    }
    for (uint64_t i = 1; i < n; i++)
        if (times[i] < times[i - 1] || times[i] < 0) {
            flood_err_set(err, FLOOD_EINVAL, "--replay: times go backwards at %llu",
                          (unsigned long long)i);
            return -1;
        }
    s->n_stages = 1;
    s->stages[0].rate0 = s->stages[0].rate1 = (double)n / dur_s;
    s->stages[0].dur_s = dur_s;
    if (finish(s, err))
        return -1;
    s->replay_t = times;
    s->replay_n = n;
    s->replay_peak = peak;
    return 0;
}

static int64_t next_any(struct sched *s)
{
    if (s->replay_t) {
        if (s->next_k >= s->replay_n)
            return -1;
        return s->replay_t[s->next_k++];
    }
    double u;
    if (s->arrival == SCHED_CONSTANT) {
        if (s->next_k >= constant_total(s))
            return -1;
        u = (double)s->next_k;
    } else {
        if (s->next_u >= s->total_count)
            return -1;
        u = s->next_u;
        if (s->redo_u > 0) { /* an activity given back by sched_steer_retime, taken again */
            s->next_u = s->redo_u;
            s->redo_u = 0;
        } else
            s->next_u += exp1(&s->rng);
    }
    s->last_u = u;
    s->next_k++;
    double t = inverse(s, u);
    return (int64_t)llround(t * 1e9);
}

int64_t sched_next(struct sched *s)
{
    for (;;) {
        int64_t t = next_any(s);
        if (t < 0 || s->shard_n < 2 || (s->next_k - 1) % s->shard_n == s->shard_k)
            return t;
    }
}

void sched_set_shard(struct sched *s, uint64_t k, uint64_t n)
{
    s->shard_k = n < 2 ? 0 : k % n;
    s->shard_n = n < 2 ? 0 : n;
}

uint64_t sched_index(const struct sched *s)
{
    return s->next_k ? s->next_k - 1 : 0;
}

uint64_t sched_shard_total(const struct sched *s)
{
    uint64_t all = sched_total(s);
    if (s->shard_n < 2)
        return all;
    if (s->arrival == SCHED_POISSON)
        return (uint64_t)llround(s->total_count / (double)s->shard_n);
    return all > s->shard_k ? (all - s->shard_k + s->shard_n - 1) / s->shard_n : 0;
}

uint64_t sched_total(const struct sched *s)
{
    if (s->replay_t)
        return s->replay_n;
    if (s->arrival == SCHED_CONSTANT)
        return constant_total(s);
    return (uint64_t)llround(s->total_count);
}

double sched_duration(const struct sched *s)
{
    return s->duration_s;
}

double sched_rate_at(const struct sched *s, double t)
{
    for (int i = 0; i < s->n_stages; i++) {
        const struct sched_stage *st = &s->stages[i];
        if (t < st->start_s + st->dur_s || i == s->n_stages - 1) {
            if (st->dur_s <= 0)
                return st->rate1;
            double f = (t - st->start_s) / st->dur_s;
            if (f < 0)
                f = 0;
            if (f > 1)
                f = 1;
            return st->rate0 + (st->rate1 - st->rate0) * f;
        }
    }
    return 0;
}

double sched_peak_rate(const struct sched *s)
{
    double m = s->replay_t ? s->replay_peak : 0;
    for (int i = 0; i < s->n_stages; i++) {
        if (s->stages[i].rate0 > m)
            m = s->stages[i].rate0;
        if (s->stages[i].rate1 > m)
            m = s->stages[i].rate1;
    }
    return m;
}

/* ---- steering ------------------------------------------------------------------------ */

/* Start times and counts from the first kept stage on, without rewinding. */
static void refresh(struct sched *s)
{
    double t = s->stages[0].start_s, n = s->stages[0].count0;
    for (int i = 0; i < s->n_stages; i++) {
        struct sched_stage *st = &s->stages[i];
        st->start_s = t;
        st->count0 = n;
        st->count = (st->rate0 + st->rate1) / 2 * st->dur_s;
        t += st->dur_s;
        n += st->count;
    }
    s->total_count = n;
    if (s->cur_stage >= s->n_stages)
        s->cur_stage = s->n_stages - 1;
}

/* Cut the curve at t_s (the stage holding it ends there) and append stages reaching rate
 * after ramp_s, flat to the end. Stages dropped from the front make room when needed:
 * only lookups of activities due long before t_s could land there. */
static void steer_to(struct sched *s, double t_s, double rate, double ramp_s)
{
    double end = s->duration_s;
    if (t_s < s->stages[0].start_s)
        t_s = s->stages[0].start_s;
    if (t_s > end)
        t_s = end;
    double r_at = sched_rate_at(s, t_s);
    int i = 0;
    while (i + 1 < s->n_stages && t_s >= s->stages[i].start_s + s->stages[i].dur_s)
        i++;
    struct sched_stage *st = &s->stages[i];
    st->dur_s = t_s - st->start_s;
    if (st->dur_s < 0)
        st->dur_s = 0;
    st->rate1 = r_at;
    s->n_stages = i + 1;
    if (s->n_stages + 2 > SCHED_MAX_STAGES) {
        int k = s->n_stages + 2 - SCHED_MAX_STAGES;
        memmove(s->stages, s->stages + k, (size_t)(s->n_stages - k) * sizeof(s->stages[0]));
        s->n_stages -= k;
        s->dropped += k;
        s->cur_stage = s->cur_stage > k ? s->cur_stage - k : 0;
    }
    double left = end - t_s;
    if (ramp_s > 0 && left > 0) {
        double d = ramp_s < left ? ramp_s : left;
        struct sched_stage *r = &s->stages[s->n_stages++];
        *r = (struct sched_stage){
            .rate0 = r_at, .rate1 = r_at + (rate - r_at) * d / ramp_s, .dur_s = d};
        left -= d;
    }
    if (left > 0 || s->n_stages == i + 1) {
        struct sched_stage *r = &s->stages[s->n_stages++];
        *r = (struct sched_stage){.rate0 = rate, .rate1 = rate, .dur_s = left > 0 ? left : 0};
    }
    s->steered = 1;
    refresh(s);
}

int sched_steer_rate(struct sched *s, double t_s, double rate, double ramp_s, struct flood_err *err)
{
    if (check_rate(rate, "steer", err))
        return -1;
    if (!isfinite(ramp_s) || ramp_s < 0 || ramp_s > SCHED_DURATION_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "steer: ramp must be 0..%.0f seconds", SCHED_DURATION_MAX);
        return -1;
    }
    if (s->paused)
        s->pause_rate = rate;
    else
        steer_to(s, t_s, rate, ramp_s);
    return 0;
}

void sched_pause(struct sched *s, double t_s)
{
    if (s->paused)
        return;
    s->pause_rate = sched_rate_at(s, t_s);
    steer_to(s, t_s, 0, 0);
    s->paused = 1;
}

void sched_resume(struct sched *s, double t_s)
{
    if (!s->paused)
        return;
    s->paused = 0;
    steer_to(s, t_s, s->pause_rate, 0);
}

int sched_paused(const struct sched *s)
{
    return s->paused;
}

int64_t sched_steer_retime(struct sched *s)
{
    int fits = s->arrival == SCHED_CONSTANT ? s->next_k - 1 < constant_total(s)
                                            : s->last_u < s->total_count;
    if (!fits) { /* give it back */
        if (s->arrival == SCHED_POISSON) {
            s->redo_u = s->next_u;
            s->next_u = s->last_u;
        }
        s->next_k--;
        return -1;
    }
    return (int64_t)llround(inverse(s, s->last_u) * 1e9);
}

/* v as a plain decimal without an exponent ("10000000", "0.25"), as the grammar reads it. */
static const char *plain(double v, char buf[48])
{
    snprintf(buf, 48, "%.6f", v);
    char *e = buf + strlen(buf);
    while (e > buf && e[-1] == '0')
        *--e = 0;
    if (e > buf && e[-1] == '.')
        *--e = 0;
    return buf;
}

int sched_stages_text(const struct sched *s, char *buf, size_t size, double *from_s)
{
    size_t len = 0;
    double prev = 0;
    char a[48], b[48];
    buf[0] = 0;
    *from_s = s->stages[0].start_s;
    for (int i = 0; i < s->n_stages; i++) {
        const struct sched_stage *st = &s->stages[i];
        int n = 0;
        if (st->dur_s <= 0 && i + 1 < s->n_stages)
            continue; /* a cut left empty: the next stage starts from its rate */
        if (fabs(st->rate0 - prev) > 1e-9)
            n = snprintf(buf + len, size - len, "%s%s:0", len ? "," : "", plain(st->rate0, a));
        if (n < 0 || (size_t)n >= size - len)
            return -1;
        len += (size_t)n;
        n = snprintf(buf + len, size - len, "%s%s:%ss", len ? "," : "", plain(st->rate1, a),
                     plain(st->dur_s, b));
        if (n < 0 || (size_t)n >= size - len)
            return -1;
        len += (size_t)n;
        prev = st->rate1;
    }
    return (int)len;
}

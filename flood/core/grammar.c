/* flood/core/grammar.c: durations, sizes, shares, rates, numbers, keywords and lists (the
 * forms in grammar.h). */
#include "flood/core/grammar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The value as a NUL-terminated copy in buf; -1 when it is empty or longer than the
 * grammar reads. */
static int span(const char *s, size_t n, char buf[GRAM_VALUE_MAX + 1])
{
    if (!s)
        return -1;
    if (n == GRAM_NUL)
        n = strnlen(s, GRAM_VALUE_MAX + 1);
    if (n == 0 || n > GRAM_VALUE_MAX)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return 0;
}

/* A decimal number at the start of s: digits with an optional fraction ("12", "1.5", "0.25";
 * no sign, exponent, hex, inf or nan, which strtod would take). Its length, or 0 for none. */
static size_t decimal(const char *s, double *out)
{
    size_t i = 0, digits = 0;
    double v = 0;
    while (s[i] >= '0' && s[i] <= '9') {
        v = v * 10 + (s[i++] - '0');
        digits++;
    }
    if (s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
        double scale = 0.1;
        for (i++; s[i] >= '0' && s[i] <= '9'; i++, digits++) {
            v += (s[i] - '0') * scale;
            scale /= 10;
        }
    }
    if (!digits || !isfinite(v))
        return 0;
    *out = v;
    return i;
}

/* The refusal every parser writes: "WHAT: expected FORMS, got 'VALUE'". */
static int refuse(struct flood_err *err, const char *what, const char *s, size_t n,
                  const char *forms)
{
    if (!s)
        s = "", n = 0;
    if (n == GRAM_NUL)
        n = strlen(s);
    flood_err_set(err, FLOOD_EINVAL, "%s: expected %s, got '%.*s'", what, forms,
                  (int)(n > 80 ? 80 : n), s);
    return -1;
}

/* A duration as readable text for a message: "1ms", "2.5s", "1 week". */
static void say_seconds(double v, char *buf, size_t size)
{
    if (v >= 7 * 86400 && fmod(v, 7 * 86400) == 0)
        snprintf(buf, size, "%g week%s", v / (7 * 86400), v == 7 * 86400 ? "" : "s");
    else if (v >= 3600 && fmod(v, 3600) == 0)
        snprintf(buf, size, "%gh", v / 3600);
    else if (v >= 60 && fmod(v, 60) == 0)
        snprintf(buf, size, "%gm", v / 60);
    else if (v >= 1 || v == 0)
        snprintf(buf, size, "%gs", v);
    else if (v >= 1e-3)
        snprintf(buf, size, "%gms", v * 1e3);
    else
        snprintf(buf, size, "%gus", v * 1e6);
}

int gram_duration(const char *what, const char *s, size_t n, enum gram_bare bare, double lo,
                  double hi, double *seconds, struct flood_err *err)
{
    static const struct {
        const char *unit;
        double s;
    } units[] = {{"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
    char buf[GRAM_VALUE_MAX + 1], forms[160], a[32], b[32];
    say_seconds(lo, a, sizeof(a));
    say_seconds(hi, b, sizeof(b));
    snprintf(forms, sizeof(forms), "a duration from %s to %s (250us, 500ms, 1.5s, 2m, 1h%s)", a, b,
             bare == GRAM_BARE_SECONDS ? "; a plain number is seconds"
             : bare == GRAM_BARE_MS    ? "; a plain number is milliseconds"
                                       : "");
    double v, mul = -1;
    size_t len;
    if (span(s, n, buf) || !(len = decimal(buf, &v)))
        return refuse(err, what, s, n, forms);
    const char *u = buf + len;
    if (!*u)
        mul = bare == GRAM_BARE_SECONDS ? 1 : bare == GRAM_BARE_MS ? 1e-3 : -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]) && *u; i++)
        if (!strcmp(u, units[i].unit))
            mul = units[i].s;
    /* a relative epsilon, so "1ms" is not refused below a bound of 0.001 by rounding */
    if (mul < 0 || v * mul < lo * (1 - 1e-12) || v * mul > hi * (1 + 1e-12))
        return refuse(err, what, s, n, forms);
    *seconds = v * mul;
    return 0;
}

int gram_duration_ms(const char *what, const char *s, size_t n, enum gram_bare bare, long lo_ms,
                     long hi_ms, long *ms, struct flood_err *err)
{
    double v;
    if (gram_duration(what, s, n, bare, lo_ms / 1e3, hi_ms / 1e3, &v, err))
        return -1;
    *ms = lround(v * 1e3);
    return 0;
}

int gram_size(const char *what, const char *s, size_t n, uint64_t lo, uint64_t hi, uint64_t *bytes,
              struct flood_err *err)
{
    static const struct {
        const char *unit;
        double mul;
    } units[] = {{"", 1},       {"b", 1},         {"k", 1e3},      {"kb", 1e3},
                 {"m", 1e6},    {"mb", 1e6},      {"g", 1e9},      {"gb", 1e9},
                 {"kib", 1024}, {"mib", 1 << 20}, {"gib", 1 << 30}};
    char buf[GRAM_VALUE_MAX + 1], forms[160];
    snprintf(forms, sizeof(forms),
             "a size from %llu to %llu bytes (300, 300k, 1.5m, 2g; KiB, MiB, GiB are powers of "
             "1024)",
             (unsigned long long)lo, (unsigned long long)hi);
    double v;
    size_t len;
    if (span(s, n, buf) || !(len = decimal(buf, &v)))
        return refuse(err, what, s, n, forms);
    char unit[8];
    size_t ul = strlen(buf + len);
    if (ul >= sizeof(unit))
        return refuse(err, what, s, n, forms);
    for (size_t i = 0; i <= ul; i++)
        unit[i] =
            (char)((buf[len + i] >= 'A' && buf[len + i] <= 'Z') ? buf[len + i] + 32 : buf[len + i]);
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(unit, units[i].unit))
            continue;
        double b = round(v * units[i].mul);
        if (b < (double)lo || b > (double)hi)
            break;
        *bytes = (uint64_t)b;
        return 0;
    }
    return refuse(err, what, s, n, forms);
}

int gram_share(const char *what, const char *s, size_t n, enum gram_share_bare bare, double lo,
               double hi, double *fraction, struct flood_err *err)
{
    char buf[GRAM_VALUE_MAX + 1], forms[160];
    snprintf(forms, sizeof(forms), "a share from %g%% to %g%% (20%%, 0.5%%%s)", lo * 100, hi * 100,
             bare == GRAM_SHARE_PERCENT ? "; a plain number is percent"
                                        : "; a plain number is a fraction, 0.2 = 20%");
    double v;
    size_t len;
    if (span(s, n, buf) || !(len = decimal(buf, &v)))
        return refuse(err, what, s, n, forms);
    if (!strcmp(buf + len, "%") || (!buf[len] && bare == GRAM_SHARE_PERCENT))
        v /= 100;
    else if (buf[len])
        return refuse(err, what, s, n, forms);
    if (v < lo - 1e-12 || v > hi + 1e-12)
        return refuse(err, what, s, n, forms);
    *fraction = v;
    return 0;
}

int gram_rate(const char *what, const char *s, size_t n, double hi, double *per_s,
              struct flood_err *err)
{
    char buf[GRAM_VALUE_MAX + 1], forms[160];
    snprintf(forms, sizeof(forms),
             "a rate above 0 and at most %g a second (300, 300/s, 1.5k, "
             "1500/m, 90000/h)",
             hi);
    double v;
    size_t len;
    if (span(s, n, buf) || !(len = decimal(buf, &v)))
        return refuse(err, what, s, n, forms);
    const char *u = buf + len;
    if (*u == 'k')
        v *= 1e3, u++;
    if (!strcmp(u, "/m"))
        v /= 60;
    else if (!strcmp(u, "/h"))
        v /= 3600;
    else if (*u && strcmp(u, "/s"))
        return refuse(err, what, s, n, forms);
    if (!(v > 0) || v > hi)
        return refuse(err, what, s, n, forms);
    *per_s = v;
    return 0;
}

int gram_uint(const char *what, const char *s, size_t n, uint64_t lo, uint64_t hi, uint64_t *out,
              struct flood_err *err)
{
    char buf[GRAM_VALUE_MAX + 1], forms[96];
    snprintf(forms, sizeof(forms), "a whole number from %llu to %llu", (unsigned long long)lo,
             (unsigned long long)hi);
    if (span(s, n, buf))
        return refuse(err, what, s, n, forms);
    uint64_t v = 0;
    for (const char *p = buf; *p; p++) {
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return refuse(err, what, s, n, forms);
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v < lo || v > hi)
        return refuse(err, what, s, n, forms);
    *out = v;
    return 0;
}

int gram_real(const char *what, const char *s, size_t n, double lo, double hi, double *out,
              struct flood_err *err)
{
    char buf[GRAM_VALUE_MAX + 1], forms[96];
    snprintf(forms, sizeof(forms), "a number from %g to %g", lo, hi);
    double v;
    size_t len;
    if (span(s, n, buf) || !(len = decimal(buf, &v)) || buf[len] || v < lo || v > hi)
        return refuse(err, what, s, n, forms);
    *out = v;
    return 0;
}

int gram_uint_range(const char *what, const char *s, size_t n, uint64_t lo, uint64_t hi,
                    uint64_t *a, uint64_t *b, struct flood_err *err)
{
    char buf[GRAM_VALUE_MAX + 1], forms[96];
    snprintf(forms, sizeof(forms), "A-B or A, whole numbers from %llu to %llu with A <= B",
             (unsigned long long)lo, (unsigned long long)hi);
    if (span(s, n, buf))
        return refuse(err, what, s, n, forms);
    char *dash = strchr(buf, '-');
    uint64_t x, y;
    struct flood_err ignored;
    if (gram_uint(what, buf, dash ? (size_t)(dash - buf) : GRAM_NUL, lo, hi, &x, &ignored))
        return refuse(err, what, s, n, forms);
    y = x;
    if (dash && gram_uint(what, dash + 1, GRAM_NUL, lo, hi, &y, &ignored))
        return refuse(err, what, s, n, forms);
    if (y < x)
        return refuse(err, what, s, n, forms);
    *a = x;
    *b = y;
    return 0;
}

int gram_keyword(const char *what, const char *s, size_t n, const char *const *names, size_t count,
                 int *index, struct flood_err *err)
{
    if (s && n == GRAM_NUL)
        n = strlen(s);
    for (size_t i = 0; s && i < count; i++)
        if (gram_eq(s, n, names[i])) {
            *index = (int)i;
            return 0;
        }
    char forms[200] = "one of ";
    size_t used = strlen(forms);
    for (size_t i = 0; i < count && used < sizeof(forms) - 1; i++)
        used +=
            (size_t)snprintf(forms + used, sizeof(forms) - used, "%s%s", i ? ", " : "", names[i]);
    return refuse(err, what, s, n, forms);
}

void gram_list_init(struct gram_list *l, const char *s, size_t n, char sep)
{
    if (!s)
        s = "", n = 0;
    if (n == GRAM_NUL)
        n = strlen(s);
    l->p = s;
    l->end = s + n;
    l->sep = sep;
    l->done = n == 0;
}

int gram_list_next(struct gram_list *l, struct gram_item *it)
{
    if (l->done)
        return 0;
    const char *stop = memchr(l->p, l->sep, (size_t)(l->end - l->p));
    if (!stop) {
        stop = l->end;
        l->done = 1;
    }
    it->s = l->p;
    it->n = (size_t)(stop - l->p);
    const char *eq = memchr(it->s, '=', it->n);
    it->key = it->s;
    it->key_n = eq ? (size_t)(eq - it->s) : it->n;
    it->val = eq ? eq + 1 : NULL;
    it->val_n = eq ? (size_t)(stop - eq - 1) : 0;
    l->p = stop + (l->done ? 0 : 1);
    return 1;
}

int gram_eq(const char *s, size_t n, const char *w)
{
    if (n == GRAM_NUL)
        return strcmp(s, w) == 0;
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

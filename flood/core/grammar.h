/* flood/core/grammar.h: one grammar for the values flood reads: durations, sizes, shares,
 * rates, numbers, keywords and lists. Every command's options, the scenario language,
 * --fault, --mix, --content-opt and preset files parse their values here, so "1.5s" or
 * "20%" means the same wherever it is written.
 *
 * Every parser takes the value as a span (s, n); n == GRAM_NUL means s is NUL-terminated.
 * `what` names where the value came from ("--timeout", "--fault 'delay'", "scenario line 3"),
 * and a refusal fills err with "WHAT: expected FORMS, got 'VALUE'", so the message names the
 * option and the accepted forms. Nothing here allocates; the spans point into the caller's
 * text. */
#ifndef FLOOD_GRAMMAR_H
#define FLOOD_GRAMMAR_H

#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"

#define GRAM_NUL ((size_t)-1)

/* The longest value a parser reads (longer is refused): no number flood takes is longer. */
#define GRAM_VALUE_MAX 63

/* What a plain number without a unit means where a duration is expected. */
enum gram_bare {
    GRAM_BARE_NONE,    /* refused: the unit is required (--fault delay=, the scenario) */
    GRAM_BARE_SECONDS, /* "30" is 30 s (--duration, --timeout, ...) */
    GRAM_BARE_MS,      /* "300" is 300 ms (--expect's times) */
};

/* A duration: a decimal number and one of the units us, ms, s, m, h ("250us", "500ms",
 * "1.5s", "2m", "1h"), or a plain number read as `bare` says. In [lo, hi] seconds.
 * 0 and *seconds, or -1 and err. */
int gram_duration(const char *what, const char *s, size_t n, enum gram_bare bare, double lo,
                  double hi, double *seconds, struct flood_err *err) FLOOD_WUR;

/* The same in whole milliseconds (rounded), for the options kept in ms. */
int gram_duration_ms(const char *what, const char *s, size_t n, enum gram_bare bare, long lo_ms,
                     long hi_ms, long *ms, struct flood_err *err) FLOOD_WUR;

/* A size in bytes: a decimal number with an optional unit, k/m/g (powers of 1000, either
 * case, also kB/MB/GB) or KiB/MiB/GiB (powers of 1024): "300", "300k", "1.5m", "2MiB".
 * Rounded to whole bytes, in [lo, hi]. 0 and *bytes, or -1 and err. */
int gram_size(const char *what, const char *s, size_t n, uint64_t lo, uint64_t hi, uint64_t *bytes,
              struct flood_err *err) FLOOD_WUR;

/* What a plain number means where a share is expected. */
enum gram_share_bare {
    GRAM_SHARE_PERCENT,  /* "20" is 20% (--bad-signatures, --undo-share, --fault share=) */
    GRAM_SHARE_FRACTION, /* "0.2" is 20% (--content-opt cw=, media=) */
};

/* A share: "20%", "0.5%", or a plain number read as `bare` says; as a fraction in [lo, hi]
 * (a share of a whole within 0..1; a relative share may pass 1 where the caller allows it,
 * --expect 'fetch.actor<=110%'). 0 and *fraction, or -1 and err. */
int gram_share(const char *what, const char *s, size_t n, enum gram_share_bare bare, double lo,
               double hi, double *fraction, struct flood_err *err) FLOOD_WUR;

/* A rate in events a second: "300", "300/s", "1.5k", "1500/m", "90000/h". In (0, hi] (a rate
 * of 0 is refused). 0 and *per_s, or -1 and err. */
int gram_rate(const char *what, const char *s, size_t n, double hi, double *per_s,
              struct flood_err *err) FLOOD_WUR;

/* A whole decimal number in [lo, hi] (no sign, no unit). 0 and *out, or -1 and err. */
int gram_uint(const char *what, const char *s, size_t n, uint64_t lo, uint64_t hi, uint64_t *out,
              struct flood_err *err) FLOOD_WUR;

/* A decimal number (no unit, no exponent, no inf/nan) in [lo, hi]. 0 and *out, or -1. */
int gram_real(const char *what, const char *s, size_t n, double lo, double hi, double *out,
              struct flood_err *err) FLOOD_WUR;

/* A range of whole numbers "A-B" or "A" (then B = A), lo <= A <= B <= hi. 0, or -1. */
int gram_uint_range(const char *what, const char *s, size_t n, uint64_t lo, uint64_t hi,
                    uint64_t *a, uint64_t *b, struct flood_err *err) FLOOD_WUR;

/* One of names[0..count) exactly: 0 and *index, or -1 and err listing every name. */
int gram_keyword(const char *what, const char *s, size_t n, const char *const *names, size_t count,
                 int *index, struct flood_err *err) FLOOD_WUR;

/* One item of a list. */
struct gram_item {
    const char *s; /* the item, not NUL-terminated */
    size_t n;
    const char *key; /* with gram_kv: the text before the first '=' (the whole item if none) */
    size_t key_n;
    const char *val; /* after the '=': NULL when the item has none */
    size_t val_n;
};

/* A list cursor over s (NUL-terminated or n bytes), items separated by sep. */
struct gram_list {
    const char *p, *end;
    char sep;
    int done;
};

/* Start a list over (s, n) split at sep. An empty text is a list of no items. */
void gram_list_init(struct gram_list *l, const char *s, size_t n, char sep);

/* The next item into *it (key/val split at the first '='): 1, or 0 at the end. An empty item
 * ("a,,b", a trailing ',') is returned as one with n == 0, for the caller to refuse. */
int gram_list_next(struct gram_list *l, struct gram_item *it);

/* Whether span (s, n) equals the NUL-terminated word w. */
int gram_eq(const char *s, size_t n, const char *w);

#endif

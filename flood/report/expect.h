/* flood/report/expect.h: thresholds on a run (`flood run --expect EXPR`) and regression
 * gates between two runs (`flood compare A B --expect 'EXPR within X'`), judged on what
 * run.json recorded, so a gate judges exactly what a reader of the results sees.
 *
 * An expression is METRIC OP VALUE[UNIT] (spaces allowed around OP), OP one of < <= > >=
 * == !=, or METRIC within VALUE[UNIT] for a gate. Metrics:
 *   p50 p90 p95 p99 p99.9 max mean     corrected latency of every operation (ms)
 *   OP.pNN (create.p99, follow.max...) that operation's corrected latency
 *   service.pNN, lag.pNN               service time, dispatch lag
 *   f2a.pNN                            Follow-to-Accept
 *   scheduled sent shed completed unfinished            counts
 *   2xx 4xx 5xx errors 401 403 408 429 503 timeout transport   answers by class
 *                                      (errors: every completed answer that is not 2xx)
 *   accepts                            Accepts of the run's Follows received
 *   fetch.KIND, fetch.KIND.repeat      what the target fetched from the crowd, by kind
 *                                      (fetch.total for all), and fetched again
 *   json:PATH                          any number in run.json (json:totals.retry_after.429)
 * Units: a time is a duration of flood's grammar (flood/core/grammar.h: us, ms, s, m or h,
 * fractions welcome, a bare number ms); a count is a number or a share with % (past 100%
 * allowed):
 * answers over completed, sent and shed over scheduled, completed and unfinished over sent,
 * accepts over Follows sent, fetches over activities sent. A gate's `within` takes a
 * relative share (10%) or an amount in the metric's unit; it fails only in the worse
 * direction (higher latency, errors, shed, fetches; fewer 2xx, sent, completed, accepts). */
#ifndef FLOOD_EXPECT_H
#define FLOOD_EXPECT_H

#include <jansson.h>

#include "sign/err.h"

#define EXPECT_TEXT_MAX 128

enum expect_op { EXPECT_LT, EXPECT_LE, EXPECT_GT, EXPECT_GE, EXPECT_EQ, EXPECT_NE, EXPECT_WITHIN };

struct expect {
    char text[EXPECT_TEXT_MAX];   /* as given */
    char metric[EXPECT_TEXT_MAX]; /* the metric's name */
    enum expect_op op;
    double value;    /* in the metric's base unit (ms for times), or a share (1 is 100%) */
    int share;       /* value is a share (%) */
    int higher_good; /* more is better (2xx, sent, completed, accepts) */
};

/* Parse one expression. 0, or -1 and err naming the expression and the forms ("--expect
 * 'p99<5kg': expected a duration from 0s to 1 week (250us, ...), got '5kg'").
 * `within` is accepted only when gate is set; a gate refuses the other operators. */
int expect_parse(const char *text, int gate, struct expect *out, struct flood_err *err) FLOOD_WUR;

/* Judge e on run (a parsed run.json, borrowed): 1 pass, 0 fail. *got is the value found (a
 * share 0..1 for a share). A metric that run.json lacks fails with why filled. */
int expect_judge(const struct expect *e, const json_t *run, double *got, char *why,
                 size_t why_size);
/* Judge a gate: cur against base. 1 pass, 0 fail; *got and *ref are cur's and base's. */
int expect_judge_gate(const struct expect *e, const json_t *base, const json_t *cur, double *got,
                      double *ref, char *why, size_t why_size);

/* Judge every expression on run: a new JSON array of {expr, got, want, pass, why} (why only
 * when a metric was missing) and *failed counts the failures. The table is also printed to
 * out when not NULL. */
json_t *expect_judge_all(const struct expect *e, size_t n, const json_t *run, FILE *out,
                         int *failed);

/* The value of a metric (any METRIC an expression takes, e.g. "f2a.p99" or
 * "json:inbound.delivery_lag_ms.p99") on run: 0 and *got, or -1 with why filled. */
int expect_metric_value(const char *metric, const json_t *run, double *got, char *why,
                        size_t why_size);

/* A value in the metric's unit as text ("180.3 ms", "99.5%", "12"), into buf. */
const char *expect_format(const struct expect *e, double v, char *buf, size_t size);

#endif

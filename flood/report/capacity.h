/* flood/report/capacity.h: judging one step of `flood capacity` from its run.json, and the
 * search's results: capacity.json and capacity.html.
 *
 * A step is a whole `flood run` at one rate. It is judged on its last part (the tail: the
 * seconds from hold x (1 - tail) to the end of the schedule), where a queue that grows has
 * had time to show:
 *   latency   the median of the per-second corrected-latency p99s of the tail (a median,
 *             so one slow second does not decide a step)
 *   errors    non-2xx answers (timeouts and transport errors too) over the tail's answers
 *   f2a       the highest per-second Follow-to-Accept p99 from the tail's start on
 *             (Accepts of the tail's Follows arrive then or in the wait after the
 *             schedule); a Follow never answered counts as over the limit
 *   queue     how fast the target's queue grew over the tail, items a second, against a
 *             share of the step's rate: a queue growing by 5% of what arrives is a target
 *             falling behind. From the step's own --target-queue readings (the series'
 *             target_queue: each inbound gauge's least-squares slope over the tail's
 *             readings, summed, and the one that grew most named), else from samples the
 *             caller took (the depth at the schedule's end minus at the tail's start)
 * A criterion whose limit is 0 (or, for the queue, that has no samples) is not judged. A
 * step where flood itself was the limit (flood_limited below) says nothing of the target:
 * the search stops there and the verdict says so. */
#ifndef FLOOD_CAPACITY_H
#define FLOOD_CAPACITY_H

#include <jansson.h>
#include <stddef.h>

#include "sign/err.h"

#define CAP_DIR_MAX 512

enum cap_criterion { CAP_LATENCY, CAP_ERRORS, CAP_F2A, CAP_QUEUE, CAP__COUNT };

struct cap_limits {
    double latency_ms; /* the tail's p99 above this breaks the step (0: not judged) */
    double errors;     /* share 0..1 */
    double f2a_ms;
    double queue_share; /* growth a second over the rate, 0..1; < 0: not judged */
    double tail;        /* the judged share of the hold, 0 < tail <= 1 */
    double hold_s;
};

/* One sample of the target's queue depth at a wall-clock time (seconds since the epoch). */
struct cap_sample {
    double t, depth;
};

struct cap_step {
    double rate;
    char dir[CAP_DIR_MAX]; /* the step's run folder, relative to the capacity folder */
    /* the queue criterion from the run's own --target-queue readings: the inbound gauge that
     * grew most over the tail ("bullmq inbox.waiting"), "" when judged from samples */
    char queue[96];
    int ran; /* its run.json was read */
    int pass;
    int broke; /* the first criterion that broke (enum cap_criterion), -1 none */
    double value[CAP__COUNT];
    double limit[CAP__COUNT]; /* in force for this step (the queue's follows the rate) */
    int judged[CAP__COUNT];
    int runs;                 /* how many times this rate was run (repeats when close) */
    int passes;               /* of those runs, how many sustained it (pass: a majority) */
    int repeat_confirm;       /* repeated to confirm a failure, not for being close */
    unsigned long unanswered; /* Follows never Accepted */
    double sent_rate;         /* what the sender achieved in the tail, per second */
    /* flood was the limit: its generator saturated (run.json's generator.saturated: dispatch
     * lag p99 over 10 ms or the event loop over 90% of a core) and either it sent under 95%
     * of what the tail offered, or its lag p99 is a tenth of the latency limit or more. The
     * target was not given the step's rate, or its latencies are flood's delay: the step
     * says nothing of the target, and does not pass. */
    int flood_limited;
    double gen_lag_ms, gen_loop_share, offered_rate;
    /* the queue grew: the tail's sent rate (by its share of 2xx answers) less the growth,
     * what the target processed while behind (its capacity then); NAN when it did not grow */
    double processed_rate;
};

/* "latency", "errors", "f2a", "queue" */
const char *cap_criterion_name(enum cap_criterion c);

/* Judge the run.json of one step (at out->rate, set by the caller, as is out->dir) against
 * lim; samples (may be NULL) are the queue depths taken meanwhile. 0, or -1 and err when
 * the run.json lacks what a judgement needs. */
int cap_judge(const json_t *run, const struct cap_limits *lim, const struct cap_sample *samples,
              size_t n_samples, struct cap_step *out, struct flood_err *err) FLOOD_WUR;
/* Whether a judged step is close to a limit (within `margin`, a share): a candidate for a
 * repeat. */
int cap_close(const struct cap_step *s, double margin);

/* The verdict line ("sustains 212/s (p99 180 ms, Follow-to-Accept p99 1.2 s); at 250/s
 * Follow-to-Accept p99 9.8 s breaks the 5 s limit") into buf. best: the highest passing
 * step or NULL; fail: the lowest failing step or NULL. */
void cap_verdict(const struct cap_step *best, const struct cap_step *fail,
                 const struct cap_limits *lim, char *buf, size_t size);

/* capacity.json: the limits, every step and the verdict (a new reference). */
json_t *cap_json(const struct cap_step *steps, size_t n, const struct cap_limits *lim,
                 const struct cap_step *best, const struct cap_step *fail, const char *verdict);
/* capacity.html in dir: the steps' metrics against their rate with the limits drawn and the
 * knee marked, and a table of the steps linking each run's report.html. 0, or -1 and err. */
int cap_html_write(const char *dir, const json_t *capacity, struct flood_err *err) FLOOD_WUR;

#endif

/* flood/send/sched.h: the open-loop schedule. The intended send time of activity n comes from
 * the schedule alone, never from what happened to earlier sends.
 *
 * A schedule is a list of stages; within a stage the rate goes linearly from the previous
 * stage's end rate (0 before the first) to the stage's rate over the stage's duration,
 * as k6's ramping-arrival-rate does. `--rate R --duration D` is the single stage "R:D"
 * with a start rate of R (a flat line). A stage of duration 0 jumps to its rate: steps are
 * written "R1:0,R1:D1,R2:0,R2:D2".
 *
 * With constant arrivals, activity k (k = 0, 1, ...) is sent when the cumulative expected
 * count N(t) = integral of the rate reaches k: at a flat rate R that is k/R, and the total
 * is the number of integers k with k < N(end). With Poisson arrivals the same inverse is
 * applied to a unit-rate Poisson process (exponential gaps of mean 1 in count space, from
 * a seeded PRNG): an inhomogeneous Poisson process with the same rate curve.
 *
 * Times are nanoseconds from the run's start (CLOCK_MONOTONIC). Pure: no clock, no I/O.
 * A struct sched holds no pointers and may be copied (each consumer walks its own copy). */
#ifndef FLOOD_SCHED_H
#define FLOOD_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"

#define SCHED_MAX_STAGES   64
#define SCHED_RATE_MAX     10000000.0 /* per second */
#define SCHED_DURATION_MAX 604800.0   /* seconds: a week */

enum sched_arrival { SCHED_CONSTANT = 0, SCHED_POISSON };

struct sched_stage {
    double rate0, rate1; /* per second, at the stage's start and end */
    double dur_s;        /* seconds, >= 0 */
    double start_s;      /* seconds from the run's start */
    double count0;       /* expected count N(start_s) */
    double count;        /* expected count within the stage */
};

struct sched {
    struct sched_stage stages[SCHED_MAX_STAGES];
    int n_stages;
    enum sched_arrival arrival;
    uint64_t seed;
    double total_count; /* N(end) */
    double duration_s;
    /* iteration state */
    uint64_t next_k; /* index of the next activity */
    double next_u;   /* count-space position of the next activity */
    uint64_t rng;    /* splitmix64 state (Poisson) */
    int cur_stage;   /* stage of the last lookup (lookups go forward) */
    /* steering (sched_steer_*): zero in a schedule never steered */
    double last_u;     /* count-space position of the activity sched_next returned last */
    double redo_u;     /* Poisson: next_u to restore once a given-back activity is retaken */
    double pause_rate; /* the rate a resume returns to */
    int paused;
    int steered; /* stages were changed */
    int dropped; /* stages dropped from the front to make room (the oldest history) */
    /* replay (sched_init_replay): the intended times themselves, borrowed */
    const int64_t *replay_t;
    uint64_t replay_n;
    double replay_peak;
    /* a shard (flood run --shard K/N): sched_next returns only the activities n with
     * n mod shard_n == shard_k; shard_n 0 or 1: every activity */
    uint64_t shard_k, shard_n;
};

/* Parse a duration: "30" or "30s", "500ms", "2m", "1h", "1.5s". Seconds into *out.
 * 0, or -1 and err ("duration: cannot parse 'x'"). */
int sched_parse_duration(const char *s, double *out, struct flood_err *err) FLOOD_WUR;
/* Parse "constant" or "poisson". */
int sched_parse_arrival(const char *s, enum sched_arrival *out, struct flood_err *err) FLOOD_WUR;

/* A flat schedule of rate per second for dur_s seconds. 0, or -1 and err. */
int sched_init_rate(struct sched *s, double rate, double dur_s, enum sched_arrival arrival,
                    uint64_t seed, struct flood_err *err) FLOOD_WUR;
/* A staged schedule from "R1:D1,R2:D2,..." (D as sched_parse_duration). 0, or -1 and err
 * naming the bad stage ("stages: stage 2 'x': ..."). */
int sched_init_stages(struct sched *s, const char *spec, enum sched_arrival arrival, uint64_t seed,
                      struct flood_err *err) FLOOD_WUR;

/* A replay: activity k is sent at times[k] (ns from the start, not decreasing; borrowed: the
 * array outlives s and its copies), dur_s the schedule's length, peak the most activities
 * in one second. The stages hold one flat stage of the mean rate (sched_rate_at). 0, or -1
 * and err. */
int sched_init_replay(struct sched *s, const int64_t *times, uint64_t n, double dur_s, double peak,
                      struct flood_err *err) FLOOD_WUR;

/* The intended time (ns from the start) of the next activity, advancing; -1 when the
 * schedule is over. */
int64_t sched_next(struct sched *s);
/* Make s one shard's share of the run: from now on sched_next skips the activities that
 * are not shard k's of n (n = 0 or 1: none skipped). The skipped ones keep their place, so
 * the times returned are the unsharded run's (for Poisson too: the same draws are made). */
void sched_set_shard(struct sched *s, uint64_t k, uint64_t n);
/* The number in the run (0, 1, ...) of the activity sched_next returned last; for an
 * unsharded schedule the count of sched_next calls minus one. */
uint64_t sched_index(const struct sched *s);
/* How many activities shard k of n sends of a constant-arrival schedule (exact; Poisson:
 * the expected share). */
uint64_t sched_shard_total(const struct sched *s);
/* Rewind to activity 0 (same seed: the same times again). */
void sched_rewind(struct sched *s);

/* The number of activities a constant-arrival schedule sends (exact); for Poisson the
 * expected number (the real one is known only at the end). */
uint64_t sched_total(const struct sched *s);
double sched_duration(const struct sched *s);
/* The rate in force at t seconds, and the highest rate of the schedule. */
double sched_rate_at(const struct sched *s, double t);
double sched_peak_rate(const struct sched *s);

/* ---- steering (flood run --dashboard) -------------------------------------------------
 * A steered schedule's rate curve changes from a time t_s on (seconds from the start); what
 * came before is kept, and the end of the run stays where it was. Open loop still: the
 * intended times after t_s come from the new curve (no burst to catch up). Every copy of a
 * schedule that applies the same changes in the same order computes the same times (the
 * sender's and the signers' copies), whatever their position. A --stages schedule's later
 * stages are replaced by the steered rate. */

/* From t_s the rate goes linearly to rate over ramp_s seconds (0: at once), then stays.
 * While paused, only the rate the resume goes to changes. 0, or -1 and err (a rate outside
 * 0..SCHED_RATE_MAX, a ramp negative or over a week). */
int sched_steer_rate(struct sched *s, double t_s, double rate, double ramp_s,
                     struct flood_err *err) FLOOD_WUR;
/* No intended times from t_s on until sched_resume (pausing twice is a no-op). */
void sched_pause(struct sched *s, double t_s);
/* From t_s on the rate in force before the pause (or the one set meanwhile) again. */
void sched_resume(struct sched *s, double t_s);
int sched_paused(const struct sched *s);
/* After a change: the intended time of the activity sched_next returned last, under the
 * new curve; -1 when it now falls past the end (it is given back: a later sched_next
 * returns it again once the curve reaches it). Call it only when that sched_next returned a
 * time; after a -1, call sched_next again instead. */
int64_t sched_steer_retime(struct sched *s);
/* The curve as a --stages spec ("R:D,..." with "R:0" jumps), into buf; with its first
 * seconds missing (dropped for room, see sched.c) the spec starts at the first kept
 * stage and *from_s says where (0 otherwise). Returns the length or -1 when buf is small. */
int sched_stages_text(const struct sched *s, char *buf, size_t size, double *from_s);

#endif

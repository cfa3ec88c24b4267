/* flood/send/presign.h: --presign T|all: sign the schedule's first T (or all of it) before the
 * first send, so that during the measured window flood's CPU sends, and the signers only
 * refill the look-ahead (at the lowest priority) when the run is longer than T.
 *
 * The requests stay valid however far ahead they are signed: each one's Date (and an RFC
 * 9421 `created`) is its intended send second, as without --presign, not the time it was
 * signed; what a server's window (docs/LOAD.md, "Presigned runs") must cover is the dispatch
 * lag alone. The run's start is set ahead by an estimate of the presigning (a calibrated
 * signature's cost times the requests, over the signer threads); a window not signed by then
 * is finished during the run and counted as signed late. Refused before the start: a steered
 * run (the dashboard moves the intended times of requests already signed), a window whose
 * requests cannot fit --presign-memory (at a kilobyte each up front, then as signed). */
#ifndef FLOOD_PRESIGN_H
#define FLOOD_PRESIGN_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "flood/crowd/crowd.h"
#include "flood/send/sched.h"
#include "flood/send/signer.h"
#include "sign/err.h"

#define PRESIGN_ALL       (-1.0) /* --presign all: the whole schedule */
#define PRESIGN_REQ_FLOOR 1024   /* bytes a signed request holds at the least (up-front check) */

/* What --presign asks of a run, settled from the schedule. */
struct presign_plan {
    double window_s;    /* the look-ahead: T, or the schedule's whole duration for all */
    uint64_t n;         /* this process's activities inside the first window */
    uint64_t bytes_max; /* --presign-memory */
    size_t ring;        /* ring slots: the window's requests and a margin */
};

/* How it went. */
struct presign_result {
    struct presign_plan plan;
    double head_s;         /* how far ahead the start was set for the presigning */
    double took_s;         /* how long the first window took to sign (or until the start) */
    int complete;          /* the whole first window was signed before the start */
    uint64_t before_start; /* requests signed before the first send */
    uint64_t during_run;   /* signed after it (the refill, or what the start came before) */
    uint64_t not_sent;     /* signed and never taken: the run ended (or was stopped) first */
    uint64_t bytes_peak;   /* the most the ring held */
    int interrupted;       /* SIGINT/SIGTERM while presigning: nothing was sent */
};

/* Parse --presign: a duration (e.g. "30s", "10m") or "all" into *window_s (PRESIGN_ALL).
 * 0, or -1 and err naming --presign. */
int presign_parse(const char *s, double *window_s, struct flood_err *err) FLOOD_WUR;

/* The plan for window_s (PRESIGN_ALL or seconds) over sc (this shard's activities counted)
 * with bytes_max. -1 and err when the window's requests cannot fit bytes_max at
 * PRESIGN_REQ_FLOOR bytes each. */
int presign_plan(const struct sched *sc, double window_s, uint64_t bytes_max,
                 struct presign_plan *p, struct flood_err *err) FLOOD_WUR;

/* Seconds to sign n requests with `threads` signer threads in dialect (SIGNER_NONE: building
 * only), from a calibration: a few signatures of a request-sized message with the crowd's
 * key, timed on this thread, with a margin. */
double presign_estimate_s(struct crowd *crowd, int dialect, uint64_t n, int threads);

/* Wait (before the start) until the signers hold the plan's first window, or the monotonic
 * deadline comes, or a signal of sigs (blocked by the caller) arrives. 0 (res->complete says
 * which of the first two), 1 (a signal: res->interrupted; its number in *sig), or -1 and err:
 * a signer failed, or the window's requests reached --presign-memory before it was
 * signed (the run is refused). Prints progress on err_out unless NULL. */
int presign_wait(struct signer *s, int64_t deadline_mono_ns, const sigset_t *sigs,
                 struct presign_result *res, int *sig, FILE *err_out,
                 struct flood_err *err) FLOOD_WUR;

/* After the run (signer_stop done): before_start as counted by presign_wait, the rest from
 * the signer's counts. */
void presign_finish(struct signer *s, struct presign_result *res);

/* run.json's "presign" (a new reference). */
json_t *presign_json(const struct presign_result *res);
/* One line of the run's output. */
void presign_print(FILE *f, const struct presign_result *res);

#endif

/* flood/send/signer.h: signing off the hot path. Signer threads walk the schedule ahead of
 * time, build each activity (workload_build, in sequence order under a lock) and sign it
 * in parallel (Date = the intended second), filling a bounded look-ahead ring the
 * sender's event loops take from in sequence order: with n consumers (flood run --loops n)
 * consumer k takes the sequence numbers seq with seq mod n == k, in order, and waits on
 * its own eventfd. A request not ready at its intended
 * time shows as dispatch lag: the generator, not the target, was the limit.
 *
 * --sign DIALECTS: the first dialect signs every request; on 400/401 the sender asks for
 * the second (signer_resign) and knocks again. --bad-signatures P%: that share of
 * requests carries a deliberately bad signature (wrong key, stale Date, body not
 * matching its digest), syntactically valid. */
#ifndef FLOOD_SIGNER_H
#define FLOOD_SIGNER_H

#include <stdint.h>
#include <time.h>

#include "flood/crowd/crowd.h"
#include "sign/err.h"
#include "flood/send/hclient.h"
#include "flood/send/sched.h"
#include "flood/send/workload.h"

#define SIGNER_NONE          (-1) /* dialect: no signature */
#define SIGNER_CONSUMERS_MAX 64

struct signer_opts {
    int threads;          /* >= 1 */
    int dialects[2];      /* SIGN_CAVAGE / SIGN_RFC9421 */
    int n_dialects;       /* 0 (--sign none), 1 or 2 */
    double bad_share;     /* 0..1 */
    uint64_t seed;        /* chooses the bad requests and their kind */
    double lookahead_s;   /* how far ahead of its time a request may be ready */
    size_t lookahead_max; /* ring size: requests ready at most */
    const char *user_agent;
    int steerable; /* the schedule may be steered: threads wait at its end, not exit */
    int consumers; /* event loops taking from the ring (0 or 1: one; at most
                    * SIGNER_CONSUMERS_MAX); the ring is rounded up to a multiple */
    /* --presign (send/presign.h): before the start the signers fill the whole first
     * look-ahead of the schedule (not a look-ahead from now), and the ring holds requests
     * of at most bytes_max bytes together (0: no bound; the signers wait for room) */
    int presign;
    uint64_t bytes_max;
};

/* Parse --sign: "cavage", "rfc9421", "cavage,rfc9421", "rfc9421,cavage" or "none". */
int signer_parse_dialects(const char *s, struct signer_opts *o, struct flood_err *err) FLOOD_WUR;
/* Parse --bad-signatures: "5%", "5" or "0.5%": the share into o->bad_share. */
int signer_parse_bad(const char *s, struct signer_opts *o, struct flood_err *err) FLOOD_WUR;

struct sender_loop;

/* One request, ready to send. Owned by whoever took it (signer_req_free). */
struct signer_req {
    uint64_t seq;        /* the sender's order (0, 1, ...: the ring's), a shard's own count */
    uint64_t n;          /* the activity's number in the run (seq unless sharded) */
    int64_t intended_ns; /* from the run's start */
    enum op_kind op;
    int instance, actor;
    const struct sign_key *key; /* the actor's key in force when built (borrowed) */
    char *url;
    char *body; /* what is sent */
    size_t body_len;
    char *signed_body; /* what the digest covers (differs only for BAD_DIGEST), or NULL */
    size_t signed_len;
    char *head; /* the header lines, "Name: value\r\n" each (no Host, no Content-Length) */
    size_t head_len;
    int dialect; /* SIGNER_NONE or the sign_dialect used */
    int bad;     /* enum stats_bad */
    int knocks;  /* 1, 2 after a second knock */
    /* the sender's bookkeeping */
    int64_t start_ns;
    struct hc_req hc;               /* the request as the HTTP client carries it */
    struct signer_req *prev, *next; /* the sender's list of requests in flight */
    struct sender_loop *sender;     /* the sender loop carrying it */
};

void signer_req_free(struct signer_req *r);

struct signer;

/* A signer over the crowd and the workload (borrowed), walking its own copy of sched.
 * mono0_ns/wall0 are the run's start on CLOCK_MONOTONIC and CLOCK_REALTIME (Dates).
 * Does not start threads yet. NULL and err (e.g. the wrong-key key cannot be made). */
struct signer *signer_new(struct crowd *crowd, struct workload *w, const struct sched *sched,
                          const struct signer_opts *o, struct flood_err *err) FLOOD_WUR;
/* Start the threads; the run's start is mono0_ns (CLOCK_MONOTONIC) = wall0_ns (REALTIME). */
int signer_start(struct signer *s, int64_t mono0_ns, int64_t wall0_ns,
                 struct flood_err *err) FLOOD_WUR;
/* Take request seq if it is ready (a new request the caller owns), else NULL. Consumer k of
 * n takes k, k + n, k + 2n, ... in that order, from its own thread (one thread a consumer);
 * a consumer that stops taking holds up the signers once the ring holds its share. */
struct signer_req *signer_take(struct signer *s, uint64_t seq);
/* Consumer k's eventfd (-1 for no such consumer): readable when the request it waits for
 * is ready, or a signer failed: call signer_wait_for(seq) after a NULL from signer_take,
 * then take again (it may be ready already). Read and discard the counter when it fires. */
int signer_wake_fd(const struct signer *s, int consumer);
void signer_wait_for(struct signer *s, uint64_t seq);
/* 1 once a thread failed (the message in err), the run must stop. */
int signer_failed(struct signer *s, struct flood_err *err);
/* Re-sign r with the other dialect (a second knock), in the caller's thread. 0 or -1. */
int signer_resign(struct signer *s, struct signer_req *r, struct flood_err *err) FLOOD_WUR;
/* Steering: apply to the signers' copy of the schedule the change the sender applied to
 * its own (same kind, time and values, in the same order): SIGNER_STEER_RATE (rate,
 * ramp_s), SIGNER_STEER_PAUSE, SIGNER_STEER_RESUME. Requests already in the ring keep
 * their signed Date; the sender gives them their steered intended time. Thread-safe. */
enum signer_steer_kind { SIGNER_STEER_RATE, SIGNER_STEER_PAUSE, SIGNER_STEER_RESUME };
void signer_steer(struct signer *s, enum signer_steer_kind kind, double t_s, double rate,
                  double ramp_s);
/* The signers' counts (for --presign): requests signed so far, the bytes the ring holds
 * now and at most (counted with a bytes_max only), the requests left in the ring by
 * signer_stop (signed, never taken: the run ended first), and whether every request of
 * the schedule's first look-ahead is signed (window_done). Thread-safe. */
struct signer_counts {
    uint64_t signed_n, bytes_held, bytes_peak, left;
    int window_done;
};
void signer_counts(struct signer *s, struct signer_counts *out);
/* Stop and join the threads, free the requests still in the ring (counted as left). */
void signer_stop(struct signer *s);
void signer_free(struct signer *s);

#endif

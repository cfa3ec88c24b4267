/* flood/measure/stats.h: what the sender measures. Outcome classes, per-operation counts and
 * histograms (corrected latency, service time, dispatch lag), the per-second series and
 * the conservation check. One writer: the sender's event loop owns a struct stats; the
 * results are read after the run (or from the same thread for the live line).
 *
 * The room flood/measure/: counting without opinions: log-linear histograms (hist.c),
 * outcome counters, per-operation tables and the per-second series (stats.c), the open
 * Follow-to-Accept probes (probes.c). It calls sign/ (errors) only, so the sender, the
 * inbound side and the reports all build on it. */
#ifndef FLOOD_STATS_H
#define FLOOD_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "flood/measure/fetches.h"
#include "flood/measure/hist.h"
#include "flood/measure/probes.h"

/* The operations the sender measures, each with its own counters and histograms. */
enum op_kind {
    OP_CREATE = 0,
    OP_LIKE,
    OP_FOLLOW,
    OP_UNDO,
    OP_ANNOUNCE,
    OP_REPLY,
    OP_UPDATE,
    OP_DELETE,
    OP_UPDATE_ACTOR,
    OP_QUESTION,
    OP_VOTE,
    OP_EMOJI_REACT,
    OP_DELETE_ACTOR,
    OP_REFOLLOW, /* a Follow from a crowd actor that already follows (--mix refollow=N) */
    OP__COUNT
};

/* "create", "like", "follow", "undo", "announce", "reply", "update", "delete",
 * "update-actor", "question", "vote", "emoji-react", "delete-actor", "refollow" */
const char *op_name(enum op_kind op);

/* Outcome of one request. The transport kinds add up to "transport" in run.json. */
enum stats_outcome {
    OUT_200 = 0,
    OUT_202,
    OUT_2XX_OTHER,
    OUT_401,
    OUT_403,
    OUT_408,
    OUT_429,
    OUT_503,
    OUT_4XX_OTHER,
    OUT_5XX_OTHER,
    OUT_TIMEOUT,
    OUT_REFUSED,   /* transport: connection refused */
    OUT_RESET,     /* transport: reset, or closed with no answer */
    OUT_DNS,       /* transport: name not resolved */
    OUT_TLS,       /* transport: TLS handshake or certificate */
    OUT_TRANSPORT, /* transport: anything else (1xx/3xx answers included) */
    OUT__COUNT
};
#define OUT_FIRST_TRANSPORT OUT_REFUSED

/* "200", "202", "2xx_other", "401", "403", "408", "429", "503", "4xx_other", "5xx_other",
 * "timeout", "refused", "reset", "dns", "tls", "other". */
const char *stats_outcome_name(int outcome);
/* 1 for the 2xx classes. */
int stats_outcome_ok(int outcome);
/* 1 for timeout and the transport kinds. */
int stats_outcome_error(int outcome);

/* Classify a finished transfer: curl_code is its CURLcode (0 = an answer came), status
 * the HTTP status (0 when none), os_errno CURLINFO_OS_ERRNO. Pure. */
int stats_classify(int curl_code, long status, long os_errno);
/* The class of a final answer's status alone (1xx, 3xx and 0: OUT_TRANSPORT). */
int stats_classify_status(long status);

/* Bad-signature kinds (--bad-signatures). */
enum stats_bad { BAD_NONE = 0, BAD_WRONG_KEY, BAD_STALE_DATE, BAD_DIGEST, BAD__COUNT };
const char *stats_bad_name(int kind); /* "wrong_key", "stale_date", "digest" */

struct stats_counts {
    uint64_t scheduled, sent, shed, completed, unfinished;
    uint64_t outcomes[OUT__COUNT];
    uint64_t retry_after[OUT__COUNT]; /* answers that carried Retry-After, by class */
    uint64_t second_knocks;
    uint64_t bad_sent[BAD__COUNT], bad_accepted[BAD__COUNT];
};

struct stats_op {
    struct stats_counts c;
    struct hist latency, service, lag;
};

struct stats_sec {
    uint64_t offered, sent, shed, completed, late;
    uint64_t outcomes[OUT__COUNT];
    double p50_ms, p99_ms; /* corrected latency of the requests completed that second */
    double max_ms;         /* their largest corrected latency (exact) */
    double service_p50_ms, service_p99_ms; /* their service time (from the actual send) */
    double lag_p99_ms;                     /* dispatch lag of the sends of that second */
    /* Follows of this run answered while the second was current (stats_set_probes) */
    uint64_t accepts, rejects;
    double f2a_p50_ms, f2a_p99_ms;  /* Follow-to-Accept of those Accepts */
    uint64_t deliveries;            /* the target's deliveries the crowd accepted (set_inbound) */
    uint64_t fetches[FETCH__COUNT]; /* GETs the target made of the crowd, by kind (set_fetches) */
    uint64_t in_flight;             /* at the second's end */
    double steal_ms; /* the host's steal of the generator's CPUs that second (set_steal) */
    int closed;
};

/* One second as a writer closed it (stats_tick), for a reader merging several writers'
 * series (flood/measure/stats_merge.h): its row as it stood then (counts so far, figures,
 * in_flight), the histograms its figures came from, and the writer's stats itself (its
 * running per-operation tables). Borrowed: valid during the call. */
struct stats_closed {
    size_t sec;
    const struct stats_sec *row;
    const struct hist *latency, *service, *lag;
    const struct stats *from;
};

struct stats {
    struct stats_op op[OP__COUNT];
    struct stats_sec *series; /* owned; one per second from the start */
    size_t n_series, cap_series;
    struct hist sec_latency;              /* the current second's completions */
    struct hist sec_service;              /* the same, service time */
    struct hist sec_lag;                  /* the current second's sends */
    struct probes *probes;                /* borrowed, may be NULL: read at each second's close */
    struct hist *sec_f2a;                 /* owned; swapped with the probes' (probes_take_second) */
    uint64_t (*inbound_count)(void *ctx); /* a running count of inbound deliveries, or NULL */
    void *inbound_ctx;
    uint64_t inbound_prev;
    uint64_t (*fetch_count)(void *ctx, int kind); /* running fetch counts by kind, or NULL */
    void *fetch_ctx;
    uint64_t fetch_prev[FETCH__COUNT];
    double (*steal)(void *ctx); /* the host's steal so far, seconds (< 0: not known), or NULL */
    void *steal_ctx;
    double steal_prev;
    size_t cur_sec;      /* the second sec_* belong to */
    uint64_t late_sends; /* sends with dispatch lag over late_us */
    /* a send later than this is late: STATS_LATE_US beyond the sender's dispatch quantum,
     * the lateness it allows itself (sender_loop_new sets it; stats_new: STATS_LATE_US) */
    uint64_t late_us;
    uint64_t not_ready; /* requests the signers had not ready at their intended time */
    void (*closed)(void *ctx, const struct stats_closed *c); /* stats_set_closed, or NULL */
    void *closed_ctx;
};

#define STATS_LATE_US 1000

/* A new zeroed stats (never NULL); stats_free. */
struct stats *stats_new(void);
void stats_free(struct stats *s);

/* Events; times are ns from the run's start. */
void stats_shed(struct stats *s, enum op_kind op, int64_t intended_ns);
void stats_sent(struct stats *s, enum op_kind op, int64_t intended_ns, int64_t start_ns);
/* A request finished with outcome; retry_after when the answer carried one; bad is its
 * bad-signature kind (BAD_NONE for a good one). */
void stats_done(struct stats *s, enum op_kind op, int outcome, int retry_after, int bad,
                int64_t intended_ns, int64_t start_ns, int64_t done_ns);
/* Read Follow-to-Accept per second from p (borrowed; it must outlive s's last
 * stats_tick): each second closed by stats_tick takes what p closed since the previous
 * one (probes_take_second). NULL stops it. */
void stats_set_probes(struct stats *s, struct probes *p);
/* Read inbound deliveries per second from a running counter (count(ctx), thread-safe):
 * each second closed by stats_tick records how much it grew. NULL stops it. */
void stats_set_inbound(struct stats *s, uint64_t (*count)(void *ctx), void *ctx);
/* Read the target's fetches per second, by kind, from running counters (count(ctx, kind),
 * thread-safe, e.g. fetches_count): each second closed records how much each grew. NULL
 * stops it. */
void stats_set_fetches(struct stats *s, uint64_t (*count)(void *ctx, int kind), void *ctx);
/* Read the host's steal time per second from a running total in seconds (steal(ctx),
 * negative when not known): each second closed records how much it grew, in ms. NULL
 * stops it. */
void stats_set_steal(struct stats *s, double (*steal)(void *ctx), void *ctx);
/* Call fn(ctx, c) for each second stats_tick closes, after its figures are computed and
 * before its histograms are reset (on the writer's thread). NULL stops it. */
void stats_set_closed(struct stats *s, void (*fn)(void *ctx, const struct stats_closed *c),
                      void *ctx);
/* Close every second before now_ns (computing its percentiles); in_flight is recorded
 * for the seconds closed. With probes set, the first second closed by a call gets the
 * Accepts and Rejects that arrived since the previous call (a late tick shifts them by
 * the tick's lateness, never loses them). */
void stats_tick(struct stats *s, int64_t now_ns, uint64_t in_flight);

/* Sent and never completed: set by the sender at the end, per operation. */
void stats_unfinished(struct stats *s, enum op_kind op, uint64_t n);
/* Add src's counts into dst, exactly: per operation the counters and the histograms,
 * late_sends, not_ready, and second by second the series' counts (stats_sec_add_counts;
 * dst's series grows to src's length). dst's per-second figures (percentiles, max,
 * in_flight, probes, deliveries, fetches) are left as they are: they come from merged
 * per-second histograms or from counters only dst reads (stats_merge.h). */
void stats_add(struct stats *dst, const struct stats *src);
/* The counts of a second (offered, sent, shed, completed, late, outcomes) of src into dst;
 * stats_sec_zero_counts zeroes them. */
void stats_sec_add_counts(struct stats_sec *dst, const struct stats_sec *src);
void stats_sec_zero_counts(struct stats_sec *sec);
/* Add the counts src into dst. */
void stats_counts_add(struct stats_counts *dst, const struct stats_counts *src);
/* Sums over the operations into out. */
void stats_totals(const struct stats *s, struct stats_counts *out);
/* The overall histograms (merged over operations) into the caller's (initialised) hists;
 * any may be NULL. */
void stats_merge_hists(const struct stats *s, struct hist *latency, struct hist *service,
                       struct hist *lag);

/* The conservation line, "conservation: scheduled N = sent N + shed N; sent N = completed N
 * + unfinished N: ok" (or "VIOLATED", also when the outcomes do not add up to completed),
 * into buf. Returns 0 when it holds, -1 when violated. */
int stats_conservation(const struct stats *s, char *buf, size_t size);

#endif

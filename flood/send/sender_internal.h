/* flood/send/sender_internal.h: one event loop's state, shared by sender.c (the loop),
 * sender_steer.c (steering applied on the loop's thread) and sender_loops.c (the loops of
 * a run, started and merged). Nothing else includes it. */
#ifndef FLOOD_SENDER_INTERNAL_H
#define FLOOD_SENDER_INTERNAL_H

#include <event2/event.h>
#include <event2/event_struct.h>
#include <stdatomic.h>
#include <sys/timerfd.h>
#include <time.h>

#include "flood/core/clock.h"
#include "flood/send/hclient.h"
#include "flood/send/sender.h"

/* Which loop of how many; threaded: one of several, on a thread of its own (no signal
 * events: sender_loop_signal forwards them; no tick, live line or steering: sender_loops.c
 * does those over the merged stats). */
struct sender_loop_cfg {
    int index, count;
    int threaded;
};

/* The loop's state (docs/ARCHITECTURE.md, "The sender loop's states"). It changes in
 * sender_move (sender.c) alone:
 *
 *   SENDING <-> BEHIND                     the signers fell behind the schedule, and caught up
 *   SENDING --> DRAINING                   the schedule is over
 *   SENDING, BEHIND, DRAINING --> GRACE    SIGINT, SIGTERM or a steered stop
 *   any but ENDED --> FAILED               the signers failed
 *   any --> ENDED                          the event loop returned (or the loop is freed)
 *
 * DRAINING, GRACE and FAILED send nothing more and wait for the answers in flight:
 * DRAINING up to --timeout + 1 s (or --grace if longer), GRACE and FAILED up to --grace; a
 * second signal ends the wait. */
enum sender_state {
    SENDER_SENDING,  /* each request starts at its intended time (or is shed) */
    SENDER_BEHIND,   /* the next request was not signed at its time: the signers' wake
                        (or the dispatch timer, a quantum on) resumes */
    SENDER_DRAINING, /* the schedule is over: the answers in flight are awaited */
    SENDER_GRACE,    /* stopped by a signal (or the dashboard): --grace for the answers */
    SENDER_FAILED,   /* the signers failed: --grace for the answers, then the run fails */
    SENDER_ENDED,    /* the loop is over: requests the client still holds end unfinished */
    SENDER_STATE__COUNT
};

/* next_t and dispatch_at when they hold no time: the schedule has no next activity, the
 * dispatch timer is not armed */
#define SENDER_NO_TIME (-1)

struct sender_loop {
    struct sender_opts o;
    struct sender_loop_cfg cfg;
    struct signer *signer;
    struct stats *stats;
    struct sched sched;
    struct event_base *base;
    struct hc_client *hc;
    /* the dispatch timer: a timerfd of its own, armed only when its time changes (libevent's
     * precise timers re-arm theirs on every turn of the loop) */
    int dispatch_fd;
    int64_t dispatch_at; /* armed for (ns since the start), or SENDER_NO_TIME */
    struct event *dispatch_ev, *wake_ev, *tick_ev, *drain_ev;
    struct event *sig_int, *sig_term, *steer_ev, *ctl_ev;
    int ctl_fd;         /* threaded: an eventfd counting the signals forwarded */
    atomic_int ctl_sig; /* the last one */
    int64_t mono0;

    enum sender_state state; /* changed by sender_move alone */
    uint64_t next_seq;
    int64_t next_t;              /* its intended time; SENDER_NO_TIME: none (yet) */
    int64_t wake_ns;             /* when dispatch last ran */
    int64_t win_start;           /* the sends counted in windows: when this one began */
    uint64_t win_sent, win_last; /* in this window, in the last whole one */
    struct flood_err fail_err;   /* SENDER_FAILED: the signers' error */
    int sig;                     /* the signal that stopped sending (SIGINT/SIGTERM), or 0 */
    int64_t send_end_ns;         /* when sending stopped (0: not yet) */
    int64_t end_ns;              /* the schedule's end (a steered schedule idles until then) */
    /* stop sending as SIGINT/SIGTERM do (sig names it in the results): sender.c's, through
     * a pointer so sender_steer.c calls nothing in sender.c */
    void (*interrupt)(struct sender_loop *s, int sig);

    uint64_t inflight;
    struct signer_req *open; /* requests in flight (queued at their origin or on a connection) */
    char live_prev[32];
};

/* Sending: SENDING or BEHIND (the dashboard shows it as "sending"). */
static inline int sender_sending(const struct sender_loop *s)
{
    return s->state == SENDER_SENDING || s->state == SENDER_BEHIND;
}

/* Sending stopped, the answers in flight awaited: DRAINING, GRACE or FAILED. */
static inline int sender_draining(const struct sender_loop *s)
{
    return s->state == SENDER_DRAINING || s->state == SENDER_GRACE || s->state == SENDER_FAILED;
}

/* The schedule has a next activity (a steered one paused or run dry has none until a
 * change). */
static inline int sender_has_next(const struct sender_loop *s)
{
    return s->next_t != SENDER_NO_TIME;
}

/* ns since the run's start */
static inline int64_t sender_rel_now(const struct sender_loop *s)
{
    return clock_mono_ns() - s->mono0;
}

/* A timeval of ns (negative: 0). */
static inline struct timeval sender_tv_of_ns(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    struct timeval tv = {.tv_sec = (time_t)(ns / 1000000000),
                         .tv_usec = (suseconds_t)((ns % 1000000000) / 1000)};
    return tv;
}

/* Arm the dispatch timer for at (ns since the run's start), or disarm it (SENDER_NO_TIME). */
static inline void sender_dispatch_at(struct sender_loop *s, int64_t at)
{
    if (at < 0)
        at = SENDER_NO_TIME;
    if (at == s->dispatch_at)
        return;
    struct itimerspec its = {0};
    if (at >= 0) {
        int64_t abs = s->mono0 + (at > 0 ? at : 1);
        its.it_value.tv_sec = (time_t)(abs / 1000000000);
        its.it_value.tv_nsec = (long)(abs % 1000000000);
    }
    if (timerfd_settime(s->dispatch_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
        s->dispatch_at = at;
}

/* sender.c: one loop over signer (borrowed; its consumer cfg->index), walking its own copy
 * of sched and dispatching the activities seq with seq mod cfg->count == cfg->index, into
 * stats (borrowed). NULL and err. */
struct sender_loop *sender_loop_new(const struct sender_opts *o, const struct sender_loop_cfg *cfg,
                                    struct signer *signer, const struct sched *sched,
                                    struct stats *stats, struct flood_err *err);
/* Run it (see sender_run); res->cpu_s is the process's, loop_cpu_s the calling thread's. */
int sender_loop_run(struct sender_loop *s, int64_t mono0_ns, struct sender_result *res,
                    struct flood_err *err);
void sender_loop_free(struct sender_loop *s);
/* res's dispatch lag p99, late sends and saturation verdict (lag p99 over 10 ms or a loop
 * over 90% of a core: res->loop_cpu_share set first), from st. */
void sender_result_lag(struct sender_result *res, const struct stats *st);
/* A threaded loop: act on sig (SIGINT/SIGTERM) as on a signal of its own. Thread-safe. */
void sender_loop_signal(struct sender_loop *s, int sig);
/* The live line of second sec of st (1-based: the last closed), on stderr. */
void sender_live_line(const struct sender_opts *o, const struct stats *st, size_t sec,
                      uint64_t inflight);

/* sender_steer.c: the steering queue's event; publish the state; the run's end */
void sender_on_steer(evutil_socket_t fd, short kind, void *arg);
void sender_steer_state(struct sender_loop *s);
void sender_steer_close(struct sender_loop *s);

#endif

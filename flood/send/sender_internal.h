/* flood/send/sender_internal.h: the sender's state, shared by sender.c (the event loop) and
 * sender_steer.c (steering applied on the loop's thread). Nothing else includes it. */
#ifndef FLOOD_SENDER_INTERNAL_H
#define FLOOD_SENDER_INTERNAL_H

#include <event2/event.h>
#include <event2/event_struct.h>
#include <time.h>

#include "flood/send/hclient.h"
#include "flood/send/sender.h"

struct sender {
    struct sender_opts o;
    struct signer *signer;
    struct stats *stats;
    struct sched sched;
    struct event_base *base;
    struct hc_client *hc;
    struct event *dispatch_timer, *wake_ev, *tick_ev, *drain_ev;
    struct event *sig_int, *sig_term, *steer_ev;
    int64_t mono0;

    uint64_t next_seq;
    int64_t next_t; /* -1 at the end of the schedule */
    int waiting;    /* the next request was not ready at its time */
    int stopping;   /* no more sends: schedule over, a signal, or a failure */
    int draining;
    int ending; /* the loop is over: requests the client still holds end unfinished */
    int failed;
    struct flood_err fail_err;
    int signal;
    int64_t send_end_ns;
    int64_t end_ns; /* the schedule's end (a steered schedule idles until then) */
    /* stop sending as SIGINT/SIGTERM do (sig names it in the results): sender.c's, through
     * a pointer so sender_steer.c calls nothing in sender.c */
    void (*interrupt)(struct sender *s, int sig);

    uint64_t inflight;
    struct signer_req *open; /* requests in flight (queued at their origin or on a connection) */
    char live_prev[32];
};

/* ns since the run's start */
static inline int64_t sender_rel_now(const struct sender *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - s->mono0;
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

/* sender_steer.c: the steering queue's event; publish the state; the run's end */
void sender_on_steer(evutil_socket_t fd, short kind, void *arg);
void sender_steer_state(struct sender *s);
void sender_steer_close(struct sender *s);

#endif

/* flood/send/sender_loops.c: the sender's event loops (see sender.h, --loops). One loop runs
 * in the caller's thread into the caller's stats, exactly as a lone sender. Several run on
 * threads of their own, share nothing on the hot path, and each records into its own
 * struct stats; this file starts them, merges the seconds they close into the caller's
 * stats (stats_merge.h) and ticks from the calling thread, forwards SIGINT/SIGTERM, and at
 * the end joins them and merges every count. */
#include "flood/core/clock.h"
#include "flood/send/sender.h"
#include "flood/send/sender_internal.h"

#include <errno.h>
#include <event2/event.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "flood/core/steal.h"
#include "flood/measure/stats_merge.h"

/* One loop of several, and what its thread hands back. */
struct loop_slot {
    struct sender *owner;
    int index;
    struct sender_loop *loop;
    struct stats *st; /* the loop's own (several loops) or the caller's (one) */
    pthread_t thread;
    int started;
    int64_t mono0;
    struct sender_result res;
    int rc;
    struct flood_err err;
};

struct sender {
    struct sender_opts o;
    struct stats *stats; /* the caller's */
    int n;
    struct loop_slot *slots;
    /* several loops */
    pthread_mutex_t lock;      /* over merge */
    struct stats_merge *merge; /* the loops' closed seconds into stats */
    int notify_fd;             /* an eventfd: a loop closed a second or ended */
    atomic_int finished;       /* loops whose run is over */
    struct event_base *base;   /* the calling thread's: notify and the signals */
    struct event *notify_ev, *sig_int, *sig_term;
    int signal;
};

/* Loop k's share of a total divided among n loops (the first total mod n get one more). */
static long share_of(uint64_t total, int k, int n)
{
    return (long)(total / (uint64_t)n + ((uint64_t)k < total % (uint64_t)n ? 1 : 0));
}

/* A loop's stats closed a second (on the loop's thread). */
static void on_closed(void *ctx, const struct stats_closed *c)
{
    struct loop_slot *sl = ctx;
    struct sender *s = sl->owner;
    pthread_mutex_lock(&s->lock);
    stats_merge_closed(s->merge, sl->index, c);
    pthread_mutex_unlock(&s->lock);
    uint64_t one = 1;
    if (write(s->notify_fd, &one, sizeof(one)) < 0) {
        /* the counter is full: the main thread is awake anyway */
    }
}

static int several_new(struct sender *s, const struct sender_opts *o, struct signer *signer,
                       const struct sched *sched, struct flood_err *err)
{
    pthread_mutex_init(&s->lock, NULL);
    atomic_init(&s->finished, 0);
    s->merge = stats_merge_new(s->stats, s->n);
    if (o->tick) /* e.g. the metrics: per-operation latency while the run goes on */
        stats_merge_track_hists(s->merge);
    if (o->probes) /* Follow-to-Accept per second: read once, by the merged stats */
        stats_set_probes(s->stats, o->probes);
    s->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    s->base = s->notify_fd >= 0 ? event_base_new() : NULL;
    if (!s->base) {
        flood_err_set(err, FLOOD_EIO, "sender: cannot make the loops' control base");
        return -1;
    }
    for (int k = 0; k < s->n; k++) {
        struct loop_slot *sl = &s->slots[k];
        struct sender_opts lo = *o;
        lo.connections = share_of((uint64_t)o->connections, k, s->n);
        if (o->preconnect > 0)
            lo.preconnect = share_of((uint64_t)o->preconnect, k, s->n);
        lo.max_inflight = (uint64_t)share_of(o->max_inflight, k, s->n);
        lo.live = 0;    /* the calling thread prints it, merged */
        lo.tick = NULL; /* and ticks */
        lo.steer = NULL;
        sl->st = stats_new();
        stats_set_closed(sl->st, on_closed, sl);
        struct sender_loop_cfg cfg = {.index = k, .count = s->n, .threaded = 1};
        sl->loop = sender_loop_new(&lo, &cfg, signer, sched, sl->st, err);
        if (!sl->loop)
            return -1;
    }
    return 0;
}

struct sender *sender_new(const struct sender_opts *o, struct signer *signer,
                          const struct sched *sched, struct stats *stats, struct flood_err *err)
{
    int n = o->loops > 1 ? o->loops : 1;
    if (n > SENDER_LOOPS_MAX) {
        flood_err_set(err, FLOOD_EINVAL, "--loops: %d is more than %d", n, SENDER_LOOPS_MAX);
        return NULL;
    }
    if (n > 1 && o->steer) {
        flood_err_set(err, FLOOD_EINVAL, "--loops: steering (--dashboard) needs --loops 1");
        return NULL;
    }
    if (n > 1 && ((o->connections > 0 && o->connections < n) ||
                  (o->max_inflight > 0 && o->max_inflight < (uint64_t)n))) {
        flood_err_set(err, FLOOD_EINVAL,
                      "--loops: %d loops share --connections and --max-inflight: each must be "
                      "at least %d",
                      n, n);
        return NULL;
    }
    /* one consumer of the signer's ring per loop: a consumer nobody takes for stalls it */
    if (signer_wake_fd(signer, n - 1) < 0 || signer_wake_fd(signer, n) >= 0) {
        flood_err_set(err, FLOOD_EINVAL, "sender: the signer was made for another --loops");
        return NULL;
    }
    struct sender *s = flood_xcalloc(1, sizeof(*s));
    s->o = *o;
    s->stats = stats;
    s->n = n;
    s->notify_fd = -1;
    s->slots = flood_xcalloc((size_t)n, sizeof(*s->slots));
    for (int k = 0; k < n; k++) {
        s->slots[k].owner = s;
        s->slots[k].index = k;
    }
    if (n == 1) {
        struct sender_loop_cfg cfg = {.index = 0, .count = 1, .threaded = 0};
        s->slots[0].st = stats;
        s->slots[0].loop = sender_loop_new(o, &cfg, signer, sched, stats, err);
        if (!s->slots[0].loop) {
            sender_free(s);
            return NULL;
        }
        return s;
    }
    if (several_new(s, o, signer, sched, err)) {
        sender_free(s);
        return NULL;
    }
    return s;
}

/* ---- several loops: threads, the merge, signals ------------------------------------ */

static void *loop_main(void *arg)
{
    struct loop_slot *sl = arg;
    struct sender *s = sl->owner;
    sl->rc = sender_loop_run(sl->loop, sl->mono0, &sl->res, &sl->err);
    pthread_mutex_lock(&s->lock);
    stats_merge_done(s->merge, sl->index);
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add(&s->finished, 1);
    uint64_t one = 1;
    if (write(s->notify_fd, &one, sizeof(one)) < 0) {
        /* the counter is full: the main thread is awake anyway */
    }
    return NULL;
}

/* Seconds the loops closed: into the caller's stats, then the tick and the live line. */
static void on_notify(evutil_socket_t fd, short kind, void *arg)
{
    (void)kind;
    struct sender *s = arg;
    uint64_t v;
    if (read(fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing pending */
    }
    uint64_t in_flight = 0;
    pthread_mutex_lock(&s->lock);
    size_t closed = stats_merge_flush(s->merge, &in_flight);
    pthread_mutex_unlock(&s->lock);
    if (closed && s->o.tick)
        s->o.tick(s->o.tick_ctx, s->stats, in_flight);
    if (closed && s->o.live)
        sender_live_line(&s->o, s->stats, s->stats->cur_sec, in_flight);
    if (atomic_load(&s->finished) == s->n)
        event_base_loopexit(s->base, NULL);
}

static void on_signal(evutil_socket_t sig, short kind, void *arg)
{
    (void)kind;
    struct sender *s = arg;
    if (!s->signal) {
        s->signal = (int)sig;
        fprintf(stderr,
                "\nflood: %s: sending stopped, waiting up to %ld ms for the answers in flight "
                "(%d loops)\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", s->o.grace_ms, s->n);
    }
    for (int k = 0; k < s->n; k++)
        if (s->slots[k].started)
            sender_loop_signal(s->slots[k].loop, (int)sig);
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* The generator's figures of the merged run: CPU summed over the loops, the share of the
 * busiest (each loop is one thread: its share is of one core). */
static void several_result(struct sender *s, double wall_s, double cpu_s, struct sender_result *res)
{
    res->wall_s = wall_s;
    res->cpu_s = cpu_s;
    res->loops = s->n;
    for (int k = 0; k < s->n; k++) {
        const struct loop_slot *sl = &s->slots[k];
        struct stats_counts t;
        stats_totals(sl->st, &t);
        res->loop_cpu_s += sl->res.loop_cpu_s;
        if (sl->res.loop_cpu_share > res->loop_cpu_share)
            res->loop_cpu_share = sl->res.loop_cpu_share;
        res->each_cpu_s[k] = sl->res.loop_cpu_s;
        res->each_cpu_share[k] = sl->res.loop_cpu_share;
        res->each_sent[k] = t.sent;
        if (sl->res.interrupted && !res->signal)
            res->signal = sl->res.signal;
    }
    if (s->signal)
        res->signal = s->signal;
    res->interrupted = res->signal != 0;
    sender_result_lag(res, s->stats);
}

static int several_run(struct sender *s, int64_t mono0_ns, struct sender_result *res,
                       struct flood_err *err)
{
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    s->notify_ev = event_new(s->base, s->notify_fd, EV_READ | EV_PERSIST, on_notify, s);
    s->sig_int = evsignal_new(s->base, SIGINT, on_signal, s);
    s->sig_term = evsignal_new(s->base, SIGTERM, on_signal, s);
    int rc = 0;
    if (!s->notify_ev || !s->sig_int || !s->sig_term) {
        flood_err_set(err, FLOOD_EIO, "sender: cannot make libevent events");
        rc = -1;
    }
    /* the loops' threads take no signal: the main thread's base catches them and forwards */
    sigset_t sigs, old;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    for (int k = 0; k < s->n && rc == 0; k++) {
        struct loop_slot *sl = &s->slots[k];
        sl->mono0 = mono0_ns;
        int e = pthread_create(&sl->thread, NULL, loop_main, sl);
        if (e) {
            flood_err_set(err, FLOOD_EIO, "sender: cannot start loop %d: %s", k, strerror(e));
            rc = -1;
        } else
            sl->started = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        event_add(s->notify_ev, NULL);
        event_add(s->sig_int, NULL);
        event_add(s->sig_term, NULL);
        event_base_dispatch(s->base);
        event_del(s->sig_int);
        event_del(s->sig_term);
    } else {
        for (int k = 0; k < s->n; k++) /* stop the loops that started; theirs still count */
            if (s->slots[k].started)
                sender_loop_signal(s->slots[k].loop, SIGTERM);
    }
    struct stats *sts[SENDER_LOOPS_MAX];
    for (int k = 0; k < s->n; k++) {
        if (s->slots[k].started)
            pthread_join(s->slots[k].thread, NULL);
        sts[k] = s->slots[k].st;
    }
    int64_t end = clock_mono_ns() - mono0_ns;
    pthread_mutex_lock(&s->lock);
    stats_merge_finish(s->merge, sts);
    pthread_mutex_unlock(&s->lock);
    if (s->o.live)
        fprintf(stderr, "\n");
    getrusage(RUSAGE_SELF, &ru1);
    several_result(
        s, (double)end / 1e9,
        tv_s(ru1.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ru0.ru_utime) - tv_s(ru0.ru_stime), res);
    for (int k = 0; k < s->n && rc == 0; k++)
        if (s->slots[k].rc) {
            *err = s->slots[k].err;
            rc = -1;
        }
    return rc;
}

int sender_run(struct sender *s, int64_t mono0_ns, struct sender_result *res, struct flood_err *err)
{
    double steal0 = 0, steal1 = 0;
    int cpus0 = 0, cpus1 = 0;
    int steal_ok = steal_now(&steal0, &cpus0) == 0;
    int rc;
    memset(res, 0, sizeof(*res));
    if (s->n > 1) {
        rc = several_run(s, mono0_ns, res, err);
    } else {
        rc = sender_loop_run(s->slots[0].loop, mono0_ns, res, err);
        struct stats_counts t;
        stats_totals(s->stats, &t);
        res->loops = 1;
        res->each_cpu_s[0] = res->loop_cpu_s;
        res->each_cpu_share[0] = res->loop_cpu_share;
        res->each_sent[0] = t.sent;
    }
    if (steal_ok && steal_now(&steal1, &cpus1) == 0 && cpus1 == cpus0 && steal1 >= steal0) {
        res->steal_s = steal1 - steal0;
        res->steal_cpus = cpus1;
    }
    return rc;
}

void sender_free(struct sender *s)
{
    if (!s)
        return;
    for (int k = 0; k < s->n; k++) {
        sender_loop_free(s->slots[k].loop);
        if (s->n > 1)
            stats_free(s->slots[k].st);
    }
    free(s->slots);
    if (s->n > 1) {
        struct event *evs[] = {s->notify_ev, s->sig_int, s->sig_term};
        for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
            if (evs[i])
                event_free(evs[i]);
        if (s->base)
            event_base_free(s->base);
        if (s->notify_fd >= 0)
            close(s->notify_fd);
        stats_merge_free(s->merge);
        pthread_mutex_destroy(&s->lock);
    }
    free(s);
}

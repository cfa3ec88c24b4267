/* flood/send/sender.c: one event loop: flood's HTTP client on one libevent base, open loop
 * (see sender.h). sender_loops.c runs one of them in the caller's thread, or several on
 * threads of their own. */
#include "flood/send/sender.h"
#include "flood/send/sender_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#define SATURATED_LAG_US 10000
#define SATURATED_CPU    0.9
/* The dispatch timer wakes the loop at most once a quantum (--dispatch-quantum, by default
 * this many ns) and sends everything due by then: above 1/quantum per second requests
 * leave in small batches, up to a quantum late, instead of one wake-up (an epoll_wait, a
 * timerfd re-arm and, on an idle machine, a context switch) per request. Below that rate
 * every request still wakes the loop at its own intended time. Between two wakes,
 * responses the loop handles send what fell due. A millisecond is wrk2's own timer tick:
 * flood's requests leave no later than wrk2's, for fewer wake-ups a request than wrk2
 * (docs/PERFORMANCE.md); --dispatch-quantum 200us or 0 for tighter sends at more CPU. */
#define DISPATCH_QUANTUM_NS 1000000
/* Behind the signers, the loop looks again this long after (whatever the quantum). */
#define BEHIND_RETRY_NS 200000
/* When the next dispatch is at most DEFER_READS_NS away and the sends of a quantum (at the
 * rate of the last whole window) fit in the loop's connections, an answer does not wake the
 * loop: it is read at the next dispatch (or the client's 10 ms sweep), timed by its arrival
 * in the kernel (hc_defer_reads). Each wake then sends what fell due and reads what came,
 * where every answer's own wake made one more sleep and context switch (at 40,000/s with a
 * 1 ms quantum: 9,300-10,000 wakes a second against 980-1,100 deferred, and 1.26-1.65
 * times the requests a CPU-second; docs/PERFORMANCE.md). A deferred answer holds its connection
 * until the next wake, at most a quantum: when a quantum's sends would not fit, or a
 * request already waits for a connection, answers wake the loop again. */
#define DEFER_READS_NS        1000000
#define DEFER_READS_WINDOW_NS 10000000
/* Behind the signers, the loop waits for this many more of its requests to be ready. */
#define READY_BATCH 16

#define rel_now sender_rel_now

int sender_parse_source_ips(const char *s, struct sender_opts *o, struct flood_err *err)
{
    char a[64], b[64];
    const char *dash = s ? strchr(s, '-') : NULL;
    size_t la = dash ? (size_t)(dash - s) : (s ? strlen(s) : 0);
    if (!s || la == 0 || la >= sizeof(a) || (dash && strlen(dash + 1) >= sizeof(b)))
        goto bad;
    memcpy(a, s, la);
    a[la] = 0;
    snprintf(b, sizeof(b), "%s", dash ? dash + 1 : a);
    struct in_addr ia, ib;
    if (inet_pton(AF_INET, a, &ia) != 1 || inet_pton(AF_INET, b, &ib) != 1)
        goto bad;
    uint32_t ha = ntohl(ia.s_addr), hb = ntohl(ib.s_addr);
    if (ha == 0 || hb < ha || hb - ha >= 65536)
        goto bad;
    o->src_base = ha;
    o->src_count = hb - ha + 1;
    return 0;
bad:
    flood_err_set(err, FLOOD_EINVAL,
                  "--source-ips: '%s' is not an IPv4 range A-B (e.g. 127.0.0.11-127.0.0.30)",
                  s ? s : "");
    return -1;
}

/* ---- requests ------------------------------------------------------------------------ */

static void open_link(struct sender_loop *s, struct signer_req *r)
{
    r->prev = NULL;
    r->next = s->open;
    if (s->open)
        s->open->prev = r;
    s->open = r;
}

static void open_unlink(struct sender_loop *s, struct signer_req *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        s->open = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

/* The outcome class of what the client saw. */
static int outcome_of(const struct hc_result *res)
{
    switch (res->outcome) {
    case HC_OK:
        return stats_classify_status(res->status);
    case HC_TIMEOUT:
        return OUT_TIMEOUT;
    case HC_REFUSED:
        return OUT_REFUSED;
    case HC_RESET:
        return OUT_RESET;
    case HC_DNS:
        return OUT_DNS;
    case HC_TLS:
        return OUT_TLS;
    default:
        return OUT_TRANSPORT;
    }
}

/* ---- the loop's state ------------------------------------------------------------- */

static const char *const state_names[SENDER_STATE__COUNT] = {
    [SENDER_SENDING] = "sending", [SENDER_BEHIND] = "behind", [SENDER_DRAINING] = "draining",
    [SENDER_GRACE] = "grace",     [SENDER_FAILED] = "failed", [SENDER_ENDED] = "ended",
};

/* The moves of the diagram in sender_internal.h. */
static int move_allowed(enum sender_state from, enum sender_state to)
{
    switch (to) {
    case SENDER_SENDING:
        return from == SENDER_BEHIND;
    case SENDER_BEHIND:
    case SENDER_DRAINING:
        return from == SENDER_SENDING;
    case SENDER_GRACE:
        return from == SENDER_SENDING || from == SENDER_BEHIND || from == SENDER_DRAINING;
    case SENDER_FAILED:
        return from != SENDER_FAILED && from != SENDER_ENDED;
    case SENDER_ENDED:
        return from != SENDER_ENDED;
    default:
        return 0;
    }
}

/* After the schedule's end the answers in flight get their --timeout and a second, or
 * --grace if that is longer; after a signal or a failure, --grace. */
static long drain_wait_ms(const struct sender_loop *s)
{
    if (s->state != SENDER_DRAINING)
        return s->o.grace_ms;
    return s->o.timeout_ms + 1000 > s->o.grace_ms ? s->o.timeout_ms + 1000 : s->o.grace_ms;
}

/* Wait up to drain_wait_ms for the answers in flight (none: the loop ends now); a wait
 * already running starts over. */
static void drain(struct sender_loop *s)
{
    hc_defer_reads(s->hc, 0);
    evtimer_del(s->drain_ev);
    if (s->inflight == 0) {
        event_base_loopexit(s->base, NULL);
        return;
    }
    long wait_ms = drain_wait_ms(s);
    struct timeval tv = {.tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000};
    evtimer_add(s->drain_ev, &tv);
}

/* The one place the loop's state changes. Leaving SENDING or BEHIND stops sending: its
 * time is kept and the dispatch timer disarmed; entering DRAINING, GRACE or FAILED starts
 * the wait for the answers in flight. A move the diagram lacks is a bug: it aborts. */
static void sender_move(struct sender_loop *s, enum sender_state to)
{
    enum sender_state from = s->state;
    if (!move_allowed(from, to)) {
        fprintf(stderr, "flood: sender: no move from %s to %s\n", state_names[from],
                state_names[to]);
        abort();
    }
    s->state = to;
    if ((from == SENDER_SENDING || from == SENDER_BEHIND) && !sender_sending(s)) {
        s->send_end_ns = rel_now(s);
        sender_dispatch_at(s, SENDER_NO_TIME);
    }
    if (sender_draining(s))
        drain(s);
}

/* ---- its rules, named ---------------------------------------------------------------- */

/* The activity knocks a second time, signed in the other dialect (Mastodon and Fedify do
 * it on 400/401): after its first knock was answered 400 or 401, while sending or after
 * the schedule's end, not once a signal, a steered stop or a failure cut the run short. */
static int knocks_again(const struct sender_loop *s, const struct signer_req *r,
                        const struct hc_result *res)
{
    return res->outcome == HC_OK && (res->status == 400 || res->status == 401) && r->knocks == 1 &&
           r->dialect != SIGNER_NONE && (sender_sending(s) || s->state == SENDER_DRAINING);
}

/* Awake anyway (an answer came): the next activity, due by now, goes now rather than at
 * the next timer. */
static int due_now(const struct sender_loop *s, int64_t now)
{
    return s->state == SENDER_SENDING && sender_has_next(s) && s->next_t <= now;
}

/* A steered schedule that is paused (or ran dry) before its end: the loop waits for a
 * change or the end, and does not drain. */
static int steered_idle(const struct sender_loop *s)
{
    return !sender_has_next(s) && s->o.steer && rel_now(s) < s->end_ns;
}

/* Answers need not wake the loop (hc_defer_reads): sending (or behind the signers), the
 * dispatch timer armed and near (the next send, or the quantum's retry), a quantum's sends
 * at the last whole window's rate within the loop's connections, and no request waiting
 * for a connection (an answer read at once frees one). */
static int reads_can_wait(const struct sender_loop *s)
{
    return sender_sending(s) && s->dispatch_at != SENDER_NO_TIME &&
           (double)s->win_last * (double)s->o.quantum_ns <=
               (double)s->o.connections * DEFER_READS_WINDOW_NS &&
           s->dispatch_at - rel_now(s) <= DEFER_READS_NS && !hc_queued(s->hc);
}

/* ---- answers ------------------------------------------------------------------------- */

static void dispatch(struct sender_loop *s);

static void on_done(struct hc_req *q, const struct hc_result *res)
{
    struct signer_req *r = q->ud;
    struct sender_loop *s = r->sender;
    if (s->state == SENDER_ENDED) { /* hc_cancel_all at the end: never finished */
        stats_unfinished(s->stats, r->op, 1);
        open_unlink(s, r);
        s->inflight--;
        signer_req_free(r);
        return;
    }
    int64_t now = rel_now(s);
    /* when it came, where known: a deferred read handles it later than that */
    int64_t answered = res->answered_ns ? res->answered_ns - s->mono0 : now;
    if (answered > now)
        answered = now;
    else if (answered < r->start_ns)
        answered = r->start_ns;
    if (knocks_again(s, r, res)) { /* within the same deadline: --timeout covers it all */
        struct flood_err e2;
        if (signer_resign(s->signer, r, &e2) == 0) {
            s->stats->op[r->op].c.second_knocks++;
            q->head = r->head;
            q->head_len = r->head_len;
            q->body = r->body;
            q->body_len = r->body_len;
            hc_send(s->hc, q);
            return;
        }
    }
    int outcome = outcome_of(res);
    int retry_after = (outcome == OUT_429 || outcome == OUT_503) && res->retry_after;
    /* a Follow the target did not take (an answer outside 2xx, or it never reached the
     * target) awaits no Accept; one timed out or cut may have been taken, and stays open */
    if (r->op == OP_FOLLOW && s->o.probes && outcome >= OUT_401 &&
        (outcome <= OUT_5XX_OTHER || outcome == OUT_REFUSED || outcome == OUT_DNS ||
         outcome == OUT_TLS))
        probes_follow_refused(s->o.probes, r->n, (uint64_t)((s->mono0 + answered) / 1000));
    stats_tick(s->stats, now, s->inflight);
    stats_done(s->stats, r->op, outcome, retry_after, r->bad, r->intended_ns, r->start_ns,
               answered);
    open_unlink(s, r);
    s->inflight--;
    signer_req_free(r);
    if (sender_draining(s) && s->inflight == 0)
        event_base_loopexit(s->base, NULL); /* drained */
    else if (due_now(s, now))
        dispatch(s);
}

static void start(struct sender_loop *s, struct signer_req *r)
{
    r->start_ns = rel_now(s);
    struct hc_req *q = &r->hc;
    memset(q, 0, sizeof(*q));
    q->url = r->url;
    q->head = r->head;
    q->head_len = r->head_len;
    q->body = r->body;
    q->body_len = r->body_len;
    q->deadline_ns = s->mono0 + r->start_ns + (int64_t)s->o.timeout_ms * 1000000;
    if (s->o.src_count) /* instance i sends from address A + i - 1 of the range (wrapping) */
        q->src_ipv4 = s->o.src_base + (uint32_t)((r->instance - 1) % (int)s->o.src_count);
    q->done = on_done;
    q->ud = r;
    r->sender = s;
    stats_sent(s->stats, r->op, r->intended_ns, r->start_ns);
    if (r->bad)
        s->stats->op[r->op].c.bad_sent[r->bad]++;
    if (r->op == OP_FOLLOW && s->o.probes)
        probes_follow_sent(s->o.probes, r->n, (uint64_t)((s->mono0 + r->start_ns) / 1000));
    s->inflight++;
    open_link(s, r);
    hc_send(s->hc, q);
}

/* ---- the schedule -------------------------------------------------------------------- */

/* This loop sends activity seq only when seq mod count == index. */
static int loop_owns(const struct sender_loop *s, uint64_t seq)
{
    return s->cfg.count <= 1 || seq % (uint64_t)s->cfg.count == (uint64_t)s->cfg.index;
}

/* Walk the schedule past the activities of the other loops (the intended times stay the
 * schedule's). */
static void skip_others(struct sender_loop *s)
{
    while (sender_has_next(s) && !loop_owns(s, s->next_seq)) {
        s->next_seq++;
        s->next_t = sched_next(&s->sched);
    }
}

static void dispatch(struct sender_loop *s)
{
    if (s->state != SENDER_SENDING)
        return;
    int64_t now = rel_now(s);
    s->wake_ns = now;
    stats_tick(s->stats, now, s->inflight);
    int sent = 0;
    while (sender_has_next(s) && s->next_t <= now) {
        struct signer_req *r = signer_take(s->signer, s->next_seq);
        if (!r) {
            /* Behind the signers: wake when a batch more is ready, or a quantum from now,
             * whichever comes first; not once a request (a signer at a low priority would
             * hand the core back and forth with the loop once per request). */
            signer_wait_for(s->signer, s->next_seq + READY_BATCH * (uint64_t)s->cfg.count);
            r = signer_take(s->signer, s->next_seq);
            if (!r) {
                s->stats->not_ready++;
                sender_move(s, SENDER_BEHIND); /* the wake event or the timer resumes */
                sender_dispatch_at(s, rel_now(s) + BEHIND_RETRY_NS);
                break;
            }
        }
        r->intended_ns = s->next_t; /* the same unless steered since it was signed */
        if (s->o.sends_log)
            fprintf(s->o.sends_log, "%" PRIu64 " %" PRId64 " %s %s\n", r->n, r->intended_ns,
                    op_name(r->op), s->inflight >= s->o.max_inflight ? "SHED" : "SENT");
        if (s->inflight >= s->o.max_inflight) {
            stats_shed(s->stats, r->op, r->intended_ns);
            signer_req_free(r);
        } else {
            start(s, r);
            sent++;
        }
        s->next_seq++;
        s->next_t = sched_next(&s->sched);
        skip_others(s);
        now = rel_now(s);
    }
    /* the answers since the last wake, after the sends (whose lag they would add to): their
     * connections free again, for what queued behind them */
    hc_poll(s->hc);
    if (steered_idle(s)) {
        sender_dispatch_at(s, s->end_ns);
    } else if (!sender_has_next(s)) {
        sender_move(s, SENDER_DRAINING);
    } else if (s->state == SENDER_SENDING) {
        /* at the next intended time, but not before a quantum since this wake */
        int64_t at = s->next_t;
        if (at < s->wake_ns + s->o.quantum_ns)
            at = s->wake_ns + s->o.quantum_ns;
        sender_dispatch_at(s, at);
    }
    /* the rate of the last whole window, a window long */
    s->win_sent += (uint64_t)sent;
    if (now - s->win_start >= DEFER_READS_WINDOW_NS) {
        s->win_last = s->win_sent;
        s->win_sent = 0;
        s->win_start = now;
    }
    hc_defer_reads(s->hc, reads_can_wait(s));
}

/* Edge-triggered: each expiry reports once, and the next timerfd_settime clears its count,
 * so the timer is never read (a system call a wake saved). */
static void on_dispatch(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct sender_loop *s = arg;
    s->dispatch_at = SENDER_NO_TIME; /* a one-shot: fired */
    if (s->state == SENDER_BEHIND)
        sender_move(s, SENDER_SENDING);
    dispatch(s);
}

static void on_wake(evutil_socket_t fd, short kind, void *arg)
{
    (void)kind;
    struct sender_loop *s = arg;
    uint64_t v;
    if (read(fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing pending */
    }
    if (signer_failed(s->signer, &s->fail_err)) {
        if (s->state != SENDER_FAILED)
            sender_move(s, SENDER_FAILED);
        return;
    }
    if (s->state == SENDER_BEHIND) {
        sender_move(s, SENDER_SENDING);
        dispatch(s);
    }
}

static void on_drain_end(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct sender_loop *s = arg;
    event_base_loopexit(s->base, NULL);
}

static void sender_interrupt(struct sender_loop *s, int sig);

static void on_signal(evutil_socket_t sig, short kind, void *arg)
{
    (void)kind;
    sender_interrupt(arg, (int)sig);
}

static void sender_interrupt(struct sender_loop *s, int sig)
{
    if (s->sig) { /* a second signal: stop waiting */
        event_base_loopexit(s->base, NULL);
        return;
    }
    s->sig = sig;
    if (!s->cfg.threaded) /* else sender_loops.c says it once for every loop */
        fprintf(stderr,
                "\nflood: %s: sending stopped, waiting up to %ld ms for %" PRIu64 " answers\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", s->o.grace_ms, s->inflight);
    if (s->state == SENDER_FAILED)
        drain(s); /* failed already: its wait starts over, --grace long */
    else
        sender_move(s, SENDER_GRACE);
}

/* A signal forwarded by sender_loops.c: each one counts (a second one stops waiting). */
static void on_ctl(evutil_socket_t fd, short kind, void *arg)
{
    (void)kind;
    struct sender_loop *s = arg;
    uint64_t v = 0;
    if (read(fd, &v, sizeof(v)) < 0)
        return;
    for (uint64_t i = 0; i < v; i++)
        sender_interrupt(s, atomic_load(&s->ctl_sig));
}

void sender_loop_signal(struct sender_loop *s, int sig)
{
    atomic_store(&s->ctl_sig, sig);
    uint64_t one = 1;
    if (write(s->ctl_fd, &one, sizeof(one)) < 0) {
        /* the counter is full: the loop is stopping anyway */
    }
}

/* ---- once a second ------------------------------------------------------------------- */

void sender_live_line(const struct sender_opts *o, const struct stats *st, size_t sec,
                      uint64_t inflight)
{
    if (sec == 0 || sec > st->n_series)
        return;
    const struct stats_sec *x = &st->series[sec - 1];
    uint64_t ok = x->outcomes[OUT_200] + x->outcomes[OUT_202] + x->outcomes[OUT_2XX_OTHER];
    uint64_t err = 0;
    for (int k = OUT_TIMEOUT; k < OUT__COUNT; k++)
        err += x->outcomes[k];
    uint64_t rej = x->completed - ok - err;
    char extra[160] = "";
    if (o->live_extra)
        o->live_extra(o->live_ctx, extra, sizeof(extra));
    fprintf(stderr,
            "\r\033[K%4zus offered %" PRIu64 " sent %" PRIu64 " ok %" PRIu64 " rej %" PRIu64
            " err %" PRIu64 " p50 %.1fms p99 %.1fms inflight %" PRIu64 " shed %" PRIu64 "%s%s",
            sec, x->offered, x->sent, ok, rej, err, x->p50_ms, x->p99_ms, inflight, x->shed,
            extra[0] ? " | " : "", extra);
    fflush(stderr);
}

static void on_tick(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct sender_loop *s = arg;
    int64_t now = rel_now(s);
    stats_tick(s->stats, now, s->inflight);
    if (s->steer_ev)
        sender_steer_state(s);
    if (s->o.tick)
        s->o.tick(s->o.tick_ctx, s->stats, s->inflight);
    if (s->o.live)
        sender_live_line(&s->o, s->stats, s->stats->cur_sec, s->inflight);
    int64_t next = (now / 1000000000 + 1) * 1000000000;
    struct timeval tv = sender_tv_of_ns(next - now);
    evtimer_add(s->tick_ev, &tv);
}

/* ---- setup --------------------------------------------------------------------------- */

struct sender_loop *sender_loop_new(const struct sender_opts *o, const struct sender_loop_cfg *cfg,
                                    struct signer *signer, const struct sched *sched,
                                    struct stats *stats, struct flood_err *err)
{
    struct sender_loop *s = flood_xcalloc(1, sizeof(*s));
    s->o = *o;
    s->cfg = *cfg;
    s->ctl_fd = -1;
    s->dispatch_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    s->dispatch_at = SENDER_NO_TIME;
    s->state = SENDER_SENDING;
    s->next_t = SENDER_NO_TIME;
    atomic_init(&s->ctl_sig, 0);
    if (s->o.max_inflight == 0)
        s->o.max_inflight = 10000;
    if (s->o.timeout_ms <= 0)
        s->o.timeout_ms = 10000;
    if (s->o.connections <= 0)
        s->o.connections = 64;
    if (s->o.quantum_ns <= 0)
        s->o.quantum_ns = DISPATCH_QUANTUM_NS;
    s->signer = signer;
    s->stats = stats;
    /* a send is late past the quantum's own lateness, and a millisecond more */
    stats->late_us = STATS_LATE_US + (uint64_t)(s->o.quantum_ns / 1000);
    s->interrupt = sender_interrupt;
    if (s->o.probes && !cfg->threaded)
        stats_set_probes(stats, s->o.probes); /* Follow-to-Accept per second in the series */
    s->sched = *sched;
    sched_rewind(&s->sched);
    struct event_config *ecfg = event_config_new();
    /* the changelist folds the connections' read/write interest changes into one epoll_ctl
     * each; libevent's own timers keep epoll's milliseconds (the tick, the client's sweep,
     * the drain): the dispatch timer is a timerfd of the loop's own */
    if (s->dispatch_fd < 0 || !ecfg ||
        event_config_set_flag(ecfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST) ||
        !(s->base = event_base_new_with_config(ecfg))) {
        if (ecfg)
            event_config_free(ecfg);
        flood_err_set(err, FLOOD_EIO, "sender: cannot make a libevent base");
        sender_loop_free(s);
        return NULL;
    }
    event_config_free(ecfg);
    struct hc_opts ho = {
        .connections = s->o.connections,
        .insecure = s->o.insecure,
        .cacert = s->o.cacert,
        .resolve = s->o.resolve,
        .n_resolve = s->o.n_resolve,
    };
    s->hc = hc_new(s->base, &ho, err);
    if (!s->hc) {
        sender_loop_free(s);
        return NULL;
    }
    s->dispatch_ev =
        event_new(s->base, s->dispatch_fd, EV_READ | EV_PERSIST | EV_ET, on_dispatch, s);
    s->tick_ev = evtimer_new(s->base, on_tick, s);
    s->drain_ev = evtimer_new(s->base, on_drain_end, s);
    s->wake_ev =
        event_new(s->base, signer_wake_fd(signer, cfg->index), EV_READ | EV_PERSIST, on_wake, s);
    if (s->o.steer && !cfg->threaded)
        s->steer_ev =
            event_new(s->base, steer_fd(s->o.steer), EV_READ | EV_PERSIST, sender_on_steer, s);
    if (cfg->threaded) { /* signals reach the main thread only: it forwards them */
        s->ctl_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (s->ctl_fd >= 0)
            s->ctl_ev = event_new(s->base, s->ctl_fd, EV_READ | EV_PERSIST, on_ctl, s);
    } else {
        s->sig_int = evsignal_new(s->base, SIGINT, on_signal, s);
        s->sig_term = evsignal_new(s->base, SIGTERM, on_signal, s);
    }
    if (!s->dispatch_ev || !s->tick_ev || !s->drain_ev || !s->wake_ev ||
        (cfg->threaded ? !s->ctl_ev : !s->sig_int || !s->sig_term) ||
        (s->o.steer && !cfg->threaded && !s->steer_ev)) {
        flood_err_set(err, FLOOD_EIO, "sender: cannot make libevent events");
        sender_loop_free(s);
        return NULL;
    }
    return s;
}

void sender_result_lag(struct sender_result *res, const struct stats *st)
{
    struct hist *lag = hist_new();
    stats_merge_hists(st, NULL, NULL, lag);
    res->lag_p99_ms = hist_value_at_percentile(lag, 99) / 1000.0;
    hist_free(lag);
    res->late_sends = st->late_sends;
    res->saturated =
        res->lag_p99_ms * 1000 > SATURATED_LAG_US || res->loop_cpu_share > SATURATED_CPU;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* This loop's activities in the schedule's first second, at most cap. */
static long first_second(const struct sender_loop *s, long cap)
{
    struct sched sc = s->sched;
    long n = 0;
    for (uint64_t seq = 0; n < cap; seq++) {
        int64_t t = sched_next(&sc);
        if (t < 0 || t >= 1000000000)
            break;
        if (loop_owns(s, seq))
            n++;
    }
    return n;
}

/* Open the target's connections before the first send (the signers' head start leaves
 * the time): handshakes made in the first second would make its sends late. Not with
 * --source-ips, whose connections each carry one instance's requests. */
static void preconnect(struct sender_loop *s)
{
    if (!s->o.preconnect_url || s->o.preconnect == 0 || s->o.src_count)
        return;
    long n = s->o.preconnect > 0 ? s->o.preconnect : first_second(s, s->o.connections);
    if (n > 0)
        hc_preconnect(s->hc, s->o.preconnect_url, n, s->mono0 + (int64_t)s->o.timeout_ms * 1000000);
}

int sender_loop_run(struct sender_loop *s, int64_t mono0_ns, struct sender_result *res,
                    struct flood_err *err)
{
    memset(res, 0, sizeof(*res));
    struct rusage ru0, th0, ru1, th1;
    getrusage(RUSAGE_SELF, &ru0);
    getrusage(RUSAGE_THREAD, &th0);
    s->mono0 = mono0_ns;
    s->next_seq = 0;
    preconnect(s);
    s->next_t = sched_next(&s->sched);
    skip_others(s);
    event_add(s->wake_ev, NULL);
    if (s->ctl_ev)
        event_add(s->ctl_ev, NULL);
    else {
        event_add(s->sig_int, NULL);
        event_add(s->sig_term, NULL);
    }
    s->end_ns = (int64_t)(sched_duration(&s->sched) * 1e9);
    if (s->steer_ev) {
        event_add(s->steer_ev, NULL);
        sender_steer_state(s);
    }
    struct timeval tv = sender_tv_of_ns(1000000000 - rel_now(s) % 1000000000);
    evtimer_add(s->tick_ev, &tv);
    event_add(s->dispatch_ev, NULL);
    sender_dispatch_at(s, s->next_t);

    event_base_dispatch(s->base);

    int64_t end = rel_now(s);
    int failed = s->state == SENDER_FAILED;
    /* what never finished: unfinished, per operation (on_done counts them) */
    sender_move(s, SENDER_ENDED);
    hc_cancel_all(s->hc);
    stats_tick(s->stats, (int64_t)(s->stats->cur_sec + 1) * 1000000000, s->inflight);
    if (s->o.live)
        fprintf(stderr, "\n");
    if (s->sig_int) {
        event_del(s->sig_int);
        event_del(s->sig_term);
    }
    if (s->steer_ev) {
        event_del(s->steer_ev);
        sender_steer_close(s);
    }

    getrusage(RUSAGE_SELF, &ru1);
    getrusage(RUSAGE_THREAD, &th1);
    res->wall_s = (double)end / 1e9;
    res->cpu_s = tv_s(ru1.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ru0.ru_utime) - tv_s(ru0.ru_stime);
    res->loop_cpu_s =
        tv_s(th1.ru_utime) + tv_s(th1.ru_stime) - tv_s(th0.ru_utime) - tv_s(th0.ru_stime);
    double send_s = (double)s->send_end_ns / 1e9;
    res->loop_cpu_share = send_s > 0.1 ? res->loop_cpu_s / res->wall_s : 0;
    sender_result_lag(res, s->stats);
    res->interrupted = s->sig != 0;
    res->signal = s->sig;
    if (failed) {
        *err = s->fail_err;
        return -1;
    }
    return 0;
}

void sender_loop_free(struct sender_loop *s)
{
    if (!s)
        return;
    if (s->hc) {
        if (s->state != SENDER_ENDED)
            sender_move(s, SENDER_ENDED);
        hc_free(s->hc); /* cancels what is still open: on_done counts it unfinished */
    }
    while (s->open) { /* not handed to the client */
        struct signer_req *r = s->open;
        open_unlink(s, r);
        signer_req_free(r);
    }
    struct event *evs[] = {s->dispatch_ev, s->tick_ev,  s->drain_ev, s->wake_ev,
                           s->sig_int,     s->sig_term, s->steer_ev, s->ctl_ev};
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        if (evs[i])
            event_free(evs[i]);
    if (s->base)
        event_base_free(s->base);
    if (s->ctl_fd >= 0)
        close(s->ctl_fd);
    if (s->dispatch_fd >= 0)
        close(s->dispatch_fd);
    free(s);
}

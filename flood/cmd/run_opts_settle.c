/* flood/cmd/run_opts_settle.c: what follows from flood run's options once they are all read:
 * the checks that need no network, the schedule (a rate, stages or a replayed pattern), the
 * default mix and the results folder. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "flood/cmd/run_opts.h"
#include "flood/report/results.h"
#include "flood/send/content_opt.h"

/* --replay: read the pattern, its times at --replay-speed, and each activity's instance and
 * operation. */
static int settle_replay(struct run_opts *ro, const struct crowd_opts *co, struct sched *sc,
                         struct flood_err *err)
{
    struct replay *rp = &ro->replay;
    if (replay_load(ro->replay_path, rp, err))
        return -1;
    ro->replay_t = replay_times(rp, ro->replay_speed);
    ro->pin_instance = flood_xmalloc(rp->n * sizeof(*ro->pin_instance));
    ro->pin_op = flood_xmalloc(rp->n * sizeof(*ro->pin_op));
    int inst = co->instances > 0 ? co->instances : 20;
    for (size_t i = 0; i < rp->n; i++) {
        ro->pin_instance[i] = (uint16_t)replay_instance(rp, rp->ev[i].origin, inst);
        ro->pin_op[i] = rp->ev[i].op;
    }
    double dur = rp->duration_s / ro->replay_speed;
    if (!(dur > 0))
        dur = 1e-3;
    return sched_init_replay(sc, ro->replay_t, rp->n, dur, replay_peak_rate(rp, ro->replay_speed),
                             err);
}

/* --loops by default. A loop carries tens of thousands of requests a second on a core, an
 * RSA-2048 signer about 1,500: signed, the signers are the limit and one loop per 32 cores
 * carries what they sign; unsigned, the loops are, and one per 4 cores leaves the rest to
 * the threads that build the activities, the crowd and the inbound side. The dashboard
 * steers one loop. At most --connections and --max-inflight, which the loops share. */
static int default_loops(const struct run_opts *ro)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    long n = ro->so.n_dialects == 0 ? cores / 4 : cores / 32;
    if (ro->dashboard || n < 1)
        n = 1;
    if (n > SENDER_LOOPS_MAX)
        n = SENDER_LOOPS_MAX;
    if (n > ro->sndo.connections)
        n = ro->sndo.connections;
    if ((uint64_t)n > ro->sndo.max_inflight)
        n = (long)ro->sndo.max_inflight;
    return (int)n;
}

int run_opts_settle(struct run_opts *ro, struct crowd_opts *co, struct sched *sc, char *outdir,
                    size_t outdir_size)
{
    struct flood_err err = {0};
    if (ro->accept_wait_ms < 0)
        ro->accept_wait_ms = ro->sndo.grace_ms;
    if (ro->stages && (ro->rate > 0 || ro->duration_s > 0)) {
        fprintf(stderr, "flood: run: give --stages or --rate with --duration, not both\n");
        return -1;
    }
    if (ro->replay_path && (ro->stages || ro->rate > 0 || ro->duration_s > 0)) {
        fprintf(stderr, "flood: run: --replay sets the schedule: no --rate, --duration or "
                        "--stages with it\n");
        return -1;
    }
    if (ro->replay_path) {
        if (settle_replay(ro, co, sc, &err))
            goto bad;
    } else if (ro->stages) {
        if (sched_init_stages(sc, ro->stages, ro->arrival, ro->seed, &err))
            goto bad;
    } else if (ro->rate > 0 || ro->duration_s > 0) {
        if (!(ro->rate > 0) || !(ro->duration_s > 0)) {
            fprintf(stderr, "flood: run: --rate and --duration go together\n");
            return -1;
        }
        if (sched_init_rate(sc, ro->rate, ro->duration_s, ro->arrival, ro->seed, &err))
            goto bad;
    } else {
        fprintf(stderr, "flood: run: no schedule: give --rate R --duration D or --stages "
                        "(flood run --help)\n");
        return -1;
    }
    if (ro->shard_n > 1 && !ro->start_at_s) {
        fprintf(stderr, "flood: run: --shard needs --start-at: every shard starts the one "
                        "schedule at the same wall-clock time\n");
        return -1;
    }
    if (ro->shard_n > 1 && ro->dashboard) {
        fprintf(stderr, "flood: run: --dashboard steers one process: not with --shard\n");
        return -1;
    }
    if (ro->presign_s && (ro->dashboard || ro->lookahead_s > 0)) {
        fprintf(stderr, "flood: run: --presign %s: not with %s\n", ro->presign_s,
                ro->dashboard ? "--dashboard: steering moves the intended times (and so the Dates) "
                                "of requests already signed"
                              : "--lookahead: --presign sets the look-ahead");
        return -1;
    }
    if (ro->presign_s) {
        struct sched mine = *sc; /* this shard's activities in the window */
        sched_set_shard(&mine, ro->shard_k, ro->shard_n);
        if (presign_plan(&mine, ro->presign_window, ro->presign_memory, &ro->presign, &err))
            goto bad;
    }
    if (ro->sndo.loops == 0)
        ro->sndo.loops = default_loops(ro);
    /* --lookahead by default: a second of signing ahead absorbs a burst the signers meet
     * late; unsigned, a body takes microseconds to build, and one built a second ahead has
     * left the caches by its send (40,000/s: a second is 100 MB of bodies, a page fault
     * every seventh request; 6% more requests a CPU-second at 100 ms, docs/PERFORMANCE.md) */
    if (ro->lookahead_s <= 0)
        ro->lookahead_s = ro->so.n_dialects == 0 ? 0.1 : 1.0;
    if (ro->signers == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        ro->signers = cores > ro->sndo.loops ? (int)(cores - ro->sndo.loops) : 1;
    }
    if (ro->sndo.loops > 1 && ro->dashboard) {
        fprintf(stderr, "flood: run: --dashboard steers one event loop: give --loops 1\n");
        return -1;
    }
    if (ro->sndo.loops > 1 && ((uint64_t)ro->sndo.connections < (uint64_t)ro->sndo.loops ||
                               ro->sndo.max_inflight < (uint64_t)ro->sndo.loops)) {
        fprintf(stderr,
                "flood: run: --loops %d: the loops share --connections and --max-inflight: "
                "each must be at least %d\n",
                ro->sndo.loops, ro->sndo.loops);
        return -1;
    }
    if (ro->sndo.preconnect > ro->sndo.connections)
        ro->sndo.preconnect = ro->sndo.connections;
    ro->sndo.preconnect_url = ro->inbox; /* the personas' inboxes are opened as needed */
    if (!ro->inbox && ro->n_personas == 0) {
        fprintf(stderr,
                "flood: run: no target: give --inbox URL or --persona (flood run --help)\n");
        return -1;
    }
    if (!ro->mix_s) {
        ro->mix[OP_CREATE] = 70;
        ro->mix[OP_LIKE] = 20;
        ro->mix[OP_FOLLOW] = 10;
        if (ro->n_like == 0 && ro->n_personas == 0)
            ro->mix[OP_LIKE] = 0; /* nothing to like */
    }
    if (ro->content_opt_s) {
        /* options change the named profile; plain has no parts: start from default */
        if (ro->content.plain && wf_content_profile("default", &ro->content, &err))
            goto bad;
        if (content_opt_apply(&ro->content, ro->content_opt_s, &err))
            goto bad;
    }
    if (crowd_opts_check(co, &err))
        goto bad;
    if (!ro->out) {
        results_default_dir(time(NULL), outdir, outdir_size);
        ro->out = outdir;
    }
    co->quiet = co->quiet || ro->quiet;
    return 0;
bad:
    fprintf(stderr, "flood: run: %s\n", err.msg);
    return -1;
}

/* flood/cmd/cmd_run.c: `flood run`: the crowd (server, inbound) plus the sender, as a
 * handful of phases over one struct run: the crowd, the target (discovery, the inbound side,
 * the workload, a reachability check), the sender's set-up, the run itself, the results.
 * Options are flood/cmd/run_opts.c's. */
#include "flood/cmd/cmd_run.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/cmd/presets.h"
#include "flood/cmd/run_opts.h"
#include "flood/cmd/run_shard.h"
#include "flood/core/clock.h"
#include "flood/core/http.h"
#include "flood/core/memtrim.h"
#include "flood/core/steal.h"
#include "flood/core/url.h"
#include "flood/crowd/crowd.h"
#include "flood/crowd/dns.h"
#include "flood/crowd/population.h"
#include "flood/dash/dash.h"
#include "flood/crowd/proxy.h"
#include "flood/crowd/server.h"
#include "flood/inbound/inbound.h"
#include "flood/measure/egress.h"
#include "flood/measure/fetches.h"
#include "flood/measure/probes.h"
#include "flood/measure/stats.h"
#include "flood/report/metrics.h"
#include "flood/report/report.h"
#include "flood/report/results.h"
#include "flood/send/presign.h"
#include "flood/send/sched.h"
#include "flood/send/sender.h"
#include "flood/send/signer.h"
#include "flood/send/target.h"
#include "flood/send/workload.h"

#define START_DELAY_NS    500000000 /* the signers' head start before the first send */
#define MEMTRIM_PERIOD_MS 10000     /* malloc_trim during the run (flood/core/memtrim.h) */

/* The server's hooks share one ctx: this trampoline gives each its own. The workload
 * appears after discovery (the server must answer key fetches during it). */
struct hook_ctx {
    _Atomic(struct inbound *) in;
    _Atomic(struct workload *) w;
    struct fetches *fetches; /* set before the server starts */
};

/* Every GET/HEAD the crowd answered, into the fetch accounting. */
static void tramp_served(void *ctx, const struct server_served *f)
{
    struct hook_ctx *h = ctx;
    fetches_record(h->fetches, fetch_kind_of(f->route->kind), f->url, strlen(f->url), f->bytes,
                   f->serve_us);
}

static double run_steal(void *ctx)
{
    (void)ctx;
    double steal_s = -1;
    int cpus;
    return steal_now(&steal_s, &cpus) == 0 ? steal_s : -1;
}

static uint64_t fetch_count(void *ctx, int kind)
{
    return fetches_count(ctx, kind);
}

static int tramp_inbox(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct hook_ctx *h = ctx;
    struct inbound *in = atomic_load(&h->in);
    if (!in) { /* during discovery: the inbound side starts once the target's hosts are known */
        wf_error(503, "starting", out);
        return 503;
    }
    return inbound_inbox_hook(in, req, out);
}

static int tramp_fault(void *ctx, const struct server_req *req, struct server_fault *fault)
{
    struct hook_ctx *h = ctx;
    struct inbound *in = atomic_load(&h->in);
    return in ? inbound_fault_hook(in, req, fault) : 0;
}

static void tramp_flight(void *ctx, int instance, int delta)
{
    struct inbound *in = atomic_load(&((struct hook_ctx *)ctx)->in);
    if (in) /* before the inbound side starts nothing is delivered to the crowd */
        inbound_flight_hook(in, instance, delta);
}

/* Allow the inbound side to fetch keys from the host[:port] of url. */
static void allow_host_of(struct inbound_opts *io, const char *url)
{
    struct url_parts u;
    struct flood_err e;
    if (url && url_split(url, &u, &e) == 0)
        inbound_opts_allow_host(io, u.authority); /* host[:port], the port when not default */
}

static int tramp_object(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct hook_ctx *h = ctx;
    struct workload *w = atomic_load(&h->w);
    return w ? workload_object_hook(w, req, out) : 0;
}

static int tramp_actor(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct hook_ctx *h = ctx;
    struct workload *w = atomic_load(&h->w);
    return w ? workload_actor_hook(w, req, out) : 0;
}

struct run;
static void run_tick(void *ctx, const struct stats *st, uint64_t in_flight);

static void live_inbound(void *ctx, char *buf, size_t size)
{
    inbound_live(ctx, buf, size);
}

/* Connect to every distinct inbox origin once (TCP, and TLS for https) before the start,
 * through the --resolve entries. */
static int preflight(const struct run_opts *ro, char **urls, size_t n, struct flood_err *err)
{
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(urls[i], urls[j]);
        if (seen)
            continue;
        /* from the first sending address: it must be usable too */
        struct in_addr ia = {.s_addr = htonl(ro->sndo.src_base)};
        char src[INET_ADDRSTRLEN] = "";
        if (ro->sndo.src_count)
            inet_ntop(AF_INET, &ia, src, sizeof(src));
        size_t n_resolve = 0;
        const char *const *rv = inbound_opts_resolve(ro->io, &n_resolve);
        struct http_opts ho = {.resolve = rv,
                               .n_resolve = n_resolve,
                               .insecure = ro->sndo.insecure,
                               .cacert = ro->sndo.cacert,
                               .timeout_ms = ro->sndo.timeout_ms > 0 && ro->sndo.timeout_ms < 5000
                                                 ? ro->sndo.timeout_ms
                                                 : 5000,
                               .source = src[0] ? src : NULL};
        struct http_req req = {.method = HTTP_CONNECT_ONLY,
                               .url = urls[i],
                               .o = &ho,
                               .who = "target unreachable before the start"};
        struct http_resp r;
        struct flood_err e;
        if (http_fetch(&req, &r, &e) < 0) {
            flood_err_set(err, FLOOD_EIO, "run: %s (--no-check runs anyway)", e.msg);
            return -1;
        }
        http_resp_free(&r);
    }
    return 0;
}

/* Resolve every persona (WebFinger, then a signed GET of its actor and outbox). With
 * --like-object, those objects replace what the outboxes offered. */
static int discover(const struct run_opts *ro, struct crowd *crowd, struct persona **out, size_t *n,
                    struct flood_err *err)
{
    struct target_opts to = {0};
    to.target_http = ro->target_http;
    to.quiet = ro->quiet;
    to.http.resolve = inbound_opts_resolve(ro->io, &to.http.n_resolve);
    to.http.insecure = ro->sndo.insecure;
    to.http.cacert = ro->sndo.cacert;
    to.dialect = ro->so.n_dialects ? ro->so.dialects[0] : SIGN_CAVAGE;
    struct persona *p = flood_xcalloc(ro->n_personas, sizeof(*p));
    for (size_t i = 0; i < ro->n_personas; i++) {
        if (target_discover(ro->personas[i], crowd, &to, &p[i], err)) {
            for (size_t j = 0; j < i; j++)
                persona_free(&p[j]);
            free(p);
            return -1;
        }
        if (ro->n_like) {
            for (size_t k = 0; k < p[i].n_posts; k++)
                free(p[i].posts[k]);
            free(p[i].posts);
            p[i].posts = flood_xcalloc(ro->n_like, sizeof(char *));
            for (size_t k = 0; k < ro->n_like; k++)
                p[i].posts[k] = flood_xstrdup(ro->like_objects[k]);
            p[i].n_posts = ro->n_like;
        }
        if (!ro->quiet)
            fprintf(stderr, "flood: run: persona %s: actor %s, inbox %s, %zu posts\n",
                    ro->personas[i], p[i].actor, p[i].shared_inbox ? p[i].shared_inbox : p[i].inbox,
                    p[i].n_posts);
    }
    *out = p;
    *n = ro->n_personas;
    return 0;
}

static void personas_free(struct persona *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        persona_free(&p[i]);
    free(p);
}
/* One run: its options and everything it starts, freed by run_free in reverse. */
struct run {
    struct run_opts ro;
    struct tq_sampler *tq; /* --target-queue, read from the start to the results */
    struct memtrim *trim;  /* a burst's freed memory handed back while the run sends */
    struct crowd_opts co;
    struct inbound_opts *io;
    struct sched sc;
    char outdir[256];
    sigset_t sigs; /* SIGINT and SIGTERM: blocked in every thread the run starts */
    struct crowd *crowd;
    struct probes *probes;
    struct fetches *fetches; /* what the target fetched back */
    struct server *srv;
    struct proxy *proxy;          /* --proxy: the target's egress proxy */
    struct egress *egress;        /* its counts */
    unsigned long long crowd_cut; /* TLS answers cut when the results were made */
    struct hook_ctx hctx;
    struct persona *personas;
    size_t n_personas;
    char **urls; /* the distinct inboxes the sender posts to */
    size_t n_urls;
    struct inbound *in;
    struct workload *w;
    struct metrics_pub *mpub;
    struct metrics *mtr;
    struct steer *steer; /* --dashboard: the sender's steering channel */
    struct dash *dash;
    json_t *config;
    struct stats *st;
    struct signer *signer;
    struct sender *sender;
    char started_at[32];
    int64_t start_mono; /* the schedule's time 0, CLOCK_MONOTONIC ns */
    int64_t start_wall; /* the same on CLOCK_REALTIME */
    FILE *sends_log;    /* --log-sends */
    struct sender_result res;
    struct presign_result pres; /* --presign */
    int run_rc;
    struct preset preset; /* --preset: its options are in argv (borrowed by ro) */
    char **argv;          /* argv with the preset expanded */
};

/* Once a second on the sender's loop (with --loops, on this thread over the merged stats):
 * the metrics' copy and the dashboard's rows. */
static void run_tick(void *ctx, const struct stats *st, uint64_t in_flight)
{
    struct run *r = ctx;
    if (r->mpub)
        metrics_pub_stats(r->mpub, st, in_flight);
    dash_push(r->dash, st);
}

/* Start fn with SIGINT/SIGTERM blocked, so the thread it starts inherits the mask: only the
 * main thread takes them (libevent catches them during the run, in sender_run, which
 * forwards them to its loops' threads with --loops). */
#define RUN_BLOCKED(r, expr)                                                                       \
    do {                                                                                           \
        sigset_t old_;                                                                             \
        pthread_sigmask(SIG_BLOCK, &(r)->sigs, &old_);                                             \
        expr;                                                                                      \
        pthread_sigmask(SIG_SETMASK, &old_, NULL);                                                 \
    } while (0)

/* --population sizes=/acts=: the crowd laid out before it is made, as wide as its biggest
 * instance (crowd/sizes.h). 0, or -1 (said). */
static int run_sizes(struct run *r)
{
    struct population *pop = inbound_opts_population(r->io);
    if (!pop || !sizes_skewed(&pop->sizes))
        return 0;
    struct flood_err err = {0};
    if (sizes_layout(&pop->sizes, r->co.instances, r->co.actors, pop->seed, &err)) {
        fprintf(stderr, "flood: run: --population: %s\n", err.msg);
        return -1;
    }
    r->co.actors = pop->sizes.width;
    if (!r->ro.quiet)
        fprintf(stderr,
                "flood: run: population: %u actors on %d instances, the biggest %d, the median "
                "%u; the top 10%% of the actors send %.0f%% of the activity\n",
                pop->sizes.total, pop->sizes.instances, pop->sizes.width, sizes_median(&pop->sizes),
                sizes_top_share(&pop->sizes, 0.1) * 100);
    return 0;
}

/* The crowd and its server (the hooks answer 503 until the inbound side is up). */
static int run_crowd(struct run *r, struct flood_err *err)
{
    r->crowd = crowd_new(&r->co, err);
    if (!r->crowd)
        return -1;
    r->probes = probes_new();
    probes_log_on(r->probes); /* follows.tsv: flood merge joins Follows and Accepts */
    if (r->crowd->state_dir)  /* an hour of Follows on disk, not in the resident set */
        (void)probes_log_spool(r->probes, r->crowd->state_dir);
    atomic_init(&r->hctx.in, NULL);
    atomic_init(&r->hctx.w, NULL);
    r->fetches = fetches_new();
    r->hctx.fetches = r->fetches;
    struct server_hooks hooks = {.ctx = &r->hctx,
                                 .inbox = tramp_inbox,
                                 .fault = tramp_fault,
                                 .object = tramp_object,
                                 .actor = tramp_actor,
                                 .served = tramp_served,
                                 .inbox_flight = tramp_flight};
    RUN_BLOCKED(r, r->srv = server_start(r->crowd, &hooks, err));
    if (!r->srv)
        return -1;
    if (!r->ro.quiet)
        fprintf(stderr, "flood: run: crowd listening on %s://%s\n", r->co.tls ? "https" : "http",
                server_address(r->srv));
    if (server_dns(r->srv))
        fprintf(stderr, "flood: run: dns on %s\n", dns_address(server_dns(r->srv)));
    char warn[512];
    if (crowd_port_warning(&r->co, server_port(r->srv), warn, sizeof(warn)))
        fprintf(stderr, "flood: run: %s\n", warn);
    if (r->co.proxy) {
        r->egress = egress_new(&r->crowd->wf);
        struct proxy_hooks ph = {.ctx = r->egress, .event = egress_record};
        RUN_BLOCKED(r, r->proxy =
                           proxy_start(r->crowd, r->co.proxy, server_address(r->srv), &ph, err));
        if (!r->proxy)
            return -1;
        egress_set_address(r->egress, proxy_address(r->proxy));
        if (!r->ro.quiet)
            fprintf(stderr, "flood: run: proxy listening on http://%s\n", proxy_address(r->proxy));
    }
    return 0;
}

/* The target: personas resolved, the inboxes to post to, the inbound side allowed to fetch
 * from the target's hosts, the workload, and a reachability check. */
static int run_target(struct run *r, struct flood_err *err)
{
    struct run_opts *ro = &r->ro;
    if (ro->n_personas) {
        if (discover(ro, r->crowd, &r->personas, &r->n_personas, err))
            return -1;
        for (size_t i = 0; i < r->n_personas; i++) {
            const struct persona *p = &r->personas[i];
            const char *u = ro->inbox                        ? ro->inbox
                            : ro->personal_inbox && p->inbox ? p->inbox
                            : p->shared_inbox                ? p->shared_inbox
                                                             : p->inbox;
            if (u)
                opt_strs_add(&r->urls, &r->n_urls, u);
            allow_host_of(r->io, p->actor);
            allow_host_of(r->io, u);
        }
    } else if (ro->n_like) {
        /* --inbox alone: one placeholder persona carrying the objects to like (borrowed) */
        r->personas = flood_xcalloc(1, sizeof(*r->personas));
        r->personas[0].posts = ro->like_objects;
        r->personas[0].n_posts = ro->n_like;
        r->n_personas = 1;
    }
    if (ro->inbox) {
        opt_strs_add(&r->urls, &r->n_urls, ro->inbox);
        allow_host_of(r->io, ro->inbox);
    }
    RUN_BLOCKED(r, r->in = inbound_new(r->crowd, r->io, r->probes, err));
    if (!r->in)
        return -1;
    atomic_store(&r->hctx.in, r->in);
    struct population *pop = inbound_opts_population(r->io); /* laid out by run_sizes */
    struct workload_opts wo = {.seed = ro->seed,
                               .personal_inbox = ro->personal_inbox,
                               .inbox_url = ro->inbox,
                               .content = &ro->content,
                               .reply_depth = ro->reply_depth,
                               .unseen_pct = ro->unseen_pct,
                               .undo_pct = ro->undo_pct,
                               .rotate_pct = ro->rotate_pct,
                               .pin_instance = ro->pin_instance,
                               .pin_op = ro->pin_op,
                               .n_pin = ro->replay_path ? ro->replay.n : 0,
                               .refollow = ro->refollow,
                               .sizes = pop && pop->sizes.total ? &pop->sizes : NULL,
                               .state_dir = r->crowd->state_dir};
    memcpy(wo.mix, ro->mix, sizeof(wo.mix));
    /* shards of one run share its ids: the run part comes from --start-at and the seed */
    time_t start = ro->start_at ? (time_t)ro->start_at : time(NULL);
    r->w = workload_new_at(r->crowd, &wo, r->personas, r->n_personas, start, err);
    if (!r->w)
        return -1;
    char notes[4096]; /* what the run cannot do as asked, said before it starts */
    workload_notes(r->w, notes, sizeof(notes));
    if (notes[0])
        fprintf(stderr, "flood: run: %s\n", notes);
    atomic_store(&r->hctx.w, r->w);
    /* Accepts arriving at the crowd close the probes of this run's Follows. */
    inbound_set_workload(r->in, r->w);
    return ro->no_check ? 0 : preflight(ro, r->urls, r->n_urls, err);
}

/* --dashboard: the steering channel, a steerable schedule, the page's listener. Steering
 * may raise the rate past the schedule's peak: the signers' ring (pointers only; the time
 * look-ahead still bounds what is built) is sized for the most a rate may become. */
static int run_dashboard(struct run *r, struct flood_err *err)
{
    struct run_opts *ro = &r->ro;
    r->steer = steer_new();
    ro->sndo.steer = r->steer;
    ro->so.steerable = 1;
    ro->so.lookahead_max = 65536;
    char title[600];
    snprintf(title, sizeof(title), "flood run: %s for %.0f s to %s", ro->stages ? ro->stages : "",
             sched_duration(&r->sc), ro->inbox ? ro->inbox : "the personas");
    if (!ro->stages)
        snprintf(title, sizeof(title), "flood run: %g/s for %.0f s to %s", ro->rate,
                 sched_duration(&r->sc), ro->inbox ? ro->inbox : "the personas");
    struct dash_opts dop = {.addr = ro->dashboard,
                            .token = ro->dashboard_token,
                            .title = title,
                            .steer = r->steer,
                            .in = r->in,
                            .rows_dir = r->crowd->state_dir};
    RUN_BLOCKED(r, r->dash = dash_start(&dop, err));
    if (!r->dash)
        return -1;
    /* the URL goes to stderr and stdout: a person reads one, a script the other */
    fprintf(stderr, "flood: run: dashboard on http://%s/%s%s\n", dash_address(r->dash),
            ro->dashboard_token ? "?token=" : "", ro->dashboard_token ? ro->dashboard_token : "");
    printf("dashboard: http://%s/\n", dash_address(r->dash));
    fflush(stdout);
    return 0;
}

/* The sender's parts: signer options from the schedule, metrics, config, stats, signers. */
static int run_prepare(struct run *r, struct flood_err *err)
{
    struct run_opts *ro = &r->ro;
    ro->so.threads = ro->signers;
    ro->so.seed = ro->seed;
    ro->so.lookahead_s = ro->lookahead_s;
    double ring = sched_peak_rate(&r->sc) * ro->lookahead_s * 1.2 + 256;
    ro->so.lookahead_max = ring > 65536 ? 65536 : (size_t)ring;
    ro->so.user_agent = "flood/" FLOOD_VERSION;
    ro->so.consumers = ro->sndo.loops; /* a consumer of the signers' ring per event loop */
    if (ro->presign_s) {               /* the look-ahead is the window, the ring holds it */
        ro->so.presign = 1;
        ro->so.lookahead_s = ro->presign.window_s;
        ro->so.lookahead_max = ro->presign.ring;
        ro->so.bytes_max = ro->presign_memory;
        r->pres.plan = ro->presign;
    }
    ro->sndo.resolve = inbound_opts_resolve(ro->io, &ro->sndo.n_resolve);
    /* --dispatch-quantum 0: each request at its own time (the sender's 1 ns) */
    ro->sndo.quantum_ns = ro->quantum_s > 0 ? (int64_t)llround(ro->quantum_s * 1e9) : 1;
    ro->sndo.probes = r->probes;
    ro->sndo.live = !ro->quiet && isatty(STDERR_FILENO);
    ro->sndo.live_extra = live_inbound;
    ro->sndo.live_ctx = r->in;
    if (ro->metrics) {
        r->mpub = metrics_pub_new(r->in, r->probes);
        metrics_pub_set_fetches(r->mpub, r->fetches);
        metrics_pub_set_dns(r->mpub, server_dns(r->srv));
        metrics_pub_set_egress(r->mpub, r->egress);
        struct metrics_source msrc = {.snapshot = metrics_pub_snapshot, .ctx = r->mpub};
        RUN_BLOCKED(r, r->mtr = metrics_start(ro->metrics, &msrc, err));
        if (!r->mtr)
            return -1;
        if (!ro->quiet)
            fprintf(stderr, "flood: run: metrics on http://%s/metrics\n", metrics_address(r->mtr));
    }
    /* only with a reader: with --loops, a tick makes the merge keep per-operation
     * histograms current */
    ro->sndo.tick = r->mpub || ro->dashboard ? run_tick : NULL;
    ro->sndo.tick_ctx = r;
    if (ro->dashboard && run_dashboard(r, err))
        return -1;
    r->config = run_opts_config_json(ro, &r->crowd->opts, &r->sc); /* the key layout in force */
    r->st = stats_new();
    stats_set_inbound(r->st, inbound_deliveries_count, r->in); /* deliveries a second */
    stats_set_fetches(r->st, fetch_count, r->fetches);         /* the target's GETs a second */
    stats_set_steal(r->st, run_steal, NULL);                   /* the host's steal a second */
    sched_set_shard(&r->sc, ro->shard_k, ro->shard_n);
    if (ro->log_sends) {
        r->sends_log = fopen(ro->log_sends, "w");
        if (!r->sends_log) {
            flood_err_set(err, FLOOD_EIO, "--log-sends: cannot write '%s': %s", ro->log_sends,
                          strerror(errno));
            return -1;
        }
        ro->sndo.sends_log = r->sends_log;
    }
    r->signer = signer_new(r->crowd, r->w, &r->sc, &ro->so, err);
    if (!r->signer)
        return -1;
    r->sender = sender_new(&ro->sndo, r->signer, &r->sc, r->st, err);
    return r->sender ? 0 : -1;
}

/* Wait up to --accept-wait for the Accepts of the Follows still open, the per-second series
 * going on meanwhile (each Accept lands in its second). */
static void run_accept_wait(struct run *r)
{
    int graced = 0;
    for (long waited = 0; !r->res.interrupted && waited < r->ro.accept_wait_ms; waited += 100) {
        struct probes_totals pt;
        probes_snapshot(r->probes, &pt, NULL);
        /* a refollow's answer (Accept again, Reject, or none) waited for up to 3 s */
        if (pt.open == 0 && (waited >= 3000 || workload_refollows_open(r->w) == 0))
            break;
        if (waited == 0 && !r->ro.quiet)
            fprintf(stderr, "flood: run: waiting up to %ld ms for %" PRIu64 " Accepts\n",
                    r->ro.accept_wait_ms, pt.open);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
        nanosleep(&ts, NULL);
        /* the event loop is done, so the stats are this thread's now */
        graced = 1;
        stats_tick(r->st, clock_mono_ns() - r->start_mono, 0);
        dash_push(r->dash, r->st);
    }
    if (graced) /* close the last grace second too */
        stats_tick(r->st, ((int64_t)r->st->cur_sec + 1) * 1000000000, 0);
}

/* --presign: wait (SIGINT/SIGTERM blocked, read here) until the first window is signed or
 * the start comes. 0 to send, 1 interrupted (nothing sent: the results still written), -1
 * refused or failed. */
static int run_presign(struct run *r, struct flood_err *err)
{
    if (!r->ro.quiet)
        fprintf(stderr,
                "flood: run: presign: signing the first %.0f s of the schedule (%" PRIu64
                " requests) before the start, in %.1f s at most\n",
                r->pres.plan.window_s, r->pres.plan.n, r->pres.head_s);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &r->sigs, &old);
    int sig = 0;
    int rc = presign_wait(r->signer, r->start_mono - START_DELAY_NS / 2, &r->sigs, &r->pres, &sig,
                          r->ro.quiet ? NULL : stderr, err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 1) {
        r->res.interrupted = 1;
        r->res.signal = sig;
        fprintf(stderr, "\nflood: %s: stopped while presigning: nothing was sent\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM");
    }
    return rc;
}

/* The run itself: signers started, the schedule sent, then the Accepts waited for. */
static int run_send(struct run *r, struct flood_err *err)
{
    int64_t head_ns = START_DELAY_NS; /* --presign: the time to sign its window first */
    if (r->ro.presign_s) {
        r->pres.head_s =
            presign_estimate_s(r->crowd, r->ro.so.n_dialects ? r->ro.so.dialects[0] : SIGNER_NONE,
                               r->pres.plan.n, r->ro.signers);
        head_ns = (int64_t)(r->pres.head_s * 1e9);
    }
    if (r->ro.start_at) { /* --start-at: wait for the common start, less the signers' head start */
        int64_t wake = r->ro.start_at * 1000000000 - head_ns;
        if (!r->ro.quiet && wake > clock_wall_ns())
            fprintf(stderr, "flood: run: shard %" PRIu64 "/%" PRIu64 " waits for %s\n",
                    r->ro.shard_k, r->ro.shard_n ? r->ro.shard_n : 1, r->ro.start_at_s);
        struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000),
                              .tv_nsec = (long)(wake % 1000000000)};
        while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    int64_t wall_now = clock_wall_ns(), mono_now = clock_mono_ns();
    r->start_wall = r->ro.start_at ? r->ro.start_at * 1000000000 : wall_now + head_ns;
    r->start_mono = mono_now + (r->start_wall - wall_now);
    results_iso8601((time_t)(r->start_wall / 1000000000), r->started_at, sizeof(r->started_at));
    int rc;
    RUN_BLOCKED(r, rc = signer_start(r->signer, r->start_mono, r->start_wall, err));
    if (rc)
        return -1;
    if (!r->ro.quiet)
        fprintf(stderr, "flood: run: %" PRIu64 " activities over %.1f s to %s\n",
                sched_shard_total(&r->sc), sched_duration(&r->sc),
                r->ro.inbox ? r->ro.inbox : "the personas");
    if (r->dash)
        dash_set_start(r->dash, r->start_mono);
    if (r->ro.n_target_queue &&
        !(r->tq = tq_sampler_start("run", (const char *const *)r->ro.target_queue,
                                   r->ro.n_target_queue, r->start_mono, r->ro.quiet, err)))
        return -1;
    int pre = r->ro.presign_s ? run_presign(r, err) : 0;
    if (pre < 0) {
        signer_stop(r->signer);
        return -1;
    }
    dash_set_tqueue(r->dash, r->tq); /* the page's chart and /metrics read it too */
    if (r->mpub)
        metrics_pub_set_tqueue(r->mpub, r->tq);
    RUN_BLOCKED(r, r->trim = memtrim_start(MEMTRIM_PERIOD_MS));
    struct flood_err run_err = {0};
    if (pre == 0)
        r->run_rc = sender_run(r->sender, r->start_mono, &r->res, &run_err);
    /* a late signal during the teardown below is ignored rather than fatal */
    pthread_sigmask(SIG_BLOCK, &r->sigs, NULL);
    signer_stop(r->signer);
    if (r->ro.presign_s)
        presign_finish(r->signer, &r->pres);
    if (r->run_rc)
        fprintf(stderr, "flood: run: stopped: %s\n", run_err.msg);
    if (r->mpub) /* the event loop is done: st is the main thread's to read now */
        metrics_pub_stats(r->mpub, r->st, 0);
    run_accept_wait(r);
    tq_sampler_stop(r->tq); /* its readings up to here: the accept wait shows the drain */
    dash_push(r->dash, r->st);
    return 0;
}

/* A steered run's changes as the equivalent --stages (the curve the sender followed). */
static void run_replay_line(struct run *r)
{
    char stages[4096];
    double from = steer_stages(r->steer, stages, sizeof(stages));
    uint64_t n = steer_count(r->steer);
    if (!stages[0]) {
        if (n)
            printf("steering: %" PRIu64 " changes (faults or stop only); the rate was not "
                   "steered\n",
                   n);
        return;
    }
    printf("steering: %" PRIu64 " changes; replay the rate with: flood run --stages %s%s "
           "(and this run's other options)\n",
           n, stages, r->ro.arrival == SCHED_POISSON ? " --arrival poisson" : "");
    if (from > 0)
        printf("steering: (its first %.1f s were dropped for room: the stages start there)\n",
               from);
}

/* The page's link to the report: an absolute path (the page is read elsewhere). */
static void dash_finish_at(struct dash *d, const char *out)
{
    char path[4096];
    char *abs = realpath(out, NULL);
    snprintf(path, sizeof(path), "%s/report.html", abs ? abs : out);
    free(abs);
    dash_finish(d, path);
}

/* The table, the conservation line, run.json and the rest (with the --expect verdicts),
 * report.html; then the metrics hold. The exit code: 0 everything written and conserved,
 * 1 not, 3 written but an expectation failed. */
static int run_results(struct run *r)
{
    struct run_opts *ro = &r->ro;
    struct flood_err err = {0};
    /* the crowd takes no more deliveries: what run.json holds is all the target saw taken */
    inbound_close_inboxes(r->in);
    json_t *inbound_j = inbound_json(r->in);
    char rate_text[128];
    if (ro->stages)
        snprintf(rate_text, sizeof(rate_text), "%s", ro->stages);
    else
        snprintf(rate_text, sizeof(rate_text), "%g/s", ro->rate);
    json_t *shard_j = run_shard_json(r->config, r->ro.shard_k, r->ro.shard_n, r->ro.start_at,
                                     &r->sc, workload_id_seq(r->w, 0) >> WORKLOAD_RUN_SHIFT);
    json_t *mix_j = workload_mix_json(r->w); /* asked and sent shares, refollows */
    json_t *pres_j = ro->presign_s ? presign_json(&r->pres) : NULL;
    if (workload_state_write(r->w, &err)) /* the follow state, for the next run */
        fprintf(stderr, "flood: run: %s\n", err.msg);
    struct server_stats crowd = {0};
    struct dns_stats dns = {0};
    if (r->srv)
        server_get_stats(r->srv, &crowd);
    dns_get_stats(server_dns(r->srv), &dns);
    r->crowd_cut = crowd.unflushed;
    struct results_info ri = {.started_at = r->started_at,
                              .crowd = r->srv ? &crowd : NULL,
                              .dns = server_dns(r->srv) ? &dns : NULL,
                              .shard = shard_j,
                              .wall_minus_mono_ns = r->start_wall - r->start_mono,
                              .config = r->config,
                              .inbound = inbound_j,
                              .gen = &r->res,
                              .probes = r->probes,
                              .rate_text = rate_text,
                              .duration_s = sched_duration(&r->sc),
                              .expect = ro->expect,
                              .n_expect = ro->n_expect,
                              .expect_out = stdout,
                              .steer = r->steer,
                              .fetches = r->fetches,
                              .egress = r->egress,
                              .tqueue = r->tq,
                              .users = &ro->users,
                              .preset = ro->preset_j,
                              .mix = mix_j,
                              .presign = pres_j};
    results_print_table(stdout, r->st, &ri);
    char line[256];
    int conserved = stats_conservation(r->st, line, sizeof(line)) == 0;
    printf("%s\n", line);
    if (pres_j)
        presign_print(stdout, &r->pres);
    int wrote = results_write(ro->out, r->st, &ri, &err) == 0;
    if (wrote)
        printf("results: %s\n", ro->out);
    else
        fprintf(stderr, "flood: run: %s\n", err.msg);
    if (wrote && report_write(ro->out, &err)) {
        fprintf(stderr, "flood: run: %s\n", err.msg);
        wrote = 0;
    }
    json_decref(inbound_j);
    json_decref(shard_j);
    json_decref(mix_j);
    json_decref(pres_j);
    if (r->steer)
        run_replay_line(r);
    if (r->dash && wrote)
        dash_finish_at(r->dash, ro->out);
    fflush(stdout);
    if (r->mtr && ro->metrics_hold_s > 0) {
        /* SIGINT/SIGTERM are blocked here: one of them ends the hold early */
        struct timespec hold = {.tv_sec = (time_t)ro->metrics_hold_s,
                                .tv_nsec = (long)(fmod(ro->metrics_hold_s, 1) * 1e9)};
        while (sigtimedwait(&r->sigs, NULL, &hold) < 0 && errno == EINTR)
            ;
    }
    if (r->dash && ro->dashboard_hold_s > 0) {
        struct timespec hold = {.tv_sec = (time_t)ro->dashboard_hold_s,
                                .tv_nsec = (long)(fmod(ro->dashboard_hold_s, 1) * 1e9)};
        while (sigtimedwait(&r->sigs, NULL, &hold) < 0 && errno == EINTR)
            ;
    }
    if (!(conserved && wrote && !r->run_rc))
        return 1;
    return ri.expect_failed ? 3 : 0;
}

static void run_free(struct run *r)
{
    memtrim_stop(r->trim);
    metrics_stop(r->mtr);           /* before what its scrapes read: inbound, probes */
    dash_set_tqueue(r->dash, NULL); /* its page reads the sampler no more */
    tq_sampler_free(r->tq);
    metrics_pub_free(r->mpub);
    dash_stop(r->dash); /* before the inbound side its fault switches reach */
    sender_free(r->sender);
    signer_free(r->signer);
    proxy_stop(r->proxy);
    egress_free(r->egress);
    if (r->srv) {
        struct server_stats st;
        server_get_stats(r->srv, &st);
        if (st.unflushed > r->crowd_cut) /* run.json and its warning have the others */
            fprintf(stderr,
                    "run: crowd: %llu TLS answers found their socket full for a second after "
                    "the results were written: connections cut\n",
                    st.unflushed - r->crowd_cut);
        server_stop(r->srv);
    }
    if (r->in && inbound_refused_after_close(r->in))
        fprintf(stderr,
                "flood: run: crowd: %" PRIu64 " deliveries cut after the results were read (the "
                "run was over)\n",
                inbound_refused_after_close(r->in));
    fetches_free(r->fetches); /* after the server: its threads record into it */
    if (r->in)
        inbound_free(r->in, 2000);
    workload_free(r->w);
    if (r->personas && r->ro.n_personas)
        personas_free(r->personas, r->n_personas);
    else
        free(r->personas); /* the placeholder borrows --like-object's list */
    probes_free(r->probes);
    if (r->sends_log)
        fclose(r->sends_log);
    crowd_free(r->crowd);
    stats_free(r->st);
    steer_free(r->steer);
    json_decref(r->config);
    opt_strs_free(r->urls, r->n_urls);
    run_opts_free(&r->ro);
    inbound_opts_free(r->io);
    presets_free(&r->preset);
    free(r->argv);
}

int cmd_run(int argc, char **argv)
{
    struct run r = {0};
    run_opts_init(&r.ro);
    crowd_opts_defaults(&r.co);
    r.io = inbound_opts_new();
    sigemptyset(&r.sigs);
    sigaddset(&r.sigs, SIGINT);
    sigaddset(&r.sigs, SIGTERM);

    int exit_code, rc, found, nargc;
    struct flood_err perr = {0};
    if (presets_expand(argc, argv, &nargc, &r.argv, &r.preset, &found, &perr)) {
        fprintf(stderr, "flood: run: %s\n", perr.msg);
        rc = 2;
    } else {
        if (found)
            r.ro.preset_j = presets_json(&r.preset);
        rc = run_opts_parse(nargc, r.argv, &r.ro, &r.co, r.io);
    }
    if (rc)
        exit_code = rc == 1 ? 0 : 2;
    else if (run_opts_settle(&r.ro, &r.co, &r.sc, r.outdir, sizeof(r.outdir)) || run_sizes(&r))
        exit_code = 2;
    else {
        /* from here on a failure is "could not run" (exit 1) */
        struct flood_err err = {0};
        signal(SIGPIPE, SIG_IGN);
        if (run_crowd(&r, &err) || run_target(&r, &err) || run_prepare(&r, &err) ||
            run_send(&r, &err)) {
            fprintf(stderr, "flood: run: %s\n", err.msg);
            exit_code = 1;
        } else
            exit_code = run_results(&r);
    }
    run_free(&r);
    return exit_code;
}

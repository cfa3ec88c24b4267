/* flood/cmd/cmd_serve.c: `flood serve` (the crowd alone, for interop work) and `flood actors`. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/cmd/cmd.h"
#include "flood/core/opt.h"
#include "flood/core/clock.h"
#include "flood/crowd/crowd.h"
#include "flood/crowd/population.h"
#include "flood/crowd/dns.h"
#include "flood/dash/dash.h"
#include "flood/inbound/inbound.h"
#include "flood/crowd/proxy.h"
#include "flood/measure/egress.h"
#include "flood/measure/fetches.h"
#include "flood/measure/tqueue.h"
#include "flood/report/metrics.h"
#include "flood/report/results_fetches.h"
#include "flood/crowd/server.h"

/* flood serve's own options. */
struct serve_args {
    long exit_after; /* seconds, 0: until a signal */
    int quiet;
    const char *metrics, *dashboard, *dashboard_token;
    char **target_queue; /* --target-queue specs, as given */
    size_t n_target_queue;
};

static struct serve_args serve_a;

static int set_metrics(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)base;
    (void)row;
    return metrics_check_addr(arg, e);
}

static int set_dashboard(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)base;
    (void)row;
    return dash_check_addr(arg, e);
}

/* --target-queue: a source spec that parses (nothing is connected until serving). */
static int set_target_queue(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)base;
    (void)row;
    struct tq_source *src = tq_source_new(arg, e);
    tq_source_free(src);
    return src ? 0 : -1;
}

#define SA(m) OPT_AT(struct serve_args, m)

const struct opt serve_opt_rows[] = {
    {"exit-after", OPT_UINT, "S", SA(exit_after), .lo = 1, .hi = 604800,
     .help = "stop by itself after S seconds"},
    {"quiet", OPT_FLAG, SA(quiet), .help = "no progress lines on stderr"},
    {"metrics", OPT_STRING, "ADDR:PORT", SA(metrics), .set = set_metrics,
     .help = "serve Prometheus metrics at http://ADDR:PORT/metrics"},
    {"dashboard", OPT_STRING, "ADDR:PORT", SA(dashboard), .set = set_dashboard,
     .help = "a live page at http://ADDR:PORT/ of what the crowd sees each second (deliveries "
             "by type, Accepts sent, the target's fetches by kind and bytes, requests, faults), "
             "with fault switches; loopback only unless a token is set"},
    {"dashboard-token", OPT_STRING, "T", SA(dashboard_token),
     .help = "require T (Authorization: Bearer T or ?token=T) and serve non-loopback clients "
             "too"},
    {"target-queue", OPT_STRINGS, "SRC", SA(target_queue),
     .n_off = offsetof(struct serve_args, n_target_queue), .set = set_target_queue,
     .help = "read the target's own queue each second while serving (repeatable; the forms of "
             "flood run's --target-queue): charted on the --dashboard, in --metrics as "
             "flood_target_queue_jobs"},
    {0},
};

static const char serve_usage[] =
    "usage: flood serve [options]\n"
    "Answer as the crowd: every instance's WebFinger, host-meta, NodeInfo, actors,\n"
    "collections and inboxes, on one listener, told apart by the Host header.\n"
    "Prints 'listening on http://ADDR:PORT' once ready; stops on SIGINT/SIGTERM.\n";

/* The server's hooks share one ctx: the inbound side and the fetch accounting. */
struct serve_ctx {
    struct inbound *in;
    struct fetches *fetches;
};

static int serve_inbox(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    return inbound_inbox_hook(((struct serve_ctx *)ctx)->in, req, out);
}

static int serve_fault(void *ctx, const struct server_req *req, struct server_fault *fault)
{
    return inbound_fault_hook(((struct serve_ctx *)ctx)->in, req, fault);
}

static void serve_flight(void *ctx, int instance, int delta)
{
    inbound_flight_hook(((struct serve_ctx *)ctx)->in, instance, delta);
}

static void serve_served(void *ctx, const struct server_served *f)
{
    fetches_record(((struct serve_ctx *)ctx)->fetches, fetch_kind_of(f->route->kind), f->url,
                   strlen(f->url), f->bytes, f->serve_us);
}

/* "serve: fetches 12 (actor 4, media 8), repeats 3" on stderr. */
static void print_fetches(struct fetches *f)
{
    uint64_t repeats = 0;
    fprintf(stderr, "serve: fetches %llu", (unsigned long long)fetches_count_all(f));
    const char *sep = " (";
    struct fetches_kind *fk = flood_xmalloc(sizeof(*fk)); /* a hist: too big for a stack */
    for (int k = 0; k < FETCH__COUNT; k++) {
        fetches_kind_get(f, k, fk);
        repeats += fk->repeat_requests;
        if (fk->requests) {
            fprintf(stderr, "%s%s %llu", sep, fetch_kind_name(k), (unsigned long long)fk->requests);
            sep = ", ";
        }
    }
    free(fk);
    fprintf(stderr, "%s, repeats %llu\n", *sep == ',' ? ")" : "", (unsigned long long)repeats);
}

/* --dashboard: the page's listener, fed by serve_wait; prints its URL. */
static struct dash *serve_dash_start(const struct crowd *crowd, struct inbound *in,
                                     struct fetches *f, struct server *srv, struct dash_crowd **dc,
                                     struct flood_err *err)
{
    char title[300];
    snprintf(title, sizeof(title), "flood serve: %d instances of %d actors on %s",
             crowd->opts.instances, crowd->opts.actors, server_address(srv));
    struct dash_opts dop = {.addr = serve_a.dashboard,
                            .token = serve_a.dashboard_token,
                            .title = title,
                            .in = in,
                            .crowd = 1,
                            .rows_dir = crowd->state_dir};
    struct dash *d = dash_start(&dop, err);
    if (!d)
        return NULL;
    *dc = dash_crowd_new(in, f, srv);
    /* the URL goes to stderr and stdout: a person reads one, a script the other */
    fprintf(stderr, "flood: serve: dashboard on http://%s/%s%s\n", dash_address(d),
            serve_a.dashboard_token ? "?token=" : "",
            serve_a.dashboard_token ? serve_a.dashboard_token : "");
    printf("dashboard: http://%s/\n", dash_address(d));
    return d;
}

/* --target-queue: the sampler from t0, read by the dashboard and the metrics (either may
 * be NULL). 0 (*tq NULL without sources), or -1 and err. */
static int serve_tqueue(struct tq_sampler **tq, struct dash *dash, struct metrics_pub *mpub,
                        int64_t t0, struct flood_err *err)
{
    if (!serve_a.n_target_queue)
        return 0;
    *tq = tq_sampler_start("serve", (const char *const *)serve_a.target_queue,
                           serve_a.n_target_queue, t0, serve_a.quiet, err);
    if (!*tq)
        return -1;
    dash_set_tqueue(dash, *tq);
    if (mpub)
        metrics_pub_set_tqueue(mpub, *tq);
    return 0;
}

/* After the dashboard and the metrics stopped: the sampler (its line on stderr first when
 * report is set) and the specs. */
static void serve_tqueue_free(struct tq_sampler *tq, int report)
{
    if (tq && report) {
        fputs("serve: ", stderr);
        results_tqueue_line(stderr, tq, 0);
    }
    tq_sampler_free(tq);
    opt_strs_free(serve_a.target_queue, serve_a.n_target_queue);
}

/* Until SIGINT/SIGTERM (or --exit-after): with a dashboard, a row of the crowd's second at
 * the end of each second from now. */
static void serve_wait(const sigset_t *set, struct dash *dash, struct dash_crowd *dc, int64_t t0)
{
    int64_t end = serve_a.exit_after > 0 ? t0 + serve_a.exit_after * 1000000000LL : 0;
    size_t t = 0;
    if (dash)
        dash_set_start(dash, t0);
    for (;;) {
        int64_t now = clock_mono_ns();
        if (end && now >= end)
            return;
        int64_t until = end ? end : now + 3600 * 1000000000LL;
        if (dash && t0 + (int64_t)(t + 1) * 1000000000LL < until)
            until = t0 + (int64_t)(t + 1) * 1000000000LL;
        if (until > now) {
            int64_t w = until - now;
            struct timespec ts = {.tv_sec = w / 1000000000, .tv_nsec = w % 1000000000};
            int sig = sigtimedwait(set, NULL, &ts);
            if (sig > 0)
                return;
            if (sig < 0 && errno != EAGAIN && errno != EINTR)
                return;
        }
        while (dash && clock_mono_ns() >= t0 + (int64_t)(t + 1) * 1000000000LL)
            dash_push_json(dash, dash_crowd_row(dc, t++));
    }
}

/* serve's closing lines on stderr: its requests by status, the name server's queries (ds
 * NULL without --dns), and TLS answers cut, said even with --quiet. */
static void serve_closing(const struct server_stats *st, const struct dns_stats *ds)
{
    if (!serve_a.quiet)
        fprintf(stderr,
                "serve: %llu requests: %llu 2xx, %llu 3xx, %llu 4xx, %llu 5xx; %llu for unknown "
                "hosts, %llu too large, %llu faulted\n",
                st->requests, st->by_status[2], st->by_status[3], st->by_status[4],
                st->by_status[5], st->bad_host, st->too_large, st->faults);
    if (ds && !serve_a.quiet) {
        fputs("serve: ", stderr);
        results_dns_line(stderr, ds, 0);
    }
    if (st->unflushed) /* a fault of the run, said even with --quiet */
        fprintf(stderr,
                "serve: %llu TLS answers found their socket full for a second: connections cut\n",
                st->unflushed);
}

int cmd_serve(int argc, char **argv)
{
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    struct inbound_opts *io = inbound_opts_new();
    struct opt_spec spec = {
        .cmd = "serve",
        .mask = OPT_CMD_SERVE,
        .sets = {{serve_opt_rows, &serve_a}, {crowd_opt_rows, &co}, {inbound_opt_rows, io}},
        .n_sets = 3,
        .usage = serve_usage};
    int rc = opt_parse(&spec, argc, argv);
    if (rc) {
        inbound_opts_free(io);
        return rc == 1 ? 0 : 2;
    }
    co.quiet = serve_a.quiet;
    struct flood_err err = {0};
    if (crowd_opts_check(&co, &err)) {
        fprintf(stderr, "flood: serve: %s\n", err.msg);
        inbound_opts_free(io);
        return 2;
    }
    const struct population *pop = inbound_opts_population(io);
    if (pop && sizes_skewed(&pop->sizes))
        fprintf(stderr, "flood: serve: --population sizes=/acts= shape who sends, and serve "
                        "sends nothing: its crowd stays --actors wide (flood run lays it out)\n");

    /* Signals are taken synchronously by sigwait below; block them before any thread starts
     * so that every thread inherits the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct crowd *crowd = crowd_new(&co, &err);
    struct inbound *in = NULL;
    struct server *srv = NULL;
    struct metrics_pub *mpub = NULL;
    struct metrics *mtr = NULL;
    struct dash *dash = NULL;
    struct dash_crowd *dc = NULL;
    struct serve_ctx sctx = {.fetches = fetches_new()};
    struct proxy *px = NULL;
    struct egress *eg = NULL;
    struct tq_sampler *tq = NULL;
    if (!crowd)
        goto fail;
    in = inbound_new(crowd, io, NULL, &err);
    if (!in)
        goto fail;
    sctx.in = in;
    struct server_hooks hooks = {
        .ctx = &sctx, .inbox = serve_inbox, .fault = serve_fault, .served = serve_served};
    hooks.inbox_flight = serve_flight;
    srv = server_start(crowd, &hooks, &err);
    if (!srv)
        goto fail;
    if (co.proxy) {
        eg = egress_new(&crowd->wf);
        struct proxy_hooks ph = {.ctx = eg, .event = egress_record};
        if (!(px = proxy_start(crowd, co.proxy, server_address(srv), &ph, &err)))
            goto fail;
        egress_set_address(eg, proxy_address(px));
    }
    if (serve_a.metrics) {
        mpub = metrics_pub_new(in, NULL);
        metrics_pub_set_fetches(mpub, sctx.fetches);
        metrics_pub_set_dns(mpub, server_dns(srv));
        metrics_pub_set_egress(mpub, eg);
        struct metrics_source msrc = {.snapshot = metrics_pub_snapshot, .ctx = mpub};
        mtr = metrics_start(serve_a.metrics, &msrc, &err);
        if (!mtr)
            goto fail;
        printf("metrics on http://%s/metrics\n", metrics_address(mtr));
    }
    if (serve_a.dashboard && !(dash = serve_dash_start(crowd, in, sctx.fetches, srv, &dc, &err)))
        goto fail;
    int64_t t0 = clock_mono_ns(); /* the dashboard's second 0, and the target queue's */
    if (serve_tqueue(&tq, dash, mpub, t0, &err))
        goto fail;
    printf("listening on %s://%s\n", co.tls ? "https" : "http", server_address(srv));
    if (px)
        printf("proxy listening on http://%s\n", proxy_address(px));
    char warn[512];
    if (crowd_port_warning(&co, server_port(srv), warn, sizeof(warn)))
        fprintf(stderr, "flood: serve: %s\n", warn);
    if (crowd->ca_path)
        printf("tls: CA certificate %s\n", crowd->ca_path);
    if (server_dns(srv))
        printf("dns on %s\n", dns_address(server_dns(srv)));
    fflush(stdout);

    serve_wait(&set, dash, dc, t0);
    struct server_stats st;
    server_get_stats(srv, &st);
    struct dns_stats ds;
    dns_get_stats(server_dns(srv), &ds);
    int have_dns = server_dns(srv) != NULL;
    dash_finish(dash, NULL);
    dash_stop(dash);
    dash_crowd_free(dc);
    metrics_stop(mtr);
    metrics_pub_free(mpub);
    serve_tqueue_free(tq, !serve_a.quiet);
    proxy_stop(px);
    server_stop(srv);
    inbound_free(in, 2000);
    if (!serve_a.quiet)
        print_fetches(sctx.fetches);
    if (eg) {
        json_t *ej = egress_json(eg, 1);
        egress_line(stderr, ej);
        json_decref(ej);
        egress_free(eg);
    }
    fetches_free(sctx.fetches);
    serve_closing(&st, have_dns ? &ds : NULL);
    crowd_free(crowd);
    inbound_opts_free(io);
    return 0;
fail:
    fprintf(stderr, "flood: serve: %s\n", err.msg);
    dash_stop(dash);
    dash_crowd_free(dc);
    metrics_stop(mtr);
    metrics_pub_free(mpub);
    serve_tqueue_free(tq, 0);
    proxy_stop(px);
    egress_free(eg);
    server_stop(srv);
    if (in)
        inbound_free(in, 0);
    fetches_free(sctx.fetches);
    crowd_free(crowd);
    inbound_opts_free(io);
    return 1;
}

static const char actors_usage[] =
    "usage: flood actors [crowd options]\n"
    "Print every crowd actor as acct:NAME@HOST, one a line, so scripts can have\n"
    "target accounts follow them. Only --instances, --actors and --domain matter.\n";

int cmd_actors(int argc, char **argv)
{
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    struct opt_spec spec = {.cmd = "actors",
                            .mask = OPT_CMD_ACTORS,
                            .sets = {{crowd_opt_rows, &co}},
                            .n_sets = 1,
                            .usage = actors_usage};
    int rc = opt_parse(&spec, argc, argv);
    if (rc)
        return rc == 1 ? 0 : 2;
    struct wf_crowd wf = {.instances = co.instances,
                          .actors = co.actors,
                          .domain_template = co.domain,
                          .scheme = co.scheme ? co.scheme : "http",
                          .public_port = co.public_port,
                          .version = FLOOD_VERSION};
    struct flood_err err = {0};
    if (crowd_opts_check(&co, &err)) {
        fprintf(stderr, "flood: actors: %s\n", err.msg);
        return 2;
    }
    for (int i = 1; i <= co.instances; i++) {
        char host[WF_HOST_MAX];
        wf_host(&wf, i, host);
        for (int a = 1; a <= co.actors; a++) {
            char name[WF_NAME_MAX];
            wf_actor_name(a, name);
            if (printf("acct:%s@%s\n", name, host) < 0)
                return 1;
        }
    }
    return fflush(stdout) ? 1 : 0;
}

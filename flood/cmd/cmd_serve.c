/* flood/cmd/cmd_serve.c: `flood serve` (the crowd alone, for interop work) and `flood actors`. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/cmd/cli.h"
#include "flood/cmd/cmd.h"
#include "flood/core/clock.h"
#include "flood/crowd/crowd.h"
#include "flood/dash/dash.h"
#include "flood/inbound/inbound.h"
#include "flood/measure/fetches.h"
#include "flood/report/metrics.h"
#include "flood/crowd/server.h"

enum {
    SERVE_OPT_HELP = 'h',
    SERVE_OPT_EXIT_AFTER = 500,
    SERVE_OPT_QUIET,
    SERVE_OPT_METRICS,
    SERVE_OPT_DASHBOARD,
    SERVE_OPT_DASHBOARD_TOKEN
};

static const struct option serve_own_options[] = {
    {"help", no_argument, NULL, SERVE_OPT_HELP},
    {"exit-after", required_argument, NULL, SERVE_OPT_EXIT_AFTER},
    {"quiet", no_argument, NULL, SERVE_OPT_QUIET},
    {"metrics", required_argument, NULL, SERVE_OPT_METRICS},
    {"dashboard", required_argument, NULL, SERVE_OPT_DASHBOARD},
    {"dashboard-token", required_argument, NULL, SERVE_OPT_DASHBOARD_TOKEN},
    {NULL, 0, NULL, 0},
};

static void serve_usage(FILE *f)
{
    fprintf(f, "usage: flood serve [options]\n"
               "Answer as the crowd: every instance's WebFinger, host-meta, NodeInfo, actors,\n"
               "collections and inboxes, on one listener, told apart by the Host header.\n"
               "Prints 'listening on http://ADDR:PORT' once ready; stops on SIGINT/SIGTERM.\n\n"
               "  --exit-after S       stop by itself after S seconds\n"
               "  --quiet              no progress lines on stderr\n"
               "  --metrics ADDR:PORT  serve Prometheus metrics at http://ADDR:PORT/metrics\n"
               "  --dashboard ADDR:PORT  a live page at http://ADDR:PORT/ of what the crowd\n"
               "                       sees each second (deliveries by type, Accepts sent, the\n"
               "                       target's fetches by kind and bytes, requests, faults),\n"
               "                       with fault switches; loopback only unless a token is set\n"
               "  --dashboard-token T  require T (Authorization: Bearer T or ?token=T) and serve\n"
               "                       non-loopback clients too\n"
               "  -h, --help           this help\n\n");
    fputs(crowd_options_help, f);
    fputc('\n', f);
    fputs(inbound_options_help, f);
}

static long serve_exit_after;
static int serve_quiet;
static const char *serve_metrics;
static const char *serve_dashboard, *serve_dashboard_token;

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

static int serve_own(void *ctx, int id, const char *arg)
{
    (void)ctx;
    switch (id) {
    case SERVE_OPT_EXIT_AFTER: {
        char *end;
        serve_exit_after = strtol(arg, &end, 10);
        if (*end || serve_exit_after <= 0) {
            fprintf(stderr, "flood: serve: --exit-after: expected seconds > 0, got '%s'\n", arg);
            return -1;
        }
        return 0;
    }
    case SERVE_OPT_QUIET:
        serve_quiet = 1;
        return 0;
    case SERVE_OPT_METRICS: {
        struct flood_err err = {0};
        if (metrics_check_addr(arg, &err)) {
            fprintf(stderr, "flood: serve: --metrics: %s\n", err.msg);
            return -1;
        }
        serve_metrics = arg;
        return 0;
    }
    case SERVE_OPT_DASHBOARD: {
        struct flood_err err = {0};
        if (dash_check_addr(arg, &err)) {
            fprintf(stderr, "flood: serve: --dashboard: %s\n", err.msg);
            return -1;
        }
        serve_dashboard = arg;
        return 0;
    }
    case SERVE_OPT_DASHBOARD_TOKEN:
        serve_dashboard_token = arg;
        return 0;
    }
    return -1;
}

/* --dashboard: the page's listener, fed by serve_wait; prints its URL. */
static struct dash *serve_dash_start(const struct crowd_opts *co, struct inbound *in,
                                     struct fetches *f, struct server *srv, struct dash_crowd **dc,
                                     struct flood_err *err)
{
    char title[300];
    snprintf(title, sizeof(title), "flood serve: %d instances of %d actors on %s", co->instances,
             co->actors, server_address(srv));
    struct dash_opts dop = {.addr = serve_dashboard,
                            .token = serve_dashboard_token,
                            .title = title,
                            .in = in,
                            .crowd = 1};
    struct dash *d = dash_start(&dop, err);
    if (!d)
        return NULL;
    *dc = dash_crowd_new(in, f, srv);
    /* the URL goes to stderr and stdout: a person reads one, a script the other */
    fprintf(stderr, "flood: serve: dashboard on http://%s/%s%s\n", dash_address(d),
            serve_dashboard_token ? "?token=" : "",
            serve_dashboard_token ? serve_dashboard_token : "");
    printf("dashboard: http://%s/\n", dash_address(d));
    return d;
}

/* Until SIGINT/SIGTERM (or --exit-after): with a dashboard, a row of the crowd's second at
 * the end of each second from now. */
static void serve_wait(const sigset_t *set, struct dash *dash, struct dash_crowd *dc)
{
    int64_t t0 = clock_mono_ns(),
            end = serve_exit_after > 0 ? t0 + serve_exit_after * 1000000000LL : 0;
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

int cmd_serve(int argc, char **argv)
{
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    struct inbound_opts *io = inbound_opts_new();
    struct cli_spec spec = {.cmd = "serve",
                            .own = serve_own_options,
                            .own_cb = serve_own,
                            .crowd = &co,
                            .inbound = io,
                            .usage = serve_usage};
    int rc = cli_parse(&spec, argc, argv);
    if (rc) {
        inbound_opts_free(io);
        return rc == 1 ? 0 : 2;
    }
    co.quiet = serve_quiet;
    struct flood_err err = {0};
    if (crowd_opts_check(&co, &err)) {
        fprintf(stderr, "flood: serve: %s\n", err.msg);
        inbound_opts_free(io);
        return 2;
    }

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
    if (!crowd)
        goto fail;
    in = inbound_new(crowd, io, NULL, &err);
    if (!in)
        goto fail;
    sctx.in = in;
    struct server_hooks hooks = {
        .ctx = &sctx, .inbox = serve_inbox, .fault = serve_fault, .served = serve_served};
    srv = server_start(crowd, &hooks, &err);
    if (!srv)
        goto fail;
    if (serve_metrics) {
        mpub = metrics_pub_new(in, NULL);
        metrics_pub_set_fetches(mpub, sctx.fetches);
        struct metrics_source msrc = {.snapshot = metrics_pub_snapshot, .ctx = mpub};
        mtr = metrics_start(serve_metrics, &msrc, &err);
        if (!mtr)
            goto fail;
        printf("metrics on http://%s/metrics\n", metrics_address(mtr));
    }
    if (serve_dashboard && !(dash = serve_dash_start(&co, in, sctx.fetches, srv, &dc, &err)))
        goto fail;
    printf("listening on %s://%s\n", co.tls ? "https" : "http", server_address(srv));
    char warn[512];
    if (crowd_port_warning(&co, server_port(srv), warn, sizeof(warn)))
        fprintf(stderr, "flood: serve: %s\n", warn);
    if (crowd->ca_path)
        printf("tls: CA certificate %s\n", crowd->ca_path);
    fflush(stdout);

    serve_wait(&set, dash, dc);
    struct server_stats st;
    server_get_stats(srv, &st);
    dash_finish(dash, NULL);
    dash_stop(dash);
    dash_crowd_free(dc);
    metrics_stop(mtr);
    metrics_pub_free(mpub);
    server_stop(srv);
    inbound_free(in, 2000);
    if (!serve_quiet)
        print_fetches(sctx.fetches);
    fetches_free(sctx.fetches);
    if (!serve_quiet)
        fprintf(stderr,
                "serve: %llu requests: %llu 2xx, %llu 3xx, %llu 4xx, %llu 5xx; %llu for unknown "
                "hosts, %llu too large, %llu faulted\n",
                st.requests, st.by_status[2], st.by_status[3], st.by_status[4], st.by_status[5],
                st.bad_host, st.too_large, st.faults);
    if (st.unflushed) /* a fault of the run, said even with --quiet */
        fprintf(stderr,
                "serve: %llu TLS answers found their socket full for a second: connections cut\n",
                st.unflushed);
    crowd_free(crowd);
    inbound_opts_free(io);
    return 0;
fail:
    fprintf(stderr, "flood: serve: %s\n", err.msg);
    dash_stop(dash);
    dash_crowd_free(dc);
    metrics_stop(mtr);
    metrics_pub_free(mpub);
    server_stop(srv);
    if (in)
        inbound_free(in, 0);
    fetches_free(sctx.fetches);
    crowd_free(crowd);
    inbound_opts_free(io);
    return 1;
}

static void actors_usage(FILE *f)
{
    fprintf(f, "usage: flood actors [crowd options]\n"
               "Print every crowd actor as acct:NAME@HOST, one a line, so scripts can have\n"
               "target accounts follow them. Only --instances, --actors and --domain matter.\n\n");
    fputs(crowd_options_help, f);
}

static int actors_own(void *ctx, int id, const char *arg)
{
    (void)ctx;
    (void)id;
    (void)arg;
    return -1;
}

int cmd_actors(int argc, char **argv)
{
    static const struct option own[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    struct cli_spec spec = {
        .cmd = "actors", .own = own, .own_cb = actors_own, .crowd = &co, .usage = actors_usage};
    int rc = cli_parse(&spec, argc, argv);
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

/* flood/cmd_serve.c: `flood serve` (the crowd alone, for interop work) and `flood actors`. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/cmd.h"
#include "flood/crowd.h"
#include "flood/inbound.h"
#include "flood/server.h"

enum { SERVE_OPT_HELP = 'h', SERVE_OPT_EXIT_AFTER = 500, SERVE_OPT_QUIET };

static const struct option serve_own_options[] = {
    {"help", no_argument, NULL, SERVE_OPT_HELP},
    {"exit-after", required_argument, NULL, SERVE_OPT_EXIT_AFTER},
    {"quiet", no_argument, NULL, SERVE_OPT_QUIET},
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
               "  -h, --help           this help\n\n");
    fputs(crowd_options_help, f);
    fputc('\n', f);
    fputs(inbound_options_help, f);
}

/* Parse the crowd's options (and, when iopts is given, the inbound's) from argv, with the
 * command's own through own_cb. Returns 0, 1 for --help, or 2 after a usage error. */
static int parse_options(int argc, char **argv, const struct option *own, struct crowd_opts *co,
                         struct inbound_opts *iopts, int (*own_cb)(int id, const char *arg),
                         void (*usage)(FILE *))
{
    struct option *tmp = crowd_merge_options(own, crowd_options);
    struct option *all = iopts ? crowd_merge_options(tmp, inbound_options) : tmp;
    if (iopts)
        free(tmp);
    int rc = 0, id;
    struct flood_err err = {0};
    optind = 1;
    opterr = 0;
    while ((id = getopt_long(argc, argv, ":h", all, NULL)) != -1) {
        if (id == 'h') {
            usage(stdout);
            rc = 1;
            break;
        }
        if (id == '?' || id == ':') {
            fprintf(stderr, "flood: %s: %s '%s'\n", argv[0],
                    id == ':' ? "option needs a value" : "unknown option",
                    argv[optind - 1]);
            rc = 2;
            break;
        }
        int bad;
        if (id >= 2000)
            bad = inbound_opts_set(iopts, id, optarg, &err);
        else if (id >= 1000)
            bad = crowd_opts_set(co, id, optarg, &err);
        else
            bad = own_cb(id, optarg);
        if (bad) {
            if (id >= 1000)
                fprintf(stderr, "flood: %s: %s\n", argv[0], err.msg);
            rc = 2;
            break;
        }
    }
    if (!rc && optind < argc) {
        fprintf(stderr, "flood: %s: unexpected argument '%s'\n", argv[0], argv[optind]);
        rc = 2;
    }
    free(all);
    return rc;
}

static long serve_exit_after;
static int serve_quiet;

static int serve_own(int id, const char *arg)
{
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
    }
    return -1;
}

int cmd_serve(int argc, char **argv)
{
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    struct inbound_opts *io = inbound_opts_new();
    int rc = parse_options(argc, argv, serve_own_options, &co, io, serve_own, serve_usage);
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
    if (!crowd)
        goto fail;
    in = inbound_new(crowd, io, NULL, &err);
    if (!in)
        goto fail;
    struct server_hooks hooks = {
        .ctx = in, .inbox = inbound_inbox_hook, .fault = inbound_fault_hook};
    srv = server_start(crowd, &hooks, &err);
    if (!srv)
        goto fail;
    printf("listening on %s://%s\n", co.tls ? "https" : "http", server_address(srv));
    if (crowd->ca_path)
        printf("tls: CA certificate %s\n", crowd->ca_path);
    fflush(stdout);

    if (serve_exit_after > 0) {
        struct timespec ts = {.tv_sec = serve_exit_after};
        while (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR)
            ;
    } else {
        int sig;
        sigwait(&set, &sig);
    }
    struct server_stats st;
    server_get_stats(srv, &st);
    server_stop(srv);
    inbound_free(in, 2000);
    if (!serve_quiet)
        fprintf(stderr,
                "serve: %llu requests: %llu 2xx, %llu 3xx, %llu 4xx, %llu 5xx; %llu for unknown "
                "hosts, %llu too large, %llu faulted\n",
                st.requests, st.by_status[2], st.by_status[3], st.by_status[4], st.by_status[5],
                st.bad_host, st.too_large, st.faults);
    crowd_free(crowd);
    inbound_opts_free(io);
    return 0;
fail:
    fprintf(stderr, "flood: serve: %s\n", err.msg);
    server_stop(srv);
    if (in)
        inbound_free(in, 0);
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

static int actors_own(int id, const char *arg)
{
    (void)id;
    (void)arg;
    return -1;
}

int cmd_actors(int argc, char **argv)
{
    static const struct option own[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    int rc = parse_options(argc, argv, own, &co, NULL, actors_own, actors_usage);
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

/* flood/cmd_run.c: `flood run`: the crowd (server, inbound) plus the sender. Parses the
 * options, builds the crowd and the workload, checks the target is reachable, runs the
 * schedule and writes the results. */
#include "flood/cmd_run.h"

#include <arpa/inet.h>
#include <curl/curl.h>
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

#include "flood/cli.h"
#include "flood/crowd.h"
#include "flood/inbound.h"
#include "flood/metrics.h"
#include "flood/probes.h"
#include "flood/report.h"
#include "flood/results.h"
#include "flood/sched.h"
#include "flood/sender.h"
#include "flood/server.h"
#include "flood/signer.h"
#include "flood/stats.h"
#if __has_include("flood/target.h")
#include "flood/target.h"
#define RUN_HAVE_TARGET 1
#endif
#include "flood/workload.h"

#define START_DELAY_NS 500000000 /* the signers' head start before the first send */

enum {
    RUN_OPT_HELP = 'h',
    RUN_OPT_RATE = 300,
    RUN_OPT_DURATION,
    RUN_OPT_STAGES,
    RUN_OPT_ARRIVAL,
    RUN_OPT_MIX,
    RUN_OPT_SEED,
    RUN_OPT_SIGNERS,
    RUN_OPT_SIGN,
    RUN_OPT_BAD,
    RUN_OPT_MAX_INFLIGHT,
    RUN_OPT_TIMEOUT,
    RUN_OPT_CONNECTIONS,
    RUN_OPT_RESOLVE,
    RUN_OPT_INSECURE,
    RUN_OPT_CACERT,
    RUN_OPT_SOURCE_IPS,
    RUN_OPT_GRACE,
    RUN_OPT_ACCEPT_WAIT,
    RUN_OPT_OUT,
    RUN_OPT_INBOX,
    RUN_OPT_PERSONA,
    RUN_OPT_PERSONAS,
    RUN_OPT_LIKE_OBJECT,
    RUN_OPT_PERSONAL_INBOX,
    RUN_OPT_TARGET_HTTP,
    RUN_OPT_LOOKAHEAD,
    RUN_OPT_NO_CHECK,
    RUN_OPT_QUIET,
    RUN_OPT_METRICS,
    RUN_OPT_METRICS_HOLD,
};

static const struct option run_own_options[] = {
    {"help", no_argument, NULL, RUN_OPT_HELP},
    {"rate", required_argument, NULL, RUN_OPT_RATE},
    {"duration", required_argument, NULL, RUN_OPT_DURATION},
    {"stages", required_argument, NULL, RUN_OPT_STAGES},
    {"arrival", required_argument, NULL, RUN_OPT_ARRIVAL},
    {"mix", required_argument, NULL, RUN_OPT_MIX},
    {"seed", required_argument, NULL, RUN_OPT_SEED},
    {"signers", required_argument, NULL, RUN_OPT_SIGNERS},
    {"sign", required_argument, NULL, RUN_OPT_SIGN},
    {"bad-signatures", required_argument, NULL, RUN_OPT_BAD},
    {"max-inflight", required_argument, NULL, RUN_OPT_MAX_INFLIGHT},
    {"timeout", required_argument, NULL, RUN_OPT_TIMEOUT},
    {"connections", required_argument, NULL, RUN_OPT_CONNECTIONS},
    {"resolve", required_argument, NULL, RUN_OPT_RESOLVE},
    {"insecure", no_argument, NULL, RUN_OPT_INSECURE},
    {"cacert", required_argument, NULL, RUN_OPT_CACERT},
    {"source-ips", required_argument, NULL, RUN_OPT_SOURCE_IPS},
    {"grace", required_argument, NULL, RUN_OPT_GRACE},
    {"accept-wait", required_argument, NULL, RUN_OPT_ACCEPT_WAIT},
    {"out", required_argument, NULL, RUN_OPT_OUT},
    {"metrics", required_argument, NULL, RUN_OPT_METRICS},
    {"metrics-hold", required_argument, NULL, RUN_OPT_METRICS_HOLD},
    {"inbox", required_argument, NULL, RUN_OPT_INBOX},
    {"persona", required_argument, NULL, RUN_OPT_PERSONA},
    {"personas", required_argument, NULL, RUN_OPT_PERSONAS},
    {"like-object", required_argument, NULL, RUN_OPT_LIKE_OBJECT},
    {"personal-inbox", no_argument, NULL, RUN_OPT_PERSONAL_INBOX},
    {"target-http", no_argument, NULL, RUN_OPT_TARGET_HTTP},
    {"lookahead", required_argument, NULL, RUN_OPT_LOOKAHEAD},
    {"no-check", no_argument, NULL, RUN_OPT_NO_CHECK},
    {"quiet", no_argument, NULL, RUN_OPT_QUIET},
    {NULL, 0, NULL, 0},
};

static const char run_help[] =
    "usage: flood run (--inbox URL | --persona P ...) (--rate R --duration D | --stages S)\n"
    "                 [options]\n"
    "The crowd of fake instances plus the sender: post HTTP-signed activities from random\n"
    "crowd actors to the target's inbox at a set rate, open loop, and measure every answer.\n"
    "\n"
    "Target:\n"
    "  --persona P          acct:NAME@HOST (WebFinger) or an actor URL; repeatable. Its actor\n"
    "                       is fetched with a signed GET; activities go to its sharedInbox\n"
    "  --personas FILE      one persona a line ('#' comments)\n"
    "  --inbox URL          send every activity to this inbox, no discovery\n"
    "  --personal-inbox     send to each persona's own inbox, not the shared one\n"
    "  --target-http        WebFinger over plain HTTP (a lab target)\n"
    "  --like-object URL    an object to Like (repeatable); else the personas' outboxes\n"
    "  --resolve H:P:ADDR   connect to ADDR for H:P, as curl does (repeatable; also used\n"
    "                       for the crowd's key fetches and Accepts)\n"
    "  --insecure           do not verify the target's TLS certificate\n"
    "  --cacert FILE        trust this CA for the target\n"
    "  --no-check           skip the reachability check before the start\n"
    "\n"
    "Load:\n"
    "  --rate R             activities per second (with --duration)\n"
    "  --duration D         30s, 2m, 1h, 500ms (a plain number is seconds)\n"
    "  --stages R1:D1,...   a ramp: the rate goes linearly from the previous stage's rate\n"
    "                       (0 before the first) to Ri over Di; a stage 'R:0' jumps (a step)\n"
    "  --arrival A          constant (default: evenly spaced) or poisson (exponential gaps\n"
    "                       from --seed)\n"
    "  --mix M              create=70,like=20,follow=10 (default; like=0 when nothing can be\n"
    "                       liked), undo=N too\n"
    "  --seed N             the run's seed (default 1): the same seed sends the same run\n"
    "  --max-inflight N     beyond N requests in flight, shed and count (default 10000)\n"
    "  --timeout T          per request (default 10s)\n"
    "  --connections C      keep-alive connections per target origin (default 64)\n"
    "  --source-ips A-B     instance i sends from address A+i-1 (e.g. 127.0.0.11-127.0.0.30)\n"
    "  --grace T            after SIGINT/SIGTERM wait this long for answers (default 5s);\n"
    "                       at the schedule's end flood waits the longer of this and\n"
    "                       --timeout + 1 s\n"
    "  --accept-wait T      then wait up to T for the Accepts of the Follows it sent\n"
    "                       (default: --grace); a target whose queue is behind needs more\n"
    "\n"
    "Signing:\n"
    "  --sign D             cavage (default), rfc9421, cavage,rfc9421, rfc9421,cavage (a second\n"
    "                       knock with the other dialect on 400/401, counted), or none\n"
    "  --signers S          signer threads (default: cores - 1, at least 1)\n"
    "  --lookahead T        how far ahead of its time a request is signed (default 1s)\n"
    "  --bad-signatures P%  that share deliberately bad: wrong key, Date two hours old, body\n"
    "                       not matching its digest (each syntactically valid); a target\n"
    "                       answering 2xx to one is reported (accepted_bad)\n"
    "\n"
    "Results:\n"
    "  --out DIR            run.json, *.hgrm, summary.md (default out/run-YYYYMMDDTHHMMSSZ)\n"
    "  --quiet              no live line and no progress lines on stderr\n"
    "  --metrics ADDR:PORT  serve Prometheus metrics at http://ADDR:PORT/metrics during the\n"
    "                       run (port 0 picks one, printed on stderr)\n"
    "  --metrics-hold D     keep serving them for D after the results are written, so a\n"
    "                       scraper reads the final figures (default 0)\n"
    "  -h, --help           this help\n"
    "\n"
    "A live line each second on stderr when it is a terminal; the final table and the\n"
    "conservation line (scheduled = sent + shed; sent = completed + unfinished) on stdout.\n"
    "SIGINT/SIGTERM stop sending, wait --grace for answers and still write every result (a\n"
    "second signal stops waiting). Exit codes: 0 the run ran (interrupted or not), 1 it could\n"
    "not run (crowd, persona not resolvable, target unreachable before the start, results not\n"
    "written, conservation violated), 2 usage.\n";

struct run_opts {
    double rate, duration_s, lookahead_s;
    long accept_wait_ms; /* -1: as --grace */
    const char *stages;
    const char *arrival_s;
    enum sched_arrival arrival;
    const char *mix_s;
    unsigned mix[OP__COUNT];
    uint64_t seed;
    int signers;
    const char *sign_s;
    const char *bad_s;
    struct signer_opts so;
    struct sender_opts sndo;
    const char *source_ips;
    const char *out;
    const char *inbox;
    int personal_inbox, target_http, no_check, quiet;
    const char *metrics;
    double metrics_hold_s;
    char **personas;
    size_t n_personas;
    char **like_objects;
    size_t n_like;
    struct curl_slist *resolve;
    char **resolve_v;
    size_t n_resolve_v;
    json_t *resolve_j;
    json_t *inbound_args;
};

static void add_str(char ***v, size_t *n, const char *s)
{
    *v = flood_xrealloc(*v, (*n + 1) * sizeof(**v));
    (*v)[(*n)++] = flood_xstrdup(s);
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int read_personas(const char *path, struct run_opts *ro, struct flood_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        flood_err_set(err, FLOOD_EIO, "--personas: cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    char line[2048];
    while (fgets(line, sizeof(line), f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, "\r\n#");
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        p[n] = 0;
        if (*p)
            add_str(&ro->personas, &ro->n_personas, p);
    }
    fclose(f);
    return 0;
}

/* Apply one of flood run's own options. 0, or -1 with a message printed. */
static int run_opt(struct run_opts *ro, int id, const char *arg)
{
    struct flood_err e = {0};
    uint64_t u;
    double d;
    switch (id) {
    case RUN_OPT_RATE: {
        char *end;
        errno = 0;
        ro->rate = strtod(arg, &end);
        if (end == arg || *end || errno || !isfinite(ro->rate) || ro->rate <= 0 ||
            ro->rate > SCHED_RATE_MAX) {
            fprintf(stderr,
                    "flood: run: --rate: expected a number of activities per second > 0, "
                    "got '%s'\n",
                    arg);
            return -1;
        }
        return 0;
    }
    case RUN_OPT_DURATION:
        if (sched_parse_duration(arg, &ro->duration_s, &e))
            break;
        return 0;
    case RUN_OPT_STAGES:
        ro->stages = arg;
        return 0;
    case RUN_OPT_ARRIVAL:
        ro->arrival_s = arg;
        if (sched_parse_arrival(arg, &ro->arrival, &e))
            break;
        return 0;
    case RUN_OPT_MIX:
        ro->mix_s = arg;
        if (workload_parse_mix(arg, ro->mix, &e))
            break;
        return 0;
    case RUN_OPT_SEED:
        if (parse_u64(arg, 0, UINT64_MAX, &ro->seed)) {
            flood_err_set(&e, FLOOD_EINVAL, "--seed: expected an unsigned number, got '%s'", arg);
            break;
        }
        return 0;
    case RUN_OPT_SIGNERS:
        if (parse_u64(arg, 1, 256, &u)) {
            flood_err_set(&e, FLOOD_EINVAL, "--signers: expected 1..256, got '%s'", arg);
            break;
        }
        ro->signers = (int)u;
        return 0;
    case RUN_OPT_SIGN:
        ro->sign_s = arg;
        if (signer_parse_dialects(arg, &ro->so, &e))
            break;
        return 0;
    case RUN_OPT_BAD:
        ro->bad_s = arg;
        if (signer_parse_bad(arg, &ro->so, &e))
            break;
        return 0;
    case RUN_OPT_MAX_INFLIGHT:
        if (parse_u64(arg, 1, 10000000, &ro->sndo.max_inflight)) {
            flood_err_set(&e, FLOOD_EINVAL, "--max-inflight: expected 1..10000000, got '%s'", arg);
            break;
        }
        return 0;
    case RUN_OPT_TIMEOUT:
        if (sched_parse_duration(arg, &d, &e))
            break;
        if (d < 0.001) {
            flood_err_set(&e, FLOOD_EINVAL, "--timeout: at least 1ms, got '%s'", arg);
            break;
        }
        ro->sndo.timeout_ms = (long)llround(d * 1000);
        return 0;
    case RUN_OPT_CONNECTIONS:
        if (parse_u64(arg, 1, 100000, &u)) {
            flood_err_set(&e, FLOOD_EINVAL, "--connections: expected 1..100000, got '%s'", arg);
            break;
        }
        ro->sndo.connections = (long)u;
        return 0;
    case RUN_OPT_RESOLVE: {
        int colons = 0;
        for (const char *p = arg; *p; p++)
            colons += *p == ':';
        if (colons < 2) {
            flood_err_set(&e, FLOOD_EINVAL, "--resolve: expected HOST:PORT:ADDR, got '%s'", arg);
            break;
        }
        struct curl_slist *l = curl_slist_append(ro->resolve, arg);
        if (!l)
            abort();
        ro->resolve = l;
        add_str(&ro->resolve_v, &ro->n_resolve_v, arg);
        json_array_append_new(ro->resolve_j, json_string(arg));
        return 0;
    }
    case RUN_OPT_INSECURE:
        ro->sndo.insecure = 1;
        return 0;
    case RUN_OPT_CACERT:
        if (access(arg, R_OK)) {
            flood_err_set(&e, FLOOD_EINVAL, "--cacert: cannot read '%s': %s", arg, strerror(errno));
            break;
        }
        ro->sndo.cacert = arg;
        return 0;
    case RUN_OPT_SOURCE_IPS:
        ro->source_ips = arg;
        if (sender_parse_source_ips(arg, &ro->sndo, &e))
            break;
        return 0;
    case RUN_OPT_GRACE:
        if (sched_parse_duration(arg, &d, &e))
            break;
        ro->sndo.grace_ms = (long)llround(d * 1000);
        return 0;
    case RUN_OPT_ACCEPT_WAIT:
        if (sched_parse_duration(arg, &d, &e))
            break;
        ro->accept_wait_ms = (long)llround(d * 1000);
        return 0;
    case RUN_OPT_LOOKAHEAD:
        if (sched_parse_duration(arg, &d, &e))
            break;
        if (d < 0.01 || d > 60) {
            flood_err_set(&e, FLOOD_EINVAL, "--lookahead: 10ms..60s, got '%s'", arg);
            break;
        }
        ro->lookahead_s = d;
        return 0;
    case RUN_OPT_OUT:
        ro->out = arg;
        return 0;
    case RUN_OPT_INBOX:
        if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8)) {
            flood_err_set(&e, FLOOD_EINVAL, "--inbox: expected an http(s) URL, got '%s'", arg);
            break;
        }
        ro->inbox = arg;
        return 0;
    case RUN_OPT_PERSONA:
        add_str(&ro->personas, &ro->n_personas, arg);
        return 0;
    case RUN_OPT_PERSONAS:
        if (read_personas(arg, ro, &e))
            break;
        return 0;
    case RUN_OPT_LIKE_OBJECT:
        add_str(&ro->like_objects, &ro->n_like, arg);
        return 0;
    case RUN_OPT_PERSONAL_INBOX:
        ro->personal_inbox = 1;
        return 0;
    case RUN_OPT_TARGET_HTTP:
        ro->target_http = 1;
        return 0;
    case RUN_OPT_NO_CHECK:
        ro->no_check = 1;
        return 0;
    case RUN_OPT_QUIET:
        ro->quiet = 1;
        return 0;
    case RUN_OPT_METRICS:
        if (metrics_check_addr(arg, &e))
            break;
        ro->metrics = arg;
        return 0;
    case RUN_OPT_METRICS_HOLD:
        if (sched_parse_duration(arg, &d, &e))
            break;
        ro->metrics_hold_s = d;
        return 0;
    default:
        flood_err_set(&e, FLOOD_EINVAL, "unknown option");
        break;
    }
    fprintf(stderr, "flood: run: %s\n", e.msg);
    return -1;
}

static void usage(FILE *f)
{
    fputs(run_help, f);
    fputc('\n', f);
    fputs(crowd_options_help, f);
    fputc('\n', f);
    fputs(inbound_options_help, f);
}

/* The parse context: flood run's options, and the inbound side's to pass --resolve on to. */
struct run_parse {
    struct run_opts *ro;
    struct inbound_opts *io;
};

static int run_own(void *ctx, int id, const char *arg)
{
    struct run_parse *rp = ctx;
    if (run_opt(rp->ro, id, arg))
        return -1;
    /* --resolve serves the sender and the crowd's key fetches and Accepts alike */
    struct flood_err err = {0};
    if (id == RUN_OPT_RESOLVE && inbound_opts_set(rp->io, INBOUND_OPT_RESOLVE, arg, &err)) {
        fprintf(stderr, "flood: run: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* The inbound options in force, recorded as written for run.json's config. */
static void run_on_inbound(void *ctx, int id, const char *name, const char *arg)
{
    (void)id;
    struct run_parse *rp = ctx;
    char *buf = flood_xasprintf("--%s%s%s", name, arg ? " " : "", arg ? arg : "");
    json_array_append_new(rp->ro->inbound_args, json_string(buf));
    free(buf);
}

/* Parse argv. 0, 1 after --help, 2 on a usage error. */
static int parse(int argc, char **argv, struct run_opts *ro, struct crowd_opts *co,
                 struct inbound_opts *io)
{
    struct run_parse rp = {.ro = ro, .io = io};
    struct cli_spec spec = {.cmd = "run",
                            .own = run_own_options,
                            .own_cb = run_own,
                            .ctx = &rp,
                            .crowd = co,
                            .inbound = io,
                            .on_inbound = run_on_inbound,
                            .usage = usage};
    return cli_parse(&spec, argc, argv);
}

/* The server's hooks share one ctx: this trampoline gives each its own. The workload
 * appears after discovery (the server must answer key fetches during it). */
struct hook_ctx {
    _Atomic(struct inbound *) in;
    _Atomic(struct workload *) w;
};

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

/* Allow the inbound side to fetch keys from the host[:port] of url. */
static void allow_host_of(struct inbound_opts *io, const char *url)
{
    CURLU *h = url ? curl_url() : NULL;
    char *host = NULL, *port = NULL;
    if (h && curl_url_set(h, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(h, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        curl_url_get(h, CURLUPART_PORT, &port, CURLU_NO_DEFAULT_PORT);
        char buf[600];
        snprintf(buf, sizeof(buf), "%s%s%s", host, port ? ":" : "", port ? port : "");
        inbound_opts_allow_host(io, buf);
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(h);
}

static int tramp_object(void *ctx, const struct server_req *req, struct wf_doc *out)
{
    struct hook_ctx *h = ctx;
    struct workload *w = atomic_load(&h->w);
    return w ? workload_object_hook(w, req, out) : 0;
}

static void run_metrics_tick(void *ctx, const struct stats *st, uint64_t in_flight)
{
    metrics_pub_stats(ctx, st, in_flight);
}

static void live_inbound(void *ctx, char *buf, size_t size)
{
    inbound_live(ctx, buf, size);
}

/* Connect to every distinct inbox origin once (TCP, and TLS for https) before the start. */
static int preflight(const struct run_opts *ro, char **urls, size_t n, struct flood_err *err)
{
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(urls[i], urls[j]);
        if (seen)
            continue;
        CURL *e = curl_easy_init();
        if (!e) {
            flood_err_set(err, FLOOD_EIO, "run: out of memory");
            return -1;
        }
        char ebuf[CURL_ERROR_SIZE] = "";
        curl_easy_setopt(e, CURLOPT_URL, urls[i]);
        curl_easy_setopt(e, CURLOPT_CONNECT_ONLY, 1L);
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_ERRORBUFFER, ebuf);
        long t = ro->sndo.timeout_ms > 0 && ro->sndo.timeout_ms < 5000 ? ro->sndo.timeout_ms : 5000;
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, t);
        if (ro->resolve)
            curl_easy_setopt(e, CURLOPT_RESOLVE, ro->resolve);
        if (ro->sndo.insecure) {
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (ro->sndo.cacert)
            curl_easy_setopt(e, CURLOPT_CAINFO, ro->sndo.cacert);
        if (ro->sndo.src_count) {
            /* from the first sending address: it must be usable too */
            struct in_addr ia = {.s_addr = htonl(ro->sndo.src_base)};
            char ifb[64] = "host!";
            inet_ntop(AF_INET, &ia, ifb + 5, sizeof(ifb) - 5);
            curl_easy_setopt(e, CURLOPT_INTERFACE, ifb);
        }
        CURLcode rc = curl_easy_perform(e);
        curl_easy_cleanup(e);
        if (rc != CURLE_OK) {
            flood_err_set(err, FLOOD_EIO,
                          "run: target unreachable before the start: %s: %s (--no-check runs "
                          "anyway)",
                          urls[i], ebuf[0] ? ebuf : curl_easy_strerror(rc));
            return -1;
        }
    }
    return 0;
}

#ifdef RUN_HAVE_TARGET
/* Resolve every persona (WebFinger, then a signed GET of its actor and outbox). With
 * --like-object, those objects replace what the outboxes offered. */
static int discover(const struct run_opts *ro, struct crowd *crowd, struct inbound_opts *io,
                    struct persona **out, size_t *n, struct flood_err *err)
{
    (void)io;
    struct target_opts to = {0};
    to.target_http = ro->target_http;
    to.quiet = ro->quiet;
    to.http.resolve = (const char *const *)ro->resolve_v;
    to.http.n_resolve = ro->n_resolve_v;
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
#else
/* Without the discovery module only --inbox runs. */
static int discover(const struct run_opts *ro, struct crowd *crowd, struct inbound_opts *io,
                    struct persona **out, size_t *n, struct flood_err *err)
{
    (void)crowd;
    (void)io;
    *out = NULL;
    *n = 0;
    flood_err_set(err, FLOOD_EINVAL, "run: cannot resolve persona '%s': discovery is not built in",
                  ro->personas[0]);
    return -1;
}

static void personas_free(struct persona *p, size_t n)
{
    (void)n;
    free(p);
}
#endif

static json_t *config_json(const struct run_opts *ro, const struct crowd_opts *co,
                           const struct sched *sc)
{
    json_t *c = json_object();
    if (ro->stages)
        json_object_set_new(c, "stages", json_string(ro->stages));
    else {
        json_object_set_new(c, "rate", json_real(ro->rate));
        json_object_set_new(c, "duration_s", json_real(ro->duration_s));
    }
    json_object_set_new(c, "scheduled_duration_s", json_real(sched_duration(sc)));
    json_object_set_new(c, "arrival",
                        json_string(ro->arrival == SCHED_POISSON ? "poisson" : "constant"));
    json_t *mix = json_object();
    for (int i = 0; i < OP__COUNT; i++)
        json_object_set_new(mix, op_name((enum op_kind)i), json_integer(ro->mix[i]));
    json_object_set_new(c, "mix", mix);
    json_object_set_new(c, "seed", json_integer((json_int_t)ro->seed));
    json_object_set_new(c, "signers", json_integer(ro->signers));
    json_object_set_new(c, "sign", json_string(ro->sign_s ? ro->sign_s : "cavage"));
    json_object_set_new(c, "bad_signatures_share", json_real(ro->so.bad_share));
    json_object_set_new(c, "lookahead_s", json_real(ro->lookahead_s));
    json_object_set_new(c, "max_inflight", json_integer((json_int_t)ro->sndo.max_inflight));
    json_object_set_new(c, "timeout_ms", json_integer(ro->sndo.timeout_ms));
    json_object_set_new(c, "connections", json_integer(ro->sndo.connections));
    json_object_set_new(c, "resolve", json_incref(ro->resolve_j));
    json_object_set_new(c, "insecure", json_boolean(ro->sndo.insecure));
    json_object_set_new(c, "cacert", ro->sndo.cacert ? json_string(ro->sndo.cacert) : json_null());
    json_object_set_new(c, "source_ips",
                        ro->source_ips ? json_string(ro->source_ips) : json_null());
    json_object_set_new(c, "grace_ms", json_integer(ro->sndo.grace_ms));
    json_object_set_new(c, "accept_wait_ms", json_integer(ro->accept_wait_ms));
    json_object_set_new(c, "out", json_string(ro->out));
    json_object_set_new(c, "inbox", ro->inbox ? json_string(ro->inbox) : json_null());
    json_t *p = json_array();
    for (size_t i = 0; i < ro->n_personas; i++)
        json_array_append_new(p, json_string(ro->personas[i]));
    json_object_set_new(c, "personas", p);
    json_t *l = json_array();
    for (size_t i = 0; i < ro->n_like; i++)
        json_array_append_new(l, json_string(ro->like_objects[i]));
    json_object_set_new(c, "like_objects", l);
    json_object_set_new(c, "personal_inbox", json_boolean(ro->personal_inbox));
    json_object_set_new(c, "target_http", json_boolean(ro->target_http));
    json_object_set_new(c, "check", json_boolean(!ro->no_check));
    json_t *cj = json_object();
    json_object_set_new(cj, "instances", json_integer(co->instances));
    json_object_set_new(cj, "actors", json_integer(co->actors));
    json_object_set_new(cj, "domain", json_string(co->domain ? co->domain : ""));
    json_object_set_new(cj, "listen", json_string(co->listen ? co->listen : ""));
    json_object_set_new(cj, "public_port", json_integer(co->public_port));
    json_object_set_new(cj, "scheme",
                        json_string(co->scheme ? co->scheme : (co->tls ? "https" : "http")));
    json_object_set_new(cj, "state", co->state ? json_string(co->state) : json_null());
    json_object_set_new(cj, "key_bits", json_integer(co->key_bits));
    json_object_set_new(cj, "key_pool", json_integer(co->key_pool));
    json_object_set_new(cj, "key_type",
                        json_string(co->key_type == SIGN_KEY_ED25519 ? "ed25519" : "rsa"));
    json_object_set_new(cj, "tls", json_boolean(co->tls));
    json_object_set_new(cj, "server_threads", json_integer(co->threads));
    json_object_set_new(c, "crowd", cj);
    json_object_set_new(c, "inbound_args", json_incref(ro->inbound_args));
    return c;
}

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts ro = {0};
    ro.so.n_dialects = 1;
    ro.so.dialects[0] = SIGN_CAVAGE;
    ro.seed = 1;
    ro.sndo.max_inflight = 10000;
    ro.sndo.timeout_ms = 10000;
    ro.sndo.connections = 64;
    ro.sndo.grace_ms = 5000;
    ro.accept_wait_ms = -1;
    ro.lookahead_s = 1.0;
    ro.arrival = SCHED_CONSTANT;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    ro.signers = cores > 1 ? (int)(cores - 1) : 1;
    ro.resolve_j = json_array();
    ro.inbound_args = json_array();
    struct crowd_opts co;
    crowd_opts_defaults(&co);
    struct inbound_opts *io = inbound_opts_new();

    int rc = parse(argc, argv, &ro, &co, io);
    if (ro.accept_wait_ms < 0)
        ro.accept_wait_ms = ro.sndo.grace_ms;
    int exit_code = 2;
    struct flood_err err = {0};
    struct sched sc;
    struct crowd *crowd = NULL;
    struct probes *probes = NULL;
    struct inbound *in = NULL;
    struct server *srv = NULL;
    struct workload *w = NULL;
    struct signer *signer = NULL;
    struct sender *sender = NULL;
    struct stats *st = NULL;
    struct metrics_pub *mpub = NULL;
    struct metrics *mtr = NULL;
    struct persona *personas = NULL;
    size_t n_personas = 0;
    json_t *config = NULL, *inbound_j = NULL;
    char **urls = NULL;
    size_t n_urls = 0;
    struct hook_ctx hctx = {0};
    char outdir[256];

    if (rc) {
        exit_code = rc == 1 ? 0 : 2;
        goto out;
    }
    /* ---- checks that need no network: usage errors (exit 2) ---- */
    if (ro.stages && (ro.rate > 0 || ro.duration_s > 0)) {
        fprintf(stderr, "flood: run: give --stages or --rate with --duration, not both\n");
        goto out;
    }
    if (ro.stages) {
        if (sched_init_stages(&sc, ro.stages, ro.arrival, ro.seed, &err))
            goto usage_err;
    } else if (ro.rate > 0 || ro.duration_s > 0) {
        if (!(ro.rate > 0) || !(ro.duration_s > 0)) {
            fprintf(stderr, "flood: run: --rate and --duration go together\n");
            goto out;
        }
        if (sched_init_rate(&sc, ro.rate, ro.duration_s, ro.arrival, ro.seed, &err))
            goto usage_err;
    } else {
        fprintf(stderr, "flood: run: no schedule: give --rate R --duration D or --stages "
                        "(flood run --help)\n");
        goto out;
    }
    if (!ro.inbox && ro.n_personas == 0) {
        fprintf(stderr,
                "flood: run: no target: give --inbox URL or --persona (flood run --help)\n");
        goto out;
    }
    int default_mix = !ro.mix_s;
    if (default_mix) {
        ro.mix[OP_CREATE] = 70;
        ro.mix[OP_LIKE] = 20;
        ro.mix[OP_FOLLOW] = 10;
        if (ro.n_like == 0 && ro.n_personas == 0)
            ro.mix[OP_LIKE] = 0; /* nothing to like */
    }
    if (crowd_opts_check(&co, &err))
        goto usage_err;
    if (!ro.out) {
        results_default_dir(time(NULL), outdir, sizeof(outdir));
        ro.out = outdir;
    }
    co.quiet = co.quiet || ro.quiet;

    /* ---- the crowd; from here on a failure is "could not run" (exit 1) ---- */
    exit_code = 1;
    /* Only the main thread takes SIGINT/SIGTERM: the threads started below (server,
     * inbound, signers) are started with them blocked and inherit that mask. Before the run
     * a signal ends the process as usual; during it libevent catches it (sender_run). */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    signal(SIGPIPE, SIG_IGN);

    crowd = crowd_new(&co, &err);
    if (!crowd)
        goto fail;
    probes = probes_new();
    atomic_init(&hctx.in, NULL);
    atomic_init(&hctx.w, NULL);
    struct server_hooks hooks = {
        .ctx = &hctx, .inbox = tramp_inbox, .fault = tramp_fault, .object = tramp_object};
    pthread_sigmask(SIG_BLOCK, &set, &old);
    srv = server_start(crowd, &hooks, &err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!srv)
        goto fail;
    if (!ro.quiet)
        fprintf(stderr, "flood: run: crowd listening on %s://%s\n", co.tls ? "https" : "http",
                server_address(srv));

    /* ---- the target ---- */
    if (ro.n_personas) {
        if (discover(&ro, crowd, io, &personas, &n_personas, &err))
            goto fail;
        for (size_t i = 0; i < n_personas; i++) {
            const char *u = ro.inbox                                 ? ro.inbox
                            : ro.personal_inbox && personas[i].inbox ? personas[i].inbox
                            : personas[i].shared_inbox               ? personas[i].shared_inbox
                                                                     : personas[i].inbox;
            if (u)
                add_str(&urls, &n_urls, u);
            allow_host_of(io, personas[i].actor);
            allow_host_of(io, u);
        }
    } else if (ro.n_like) {
        /* --inbox alone: one placeholder persona carrying the objects to like */
        personas = flood_xcalloc(1, sizeof(*personas));
        personas[0].posts = ro.like_objects;
        personas[0].n_posts = ro.n_like;
        n_personas = 1;
    }
    if (ro.inbox) {
        add_str(&urls, &n_urls, ro.inbox);
        allow_host_of(io, ro.inbox);
    }
    pthread_sigmask(SIG_BLOCK, &set, &old);
    in = inbound_new(crowd, io, probes, &err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!in)
        goto fail;
    atomic_store(&hctx.in, in);
    struct workload_opts wo = {
        .seed = ro.seed, .personal_inbox = ro.personal_inbox, .inbox_url = ro.inbox};
    memcpy(wo.mix, ro.mix, sizeof(wo.mix));
    time_t start_wall = time(NULL);
    w = workload_new_at(crowd, &wo, personas, n_personas, start_wall, &err);
    if (!w)
        goto fail;
    atomic_store(&hctx.w, w);
    /* Accepts arriving at the crowd close the probes of this run's Follows. */
    inbound_set_workload(in, w);
    if (!ro.no_check && preflight(&ro, urls, n_urls, &err))
        goto fail;

    /* ---- the run ---- */
    ro.so.threads = ro.signers;
    ro.so.seed = ro.seed;
    ro.so.lookahead_s = ro.lookahead_s;
    double peak = sched_peak_rate(&sc);
    double ring = peak * ro.lookahead_s * 1.2 + 256;
    ro.so.lookahead_max = ring > 65536 ? 65536 : (size_t)ring;
    ro.so.user_agent = "flood/" FLOOD_VERSION;
    ro.sndo.resolve = ro.resolve;
    ro.sndo.probes = probes;
    ro.sndo.live = !ro.quiet && isatty(STDERR_FILENO);
    ro.sndo.live_extra = live_inbound;
    ro.sndo.live_ctx = in;
    if (ro.metrics) {
        mpub = metrics_pub_new(in, probes);
        struct metrics_source msrc = {.snapshot = metrics_pub_snapshot, .ctx = mpub};
        pthread_sigmask(SIG_BLOCK, &set, &old);
        mtr = metrics_start(ro.metrics, &msrc, &err);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!mtr)
            goto fail;
        ro.sndo.tick = run_metrics_tick;
        ro.sndo.tick_ctx = mpub;
        if (!ro.quiet)
            fprintf(stderr, "flood: run: metrics on http://%s/metrics\n", metrics_address(mtr));
    }
    config = config_json(&ro, &crowd->opts, &sc); /* the key layout in force */
    st = stats_new();
    stats_set_inbound(st, inbound_deliveries_count, in); /* the target's deliveries a second */
    signer = signer_new(crowd, w, &sc, &ro.so, &err);
    if (!signer)
        goto fail;
    sender = sender_new(&ro.sndo, signer, &sc, st, &err);
    if (!sender)
        goto fail;
    char started_at[32];
    int64_t wall_now = clock_ns(CLOCK_REALTIME), mono_now = clock_ns(CLOCK_MONOTONIC);
    results_iso8601((time_t)((wall_now + START_DELAY_NS) / 1000000000), started_at,
                    sizeof(started_at));
    pthread_sigmask(SIG_BLOCK, &set, &old);
    rc = signer_start(signer, mono_now + START_DELAY_NS, wall_now + START_DELAY_NS, &err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        goto fail;
    if (!ro.quiet)
        fprintf(stderr, "flood: run: %" PRIu64 " activities over %.1f s to %s\n", sched_total(&sc),
                sched_duration(&sc), ro.inbox ? ro.inbox : "the personas");
    struct sender_result res;
    struct flood_err run_err = {0};
    int run_rc = sender_run(sender, mono_now + START_DELAY_NS, &res, &run_err);
    /* a late signal during the teardown below is ignored rather than fatal */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signer_stop(signer);
    if (run_rc)
        fprintf(stderr, "flood: run: stopped: %s\n", run_err.msg);
    if (mpub) /* the event loop is done: st is the main thread's to read now */
        metrics_pub_stats(mpub, st, 0);
    /* Follows still waiting for their Accept get the grace period too */
    int graced = 0;
    for (long waited = 0; !res.interrupted && waited < ro.accept_wait_ms; waited += 100) {
        struct probes_totals pt;
        probes_snapshot(probes, &pt, NULL);
        if (pt.open == 0)
            break;
        if (waited == 0 && !ro.quiet)
            fprintf(stderr, "flood: run: waiting up to %ld ms for %" PRIu64 " Accepts\n",
                    ro.accept_wait_ms, pt.open);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
        nanosleep(&ts, NULL);
        /* the series goes on through the grace period: each Accept lands in its second
         * (the event loop is done, so the stats are this thread's now) */
        graced = 1;
        stats_tick(st, clock_ns(CLOCK_MONOTONIC) - (mono_now + START_DELAY_NS), 0);
    }
    if (graced) /* close the last grace second too */
        stats_tick(st, ((int64_t)st->cur_sec + 1) * 1000000000, 0);

    /* ---- results ---- */
    inbound_j = inbound_json(in);
    char rate_text[128];
    if (ro.stages)
        snprintf(rate_text, sizeof(rate_text), "%s", ro.stages);
    else
        snprintf(rate_text, sizeof(rate_text), "%g/s", ro.rate);
    struct results_info ri = {.started_at = started_at,
                              .config = config,
                              .inbound = inbound_j,
                              .gen = &res,
                              .probes = probes,
                              .rate_text = rate_text,
                              .duration_s = sched_duration(&sc)};
    results_print_table(stdout, st, &ri);
    char line[256];
    int conserved = stats_conservation(st, line, sizeof(line)) == 0;
    printf("%s\n", line);
    int wrote = results_write(ro.out, st, &ri, &err) == 0;
    if (wrote)
        printf("results: %s\n", ro.out);
    else
        fprintf(stderr, "flood: run: %s\n", err.msg);
    if (wrote && report_write(ro.out, &err)) {
        fprintf(stderr, "flood: run: %s\n", err.msg);
        wrote = 0;
    }
    fflush(stdout);
    if (mtr && ro.metrics_hold_s > 0) {
        /* SIGINT/SIGTERM are blocked here: one of them ends the hold early */
        struct timespec hold = {.tv_sec = (time_t)ro.metrics_hold_s,
                                .tv_nsec = (long)(fmod(ro.metrics_hold_s, 1) * 1e9)};
        while (sigtimedwait(&set, NULL, &hold) < 0 && errno == EINTR)
            ;
    }
    exit_code = conserved && wrote && !run_rc ? 0 : 1;
    goto out;

usage_err:
    fprintf(stderr, "flood: run: %s\n", err.msg);
    goto out;
fail:
    fprintf(stderr, "flood: run: %s\n", err.msg);
out:
    metrics_stop(mtr); /* before what its scrapes read: inbound, probes */
    metrics_pub_free(mpub);
    sender_free(sender);
    signer_free(signer);
    if (srv)
        server_stop(srv);
    if (in)
        inbound_free(in, 2000);
    workload_free(w);
    if (personas && ro.n_personas)
        personas_free(personas, n_personas);
    else
        free(personas);
    probes_free(probes);
    crowd_free(crowd);
    stats_free(st);
    json_decref(config);
    json_decref(inbound_j);
    json_decref(ro.resolve_j);
    json_decref(ro.inbound_args);
    curl_slist_free_all(ro.resolve);
    free_strs(ro.personas, ro.n_personas);
    free_strs(ro.like_objects, ro.n_like);
    free_strs(ro.resolve_v, ro.n_resolve_v);
    free_strs(urls, n_urls);
    inbound_opts_free(io);
    return exit_code;
}

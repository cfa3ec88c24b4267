/* flood/cmd/run_opts.c: the options of `flood run`: the table, --help, one switch that
 * applies each, and run.json's record of them. */
#include "flood/cmd/run_opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood/cmd/cli.h"
#include "flood/cmd/run_shard.h"
#include "flood/dash/dash.h"
#include "flood/measure/tqueue.h"
#include "flood/report/metrics.h"

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
    RUN_OPT_PRECONNECT,
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
    RUN_OPT_DASHBOARD,
    RUN_OPT_DASHBOARD_TOKEN,
    RUN_OPT_DASHBOARD_HOLD,
    RUN_OPT_EXPECT,
    RUN_OPT_CONTENT,
    RUN_OPT_CONTENT_OPT,
    RUN_OPT_REPLY_DEPTH,
    RUN_OPT_UNSEEN,
    RUN_OPT_UNDO_SHARE,
    RUN_OPT_ROTATE_KEYS,
    RUN_OPT_REPLAY,
    RUN_OPT_REPLAY_SPEED,
    RUN_OPT_SHARD,
    RUN_OPT_START_AT,
    RUN_OPT_LOG_SENDS,
    RUN_OPT_LOOPS,
    RUN_OPT_TARGET_QUEUE,
    RUN_OPT_USERS_MODEL,
};

static const struct option run_own_options[] = {
    {"help", no_argument, NULL, RUN_OPT_HELP},
    {"rate", required_argument, NULL, RUN_OPT_RATE},
    {"duration", required_argument, NULL, RUN_OPT_DURATION},
    {"stages", required_argument, NULL, RUN_OPT_STAGES},
    {"arrival", required_argument, NULL, RUN_OPT_ARRIVAL},
    {"mix", required_argument, NULL, RUN_OPT_MIX},
    {"content", required_argument, NULL, RUN_OPT_CONTENT},
    {"content-opt", required_argument, NULL, RUN_OPT_CONTENT_OPT},
    {"reply-depth", required_argument, NULL, RUN_OPT_REPLY_DEPTH},
    {"unseen", required_argument, NULL, RUN_OPT_UNSEEN},
    {"undo-share", required_argument, NULL, RUN_OPT_UNDO_SHARE},
    {"rotate-keys", required_argument, NULL, RUN_OPT_ROTATE_KEYS},
    {"replay", required_argument, NULL, RUN_OPT_REPLAY},
    {"replay-speed", required_argument, NULL, RUN_OPT_REPLAY_SPEED},
    {"seed", required_argument, NULL, RUN_OPT_SEED},
    {"signers", required_argument, NULL, RUN_OPT_SIGNERS},
    {"sign", required_argument, NULL, RUN_OPT_SIGN},
    {"bad-signatures", required_argument, NULL, RUN_OPT_BAD},
    {"max-inflight", required_argument, NULL, RUN_OPT_MAX_INFLIGHT},
    {"timeout", required_argument, NULL, RUN_OPT_TIMEOUT},
    {"connections", required_argument, NULL, RUN_OPT_CONNECTIONS},
    {"preconnect", required_argument, NULL, RUN_OPT_PRECONNECT},
    {"resolve", required_argument, NULL, RUN_OPT_RESOLVE},
    {"insecure", no_argument, NULL, RUN_OPT_INSECURE},
    {"cacert", required_argument, NULL, RUN_OPT_CACERT},
    {"source-ips", required_argument, NULL, RUN_OPT_SOURCE_IPS},
    {"grace", required_argument, NULL, RUN_OPT_GRACE},
    {"accept-wait", required_argument, NULL, RUN_OPT_ACCEPT_WAIT},
    {"out", required_argument, NULL, RUN_OPT_OUT},
    {"metrics", required_argument, NULL, RUN_OPT_METRICS},
    {"metrics-hold", required_argument, NULL, RUN_OPT_METRICS_HOLD},
    {"dashboard", required_argument, NULL, RUN_OPT_DASHBOARD},
    {"dashboard-token", required_argument, NULL, RUN_OPT_DASHBOARD_TOKEN},
    {"dashboard-hold", required_argument, NULL, RUN_OPT_DASHBOARD_HOLD},
    {"expect", required_argument, NULL, RUN_OPT_EXPECT},
    {"inbox", required_argument, NULL, RUN_OPT_INBOX},
    {"persona", required_argument, NULL, RUN_OPT_PERSONA},
    {"personas", required_argument, NULL, RUN_OPT_PERSONAS},
    {"like-object", required_argument, NULL, RUN_OPT_LIKE_OBJECT},
    {"personal-inbox", no_argument, NULL, RUN_OPT_PERSONAL_INBOX},
    {"target-http", no_argument, NULL, RUN_OPT_TARGET_HTTP},
    {"lookahead", required_argument, NULL, RUN_OPT_LOOKAHEAD},
    {"no-check", no_argument, NULL, RUN_OPT_NO_CHECK},
    {"quiet", no_argument, NULL, RUN_OPT_QUIET},
    {"shard", required_argument, NULL, RUN_OPT_SHARD},
    {"start-at", required_argument, NULL, RUN_OPT_START_AT},
    {"log-sends", required_argument, NULL, RUN_OPT_LOG_SENDS},
    {"loops", required_argument, NULL, RUN_OPT_LOOPS},
    {"target-queue", required_argument, NULL, RUN_OPT_TARGET_QUEUE},
    {"users-model", required_argument, NULL, RUN_OPT_USERS_MODEL},
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
    "  --target-queue SRC   read the target's own queue each second (repeatable):\n"
    "                       sidekiq:redis://HOST:PORT/DB (Mastodon), bullmq:redis://HOST:PORT/DB\n"
    "                       [?prefix=P] (Misskey), fedify:URL (benchmark stats),\n"
    "                       prometheus:URL#METRIC{LABELS}, json:URL#PATH, cmd:COMMAND\n"
    "\n"
    "Load:\n"
    "  --rate R             activities per second (with --duration)\n"
    "  --duration D         30s, 2m, 1h, 500ms (a plain number is seconds)\n"
    "  --stages R1:D1,...   a ramp: the rate goes linearly from the previous stage's rate\n"
    "                       (0 before the first) to Ri over Di; a stage 'R:0' jumps (a step)\n"
    "  --arrival A          constant (default: evenly spaced) or poisson (exponential gaps\n"
    "                       from --seed)\n"
    "  --mix M              create=70,like=20,follow=10 (default; like=0 when nothing can be\n"
    "                       liked); also undo, announce, reply, update, delete,\n"
    "                       update-actor, question, vote, emoji-react, delete-actor\n"
    "                       (README: what each sends)\n"
    "  --content P          what posts carry: default (realistic: length, mentions,\n"
    "                       hashtags, visibility, CWs, languages, emoji, links, media),\n"
    "                       heavy (more, bigger media), plain (one mention, short)\n"
    "  --content-opt K=V,.. change one part of the profile: length=MEDIAN, length-max=N,\n"
    "                       mentions=A-B, hashtags=A-B, zipf=S, visibility=PUB/UNL/FOL/DIR,\n"
    "                       cw=P%, emoji=P%, links=P%, media=P%, media-count=N,\n"
    "                       media-size=BYTES (median, k/m), media-max=BYTES\n"
    "  --reply-depth D      unseen crowd parents of a reply's chain (default 3)\n"
    "  --unseen P           % of announces and replies whose object is a crowd note the\n"
    "                       target never saw, so it must fetch it (default 50)\n"
    "  --undo-share P       % of like/announce/emoji-react sent as the Undo of an earlier one\n"
    "                       (default 0)\n"
    "  --rotate-keys P      % of update-actor that rotate the actor's key (same keyId, another\n"
    "                       key of the pool; later activities signed with it; default 0)\n"
    "  --replay FILE        replay a real inbox's arrival pattern instead of a rate: an\n"
    "                       access log (combined format; POSTs to inbox paths) or a CSV\n"
    "                       time,origin,type. Only its times, origins and types are used:\n"
    "                       origins map to crowd instances (the busiest to their own),\n"
    "                       types to --mix names (the rest follow --mix)\n"
    "  --replay-speed X     replay X times faster (default 1; 0.5 is half speed)\n"
    "  --preset NAME|FILE   the options of a preset (flood presets lists them) in place of\n"
    "                       this one: options given after it win\n"
    "  --seed N             the run's seed (default 1): the same seed sends the same run\n"
    "  --max-inflight N     beyond N requests in flight, shed and count (default 10000)\n"
    "  --timeout T          per request (default 10s)\n"
    "  --connections C      keep-alive connections per target origin (default 64; with\n"
    "                       --loops, shared among the loops: the target sees C in all)\n"
    "  --preconnect N|auto  open N connections to --inbox before the first send, as wrk\n"
    "                       does before it measures (auto, the default: the first\n"
    "                       second's activities, at most --connections; 0: each opened\n"
    "                       when a request needs it, the handshakes in the first second)\n"
    "  --loops N            sending event loops, each a thread of its own (at most 64;\n"
    "                       default: cores/4 with --sign none, cores/32 signed, at least\n"
    "                       1; 1 with --dashboard): activity n goes to loop n mod N, so a\n"
    "                       seed sends the same run whatever N; --max-inflight is shared\n"
    "                       too (not with --dashboard)\n"
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
    "  --signers S          signer threads (default: cores - loops, at least 1)\n"
    "  --lookahead T        how far ahead of its time a request is signed (default 1s,\n"
    "                       100ms with --sign none)\n"
    "  --bad-signatures P%  that share deliberately bad: wrong key, Date two hours old, body\n"
    "                       not matching its digest (each syntactically valid); a target\n"
    "                       answering 2xx to one is reported (accepted_bad)\n"
    "\n"
    "Results:\n"
    "  --out DIR            run.json, *.hgrm, summary.md (default out/run-YYYYMMDDTHHMMSSZ)\n"
    "  --users-model K=V,.. the sent rate in active users at peak: the model's parts changed\n"
    "                       (flood capacity --help lists them; docs/LOAD.md)\n"
    "  --quiet              no live line and no progress lines on stderr\n"
    "  --metrics ADDR:PORT  serve Prometheus metrics at http://ADDR:PORT/metrics during the\n"
    "                       run (port 0 picks one, printed on stderr)\n"
    "  --metrics-hold D     keep serving them for D after the results are written, so a\n"
    "                       scraper reads the final figures (default 0)\n"
    "  --dashboard ADDR:PORT  a live page at http://ADDR:PORT/ (loopback unless a token is\n"
    "                       set): the charts of report.html each second, and steering: the\n"
    "                       rate (at once or ramped), pause/resume, faults on/off, stop;\n"
    "                       every change lands in run.json's \"steering\"\n"
    "  --dashboard-token T  require T (Authorization: Bearer T or ?token=T) and serve\n"
    "                       non-loopback clients\n"
    "  --dashboard-hold D   keep the dashboard (and its link to report.html) up for D after\n"
    "                       the results are written (default 0)\n"
    "  --expect EXPR        a threshold judged on run.json at the end (repeatable):\n"
    "                       METRIC OP VALUE, e.g. 'p99<300ms', '2xx>=99%', 'f2a.p95<2s',\n"
    "                       'shed==0', 'fetch.actor.repeat==0', 'create.p99<=1s',\n"
    "                       'json:totals.retry_after.429==0'. Metrics: p50 p90 p95 p99\n"
    "                       p99.9 max mean, OP.pNN, service.pNN, lag.pNN, f2a.pNN; counts\n"
    "                       scheduled sent shed completed unfinished 2xx 4xx 5xx errors\n"
    "                       401 403 408 429 503 timeout transport accepts, fetch.KIND\n"
    "                       [.repeat]; a count as a share with %; times in us ms s m.\n"
    "                       A failed one makes the exit code 3\n"
    "\n"
    "Shards (docs/SHARDS.md):\n"
    "  --shard K/N          send only activities n with n mod N == K (K from 0) of the run\n"
    "                       the same options give unsharded; serve the whole crowd\n"
    "  --start-at T         start the schedule at wall-clock T (unix seconds or\n"
    "                       YYYY-MM-DDTHH:MM:SSZ), the same for every shard (required\n"
    "                       with --shard); the run's ids derive from it and --seed\n"
    "  --log-sends FILE     one line per activity dispatched: N INTENDED_NS OP SENT|SHED\n"
    "  -h, --help           this help\n"
    "\n"
    "A live line each second on stderr when it is a terminal; the final table and the\n"
    "conservation line (scheduled = sent + shed; sent = completed + unfinished) on stdout.\n"
    "SIGINT/SIGTERM stop sending, wait --grace for answers and still write every result (a\n"
    "second signal stops waiting). Exit codes: 0 the run ran (interrupted or not), 1 it could\n"
    "not run (crowd, persona not resolvable, target unreachable before the start, results not\n"
    "written, conservation violated), 2 usage, 3 the run ran but an --expect failed.\n";

void run_opts_add_str(char ***v, size_t *n, const char *s)
{
    *v = flood_xrealloc(*v, (*n + 1) * sizeof(**v));
    (*v)[(*n)++] = flood_xstrdup(s);
}

void run_opts_free_strs(char **v, size_t n)
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
            run_opts_add_str(&ro->personas, &ro->n_personas, p);
    }
    fclose(f);
    return 0;
}

/* The option groups of flood run. Each applies id when it is one of its own: 0 applied,
 * -1 refused (e filled, or printed when e->msg is empty), 1 not one of this group's. */

/* the schedule and the sender: rate, duration, stages, arrival, mix, seed, limits */
static int run_opt_load(struct run_opts *ro, int id, const char *arg, struct flood_err *e)
{
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
                    "flood: %s: --rate: expected a number of activities per second > 0, "
                    "got '%s'\n",
                    ro->cmd, arg);
            return -1;
        }
        return 0;
    }
    case RUN_OPT_DURATION:
        if (sched_parse_duration(arg, &ro->duration_s, e))
            return -1;
        return 0;
    case RUN_OPT_STAGES:
        ro->stages = arg;
        return 0;
    case RUN_OPT_ARRIVAL:
        ro->arrival_s = arg;
        if (sched_parse_arrival(arg, &ro->arrival, e))
            return -1;
        return 0;
    case RUN_OPT_MIX:
        ro->mix_s = arg;
        if (workload_parse_mix(arg, ro->mix, e))
            return -1;
        return 0;
    case RUN_OPT_CONTENT:
        ro->content_s = arg;
        return wf_content_profile(arg, &ro->content, e) ? -1 : 0;
    case RUN_OPT_CONTENT_OPT:
        ro->content_opt_s = arg;
        return 0;
    case RUN_OPT_REPLY_DEPTH:
    case RUN_OPT_UNSEEN:
    case RUN_OPT_UNDO_SHARE:
    case RUN_OPT_ROTATE_KEYS: {
        uint64_t max = id == RUN_OPT_REPLY_DEPTH ? 64 : 100;
        char tmp[32];
        snprintf(tmp, sizeof(tmp), "%s", arg);
        size_t n = strlen(tmp);
        if (n && tmp[n - 1] == '%' && id != RUN_OPT_REPLY_DEPTH)
            tmp[n - 1] = '\0';
        if (parse_u64(tmp, id == RUN_OPT_REPLY_DEPTH ? 1 : 0, max, &u)) {
            flood_err_set(e, FLOOD_EINVAL, "--%s: expected 0..%u, got '%s'",
                          id == RUN_OPT_REPLY_DEPTH   ? "reply-depth"
                          : id == RUN_OPT_UNSEEN      ? "unseen"
                          : id == RUN_OPT_ROTATE_KEYS ? "rotate-keys"
                                                      : "undo-share",
                          (unsigned)max, arg);
            return -1;
        }
        *(id == RUN_OPT_REPLY_DEPTH   ? &ro->reply_depth
          : id == RUN_OPT_UNSEEN      ? &ro->unseen_pct
          : id == RUN_OPT_ROTATE_KEYS ? &ro->rotate_pct
                                      : &ro->undo_pct) = (unsigned)u;
        return 0;
    }
    case RUN_OPT_SEED:
        if (parse_u64(arg, 0, UINT64_MAX, &ro->seed)) {
            flood_err_set(e, FLOOD_EINVAL, "--seed: expected an unsigned number, got '%s'", arg);
            return -1;
        }
        return 0;
    case RUN_OPT_MAX_INFLIGHT:
        if (parse_u64(arg, 1, 10000000, &ro->sndo.max_inflight)) {
            flood_err_set(e, FLOOD_EINVAL, "--max-inflight: expected 1..10000000, got '%s'", arg);
            return -1;
        }
        return 0;
    case RUN_OPT_REPLAY:
        ro->replay_path = arg;
        return 0;
    case RUN_OPT_REPLAY_SPEED: {
        char *end;
        errno = 0;
        d = strtod(arg, &end);
        if (end == arg || *end || errno || !isfinite(d) || d < 0.001 || d > 1e6) {
            flood_err_set(e, FLOOD_EINVAL, "--replay-speed: expected 0.001..1000000, got '%s'",
                          arg);
            return -1;
        }
        ro->replay_speed = d;
        return 0;
    }
    case RUN_OPT_TIMEOUT:
        if (sched_parse_duration(arg, &d, e))
            return -1;
        if (d < 0.001) {
            flood_err_set(e, FLOOD_EINVAL, "--timeout: at least 1ms, got '%s'", arg);
            return -1;
        }
        ro->sndo.timeout_ms = (long)llround(d * 1000);
        return 0;
    case RUN_OPT_CONNECTIONS:
        if (parse_u64(arg, 1, 100000, &u)) {
            flood_err_set(e, FLOOD_EINVAL, "--connections: expected 1..100000, got '%s'", arg);
            return -1;
        }
        ro->sndo.connections = (long)u;
        return 0;
    case RUN_OPT_PRECONNECT:
        if (strcmp(arg, "auto") == 0) {
            ro->sndo.preconnect = -1;
            return 0;
        }
        if (parse_u64(arg, 0, 100000, &u)) {
            flood_err_set(e, FLOOD_EINVAL, "--preconnect: expected auto or 0..100000, got '%s'",
                          arg);
            return -1;
        }
        ro->sndo.preconnect = (long)u;
        return 0;
    case RUN_OPT_LOOPS:
        if (parse_u64(arg, 1, SENDER_LOOPS_MAX, &u)) {
            flood_err_set(e, FLOOD_EINVAL, "--loops: expected 1..%d, got '%s'", SENDER_LOOPS_MAX,
                          arg);
            return -1;
        }
        ro->sndo.loops = (int)u;
        return 0;
    case RUN_OPT_SOURCE_IPS:
        ro->source_ips = arg;
        if (sender_parse_source_ips(arg, &ro->sndo, e))
            return -1;
        return 0;
    case RUN_OPT_GRACE:
        if (sched_parse_duration(arg, &d, e))
            return -1;
        ro->sndo.grace_ms = (long)llround(d * 1000);
        return 0;
    case RUN_OPT_ACCEPT_WAIT:
        if (sched_parse_duration(arg, &d, e))
            return -1;
        ro->accept_wait_ms = (long)llround(d * 1000);
        return 0;
    default:
        return 1;
    }
}

/* signing: dialects, signers, look-ahead, deliberately bad signatures */
static int run_opt_sign(struct run_opts *ro, int id, const char *arg, struct flood_err *e)
{
    uint64_t u;
    double d;
    switch (id) {
    case RUN_OPT_SIGNERS:
        if (parse_u64(arg, 1, 256, &u)) {
            flood_err_set(e, FLOOD_EINVAL, "--signers: expected 1..256, got '%s'", arg);
            return -1;
        }
        ro->signers = (int)u;
        return 0;
    case RUN_OPT_SIGN:
        ro->sign_s = arg;
        if (signer_parse_dialects(arg, &ro->so, e))
            return -1;
        return 0;
    case RUN_OPT_BAD:
        ro->bad_s = arg;
        if (signer_parse_bad(arg, &ro->so, e))
            return -1;
        return 0;
    case RUN_OPT_LOOKAHEAD:
        if (sched_parse_duration(arg, &d, e))
            return -1;
        if (d < 0.01 || d > 60) {
            flood_err_set(e, FLOOD_EINVAL, "--lookahead: 10ms..60s, got '%s'", arg);
            return -1;
        }
        ro->lookahead_s = d;
        return 0;
    default:
        return 1;
    }
}

/* the target: personas, inboxes, names, TLS trust, the reachability check */
static int run_opt_target(struct run_opts *ro, int id, const char *arg, struct flood_err *e)
{
    switch (id) {
    case RUN_OPT_RESOLVE: {
        int colons = 0;
        for (const char *p = arg; *p; p++)
            colons += *p == ':';
        if (colons < 2) {
            flood_err_set(e, FLOOD_EINVAL, "--resolve: expected HOST:PORT:ADDR, got '%s'", arg);
            return -1;
        }
        struct curl_slist *l = curl_slist_append(ro->resolve, arg);
        if (!l)
            abort();
        ro->resolve = l;
        run_opts_add_str(&ro->resolve_v, &ro->n_resolve_v, arg);
        json_array_append_new(ro->resolve_j, json_string(arg));
        return 0;
    }
    case RUN_OPT_INSECURE:
        ro->sndo.insecure = 1;
        return 0;
    case RUN_OPT_CACERT:
        if (access(arg, R_OK)) {
            flood_err_set(e, FLOOD_EINVAL, "--cacert: cannot read '%s': %s", arg, strerror(errno));
            return -1;
        }
        ro->sndo.cacert = arg;
        return 0;
    case RUN_OPT_INBOX:
        if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8)) {
            flood_err_set(e, FLOOD_EINVAL, "--inbox: expected an http(s) URL, got '%s'", arg);
            return -1;
        }
        ro->inbox = arg;
        return 0;
    case RUN_OPT_PERSONA:
        run_opts_add_str(&ro->personas, &ro->n_personas, arg);
        return 0;
    case RUN_OPT_PERSONAS:
        if (read_personas(arg, ro, e))
            return -1;
        return 0;
    case RUN_OPT_LIKE_OBJECT:
        run_opts_add_str(&ro->like_objects, &ro->n_like, arg);
        return 0;
    case RUN_OPT_USERS_MODEL:
        return users_model_parse(&ro->users, arg, e) ? -1 : 0;
    case RUN_OPT_TARGET_QUEUE: {
        struct tq_source *src = tq_source_new(arg, e);
        if (!src)
            return -1;
        tq_source_free(src);
        run_opts_add_str(&ro->target_queue, &ro->n_target_queue, arg);
        return 0;
    }
    case RUN_OPT_PERSONAL_INBOX:
        ro->personal_inbox = 1;
        return 0;
    case RUN_OPT_TARGET_HTTP:
        ro->target_http = 1;
        return 0;
    case RUN_OPT_NO_CHECK:
        ro->no_check = 1;
        return 0;
    default:
        return 1;
    }
}

/* results and metrics */
static int run_opt_results(struct run_opts *ro, int id, const char *arg, struct flood_err *e)
{
    double d;
    switch (id) {
    case RUN_OPT_OUT:
        ro->out = arg;
        return 0;
    case RUN_OPT_QUIET:
        ro->quiet = 1;
        return 0;
    case RUN_OPT_METRICS:
        if (metrics_check_addr(arg, e))
            return -1;
        ro->metrics = arg;
        return 0;
    case RUN_OPT_EXPECT:
        ro->expect = flood_xrealloc(ro->expect, (ro->n_expect + 1) * sizeof(*ro->expect));
        if (expect_parse(arg, 0, &ro->expect[ro->n_expect], e))
            return -1;
        ro->n_expect++;
        return 0;
    case RUN_OPT_METRICS_HOLD:
        if (sched_parse_duration(arg, &d, e))
            return -1;
        ro->metrics_hold_s = d;
        return 0;
    case RUN_OPT_DASHBOARD:
        if (dash_check_addr(arg, e))
            return -1;
        ro->dashboard = arg;
        return 0;
    case RUN_OPT_DASHBOARD_TOKEN:
        ro->dashboard_token = arg;
        return 0;
    case RUN_OPT_DASHBOARD_HOLD:
        if (sched_parse_duration(arg, &d, e))
            return -1;
        ro->dashboard_hold_s = d;
        return 0;
    case RUN_OPT_SHARD:
        ro->shard_s = arg;
        return run_shard_parse(arg, &ro->shard_k, &ro->shard_n, e) ? -1 : 0;
    case RUN_OPT_START_AT:
        ro->start_at_s = arg;
        return run_shard_parse_start(arg, (int64_t)time(NULL), &ro->start_at, e) ? -1 : 0;
    case RUN_OPT_LOG_SENDS:
        ro->log_sends = arg;
        return 0;
    default:
        return 1;
    }
}

/* Apply one of flood run's own options. 0, or -1 with a message printed. */
static int run_opt(struct run_opts *ro, int id, const char *arg)
{
    struct flood_err e = {0};
    int rc = run_opt_load(ro, id, arg, &e);
    if (rc == 1)
        rc = run_opt_sign(ro, id, arg, &e);
    if (rc == 1)
        rc = run_opt_target(ro, id, arg, &e);
    if (rc == 1)
        rc = run_opt_results(ro, id, arg, &e);
    if (rc == 1)
        flood_err_set(&e, FLOOD_EINVAL, "unknown option");
    if (rc && e.msg[0])
        fprintf(stderr, "flood: %s: %s\n", ro->cmd, e.msg);
    return rc ? -1 : 0;
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
        fprintf(stderr, "flood: %s: %s\n", rp->ro->cmd, err.msg);
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
int run_opts_parse(int argc, char **argv, struct run_opts *ro, struct crowd_opts *co,
                   struct inbound_opts *io)
{
    struct run_parse rp = {.ro = ro, .io = io};
    ro->cmd = argv[0];
    struct cli_spec spec = {.cmd = argv[0],
                            .own = run_own_options,
                            .own_cb = run_own,
                            .ctx = &rp,
                            .crowd = co,
                            .inbound = io,
                            .on_inbound = run_on_inbound,
                            .usage = usage};
    return cli_parse(&spec, argc, argv);
}

void run_opts_init(struct run_opts *ro)
{
    memset(ro, 0, sizeof(*ro));
    ro->cmd = "run";
    ro->so.n_dialects = 1;
    ro->so.dialects[0] = SIGN_CAVAGE;
    ro->seed = 1;
    ro->sndo.max_inflight = 10000;
    ro->sndo.timeout_ms = 10000;
    ro->sndo.connections = 64;
    ro->sndo.preconnect = -1;
    ro->sndo.loops = 0; /* the default is settled from the cores and --sign */
    ro->sndo.grace_ms = 5000;
    ro->accept_wait_ms = -1;
    ro->lookahead_s = 0; /* settled from --sign */
    ro->arrival = SCHED_CONSTANT;
    ro->reply_depth = 3;
    ro->unseen_pct = 50;
    ro->replay_speed = 1;
    users_model_defaults(&ro->users);
    if (wf_content_profile("default", &ro->content, NULL) < 0)
        abort();
    ro->signers = 0; /* the default is settled: the cores the loops leave */
    ro->resolve_j = json_array();
    ro->inbound_args = json_array();
}

void run_opts_free(struct run_opts *ro)
{
    json_decref(ro->resolve_j);
    json_decref(ro->inbound_args);
    curl_slist_free_all(ro->resolve);
    run_opts_free_strs(ro->personas, ro->n_personas);
    run_opts_free_strs(ro->like_objects, ro->n_like);
    run_opts_free_strs(ro->target_queue, ro->n_target_queue);
    run_opts_free_strs(ro->resolve_v, ro->n_resolve_v);
    free(ro->expect);
    json_decref(ro->preset_j);
    replay_free(&ro->replay);
    free(ro->replay_t);
    free(ro->pin_instance);
    free(ro->pin_op);
}

json_t *run_opts_config_json(const struct run_opts *ro, const struct crowd_opts *co,
                             const struct sched *sc)
{
    json_t *c = json_object();
    if (ro->preset_j)
        json_object_set_new(c, "preset", json_incref(json_object_get(ro->preset_j, "name")));
    if (ro->replay_path) {
        const struct replay *rp = &ro->replay;
        json_t *o = json_array();
        for (size_t i = 0; i < rp->n_origins && i < 50; i++)
            json_array_append_new(o,
                                  json_pack("{s:s, s:I, s:i}", "origin", rp->origins[i], "events",
                                            (json_int_t)rp->origin_events[i], "instance",
                                            replay_instance(rp, (uint32_t)i, co->instances)));
        json_object_set_new(c, "replay",
                            json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:b, s:f, s:o}", "file",
                                      ro->replay_path, "speed", ro->replay_speed, "events",
                                      (json_int_t)rp->n, "origins", (json_int_t)rp->n_origins,
                                      "skipped", (json_int_t)rp->skipped, "untyped",
                                      (json_int_t)rp->untyped, "access_log", rp->access_log,
                                      "duration_s", rp->duration_s, "busiest", o));
    }
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
    json_object_set_new(c, "content", json_string(ro->content_s ? ro->content_s : "default"));
    json_object_set_new(c, "content_opt",
                        ro->content_opt_s ? json_string(ro->content_opt_s) : json_null());
    json_object_set_new(c, "reply_depth", json_integer(ro->reply_depth));
    json_object_set_new(c, "unseen_pct", json_integer(ro->unseen_pct));
    json_object_set_new(c, "undo_share_pct", json_integer(ro->undo_pct));
    json_object_set_new(c, "rotate_keys_pct", json_integer(ro->rotate_pct));
    json_object_set_new(c, "seed", json_integer((json_int_t)ro->seed));
    json_object_set_new(c, "signers", json_integer(ro->signers));
    json_object_set_new(c, "sign", json_string(ro->sign_s ? ro->sign_s : "cavage"));
    json_object_set_new(c, "bad_signatures_share", json_real(ro->so.bad_share));
    json_object_set_new(c, "lookahead_s", json_real(ro->lookahead_s));
    json_object_set_new(c, "max_inflight", json_integer((json_int_t)ro->sndo.max_inflight));
    json_object_set_new(c, "timeout_ms", json_integer(ro->sndo.timeout_ms));
    json_object_set_new(c, "connections", json_integer(ro->sndo.connections));
    json_object_set_new(c, "preconnect",
                        ro->sndo.preconnect < 0 ? json_string("auto")
                                                : json_integer(ro->sndo.preconnect));
    json_object_set_new(c, "loops", json_integer(ro->sndo.loops));
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
    json_t *tq = json_array();
    for (size_t i = 0; i < ro->n_target_queue; i++)
        json_array_append_new(tq, json_string(ro->target_queue[i]));
    json_object_set_new(c, "target_queue", tq);
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
    json_t *ex = json_array();
    for (size_t i = 0; i < ro->n_expect; i++)
        json_array_append_new(ex, json_string(ro->expect[i].text));
    json_object_set_new(c, "expect", ex);
    json_object_set_new(c, "shard", ro->shard_s ? json_string(ro->shard_s) : json_null());
    json_object_set_new(c, "start_at", ro->start_at_s ? json_integer(ro->start_at) : json_null());
    return c;
}

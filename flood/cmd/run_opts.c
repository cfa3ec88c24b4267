/* flood/cmd/run_opts.c: the options of `flood run` as rows of one table (core/opt.h): each
 * row its grammar, where the value goes, its default, its help line and its run.json key;
 * the checks a few values need beyond their grammar; and run.json's record of them. */
#include "flood/cmd/run_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flood/cmd/run_shard.h"
#include "flood/dash/dash.h"
#include "flood/measure/tqueue.h"
#include "flood/report/metrics.h"

#define RO(m) OPT_AT(struct run_opts, m)
#define RUNS  (OPT_CMD_RUN | OPT_CMD_CAPACITY)

/* ---- the checks some values need beyond their grammar (a row's set) ------------------- */

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
            opt_strs_add(&ro->personas, &ro->n_personas, p);
    }
    fclose(f);
    return 0;
}

/* --target-queue: a source spec that parses (nothing is connected until the run). */
static int check_target_queue(void *base, const struct opt *row, const char *arg,
                              struct flood_err *e)
{
    (void)base;
    (void)row;
    struct tq_source *src = tq_source_new(arg, e);
    tq_source_free(src);
    return src ? 0 : -1;
}

static int set_users_model(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return users_model_parse(&((struct run_opts *)base)->users, arg, e);
}

/* config.users_model: every part of the model in force. */
static json_t *rec_users_model(const void *base, const struct opt *row)
{
    (void)row;
    json_t *u = users_json(&((const struct run_opts *)base)->users, 0);
    json_t *m = json_incref(json_object_get(u, "model"));
    json_decref(u);
    return m;
}

static int set_personas(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return read_personas(arg, base, e);
}

static int set_inbox(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)base;
    (void)row;
    if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8)) {
        flood_err_set(e, FLOOD_EINVAL, "--inbox: expected an http(s) URL, got '%s'", arg);
        return -1;
    }
    return 0;
}

/* --resolve is kept once, in the inbound side's list: it serves the sender's connections,
 * the discovery and the crowd's key fetches and Accepts alike. */
static int set_resolve(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return inbound_opts_add_resolve(((struct run_opts *)base)->io, arg, e);
}

static json_t *rec_resolve(const void *base, const struct opt *row)
{
    (void)row;
    size_t n = 0;
    const char *const *v = inbound_opts_resolve(((const struct run_opts *)base)->io, &n);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static int set_preset(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)base;
    (void)row;
    flood_err_set(e, FLOOD_EINVAL, "--preset: '%s' is expanded before the options are read", arg);
    return -1;
}

static int set_sign(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return signer_parse_dialects(arg, &((struct run_opts *)base)->so, e);
}

static int set_bad(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return signer_parse_bad(arg, &((struct run_opts *)base)->so, e);
}

static int set_presign(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return presign_parse(arg, &((struct run_opts *)base)->presign_window, e);
}

static json_t *rec_bad(const void *base, const struct opt *row)
{
    (void)row;
    return json_real(((const struct run_opts *)base)->so.bad_share);
}

static int set_preconnect(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    struct run_opts *ro = base;
    uint64_t u;
    if (!strcmp(arg, "auto")) {
        ro->sndo.preconnect = -1;
        return 0;
    }
    if (gram_uint("--preconnect", arg, GRAM_NUL, 0, 100000, &u, e)) {
        flood_err_set(e, FLOOD_EINVAL, "--preconnect: expected auto or 0..100000, got '%s'", arg);
        return -1;
    }
    ro->sndo.preconnect = (long)u;
    return 0;
}

static json_t *rec_preconnect(const void *base, const struct opt *row)
{
    (void)row;
    long p = ((const struct run_opts *)base)->sndo.preconnect;
    return p < 0 ? json_string("auto") : json_integer(p);
}

static int set_source_ips(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return sender_parse_source_ips(arg, &((struct run_opts *)base)->sndo, e);
}

static int set_mix(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return workload_parse_mix(arg, ((struct run_opts *)base)->mix, e);
}

static json_t *rec_mix(const void *base, const struct opt *row)
{
    (void)row;
    json_t *mix = json_object();
    for (int i = 0; i < OP__COUNT; i++)
        json_object_set_new(mix, op_name((enum op_kind)i),
                            json_integer(((const struct run_opts *)base)->mix[i]));
    return mix;
}

static int set_content(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return wf_content_profile(arg, &((struct run_opts *)base)->content, e) ? -1 : 0;
}

/* --rate and --duration are recorded when the schedule is not --stages. */
static json_t *rec_unstaged(const void *base, const struct opt *row)
{
    const struct run_opts *ro = base;
    if (ro->stages)
        return NULL;
    return json_real(*(const double *)((const char *)base + row->off));
}

static json_t *rec_check(const void *base, const struct opt *row)
{
    (void)row;
    return json_boolean(!((const struct run_opts *)base)->no_check);
}

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

static int set_expect(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    struct run_opts *ro = base;
    ro->expect = flood_xrealloc(ro->expect, (ro->n_expect + 1) * sizeof(*ro->expect));
    if (expect_parse(arg, 0, &ro->expect[ro->n_expect], e))
        return -1;
    ro->n_expect++;
    return 0;
}

static json_t *rec_expect(const void *base, const struct opt *row)
{
    (void)row;
    const struct run_opts *ro = base;
    json_t *ex = json_array();
    for (size_t i = 0; i < ro->n_expect; i++)
        json_array_append_new(ex, json_string(ro->expect[i].text));
    return ex;
}

static int set_shard(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    struct run_opts *ro = base;
    return run_shard_parse(arg, &ro->shard_k, &ro->shard_n, e);
}

static int set_start_at(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return run_shard_parse_start(arg, (int64_t)time(NULL), &((struct run_opts *)base)->start_at, e);
}

static json_t *rec_start_at(const void *base, const struct opt *row)
{
    (void)row;
    const struct run_opts *ro = base;
    return ro->start_at_s ? json_integer(ro->start_at) : json_null();
}

/* ---- the rows ------------------------------------------------------------------------- */

static const char *const arrival_words[] = {"constant", "poisson", NULL};
/* in the order of WORKLOAD_REFOLLOW_REPEAT, _UNDO_FIRST, _ALTERNATE */
static const char *const refollow_words[] = {"repeat", "undo-first", "alternate", NULL};

const struct opt run_opt_rows[] = {
    OPT_HEAD("Target:", 0),
    {"persona", OPT_STRINGS, "P", RO(personas), .n_off = offsetof(struct run_opts, n_personas),
     .json = "personas", .cmds = RUNS,
     .help = "acct:NAME@HOST (WebFinger) or an actor URL; repeatable. Its actor is fetched with "
             "a signed GET; activities go to its sharedInbox"},
    {"personas", OPT_CUSTOM, "FILE", .set = set_personas, .cmds = RUNS,
     .help = "one persona a line ('#' comments)"},
    {"inbox", OPT_STRING, "URL", RO(inbox), .set = set_inbox, .json = "inbox", .cmds = RUNS,
     .help = "send every activity to this inbox, no discovery"},
    {"personal-inbox", OPT_FLAG, RO(personal_inbox), .json = "personal_inbox", .cmds = RUNS,
     .help = "send to each persona's own inbox, not the shared one"},
    {"target-http", OPT_FLAG, RO(target_http), .json = "target_http", .cmds = RUNS,
     .help = "WebFinger over plain HTTP (a lab target)"},
    {"like-object", OPT_STRINGS, "URL", RO(like_objects),
     .n_off = offsetof(struct run_opts, n_like), .json = "like_objects", .cmds = RUNS,
     .help = "an object to Like (repeatable); else the personas' outboxes"},
    {"resolve", OPT_CUSTOM, "H:P:ADDR", .set = set_resolve, .json = "resolve",
     .record = rec_resolve, .cmds = RUNS,
     .help = "connect to ADDR for H:P, as curl does (repeatable; also used for the crowd's "
             "key fetches and Accepts)"},
    {"insecure", OPT_FLAG, OPT_AT(struct run_opts, sndo.insecure), .json = "insecure", .cmds = RUNS,
     .help = "do not verify the target's TLS certificate"},
    {"cacert", OPT_PATH, "FILE", OPT_AT(struct run_opts, sndo.cacert), .json = "cacert",
     .cmds = RUNS, .help = "trust this CA for the target"},
    {"no-check", OPT_FLAG, RO(no_check), .json = "check", .record = rec_check, .cmds = RUNS,
     .help = "skip the reachability check before the start"},
    OPT_HEAD("Load:", 0),
    {"rate", OPT_RATE, "R", RO(rate), .hi = SCHED_RATE_MAX, .json = "rate", .record = rec_unstaged,
     .cmds = OPT_CMD_RUN, .help = "activities per second (with --duration)"},
    {"duration", OPT_DURATION, "D", RO(duration_s), .lo = 0.001, .hi = SCHED_DURATION_MAX,
     .bare = GRAM_BARE_SECONDS, .json = "duration_s", .record = rec_unstaged, .cmds = OPT_CMD_RUN,
     .help = "30s, 2m, 1h, 500ms (a plain number is seconds)"},
    {"stages", OPT_STRING, "R1:D1,...", RO(stages), .json = "stages", .flags = OPT_F_OMIT_NULL,
     .cmds = OPT_CMD_RUN,
     .help = "a ramp: the rate goes linearly from the previous stage's rate (0 before the "
             "first) to Ri over Di; a stage 'R:0' jumps (a step)"},
    {"arrival", OPT_KEYWORD, "A", RO(arrival), .words = arrival_words, .def = "constant",
     .json = "arrival", .cmds = RUNS,
     .help = "constant (evenly spaced) or poisson (exponential gaps from --seed)"},
    {"mix", OPT_STRING, "M", RO(mix_s), .set = set_mix, .json = "mix", .record = rec_mix,
     .cmds = RUNS,
     .help = "create=70,like=20,follow=10 (default; like=0 when nothing can be liked); also "
             "undo, announce, reply, update, delete, update-actor, question, vote, "
             "emoji-react, delete-actor (README: what each sends)"},
    {"content", OPT_STRING, "P", RO(content_s), .set = set_content, .def = "default",
     .json = "content", .flags = OPT_F_DEF_QUIET, .cmds = RUNS,
     .help = "what posts carry: default (realistic: length, mentions, hashtags, visibility, "
             "CWs, languages, emoji, links, media), heavy (more, bigger media), plain (one "
             "mention, short)"},
    {"content-opt", OPT_STRING, "K=V,..", RO(content_opt_s), .json = "content_opt", .cmds = RUNS,
     .help = "change one part of the profile: length=MEDIAN, length-max=N, mentions=A-B, "
             "hashtags=A-B, zipf=S, visibility=PUB/UNL/FOL/DIR, cw=P%, emoji=P%, links=P%, "
             "media=P%, media-count=N, media-size=BYTES (median, k/m), media-max=BYTES"},
    {"reply-depth", OPT_UINT, "D", RO(reply_depth), .lo = 1, .hi = 64, .def = "3",
     .json = "reply_depth", .cmds = RUNS, .help = "unseen crowd parents of a reply's chain"},
    {"unseen", OPT_PERCENT, "P", RO(unseen_pct), .lo = 0, .hi = 1, .def = "50",
     .json = "unseen_pct", .cmds = RUNS,
     .help = "% of announces and replies whose object is a crowd note the target never saw, "
             "so it must fetch it"},
    {"refollow", OPT_KEYWORD, "M", RO(refollow), .words = refollow_words, .def = "repeat",
     .json = "refollow", .cmds = RUNS,
     .help = "a Follow drawn when every crowd actor already follows the persona (the follow "
             "state in --state): repeat (sent as a refollow, counted apart), undo-first (an "
             "Undo of one first) or alternate (an Undo of an older one, whose actor follows "
             "again in a later run: capacity's default)"},
    {"undo-share", OPT_PERCENT, "P", RO(undo_pct), .lo = 0, .hi = 1, .def = "0",
     .json = "undo_share_pct", .cmds = RUNS,
     .help = "% of like/announce/emoji-react sent as the Undo of an earlier one"},
    {"rotate-keys", OPT_PERCENT, "P", RO(rotate_pct), .lo = 0, .hi = 1, .def = "0",
     .json = "rotate_keys_pct", .cmds = RUNS,
     .help = "% of update-actor that rotate the actor's key (same keyId, another key of the "
             "pool; later activities signed with it)"},
    {"replay", OPT_STRING, "FILE", RO(replay_path), .cmds = OPT_CMD_RUN,
     .help = "replay a real inbox's arrival pattern instead of a rate: an access log "
             "(combined format; POSTs to inbox paths) or a CSV time,origin,type. Only its "
             "times, origins and types are used: origins map to crowd instances (the busiest "
             "to their own), types to --mix names (the rest follow --mix)"},
    {"replay-speed", OPT_REAL, "X", RO(replay_speed), .lo = 0.001, .hi = 1e6, .def = "1",
     .cmds = OPT_CMD_RUN, .help = "replay X times faster (0.5 is half speed)"},
    {"preset", OPT_CUSTOM, "NAME|FILE", .set = set_preset, .cmds = OPT_CMD_RUN,
     .help = "the options of a preset (flood presets lists them) in place of this one: "
             "options given after it win"},
    {"seed", OPT_UINT, "N", RO(seed), .lo = 0, .hi = 18446744073709551616.0, .def = "1",
     .json = "seed", .cmds = RUNS, .help = "the run's seed: the same seed sends the same run"},
    {"max-inflight", OPT_UINT, "N", OPT_AT(struct run_opts, sndo.max_inflight), .lo = 1, .hi = 1e7,
     .def = "10000", .json = "max_inflight", .cmds = RUNS,
     .help = "beyond N requests in flight, shed and count"},
    {"timeout", OPT_DURATION_MS, "T", OPT_AT(struct run_opts, sndo.timeout_ms), .lo = 0.001,
     .hi = SCHED_DURATION_MAX, .bare = GRAM_BARE_SECONDS, .def = "10s", .json = "timeout_ms",
     .cmds = RUNS, .help = "per request"},
    {"connections", OPT_UINT, "C", OPT_AT(struct run_opts, sndo.connections), .lo = 1, .hi = 100000,
     .def = "64", .json = "connections", .cmds = RUNS,
     .help = "keep-alive connections per target origin (with --loops, shared among the loops: "
             "the target sees C in all)"},
    {"preconnect", OPT_CUSTOM, "N|auto", .set = set_preconnect, .def = "auto", .json = "preconnect",
     .record = rec_preconnect, .flags = OPT_F_DEF_QUIET, .cmds = RUNS,
     .help = "open N connections to --inbox before the first send, as wrk does before it "
             "measures (auto, the default: the first second's activities, at most "
             "--connections; 0: each opened when a request needs it, the handshakes in the "
             "first second)"},
    {"loops", OPT_UINT, "N", OPT_AT(struct run_opts, sndo.loops), .lo = 1, .hi = SENDER_LOOPS_MAX,
     .json = "loops", .cmds = RUNS,
     .help = "sending event loops, each a thread of its own (at most 64; default: cores/4 with "
             "--sign none, cores/32 signed, at least 1; 1 with --dashboard): activity n goes to "
             "loop n mod N, so a seed sends the same run whatever N; --max-inflight is shared "
             "too (not with --dashboard)"},
    {"dispatch-quantum", OPT_DURATION, "T", RO(quantum_s), .lo = 0, .hi = 0.01,
     .bare = GRAM_BARE_SECONDS, .def = "1ms", .json = "dispatch_quantum_s", .cmds = RUNS,
     .help = "the sending loop wakes at most once in T and sends what is due by then, each "
             "request at most T late (the dispatch lag and the latency from the intended time "
             "count it; 0: every request wakes the loop at its own time); 1ms is wrk2's timer "
             "tick, shorter sends tighter for more wake-ups (and CPU) a request"},
    {"source-ips", OPT_STRING, "A-B", RO(source_ips), .set = set_source_ips, .json = "source_ips",
     .cmds = RUNS, .help = "instance i sends from address A+i-1 (e.g. 127.0.0.11-127.0.0.30)"},
    {"grace", OPT_DURATION_MS, "T", OPT_AT(struct run_opts, sndo.grace_ms), .lo = 0,
     .hi = SCHED_DURATION_MAX, .bare = GRAM_BARE_SECONDS, .def = "5s", .json = "grace_ms",
     .cmds = RUNS,
     .help = "after SIGINT/SIGTERM wait this long for answers; at the schedule's end flood "
             "waits the longer of this and --timeout + 1 s"},
    {"accept-wait", OPT_DURATION_MS, "T", RO(accept_wait_ms), .lo = 0, .hi = SCHED_DURATION_MAX,
     .bare = GRAM_BARE_SECONDS, .json = "accept_wait_ms", .cmds = OPT_CMD_RUN,
     .help = "then wait up to T for the Accepts of the Follows it sent (default: --grace); a "
             "target whose queue is behind needs more"},
    OPT_HEAD("Signing:", 0),
    {"sign", OPT_STRING, "D", RO(sign_s), .set = set_sign, .def = "cavage", .json = "sign",
     .flags = OPT_F_DEF_QUIET, .cmds = RUNS,
     .help = "cavage (default), rfc9421, cavage,rfc9421, rfc9421,cavage (a second knock with "
             "the other dialect on 400/401, counted), or none"},
    {"signers", OPT_UINT, "S", RO(signers), .lo = 1, .hi = 256, .json = "signers", .cmds = RUNS,
     .help = "signer threads (default: cores - loops, at least 1)"},
    {"lookahead", OPT_DURATION, "T", RO(lookahead_s), .lo = 0.01, .hi = 60,
     .bare = GRAM_BARE_SECONDS, .json = "lookahead_s", .cmds = RUNS,
     .help = "how far ahead of its time a request is signed (default 1s, 100ms with --sign "
             "none)"},
    {"presign", OPT_STRING, "T|all", RO(presign_s), .set = set_presign, .json = "presign",
     .cmds = RUNS,
     .help = "sign the schedule's first T (or all of it) before the first send, so that the "
             "measured window only sends; a longer run refills T ahead in the background. "
             "Each Date is still the request's intended second (docs/LOAD.md, \"Presigned "
             "runs\"); not with --dashboard or --lookahead"},
    {"presign-memory", OPT_SIZE, "SIZE", RO(presign_memory), .lo = 1 << 20, .hi = 1e12,
     .def = "1GiB", .json = "presign_memory", .cmds = RUNS,
     .help = "the most the presigned requests may hold; a --presign window that needs more "
             "is refused before the start"},
    {"bad-signatures", OPT_STRING, "P%", RO(bad_s), .set = set_bad, .json = "bad_signatures_share",
     .record = rec_bad, .cmds = RUNS,
     .help = "that share deliberately bad: wrong key, Date two hours old, body not matching "
             "its digest (each syntactically valid); a target answering 2xx to one is reported "
             "(accepted_bad)"},
    OPT_HEAD("Results:", 0),
    {"out", OPT_STRING, "DIR", RO(out), .json = "out", .cmds = OPT_CMD_RUN,
     .help = "run.json, *.hgrm, summary.md (default out/run-YYYYMMDDTHHMMSSZ)"},
    {"quiet", OPT_FLAG, RO(quiet), .cmds = RUNS,
     .help = "no live line and no progress lines on stderr"},
    {"target-queue", OPT_STRINGS, "SRC", RO(target_queue),
     .n_off = offsetof(struct run_opts, n_target_queue), .set = check_target_queue,
     .json = "target_queue", .cmds = RUNS,
     .help = "read the target's own queue each second (repeatable): "
             "sidekiq:redis://HOST:PORT/DB (Mastodon), bullmq:redis://HOST:PORT/DB[?prefix=P] "
             "(Misskey), fedify:URL (benchmark stats), prometheus:URL#METRIC{LABELS}, "
             "json:URL#PATH, cmd:COMMAND"},
    {"users-model", OPT_CUSTOM, "K=V,..", .set = set_users_model, .json = "users_model",
     .record = rec_users_model, .cmds = OPT_CMD_RUN,
     .help = "the sent rate in active users at peak: the model's parts changed (follows, "
             "remote, unique, posts, boosts, edits, local-posts, likes-in, boosts-in, "
             "replies-in, peak; docs/LOAD.md)"},
    {"metrics", OPT_STRING, "ADDR:PORT", RO(metrics), .set = set_metrics, .cmds = RUNS,
     .help = "serve Prometheus metrics at http://ADDR:PORT/metrics during the run (port 0 "
             "picks one, printed on stderr)"},
    {"metrics-hold", OPT_DURATION, "D", RO(metrics_hold_s), .lo = 0, .hi = SCHED_DURATION_MAX,
     .bare = GRAM_BARE_SECONDS, .def = "0", .cmds = RUNS,
     .help = "keep serving them for D after the results are written, so a scraper reads the "
             "final figures"},
    {"dashboard", OPT_STRING, "ADDR:PORT", RO(dashboard), .set = set_dashboard, .cmds = RUNS,
     .help = "a live page at http://ADDR:PORT/ (loopback unless a token is set): the charts "
             "of report.html each second, and steering: the rate (at once or ramped), "
             "pause/resume, faults on/off, stop; every change lands in run.json's "
             "\"steering\""},
    {"dashboard-token", OPT_STRING, "T", RO(dashboard_token), .cmds = RUNS,
     .help = "require T (Authorization: Bearer T or ?token=T) and serve non-loopback clients"},
    {"dashboard-hold", OPT_DURATION, "D", RO(dashboard_hold_s), .lo = 0, .hi = SCHED_DURATION_MAX,
     .bare = GRAM_BARE_SECONDS, .def = "0", .cmds = RUNS,
     .help = "keep the dashboard (and its link to report.html) up for D after the results are "
             "written"},
    {"expect", OPT_CUSTOM, "EXPR", .set = set_expect, .json = "expect", .record = rec_expect,
     .cmds = RUNS,
     .help = "a threshold judged on run.json at the end (repeatable): METRIC OP VALUE, e.g. "
             "'p99<300ms', '2xx>=99%', 'f2a.p95<2s', 'shed==0', 'fetch.actor.repeat==0', "
             "'create.p99<=1s', 'json:totals.retry_after.429==0'. Metrics: p50 p90 p95 p99 "
             "p99.9 max mean, OP.pNN, service.pNN, lag.pNN, f2a.pNN; counts scheduled sent "
             "shed completed unfinished 2xx 4xx 5xx errors 401 403 408 429 503 timeout "
             "transport accepts, fetch.KIND [.repeat]; a count as a share with %; times in us "
             "ms s m. A failed one makes the exit code 3"},
    OPT_HEAD("Shards (docs/SHARDS.md):", 0),
    {"shard", OPT_STRING, "K/N", RO(shard_s), .set = set_shard, .json = "shard", .cmds = RUNS,
     .help = "send only activities n with n mod N == K (K from 0) of the run the same options "
             "give unsharded; serve the whole crowd"},
    {"start-at", OPT_STRING, "T", RO(start_at_s), .set = set_start_at, .json = "start_at",
     .record = rec_start_at, .cmds = RUNS,
     .help = "start the schedule at wall-clock T (unix seconds or YYYY-MM-DDTHH:MM:SSZ), the "
             "same for every shard (required with --shard); the run's ids derive from it and "
             "--seed"},
    {"log-sends", OPT_STRING, "FILE", RO(log_sends), .cmds = RUNS,
     .help = "one line per activity dispatched: N INTENDED_NS OP SENT|SHED"},
    {0},
};

static const char run_usage[] =
    "usage: flood run (--inbox URL | --persona P ...) (--rate R --duration D | --stages S)\n"
    "                 [options]\n"
    "The crowd of fake instances plus the sender: post HTTP-signed activities from random\n"
    "crowd actors to the target's inbox at a set rate, open loop, and measure every answer.\n";

static const char run_tail[] =
    "A live line each second on stderr when it is a terminal; the final table and the\n"
    "conservation line (scheduled = sent + shed; sent = completed + unfinished) on stdout.\n"
    "SIGINT/SIGTERM stop sending, wait --grace for answers and still write every result (a\n"
    "second signal stops waiting). Exit codes: 0 the run ran (interrupted or not), 1 it could\n"
    "not run (crowd, persona not resolvable, target unreachable before the start, results not\n"
    "written, conservation violated), 2 usage, 3 the run ran but an --expect failed.\n";

/* The spec of a command that runs like flood run: its rows, the crowd's, the inbound side's. */
static void run_spec(struct opt_spec *spec, struct run_opts *ro, struct crowd_opts *co,
                     struct inbound_opts *io)
{
    *spec = (struct opt_spec){
        .cmd = ro->cmd,
        .mask = ro->mask,
        .sets = {{run_opt_rows, ro}, {crowd_opt_rows, co}, {inbound_opt_rows, io}},
        .n_sets = 3,
        .usage = run_usage,
        .tail = run_tail};
}

/* The inbound options in force, recorded as written for run.json's config. */
static void run_seen(void *ctx, size_t set, const struct opt *row, const char *arg, char **raw,
                     int n_raw)
{
    (void)raw;
    (void)n_raw;
    if (set != 2)
        return;
    struct run_opts *ro = ctx;
    char *buf = flood_xasprintf("--%s%s%s", row->name, arg ? " " : "", arg ? arg : "");
    json_array_append_new(ro->inbound_args, json_string(buf));
    free(buf);
}

int run_opts_parse(int argc, char **argv, struct run_opts *ro, struct crowd_opts *co,
                   struct inbound_opts *io)
{
    ro->cmd = argv[0];
    ro->io = io;
    struct opt_spec spec;
    run_spec(&spec, ro, co, io);
    spec.seen = run_seen;
    spec.ctx = ro;
    int rc = opt_parse(&spec, argc, argv);
    co->dns_src_base = ro->sndo.src_base; /* --dns answers each instance with its own */
    co->dns_src_count = ro->sndo.src_count;
    return rc;
}

void run_opts_init(struct run_opts *ro)
{
    memset(ro, 0, sizeof(*ro));
    ro->cmd = "run";
    ro->mask = OPT_CMD_RUN;
    ro->accept_wait_ms = -1; /* settled: --grace */
    /* --loops, --signers and --lookahead stay 0: settled from the cores and --sign */
    struct opt_spec spec = {.mask = OPT_CMD_RUN, .sets = {{run_opt_rows, ro}}, .n_sets = 1};
    struct flood_err err = {0};
    if (opt_defaults(&spec, &err)) {
        fprintf(stderr, "flood: %s\n", err.msg);
        abort();
    }
    users_model_defaults(&ro->users);
    ro->inbound_args = json_array();
}

void run_opts_free(struct run_opts *ro)
{
    json_decref(ro->inbound_args);
    opt_strs_free(ro->personas, ro->n_personas);
    opt_strs_free(ro->like_objects, ro->n_like);
    opt_strs_free(ro->target_queue, ro->n_target_queue);
    free(ro->expect);
    json_decref(ro->preset_j);
    replay_free(&ro->replay);
    free(ro->replay_t);
    free(ro->pin_instance);
    free(ro->pin_op);
}

/* config.replay: the pattern replayed, its busiest origins and their instances. */
static json_t *replay_json(const struct run_opts *ro, const struct crowd_opts *co)
{
    const struct replay *rp = &ro->replay;
    json_t *o = json_array();
    for (size_t i = 0; i < rp->n_origins && i < 50; i++)
        json_array_append_new(o, json_pack("{s:s, s:I, s:i}", "origin", rp->origins[i], "events",
                                           (json_int_t)rp->origin_events[i], "instance",
                                           replay_instance(rp, (uint32_t)i, co->instances)));
    return json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:b, s:f, s:o}", "file", ro->replay_path,
                     "speed", ro->replay_speed, "events", (json_int_t)rp->n, "origins",
                     (json_int_t)rp->n_origins, "skipped", (json_int_t)rp->skipped, "untyped",
                     (json_int_t)rp->untyped, "access_log", rp->access_log, "duration_s",
                     rp->duration_s, "busiest", o);
}

json_t *run_opts_config_json(const struct run_opts *ro, const struct crowd_opts *co,
                             const struct sched *sc)
{
    json_t *c = json_object();
    if (ro->preset_j)
        json_object_set_new(c, "preset", json_incref(json_object_get(ro->preset_j, "name")));
    if (ro->replay_path)
        json_object_set_new(c, "replay", replay_json(ro, co));
    opt_record(run_opt_rows, ro, ro->mask, c);
    json_object_set_new(c, "scheduled_duration_s", json_real(sched_duration(sc)));
    json_t *cj = json_object();
    opt_record(crowd_opt_rows, co, ro->mask, cj);
    json_object_set_new(c, "crowd", cj);
    json_object_set_new(c, "inbound_args", json_incref(ro->inbound_args));
    return c;
}

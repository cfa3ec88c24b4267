/* flood/cmd/cmd_capacity.c: `flood capacity`: the highest rate a target sustains. Each step
 * is a whole `flood run` at one rate (a child process of this binary, with every option the
 * user gave for the target), judged on its tail (report/capacity.c); the rate steps up by a
 * factor until a step breaks a limit, then is refined between the last good and the first
 * bad rate (next to the capacity the failing steps' queues measured, else halfway) until
 * the two are within --precision, running a step again where its verdict is close. Between steps
 * the target's queue is watched until it drains (--target-queue, --stats-url or --probe-cmd);
 * without one, each step's run already waits for the Accepts of its Follows, which is the target's
 * queue draining. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "flood/cmd/cmd.h"
#include "flood/cmd/run_opts.h"
#include "flood/core/clock.h"
#include "flood/core/fsutil.h"
#include "flood/measure/tqueue.h"
#include "flood/core/http.h"
#include "flood/core/jpath.h"
#include "flood/report/capacity.h"
#include "flood/report/report.h"
#include "flood/report/results.h"
#include "flood/report/users.h"
#include "flood/send/sched.h"

#define CAP_STEPS_MAX 64
#define CAP_ARGS_MAX  512

struct cap_opts {
    double start, max_rate, factor, hold_s, cooldown_s, margin, warmup_s;
    double max_p99_s, max_f2a_s; /* --max-p99, --max-f2a (into lim in ms) */
    int refine;
    double precision; /* --precision: the refinement's end, a share */
    int confirm;      /* a step that breaks a limit runs again (majority of up to three) */
    struct cap_limits lim;
    const char *stats_url, *queue_path, *probe_cmd, *out;
    double drain_below;
    char *pass[CAP_ARGS_MAX]; /* the options for every step's flood run (borrowed) */
    int n_pass;
    struct users_model users; /* the verdict in users (--users-model) */
    /* the steps' --target-queue sources, read here too while the queue drains */
    struct tq_source *tq[TQ_SOURCES_MAX];
    int n_tq;
};

static volatile sig_atomic_t cap_stop;

static void on_signal(int sig)
{
    (void)sig;
    cap_stop = 1;
}

/* ---- the target's queue, watched ------------------------------------------------------- */

struct sampler {
    const struct cap_opts *o;
    pthread_mutex_t lock;
    struct cap_sample *s;
    size_t n, cap;
    int stop;
    pthread_t thread;
};

/* The queue depth now: from the stats URL's JSON at queue_path, or the probe command's
 * first number. 0, or -1 when it could not be read. */
static int queue_depth(const struct cap_opts *o, double *depth)
{
    if (o->n_tq) { /* the steps' --target-queue sources: their inbound gauges summed */
        double sum = 0;
        for (int i = 0; i < o->n_tq; i++) {
            struct tq_reading r;
            int have = 0;
            tq_source_read(o->tq[i], &r);
            sum += tq_reading_sum(&r, TQ_INBOUND, &have);
            if (!have)
                return -1;
        }
        *depth = sum;
        return 0;
    }
    if (o->probe_cmd) {
        FILE *p = popen(o->probe_cmd, "r");
        if (!p)
            return -1;
        int ok = fscanf(p, "%lf", depth) == 1;
        int rc = pclose(p);
        return ok && rc == 0 ? 0 : -1;
    }
    /* unsigned, 2 s, a stats document over 1 MiB refused */
    struct http_opts ho = {.timeout_ms = 2000, .max_body = 1024 * 1024};
    struct http_req req = {.method = HTTP_GET, .url = o->stats_url, .o = &ho, .who = "capacity"};
    struct http_resp r;
    struct flood_err e;
    int rc = http_fetch(&req, &r, &e) == 0 && r.status == 200 ? 0 : -1;
    json_t *j = rc == 0 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    http_resp_free(&r);
    const json_t *v = jpath_get(j, o->queue_path);
    rc = json_is_number(v) ? 0 : -1;
    if (rc == 0)
        *depth = json_number_value(v);
    json_decref(j);
    return rc;
}

static void *sampler_main(void *arg)
{
    struct sampler *sm = arg;
    for (;;) {
        pthread_mutex_lock(&sm->lock);
        int stop = sm->stop;
        pthread_mutex_unlock(&sm->lock);
        if (stop)
            break;
        double d;
        if (queue_depth(sm->o, &d) == 0) {
            pthread_mutex_lock(&sm->lock);
            if (sm->n == sm->cap) {
                sm->cap = sm->cap ? sm->cap * 2 : 64;
                sm->s = flood_xrealloc(sm->s, sm->cap * sizeof(*sm->s));
            }
            sm->s[sm->n++] = (struct cap_sample){.t = clock_wall_s(), .depth = d};
            pthread_mutex_unlock(&sm->lock);
        }
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 500000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Wait until the queue is at most the drain level, or the cool-down's limit. Seconds waited,
 * or -1 when it did not drain in time. */
static double drain(const struct cap_opts *o, double rate)
{
    if (!o->stats_url && !o->probe_cmd && !o->n_tq)
        return 0;
    double below = o->drain_below >= 0 ? o->drain_below : fmax(1, rate * 0.02);
    double t0 = clock_wall_s(), d;
    while (!cap_stop && clock_wall_s() - t0 < o->cooldown_s) {
        if (queue_depth(o, &d) == 0 && d <= below)
            return clock_wall_s() - t0;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 500000000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* ---- one step ---------------------------------------------------------------------------- */

/* Run `flood run` at rate into o->out/dir (its output in dir's log). The child's exit code,
 * or -1 when it could not be started. */
static int run_child(const struct cap_opts *o, double rate, double hold, const char *dir,
                     struct sampler *sm)
{
    char rate_s[32], hold_s[32], wait_s[32], out[CAP_DIR_MAX + 64], log[CAP_DIR_MAX + 80];
    snprintf(rate_s, sizeof(rate_s), "%.6g", rate);
    snprintf(hold_s, sizeof(hold_s), "%.3fs", hold);
    snprintf(wait_s, sizeof(wait_s), "%.3fs", o->cooldown_s);
    snprintf(out, sizeof(out), "%s/%s", o->out, dir);
    snprintf(log, sizeof(log), "%s/%s.log", o->out, dir);
    char *args[CAP_ARGS_MAX + 16];
    int n = 0;
    args[n++] = "flood";
    args[n++] = "run";
    for (int i = 0; i < o->n_pass; i++)
        args[n++] = o->pass[i];
    char *tail[] = {"--rate", rate_s,          "--duration", hold_s,   "--out",
                    out,      "--accept-wait", wait_s,       "--quiet"};
    for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
        args[n++] = tail[i];
    args[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f || dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv("/proc/self/exe", args);
        fprintf(stderr, "flood: capacity: cannot start flood run: %s\n", strerror(errno));
        _exit(127);
    }
    sm->stop = 0;
    if (o->stats_url || o->probe_cmd)
        pthread_create(&sm->thread, NULL, sampler_main, sm);
    int status = 0, sent_int = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            break;
        if (cap_stop && !sent_int) { /* the step stops as a run does: it writes its results */
            kill(pid, SIGINT);
            sent_int = 1;
        }
    }
    if (o->stats_url || o->probe_cmd) {
        pthread_mutex_lock(&sm->lock);
        sm->stop = 1;
        pthread_mutex_unlock(&sm->lock);
        pthread_join(sm->thread, NULL);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Run and judge one rate, again where the verdict is close (a majority of up to three).
 * 0, or -1 with the reason printed (the step could not run at all). */
static int step(struct cap_opts *o, double rate, struct cap_step *s, int index, int confirm)
{
    memset(s, 0, sizeof(*s));
    s->rate = rate;
    int passes = 0, fails = 0, repeat_confirm = 0;
    struct cap_limits lim = o->lim;
    if (!o->stats_url && !o->probe_cmd && !o->n_tq)
        lim.queue_share = -1; /* with --target-queue each step's run.json has the readings */
    for (int r = 0; r < 3 && !cap_stop; r++) {
        struct sampler sm = {.o = o};
        pthread_mutex_init(&sm.lock, NULL);
        snprintf(s->dir, sizeof(s->dir), "steps/%02d-%.6g%s", index, rate,
                 r ? (r == 1 ? "-b" : "-c") : "");
        int rc = run_child(o, rate, o->hold_s, s->dir, &sm);
        char path[CAP_DIR_MAX + 64];
        snprintf(path, sizeof(path), "%s/%s", o->out, s->dir);
        struct flood_err err = {0};
        json_t *run = report_load_run(path, &err);
        struct cap_step one = {.rate = rate};
        int judged = run && cap_judge(run, &lim, sm.s, sm.n, &one, &err) == 0;
        json_decref(run);
        free(sm.s);
        pthread_mutex_destroy(&sm.lock);
        if (!judged) {
            fprintf(stderr,
                    "flood: capacity: the step at %.6g/s did not run (flood run exit %d; "
                    "see %s/%s.log): %s\n",
                    rate, rc, o->out, s->dir, err.msg);
            return -1;
        }
        snprintf(one.dir, sizeof(one.dir), "%s", s->dir);
        one.runs = r + 1;
        *s = one;
        passes += one.pass;
        fails += !one.pass;
        double waited = drain(o, rate);
        if (waited < 0 && !cap_stop)
            fprintf(stderr,
                    "flood: capacity: the target's queue did not drain within %.0f s "
                    "after %.6g/s; going on\n",
                    o->cooldown_s, rate);
        /* a failure is confirmed (a target starved for a moment is not a verdict), and so is
         * a failure at the first rate: nothing below it was seen */
        if (r == 0)
            repeat_confirm = !cap_close(&one, o->margin); /* else repeated for being close */
        if (passes == 2 || fails == 2 ||
            (r == 0 && repeat_confirm && !(!one.pass && (confirm || o->confirm))))
            break;
    }
    s->pass = passes > fails;
    s->passes = passes;
    s->repeat_confirm = repeat_confirm;
    return 0;
}

static void print_step(const struct cap_step *s, int index)
{
    printf("step %2d: %8.4g/s  sent %.1f/s", index, s->rate, s->sent_rate);
    for (int c = 0; c < CAP__COUNT; c++)
        if (s->judged[c]) {
            if (c == CAP_ERRORS)
                printf("  %s %.2f%%", cap_criterion_name(c), s->value[c] * 100);
            else if (isinf(s->value[c]))
                printf("  %s unanswered(%lu)", cap_criterion_name(c), s->unanswered);
            else
                printf("  %s %.1f", cap_criterion_name(c), s->value[c]);
        }
    if (!s->pass && isfinite(s->processed_rate)) /* what the target got through, behind */
        printf("  processed %.1f/s", s->processed_rate);
    printf("  %s", s->pass ? "sustained" : "broke: ");
    if (s->flood_limited)
        printf("flood's generator (saturated: lag p99 %.0f ms, event loop %.0f%% of a core)",
               s->gen_lag_ms, s->gen_loop_share * 100);
    else if (!s->pass)
        printf("%s", s->broke >= 0 ? cap_criterion_name(s->broke) : "?");
    if (s->runs > 1) /* the figures are the last run's, the verdict the majority's */
        printf(" (%d runs, %s: %d sustained; the last one's figures)", s->runs,
               s->repeat_confirm ? "to confirm a failure" : "close to a limit", s->passes);
    printf("\n");
    fflush(stdout);
}

/* ---- options ------------------------------------------------------------------------------ */

static int set_users_model(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)row;
    return users_model_parse(&((struct cap_opts *)base)->users, arg, e);
}

static int set_stats_url(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)base;
    (void)row;
    if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8)) {
        flood_err_set(e, FLOOD_EINVAL, "--stats-url: expected an http(s) URL, got '%s'", arg);
        return -1;
    }
    return 0;
}

/* --rate, --duration, --stages and --accept-wait are each step's. */
static int set_owned(void *base, const struct opt *row, const char *arg, struct flood_err *e)
{
    (void)base;
    (void)arg;
    flood_err_set(e, FLOOD_EINVAL, "--%s is set by each step (--start, --hold, --cooldown)",
                  row->name);
    return -1;
}

#define CO_(m)       OPT_AT(struct cap_opts, m)
#define CAP_DUR(lo_) .lo = (lo_), .hi = SCHED_DURATION_MAX, .bare = GRAM_BARE_SECONDS

static const char *const confirm_words[] = {"no", "yes", NULL};

const struct opt capacity_opt_rows[] = {
    OPT_HEAD("Search:", 0),
    {"start", OPT_RATE, "R", CO_(start), .hi = SCHED_RATE_MAX, .def = "10",
     .help = "the first step's rate"},
    {"max-rate", OPT_RATE, "R", CO_(max_rate), .hi = SCHED_RATE_MAX, .def = "5000",
     .help = "never above R"},
    {"factor", OPT_REAL, "F", CO_(factor), .lo = 1.01, .hi = 1000, .def = "2",
     .help = "each step up multiplies the rate by F"},
    {"refine", OPT_UINT, "N", CO_(refine), .lo = 0, .hi = 20, .def = "4",
     .help = "at most N more steps between the last good and the first bad rate: the "
             "precision under the most the failing steps' queues say the target processed "
             "while behind (a queue source), else halfway"},
    {"precision", OPT_SHARE, "P%", CO_(precision), .lo = 0.001, .hi = 0.5,
     .share_bare = GRAM_SHARE_FRACTION, .def = "2%",
     .help = "the refinement ends once the last good rate is within P% of the first bad one, "
             "or of what the failing steps' queues say the target processed"},
    {"hold", OPT_DURATION, "D", CO_(hold_s), CAP_DUR(2), .def = "20s",
     .help = "each step's length: long enough for a queue to show"},
    {"tail", OPT_SHARE, "P%", CO_(lim.tail), .lo = 0.01, .hi = 1, .share_bare = GRAM_SHARE_FRACTION,
     .def = "50%", .help = "the judged part: the last P% of the hold"},
    {"repeat-margin", OPT_SHARE, "P%", CO_(margin), .lo = 0, .hi = 1,
     .share_bare = GRAM_SHARE_FRACTION, .def = "10%",
     .help = "a step within P% of a limit runs again"},
    {"confirm", OPT_KEYWORD, "yes|no", CO_(confirm), .words = confirm_words, .def = "no",
     .help = "a step that breaks a limit runs again, and the majority of up to three decides "
             "(yes: a moment's starvation is no verdict; the first step is always confirmed)"},
    {"warmup", OPT_DURATION, "D", CO_(warmup_s), CAP_DUR(0), .def = "5s",
     .help = "first a run this long at --start, not judged, so the target has fetched the "
             "crowd's keys before the search (0: none)"},
    {"cooldown", OPT_DURATION, "D", CO_(cooldown_s), CAP_DUR(0), .def = "60s",
     .help = "the longest wait for the queue to drain, and each run's --accept-wait"},
    OPT_HEAD("Limits (a step breaks when one is over in its tail; 0 turns one off):", 0),
    {"max-p99", OPT_DURATION, "T", CO_(max_p99_s), CAP_DUR(0), .def = "1s",
     .help = "the median per-second p99 of the answers"},
    {"max-errors", OPT_SHARE, "P%", CO_(lim.errors), .lo = 0, .hi = 1,
     .share_bare = GRAM_SHARE_FRACTION, .def = "1%",
     .help = "non-2xx answers, timeouts and transport errors"},
    {"max-f2a", OPT_DURATION, "T", CO_(max_f2a_s), CAP_DUR(0), .def = "5s",
     .help = "Follow-to-Accept p99, the target's processing end to end; a Follow never "
             "answered breaks it (needs follow in the --mix, as the default mix has)"},
    {"max-queue-growth", OPT_SHARE, "P%", CO_(lim.queue_share), .lo = 0, .hi = 10,
     .share_bare = GRAM_SHARE_FRACTION, .def = "5%",
     .help = "the target's queue growing, a second, by more than P% of the step's rate over "
             "the tail (needs a queue source)"},
    OPT_HEAD("Queue source (optional):", 0),
    {"stats-url", OPT_STRING, "URL", CO_(stats_url), .set = set_stats_url,
     .help = "a JSON document holding the queue depth (the reference target's "
             "http://HOST:PORT/stats)"},
    {"queue-path", OPT_STRING, "PATH", CO_(queue_path), .def = "queue.depth",
     .help = "where in it"},
    {"probe-cmd", OPT_STRING, "CMD", CO_(probe_cmd),
     .help = "a shell command printing the queue depth as a number"},
    {"drain-below", OPT_REAL, "N", CO_(drain_below), .lo = 0, .hi = 1e12,
     .help = "drained at N or less (default: 2% of the step's rate, at least 1)"},
    {"users-model", OPT_CUSTOM, "K=V,..", .set = set_users_model,
     .help = "the verdict in active users: the model's parts changed (follows, remote, "
             "unique, posts, boosts, edits, local-posts, likes-in, boosts-in, replies-in, "
             "peak; docs/LOAD.md says what each is)"},
    OPT_HEAD("Results:", 0),
    {"out", OPT_STRING, "DIR", CO_(out),
     .help = "capacity.json, capacity.html, steps/NN-RATE/ (each step's run folder) and "
             "NN-RATE.log (default out/capacity-YYYYMMDDTHHMMSSZ)"},
    {"rate", OPT_CUSTOM, "R", .set = set_owned, .flags = OPT_F_HIDDEN},
    {"duration", OPT_CUSTOM, "D", .set = set_owned, .flags = OPT_F_HIDDEN},
    {"stages", OPT_CUSTOM, "S", .set = set_owned, .flags = OPT_F_HIDDEN},
    {"accept-wait", OPT_CUSTOM, "T", .set = set_owned, .flags = OPT_F_HIDDEN},
    {0},
};

static const char cap_usage[] =
    "usage: flood capacity (--inbox URL | --persona P ...) [flood run options] [options]\n"
    "The highest rate the target sustains. Each step is a whole `flood run` at one rate\n"
    "(given every option here that is not capacity's own, so the target options are flood\n"
    "run's), judged on its last part; the rate steps up by --factor until a step breaks a\n"
    "limit, then is refined between the last good and the first bad rate (just under what\n"
    "the failing steps' queues say the target processed while behind, else halfway),\n"
    "each step close to a limit run again (majority of up to three). Between steps the\n"
    "target's queue is watched until it drains (--target-queue, a flood run option every\n"
    "step reads into its run.json, or --stats-url, --probe-cmd); without them each step's\n"
    "run waits for the Accepts of its Follows (up to --cooldown). With --target-queue the\n"
    "queue criterion is the growth of the inbound queues in each step's own readings, the\n"
    "one that grew most named in the verdict, which also reads in active users\n"
    "(--users-model).\n";

static const char cap_tail[] =
    "flood run's options (Target: and after) go to every step's run, with --refollow\n"
    "alternate unless given: the crowd's follow state carries over from step to step, and\n"
    "once every crowd actor follows, a step's Follows are sent as Undos of older follows,\n"
    "whose actors follow again in the next step, after its cooldown: each step has first\n"
    "Follows to judge Follow-to-Accept on, never one racing its own Undo. --dashboard ADDR:PORT\n"
    "has each step's run serve the live page there in turn (a fixed port); an open page\n"
    "follows from step to step, starting over with each one's second 0.\n"
    "\n"
    "Prints a line a step and the verdict, e.g. 'sustains 212/s (p99 180 ms, errors 0.0%,\n"
    "Follow-to-Accept p99 1.2 s); at 250/s Follow-to-Accept p99 9.8 s breaks the 5 s limit'.\n"
    "Exit codes: 0 a verdict, 1 a step could not run (see its log), 2 usage.\n";

/* What capacity's parse reads beside its own options: flood run's, kept for every step. */
struct cap_parse_ctx {
    struct cap_opts *o;
    int overflow;
    int refollow; /* --refollow given */
};

/* Every option not capacity's own goes, as written, to each step's flood run. */
static void cap_seen(void *ctx, size_t set, const struct opt *row, const char *arg, char **raw,
                     int n_raw)
{
    (void)arg;
    struct cap_parse_ctx *c = ctx;
    if (set == 0)
        return;
    c->refollow |= row && row->name && !strcmp(row->name, "refollow");
    for (int i = 0; i < n_raw; i++) {
        if (c->o->n_pass >= CAP_ARGS_MAX) {
            c->overflow = 1;
            return;
        }
        c->o->pass[c->o->n_pass++] = raw[i];
    }
}

/* Split argv: capacity's own options are applied, flood run's (checked with the run's rows,
 * the crowd's and the inbound side's) go to every step's flood run. 0, 1 after --help, 2 on
 * a usage error (printed). *dashboard: the steps' --dashboard address (borrowed from argv),
 * or NULL: each step's run binds it in turn, so its port must be fixed. */
static int cap_parse(int argc, char **argv, struct cap_opts *o, const char **dashboard)
{
    struct run_opts ro;
    struct crowd_opts co;
    run_opts_init(&ro);
    ro.mask = OPT_CMD_CAPACITY;
    ro.cmd = "capacity";
    crowd_opts_defaults(&co);
    struct inbound_opts *io = inbound_opts_new();
    ro.io = io;
    struct cap_parse_ctx ctx = {.o = o};
    struct opt_spec spec = {.cmd = "capacity",
                            .mask = OPT_CMD_CAPACITY,
                            .sets = {{capacity_opt_rows, o},
                                     {run_opt_rows, &ro},
                                     {crowd_opt_rows, &co},
                                     {inbound_opt_rows, io}},
                            .n_sets = 4,
                            .usage = cap_usage,
                            .tail = cap_tail,
                            .seen = cap_seen,
                            .ctx = &ctx};
    struct opt_spec own = {.mask = OPT_CMD_CAPACITY, .sets = {{capacity_opt_rows, o}}, .n_sets = 1};
    users_model_defaults(&o->users);
    struct flood_err err = {0};
    int rc = opt_defaults(&own, &err) ? 2 : opt_parse(&spec, argc, argv);
    const char *why = NULL;
    if (rc == 0) {
        o->lim.latency_ms = o->max_p99_s * 1000;
        o->lim.f2a_ms = o->max_f2a_s * 1000;
        /* every step follows the persona again from the same crowd, whose follow state
         * carries over: once every actor follows, a step undoes older follows for the next
         * step to follow again, so each step has first Follows to judge */
        if (!ctx.refollow && o->n_pass + 2 <= CAP_ARGS_MAX) {
            o->pass[o->n_pass++] = "--refollow";
            o->pass[o->n_pass++] = "alternate";
        }
        if (ctx.overflow)
            why = "too many options";
        else if (o->stats_url && o->probe_cmd)
            why = "give --stats-url or --probe-cmd, not both";
        else if (ro.n_target_queue && (o->stats_url || o->probe_cmd))
            why = "give --target-queue, or --stats-url or --probe-cmd, not both";
        else if (o->start > o->max_rate)
            why = "--start is above --max-rate";
        else if (!ro.inbox && !ro.n_personas)
            why = "no target: give --inbox URL or --persona";
    }
    *dashboard = rc == 0 && !why ? ro.dashboard : NULL;
    const char *port = *dashboard ? strrchr(*dashboard, ':') : NULL;
    if (port && atoi(port + 1) == 0)
        why = "--dashboard needs a fixed port, not 0 (each step's run serves the page there in "
              "turn)";
    if (why) {
        fprintf(stderr, "flood: capacity: %s\n", why);
        rc = 2;
    }
    const char *pport = rc == 0 && co.proxy ? strrchr(co.proxy, ':') : NULL;
    if (pport && atoi(pport + 1) == 0) {
        fprintf(stderr, "flood: capacity: --proxy needs a fixed port, not 0 (the target is "
                        "pointed at it once; each step's run listens there in turn)\n");
        rc = 2;
    }
    /* the steps read --target-queue into their run.json; the queue drains are read here */
    for (size_t i = 0; rc == 0 && i < ro.n_target_queue && o->n_tq < TQ_SOURCES_MAX; i++) {
        struct flood_err e = {0};
        if ((o->tq[o->n_tq] = tq_source_new(ro.target_queue[i], &e)))
            o->n_tq++;
    }
    run_opts_free(&ro);
    inbound_opts_free(io);
    return rc;
}

static double round3(double r)
{
    if (r <= 0)
        return r;
    double m = pow(10, floor(log10(r)) - 2);
    return round(r / m) * m;
}

/* The next rate between the last good step and the first bad one: 0 and *rate, or -1 when
 * the search is fine enough. A failing step whose queue grew measured what the target
 * processed while behind (its 2xx rate less the growth): its capacity. The highest such
 * measure is taken (a step just over the capacity measures low: a moment's stall there
 * leaves jobs that drain slowly), except one well under a rate that passed, which is a
 * target doing worse for being flooded (its intake starving its processing), not its
 * capacity. The next rate is the precision under that capacity, so the step passes and
 * ends the search, or under the first bad rate when the capacity measured is above it (a
 * stall broke that step); without a measure, halfway. Fine enough: the good rate within
 * the precision of the bad one, or of the capacity measured (give or take the rounding). */
static int refine_next(const struct cap_opts *o, const struct cap_step *steps, size_t n,
                       const struct cap_step *best, const struct cap_step *fail, double *rate)
{
    double lo = best ? best->rate : 0, hi = fail->rate, p = o->precision, cap = NAN;
    for (size_t i = 0; i < n; i++)
        if (!steps[i].pass && isfinite(steps[i].processed_rate) &&
            steps[i].processed_rate > lo * (1 - p) && !(steps[i].processed_rate <= cap))
            cap = steps[i].processed_rate;
    /* (give or take half a percent: rates are rounded to three digits) */
    if (hi - lo <= (p + 0.005) * hi || (best && isfinite(cap) && lo >= cap * (1 - p - 0.005)))
        return -1;
    double r = isfinite(cap) ? round3(cap * (1 - p)) : 0;
    if (isfinite(cap) && r >= hi)
        r = round3(hi * (1 - p));
    if (!(r > lo && r < hi))
        r = round3((lo + hi) / 2);
    if (r <= lo || r >= hi)
        return -1;
    *rate = r;
    return 0;
}

int cmd_capacity(int argc, char **argv)
{
    struct cap_opts o = {.drain_below = -1}; /* the rest from the rows' defaults */
    const char *dashboard = NULL;
    int rc = cap_parse(argc, argv, &o, &dashboard);
    if (rc)
        return rc == 1 ? 0 : 2;
    o.lim.hold_s = o.hold_s;
    char outdir[256];
    if (!o.out) {
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(outdir, sizeof(outdir), "out/capacity-%Y%m%dT%H%M%SZ", &tm);
        o.out = outdir;
    }
    char steps_dir[CAP_DIR_MAX + 16];
    snprintf(steps_dir, sizeof(steps_dir), "%s/steps", o.out);
    struct flood_err err = {0};
    if (fs_mkdir_p(steps_dir, 0755, "capacity: results folder", &err)) {
        fprintf(stderr, "flood: %s\n", err.msg);
        return 1;
    }
    if (dashboard) {
        printf("dashboard: http://%s/ (each step's run serves it in turn; an open page follows "
               "the steps)\n",
               dashboard);
        fflush(stdout);
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (o.warmup_s > 0 && !cap_stop) {
        /* caches warm first (the target fetching every crowd key), judged by nobody */
        struct sampler sm = {.o = &o};
        pthread_mutex_init(&sm.lock, NULL);
        int wrc = run_child(&o, o.start, o.warmup_s, "steps/00-warmup", &sm);
        free(sm.s);
        pthread_mutex_destroy(&sm.lock);
        if (wrc != 0 && !cap_stop)
            fprintf(stderr,
                    "flood: capacity: the warm-up run exited %d (see %s/steps/00-warmup.log)\n",
                    wrc, o.out);
        drain(&o, o.start);
    }
    struct cap_step *steps = flood_xcalloc(CAP_STEPS_MAX, sizeof(*steps));
    size_t n = 0;
    const struct cap_step *best = NULL, *fail = NULL;
    int failed_to_run = 0;
    /* up by the factor */
    for (double r = o.start; !cap_stop && n < CAP_STEPS_MAX; r = round3(r * o.factor)) {
        if (r > o.max_rate)
            r = o.max_rate;
        if (step(&o, r, &steps[n], (int)n + 1, n == 0)) {
            failed_to_run = 1;
            break;
        }
        print_step(&steps[n], (int)n + 1);
        n++;
        if (!steps[n - 1].pass) {
            fail = &steps[n - 1];
            break;
        }
        best = &steps[n - 1];
        if (r >= o.max_rate)
            break;
    }
    /* then refine between the last good and the first bad */
    /* (not below a failure of flood's own: the target's limit is not between the two) */
    for (int i = 0; i < o.refine && fail && !fail->flood_limited && !failed_to_run && !cap_stop &&
                    n < CAP_STEPS_MAX;
         i++) {
        double mid;
        if (refine_next(&o, steps, n, best, fail, &mid))
            break;
        if (step(&o, mid, &steps[n], (int)n + 1, 0)) {
            failed_to_run = 1;
            break;
        }
        print_step(&steps[n], (int)n + 1);
        if (steps[n].pass)
            best = &steps[n];
        else
            fail = &steps[n];
        n++;
    }
    char verdict[1536];
    cap_verdict(best, fail, &o.lim, verdict, sizeof(verdict));
    if (best) { /* "sustains R/s (figures)" then the users it stands for */
        char phrase[512], *at = strchr(verdict, ')');
        users_phrase(&o.users, best->rate, phrase, sizeof(phrase));
        if (at && strlen(verdict) + strlen(phrase) < sizeof(verdict)) {
            memmove(at + 1 + strlen(phrase), at + 1, strlen(at + 1) + 1);
            memcpy(at + 1, phrase, strlen(phrase));
        }
    }
    if (cap_stop)
        snprintf(verdict + strlen(verdict), sizeof(verdict) - strlen(verdict),
                 " (interrupted: the search stopped early)");
    json_t *cj = cap_json(steps, n, &o.lim, best, fail, verdict);
    json_t *pass = json_array();
    for (int i = 0; i < o.n_pass; i++)
        json_array_append_new(pass, json_string(o.pass[i]));
    json_object_set_new(cj, "run_options", pass);
    json_object_set_new(cj, "interrupted", json_boolean(cap_stop));
    json_object_set_new(cj, "users", best ? users_json(&o.users, best->rate) : json_null());
    char path[CAP_DIR_MAX + 32];
    snprintf(path, sizeof(path), "%s/capacity.json", o.out);
    int wrote = json_dump_file(cj, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0 &&
                cap_html_write(o.out, cj, &err) == 0;
    json_decref(cj);
    free(steps);
    for (int i = 0; i < o.n_tq; i++)
        tq_source_free(o.tq[i]);
    curl_global_cleanup();
    if (n)
        printf("%s\n", verdict);
    if (!wrote)
        fprintf(stderr, "flood: capacity: cannot write the results in '%s': %s\n", o.out,
                err.msg[0] ? err.msg : strerror(errno));
    else
        printf("results: %s\n", o.out);
    return failed_to_run || !wrote ? 1 : 0;
}

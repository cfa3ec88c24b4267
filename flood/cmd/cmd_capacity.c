/* flood/cmd/cmd_capacity.c: `flood capacity`: the highest rate a target sustains. Each step
 * is a whole `flood run` at one rate (a child process of this binary, with every option the
 * user gave for the target), judged on its tail (report/capacity.c); the rate steps up by a
 * factor until a step breaks a limit, then bisects between the last good and the first bad
 * rate, running a step again where its verdict is close. Between steps the target's queue
 * is watched until it drains (--stats-url or --probe-cmd); without one, each step's run
 * already waits for the Accepts of its Follows, which is the target's queue draining. */
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
#include "flood/core/http.h"
#include "flood/core/jpath.h"
#include "flood/report/capacity.h"
#include "flood/report/report.h"
#include "flood/report/results.h"
#include "flood/send/sched.h"

#define CAP_STEPS_MAX 64
#define CAP_ARGS_MAX  512

struct cap_opts {
    double start, max_rate, factor, hold_s, cooldown_s, margin, warmup_s;
    int refine;
    int confirm; /* a step that breaks a limit runs again (majority of up to three) */
    struct cap_limits lim;
    const char *stats_url, *queue_path, *probe_cmd, *out;
    double drain_below;
    char *pass[CAP_ARGS_MAX]; /* the options for every step's flood run (borrowed) */
    int n_pass;
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
    if (!o->stats_url && !o->probe_cmd)
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
    if (!o->stats_url && !o->probe_cmd)
        lim.queue_share = -1;
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

static const char cap_help[] =
    "usage: flood capacity (--inbox URL | --persona P ...) [flood run options] [options]\n"
    "The highest rate the target sustains. Each step is a whole `flood run` at one rate\n"
    "(given every option here that is not capacity's own, so the target options are flood\n"
    "run's), judged on its last part; the rate steps up by --factor until a step breaks a\n"
    "limit, then is bisected between the last good and the first bad rate, each step close\n"
    "to a limit run again (majority of up to three). Between steps the target's queue is\n"
    "watched until it drains (--stats-url, --probe-cmd); without them each step's run waits\n"
    "for the Accepts of its Follows (up to --cooldown).\n"
    "\n"
    "Search:\n"
    "  --start R            the first step's rate (default 10)\n"
    "  --max-rate R         never above R (default 5000)\n"
    "  --factor F           each step up multiplies the rate by F (default 2)\n"
    "  --refine N           bisections between the last good and the first bad rate\n"
    "                       (default 4: within 1/16 of the first good-to-bad gap)\n"
    "  --hold D             each step's length (default 20s): long enough for a queue to show\n"
    "  --tail P%            the judged part: the last P% of the hold (default 50%)\n"
    "  --repeat-margin P%   a step within P% of a limit runs again (default 10%)\n"
    "  --confirm yes|no     a step that breaks a limit runs again, and the majority of up to\n"
    "                       three decides (default yes: a moment's starvation is no verdict)\n"
    "  --warmup D           first a run this long at --start, not judged, so the target\n"
    "                       has fetched the crowd's keys before the search (default 5s; 0: none)\n"
    "  --cooldown D         the longest wait for the queue to drain, and each run's\n"
    "                       --accept-wait (default 60s)\n"
    "Limits (a step breaks when one is over in its tail; 0 turns one off):\n"
    "  --max-p99 T          the median per-second p99 of the answers (default 1s)\n"
    "  --max-errors P%      non-2xx answers, timeouts and transport errors (default 1%)\n"
    "  --max-f2a T          Follow-to-Accept p99, the target's processing end to end; a\n"
    "                       Follow never answered breaks it (default 5s; needs follow in the\n"
    "                       --mix, as the default mix has)\n"
    "  --max-queue-growth P% the target's queue growing, a second, by more than P% of the\n"
    "                       step's rate over the tail (default 5%; needs a queue source)\n"
    "Queue source (optional):\n"
    "  --stats-url URL      a JSON document holding the queue depth (the reference target's\n"
    "                       http://HOST:PORT/stats)\n"
    "  --queue-path PATH    where in it (default queue.depth)\n"
    "  --probe-cmd CMD      a shell command printing the queue depth as a number\n"
    "  --drain-below N      drained at N or less (default: 2% of the step's rate, at least 1)\n"
    "Results:\n"
    "  --out DIR            capacity.json, capacity.html, steps/NN-RATE/ (each step's run\n"
    "                       folder) and NN-RATE.log (default out/capacity-YYYYMMDDTHHMMSSZ)\n"
    "  --dashboard ADDR:PORT (flood run's, passed to every step) each step's run serves the\n"
    "                       live page there in turn (a fixed port); an open page follows\n"
    "                       from step to step, starting over with each one's second 0\n"
    "  -h, --help           this help\n"
    "\n"
    "Prints a line a step and the verdict, e.g. 'sustains 212/s (p99 180 ms, errors 0.0%,\n"
    "Follow-to-Accept p99 1.2 s); at 250/s Follow-to-Accept p99 9.8 s breaks the 5 s limit'.\n"
    "Exit codes: 0 a verdict, 1 a step could not run (see its log), 2 usage.\n";

enum {
    CAP_OPT_START = 1,
    CAP_OPT_MAX_RATE,
    CAP_OPT_FACTOR,
    CAP_OPT_REFINE,
    CAP_OPT_HOLD,
    CAP_OPT_TAIL,
    CAP_OPT_MARGIN,
    CAP_OPT_COOLDOWN,
    CAP_OPT_MAX_P99,
    CAP_OPT_MAX_ERRORS,
    CAP_OPT_MAX_F2A,
    CAP_OPT_MAX_QUEUE,
    CAP_OPT_STATS_URL,
    CAP_OPT_QUEUE_PATH,
    CAP_OPT_PROBE_CMD,
    CAP_OPT_DRAIN_BELOW,
    CAP_OPT_OUT,
    CAP_OPT_WARMUP,
    CAP_OPT_CONFIRM,
};

static const struct {
    const char *name;
    int id;
} cap_own[] = {
    {"start", CAP_OPT_START},
    {"max-rate", CAP_OPT_MAX_RATE},
    {"factor", CAP_OPT_FACTOR},
    {"refine", CAP_OPT_REFINE},
    {"hold", CAP_OPT_HOLD},
    {"tail", CAP_OPT_TAIL},
    {"repeat-margin", CAP_OPT_MARGIN},
    {"cooldown", CAP_OPT_COOLDOWN},
    {"max-p99", CAP_OPT_MAX_P99},
    {"max-errors", CAP_OPT_MAX_ERRORS},
    {"max-f2a", CAP_OPT_MAX_F2A},
    {"max-queue-growth", CAP_OPT_MAX_QUEUE},
    {"stats-url", CAP_OPT_STATS_URL},
    {"queue-path", CAP_OPT_QUEUE_PATH},
    {"probe-cmd", CAP_OPT_PROBE_CMD},
    {"drain-below", CAP_OPT_DRAIN_BELOW},
    {"out", CAP_OPT_OUT},
    {"warmup", CAP_OPT_WARMUP},
    {"confirm", CAP_OPT_CONFIRM},
};

/* A number >= min (with an optional % making it a share). */
static int number(const char *s, int share, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < min)
        return -1;
    if (share && *end == '%')
        v /= 100, end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static int cap_opt(struct cap_opts *o, int id, const char *arg, struct flood_err *e)
{
    double d;
    int bad = 0;
    switch (id) {
    case CAP_OPT_START:
        bad = number(arg, 0, 0.001, &o->start);
        break;
    case CAP_OPT_MAX_RATE:
        bad = number(arg, 0, 0.001, &o->max_rate);
        break;
    case CAP_OPT_FACTOR:
        bad = number(arg, 0, 1.01, &o->factor);
        break;
    case CAP_OPT_REFINE:
        bad = number(arg, 0, 0, &d) || d > 20;
        o->refine = (int)d;
        break;
    case CAP_OPT_TAIL:
        bad = number(arg, 1, 0.01, &o->lim.tail) || o->lim.tail > 1;
        break;
    case CAP_OPT_MARGIN:
        bad = number(arg, 1, 0, &o->margin);
        break;
    case CAP_OPT_MAX_ERRORS:
        bad = number(arg, 1, 0, &o->lim.errors);
        break;
    case CAP_OPT_MAX_QUEUE:
        bad = number(arg, 1, 0, &o->lim.queue_share);
        break;
    case CAP_OPT_DRAIN_BELOW:
        bad = number(arg, 0, 0, &o->drain_below);
        break;
    case CAP_OPT_CONFIRM:
        bad = strcmp(arg, "yes") && strcmp(arg, "no");
        o->confirm = !strcmp(arg, "yes");
        break;
    case CAP_OPT_WARMUP:
        if (sched_parse_duration(arg, &o->warmup_s, e))
            return -1;
        break;
    case CAP_OPT_HOLD:
    case CAP_OPT_COOLDOWN:
    case CAP_OPT_MAX_P99:
    case CAP_OPT_MAX_F2A:
        if (sched_parse_duration(arg, &d, e))
            return -1;
        if (id == CAP_OPT_HOLD)
            bad = (o->hold_s = d) < 2;
        else if (id == CAP_OPT_COOLDOWN)
            o->cooldown_s = d;
        else if (id == CAP_OPT_MAX_P99)
            o->lim.latency_ms = d * 1000;
        else
            o->lim.f2a_ms = d * 1000;
        break;
    case CAP_OPT_STATS_URL:
        o->stats_url = arg;
        bad = strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8);
        break;
    case CAP_OPT_QUEUE_PATH:
        o->queue_path = arg;
        break;
    case CAP_OPT_PROBE_CMD:
        o->probe_cmd = arg;
        break;
    case CAP_OPT_OUT:
        o->out = arg;
        break;
    }
    if (bad)
        flood_err_set(e, FLOOD_EINVAL, "bad value '%s'%s", arg,
                      id == CAP_OPT_HOLD ? " (at least 2 s)" : "");
    return bad ? -1 : 0;
}

/* Split argv: capacity's own options are applied, everything else goes to every step's
 * flood run. 0, 1 after --help, 2 on a usage error (printed). */
static int cap_parse(int argc, char **argv, struct cap_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(cap_help, stdout);
            return 1;
        }
        size_t k, n = 0;
        if (!strncmp(a, "--", 2))
            for (k = 0; k < sizeof(cap_own) / sizeof(cap_own[0]); k++) {
                n = strlen(cap_own[k].name);
                if (!strncmp(a + 2, cap_own[k].name, n) && (!a[2 + n] || a[2 + n] == '='))
                    break;
            }
        else
            k = sizeof(cap_own) / sizeof(cap_own[0]);
        if (k < sizeof(cap_own) / sizeof(cap_own[0])) {
            const char *v = a[2 + n] == '=' ? a + 3 + n : (i + 1 < argc ? argv[++i] : NULL);
            struct flood_err e = {0};
            if (!v || cap_opt(o, cap_own[k].id, v, &e)) {
                fprintf(stderr, "flood: capacity: --%s: %s\n", cap_own[k].name,
                        v ? e.msg : "needs a value");
                return 2;
            }
            continue;
        }
        static const char *const owned[] = {"--rate", "--duration", "--stages", "--accept-wait"};
        for (size_t j = 0; j < sizeof(owned) / sizeof(owned[0]); j++)
            if (!strncmp(a, owned[j], strlen(owned[j])) &&
                (!a[strlen(owned[j])] || a[strlen(owned[j])] == '=')) {
                fprintf(stderr,
                        "flood: capacity: %s is set by each step (--start, --hold, "
                        "--cooldown)\n",
                        owned[j]);
                return 2;
            }
        if (o->n_pass >= CAP_ARGS_MAX) {
            fprintf(stderr, "flood: capacity: too many options\n");
            return 2;
        }
        o->pass[o->n_pass++] = argv[i];
    }
    if (o->stats_url && o->probe_cmd) {
        fprintf(stderr, "flood: capacity: give --stats-url or --probe-cmd, not both\n");
        return 2;
    }
    if (o->start > o->max_rate) {
        fprintf(stderr, "flood: capacity: --start is above --max-rate\n");
        return 2;
    }
    return 0;
}

/* Check the flood run options once, before any step: a typo is a usage error now, not a
 * failed first step. 0, or 2 with the error printed (as flood run prints it). *dashboard:
 * the steps' --dashboard address (borrowed from argv), or NULL: each step's run binds it
 * in turn, so its port must be fixed. */
static int check_pass(const struct cap_opts *o, const char **dashboard)
{
    char *args[CAP_ARGS_MAX + 8];
    int n = 0;
    args[n++] = "capacity";
    for (int i = 0; i < o->n_pass; i++)
        args[n++] = o->pass[i];
    args[n] = NULL;
    struct run_opts ro;
    struct crowd_opts co;
    run_opts_init(&ro);
    crowd_opts_defaults(&co);
    struct inbound_opts *io = inbound_opts_new();
    int rc = run_opts_parse(n, args, &ro, &co, io);
    if (rc == 0 && !ro.inbox && !ro.n_personas) {
        fprintf(stderr, "flood: capacity: no target: give --inbox URL or --persona\n");
        rc = 2;
    }
    *dashboard = rc == 0 ? ro.dashboard : NULL;
    const char *port = *dashboard ? strrchr(*dashboard, ':') : NULL;
    if (port && atoi(port + 1) == 0) {
        fprintf(stderr, "flood: capacity: --dashboard needs a fixed port, not 0 (each step's "
                        "run serves the page there in turn)\n");
        rc = 2;
    }
    run_opts_free(&ro);
    inbound_opts_free(io);
    return rc ? 2 : 0;
}

static double round3(double r)
{
    if (r <= 0)
        return r;
    double m = pow(10, floor(log10(r)) - 2);
    return round(r / m) * m;
}

int cmd_capacity(int argc, char **argv)
{
    struct cap_opts o = {
        .start = 10,
        .max_rate = 5000,
        .factor = 2,
        .hold_s = 20,
        .cooldown_s = 60,
        .margin = 0.10,
        .refine = 4,
        .queue_path = "queue.depth",
        .drain_below = -1,
        .lim = {
            .latency_ms = 1000, .errors = 0.01, .f2a_ms = 5000, .queue_share = 0.05, .tail = 0.5}};
    int rc = cap_parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    const char *dashboard = NULL;
    if (check_pass(&o, &dashboard))
        return 2;
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
    /* then bisect between the last good and the first bad */
    /* (not below a failure of flood's own: the target's limit is not between the two) */
    for (int i = 0; i < o.refine && fail && !fail->flood_limited && !failed_to_run && !cap_stop &&
                    n < CAP_STEPS_MAX;
         i++) {
        double lo = best ? best->rate : 0, hi = fail->rate, mid = round3((lo + hi) / 2);
        if (mid <= lo || mid >= hi || (hi - lo) < 0.02 * hi)
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
    char verdict[512];
    cap_verdict(best, fail, &o.lim, verdict, sizeof(verdict));
    if (cap_stop)
        snprintf(verdict + strlen(verdict), sizeof(verdict) - strlen(verdict),
                 " (interrupted: the search stopped early)");
    json_t *cj = cap_json(steps, n, &o.lim, best, fail, verdict);
    json_t *pass = json_array();
    for (int i = 0; i < o.n_pass; i++)
        json_array_append_new(pass, json_string(o.pass[i]));
    json_object_set_new(cj, "run_options", pass);
    json_object_set_new(cj, "interrupted", json_boolean(cap_stop));
    char path[CAP_DIR_MAX + 32];
    snprintf(path, sizeof(path), "%s/capacity.json", o.out);
    int wrote = json_dump_file(cj, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0 &&
                cap_html_write(o.out, cj, &err) == 0;
    json_decref(cj);
    free(steps);
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

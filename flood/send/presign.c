/* flood/send/presign.c: --presign: the plan, the start's head, the wait before the first send
 * and the accounting (see presign.h). */
#include "flood/send/presign.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/clock.h"
#include "flood/core/grammar.h"
#include "sign/sign.h"

#define CALIBRATE_N      16       /* signatures timed for the estimate */
#define BUILD_COST_S     30e-6    /* building a rich body, roughly (tools/bench_build) */
#define ESTIMATE_MARGIN  3.0      /* a shared machine: other processes take the cores too */
#define ESTIMATE_FLOOR_S 1.0      /* the least head: the wait's end, the loops' preconnect */
#define WAIT_STEP_NS     10000000 /* the wait's poll */

int presign_parse(const char *s, double *window_s, struct flood_err *err)
{
    if (s && !strcmp(s, "all")) {
        *window_s = PRESIGN_ALL;
        return 0;
    }
    if (gram_duration("--presign", s, GRAM_NUL, GRAM_BARE_SECONDS, 1, SCHED_DURATION_MAX, window_s,
                      err)) {
        /* the grammar names the forms of a duration; add the keyword */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof(err->msg) - n, " (or all)");
        return -1;
    }
    return 0;
}

/* A size for a person: "512 MiB". */
static void size_text(uint64_t b, char *buf, size_t size)
{
    if (b >= (UINT64_C(1) << 30))
        snprintf(buf, size, "%.1f GiB", (double)b / (double)(UINT64_C(1) << 30));
    else if (b >= (UINT64_C(1) << 20))
        snprintf(buf, size, "%.1f MiB", (double)b / (double)(UINT64_C(1) << 20));
    else
        snprintf(buf, size, "%.0f KiB", (double)b / 1024.0);
}

int presign_plan(const struct sched *sc, double window_s, uint64_t bytes_max,
                 struct presign_plan *p, struct flood_err *err)
{
    memset(p, 0, sizeof(*p));
    double dur = sched_duration(sc);
    /* all: a second past the end, so that the last activity is inside */
    p->window_s = window_s == PRESIGN_ALL || window_s > dur ? dur + 1 : window_s;
    p->bytes_max = bytes_max;
    int64_t window_ns = (int64_t)(p->window_s * 1e9);
    struct sched c = *sc;
    sched_rewind(&c);
    for (int64_t t; (t = sched_next(&c)) >= 0 && t < window_ns;)
        p->n++;
    /* the ring holds a window from any instant: the first, or the peak rate's */
    double steady = sched_peak_rate(sc) * p->window_s;
    double most = (double)p->n > steady ? (double)p->n : steady;
    p->ring = (size_t)(most * 1.1) + 256;
    if (bytes_max && (double)p->n * PRESIGN_REQ_FLOOR > (double)bytes_max) {
        char have[32], need[32];
        size_text(bytes_max, have, sizeof(have));
        size_text(p->n * PRESIGN_REQ_FLOOR, need, sizeof(need));
        flood_err_set(err, FLOOD_ELIMIT,
                      "--presign: the first %.0f s of the schedule are %" PRIu64
                      " requests, at least %s signed (%d bytes each at the least), over "
                      "--presign-memory %s: give a shorter --presign (the rest is signed "
                      "during the run) or a larger --presign-memory",
                      p->window_s, p->n, need, PRESIGN_REQ_FLOOR, have);
        return -1;
    }
    return 0;
}

double presign_estimate_s(struct crowd *crowd, int dialect, uint64_t n, int threads)
{
    double per = BUILD_COST_S;
    const struct sign_key *k = crowd_key(crowd, 1, 1);
    if (dialect != SIGNER_NONE && k) {
        static char body[2048];
        memset(body, 'x', sizeof(body));
        struct sign_params p = {.dialect = (enum sign_dialect)dialect,
                                .key = k,
                                .key_id = "https://flood.test/users/a#main-key",
                                .now = time(NULL)};
        struct sign_header hdr = {"Content-Type", "application/activity+json"};
        struct sign_msg msg = {.method = "POST",
                               .scheme = "https",
                               .authority = "target.test",
                               .path = "/inbox",
                               .headers = &hdr,
                               .n_headers = 1,
                               .body = body,
                               .body_len = sizeof(body)};
        int64_t t0 = clock_mono_ns();
        int done = 0;
        for (; done < CALIBRATE_N; done++) {
            struct sign_out out = {0};
            struct flood_err e;
            if (sign_request(&p, &msg, &out, &e))
                break;
            sign_out_free(&out);
        }
        if (done)
            per += (double)(clock_mono_ns() - t0) / 1e9 / done;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int eff = threads < 1 ? 1 : threads;
    if (cores > 0 && eff > cores)
        eff = (int)cores;
    double est = (double)n * per / eff * ESTIMATE_MARGIN;
    return est + ESTIMATE_FLOOR_S;
}

int presign_wait(struct signer *s, int64_t deadline_mono_ns, const sigset_t *sigs,
                 struct presign_result *res, int *sig, FILE *err_out, struct flood_err *err)
{
    int64_t t0 = clock_mono_ns();
    struct signer_counts c = {0};
    int64_t said = t0;
    for (;;) {
        if (signer_failed(s, err))
            return -1;
        signer_counts(s, &c);
        res->before_start = c.signed_n;
        res->bytes_peak = c.bytes_peak;
        res->took_s = (double)(clock_mono_ns() - t0) / 1e9;
        if (c.window_done) {
            res->complete = 1;
            return 0;
        }
        if (res->plan.bytes_max && c.bytes_held >= res->plan.bytes_max) {
            char have[32];
            size_text(res->plan.bytes_max, have, sizeof(have));
            flood_err_set(err, FLOOD_ELIMIT,
                          "--presign: %" PRIu64 " of the first %.0f s's %" PRIu64
                          " requests signed already hold --presign-memory %s (%.0f bytes a "
                          "request): give a shorter --presign (the rest is signed during the "
                          "run) or a larger --presign-memory; nothing was sent",
                          c.signed_n, res->plan.window_s, res->plan.n, have,
                          c.signed_n ? (double)c.bytes_held / (double)c.signed_n : 0.0);
            return -1;
        }
        int64_t now = clock_mono_ns();
        if (now >= deadline_mono_ns)
            return 0; /* the start: what is left is signed during the run */
        if (err_out && now - said >= 5000000000LL) {
            said = now;
            fprintf(err_out, "flood: run: presign: %" PRIu64 " of %" PRIu64 " signed\n", c.signed_n,
                    res->plan.n);
        }
        int64_t step =
            deadline_mono_ns - now < WAIT_STEP_NS ? deadline_mono_ns - now : WAIT_STEP_NS;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)step};
        int got = sigtimedwait(sigs, NULL, &ts);
        if (got > 0) {
            res->interrupted = 1;
            *sig = got;
            return 1;
        }
    }
}

void presign_finish(struct signer *s, struct presign_result *res)
{
    struct signer_counts c;
    signer_counts(s, &c);
    res->during_run = c.signed_n > res->before_start ? c.signed_n - res->before_start : 0;
    res->not_sent = c.left;
    if (res->interrupted) { /* nothing was sent: every one was signed before a first send */
        res->before_start += res->during_run;
        res->during_run = 0;
    }
    if (c.bytes_peak > res->bytes_peak)
        res->bytes_peak = c.bytes_peak;
}

json_t *presign_json(const struct presign_result *res)
{
    json_t *o = json_object();
    json_object_set_new(o, "window_s", json_real(res->plan.window_s));
    json_object_set_new(o, "window_requests", json_integer((json_int_t)res->plan.n));
    json_object_set_new(o, "memory_max", json_integer((json_int_t)res->plan.bytes_max));
    json_object_set_new(o, "memory_peak", json_integer((json_int_t)res->bytes_peak));
    json_object_set_new(o, "head_s", json_real(res->head_s));
    json_object_set_new(o, "presign_s", json_real(res->took_s));
    json_object_set_new(o, "complete", json_boolean(res->complete));
    /* every request signed is taken (sent or shed) or left: signed = taken + not_sent */
    json_object_set_new(o, "presigned", json_integer((json_int_t)res->before_start));
    json_object_set_new(o, "signed_late", json_integer((json_int_t)res->during_run));
    json_object_set_new(o, "not_sent", json_integer((json_int_t)res->not_sent));
    uint64_t all = res->before_start + res->during_run;
    json_object_set_new(o, "taken",
                        json_integer((json_int_t)(all > res->not_sent ? all - res->not_sent : 0)));
    json_object_set_new(o, "interrupted", json_boolean(res->interrupted));
    return o;
}

void presign_print(FILE *f, const struct presign_result *res)
{
    char peak[32];
    size_text(res->bytes_peak, peak, sizeof(peak));
    fprintf(f,
            "presign: %" PRIu64 " requests signed before the first send in %.1f s (the first "
            "%.0f s of the schedule%s, %s held at most), %" PRIu64 " signed late (during the "
            "run), %" PRIu64 " signed and not sent%s\n",
            res->before_start, res->took_s, res->plan.window_s,
            res->complete ? "" : ", not all of it by the start", peak, res->during_run,
            res->not_sent, res->interrupted ? " (interrupted while presigning)" : "");
}

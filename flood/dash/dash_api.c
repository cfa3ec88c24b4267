/* flood/dash/dash_api.c: the dashboard's JSON API (see dash.h). Values are checked here, so
 * a bad one gets a 400 naming it; a steering command then goes to the sender's loop and the
 * answer waits (at most two seconds) until the loop applied it. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "flood/core/clock.h"
#include "flood/dash/dash_internal.h"
#include "flood/report/results.h"
#include "flood/send/sched.h"

#define APPLY_WAIT_MS 2000

static char *dumps(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    char *body = flood_xasprintf("%s\n", s ? s : "{}");
    free(s);
    return body;
}

static enum MHD_Result state(struct dash *d, struct MHD_Connection *c)
{
    struct steer_state st = {0};
    if (d->steer)
        steer_state(d->steer, &st);
    pthread_mutex_lock(&d->lock);
    json_t *o = json_pack("{s:b, s:b, s:b, s:f, s:f, s:I, s:I, s:s?}", "sending", st.sending,
                          "paused", st.paused, "finished", d->finished, "rate", st.rate, "t_s",
                          st.t_s, "seconds", (json_int_t)d->n_rows, "rows_lost",
                          (json_int_t)d->rows_lost, "report", d->report_path);
    struct tq_sampler *tq = d->tqueue;
    pthread_mutex_unlock(&d->lock);
    if (tq) /* each source's gauges with their roles, and its failures */
        json_object_set_new(o, "target_queue", tq_sampler_json(tq));
    json_object_set_new(o, "steerable", json_boolean(d->steer != NULL));
    json_object_set_new(o, "crowd", json_boolean(d->crowd));
    json_object_set_new(o, "instance", json_string(d->instance));
    json_object_set_new(o, "steering", results_steering_json(d->log));
    json_t *fa = json_array();
    if (d->in) {
        static char specs[64][FAULT_SPEC_MAX]; /* under the lock below: one reader at a time */
        static pthread_mutex_t specs_lock = PTHREAD_MUTEX_INITIALIZER;
        int on[64];
        pthread_mutex_lock(&specs_lock);
        size_t n = inbound_faults(d->in, specs, on, 64);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(fa, json_pack("{s:s, s:b}", "spec", specs[i], "on", on[i]));
        pthread_mutex_unlock(&specs_lock);
    }
    json_object_set_new(o, "faults", fa);
    return dash_answer(c, MHD_HTTP_OK, dumps(o), "application/json");
}

/* Queue cmd for the loop and wait until it is applied. */
static enum MHD_Result steer(struct dash *d, struct MHD_Connection *c, struct steer_change *cmd)
{
    if (!d->steer)
        return dash_error(c, MHD_HTTP_CONFLICT, "dashboard: nothing to steer (no sender)");
    uint64_t ticket = steer_post(d->steer, cmd);
    if (!ticket)
        return dash_error(c, MHD_HTTP_CONFLICT, "dashboard: the run is not sending");
    if (!steer_wait(d->steer, ticket, APPLY_WAIT_MS))
        return dash_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "dashboard: the sender did not answer");
    pthread_cond_broadcast(&d->cond); /* streams send the change */
    struct steer_state st;
    steer_state(d->steer, &st);
    return dash_answer(
        c, MHD_HTTP_OK,
        dumps(json_pack("{s:b, s:s, s:f, s:b, s:b}", "ok", 1, "kind", steer_kind_name(cmd->kind),
                        "rate", st.rate, "paused", st.paused, "sending", st.sending)),
        "application/json");
}

/* A number member: 0 and *out, 1 when absent (*out untouched), -1 when not a number. */
static int number(const json_t *o, const char *k, double *out)
{
    const json_t *v = json_object_get(o, k);
    if (!v)
        return 1;
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

static enum MHD_Result rate(struct dash *d, struct MHD_Connection *c, const json_t *o)
{
    struct steer_change cmd = {.kind = STEER_RATE};
    char msg[160];
    if (number(o, "rate", &cmd.rate) != 0 || !isfinite(cmd.rate) || cmd.rate < 0 ||
        cmd.rate > SCHED_RATE_MAX) {
        snprintf(msg, sizeof(msg), "rate: want \"rate\": a number 0..%.0f (per second)",
                 SCHED_RATE_MAX);
        return dash_error(c, MHD_HTTP_BAD_REQUEST, msg);
    }
    if (number(o, "ramp_s", &cmd.ramp_s) < 0 || !isfinite(cmd.ramp_s) || cmd.ramp_s < 0 ||
        cmd.ramp_s > SCHED_DURATION_MAX) {
        snprintf(msg, sizeof(msg), "rate: \"ramp_s\" must be a number 0..%.0f (seconds)",
                 SCHED_DURATION_MAX);
        return dash_error(c, MHD_HTTP_BAD_REQUEST, msg);
    }
    return steer(d, c, &cmd);
}

static enum MHD_Result fault(struct dash *d, struct MHD_Connection *c, const json_t *o)
{
    if (!d->in)
        return dash_error(c, MHD_HTTP_CONFLICT, "fault: no crowd to switch faults on");
    const char *inst = json_string_value(json_object_get(o, "instance"));
    const char *spec = json_string_value(json_object_get(o, "spec"));
    const json_t *on = json_object_get(o, "on");
    if (!inst || !*inst || !spec || !*spec || !json_is_boolean(on))
        return dash_error(c, MHD_HTTP_BAD_REQUEST,
                          "fault: want {\"instance\": \"flood3\", \"spec\": \"delay=2s\", "
                          "\"on\": true}");
    struct steer_change cmd = {.kind = STEER_FAULT, .on = json_is_true(on)};
    snprintf(cmd.text, sizeof(cmd.text), "%s:%s", inst, spec);
    struct flood_err err;
    if (inbound_fault_switch(d->in, cmd.text, cmd.on, &err))
        return dash_error(c, MHD_HTTP_BAD_REQUEST, err.msg);
    pthread_mutex_lock(&d->lock);
    int64_t mono0 = d->mono0;
    pthread_mutex_unlock(&d->lock);
    int64_t now = clock_mono_ns();
    cmd.t_s = mono0 && now > mono0 ? (double)(now - mono0) / 1e9 : 0;
    steer_record(d->log, &cmd);
    pthread_cond_broadcast(&d->cond);
    return dash_answer(
        c, MHD_HTTP_OK,
        dumps(json_pack("{s:b, s:s, s:b}", "ok", 1, "fault", cmd.text, "on", cmd.on)),
        "application/json");
}

enum MHD_Result dash_api(struct dash *d, struct MHD_Connection *c, const char *method,
                         const char *url, const char *body, size_t len)
{
    if (!strcmp(url, "/api/state")) {
        if (strcmp(method, "GET") && strcmp(method, "HEAD"))
            return dash_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "state: GET only");
        return state(d, c);
    }
    static const struct {
        const char *url;
        enum steer_kind kind;
    } plain[] = {
        {"/api/pause", STEER_PAUSE}, {"/api/resume", STEER_RESUME}, {"/api/stop", STEER_STOP}};
    int known = !strcmp(url, "/api/rate") || !strcmp(url, "/api/fault");
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        known |= !strcmp(url, plain[i].url);
    if (!known)
        return dash_error(c, MHD_HTTP_NOT_FOUND,
                          "api: unknown (state, rate, pause, resume, stop, fault)");
    if (strcmp(method, "POST"))
        return dash_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "api: POST only");
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        if (!strcmp(url, plain[i].url)) {
            struct steer_change cmd = {.kind = plain[i].kind};
            return steer(d, c, &cmd);
        }
    json_error_t je;
    json_t *o = json_loadb(body, len, 0, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return dash_error(c, MHD_HTTP_BAD_REQUEST, "api: the body must be a JSON object");
    }
    enum MHD_Result r = !strcmp(url, "/api/rate") ? rate(d, c, o) : fault(d, c, o);
    json_decref(o);
    return r;
}

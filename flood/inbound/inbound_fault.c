/* flood/inbound/inbound_fault.c: the crowd's faults at its inboxes (see inbound.h): the
 * --fault rules and those switched at run time, the instance classes of --population, the
 * attempts record of the retry curve, and the inboxes closed once a run reads its results. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "flood/core/clock.h"
#include "flood/crowd/fault.h"
#include "flood/inbound/inbound.h"
#include "flood/inbound/inbound_internal.h"
#include "flood/measure/attempts.h"
#include "flood/measure/fanout.h"

/* ---- faults -------------------------------------------------------------------------- */

/* fault_decide over the rules switched on, combined as it combines them: delays add, the
 * first status wins, reset and hang are kept. */
static int decide_switched(struct inbound *in, size_t n, int inst, unsigned scope,
                           struct fault_effect *eff)
{
    int fired = 0;
    long now_ms = (long)((clock_mono_us() - in->t0_us) / 1000);
    memset(eff, 0, sizeof(*eff));
    for (size_t i = 0; i < n; i++) {
        struct fault_effect one;
        if (!atomic_load_explicit(&in->fault_on[i], memory_order_relaxed) ||
            !fault_decide(&in->faults[i], 1, inst, scope, now_ms, &one))
            continue;
        fired = 1;
        eff->delay_ms += one.delay_ms;
        if (one.status && !eff->status) {
            eff->status = one.status;
            eff->retry_after = one.retry_after;
        }
        eff->reset |= one.reset;
        eff->hang |= one.hang;
    }
    int k = population_class(&in->pop, inst); /* the instance's class, a rule of its own */
    struct fault_effect one;
    if (k != POP_FAST && fault_decide(&in->pop.rule[k], 1, inst, scope, now_ms, &one)) {
        fired = 1;
        eff->delay_ms += one.delay_ms;
        eff->status = eff->status ? eff->status : one.status;
        eff->retry_after = eff->retry_after ? eff->retry_after : one.retry_after;
        eff->hang |= one.hang;
    }
    return fired;
}

int inbound_fault_switch(struct inbound *in, const char *spec, int on, struct flood_err *err)
{
    struct fault_rule r;
    if (fault_parse(spec, &r, err) || fault_rule_resolve(&r, &in->crowd->wf, err))
        return -1;
    pthread_mutex_lock(&in->lock);
    size_t n = atomic_load(&in->n_faults);
    int rc = 0;
    size_t i = 0;
    while (i < n && strcmp(in->faults[i].spec, r.spec))
        i++;
    if (i < n)
        atomic_store(&in->fault_on[i], (unsigned char)(on != 0));
    else if (!on) {
        flood_err_set(err, FLOOD_EINVAL, "fault: no rule '%s' to switch off", spec);
        rc = -1;
    } else if (n == in->n_cli_faults + INBOUND_FAULTS_ADDED) {
        flood_err_set(err, FLOOD_EINVAL, "fault: more than %d rules added", INBOUND_FAULTS_ADDED);
        rc = -1;
    } else {
        in->faults[n] = r;
        atomic_store(&in->fault_on[n], 1);
        atomic_store_explicit(&in->n_faults, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&in->lock);
    return rc;
}

size_t inbound_faults(struct inbound *in, char (*specs)[FAULT_SPEC_MAX], int *on, size_t max)
{
    size_t n = atomic_load_explicit(&in->n_faults, memory_order_acquire);
    size_t k = 0;
    for (; k < n && k < max; k++) {
        snprintf(specs[k], FAULT_SPEC_MAX, "%s", in->faults[k].spec);
        on[k] = atomic_load(&in->fault_on[k]);
    }
    return k;
}

/* 1 when a --fault rule covers the inbox POSTs of instance inst (delivery lag is split by
 * it: the target's deliveries to healthy instances against those to faulted ones). */
int inbound_inbox_faulted(struct inbound *in, int inst)
{
    size_t n = atomic_load_explicit(&in->n_faults, memory_order_acquire);
    if (population_class(&in->pop, inst) != POP_FAST)
        return 1;
    for (size_t i = 0; i < n && inst >= 1; i++)
        if (atomic_load_explicit(&in->fault_on[i], memory_order_relaxed) &&
            (in->faults[i].scope & FAULT_SCOPE_INBOX) && inst >= in->faults[i].first &&
            inst <= in->faults[i].last)
            return 1;
    return 0;
}

/* An inbox POST to a faulted instance into the attempts record: its delivery (host, path,
 * body digest), when, and what the crowd answered (eff NULL: passed to the inbox). 1, or 0
 * when the record is closed (the POST is then cut, never answered). */
static int record_attempt(struct inbound *in, const struct server_req *req, int inst,
                          const struct fault_effect *eff)
{
    const char *digest = server_req_header(req, "Digest");
    if (!digest)
        digest = server_req_header(req, "Content-Digest");
    struct attempt at = {
        .t_ms = (int64_t)((clock_mono_us() - in->t0_us) / 1000),
        .key = attempts_key(req->host, req->path, digest),
        .instance = inst,
        .status = !eff          ? ATTEMPT_PASSED
                  : eff->hang   ? ATTEMPT_HANG
                  : eff->reset  ? ATTEMPT_RESET
                  : eff->status ? eff->status
                                : ATTEMPT_PASSED, /* only delayed: then answered */
        .retry_after = eff && eff->status ? (int32_t)eff->retry_after : 0,
    };
    return attempts_add(in->attempts, &at);
}

void inbound_close_inboxes(struct inbound *in)
{
    atomic_store(&in->inboxes_closed, 1);
    attempts_close(in->attempts);
}

uint64_t inbound_refused_after_close(struct inbound *in)
{
    return atomic_load(&in->refused_after_close);
}

/* When the windowed inbox faults end (the latest until=), 0 when none does. */
int64_t inbound_faults_end_ms(struct inbound *in)
{
    size_t n = atomic_load_explicit(&in->n_faults, memory_order_acquire);
    int64_t end = 0;
    for (size_t i = 0; i < n; i++)
        if ((in->faults[i].scope & FAULT_SCOPE_INBOX) && in->faults[i].until_ms > end)
            end = in->faults[i].until_ms;
    return end;
}

void inbound_flight_hook(void *ctx, int instance, int delta)
{
    fanout_inflight(((struct inbound *)ctx)->fanout, instance, delta);
}

int inbound_fault_hook(void *ctx, const struct server_req *req, struct server_fault *fault)
{
    struct inbound *in = ctx;
    size_t n = atomic_load_explicit(&in->n_faults, memory_order_acquire);
    int closed = atomic_load(&in->inboxes_closed);
    if (!n && !in->pop.class_of && !closed)
        return 0;
    int inst = req->route.instance;
    if (inst < 1 && req->host)
        inst = wf_instance_of_host(&in->crowd->wf, req->host);
    if (inst < 1)
        return 0;
    struct fault_effect eff;
    unsigned scope = fault_scope_of(req->method, req->route.kind, req->path);
    int fired = decide_switched(in, n, inst, scope, &eff);
    /* once the run's results are read, the crowd takes no more deliveries: one the attempts
     * record (closed under its lock) did not take is cut, so every attempt the target saw
     * answered is in the record */
    int cut = scope != FAULT_SCOPE_INBOX ? 0
              : inbound_inbox_faulted(in, inst)
                  ? !record_attempt(in, req, inst, fired ? &eff : NULL)
                  : atomic_load(&in->inboxes_closed);
    memset(fault, 0, sizeof(*fault));
    if (cut) {
        fault->reset = 1; /* counted */
        atomic_fetch_add(&in->refused_after_close, 1);
        return 1;
    }
    if (!fired)
        return 0;
    fault->delay_ms = eff.delay_ms;
    fault->status = eff.status;
    fault->retry_after = eff.retry_after;
    fault->reset = eff.reset;
    fault->hang = eff.hang;
    if (eff.delay_ms > 0)
        atomic_fetch_add(&in->faulted_delay, 1);
    if (eff.status)
        atomic_fetch_add(&in->faulted_status, 1);
    if (eff.reset)
        atomic_fetch_add(&in->faulted_reset, 1);
    if (eff.hang)
        atomic_fetch_add(&in->faulted_hang, 1);
    return 1;
}

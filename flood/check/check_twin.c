/* flood/check/check_twin.c: a refusal step decided without an API token. Many servers answer
 * an inbox POST 202 at once and verify later (Mastodon queues it to Sidekiq's ingress,
 * Misskey to its inbox queue, snac checks only in its log: INTEROP.md, Backpressure), so
 * the answer says nothing, and without a token the effect of a Create cannot be looked up.
 * A Follow makes processing observable with no token at all: the target answers it with
 * an Accept delivered to the crowd. So the bad request is a Follow, and beside it goes its
 * signed twin, a good Follow from another actor: the twin's Accept proves the target was
 * processing within the wait; the bad Follow's Accept, or its absence, then decides. Both
 * are undone afterwards (signed Undo(Follow)), so the persona is left as it was. */
#include <stdio.h>
#include <stdlib.h>

#include "flood/check/check_internal.h"
#include "flood/core/clock.h"

#define TWIN_WAIT_MIN_MS 10000 /* at least this long for the twin's Accept */
/* After the twin's Accept, the bad Follow's is waited for TWIN_AFTER_TIMES the twin's
 * Follow-to-Accept, at least TWIN_AFTER_MIN_MS (within the whole wait): a target's workers
 * and deliveries do not keep the order of two Follows sent together, and a bad one
 * processed a little later must not pass for dropped. */
#define TWIN_AFTER_MIN_MS 3000
#define TWIN_AFTER_TIMES  4

/* The twin's actor: from the highest actor numbers of the instance down, a fresh one for
 * each refusal step, never the bad request's own or the check crowd's special actors. */
static int twin_actor(struct check *c, int inst, int act)
{
    int actors = c->crowd->opts.actors;
    for (int tries = 0; tries < actors; tries++) {
        int a = actors - (c->twins_used++ % actors);
        if (a != act && (inst != 1 || (a != CHECK_ACTOR_ROTOR && a != CHECK_ACTOR_ED)))
            return a;
    }
    return act % actors + 1;
}

/* A Follow of the persona from (inst, act), served at its id: the text (free it) and its id. */
static char *follow_text(struct check *c, int inst, int act, uint64_t *seq, char id[WF_URL_MAX],
                         struct flood_err *e)
{
    struct wf_act_from from = {.instance = inst, .actor = act, .seq = c->seq_next++};
    struct wf_persona_ref p = check_pref(c);
    json_t *f = wf_act_follow(&c->crowd->wf, &from, &p, 1, e);
    char *text = f ? check_serve_json(c, f) : NULL;
    json_decref(f);
    *seq = from.seq;
    wf_activity_url(&c->crowd->wf, inst, act, from.seq, id);
    return text;
}

/* Undo the Follow seq of (inst, act), signed: best effort, the step's verdict is made. */
static void undo(struct check *c, int inst, int act, uint64_t seq)
{
    struct wf_act_from from = {.instance = inst, .actor = act, .seq = c->seq_next++};
    struct wf_persona_ref p = check_pref(c);
    struct flood_err e = {0};
    json_t *u = wf_act_undo_follow(&c->crowd->wf, &from, seq, &p, &e);
    char *text = u ? check_serve_json(c, u) : NULL;
    json_decref(u);
    if (text) {
        struct check_result ignored = {0};
        check_send_expect_2xx(c, &ignored, inst, act, text, "Undo(Follow)");
        free(ignored.expected);
        free(ignored.got);
        free(ignored.detail);
    }
    free(text);
}

/* What the bad Follow's answer was, and what the two Accepts then said. */
static void decide(struct check *c, struct check_result *r, const char *got, const char *bad_id,
                   const char *twin_id, uint64_t sent_us)
{
    static const char exp[] =
        "refused (400, 401 or 403), or no Accept while its signed twin got one";
    long wait_ms = c->o.settle_ms > TWIN_WAIT_MIN_MS ? c->o.settle_ms : TWIN_WAIT_MIN_MS;
    uint64_t deadline = sent_us + (uint64_t)wait_ms * 1000, twin_at = 0, bad_at = 0;
    int twin = check_wait_answer(c, twin_id, deadline, &twin_at);
    if (twin != 1) {
        check_set(r, CHECK_DEFERRED, exp, got,
                  "answered 2xx; its signed twin got %s within %ld ms either, so the target did "
                  "not show it was processing",
                  twin == 2 ? "a Reject, not an Accept," : "no Accept", wait_ms);
        return;
    }
    uint64_t f2a_us = twin_at - sent_us, after = f2a_us * TWIN_AFTER_TIMES;
    if (after < TWIN_AFTER_MIN_MS * 1000ULL)
        after = TWIN_AFTER_MIN_MS * 1000ULL;
    uint64_t bad_deadline = twin_at + after < deadline ? twin_at + after : deadline;
    int bad = check_wait_answer(c, bad_id, bad_deadline, &bad_at);
    if (bad == 1) {
        char *g = flood_xasprintf("%s, then processed: the target sent an Accept for it", got);
        check_set(r, CHECK_FAIL, exp, g, "its signed twin was accepted in %.0f ms too",
                  (double)f2a_us / 1000);
        free(g);
    } else {
        check_set(r, CHECK_PASS, NULL, NULL,
                  "answered %s, then dropped: %s, while its signed twin was accepted in %.0f ms",
                  got, bad == 2 ? "a Reject" : "no Accept", (double)f2a_us / 1000);
    }
}

void check_refusal_by_twin(struct check *c, struct check_result *r, int inst, int act, int kinst,
                           enum check_variant variant)
{
    struct flood_err e = {0};
    char bad_id[WF_URL_MAX], twin_id[WF_URL_MAX], kid[WF_URL_MAX];
    uint64_t bad_seq, twin_seq;
    int tact = twin_actor(c, inst, act);
    char *bad = follow_text(c, inst, act, &bad_seq, bad_id, &e);
    char *twin = bad ? follow_text(c, inst, tact, &twin_seq, twin_id, &e) : NULL;
    r->decided_by = "follow-twin";
    if (!twin) {
        check_set(r, CHECK_FAIL, "a Follow and its twin", e.msg, NULL);
        free(bad);
        return;
    }
    crowd_key_id(c->crowd, kinst, act, kid);
    struct check_http h = {0}, th = {0};
    uint64_t sent_us = clock_mono_us();
    if (check_net_post(c, c->persona.inbox, bad, crowd_key(c->crowd, kinst, act), kid, SIGN_CAVAGE,
                       variant, &h, &e) < 0) {
        check_set(r, CHECK_FAIL, "refused (400, 401 or 403)", e.msg, NULL);
        free(bad);
        free(twin);
        return;
    }
    char *got = check_answer_text(&h);
    if (h.status == 400 || h.status == 401 || h.status == 403) {
        r->decided_by = "answer";
        check_set(r, CHECK_PASS, NULL, NULL, "refused: %s", got);
    } else if (!check_is_2xx(h.status)) {
        r->decided_by = "answer";
        check_set(r, CHECK_FAIL, "refused (400, 401 or 403)", got, NULL);
    } else {
        char tkid[WF_URL_MAX];
        crowd_key_id(c->crowd, inst, tact, tkid);
        int ok = check_net_post(c, c->persona.inbox, twin, crowd_key(c->crowd, inst, tact), tkid,
                                SIGN_CAVAGE, CV_GOOD, &th, &e) == 0 &&
                 check_is_2xx(th.status);
        if (!ok)
            check_set(r, CHECK_DEFERRED, "refused (400, 401 or 403)", got,
                      "answered 2xx; its signed twin was not taken (%s), so nothing decides",
                      e.msg[0] ? e.msg : "not 2xx");
        else
            decide(c, r, got, bad_id, twin_id, sent_us);
        if (ok)
            undo(c, inst, tact, twin_seq);
        if (r->outcome == CHECK_FAIL)
            undo(c, inst, act, bad_seq);
    }
    free(got);
    check_http_free(&h);
    check_http_free(&th);
    free(bad);
    free(twin);
}

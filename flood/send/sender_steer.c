/* flood/send/sender_steer.c: steering applied on the event loop's thread (see steer.h): the
 * sender's schedule and the signers' copy change together, at the same time t, and the
 * next send is re-timed from the new curve. */
#include <signal.h>
#include <stdio.h>

#include "flood/send/sender_internal.h"
#include "flood/send/steer.h"

static void apply(struct sender_loop *s, struct steer_change *c)
{
    struct flood_err e;
    int64_t now = sender_rel_now(s);
    c->t_s = (double)now / 1e9;
    switch (c->kind) {
    case STEER_RATE:
        if (sched_steer_rate(&s->sched, c->t_s, c->rate, c->ramp_s, &e))
            return; /* the dashboard checks values first */
        signer_steer(s->signer, SIGNER_STEER_RATE, c->t_s, c->rate, c->ramp_s);
        break;
    case STEER_PAUSE:
        if (sched_paused(&s->sched))
            return;
        sched_pause(&s->sched, c->t_s);
        signer_steer(s->signer, SIGNER_STEER_PAUSE, c->t_s, 0, 0);
        break;
    case STEER_RESUME:
        if (!sched_paused(&s->sched))
            return;
        sched_resume(&s->sched, c->t_s);
        signer_steer(s->signer, SIGNER_STEER_RESUME, c->t_s, 0, 0);
        c->rate = s->sched.pause_rate;
        break;
    case STEER_STOP:
        steer_record(s->o.steer, c);
        s->interrupt(s, SIGINT);
        return;
    case STEER_FAULT:
        break; /* switched by the caller; recorded there */
    }
    if (c->kind == STEER_FAULT)
        return;
    steer_record(s->o.steer, c);
    if (!sender_sending(s))
        return;
    /* the next send's time under the new curve (or none while paused) */
    s->next_t = sender_has_next(s) ? sched_steer_retime(&s->sched) : sched_next(&s->sched);
    if (s->state == SENDER_BEHIND)
        return; /* the signer's wake dispatches it */
    sender_dispatch_at(s, sender_has_next(s) ? s->next_t : s->end_ns);
}

void sender_on_steer(evutil_socket_t fd, short kind, void *arg)
{
    (void)fd;
    (void)kind;
    struct sender_loop *s = arg;
    struct steer_change cmds[8];
    size_t n;
    uint64_t last;
    while ((n = steer_take(s->o.steer, cmds, 8, &last)) > 0) {
        for (size_t i = 0; i < n; i++)
            apply(s, &cmds[i]);
        sender_steer_state(s);
        steer_applied(s->o.steer, last);
    }
}

void sender_steer_state(struct sender_loop *s)
{
    double t = (double)sender_rel_now(s) / 1e9;
    struct steer_state st = {.sending = sender_sending(s),
                             .paused = sched_paused(&s->sched),
                             .rate = sched_paused(&s->sched) ? 0 : sched_rate_at(&s->sched, t),
                             .t_s = t};
    steer_publish(s->o.steer, &st);
}

void sender_steer_close(struct sender_loop *s)
{
    struct steer_state st = {.finished = 1, .t_s = (double)sender_rel_now(s) / 1e9};
    steer_publish(s->o.steer, &st);
    if (!s->sched.steered)
        return;
    char buf[4096];
    double from = 0;
    if (sched_stages_text(&s->sched, buf, sizeof(buf), &from) < 0)
        buf[0] = 0;
    steer_set_stages(s->o.steer, buf, from);
}

/* flood/send/steer.c: the steering queue and log (see steer.h). */
#include "flood/send/steer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "flood/core/clock.h"
#include "sign/err.h"

struct steer {
    pthread_mutex_t lock;
    pthread_cond_t applied_cond;
    int fd;
    struct steer_change q[STEER_QUEUE_MAX];
    size_t q_head, q_len;
    uint64_t next_ticket, applied;
    struct steer_change *log;
    size_t n_log;
    uint64_t n_changes;
    struct steer_state state;
    char stages[4096];
    double stages_from;
};

const char *steer_kind_name(enum steer_kind k)
{
    static const char *const names[] = {"rate", "pause", "resume", "stop", "fault"};
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

struct steer *steer_new(void)
{
    struct steer *st = flood_xcalloc(1, sizeof(*st));
    pthread_mutex_init(&st->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->applied_cond, &ca);
    pthread_condattr_destroy(&ca);
    st->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (st->fd < 0) {
        fprintf(stderr, "flood: steer: eventfd: %s\n", strerror(errno));
        abort();
    }
    st->next_ticket = 1;
    return st;
}

void steer_free(struct steer *st)
{
    if (!st)
        return;
    close(st->fd);
    pthread_mutex_destroy(&st->lock);
    pthread_cond_destroy(&st->applied_cond);
    free(st->log);
    free(st);
}

uint64_t steer_post(struct steer *st, const struct steer_change *cmd)
{
    uint64_t ticket = 0;
    pthread_mutex_lock(&st->lock);
    if (st->state.sending && st->q_len < STEER_QUEUE_MAX) {
        st->q[(st->q_head + st->q_len++) % STEER_QUEUE_MAX] = *cmd;
        ticket = st->next_ticket++;
    }
    pthread_mutex_unlock(&st->lock);
    if (ticket) {
        uint64_t one = 1;
        if (write(st->fd, &one, sizeof(one)) < 0) {
            /* the counter is full: the loop is woken anyway */
        }
    }
    return ticket;
}

int steer_wait(struct steer *st, uint64_t ticket, long timeout_ms)
{
    struct timespec ts = clock_mono_after(timeout_ms);
    pthread_mutex_lock(&st->lock);
    while (st->applied < ticket &&
           pthread_cond_timedwait(&st->applied_cond, &st->lock, &ts) != ETIMEDOUT)
        ;
    int done = st->applied >= ticket;
    pthread_mutex_unlock(&st->lock);
    return done;
}

int steer_fd(const struct steer *st)
{
    return st->fd;
}

size_t steer_take(struct steer *st, struct steer_change *out, size_t max, uint64_t *last)
{
    uint64_t v;
    if (read(st->fd, &v, sizeof(v)) < 0) {
        /* EAGAIN: nothing new since the last read */
    }
    pthread_mutex_lock(&st->lock);
    size_t n = 0;
    while (st->q_len && n < max) {
        out[n++] = st->q[st->q_head];
        st->q_head = (st->q_head + 1) % STEER_QUEUE_MAX;
        st->q_len--;
    }
    /* tickets are handed out in queue order: the last taken is the queue's total minus what
     * is left */
    *last = st->next_ticket - 1 - st->q_len;
    pthread_mutex_unlock(&st->lock);
    return n;
}

void steer_applied(struct steer *st, uint64_t last)
{
    pthread_mutex_lock(&st->lock);
    if (last > st->applied)
        st->applied = last;
    pthread_cond_broadcast(&st->applied_cond);
    pthread_mutex_unlock(&st->lock);
}

void steer_publish(struct steer *st, const struct steer_state *s)
{
    pthread_mutex_lock(&st->lock);
    st->state = *s;
    if (!s->sending) { /* nothing will apply what is still queued: release its waiters */
        st->q_len = 0;
        st->applied = st->next_ticket - 1;
        pthread_cond_broadcast(&st->applied_cond);
    }
    pthread_mutex_unlock(&st->lock);
}

void steer_state(struct steer *st, struct steer_state *out)
{
    pthread_mutex_lock(&st->lock);
    *out = st->state;
    pthread_mutex_unlock(&st->lock);
}

void steer_record(struct steer *st, const struct steer_change *c)
{
    pthread_mutex_lock(&st->lock);
    st->n_changes++;
    if (st->n_log < STEER_LOG_MAX) {
        st->log = flood_xrealloc(st->log, (st->n_log + 1) * sizeof(*st->log));
        st->log[st->n_log++] = *c;
    }
    pthread_mutex_unlock(&st->lock);
}

static int by_time(const void *a, const void *b)
{
    const struct steer_change *x = a, *y = b;
    return (x->t_s > y->t_s) - (x->t_s < y->t_s);
}

struct steer_change *steer_log(struct steer *st, size_t *n)
{
    pthread_mutex_lock(&st->lock);
    *n = st->n_log;
    struct steer_change *copy = NULL;
    if (st->n_log) {
        copy = flood_xmalloc(st->n_log * sizeof(*copy));
        memcpy(copy, st->log, st->n_log * sizeof(*copy));
    }
    pthread_mutex_unlock(&st->lock);
    if (copy) /* stable enough: changes are recorded in time order but for racing faults */
        qsort(copy, *n, sizeof(*copy), by_time);
    return copy;
}

uint64_t steer_count(struct steer *st)
{
    pthread_mutex_lock(&st->lock);
    uint64_t n = st->n_changes;
    pthread_mutex_unlock(&st->lock);
    return n;
}

void steer_set_stages(struct steer *st, const char *stages, double from_s)
{
    pthread_mutex_lock(&st->lock);
    snprintf(st->stages, sizeof(st->stages), "%s", stages ? stages : "");
    st->stages_from = from_s;
    pthread_mutex_unlock(&st->lock);
}

double steer_stages(struct steer *st, char *buf, size_t size)
{
    pthread_mutex_lock(&st->lock);
    snprintf(buf, size, "%s", st->stages);
    double f = st->stages_from;
    pthread_mutex_unlock(&st->lock);
    return f;
}

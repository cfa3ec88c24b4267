/* flood/core/memtrim.c: see memtrim.h. The thread waits on a condition variable with a
 * deadline, so memtrim_stop wakes it at once. */
#include "flood/core/memtrim.h"

#include "flood/core/clock.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct memtrim {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    long period_ms;
    int stop;
    unsigned long count;
};

static void *trim_loop(void *arg)
{
    struct memtrim *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        struct timespec ts = clock_mono_after(t->period_ms);
        int rc = 0;
        while (!t->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&t->cond, &t->lock, &ts);
        if (t->stop)
            break;
        pthread_mutex_unlock(&t->lock);
        malloc_trim(0);
        pthread_mutex_lock(&t->lock);
        t->count++;
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

struct memtrim *memtrim_start(long period_ms)
{
    if (period_ms <= 0)
        return NULL;
    struct memtrim *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->period_ms = period_ms;
    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&t->thread, NULL, trim_loop, t)) {
        pthread_cond_destroy(&t->cond);
        pthread_mutex_destroy(&t->lock);
        free(t);
        return NULL;
    }
    return t;
}

unsigned long memtrim_count(struct memtrim *t)
{
    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    unsigned long n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

void memtrim_stop(struct memtrim *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* tests/shims/uncork_stall.c: an LD_PRELOAD shim for flood's integration tests. It makes
 * gnutls_record_uncork report GNUTLS_E_AGAIN, as GnuTLS does when the socket has no room,
 * so the crowd server's wait for a full socket and its cut can be tested without filling
 * one (an answer of a few KB on an empty send queue is always taken whole).
 *
 * UNCORK_STALLS="MS,MS,..." : the n-th answer corked cannot leave for the n-th MS
 * milliseconds after it was corked (0: it leaves at once); answers past the list leave at
 * once. One answer at a time: a cork starts the next answer's stall.
 *
 * Built by the test that preloads it: cc -shared -fPIC -o uncork_stall.so uncork_stall.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *plan;    /* what is left of UNCORK_STALLS */
static int started;         /* plan read */
static gnutls_session_t in; /* the session of the answer corked last */
static long in_until;       /* when it may leave */

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The next stall of the plan, in ms (0 when the plan is spent). */
static long next_stall(void)
{
    if (!started) {
        plan = getenv("UNCORK_STALLS");
        started = 1;
    }
    if (!plan || !*plan)
        return 0;
    char *end;
    long ms = strtol(plan, &end, 10);
    plan = *end == ',' ? end + 1 : end;
    return ms > 0 ? ms : 0;
}

void gnutls_record_cork(gnutls_session_t session)
{
    static void (*real)(gnutls_session_t);
    pthread_mutex_lock(&mu);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "gnutls_record_cork");
    in = session;
    in_until = now_ms() + next_stall();
    pthread_mutex_unlock(&mu);
    if (real)
        real(session);
}

int gnutls_record_uncork(gnutls_session_t session, unsigned int flags)
{
    static int (*real)(gnutls_session_t, unsigned int);
    pthread_mutex_lock(&mu);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "gnutls_record_uncork");
    int again = session == in && now_ms() < in_until;
    pthread_mutex_unlock(&mu);
    if (again) {
        /* The socket has room, so the server's poll for it returns at once: a short sleep
         * keeps its retries from spinning. */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        return GNUTLS_E_AGAIN;
    }
    return real ? real(session, flags) : GNUTLS_E_INTERNAL_ERROR;
}

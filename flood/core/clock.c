/* flood/core/clock.c: the clocks (see clock.h). */
#include "flood/core/clock.h"

static int64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clock_mono_ns(void)
{
    return ns_of(CLOCK_MONOTONIC);
}

uint64_t clock_mono_us(void)
{
    return (uint64_t)(ns_of(CLOCK_MONOTONIC) / 1000);
}

int64_t clock_mono_ms(void)
{
    return ns_of(CLOCK_MONOTONIC) / 1000000;
}

int64_t clock_wall_ns(void)
{
    return ns_of(CLOCK_REALTIME);
}

int64_t clock_wall_us(void)
{
    return ns_of(CLOCK_REALTIME) / 1000;
}

double clock_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec after(clockid_t id, int64_t ns)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    if (ns < 0)
        ns = 0;
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec += (long)(ns % 1000000000);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

struct timespec clock_mono_after(int64_t ms)
{
    return after(CLOCK_MONOTONIC, ms * 1000000);
}

struct timespec clock_wall_after_us(int64_t us)
{
    return after(CLOCK_REALTIME, us * 1000);
}

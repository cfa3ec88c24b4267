/* flood/core/clock.h: the clocks, read once in one place. CLOCK_MONOTONIC for every interval,
 * schedule and timeout (it never steps); CLOCK_REALTIME only for what is compared with other
 * machines or written down (Date headers, run ids, a kernel's receive time). Thread-safe. */
#ifndef FLOOD_CLOCK_H
#define FLOOD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds (microseconds, unsigned as the timestamps it is compared
 * with; milliseconds). */
int64_t clock_mono_ns(void);
uint64_t clock_mono_us(void);
int64_t clock_mono_ms(void);

/* CLOCK_REALTIME now, in nanoseconds (microseconds; seconds with a fraction). */
int64_t clock_wall_ns(void);
int64_t clock_wall_us(void);
double clock_wall_s(void);

/* The CLOCK_MONOTONIC (CLOCK_REALTIME for clock_wall_after) time ms milliseconds from now,
 * normalised: the deadline of a pthread_cond_timedwait on a condition variable of that
 * clock. ms (us) may be 0: now. */
struct timespec clock_mono_after(int64_t ms);
struct timespec clock_wall_after_us(int64_t us);

#endif

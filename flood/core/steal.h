/* flood/core/steal.h: the time a virtual machine's host took from the CPUs this process may
 * run on (their steal time, /proc/stat's eighth column). On a shared host a vCPU the host
 * has descheduled runs nothing, flood's event loop included: the dispatch lag and the
 * latencies of a run with steal include the host's stalls, not only flood's or the
 * target's. */
#ifndef FLOOD_STEAL_H
#define FLOOD_STEAL_H

#include <sched.h>

/* The steal of the CPUs in set, summed, from a /proc/stat text (hz: its ticks a second),
 * into *steal_s, and how many of set's CPUs it lists into *cpus. 0, or -1 when the text
 * has no per-CPU line with a steal column for them (a kernel before 2.6.11, no /proc). */
int steal_parse(const char *stat, const cpu_set_t *set, long hz, double *steal_s, int *cpus);

/* The same, now, for the CPUs this process may run on (sched_getaffinity). */
int steal_now(double *steal_s, int *cpus);

#endif

/* flood/probes.h: Follow-to-Accept probes. The sender registers each Follow it sent (by
 * seq, with its send time on CLOCK_MONOTONIC); an inbound Accept or Reject of that Follow
 * closes the probe, and the elapsed time is the target's end-to-end processing latency.
 * Thread-safe. */
#ifndef FLOOD_PROBES_H
#define FLOOD_PROBES_H

#include <stdint.h>

#include "flood/hist.h"

struct probes;

struct probes *probes_new(void);
void probes_free(struct probes *p);

/* A Follow with this seq was sent at mono_us (microseconds, CLOCK_MONOTONIC). */
void probes_follow_sent(struct probes *p, uint64_t seq, uint64_t mono_us);
/* An Accept (accepted != 0) or Reject of Follow seq arrived at mono_us. Returns 1 when it
 * closed an open probe, 0 for a duplicate or unknown one. */
int probes_answer(struct probes *p, uint64_t seq, int accepted, uint64_t mono_us);

struct probes_totals {
    uint64_t sent, accepted, rejected, duplicates, unknown, open;
};
/* Copy the totals and merge the Follow-to-Accept histogram into h (when not NULL). */
void probes_snapshot(struct probes *p, struct probes_totals *t, struct hist *h);

#endif

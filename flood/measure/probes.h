/* flood/measure/probes.h: Follow-to-Accept probes. The sender registers each Follow it sent (by
 * seq, with its send time on CLOCK_MONOTONIC); an inbound Accept or Reject of that Follow
 * closes the probe, and the elapsed time is the target's end-to-end processing latency.
 * Thread-safe. */
#ifndef FLOOD_PROBES_H
#define FLOOD_PROBES_H

#include <stdint.h>

#include "flood/measure/hist.h"

struct probes;

struct probes *probes_new(void);
void probes_free(struct probes *p);

/* A Follow with this seq was sent at mono_us (microseconds, CLOCK_MONOTONIC). */
void probes_follow_sent(struct probes *p, uint64_t seq, uint64_t mono_us);
/* An Accept (accepted != 0) or Reject of Follow seq arrived at mono_us. Returns 1 when it
 * closed an open probe, 0 for a duplicate (an answer to a Follow answered before, or whose
 * POST was refused) or an unknown one. */
int probes_answer(struct probes *p, uint64_t seq, int accepted, uint64_t mono_us);
/* The target answered Follow seq's POST with a status outside 2xx at mono_us: it did not
 * take the Follow, so no Accept is awaited; the probe closes as refused. Returns 1 when it
 * closed an open probe, else 0. (A request that timed out or broke stays open: the target
 * may have taken it.) */
int probes_follow_refused(struct probes *p, uint64_t seq, uint64_t mono_us);

/* The bytes the probes keep beyond their log: the map of open probes and the closed bitmap. */
size_t probes_footprint(struct probes *p);

/* sent = accepted + rejected + refused + open */
struct probes_totals {
    uint64_t sent, accepted, rejected, refused, duplicates, unknown, open;
};
/* Copy the totals and merge the Follow-to-Accept histogram into h (when not NULL). */
void probes_snapshot(struct probes *p, struct probes_totals *t, struct hist *h);

/* What closed since the last probes_take_second: Accepts and Rejects counted, and the
 * Follow-to-Accept times of the Accepts. */
struct probes_second {
    uint64_t accepted, rejected;
};
/* End the current second: *h (the caller's, empty, from hist_new) is swapped under the lock
 * with the histogram the answers were recording into, so *h then holds that second's
 * Follow-to-Accept times and answer threads record into the empty one. The caller reads *h
 * and hist_resets it before the next call (both outside the lock: the swap is what keeps
 * a reader off a histogram being written). sec (may be NULL) gets the second's counts.
 * Whichever side holds a swapped histogram frees it with hist_free. */
void probes_take_second(struct probes *p, struct hist **h, struct probes_second *sec);
/* The current second's counts and (merged into h, when not NULL) Follow-to-Accept times,
 * without ending it: what closed after the last probes_take_second. */
void probes_peek_second(struct probes *p, struct probes_second *sec, struct hist *h);

/* The event log, for joining Follows and answers across shards (flood merge): each Follow
 * registered, each answer received and each refusal, with its seq and time as given, in
 * order. Off until probes_log_on; then it grows by one entry (24 bytes) a Follow and an
 * answer or refusal. */
enum probes_event_kind { PROBES_FOLLOW = 0, PROBES_ACCEPT, PROBES_REJECT, PROBES_REFUSED };
struct probes_event {
    uint64_t seq;
    uint64_t us; /* the mono_us given */
    enum probes_event_kind kind;
};
void probes_log_on(struct probes *p);
/* The log from here on (and what it held) in an unnamed file in dir (O_TMPFILE, gone with
 * the process) instead of memory, so a long run's Follows do not grow the resident set.
 * 0, or -1 (the log stays in memory: no file could be made there, or already spooled). A
 * file that cannot grow later moves the log back to memory, said once on stderr. */
int probes_log_spool(struct probes *p, const char *dir);
/* A copy of the log (a new array; free() it), its length in *n. */
struct probes_event *probes_log_copy(struct probes *p, size_t *n);

#endif

/* flood/measure/stats_merge.h: several writers' stats into one, exactly. Each writer (an
 * event loop of flood run --loops) keeps its own struct stats; the reader's struct stats
 * gets the per-second series as the writers close their seconds (live: the figures a
 * second's percentiles come from are the writers' per-second histograms, merged), and at the
 * end every count (stats_add).
 *
 * What is exact: every counter, every per-operation histogram, the series' counts, and the
 * per-second percentiles and max (the merged histograms of the requests each writer
 * completed or sent in that second; a writer records a second's histogram samples only
 * while the second is current, so a closed second's histograms are final). in_flight of a
 * second is the sum of the writers' in_flight when each closed it. The probes', deliveries'
 * and fetches' per-second figures are read by the reader's own stats_tick (set them on dst
 * only, never on a writer). While the writers run, dst's per-operation counters are the sum
 * of what each writer had when it last closed a second (and, with stats_merge_track_hists,
 * its per-operation latency and service histograms too: for a live reader such as the
 * metrics); the end replaces them with the writers' final ones.
 *
 * Not thread-safe: the caller serialises every call (a writer's stats_set_closed hook and
 * the reader's flush under one lock). */
#ifndef FLOOD_STATS_MERGE_H
#define FLOOD_STATS_MERGE_H

#include <stddef.h>

#include "flood/measure/stats.h"

struct stats_merge;

/* A merge of n writers (>= 1) into dst (borrowed; its series must be empty: dst gets no
 * events of its own while the writers write). Never NULL; stats_merge_free. */
struct stats_merge *stats_merge_new(struct stats *dst, int n);
void stats_merge_free(struct stats_merge *m);
/* Keep dst's per-operation latency and service histograms current while the writers run
 * (costs a copy of each histogram that changed, per writer and second; off by default). */
void stats_merge_track_hists(struct stats_merge *m);
/* Writer w closed a second (call it from w's stats_set_closed hook). */
void stats_merge_closed(struct stats_merge *m, int w, const struct stats_closed *c);
/* Writer w closes no more seconds (its run is over). */
void stats_merge_done(struct stats_merge *m, int w);
/* Close in dst, in order, every second each writer closed or is done with (stats_tick on
 * dst with the merged histograms: dst's probes and counters are read then). Returns how
 * many seconds were closed; *in_flight (may be NULL) gets the last one's. */
size_t stats_merge_flush(struct stats_merge *m, uint64_t *in_flight);
/* The end, after every writer is done (w[0..n-1], the writers' final stats, borrowed):
 * flush, then dst's series counts are replaced by the sum of the writers' (counts a writer
 * added to a second after closing it, an offered activity sent late, are in) and their
 * per-operation counts and histograms added to dst (stats_add). */
void stats_merge_finish(struct stats_merge *m, struct stats *const *w);

#endif

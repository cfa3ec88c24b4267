/* flood/report/merge_parts.h: the records of one crowd in `flood merge` (merge.c): the egress
 * proxy's "egress" and inbound's percentiles, retry curve, fan-out and instance classes.
 * Each shard runs a whole crowd with its own proxy, so what counts events adds up across
 * shards and is summed; what is a figure of one crowd's own timeline (a peak, a percentile
 * kept only as figures, a curve per delivery) is merged only where the merge is exact or
 * a stated bound, and otherwise kept per shard under "per_shard", the merged record saying
 * which figures and why under "not_merged" (docs/SHARDS.md). */
#ifndef FLOOD_MERGE_PARTS_H
#define FLOOD_MERGE_PARTS_H

#include <jansson.h>
#include <stddef.h>

/* v's numbers added into acc (objects member by member, recursively; a member only v has
 * copied; other values: acc's kept). */
void merge_add_numbers(json_t *acc, const json_t *v);

/* The shards' "egress" records (runs[i] each shard's run.json, borrowed) as one: every
 * count summed (requests by outcome, refusals by reason and by host, malformed input,
 * tunnels, connections, per instance connections, CONNECTs, requests and reuse), "proxy"
 * the shards' proxies joined, "open_max" the sum of the shards' peaks (an upper bound,
 * said under "not_merged"), conservation checked again over the sums. A new reference, or
 * NULL when no shard had a proxy. */
json_t *merge_egress(json_t *const *runs, size_t n);

/* inbound: the shards' "inbound" records summed by merge_add_numbers; made right here:
 * every latency summary ({p50, p90, p99, p99.9, max, count}) is remade from the shards'
 * histograms (inbound.exact) merged, or without them gets the count summed, max the
 * largest, and each percentile the largest of the shards' (an upper bound of the merged
 * percentile, named in not_merged); "retry_curve" and "fan_out" keep the sums that are exact (the
 * fan-out's lag by class from the shards' histograms) and the rest per shard; "population" is the
 * shards' own when they drew the same classes (one seed, one spec), else per shard. runs[i] each
 * shard's run.json (borrowed). */
void merge_inbound(json_t *inbound, json_t *const *runs, size_t n);

#endif

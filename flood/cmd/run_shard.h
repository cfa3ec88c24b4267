/* flood/cmd/run_shard.h: `flood run --shard K/N --start-at T` (docs/SHARDS.md): the option
 * parsers, the common start, the run's fingerprint, and the "shard" record of run.json
 * that `flood merge` checks. */
#ifndef FLOOD_RUN_SHARD_H
#define FLOOD_RUN_SHARD_H

#include <jansson.h>
#include <stdint.h>

#include "sign/err.h"

/* Start times further off than these are refused (a typo, or a clock far off). */
#define RUN_SHARD_PAST_S   10
#define RUN_SHARD_FUTURE_S 86400
#define RUN_SHARD_MAX      4096

/* Parse --shard "K/N", 0 <= K < N <= RUN_SHARD_MAX (K 0-based, as Kubernetes'
 * JOB_COMPLETION_INDEX). 0, or -1 and err. */
int run_shard_parse(const char *s, uint64_t *k, uint64_t *n, struct flood_err *err) FLOOD_WUR;
/* Parse --start-at: unix seconds ("1767225600") or RFC 3339 UTC ("2026-01-01T00:00:00Z",
 * also "+00:00"); whole seconds only. It must lie within RUN_SHARD_PAST_S before and
 * RUN_SHARD_FUTURE_S after now (unix seconds). 0, or -1 and err. */
int run_shard_parse_start(const char *s, int64_t now, int64_t *out,
                          struct flood_err *err) FLOOD_WUR;
/* The fingerprint of what every shard of one run must agree on: from run.json's config
 * (borrowed), the members that shape the unsharded run (schedule, mix, content, seed,
 * signing, target, crowd names), with the shard count and the start. 16 hex digits into
 * hex[17]. */
void run_shard_fingerprint(json_t *config, uint64_t n, int64_t start_at, char hex[17]);

struct sched;
/* run.json's "shard" (new reference): which share (shard k of n, 0: unsharded) of which run
 * (its id, the workload's run bits) this process sent, the fingerprint of config (borrowed),
 * the common start, and the whole run's and this share's activities from sc (borrowed). */
json_t *run_shard_json(json_t *config, uint64_t k, uint64_t n, int64_t start_at,
                       const struct sched *sc, uint64_t run);

#endif

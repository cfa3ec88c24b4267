/* flood/report/merge.h: `flood merge`: the results of the shards of one run (flood run
 * --shard K/N, docs/SHARDS.md) as one run's: counters summed, histograms merged exactly
 * (hist_encode text in run.json's "exact"), the per-second series aligned on wall-clock
 * seconds, Follows and Accepts joined across shards (follows.tsv), conservation checked
 * across shards. Writes run.json, the .hgrm files, summary.md and report.html. */
#ifndef FLOOD_MERGE_H
#define FLOOD_MERGE_H

#include <stddef.h>
#include <stdio.h>

#include "sign/err.h"

/* Merge the run folders dirs[0..n-1] into out (made when missing). Refused, with err
 * naming the folder: one without run.json or its "shard" record, one from another run
 * (fingerprint, run id, shard count or start differ), a shard index twice, a shard
 * missing, a shard whose own conservation fails. A line per check is printed on log.
 * 0 written and conserved, or -1 and err. */
int merge_run(const char *out, char *const *dirs, size_t n, FILE *log,
              struct flood_err *err) FLOOD_WUR;

#endif

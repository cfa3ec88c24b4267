/* flood/report/results_mix.h: the mix in a run's results: each kind's asked and sent share,
 * what was still sent in place of another kind and why, and the refollows' answers, from
 * run.json's "mix" (workload_mix_json's object). */
#ifndef FLOOD_RESULTS_MIX_H
#define FLOOD_RESULTS_MIX_H

#include <stdio.h>

#include <jansson.h>

/* The table's mix lines ("mix: create asked 50.0% sent 50.1%, ..."; the refollows' line)
 * for mix (may be NULL: nothing printed). */
void results_mix_lines(FILE *f, const json_t *mix);
/* Append to warnings (an array) a line for each kind still substituted ("12 delete sent as
 * create: no crowd actor had a recent post standing yet") and for a kind sent more than a
 * point off its asked share. mix may be NULL. */
void results_mix_warnings(const json_t *mix, json_t *warnings);

/* flood merge: add a shard's "mix" into acc (an object, empty at first): counts added,
 * substitutions added by kind, the sent shares recomputed over the whole. */
void results_mix_add(json_t *acc, const json_t *mix);

#endif

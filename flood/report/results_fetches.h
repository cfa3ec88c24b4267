/* flood/report/results_fetches.h: what the target fetched back from the crowd, in a run's
 * results: run.json's "fetches" and "crowd_unreachable", a line of the table and of
 * summary.md, the exact record and fetches.tsv that flood merge adds up; and run.json's
 * "crowd", the crowd server's answer counts. Reads measure/fetches.h through
 * results_info.fetches. */
#ifndef FLOOD_RESULTS_FETCHES_H
#define FLOOD_RESULTS_FETCHES_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "flood/crowd/server.h"
#include "flood/report/results.h"

/* run.json's "fetches" (fetches_json with the run's sends: totals.sent and per
 * operation), a new reference; NULL without ri->fetches. */
json_t *results_fetches_json(const struct stats *st, const struct results_info *ri);
/* 1 when the target answered some deliveries 2xx and fetched nothing at all from the
 * crowd (no WebFinger, actor, key or any GET): its reason into reason[size]. 0 otherwise
 * (also without ri->fetches). */
int results_crowd_unreachable(const struct stats *st, const struct results_info *ri, char *reason,
                              size_t size);
/* "fetches: 120 (actor 20, key 20, media 80), 3.0 a send; repeats 40 of 12 URLs" and a
 * newline on f; nothing without ri->fetches. md: as a summary.md paragraph. */
void results_fetches_line(FILE *f, const struct stats *st, const struct results_info *ri, int md);

/* run.json's "crowd": what the crowd's server answered, whoever asked: {"requests",
 * "by_status": {"1xx".."5xx", "other"}, "bad_host", "too_large", "faults_injected",
 * "tls_cut"} (a new reference). */
json_t *results_crowd_json(const struct server_stats *c);
/* A run.json's "crowd" (borrowed; NULL or not an object: nothing) added into c. */
void results_crowd_add(struct server_stats *c, json_t *crowd);
/* The warning for c's TLS answers cut, into buf[size]; 0 when there were none. */
int results_crowd_warning(const struct server_stats *c, char *buf, size_t size);

/* What `flood merge` needs to add runs' fetches without loss. run.json's "exact"
 * "fetches": {"kinds": {KIND: {requests, bytes, serve: hist_encode text}}, "untracked"}
 * (a new reference; NULL without f). */
json_t *results_fetches_exact(struct fetches *f);
/* A run's "exact" "fetches" (borrowed) added into f. 0, or -1 and err naming what is
 * missing or malformed. */
int results_fetches_add(struct fetches *f, json_t *exact, struct flood_err *err) FLOOD_WUR;
/* DIR/fetches.tsv: every URL the target fetched, by key (its kind in the top hex digit)
 * and count: "KEY<TAB>COUNT" a line (fetches_write_urls). 0, or -1 and err. */
int results_write_fetch_urls(const char *dir, struct fetches *f, struct flood_err *err) FLOOD_WUR;
/* DIR/fetches.tsv's URLs added into f's table. 0, or -1 and err naming the file and line. */
int results_fetch_urls_add(struct fetches *f, const char *dir, struct flood_err *err) FLOOD_WUR;

#endif

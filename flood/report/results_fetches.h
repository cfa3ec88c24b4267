/* flood/report/results_fetches.h: what the target fetched back from the crowd, in a run's
 * results: run.json's "fetches" and "crowd_unreachable", a line of the table and of
 * summary.md; and run.json's "crowd", the crowd server's answer counts. Reads measure/fetches.h
 * through results_info.fetches. */
#ifndef FLOOD_RESULTS_FETCHES_H
#define FLOOD_RESULTS_FETCHES_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "flood/crowd/dns.h"
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
 * "tls_cut", "hangs_closed"} (a new reference). */
json_t *results_crowd_json(const struct server_stats *c);
/* A run.json's "crowd" (borrowed; NULL or not an object: nothing) added into c. */
void results_crowd_add(struct server_stats *c, json_t *crowd);
/* The warning for c's TLS answers cut, into buf[size]; 0 when there were none. */
int results_crowd_warning(const struct server_stats *c, char *buf, size_t size);

/* run.json's "dns": the crowd's name server's counts (--dns) {"udp", "tcp", "answers":
 * {"address", "nodata", "refused", "notimp", "formerr", "malformed"}, "tcp_refused"}
 * (a new reference). */
json_t *results_dns_json(const struct dns_stats *d);
/* "name server: 40 queries (udp 38, tcp 2): address 20, nodata 20, ..." and a newline on f
 * (md: a summary.md paragraph). */
/* A run.json's "dns" (borrowed; NULL or not an object: nothing) added into d; 1 when it
 * was an object (flood merge writes "dns" when any shard had one). */
int results_dns_add(struct dns_stats *d, json_t *dns);
void results_dns_line(FILE *f, const struct dns_stats *d, int md);

#endif

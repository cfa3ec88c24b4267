/* flood/measure/fetches.h: what the target fetched back from the crowd, counted by kind:
 * requests, body bytes, the crowd's serving time, a running count per kind for the
 * per-second series, and repeat fetches (the same URL more than once in a run: a missing
 * cache) with the top offenders.
 *
 * Threads: fetches_record is called from the server's threads at once: counters are
 * atomics, the URL set is a lock-free open-addressing table of 64-bit hashes, and only the
 * serving-time histograms and the top list take a (per-kind, resp. one) mutex.
 * Memory is fixed at fetches_new: FETCHES_SLOTS hashes with their counts, FETCH__COUNT
 * histograms, FETCHES_TOP URLs; URLs beyond the table are counted, not remembered
 * (untracked). Only wf.h's route kinds are read from webfinger/. */
#ifndef FLOOD_FETCHES_H
#define FLOOD_FETCHES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "flood/measure/hist.h"
#include "webfinger/wf.h"

enum fetch_kind {
    FETCH_WEBFINGER = 0, /* WebFinger and host-meta */
    FETCH_NODEINFO,
    FETCH_ACTOR,
    FETCH_KEY,
    FETCH_NOTE, /* notes and activities */
    FETCH_MEDIA,
    FETCH_LINK, /* link pages */
    FETCH_EMOJI,
    FETCH_AVATAR,     /* avatars and headers */
    FETCH_COLLECTION, /* GETs of inboxes, outboxes, followers, following */
    FETCH_OTHER,      /* anything else on a crowd host (an unknown path) */
    FETCH__COUNT
};

#define FETCHES_SLOTS   (1u << 16) /* URLs remembered for repeats: 1 MiB */
#define FETCHES_PROBES  64         /* slots tried before a URL goes untracked */
#define FETCHES_TOP     10
#define FETCHES_URL_MAX 512

/* "webfinger", "nodeinfo", "actor", "key", "note", "media", "link", "emoji", "avatar",
 * "collection", "other". */
const char *fetch_kind_name(int kind);
/* The kind of a GET of route kind (WF_ROUTE_NONE: other). Pure. */
enum fetch_kind fetch_kind_of(enum wf_route_kind kind);

/* One kind's totals. */
struct fetches_kind {
    uint64_t requests, bytes;
    uint64_t repeat_requests; /* fetches of a URL already fetched in this run */
    uint64_t repeat_urls;     /* URLs fetched more than once */
    struct hist serve;        /* the crowd's serving time, microseconds */
};

struct fetches_top {
    char url[FETCHES_URL_MAX];
    uint64_t count;
    int kind;
};

struct fetches;

/* A new, empty accounting (never NULL); fetches_free. */
struct fetches *fetches_new(void);
void fetches_free(struct fetches *f);

/* One fetch answered: its kind, URL (host and path, len bytes, borrowed), body bytes and
 * serving time. Thread-safe. */
void fetches_record(struct fetches *f, enum fetch_kind kind, const char *url, size_t len,
                    uint64_t bytes, uint64_t serve_us);

/* The running count of fetches of kind (for per-second series). Thread-safe. */
uint64_t fetches_count(struct fetches *f, int kind);
/* Every kind's count summed. Thread-safe. */
uint64_t fetches_count_all(struct fetches *f);
/* A snapshot of kind's totals into out (thread-safe; the histogram copied under its lock). */
void fetches_kind_get(struct fetches *f, int kind, struct fetches_kind *out);
/* The top repeated URLs, most fetched first, into out[max]; returns how many (count >= 2). */
size_t fetches_top_get(struct fetches *f, struct fetches_top *out, size_t max);
/* URLs that found no slot (their repeats go uncounted). */
uint64_t fetches_untracked(struct fetches *f);

/* Merging accountings (flood merge: the shards' fetches into one run's). A URL's key in
 * the table carries its kind in its top bits. */
#define FETCHES_KIND_SHIFT 60
#define FETCHES_KIND_MASK  (0xfULL << FETCHES_KIND_SHIFT)
/* Every URL remembered, a line each: "KEY<TAB>COUNT", KEY in 16 hex digits. 0, or -1 on a
 * write error. */
int fetches_write_urls(struct fetches *f, FILE *out);
/* count fetches of the URL whose key is key, added to the table (not to the totals: see
 * fetches_add_kind). 0; 1 when its probe window is full (the URL counted untracked); -1
 * for a key no accounting makes (0, or an unknown kind) or a count of 0. */
int fetches_add_url(struct fetches *f, uint64_t key, uint64_t count);
/* Another accounting's totals of kind added: requests, bytes, the serving histogram. */
void fetches_add_kind(struct fetches *f, int kind, uint64_t requests, uint64_t bytes,
                      const struct hist *serve);
void fetches_add_untracked(struct fetches *f, uint64_t urls);
/* After the adds: the repeat counts made from the table (a URL fetched n times in all is
 * n - 1 repeats, whichever accountings saw them), and the top list ranked among cand[n]
 * (the accountings' own top URLs) by their counts in the table. */
void fetches_merged(struct fetches *f, const struct fetches_top *cand, size_t n);

/* run.json's "fetches": {"by_kind": {KIND: {requests, bytes, repeat_requests,
 * repeat_urls, serve_ms: {p50, p99, max}}}, "total": {requests, bytes, repeat_requests,
 * repeat_urls}, "top_repeats": [{url, count, kind}], "untracked_urls": N,
 * "amplification": {KIND: fetches / sent}, "amplification_by_type": {TYPE: {KIND:
 * fetches / sent of TYPE}}}. sent is the activities sent; types[n_types] name each
 * activity type with its sent count (types with none are left out). A new reference. */
json_t *fetches_json(struct fetches *f, uint64_t sent, const char *const *type_names,
                     const uint64_t *type_sent, size_t n_types);

#endif

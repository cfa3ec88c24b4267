/* flood/inbound/deliver.h: the crowd's outgoing deliveries (Accepts of Follows). Its own thread
 * with a libcurl multi handle posts each queued activity to an inbox, signed (cavage
 * rsa-sha256 / hs2019 with Digest and Date) as the crowd actor that sends it, and retries
 * as a real server does: on 408, 429, 5xx, timeouts and transport errors, after 1 s, 2 s,
 * 4 s, 8 s (DELIVER_TRIES tries in all, about 15 s), or after Retry-After when it asks for
 * longer (seconds or an HTTP date, capped at DELIVER_RETRY_AFTER_MAX_S). */
#ifndef FLOOD_DELIVER_H
#define FLOOD_DELIVER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "flood/crowd/crowd.h"
#include "sign/err.h"

#define DELIVER_TRIES             5
#define DELIVER_RETRY_AFTER_MAX_S 60
#define DELIVER_QUEUE_MAX         10000 /* pending deliveries; beyond, new ones are dropped */
#define DELIVER_RUNNING_MAX       32    /* requests in flight at once */
#define DELIVER_TIMEOUT_MS        10000

struct deliver;

/* A new delivery queue for the crowd (borrowed) with its thread started; resolve holds
 * curl-style "HOST:PORT:ADDR" entries (copied). NULL and err on failure. */
struct deliver *deliver_new(struct crowd *crowd, const char *const *resolve, size_t n_resolve,
                            struct flood_err *err) FLOOD_WUR;
/* Stop: wait at most grace_ms for queued deliveries (retries included), abandon the rest
 * (counted as failed), join the thread and free. */
void deliver_free(struct deliver *d, long grace_ms);

/* Queue body (copied) as a POST to inbox signed by crowd actor (instance, actor).
 * 0, or -1 when the queue is full (counted as dropped). */
int deliver_post(struct deliver *d, int instance, int actor, const char *inbox, const char *body);

struct deliver_stats {
    uint64_t queued;  /* deliveries accepted into the queue */
    uint64_t ok;      /* ended with a 2xx */
    uint64_t retried; /* retries made (a delivery may retry several times) */
    uint64_t failed;  /* ended without a 2xx (given up, or abandoned at stop) */
    uint64_t dropped; /* refused because the queue was full */
    uint64_t pending; /* queued or in flight now */
};
void deliver_get_stats(struct deliver *d, struct deliver_stats *out);

/* The retry policy, pure: after try number `tries` (1 = the first) ended with status (0 for
 * a timeout or transport error) and the Retry-After header value (or NULL), the delay in
 * milliseconds before the next try, or -1 for no retry (a success, a final status, or no
 * tries left). now is the wall clock, for an HTTP-date Retry-After. */
long deliver_retry_delay_ms(int tries, long status, const char *retry_after, time_t now);

#endif

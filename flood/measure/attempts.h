/* flood/measure/attempts.h: every delivery attempt the target makes to a faulted instance,
 * and the retry curve read from them.
 *
 * The crowd's fault hook records each inbox POST to an instance a --fault rule covers
 * (inbox scope): when (ms since the crowd started), which delivery (a hash of the host,
 * the inbox path and the body's Digest or Content-Digest header, which a retry repeats
 * since it sends the same body), what the crowd answered (a fault's status, a hang or a
 * reset, or 0: passed to the inbox) and the Retry-After it gave. From these, per
 * delivery: attempts, the gaps between them, whether a gap after a Retry-After was at least
 * that long, when (if ever) an attempt got through, and for a fault that ended (until=),
 * what arrived after the instance came back and how fast: the recovery herd.
 *
 * How servers retry, for reading the curve: Mastodon (app/workers/activitypub/
 * delivery_worker.rb) retries 16 times after (count**4)+15 s plus jitter and ignores
 * Retry-After; Misskey (packages/backend/src/queue/const.ts, apBackoff) waits
 * (2**attempts - 1) minutes up to 8 h plus 20% jitter and ignores it too; GoToSocial
 * (internal/httpclient/client.go, DoOnce/do) honours Retry-After on 429 and 5xx, capped at
 * 2 s * retries, else backs off 2 s * 2**(attempts+1); Fedify (packages/fedify/src/federation/
 * retry.ts, createExponentialBackoffPolicy) backs off from 1 s by a factor of 2 with jitter,
 * and newer Fedify honours Retry-After on 429 and 503. Thread-safe. */
#ifndef FLOOD_ATTEMPTS_H
#define FLOOD_ATTEMPTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sign/err.h"

/* What the crowd answered an attempt, besides an HTTP status. */
enum {
    ATTEMPT_PASSED = 0, /* no fault fired: the inbox answered (2xx for a good signature) */
    ATTEMPT_HANG = -1,  /* held until the target gave up */
    ATTEMPT_RESET = -2, /* the connection reset */
};

/* One attempt. */
struct attempt {
    int64_t t_ms;        /* since the crowd started */
    uint64_t key;        /* the delivery: host, path and body digest */
    int32_t instance;    /* 1.. */
    int32_t status;      /* an HTTP status, or ATTEMPT_* */
    int32_t retry_after; /* seconds given with the status, 0: none */
};

struct attempts;

/* A record holding at most cap attempts (more are counted as dropped). Never NULL. */
struct attempts *attempts_new(size_t cap);
void attempts_free(struct attempts *a);

/* Record one attempt (thread-safe): 1, or 0 once attempts_close was called (the attempt
 * is not taken: the caller refuses it, so that every attempt a target saw answered is in
 * the record). */
int attempts_add(struct attempts *a, const struct attempt *at) FLOOD_WUR;

/* Take no more attempts (thread-safe): the record is final, before it is read at the end
 * of a run. */
void attempts_close(struct attempts *a);

/* The delivery key of an inbox POST: FNV-1a over host, path and digest (any may be NULL). */
uint64_t attempts_key(const char *host, const char *path, const char *digest);

/* The retry curve over n attempts (sorted in place by delivery, then time). recover_ms:
 * when the faults ended (ms since the crowd started; 0: they did not). */
struct attempts_curve {
    uint64_t attempts, deliveries, delivered, never_arrived;
    /* what the attempts were answered: passed to the inbox, a fault's status, hang, reset */
    uint64_t passed, refused_status, hung, reset;
    uint64_t per_delivery[9]; /* deliveries with 1..8 attempts, [0] with 9 or more */
    uint64_t max_attempts;
    double mean_attempts;
    int64_t gap_p50_ms, gap_p90_ms, gap_max_ms; /* between attempts of one delivery */
    uint64_t gaps;
    /* gaps after an answer that gave Retry-After: at least that long (within 0.5 s), or not */
    uint64_t retry_after_given, retry_after_honoured, retry_after_early;
    /* after the faults ended: deliveries refused before recover_ms that got through after
     * it, and the time from recover_ms to their first success */
    int64_t recover_ms;
    uint64_t recovered, recovered_attempts, herd_peak_per_s;
    int64_t recovery_p50_ms, recovery_p99_ms, recovery_max_ms;
    uint64_t herd_per_s[10]; /* attempts in each of the 10 seconds after recover_ms */
};
void attempts_curve_of(struct attempt *v, size_t n, int64_t recover_ms, struct attempts_curve *out);

/* The curve of what a holds, as run.json's "retry_curve" object (new reference, NULL on
 * allocation failure); "dropped" counts attempts past the cap. */
json_t *attempts_json(struct attempts *a, int64_t recover_ms);

#endif

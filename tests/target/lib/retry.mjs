// How the target retries a failed delivery: the backoff of a named server, whether it
// honours the Retry-After a 429 or 503 carries, and a log of every delivery attempt.
//
// The policies, from each server's code:
//   fedify      Fedify's createExponentialBackoffPolicy (packages/fedify/src/federation/
//               retry.ts) as the target always used it: 1 s doubling up to 30 s with jitter,
//               5 retries; Fedify 1.5 ignores Retry-After (its retry policy sees only the
//               attempt count and the time since the first try).
//   mastodon    ActivityPub::DeliveryWorker (app/workers/activitypub/delivery_worker.rb):
//               Sidekiq's (count**4) + 15 s plus its own jitter rand(0.5 * count**4), 16
//               retries; Retry-After is not read.
//   misskey     apBackoff (packages/backend/src/queue/const.ts): (2**attempts - 1) minutes,
//               at most 8 h, plus up to 20% jitter; 12 attempts (deliverJobMaxAttempts);
//               the error is not read, so neither is Retry-After.
//   gotosocial  internal/httpclient/client.go and request.go: on a 429 or 5xx the
//               Retry-After (seconds or a date) replaces the backoff, capped at
//               2 s * retries (10 s); else 2 s * 2**(attempts+1); 5 retries.
// --retry-scale F multiplies the backoff (not a Retry-After) so a policy whose first retry
// comes after 15 s or a minute can be watched within a short test.
import { Temporal } from "@js-temporal/polyfill";
import fs from "node:fs";

export const POLICIES = ["fedify", "mastodon", "misskey", "gotosocial"];

/* retries: how many retries before giving up; delayS(n): the backoff after the (n+1)th
 * failed attempt, in seconds; honour: whether the server reads Retry-After */
const SHAPES = {
    fedify: { retries: 5, honour: false, delayS: (n) => Math.min(2 ** n * (1 + Math.random()), 30) },
    mastodon: {
        retries: 16,
        honour: false,
        /* Sidekiq's own jitter rand(10) * (count + 1) and Mastodon's rand(0.5 * count**4) */
        delayS: (n) => n ** 4 + 15 + Math.floor(Math.random() * 10) * (n + 1) + Math.random() * 0.5 * n ** 4,
    },
    misskey: {
        retries: 11,
        honour: false,
        delayS: (n) => {
            const b = Math.min((2 ** (n + 1) - 1) * 60, 8 * 3600);
            return b + b * Math.random() * 0.2;
        },
    },
    gotosocial: { retries: 5, honour: true, delayS: (n) => 2 * 2 ** (n + 2) },
};

/* A Retry-After value (delta seconds or an HTTP date) in seconds, null when none. */
export function retryAfterSeconds(v, now = Date.now()) {
    if (v == null || v === "") return null;
    if (/^\d+$/.test(v)) return Number(v);
    const t = Date.parse(v);
    return Number.isFinite(t) ? Math.max(0, (t - now) / 1000) : null;
}

/* o: {policy (null: Fedify's, as federation.mjs configures it), scale, honour (null: the
 * policy's own), maxRetryAfterS, logFile}. Returns {policy(ctx) for Fedify's
 * outboxRetryPolicy (null without o.policy), wrapQueue(q), onDelivery(rec), summary()}. */
export function makeRetry(o) {
    const shape = SHAPES[o.policy] ?? null;
    const honour = o.honour ?? shape?.honour ?? false;
    const capS = o.maxRetryAfterS ?? 10;
    const lastRetryAfter = new Map(); /* inbox URL -> seconds, from its latest failed answer */
    const log = o.logFile ? fs.createWriteStream(o.logFile, { flags: "a" }) : null;
    const counts = { attempts: 0, honoured: 0, gave_up: 0 };

    /* Fedify calls it with the attempts made so far (0 after the first failure) */
    function policy({ attempts }) {
        if (attempts >= shape.retries) {
            counts.gave_up++;
            return null;
        }
        const ms = Math.round(shape.delayS(attempts) * 1000 * o.scale);
        return Temporal.Duration.from({ milliseconds: Math.max(0, ms) });
    }

    /* A retry is enqueued right after the failed answer was seen (onDelivery): with
     * honour, its delay becomes that answer's Retry-After, capped. */
    function wrapQueue(q) {
        return new Proxy(q, {
            get(target, prop) {
                if (prop === "enqueue") {
                    return (message, options) => {
                        const ra = honour && message?.attempt > 0 ? lastRetryAfter.get(message.inbox) : null;
                        if (ra != null) {
                            counts.honoured++;
                            options = { ...(options ?? {}), delay: Temporal.Duration.from({ milliseconds: Math.round(Math.min(ra, capS) * 1000) }) };
                        }
                        return target.enqueue(message, options);
                    };
                }
                const v = target[prop];
                return typeof v === "function" ? v.bind(target) : v;
            },
        });
    }

    /* rec: {inbox, digest, status (0: no answer), retryAfter (header text or null), error} */
    function onDelivery(rec) {
        counts.attempts++;
        const ra = retryAfterSeconds(rec.retryAfter);
        if (rec.status >= 200 && rec.status < 300) lastRetryAfter.delete(rec.inbox);
        else lastRetryAfter.set(rec.inbox, ra);
        log?.write(
            JSON.stringify({
                t: Date.now(),
                inbox: rec.inbox,
                digest: rec.digest ?? null,
                status: rec.status,
                retry_after: ra,
                error: rec.error ?? null,
            }) + "\n"
        );
    }

    return {
        policy: shape ? policy : null,
        wrapQueue,
        onDelivery,
        summary: () => ({ policy: o.policy ?? "fedify-default", scale: o.scale, honour_retry_after: honour, retry_after_max_s: capS, ...counts }),
    };
}

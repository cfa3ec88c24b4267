// Counters and latency samples behind GET /stats.
import { FETCH_KINDS } from "./fetchkind.mjs";

/* A latency sample set: exact count, sum and max, and a fixed-size uniform reservoir
 * (Vitter's algorithm R) for the percentiles, so memory stays bounded on long runs. */
export class Sampler {
    constructor(cap = 4096) {
        this.cap = cap;
        this.samples = [];
        this.count = 0;
        this.sum = 0;
        this.max = 0;
    }

    add(ms) {
        this.count++;
        this.sum += ms;
        if (ms > this.max) this.max = ms;
        if (this.samples.length < this.cap) {
            this.samples.push(ms);
        } else {
            const j = Math.floor(Math.random() * this.count);
            if (j < this.cap) this.samples[j] = ms;
        }
    }

    summary() {
        const s = [...this.samples].sort((a, b) => a - b);
        /* Nearest-rank percentile. */
        const q = (p) => (s.length === 0 ? null : round(s[Math.max(0, Math.ceil(p * s.length) - 1)]));
        return {
            count: this.count,
            mean: this.count === 0 ? null : round(this.sum / this.count),
            p50: q(0.5),
            p95: q(0.95),
            p99: q(0.99),
            max: this.count === 0 ? null : round(this.max),
        };
    }
}

function round(x) {
    return Math.round(x * 1000) / 1000;
}

export function bump(obj, key, n = 1) {
    obj[key] = (obj[key] ?? 0) + n;
}

/* Every figure the target keeps about itself. */
export class Stats {
    constructor() {
        this.startedAt = new Date();
        /* HTTP-level verdicts on inbox POSTs. */
        this.inbox = { received: 0, accepted: 0, duplicate: 0, rejected: {} };
        /* Per activity type: accepted into the queue, processed (ok/ignored/failed). */
        this.byType = {};
        this.queueWait = {};
        this.processing = {};
        this.queueWaitAll = new Sampler();
        this.processingAll = new Sampler();
        /* Outgoing deliveries: activities handed to Fedify, and HTTP attempts seen. */
        this.deliveries = {
            queued: {},
            attempts: 0,
            ok: 0,
            failed: 0,
            by_status: {},
            errors: 0,
            last_error: null,
        };
        this.api = { requests: 0, unauthorized: 0 };
        /* Every outgoing GET to another host, by the kind of its URL (lib/fetchkind.mjs). */
        const zero = () => ({ count: 0, bytes: 0, errors: 0 });
        this.fetches = { by_kind: {}, total: zero(), by_status: {}, transport_errors: 0 };
        for (const k of FETCH_KINDS) this.fetches.by_kind[k] = zero();
        /* What the follow-up workers did with what they fetched. */
        this.media = {
            jobs: 0,
            cache_hits: 0,
            downloaded: 0,
            bytes: 0,
            too_large: 0,
            type_mismatch: 0,
            unsupported_type: 0,
            failed: 0,
            skipped_over_4: 0,
            by_purpose: {},
        };
        this.linkCards = { crawled: 0, cards: 0, no_og: 0, not_html: 0, failed: 0, skipped_media: 0 };
        this.objects = {
            parents_fetched: 0,
            parents_known: 0,
            depth_limited: 0,
            announced_fetched: 0,
            actors_refetched: 0,
            rejected: {},
        };
    }

    type(t) {
        if (!this.byType[t]) {
            this.byType[t] = {
                enqueued: 0,
                ok: 0,
                ignored: 0,
                failed: 0,
                reasons: {},
                by_object: {},
            };
            this.queueWait[t] = new Sampler();
            this.processing[t] = new Sampler();
        }
        return this.byType[t];
    }

    enqueued(t) {
        this.type(t).enqueued++;
    }

    reject(reason) {
        bump(this.inbox.rejected, reason);
    }

    /* sub: what the activity was about (the object's type, "vote", "actor", ...). */
    recordDone(t, waitMs, procMs, verdict, reason, sub) {
        const e = this.type(t);
        bump(e, verdict);
        if (reason) bump(e.reasons, reason);
        if (sub) {
            e.by_object[sub] ??= { ok: 0, ignored: 0, failed: 0 };
            bump(e.by_object[sub], verdict);
        }
        this.queueWait[t].add(waitMs);
        this.processing[t].add(procMs);
        this.queueWaitAll.add(waitMs);
        this.processingAll.add(procMs);
    }
}

/* The figures of one follow-up work pool (media, link, fetch): per job kind counts and
 * the pool's own queue-wait and processing samples. */
export class PoolStats {
    constructor() {
        this.jobs = {};
        this.totals = { enqueued: 0, ok: 0, ignored: 0, failed: 0 };
        this.reasons = {};
        this.queueWait = new Sampler();
        this.processing = new Sampler();
    }

    type(t) {
        this.jobs[t] ??= { enqueued: 0, ok: 0, ignored: 0, failed: 0 };
        return this.jobs[t];
    }

    enqueued(t) {
        this.type(t).enqueued++;
        this.totals.enqueued++;
    }

    recordDone(t, waitMs, procMs, verdict, reason) {
        this.type(t);
        bump(this.jobs[t], verdict);
        bump(this.totals, verdict);
        if (reason) bump(this.reasons, reason);
        this.queueWait.add(waitMs);
        this.processing.add(procMs);
    }

    /* The pool's entry in /stats; queue is its WorkQueue. */
    json(queue) {
        return {
            workers: queue.workers,
            depth: queue.depth,
            peak: queue.peak,
            busy_workers: queue.busy,
            dropped: queue.dropped,
            ...this.totals,
            reasons: this.reasons,
            jobs: this.jobs,
            queue_wait_ms: this.queueWait.summary(),
            processing_ms: this.processing.summary(),
        };
    }
}

// Counters and latency samples behind GET /stats.

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
    }

    type(t) {
        if (!this.byType[t]) {
            this.byType[t] = { enqueued: 0, ok: 0, ignored: 0, failed: 0, reasons: {} };
            this.queueWait[t] = new Sampler();
            this.processing[t] = new Sampler();
        }
        return this.byType[t];
    }

    reject(reason) {
        bump(this.inbox.rejected, reason);
    }

    recordDone(t, waitMs, procMs, verdict, reason) {
        const e = this.type(t);
        bump(e, verdict);
        if (reason) bump(e.reasons, reason);
        this.queueWait[t].add(waitMs);
        this.processing[t].add(procMs);
        this.queueWaitAll.add(waitMs);
        this.processingAll.add(procMs);
    }
}

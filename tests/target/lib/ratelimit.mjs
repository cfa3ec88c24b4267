// Per-origin token buckets for inbox POSTs.

export class TokenBuckets {
    /* burst: bucket size; refill: tokens per second. */
    constructor(burst, refill) {
        this.burst = burst;
        this.refill = refill;
        this.buckets = new Map();
    }

    /* Takes one token for key at time nowMs. Returns 0 when allowed, otherwise the
     * whole seconds to wait before a token is there (Retry-After, rounded up). */
    take(key, nowMs) {
        let b = this.buckets.get(key);
        if (!b) {
            if (this.buckets.size >= 100000) this.prune(nowMs);
            b = { tokens: this.burst, at: nowMs };
            this.buckets.set(key, b);
        }
        b.tokens = Math.min(this.burst, b.tokens + ((nowMs - b.at) / 1000) * this.refill);
        b.at = nowMs;
        if (b.tokens >= 1) {
            b.tokens -= 1;
            return 0;
        }
        if (this.refill <= 0) return 3600;
        return Math.max(1, Math.ceil((1 - b.tokens) / this.refill));
    }

    /* Drops buckets that have refilled completely: they behave like new ones. */
    prune(nowMs) {
        for (const [k, b] of this.buckets) {
            if (b.tokens + ((nowMs - b.at) / 1000) * this.refill >= this.burst) this.buckets.delete(k);
        }
    }
}

/* The host that signed an inbox POST: keyId of a draft-cavage Signature header or of an
 * RFC 9421 Signature-Input, else the body's actor, else null. */
export function originOf(headers, bodyText) {
    const sig = headers["signature"];
    const input = headers["signature-input"];
    let keyId = null;
    if (typeof sig === "string") {
        const m = /keyId="([^"]*)"/i.exec(sig);
        if (m) keyId = m[1];
    }
    if (!keyId && typeof input === "string") {
        const m = /keyid="([^"]*)"/i.exec(input);
        if (m) keyId = m[1];
    }
    const host = hostOf(keyId);
    if (host) return host;
    const m = /"actor"\s*:\s*"([^"]+)"/.exec(bodyText);
    return m ? hostOf(m[1]) : null;
}

function hostOf(u) {
    if (!u) return null;
    try {
        return new URL(u).host || null;
    } catch {
        return null;
    }
}

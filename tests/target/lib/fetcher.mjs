// Bounded GETs for the follow-up workers (media, link pages, notes, actors) and the cache
// of what they fetched, keyed by URL. Every GET goes through the global fetch, so it is
// routed to the crowd and counted in stats.fetches (lib/net.mjs) like Fedify's own.
import { signRequest } from "@fedify/fedify";

const TIMEOUT_MS = 10000;
const MAX_REDIRECTS = 3;
export const DOC_MAX = 1024 * 1024; /* Mastodon reads at most 1 MB of a JSON document or page */
export const AP_ACCEPT =
    'application/activity+json, application/ld+json; profile="https://www.w3.org/ns/activitystreams"';

/* A least-recently-used map with a time to live per entry, bounded in entries and in the
 * sum of the entries' costs (about their bytes). */
class Lru {
    constructor(maxEntries, maxCost) {
        this.max = maxEntries;
        this.maxCost = maxCost;
        this.cost = 0;
        this.map = new Map();
        this.evicted = 0;
    }

    get(key) {
        const e = this.map.get(key);
        if (!e) return undefined;
        this.delete(key);
        if (e.expires < Date.now()) return undefined;
        this.map.set(key, e);
        this.cost += e.cost;
        return e.value;
    }

    set(key, value, ttlMs, cost) {
        this.delete(key);
        this.map.set(key, { value, expires: Date.now() + ttlMs, cost });
        this.cost += cost;
        while (this.map.size > this.max || (this.cost > this.maxCost && this.map.size > 1)) {
            this.delete(this.map.keys().next().value);
            this.evicted++;
        }
    }

    delete(key) {
        const e = this.map.get(key);
        if (!e) return;
        this.map.delete(key);
        this.cost -= e.cost;
    }
}

export class Fetcher {
    /* cache: false makes every get fetch again (--no-fetch-cache). signer() returns
     * {privateKey, keyId} to sign ActivityPub GETs with (a draft-cavage signature, as
     * Mastodon signs its fetches), or null for unsigned ones. */
    constructor({ cache = true, maxEntries = 50000, maxCost = 64 * 1024 * 1024, signer = () => null, userAgent }) {
        this.enabled = cache;
        this.lru = new Lru(maxEntries, maxCost);
        this.inflight = new Map();
        this.signer = signer;
        this.userAgent = userAgent;
        this.counts = { hits: 0, misses: 0, joined: 0, stored: 0 };
    }

    /* Returns {value, hit}: the cached value for key, else producer()'s, shared with
     * callers asking for the same key meanwhile. producer returns {cacheable, cost, ...};
     * only cacheable values are kept, for ttlMs, cost (about the bytes held; default 256)
     * counting against the cache's bound. With the cache off, producer runs every time. */
    async memo(key, ttlMs, producer) {
        if (!this.enabled) {
            this.counts.misses++;
            return { value: await producer(), hit: false };
        }
        const cached = this.lru.get(key);
        if (cached !== undefined) {
            this.counts.hits++;
            return { value: cached, hit: true };
        }
        const pending = this.inflight.get(key);
        if (pending) {
            this.counts.joined++;
            return { value: await pending, hit: true };
        }
        this.counts.misses++;
        const p = producer();
        this.inflight.set(key, p);
        try {
            const value = await p;
            if (value && value.cacheable) {
                this.lru.set(key, value, ttlMs, 256 + (value.cost ?? 0));
                this.counts.stored++;
            }
            return { value, hit: false };
        } finally {
            this.inflight.delete(key);
        }
    }

    /* Forgets key (an actor refetched on Update, a deleted note). */
    forget(key) {
        this.lru.delete(key);
    }

    json() {
        return {
            enabled: this.enabled,
            entries: this.lru.map.size,
            bytes: this.lru.cost,
            ...this.counts,
            evicted: this.lru.evicted,
        };
    }

    /* A GET of url reading at most maxBytes of the body. Never throws. Returns
     * {status, type, body, size, url, error}: status 0 on a transport error (error says
     * which), body a Buffer or null (null when the body was over maxBytes: error
     * "too_large", or the status was not 200), type the Content-Type's media type. */
    async get(url, { accept = "*/*", maxBytes = DOC_MAX, sign = false } = {}) {
        const signal = AbortSignal.timeout(TIMEOUT_MS);
        let target = url;
        for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
            let res;
            try {
                let req = new Request(target, {
                    headers: { accept, "user-agent": this.userAgent },
                    redirect: "manual",
                    signal,
                });
                const key = sign ? this.signer() : null;
                if (key) req = await signRequest(req, key.privateKey, key.keyId);
                res = await globalThis.fetch(req, { redirect: "manual", signal });
            } catch (err) {
                return fail(0, target, err?.cause?.code ?? err?.name ?? "error");
            }
            const location = res.headers.get("location");
            if (res.status >= 300 && res.status < 400 && location) {
                await discard(res);
                try {
                    target = new URL(location, target).href;
                } catch {
                    return fail(res.status, target, "bad-redirect");
                }
                if (!/^https?:$/.test(new URL(target).protocol))
                    return fail(res.status, target, "bad-redirect");
                continue;
            }
            const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
            if (res.status !== 200) {
                await discard(res);
                return { ...fail(res.status, target, `http-${res.status}`), type };
            }
            const length = Number(res.headers.get("content-length") ?? NaN);
            if (Number.isFinite(length) && length > maxBytes) {
                await discard(res);
                return { ...fail(200, target, "too_large"), type, size: length };
            }
            return { ...(await readBounded(res, maxBytes)), status: 200, type, url: target };
        }
        return fail(0, target, "too-many-redirects");
    }
}

function fail(status, url, error) {
    return { status, body: null, size: 0, url, error, type: "" };
}

async function discard(res) {
    try {
        await res.body?.cancel();
    } catch {
        /* nothing to do: the connection is dropped */
    }
}

/* Reads res's body up to maxBytes; past that it stops reading and drops the rest. */
async function readBounded(res, maxBytes) {
    if (!res.body) return { body: Buffer.alloc(0), size: 0, error: null };
    const reader = res.body.getReader();
    const chunks = [];
    let size = 0;
    try {
        for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            size += value.byteLength;
            if (size > maxBytes) {
                await reader.cancel().catch(() => {});
                return { body: null, size, error: "too_large" };
            }
            chunks.push(value);
        }
    } catch (err) {
        return { body: null, size, error: err?.cause?.code ?? err?.name ?? "read-error" };
    }
    return { body: Buffer.concat(chunks), size, error: null };
}

/* The JSON object at the start of buf, or null. */
export function parseJsonObject(buf) {
    if (!buf) return null;
    try {
        const v = JSON.parse(buf.toString("utf8"));
        return v && typeof v === "object" && !Array.isArray(v) ? v : null;
    } catch {
        return null;
    }
}

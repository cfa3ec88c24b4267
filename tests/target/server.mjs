#!/usr/bin/env node
// flood's reference target: a small ActivityPub server on Fedify with an inbox work queue
// of its own, an optional per-origin rate limit, a Mastodon API subset and /stats.
// Usage: see README.md beside this file, or run with --help.
import http from "node:http";
import { webcrypto } from "node:crypto";
import { generateCryptoKeyPair } from "@fedify/fedify";
import { makeApi, USERNAME } from "./lib/api.mjs";
import { buildFederation, postStatus } from "./lib/federation.mjs";
import { Fetcher } from "./lib/fetcher.mjs";
import { makeFollowups } from "./lib/followup.mjs";
import { countOutgoing, installRoutes } from "./lib/net.mjs";
import { makeProcessor } from "./lib/process.mjs";
import { POLICIES, makeRetry } from "./lib/retry.mjs";
import { WorkQueue } from "./lib/queue.mjs";
import { RedisWorkQueue } from "./lib/redisqueue.mjs";
import { TokenBuckets, originOf } from "./lib/ratelimit.mjs";
import { PoolStats, Stats } from "./lib/stats.mjs";
import { Store } from "./lib/store.mjs";

const VERSION = "0.1.0";
const MAX_BODY = 1024 * 1024; /* Mastodon's inbox limit: 413 above 1 MB */
/* The admin routes' limit: 50,000 followers set up at once are a 7 MB body */
const ADMIN_MAX_BODY = 64 * 1024 * 1024;

const USAGE = `usage: node server.mjs [options]
  --listen ADDR:PORT         where to listen (default 127.0.0.1:0; port 0 picks one)
  --domain NAME              public host name (default target.test)
  --public-url URL           public origin (default http://DOMAIN:PORT, PORT the bound one)
  --workers N                inbox queue workers (default 2)
  --outbox-workers N         delivery workers (default 4)
  --origin-burst B           per-origin token bucket size (enables the limit)
  --origin-refill R          tokens per second per origin (default 1 with --origin-burst)
  --lax                      skip signature verification (tests only)
  --resolve-crowd ADDR:PORT  send every fetch of a *.test host to ADDR:PORT
  --proxy http://ADDR:PORT   reach every other host through that outgoing proxy (CONNECT)
  --dns ADDR:PORT            resolve every other host's name by that name server alone
  --admin-token T            bearer token for /admin (default: none, loopback only)
  --work-ms MS               extra time each activity holds its worker (default 0)
  --service-ms MS            a busy worker finishes one activity every MS, its processing
                             included: a capacity of exactly workers x 1000 / MS a second
                             while the processing fits (default 0: off)
  --max-posts N              statuses held before the oldest remote ones go (default 200000)
  --media-workers N          media download workers: attachments, link images, emoji, avatars (default 2)
  --link-workers N           link-card crawl workers (default 2)
  --fetch-workers N          object fetch workers: reply parents, announced posts, actors (default 2)
  --pool-max-depth N         jobs a follow-up pool holds before it drops new ones (default 10000)
  --media-max-bytes N        largest media download; reading stops past it (default 8388608)
  --reply-depth D            reply parents fetched above an incoming post (default 3; 0: none)
  --no-fetch-cache           fetch every URL again each time it is needed (no URL cache, and
                             Fedify caches no remote document or key)
  --delivery-queue Q         fifo (default: Fedify's, one queue for every destination) or
                             per-destination (a FIFO per host; a dead host holds only its own)
  --delivery-timeout-ms MS   abort a delivery (POST) after MS (default: none, undici's 30 s)
  --retry-after-on-429 Y     yes (default) or no: send Retry-After with a 429
  --autopost-ms MS           every local account with followers posts every MS (default 0: off)
  --retry-policy P           how failed deliveries are retried, as P does: fedify, mastodon,
                             misskey or gotosocial (default: Fedify's, 5 retries from 1 s)
  --retry-scale F            multiply the policy's backoff by F (default 1; 0.1 for a short test)
  --retry-after Y            honour or ignore a 429/503's Retry-After (default: the policy's;
                             gotosocial honours it, the others ignore it)
  --retry-after-max-s S      the longest Retry-After honoured (default 10, GoToSocial's cap)
  --delivery-log FILE        append one JSON line per delivery attempt (time, inbox, digest,
                             status, Retry-After, error)
  --ignore-repeat-follow     a Follow from an actor that already follows gets no Accept
                             (as Hackers' Pub; Mastodon, Misskey, GoToSocial, Pleroma accept again)
  --inbox-queue redis://HOST:PORT[/DB][?prefix=P]
                             the inbox queue in Redis through BullMQ, keyed as Misskey keys
                             its inbox queue (P:queue:inbox, default P flood-target)
  --verify-later             answer every inbox POST 202 at once and verify its signature
                             afterwards, as Misskey queues the raw request and verifies in
                             its inbox job (a refused one is dropped without a word)
  --help                     this text
`;

function fail(msg) {
    process.stderr.write(`target: ${msg}\n${USAGE}`);
    process.exit(2);
}

function parseArgs(argv) {
    const o = {
        listen: "127.0.0.1:0",
        domain: "target.test",
        publicUrl: null,
        workers: 2,
        outboxWorkers: 4,
        burst: null,
        refill: null,
        lax: false,
        crowd: null,
        adminToken: null,
        maxPosts: 200000,
        workMs: 0,
        serviceMs: 0,
        mediaWorkers: 2,
        linkWorkers: 2,
        fetchWorkers: 2,
        poolMaxDepth: 10000,
        mediaMaxBytes: 8 * 1024 * 1024,
        replyDepth: 3,
        fetchCache: true,
        deliveryQueue: "fifo",
        deliveryTimeoutMs: 0,
        retryAfter429: true,
        autopostMs: 0,
        retryPolicy: null,
        retryScale: 1,
        retryAfter: null,
        retryAfterMaxS: 10,
        deliveryLog: null,
        ignoreRepeatFollow: false,
        inboxQueue: null,
        verifyLater: false,
    };
    const need = (i, name) => {
        if (i + 1 >= argv.length) fail(`${name} needs a value`);
        return argv[i + 1];
    };
    const int = (v, name, min) => {
        if (!/^\d+$/.test(v) || Number(v) < min) fail(`${name}: not an integer >= ${min} '${v}'`);
        return Number(v);
    };
    const num = (v, name) => {
        const n = Number(v);
        if (v === "" || !Number.isFinite(n) || n < 0) fail(`${name}: not a number >= 0 '${v}'`);
        return n;
    };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        switch (a) {
            case "--help":
            case "-h":
                process.stdout.write(USAGE);
                process.exit(0);
                break;
            case "--listen":
                o.listen = need(i++, a);
                break;
            case "--domain":
                o.domain = need(i++, a);
                break;
            case "--public-url":
                o.publicUrl = need(i++, a);
                break;
            case "--workers":
                o.workers = int(need(i++, a), a, 1);
                break;
            case "--outbox-workers":
                o.outboxWorkers = int(need(i++, a), a, 1);
                break;
            case "--origin-burst":
                o.burst = int(need(i++, a), a, 1);
                break;
            case "--origin-refill":
                o.refill = num(need(i++, a), a);
                break;
            case "--lax":
                o.lax = true;
                break;
            case "--resolve-crowd":
                o.crowd = hostPort(need(i++, a), a);
                break;
            case "--proxy":
                o.proxy = need(i++, a);
                if (!/^http:\/\/\[?[^\]/]+?\]?:\d+\/?$/.test(o.proxy)) fail(`--proxy: want http://ADDR:PORT '${o.proxy}'`);
                break;
            case "--dns":
                o.dns = hostPort(need(i++, a), a);
                break;
            case "--admin-token":
                o.adminToken = need(i++, a);
                break;
            case "--work-ms":
                o.workMs = num(need(i++, a), a);
                break;
            case "--service-ms":
                o.serviceMs = num(need(i++, a), a);
                break;
            case "--max-posts":
                o.maxPosts = int(need(i++, a), a, 1);
                break;
            case "--media-workers":
                o.mediaWorkers = int(need(i++, a), a, 1);
                break;
            case "--link-workers":
                o.linkWorkers = int(need(i++, a), a, 1);
                break;
            case "--fetch-workers":
                o.fetchWorkers = int(need(i++, a), a, 1);
                break;
            case "--pool-max-depth":
                o.poolMaxDepth = int(need(i++, a), a, 1);
                break;
            case "--media-max-bytes":
                o.mediaMaxBytes = int(need(i++, a), a, 1);
                break;
            case "--reply-depth":
                o.replyDepth = int(need(i++, a), a, 0);
                break;
            case "--no-fetch-cache":
                o.fetchCache = false;
                break;
            case "--delivery-queue":
                o.deliveryQueue = need(i++, a);
                if (!["fifo", "per-destination"].includes(o.deliveryQueue))
                    fail(`${a}: fifo or per-destination, not '${o.deliveryQueue}'`);
                break;
            case "--delivery-timeout-ms":
                o.deliveryTimeoutMs = int(need(i++, a), a, 0);
                break;
            case "--retry-after-on-429": {
                const v = need(i++, a);
                if (!["yes", "no"].includes(v)) fail(`${a}: yes or no, not '${v}'`);
                o.retryAfter429 = v === "yes";
                break;
            }
            case "--ignore-repeat-follow":
                o.ignoreRepeatFollow = true;
                break;
            case "--autopost-ms":
                o.autopostMs = int(need(i++, a), a, 0);
                break;
            case "--retry-policy":
                o.retryPolicy = need(i++, a);
                if (!POLICIES.includes(o.retryPolicy))
                    fail(`${a}: one of ${POLICIES.join(", ")}, not '${o.retryPolicy}'`);
                break;
            case "--retry-scale":
                o.retryScale = num(need(i++, a), a);
                break;
            case "--retry-after": {
                const v = need(i++, a);
                if (!["honour", "ignore"].includes(v)) fail(`${a}: honour or ignore, not '${v}'`);
                o.retryAfter = v === "honour";
                break;
            }
            case "--retry-after-max-s":
                o.retryAfterMaxS = num(need(i++, a), a);
                break;
            case "--delivery-log":
                o.deliveryLog = need(i++, a);
                break;
            case "--verify-later":
                o.verifyLater = true;
                break;
            case "--inbox-queue":
                o.inboxQueue = redisUrl(need(i++, a), a);
                break;
            default:
                fail(`unknown option '${a}'`);
        }
    }
    o.bind = hostPort(o.listen, "--listen");
    if (!/^[a-z0-9.-]+$/i.test(o.domain)) fail(`--domain: bad host name '${o.domain}'`);
    if (o.refill !== null && o.burst === null) fail("--origin-refill needs --origin-burst");
    if (o.burst !== null && o.refill === null) o.refill = 1;
    if (o.publicUrl !== null) {
        let u;
        try {
            u = new URL(o.publicUrl);
        } catch {
            fail(`--public-url: not a URL '${o.publicUrl}'`);
        }
        if (!/^https?:$/.test(u.protocol) || u.pathname !== "/" || u.search)
            fail(`--public-url: want http(s)://HOST[:PORT] '${o.publicUrl}'`);
    }
    return o;
}

/* redis://HOST:PORT[/DB][?prefix=P] into {host, port, db, prefix}. */
function redisUrl(s, name) {
    const m = /^redis:\/\/([^:/?]+):(\d+)(?:\/(\d+))?(?:\?prefix=([^&]+))?$/.exec(s);
    if (!m || Number(m[2]) > 65535) fail(`${name}: want redis://HOST:PORT[/DB][?prefix=P] '${s}'`);
    return { host: m[1], port: Number(m[2]), db: Number(m[3] ?? 0), prefix: m[4] ?? "flood-target" };
}

function hostPort(s, name) {
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(s);
    if (!m || Number(m[2]) > 65535) fail(`${name}: want ADDR:PORT '${s}'`);
    return { host: m[1], port: Number(m[2]) };
}

/* At most 20 problem lines a second on stderr; the rest are counted and summed up. */
function makeLog() {
    let second = 0;
    let lines = 0;
    let dropped = 0;
    return (msg) => {
        const now = Math.floor(Date.now() / 1000);
        if (now !== second) {
            if (dropped > 0) process.stderr.write(`target: ${dropped} more problem lines suppressed\n`);
            second = now;
            lines = 0;
            dropped = 0;
        }
        if (lines++ < 20) process.stderr.write(`target: ${msg}\n`);
        else dropped++;
    };
}

async function newKeys() {
    /* RSA-2048, as Mastodon makes them (Fedify's own helper makes 4096-bit keys, slow to
     * generate and to sign with); Ed25519 for Object Integrity Proofs (FEP-8b32). */
    const rsa = await webcrypto.subtle.generateKey(
        {
            name: "RSASSA-PKCS1-v1_5",
            modulusLength: 2048,
            publicExponent: new Uint8Array([1, 0, 1]),
            hash: "SHA-256",
        },
        true,
        ["sign", "verify"]
    );
    const ed = await generateCryptoKeyPair("Ed25519");
    return [rsa, ed];
}

function readBody(req, limit) {
    return new Promise((resolve, reject) => {
        const chunks = [];
        let size = 0;
        let over = false;
        req.on("data", (c) => {
            size += c.length;
            if (size > limit) over = true;
            else chunks.push(c);
        });
        req.on("end", () => resolve(over ? null : Buffer.concat(chunks)));
        req.on("error", reject);
    });
}

function send(res, status, body, headers = {}) {
    const isText = typeof body === "string";
    const data = isText ? body : JSON.stringify(body);
    res.writeHead(status, {
        "content-type": isText ? "text/plain; charset=utf-8" : "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(data),
        ...headers,
    });
    res.end(data);
}

/* Fedify's verdict on an inbox POST, from its answer (federation/handler.ts). */
function inboxVerdict(status, text) {
    if (status >= 200 && status < 300)
        return text.includes("already been processed") ? "duplicate" : "accepted";
    if (status === 401) return text.includes("do not match") ? "signer-mismatch" : "signature";
    if (status === 400) {
        if (text.startsWith("Invalid JSON.")) return "bad-json";
        if (text.startsWith("Missing actor")) return "missing-actor";
        return "bad-activity";
    }
    if (status === 404) return "not-found";
    return `status-${status}`;
}

function isLoopback(addr) {
    return /^(127\.|::1$|::ffff:127\.)/.test(addr ?? "");
}

async function main() {
    const o = parseArgs(process.argv.slice(2));
    const log = makeLog();
    const stats = new Stats();
    const store = new Store({ maxStatuses: o.maxPosts });
    const buckets = o.burst !== null ? new TokenBuckets(o.burst, o.refill) : null;

    const server = http.createServer();
    server.keepAliveTimeout = 65000;
    await new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(o.bind.port, o.bind.host, resolve);
    });
    const port = server.address().port;
    const webOrigin = (o.publicUrl ?? `http://${o.domain}:${port}`).replace(/\/$/, "");
    const ownHost = new URL(webOrigin).hostname;

    /* The target's own name leads to itself; *.test names to the crowd. */
    const self = ["0.0.0.0", "::"].includes(o.bind.host) ? "127.0.0.1" : o.bind.host;
    const routes = [{ match: (h) => h === ownHost, host: self, port }];
    if (o.crowd) {
        routes.push({ match: (h) => h.endsWith(".test"), host: o.crowd.host, port: o.crowd.port });
    }
    installRoutes(routes, { proxy: o.proxy, dns: o.dns });
    const retry =
        o.retryPolicy || o.retryAfter != null || o.deliveryLog || o.retryScale !== 1
            ? makeRetry({
                  policy: o.retryPolicy,
                  scale: o.retryScale,
                  honour: o.retryAfter,
                  maxRetryAfterS: o.retryAfterMaxS,
                  logFile: o.deliveryLog,
              })
            : null;
    countOutgoing(stats, log, (h) => h === ownHost, {
        deliveryTimeoutMs: o.deliveryTimeoutMs,
        onDelivery: retry?.onDelivery,
    });

    let processor = null;
    let followups = null;
    const queueOpts = {
        workers: o.workers,
        handler: (item) => processor(item),
        stats,
        log,
        workMs: o.workMs,
        serviceMs: o.serviceMs,
    };
    const queue = o.inboxQueue
        ? new RedisWorkQueue({ ...queueOpts, redis: o.inboxQueue, prefix: o.inboxQueue.prefix })
        : new WorkQueue(queueOpts);
    const { federation, context, kv } = buildFederation({
        store,
        queue,
        stats,
        log,
        origin: { handleHost: o.domain, webOrigin },
        lax: o.lax,
        outboxWorkers: o.outboxWorkers,
        fetchCache: o.fetchCache,
        deliveryQueue: o.deliveryQueue,
        retry,
    });

    /* The follow-up pools, each its own FIFO with its own workers and figures. */
    const pools = {};
    const poolStats = {};
    for (const [name, workers] of [
        ["media", o.mediaWorkers],
        ["link", o.linkWorkers],
        ["fetch", o.fetchWorkers],
    ]) {
        poolStats[name] = new PoolStats();
        pools[name] = new WorkQueue({
            workers,
            handler: (item) => followups.run(item),
            stats: poolStats[name],
            log,
            maxDepth: o.poolMaxDepth,
            name: `${name} pool`,
        });
    }
    const fetcher = new Fetcher({
        cache: o.fetchCache,
        userAgent: `flood-target/${VERSION}`,
        /* Object fetches are signed with the first local account's key, standing for the
         * instance actor Mastodon signs its fetches with. */
        signer: () => {
            for (const a of store.locals.values()) {
                if (a.keys) return { privateKey: a.keys[0].privateKey, keyId: new URL(`${a.uri}#main-key`) };
            }
            return null;
        },
    });
    followups = makeFollowups({
        store,
        stats,
        ctx: context,
        fetcher,
        pools,
        mediaMaxBytes: o.mediaMaxBytes,
        replyDepth: o.replyDepth,
        kv,
        log,
    });
    processor = makeProcessor({
        store,
        stats,
        context,
        followups,
        ignoreRepeatFollow: o.ignoreRepeatFollow,
    });
    const api = makeApi({ store, stats, context, domain: o.domain, log, remember: followups.remember });
    queue.start();
    for (const p of Object.values(pools)) p.start();
    /* No AbortSignal: Fedify 1.5's InProcessMessageQueue adds an abort listener on every
     * wait and never removes it. The process exits on SIGTERM anyway. */
    federation.startQueue(undefined).catch((err) => {
        log(`outbox queue: ${err?.message ?? err}`);
    });
    /* --autopost-ms: every account with followers posts, so its deliveries can be watched
     * (the dead-instances preset: delivery lag to healthy instances against dead ones). */
    let autoposts = 0;
    if (o.autopostMs > 0) {
        setInterval(() => {
            for (const a of store.locals.values()) {
                if (a.followers.size === 0) continue;
                autoposts++;
                postStatus(context, store, stats, a, `autopost ${autoposts}`, "public", []).catch(
                    (err) => log(`autopost: ${err?.message ?? err}`)
                );
            }
        }, o.autopostMs).unref();
    }

    function statsJson() {
        const types = {};
        for (const [t, e] of Object.entries(stats.byType)) {
            types[t] = {
                ...e,
                queue_wait_ms: stats.queueWait[t].summary(),
                processing_ms: stats.processing[t].summary(),
            };
        }
        const mem = process.memoryUsage();
        return {
            software: `flood-target ${VERSION}`,
            fedify: "1.5.9",
            started_at: stats.startedAt.toISOString(),
            uptime_s: Math.round((Date.now() - stats.startedAt.getTime()) / 100) / 10,
            origin: webOrigin,
            config: {
                workers: o.workers,
                work_ms: o.workMs,
                service_ms: o.serviceMs || null,
                outbox_workers: o.outboxWorkers,
                delivery_queue: o.deliveryQueue,
                delivery_timeout_ms: o.deliveryTimeoutMs || null,
                retry_after_on_429: o.retryAfter429,
                autopost_ms: o.autopostMs || null,
                retry: retry?.summary() ?? null,
                ignore_repeat_follow: o.ignoreRepeatFollow,
                origin_burst: o.burst,
                origin_refill: o.refill,
                lax: o.lax,
                resolve_crowd: o.crowd ? `${o.crowd.host}:${o.crowd.port}` : null,
                proxy: o.proxy ?? null,
                dns: o.dns ? `${o.dns.host}:${o.dns.port}` : null,
                media_workers: o.mediaWorkers,
                link_workers: o.linkWorkers,
                fetch_workers: o.fetchWorkers,
                pool_max_depth: o.poolMaxDepth,
                media_max_bytes: o.mediaMaxBytes,
                reply_depth: o.replyDepth,
                fetch_cache: o.fetchCache,
            },
            queue: {
                depth: queue.depth,
                peak: queue.peak,
                busy_workers: queue.busy,
                pacing: queue.pacer ? queue.pacer.json() : null,
                backlogged: queue.backlogged.json(),
                queue_wait_ms: stats.queueWaitAll.summary(),
                processing_ms: stats.processingAll.summary(),
            },
            pools: {
                media: poolStats.media.json(pools.media),
                link: poolStats.link.json(pools.link),
                fetch: poolStats.fetch.json(pools.fetch),
            },
            inbox: stats.inbox,
            activities: types,
            fetches: { ...stats.fetches, cache: fetcher.json() },
            media: stats.media,
            link_cards: stats.linkCards,
            objects: stats.objects,
            deliveries: stats.deliveries,
            api: stats.api,
            store: store.counts(),
            memory_mb: {
                rss: Math.round(mem.rss / 1048576),
                heap_used: Math.round(mem.heapUsed / 1048576),
            },
        };
    }

    async function admin(req, res, url, body) {
        if (o.adminToken !== null) {
            if ((req.headers["authorization"] ?? "") !== `Bearer ${o.adminToken}`)
                return send(res, 401, { error: "admin token required" });
        } else if (!isLoopback(req.socket.remoteAddress)) {
            return send(res, 403, { error: "admin is open to loopback clients only" });
        }
        const accountJson = (a) => ({
            id: a.id,
            username: a.username,
            token: a.token,
            actor: a.uri,
            acct: `${a.username}@${o.domain}`,
        });
        if (url.pathname === "/admin/accounts" && req.method === "GET") {
            return send(res, 200, [...store.locals.values()].map(accountJson));
        }
        if (url.pathname === "/admin/followers" && req.method === "POST") return seedFollowers(res, body);
        if (url.pathname !== "/admin/accounts") return send(res, 404, { error: "not found" });
        if (req.method !== "POST")
            return send(res, 405, { error: "method not allowed" }, { allow: "GET, POST" });
        let p;
        try {
            p = JSON.parse(body.toString("utf8"));
        } catch {
            return send(res, 400, { error: "body is not JSON" });
        }
        const username = p?.username;
        const valid =
            typeof username === "string" &&
            username.length <= 30 &&
            /^[a-z0-9_]+$/.test(username) &&
            USERNAME.test(username);
        if (!valid)
            return send(res, 422, { error: "username must match [a-z0-9_]{1,30}" });
        let a = store.locals.get(username);
        if (a) return send(res, 200, { ...accountJson(a), created: false });
        a = store.addLocal(username, context.getActorUri(username).href);
        a.keys = await newKeys();
        return send(res, 201, { ...accountJson(a), created: true });
    }

    /* POST /admin/followers {"username", "followers": [{"uri", "inbox", "sharedInbox"}]}:
     * remote followers set up at once, as if each had followed and been accepted earlier
     * (a fan-out test needs a thousand; the follow path itself is follow-storm's). */
    function seedFollowers(res, body) {
        let p;
        try {
            p = JSON.parse(body.toString("utf8"));
        } catch {
            return send(res, 400, { error: "body is not JSON" });
        }
        const a = store.locals.get(p?.username);
        if (!a) return send(res, 404, { error: `no local account '${p?.username}'` });
        if (!Array.isArray(p.followers)) return send(res, 422, { error: "followers: an array" });
        let added = 0;
        for (const f of p.followers) {
            let uri, inbox, shared;
            try {
                uri = new URL(f.uri).href;
                inbox = new URL(f.inbox).href;
                shared = f.sharedInbox ? new URL(f.sharedInbox).href : null;
            } catch {
                return send(res, 422, { error: "each follower: uri and inbox URLs, sharedInbox optional" });
            }
            let r = store.remotes.get(uri);
            if (!r) {
                const host = new URL(uri).hostname;
                const username = uri.split("/").pop();
                r = { kind: "remote", id: store.newId(), uri, createdAt: new Date(), statuses: 0 };
                Object.assign(r, { username, acct: `${username}@${host}`, displayName: username });
                Object.assign(r, { avatar: null, header: null });
                store.remotes.set(uri, r);
                store.accounts.set(r.id, r);
            }
            r.inbox = inbox;
            r.sharedInbox = shared;
            if (!a.followers.has(uri)) added++;
            a.followers.set(uri, { followId: null });
        }
        return send(res, 200, { username: a.username, added, followers: a.followers.size });
    }

    /* Answers an inbox POST itself (413, 429) and returns null, or returns Fedify's answer. */
    async function inbox(req, res, url, body) {
        stats.inbox.received++;
        if (body === null) {
            stats.reject("too-large");
            send(res, 413, "Payload too large.");
            return null;
        }
        if (buckets) {
            const key = originOf(req.headers, body.toString("utf8")) ?? `ip:${req.socket.remoteAddress}`;
            const wait = buckets.take(key, performance.now());
            if (wait > 0) {
                stats.reject("rate-limited");
                send(
                    res,
                    429,
                    "Too many requests from this origin.",
                    o.retryAfter429 ? { "retry-after": String(wait) } : {}
                );
                return null;
            }
        }
        const response = await fedify(req, url, body);
        const text = await response.clone().text();
        const verdict = inboxVerdict(response.status, text);
        if (verdict === "accepted") stats.inbox.accepted++;
        else if (verdict === "duplicate") stats.inbox.duplicate++;
        else {
            stats.reject(verdict);
            const keyId = /keyId="([^"]*)"/i.exec(req.headers["signature"] ?? "")?.[1] ?? "none";
            log(`inbox: ${response.status} ${verdict} ${url.pathname} keyId=${keyId}`);
        }
        return response;
    }

    function fedify(req, url, body) {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) {
            if (Array.isArray(v)) for (const x of v) headers.append(k, x);
            else if (v !== undefined) headers.set(k, v);
        }
        const request = new Request(url, {
            method: req.method,
            headers,
            body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
        });
        return federation.fetch(request, {
            contextData: undefined,
            onNotFound: () =>
                new Response("Not found.", {
                    status: 404,
                    headers: { "content-type": "text/plain" },
                }),
            onNotAcceptable: () =>
                new Response("Not acceptable.", {
                    status: 406,
                    headers: { "content-type": "text/plain", vary: "Accept" },
                }),
        });
    }

    async function relay(req, res, response) {
        const headers = {};
        response.headers.forEach((v, k) => {
            headers[k] = v;
        });
        const buf = Buffer.from(await response.arrayBuffer());
        delete headers["content-encoding"];
        headers["content-length"] = String(buf.length);
        res.writeHead(response.status, headers);
        res.end(req.method === "HEAD" ? undefined : buf);
    }

    server.on("request", async (req, res) => {
        try {
            /* The URL as the client addressed it: the signed request target and Host. */
            const scheme = new URL(webOrigin).protocol;
            const url = new URL(req.url, `${scheme}//${req.headers.host ?? new URL(webOrigin).host}`);
            const isInbox = req.method === "POST" && /^\/(inbox|users\/[^/]+\/inbox)$/.test(url.pathname);
            const body = await readBody(req, url.pathname.startsWith("/admin/") ? ADMIN_MAX_BODY : MAX_BODY);
            if (url.pathname === "/stats" && req.method === "GET") return send(res, 200, statsJson());
            if (url.pathname.startsWith("/admin/")) {
                if (body === null) return send(res, 413, { error: "body too large" });
                return await admin(req, res, url, body);
            }
            if (url.pathname.startsWith("/api/")) {
                if (body === null) return send(res, 413, { error: "body too large" });
                const r = await api(req.method, url, req.headers, body);
                return send(res, r.status, r.body);
            }
            if (isInbox && o.verifyLater && body !== null) {
                /* Misskey's inbox answers 202 once the request parses, and verifies the
                 * signature in the queued job (packages/backend/src/server/
                 * ActivityPubServerService.ts inbox(), queue/processors/
                 * InboxProcessorService.ts): a bad one is dropped, never answered. */
                send(res, 202, "Accepted.");
                const dropped = { headersSent: true, writeHead() {}, end() {}, setHeader() {} };
                inbox(req, dropped, url, body).catch((err) => log(`inbox (later): ${err?.message ?? err}`));
                return;
            }
            if (isInbox) {
                const response = await inbox(req, res, url, body);
                if (response !== null) await relay(req, res, response);
                return;
            }
            if (body === null) return send(res, 413, "Payload too large.");
            return await relay(req, res, await fedify(req, url, body));
        } catch (err) {
            log(`http: ${req.method} ${req.url}: ${err?.stack ?? err}`);
            if (!res.headersSent) send(res, 500, "Internal server error.");
            else res.destroy();
        }
    });
    server.on("clientError", (err, socket) => {
        if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    });

    let stopping = false;
    const stop = async (sig) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`target: ${sig}, stopping\n`);
        /* Stop within two seconds whatever is in flight. */
        setTimeout(() => process.exit(0), 2000).unref();
        server.close();
        server.closeAllConnections();
        await Promise.all([queue, ...Object.values(pools)].map((q) => q.stop()));
        process.exit(0);
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));

    const shown = o.bind.host.includes(":") ? `[${o.bind.host}]` : o.bind.host;
    process.stdout.write(`listening on http://${shown}:${port}\n`);
    const lax = o.lax ? ", signatures NOT verified (--lax)" : "";
    process.stdout.write(`target: public origin ${webOrigin}, ${o.workers} inbox workers${lax}\n`);
}

main().catch((err) => {
    process.stderr.write(`target: ${err?.stack ?? err}\n`);
    process.exit(1);
});

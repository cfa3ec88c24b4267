// The ActivityPub side, all through Fedify: actors, keys, WebFinger, NodeInfo, collections,
// notes, the inboxes (signature verification is Fedify's), and outgoing activities.
import {
    Accept,
    Activity,
    Collection,
    Create,
    Endpoints,
    Follow,
    InProcessMessageQueue,
    MemoryKvStore,
    Mention,
    Note,
    ParallelMessageQueue,
    Person,
    PUBLIC_COLLECTION,
    Question,
    Undo,
    createExponentialBackoffPolicy,
    createFederation,
} from "@fedify/fedify";
import { Temporal } from "@js-temporal/polyfill";
import { randomUUID } from "node:crypto";
import { activityKind } from "./apjson.mjs";
import { PerDestinationQueue } from "./outboxqueue.mjs";

const PAGE = 20;

export function instant(date) {
    return Temporal.Instant.fromEpochMilliseconds(date.getTime());
}

/* The KvStore Fedify gets. Fedify's document loader never caches key documents (a keyId
 * with a fragment, or a path ending in /main-key): keys are cached by Fedify's own key
 * cache, and when a cached key fails to verify (a rotated key), Fedify 1.5 fetches it again
 * through the same document loader, which would answer the stale copy for five minutes.
 * With fetchCache false no remote document and no key is read from or kept in kv at all;
 * everything else (the activity ids seen) is kept either way. */
function fedifyKv(kv, fetchCache) {
    const isKeyUrl = (u) => typeof u === "string" && (u.includes("#") || /\/main-key$/.test(u));
    const skipped = (key) => {
        if (key[0] !== "_fedify") return false;
        if (key[1] === "remoteDocument") return !fetchCache || isKeyUrl(key[2]);
        return key[1] === "publicKey" && !fetchCache;
    };
    return {
        get: (key) => (skipped(key) ? Promise.resolve(undefined) : kv.get(key)),
        set: (key, value, options) => (skipped(key) ? Promise.resolve() : kv.set(key, value, options)),
        delete: (key) => kv.delete(key),
    };
}

/* Builds the Fedify federation over store. Verified inbox activities are pushed to queue.
 * fetchCache false keeps Fedify from caching remote documents and keys.
 * Returns {federation, context, kv} where context is a Context on the public origin. */
export function buildFederation({
    store,
    queue,
    stats,
    log,
    origin,
    lax,
    outboxWorkers,
    fetchCache,
    deliveryQueue = "fifo",
    retry = null,
}) {
    const memory = new MemoryKvStore();
    const kv = fedifyKv(memory, fetchCache);
    const federation = createFederation({
        kv,
        /* Inbox activities are not given to a Fedify queue: the listener runs during the
         * request, after verification, and pushes to our own queue. Deliveries go through
         * Fedify's in-process queue, so an Accept never holds an inbox worker. */
        queue: {
            /* fifo: Fedify's own, one queue for every destination; per-destination: a lane
             * per host (lib/outboxqueue.mjs) */
            outbox: (retry ? retry.wrapQueue : (q) => q)(
                deliveryQueue === "per-destination"
                    ? new PerDestinationQueue(outboxWorkers)
                    : new ParallelMessageQueue(new InProcessMessageQueue(), outboxWorkers)
            ),
            fanout: new InProcessMessageQueue(),
        },
        manuallyStartQueue: true,
        origin,
        /* The crowd lives on loopback under *.test names. */
        allowPrivateAddress: true,
        skipSignatureVerification: lax,
        userAgent: { software: "flood-target/0.1.0" },
        /* --retry-policy (lib/retry.mjs); without it Fedify's own, as configured here */
        outboxRetryPolicy: retry?.policy ?? createExponentialBackoffPolicy({
            maxAttempts: 5,
            initial: { seconds: 1 },
            maxDelay: { seconds: 30 },
        }),
        onOutboxError: (error, activity) => {
            stats.deliveries.last_error = String(error?.message ?? error);
            const what = `${activity?.constructor?.name ?? "activity"} ${activity?.id?.href ?? ""}`;
            log(`outbox: ${what}: ${error?.message ?? error}`);
        },
    });

    federation
        .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
            const a = store.locals.get(identifier);
            if (!a) return null;
            const keys = await ctx.getActorKeyPairs(identifier);
            return new Person({
                id: ctx.getActorUri(identifier),
                preferredUsername: identifier,
                name: identifier,
                summary: "A load-test persona of flood's reference target.",
                url: ctx.getActorUri(identifier),
                published: instant(a.createdAt),
                inbox: ctx.getInboxUri(identifier),
                outbox: ctx.getOutboxUri(identifier),
                followers: ctx.getFollowersUri(identifier),
                following: ctx.getFollowingUri(identifier),
                endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
                publicKey: keys[0]?.cryptographicKey ?? null,
                assertionMethods: keys.map((k) => k.multikey),
                manuallyApprovesFollowers: false,
                discoverable: true,
            });
        })
        .setKeyPairsDispatcher((ctx, identifier) => store.locals.get(identifier)?.keys ?? []);

    federation.setObjectDispatcher(
        Note,
        "/users/{identifier}/statuses/{id}",
        (ctx, { identifier, id }) => {
            const st = store.statuses.get(id);
            if (!st || !st.local || st.author !== identifier) return null;
            return noteOf(ctx, st);
        }
    );
    federation.setObjectDispatcher(
        Create,
        "/users/{identifier}/statuses/{id}/activity",
        (ctx, { identifier, id }) => {
            const st = store.statuses.get(id);
            if (!st || !st.local || st.author !== identifier) return null;
            return createOf(ctx, st);
        }
    );

    federation
        .setOutboxDispatcher("/users/{identifier}/outbox", (ctx, identifier, cursor) => {
            const a = store.locals.get(identifier);
            if (!a || cursor === null) return a ? { items: [] } : null;
            const start = Number.parseInt(cursor, 10) || 0;
            const newest = a.posts.slice().reverse();
            const items = newest
                .slice(start, start + PAGE)
                .map((id) => store.statuses.get(id))
                .filter((st) => st)
                .map((st) => createOf(ctx, st));
            const next = start + PAGE < newest.length ? String(start + PAGE) : null;
            return { items, nextCursor: next };
        })
        .setCounter((ctx, identifier) => store.locals.get(identifier)?.posts.length ?? null)
        .setFirstCursor(() => "0");

    federation
        .setFollowersDispatcher("/users/{identifier}/followers", (ctx, identifier) => {
            const a = store.locals.get(identifier);
            if (!a) return null;
            const items = [];
            for (const uri of a.followers.keys()) {
                const r = store.remotes.get(uri);
                items.push({
                    id: new URL(uri),
                    inboxId: r?.inbox ? new URL(r.inbox) : null,
                    endpoints: r?.sharedInbox ? { sharedInbox: new URL(r.sharedInbox) } : null,
                });
            }
            return { items };
        })
        .setCounter((ctx, identifier) => store.locals.get(identifier)?.followers.size ?? null);

    federation
        .setFollowingDispatcher("/users/{identifier}/following", (ctx, identifier) => {
            const a = store.locals.get(identifier);
            if (!a) return null;
            const items = [];
            for (const [uri, f] of a.following) if (f.state === "accepted") items.push(new URL(uri));
            return { items };
        })
        .setCounter((ctx, identifier) => {
            const a = store.locals.get(identifier);
            if (!a) return null;
            let n = 0;
            for (const f of a.following.values()) if (f.state === "accepted") n++;
            return n;
        });

    federation.setNodeInfoDispatcher("/nodeinfo/2.1", () => ({
        software: {
            name: "flood-target",
            version: { major: 0, minor: 1, patch: 0, build: [], prerelease: [] },
        },
        protocols: ["activitypub"],
        usage: {
            users: { total: store.locals.size, activeMonth: store.locals.size },
            localPosts: store.counts().local_posts,
            localComments: 0,
        },
        openRegistrations: false,
    }));

    federation
        .setInboxListeners("/users/{identifier}/inbox", "/inbox")
        .on(Activity, async (ctx, activity) => {
            /* The JSON as received (Fedify keeps it), read by the workers as servers do. */
            let raw = null;
            try {
                raw = await activity.toJsonLd();
            } catch {
                raw = null;
            }
            queue.push(activityKind(activity, raw), { activity, raw, recipient: ctx.recipient });
        })
        .onError((ctx, error) => {
            /* A body that is not JSON is logged with its verdict by the HTTP layer. */
            if (!(error instanceof SyntaxError)) log(`inbox: ${error?.message ?? error}`);
        });

    const context = federation.createContext(new URL(origin.webOrigin), undefined);
    return { federation, context, kv: memory };
}

/* A local status as a Note, or a Question when it carries a poll (served at the same id). */
export function noteOf(ctx, st) {
    const actor = ctx.getActorUri(st.author);
    const values = {
        id: new URL(st.uri),
        attribution: actor,
        content: st.content,
        url: new URL(st.uri),
        published: instant(st.createdAt),
        to: PUBLIC_COLLECTION,
        ccs: [ctx.getFollowersUri(st.author), ...st.mentions.map((m) => new URL(m))],
        tags: st.mentions.map((m) => new Mention({ href: new URL(m) })),
    };
    if (!st.poll) return new Note(values);
    const options = st.poll.options.map(
        (o) => new Note({ name: o.title, replies: new Collection({ totalItems: o.votes }) })
    );
    return new Question({
        ...values,
        ...(st.poll.multiple ? { inclusiveOptions: options } : { exclusiveOptions: options }),
        endTime: st.poll.expiresAt ? instant(new Date(st.poll.expiresAt)) : null,
        voters: st.poll.voters.size,
    });
}

export function createOf(ctx, st) {
    const note = noteOf(ctx, st);
    return new Create({
        id: new URL(`${st.uri}/activity`),
        actor: ctx.getActorUri(st.author),
        object: note,
        published: instant(st.createdAt),
        to: PUBLIC_COLLECTION,
        ccs: note.ccIds,
    });
}

/* A Recipient for Fedify's sendActivity from a remote account record. */
export function recipientOf(r) {
    return {
        id: new URL(r.uri),
        inboxId: new URL(r.inbox),
        endpoints: r.sharedInbox ? { sharedInbox: new URL(r.sharedInbox) } : null,
    };
}

/* Sends a Follow from local account a to remote account r; following shows pending until
 * the Accept arrives. */
export async function sendFollow(ctx, store, stats, a, r) {
    const id = `${a.uri}#follows/${randomUUID()}`;
    a.following.set(r.uri, { followId: id, state: "pending" });
    store.sentFollows.set(id, { username: a.username, target: r.uri });
    const follow = new Follow({ id: new URL(id), actor: new URL(a.uri), object: new URL(r.uri) });
    stats.deliveries.queued.Follow = (stats.deliveries.queued.Follow ?? 0) + 1;
    await ctx.sendActivity({ identifier: a.username }, recipientOf(r), follow);
}

/* Sends Undo(Follow) for a follow a sent to r, and forgets it. */
export async function sendUnfollow(ctx, store, stats, a, r) {
    const f = a.following.get(r.uri);
    if (!f) return;
    a.following.delete(r.uri);
    store.sentFollows.delete(f.followId);
    const follow = new Follow({
        id: new URL(f.followId),
        actor: new URL(a.uri),
        object: new URL(r.uri),
    });
    const undo = new Undo({
        id: new URL(`${a.uri}#undo/${randomUUID()}`),
        actor: new URL(a.uri),
        object: follow,
    });
    stats.deliveries.queued.Undo = (stats.deliveries.queued.Undo ?? 0) + 1;
    await ctx.sendActivity({ identifier: a.username }, recipientOf(r), undo);
}

/* Creates a local status for account a and delivers it to a's followers and to every
 * mentioned remote account. mentions: remote account records. poll: null or
 * {options: [titles], multiple, expiresInS}. */
export async function postStatus(ctx, store, stats, a, text, visibility, mentions, poll = null) {
    const id = store.newId();
    const st = store.addStatus({
        id,
        uri: `${a.uri}/statuses/${id}`,
        local: true,
        author: a.username,
        accountId: a.id,
        content: `<p>${escapeHtml(text)}</p>`,
        createdAt: new Date(),
        visibility,
        mentions: mentions.map((r) => r.uri),
        inReplyTo: null,
        poll: poll && {
            multiple: poll.multiple,
            options: poll.options.map((title) => ({ title, votes: 0 })),
            votersCount: 0,
            expiresAt: Date.now() + poll.expiresInS * 1000,
            closed: false,
            voters: new Map(), /* actor uri -> Set of option indexes */
        },
    });
    store.pushHome(a, st.id);
    const create = createOf(ctx, st);
    if (a.followers.size > 0) {
        stats.deliveries.queued.Create = (stats.deliveries.queued.Create ?? 0) + 1;
        await ctx.sendActivity({ identifier: a.username }, "followers", create, {
            preferSharedInbox: true,
        });
    }
    const others = mentions.filter((r) => r.inbox && !a.followers.has(r.uri));
    if (others.length > 0) {
        stats.deliveries.queued.Create = (stats.deliveries.queued.Create ?? 0) + 1;
        await ctx.sendActivity({ identifier: a.username }, others.map(recipientOf), create, {
            preferSharedInbox: true,
        });
    }
    return st;
}

export function escapeHtml(s) {
    return s.replace(/[&<>"']/g, (c) =>
        ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]
    );
}

export function sendAccept(ctx, stats, a, follower, follow) {
    const accept = new Accept({
        id: new URL(`${a.uri}#accepts/${randomUUID()}`),
        actor: new URL(a.uri),
        object: follow,
    });
    stats.deliveries.queued.Accept = (stats.deliveries.queued.Accept ?? 0) + 1;
    return ctx.sendActivity({ identifier: a.username }, follower, accept);
}

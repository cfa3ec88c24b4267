// The work an activity leaves behind once it is stored, as a real server queues it: media
// downloads, link-card crawls, reply parents, announced objects and actor refetches. Each
// kind of work goes to its own pool (media, link, fetch); run(item) does one job.
import { Object as APObject, isActor } from "@fedify/fedify";
import { ACTOR_TYPES, hasType, imageUrlOf, parsePost } from "./apjson.mjs";
import { AP_ACCEPT, DOC_MAX, parseJsonObject } from "./fetcher.mjs";
import { firstLink, parseOpenGraph } from "./linkcard.mjs";
import { mediaClass, sniff } from "./media.mjs";
import { bump } from "./stats.mjs";

const MEDIA_TTL_MS = 24 * 3600 * 1000;
const DOC_TTL_MS = 5 * 60 * 1000; /* as Fedify's document cache */
const EMOJI_MAX = 256 * 1024; /* Mastodon's custom emoji limit */
const REMOTE_TTL_MS = 24 * 3600 * 1000;
const ok = { verdict: "ok" };
const ignored = (reason) => ({ verdict: "ignored", reason });
const failed = (reason) => ({ verdict: "failed", reason });

function hostOf(u) {
    try {
        return new URL(u).host;
    } catch {
        return null;
    }
}

/* pools: {media, link, fetch} WorkQueues whose handler is run(). kv: Fedify's KvStore,
 * to forget a refetched actor's cached document and key. */
export function makeFollowups({ store, stats, ctx, fetcher, pools, mediaMaxBytes, replyDepth, kv, log }) {
    function push(pool, type, payload) {
        if (!pools[pool].push(type, payload)) bump(stats.objects.rejected, `${pool}-queue-full`);
    }

    /* Records a Fedify actor as a remote account; a new one gets its avatar and header
     * downloaded, as Mastodon does when it first sees an account. */
    async function remember(actor) {
        let raw = null;
        try {
            raw = await actor.toJsonLd();
        } catch {
            raw = null;
        }
        const r = store.upsertRemote(actor, { avatar: imageUrlOf(raw?.icon), header: imageUrlOf(raw?.image) });
        if (r.isNew) profileImages(r);
        return r;
    }

    function profileImages(r) {
        if (r.avatar) push("media", "avatar", { url: r.avatar, account: r.uri });
        if (r.header) push("media", "header", { url: r.header, account: r.uri });
    }

    /* The remote account of uri: held and fresh, else fetched through Fedify's (caching)
     * document loader. null when it cannot be had. */
    async function account(uri) {
        const known = store.remotes.get(uri);
        if (known && Date.now() - known.fetchedAt < REMOTE_TTL_MS) return known;
        let actor;
        try {
            actor = await ctx.lookupObject(uri);
        } catch {
            return null;
        }
        if (!actor || !isActor(actor) || actor.id?.href !== uri) return null;
        return remember(actor);
    }

    /* Stores a remote post (from lib/apjson.mjs parsePost) by account; returns the status. */
    function storePost(post, acc) {
        const held = store.statusOfUri(post.id);
        if (held) return held;
        acc.statuses++;
        const pub = [...post.to, ...post.cc].includes("https://www.w3.org/ns/activitystreams#Public");
        const poll = post.poll && {
            multiple: post.poll.multiple,
            options: post.poll.options.map((o) => ({ title: o.title, votes: o.votes })),
            votersCount: post.poll.votersCount,
            expiresAt: post.poll.endTime ? Date.parse(post.poll.endTime) || null : null,
            closed: post.poll.closed,
            voters: new Map(),
        };
        return store.addStatus({
            uri: post.id,
            url: post.url ?? post.id,
            local: false,
            author: acc.uri,
            accountId: acc.id,
            content: post.content,
            spoiler: post.summary ?? "",
            createdAt: post.published ?? new Date(),
            visibility: pub ? "public" : "direct",
            mentions: post.mentions.filter((u) => store.localByUri(u)),
            inReplyTo: post.inReplyTo,
            poll,
        });
    }

    /* Queues what a stored post needs: its attachments (the first 4), its custom emoji, a
     * link card for a post without media, and its parent when unknown, up to replyDepth
     * parents above the post that came in (depth: how far above it st is). */
    function afterPost(st, post, depth) {
        media(st, post.attachments);
        emoji(st, post.emojis);
        if (post.attachmentsSkipped > 0) stats.media.skipped_over_4 += post.attachmentsSkipped;
        linkCard(st, post);
        if (post.inReplyTo && !store.statusOfUri(post.inReplyTo)) {
            if (depth < replyDepth) push("fetch", "parent", { url: post.inReplyTo, depth: depth + 1 });
            else stats.objects.depth_limited++;
        }
    }

    /* After an edit: new attachments, emoji and a changed first link are fetched. */
    function afterEdit(st, post) {
        const had = new Map(st.attachments.map((a) => [a.url, a]));
        const fresh = post.attachments.filter((a) => !had.has(a.url));
        st.attachments = post.attachments.filter((a) => had.has(a.url)).map((a) => had.get(a.url));
        media(st, fresh);
        const known = new Set(st.emojis.map((e) => e.url));
        emoji(st, post.emojis.filter((e) => !known.has(e.url)));
        const link = post.attachments.length === 0 ? pickLink(post) : null;
        if (link && link !== st.card?.url) linkCard(st, post);
    }

    function media(st, attachments) {
        for (const a of attachments) {
            const rec = { ...a, state: "pending" };
            st.attachments.push(rec);
            if (a.mediaType && mediaClass(a.mediaType) === null) {
                /* Mastodon keeps the remote URL of an unsupported type and downloads nothing. */
                rec.state = "unsupported";
                stats.media.unsupported_type++;
                continue;
            }
            push("media", "attachment", { url: a.url, mediaType: a.mediaType, statusId: st.id });
        }
    }

    function emoji(st, emojis) {
        const seen = new Set();
        for (const e of emojis) {
            if (seen.has(e.shortcode)) continue;
            seen.add(e.shortcode);
            st.emojis.push(e);
            push("media", "emoji", { url: e.url, mediaType: null });
        }
    }

    function pickLink(post) {
        const skip = new Set([post.id, post.url, ...post.mentions, ...post.hashtags.map((h) => h.href)]);
        return firstLink(post.content, skip);
    }

    function linkCard(st, post) {
        const link = pickLink(post);
        if (!link) return;
        if (post.attachments.length > 0) {
            stats.linkCards.skipped_media++; /* Mastodon makes no card for a post with media */
            return;
        }
        push("link", "link_card", { url: link, statusId: st.id });
    }

    /* One download: the facts about url's bytes, kept in the fetch cache. */
    async function download(url, maxBytes) {
        const r = await fetcher.get(url, { accept: "image/*, */*;q=0.8", maxBytes });
        const definite = r.status >= 400 && r.status < 500;
        if (r.error === "too_large") return { cacheable: true, verdict: "too_large", size: r.size };
        if (r.error) return { cacheable: definite, verdict: "failed", reason: r.error };
        return { cacheable: true, verdict: "ok", size: r.size, sniffed: sniff(r.body), type: r.type };
    }

    async function mediaJob(purpose, { url, mediaType, statusId, account: owner }) {
        const m = stats.media;
        m.jobs++;
        bump(m.by_purpose, purpose);
        const max = purpose === "emoji" ? Math.min(EMOJI_MAX, mediaMaxBytes) : mediaMaxBytes;
        const { value, hit } = await fetcher.memo(`media ${url}`, MEDIA_TTL_MS, () => download(url, max));
        if (hit) m.cache_hits++;
        let state = value.verdict;
        if (value.verdict === "ok") {
            if (!hit) {
                m.downloaded++;
                m.bytes += value.size;
            }
            /* The declared type decides; without one, the answer's Content-Type. */
            const cls = mediaClass(mediaType || value.type);
            if (cls === null) state = "unsupported_type";
            else if (cls !== "octet" && value.sniffed !== cls) state = "type_mismatch";
        }
        if (state === "too_large") m.too_large++;
        else if (state === "failed") m.failed++;
        else if (state === "type_mismatch") m.type_mismatch++;
        else if (state === "unsupported_type") m.unsupported_type++;
        const st = statusId ? store.statuses.get(statusId) : null;
        if (st && purpose === "attachment") {
            const rec = st.attachments.find((a) => a.url === url && a.state === "pending");
            if (rec) rec.state = state;
        }
        if (st && purpose === "og_image" && st.card) st.card.imageState = state;
        const acc = owner ? store.remotes.get(owner) : null;
        if (acc) acc[`${purpose}State`] = state;
        if (state === "ok") return ok;
        if (state === "failed") return failed(value.reason);
        return ignored(state);
    }

    async function linkJob({ url, statusId }) {
        const l = stats.linkCards;
        l.crawled++;
        const { value } = await fetcher.memo(`page ${url}`, DOC_TTL_MS, async () => {
            const r = await fetcher.get(url, {
                accept: "text/html, application/xhtml+xml;q=0.9",
                maxBytes: DOC_MAX,
            });
            if (r.error === "too_large") return { cacheable: true, error: "too_large" };
            if (r.error) return { cacheable: r.status >= 400 && r.status < 500, error: r.error };
            if (r.type !== "text/html" && r.type !== "application/xhtml+xml")
                return { cacheable: true, error: "not_html" };
            const html = new TextDecoder("utf-8").decode(r.body);
            return { cacheable: true, card: parseOpenGraph(html, r.url) };
        });
        if (value.error === "not_html") {
            l.not_html++;
            return ignored("not_html");
        }
        if (value.error) {
            l.failed++;
            return value.error === "too_large" ? ignored("too_large") : failed(value.error);
        }
        const { card } = value;
        if (!card.title && !card.image) {
            l.no_og++;
            return ignored("no_og");
        }
        l.cards++;
        const st = store.statuses.get(statusId);
        if (st) st.card = { url, ...card, imageState: card.image ? "pending" : null };
        if (card.image) push("media", "og_image", { url: card.image, mediaType: null, statusId });
        return ok;
    }

    /* The post at url, fetched (signed) and checked: {post, account} or {reason}. */
    async function fetchPost(url) {
        if (store.tombstones.has(url)) return { reason: "deleted" };
        const { value } = await fetcher.memo(`doc ${url}`, DOC_TTL_MS, async () => {
            const r = await fetcher.get(url, { accept: AP_ACCEPT, maxBytes: DOC_MAX, sign: true });
            if (r.error === "too_large") return { cacheable: true, reason: "too_large" };
            if (r.error) return { cacheable: false, reason: r.status ? `http-${r.status}` : r.error };
            const json = parseJsonObject(r.body);
            return json ? { cacheable: true, json, cost: 2 * r.size } : { cacheable: true, reason: "bad-json" };
        });
        if (value.reason) return value;
        const post = parsePost(value.json);
        if (post.reason) return post;
        /* Mastodon: the object must come from the host it was asked of, and so its author. */
        if (hostOf(post.id) !== hostOf(url)) return { reason: "id-mismatch" };
        if (!post.attributedTo || hostOf(post.attributedTo) !== hostOf(post.id))
            return { reason: "attribution-mismatch" };
        const acc = await account(post.attributedTo);
        if (!acc) return { reason: "no-author" };
        return { post, account: acc };
    }

    async function parentJob({ url, depth }) {
        if (store.statusOfUri(url)) {
            stats.objects.parents_known++;
            return ignored("known");
        }
        const got = await fetchPost(url);
        if (got.reason) {
            bump(stats.objects.rejected, got.reason);
            return ignored(got.reason);
        }
        const st = storePost(got.post, got.account);
        stats.objects.parents_fetched++;
        afterPost(st, got.post, depth);
        return ok;
    }

    /* Counts a reblog of st by actor; a local post's author is notified. */
    function addReblog(st, actor, announceId, accountId) {
        if (st.reblogs.has(actor)) return ignored("already-reblogged");
        st.reblogs.set(actor, announceId);
        store.addRef(announceId, { kind: "reblog", statusId: st.id, actor });
        if (st.local && accountId) store.notify(store.locals.get(st.author), "reblog", accountId, st.id);
        return ok;
    }

    async function announcedJob({ url, actor, announceId, accountId }) {
        let st = store.statusOfUri(url);
        if (!st) {
            const got = await fetchPost(url);
            if (got.reason) {
                bump(stats.objects.rejected, got.reason);
                return ignored(got.reason);
            }
            st = storePost(got.post, got.account);
            stats.objects.announced_fetched++;
            afterPost(st, got.post, 0);
        }
        return addReblog(st, actor, announceId, accountId);
    }

    /* Drops what Fedify cached of an actor: its document and its key, so that the next
     * signature check fetches the key again. */
    async function forgetActor(uri, keyIds = []) {
        const ids = new Set([uri, `${uri}#main-key`, ...keyIds]);
        for (const id of ids) {
            await kv.delete(["_fedify", "remoteDocument", id]);
            await kv.delete(["_fedify", "publicKey", id]);
        }
    }

    /* Update(Person): the actor fetched again past every cache, then its images. */
    async function actorJob({ uri }) {
        const r = await fetcher.get(uri, { accept: AP_ACCEPT, maxBytes: DOC_MAX, sign: true });
        if (r.error) return failed(r.status ? `http-${r.status}` : r.error);
        const json = parseJsonObject(r.body);
        if (!json || !hasType(json, ACTOR_TYPES) || json.id !== uri) return ignored("not-the-actor");
        let actor;
        try {
            actor = await APObject.fromJsonLd(json, {
                documentLoader: ctx.documentLoader,
                contextLoader: ctx.contextLoader,
            });
        } catch {
            return ignored("bad-actor");
        }
        if (!isActor(actor)) return ignored("bad-actor");
        const keyIds = [json.publicKey]
            .flat()
            .map((k) => (typeof k === "string" ? k : k?.id))
            .filter((k) => typeof k === "string");
        await forgetActor(uri, keyIds);
        const acc = store.upsertRemote(actor, { avatar: imageUrlOf(json.icon), header: imageUrlOf(json.image) });
        stats.objects.actors_refetched++;
        profileImages(acc);
        return ok;
    }

    async function run(item) {
        const p = item.payload;
        switch (item.type) {
            case "attachment":
            case "og_image":
            case "emoji":
            case "avatar":
            case "header":
                return mediaJob(item.type, p);
            case "link_card":
                return linkJob(p);
            case "parent":
                return parentJob(p);
            case "announced":
                return announcedJob(p);
            case "actor":
                return actorJob(p);
            default:
                log(`followup: unknown job ${item.type}`);
                return ignored("unknown-job");
        }
    }

    return { run, push, remember, account, storePost, afterPost, afterEdit, addReblog, forgetActor };
}

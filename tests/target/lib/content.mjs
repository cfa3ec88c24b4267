// What an inbox worker does with activities about posts: Create (posts, polls, votes),
// Announce, Update (posts, polls, actors), Delete (posts, actors), emoji reactions and
// their Undo. Handlers read the activity's JSON as it came (raw) and return
// {verdict, reason?, sub?} where sub names what the activity was about.
import { ACTOR_TYPES, hasType, idOf, parsePost, parseReaction, statType, typeOf } from "./apjson.mjs";

const ok = (sub) => ({ verdict: "ok", sub });
const ignored = (reason, sub) => ({ verdict: "ignored", reason, sub });
const REACTIONS_MAX = 100; /* distinct emoji kept per post */

function hostOf(u) {
    try {
        return new URL(u).host;
    } catch {
        return null;
    }
}

/* remoteActor(activity) -> {account} | null: the sender, held or fetched (lib/process.mjs). */
export function makeContent({ store, followups, remoteActor }) {
    /* The object of an activity as JSON: embedded, else fetched by Fedify. */
    async function objectJson(activity, raw) {
        const o = raw?.object;
        if (o && typeof o === "object" && !Array.isArray(o) && typeOf(o)) return o;
        const obj = await activity.getObject();
        return obj ? await obj.toJsonLd() : null;
    }

    function followedLocally(actor) {
        for (const a of store.locals.values()) if (a.following.get(actor)?.state === "accepted") return true;
        return false;
    }

    async function onCreate(activity, raw) {
        const actor = activity.actorId.href;
        const obj = await objectJson(activity, raw);
        const post = parsePost(obj);
        if (post.reason) return ignored(post.reason, statType(obj));
        const sub = post.type;
        const parent = post.inReplyTo ? store.statusOfUri(post.inReplyTo) : null;
        /* A vote: a Note named after an option, in reply to a poll (Mastodon, GoToSocial). */
        if (post.name && parent?.poll && post.type === "Note") return vote(activity, post, parent);
        if (store.tombstones.has(post.id)) return ignored("deleted-first", sub);
        if (store.statusOfUri(post.id)) return ignored("duplicate-object", sub);
        if (post.attributedTo && post.attributedTo !== actor) return ignored("attribution-mismatch", sub);
        if (hostOf(post.id) !== hostOf(actor)) return ignored("origin-mismatch", sub);
        const mentioned = new Set(post.mentions);
        const audience = new Set([...post.to, ...post.cc]);
        const recipients = [];
        for (const a of store.locals.values()) {
            const f = a.following.get(actor);
            if ((f && f.state === "accepted") || mentioned.has(a.uri) || audience.has(a.uri))
                recipients.push(a);
            else if (parent?.local && parent.author === a.username) recipients.push(a);
        }
        /* Mastodon drops a post nobody local follows, is addressed by or is replied to. */
        if (recipients.length === 0) return ignored("unrelated", sub);
        const sender = await remoteActor(activity);
        if (!sender) return ignored("no-actor", sub);
        const st = followups.storePost(post, sender.account);
        for (const a of recipients) {
            store.pushHome(a, st.id);
            if (mentioned.has(a.uri)) store.notify(a, "mention", sender.account.id, st.id);
        }
        followups.afterPost(st, post, 0);
        return ok(sub);
    }

    async function vote(activity, post, st) {
        const voter = activity.actorId.href;
        if (!st.local) return ignored("not-local-poll", "vote");
        if (post.attributedTo && post.attributedTo !== voter) return ignored("attribution-mismatch", "vote");
        const poll = st.poll;
        if (poll.expiresAt && Date.now() > poll.expiresAt) return ignored("poll-closed", "vote");
        const i = poll.options.findIndex((o) => o.title === post.name);
        if (i < 0) return ignored("no-such-option", "vote");
        let mine = poll.voters.get(voter);
        if (mine && (!poll.multiple || mine.has(i))) return ignored("already-voted", "vote");
        const sender = await remoteActor(activity);
        if (!sender) return ignored("no-actor", "vote");
        if (!mine) poll.voters.set(voter, (mine = new Set()));
        mine.add(i);
        poll.options[i].votes++;
        return ok("vote");
    }

    async function onAnnounce(activity, raw) {
        const actor = activity.actorId.href;
        const url = idOf(raw?.object) ?? activity.objectId?.href ?? null;
        if (!url) return ignored("no-object", "none");
        const st = store.statusOfUri(url);
        const sub = st?.local ? "local" : st ? "known" : "unknown";
        const audience = [raw?.to, raw?.cc].flat().map(idOf);
        const addressed = [...store.locals.values()].some((a) => audience.includes(a.uri));
        /* Mastodon takes an Announce of a local post, or from an account followed here. */
        if (!st?.local && !followedLocally(actor) && !addressed) return ignored("unrelated", sub);
        const sender = await remoteActor(activity);
        if (!sender) return ignored("no-actor", sub);
        const announceId = activity.id?.href ?? null;
        if (st) {
            const r = followups.addReblog(st, actor, announceId, sender.account.id);
            return { ...r, sub };
        }
        if (store.tombstones.has(url)) return ignored("deleted", sub);
        followups.push("fetch", "announced", { url, actor, announceId, accountId: sender.account.id });
        return ok(sub);
    }

    async function onUpdate(activity, raw) {
        const actor = activity.actorId.href;
        const o = raw?.object;
        const embedded = o && typeof o === "object" && !Array.isArray(o) ? o : null;
        const id = idOf(o);
        if (hasType(embedded, ACTOR_TYPES) || (!embedded && id === actor)) {
            const sub = embedded ? statType(embedded) : "actor";
            if (id !== actor) return ignored("actor-mismatch", sub);
            /* Held or not, the account is refreshed: its signature was just verified. */
            followups.push("fetch", "actor", { uri: actor });
            return ok(sub);
        }
        const obj = await objectJson(activity, raw);
        const post = parsePost(obj);
        if (post.reason) return ignored(post.reason, statType(obj));
        const st = store.statusOfUri(post.id);
        if (!st) return ignored("unknown-object", post.type);
        if (st.local || st.author !== actor) return ignored("actor-mismatch", post.type);
        st.content = post.content;
        st.spoiler = post.summary ?? "";
        st.editedAt = new Date();
        st.edits = (st.edits ?? 0) + 1;
        if (post.poll && st.poll) {
            for (const o2 of post.poll.options) {
                const mine = st.poll.options.find((x) => x.title === o2.title);
                if (mine) mine.votes = o2.votes;
            }
            st.poll.votersCount = post.poll.votersCount;
            st.poll.closed = post.poll.closed;
        }
        followups.afterEdit(st, post);
        return ok(post.type);
    }

    async function onDelete(activity, raw) {
        const actor = activity.actorId.href;
        const o = raw?.object;
        const id = idOf(o) ?? activity.objectId?.href ?? null;
        if (!id) return ignored("no-object", "none");
        if (id === actor || hasType(o, ACTOR_TYPES)) {
            if (id !== actor) return ignored("actor-mismatch", "actor");
            const removed = store.removeRemote(actor);
            await followups.forgetActor(actor);
            if (removed < 0) return ignored("unknown-actor", "actor");
            return ok("actor");
        }
        const sub = o && typeof o === "object" ? statType(o) : "id";
        const st = store.statusOfUri(id);
        if (!st) {
            /* Mastodon keeps a tombstone so that the Create, if it comes late, is dropped. */
            if (hostOf(id) === hostOf(actor)) store.tombstone(id);
            return ignored("unknown-object", sub);
        }
        if (st.local || st.author !== actor) return ignored("actor-mismatch", sub);
        store.removeStatus(st.id);
        store.tombstone(id);
        const acc = store.remotes.get(actor);
        if (acc && acc.statuses > 0) acc.statuses--;
        return ok(sub);
    }

    /* EmojiReact (Pleroma), EmojiReaction and Like with _misskey_reaction (Misskey). */
    async function onReact(activity, raw) {
        const actor = activity.actorId.href;
        const r = parseReaction(raw);
        if (r.reason) return ignored(r.reason, "none");
        const sub = r.custom ? "custom" : "unicode";
        const st = store.statusOfUri(idOf(raw?.object) ?? activity.objectId?.href ?? "");
        if (!st) return ignored("unknown-object", sub);
        let who = st.reactions.get(r.emoji);
        if (who?.has(actor)) return ignored("already-reacted", sub);
        if (!who && st.reactions.size >= REACTIONS_MAX) return ignored("too-many-reactions", sub);
        const sender = await remoteActor(activity);
        if (!sender) return ignored("no-actor", sub);
        if (!who) st.reactions.set(r.emoji, (who = new Map()));
        const id = activity.id?.href ?? null;
        who.set(actor, id);
        store.addRef(id, { kind: "reaction", statusId: st.id, actor, emoji: r.emoji });
        if (r.custom) followups.push("media", "emoji", { url: r.custom.url, mediaType: null });
        if (st.local) {
            store.notify(store.locals.get(st.author), "pleroma:emoji_reaction", sender.account.id, st.id);
        }
        return ok(sub);
    }

    function unreact(st, actor, emoji) {
        const who = st?.reactions.get(emoji);
        if (!who || !who.delete(actor)) return false;
        if (who.size === 0) st.reactions.delete(emoji);
        return true;
    }

    /* Undo of an Announce or a reaction, embedded (inner) or by id. Returns a verdict, or
     * null when the Undo is about something else. */
    function undoContent(actor, inner, id) {
        if (!inner && id) {
            const ref = store.refs.get(id);
            if (!ref) return null;
            if (ref.actor !== actor) return ignored("actor-mismatch", ref.kind === "reblog" ? "Announce" : "EmojiReact");
            const st = store.statuses.get(ref.statusId);
            store.refs.delete(id);
            if (ref.kind === "reblog") {
                return st && st.reblogs.delete(actor) ? ok("Announce") : ignored("not-reblogged", "Announce");
            }
            return unreact(st, actor, ref.emoji) ? ok("EmojiReact") : ignored("not-reacted", "EmojiReact");
        }
        const type = typeOf(inner);
        const react =
            type === "EmojiReact" || type === "EmojiReaction" || (type === "Like" && inner._misskey_reaction != null);
        if (type !== "Announce" && !react) return null;
        const sub = react ? "EmojiReact" : "Announce";
        const innerActor = idOf(inner.actor);
        if (innerActor && innerActor !== actor) return ignored("actor-mismatch", sub);
        const st = store.statusOfUri(idOf(inner.object) ?? "");
        if (idOf(inner)) store.refs.delete(idOf(inner));
        if (!react) return st && st.reblogs.delete(actor) ? ok(sub) : ignored("not-reblogged", sub);
        const r = parseReaction(inner);
        if (r.reason) return ignored(r.reason, sub);
        return unreact(st, actor, r.emoji) ? ok(sub) : ignored("not-reacted", sub);
    }

    return { onCreate, onAnnounce, onUpdate, onDelete, onReact, undoContent };
}

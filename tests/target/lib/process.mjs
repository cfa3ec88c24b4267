// What an inbox worker does with one verified activity. Each handler returns
// {verdict: "ok"} or {verdict: "ignored", reason}, or throws (counted as failed).
import {
    Accept,
    Announce,
    Article,
    Create,
    Delete,
    Follow,
    Like,
    Mention,
    Note,
    PUBLIC_COLLECTION,
    Question,
    Reject,
    Undo,
    Update,
} from "@fedify/fedify";
import { recipientOf, sendAccept } from "./federation.mjs";

const ok = { verdict: "ok" };
const REMOTE_TTL_MS = 24 * 3600 * 1000;
const ignored = (reason) => ({ verdict: "ignored", reason });

export function makeProcessor({ store, stats, context: ctx }) {
    /* The sender as a remote account: from the store when known (as a server keeps
     * accounts in its database), else fetched through Fedify's document loader. */
    async function remoteActor(activity) {
        const known = store.remotes.get(activity.actorId.href);
        if (known && known.inbox && Date.now() - known.fetchedAt < REMOTE_TTL_MS)
            return { account: known };
        const actor = await activity.getActor();
        if (!actor || !actor.id) return null;
        if (actor.id.href !== activity.actorId.href) return null;
        return { account: store.upsertRemote(actor) };
    }

    function localOf(uri) {
        if (!uri) return null;
        const parsed = ctx.parseUri(uri);
        if (parsed?.type !== "actor") return null;
        return store.locals.get(parsed.identifier) ?? null;
    }

    async function onCreate(activity) {
        const object = await activity.getObject();
        if (!(object instanceof Note || object instanceof Article || object instanceof Question))
            return ignored("unsupported-object");
        if (!object.id) return ignored("no-object-id");
        if (store.statusOfUri(object.id.href)) return ignored("duplicate-object");
        if (object.attributionId && object.attributionId.href !== activity.actorId?.href)
            return ignored("attribution-mismatch");
        const mentioned = new Set();
        for await (const tag of object.getTags()) {
            if (tag instanceof Mention && tag.href) mentioned.add(tag.href.href);
        }
        const audience = [...object.toIds, ...object.ccIds].map((u) => u.href);
        const author = activity.actorId.href;
        const recipients = [];
        for (const a of store.locals.values()) {
            const f = a.following.get(author);
            if ((f && f.state === "accepted") || mentioned.has(a.uri) || audience.includes(a.uri))
                recipients.push(a);
        }
        /* Mastodon drops a post nobody local follows or is addressed by. */
        if (recipients.length === 0) return ignored("unrelated");
        const sender = await remoteActor(activity);
        if (!sender) return ignored("no-actor");
        sender.account.statuses++;
        const pub = audience.includes(PUBLIC_COLLECTION.href);
        const st = store.addStatus({
            uri: object.id.href,
            url: object.url instanceof URL ? object.url.href : object.id.href,
            local: false,
            author,
            accountId: sender.account.id,
            content: object.content?.toString() ?? "",
            createdAt: object.published
                ? new Date(object.published.epochMilliseconds)
                : new Date(),
            visibility: pub ? "public" : "direct",
            mentions: [...mentioned].filter((u) => localOf(u)),
            inReplyTo: object.replyTargetId?.href ?? null,
        });
        for (const a of recipients) {
            store.pushHome(a, st.id);
            if (mentioned.has(a.uri)) store.notify(a, "mention", sender.account.id, st.id);
        }
        return ok;
    }

    async function onLike(activity) {
        const st = activity.objectId && store.statusOfUri(activity.objectId.href);
        if (!st) return ignored("unknown-object");
        const actor = activity.actorId.href;
        if (st.favourites.has(actor)) return ignored("already-liked");
        st.favourites.add(actor);
        if (st.local) {
            const sender = await remoteActor(activity);
            if (sender) store.notify(store.locals.get(st.author), "favourite", sender.account.id, st.id);
        }
        return ok;
    }

    async function onFollow(activity) {
        const a = localOf(activity.objectId);
        if (!a) return ignored("not-local-actor");
        const sender = await remoteActor(activity);
        if (!sender) return ignored("no-actor");
        if (!sender.account.inbox) return ignored("no-inbox");
        const uri = sender.account.uri;
        const known = a.followers.has(uri);
        a.followers.set(uri, { followId: activity.id?.href ?? null });
        if (!known) store.notify(a, "follow", sender.account.id);
        /* Embed the Follow as received, by ids: the actor fetched above would otherwise be
         * embedded whole, and some servers read object.actor as a string. */
        const follow = new Follow({
            id: activity.id,
            actor: activity.actorId,
            object: activity.objectId,
        });
        await sendAccept(ctx, stats, a, recipientOf(sender.account), follow);
        return ok;
    }

    /* The follow relation named by an Undo's or Accept's object, as an id or embedded. */
    function followersEntryById(id) {
        for (const a of store.locals.values()) {
            for (const [uri, f] of a.followers) if (f.followId === id) return { a, uri };
        }
        return null;
    }

    async function onUndo(activity) {
        const actor = activity.actorId?.href;
        const id = activity.objectId?.href;
        if (id) {
            const e = followersEntryById(id);
            if (e) {
                if (e.uri !== actor) return ignored("actor-mismatch");
                e.a.followers.delete(e.uri);
                return ok;
            }
        }
        const inner = await activity.getObject();
        if (!inner) return ignored("no-object");
        if (inner.actorId?.href !== actor) return ignored("actor-mismatch");
        if (inner instanceof Follow) {
            const a = localOf(inner.objectId);
            if (!a || !a.followers.delete(actor)) return ignored("not-following");
            return ok;
        }
        if (inner instanceof Like) {
            const st = inner.objectId && store.statusOfUri(inner.objectId.href);
            if (!st || !st.favourites.delete(actor)) return ignored("not-liked");
            return ok;
        }
        return ignored("unsupported-undo");
    }

    /* Accept or Reject of a Follow this target sent. */
    async function onAnswer(activity, accepted) {
        let f = activity.objectId ? store.sentFollows.get(activity.objectId.href) : null;
        if (!f && !activity.objectId?.href.startsWith(ctx.canonicalOrigin)) {
            const obj = await activity.getObject();
            if (obj instanceof Follow && obj.id) f = store.sentFollows.get(obj.id.href);
        }
        if (!f) return ignored("unknown-follow");
        if (f.target !== activity.actorId?.href) return ignored("actor-mismatch");
        const a = store.locals.get(f.username);
        const rel = a?.following.get(f.target);
        if (!rel) return ignored("unknown-follow");
        if (accepted) {
            rel.state = "accepted";
        } else {
            a.following.delete(f.target);
            store.sentFollows.delete(rel.followId);
        }
        return ok;
    }

    async function onDelete(activity) {
        const id = activity.objectId?.href;
        const st = id && store.statusOfUri(id);
        if (!st) return ignored("unknown-object");
        if (st.local || st.author !== activity.actorId?.href) return ignored("actor-mismatch");
        store.removeStatus(st.id);
        return ok;
    }

    async function onUpdate(activity) {
        const id = activity.objectId?.href;
        const st = id && store.statusOfUri(id);
        if (!st) return ignored("unknown-object");
        if (st.local || st.author !== activity.actorId?.href) return ignored("actor-mismatch");
        const obj = await activity.getObject();
        if (obj instanceof Note && obj.content) st.content = obj.content.toString();
        return ok;
    }

    return async function process(item) {
        const { activity } = item.payload;
        if (!activity.actorId) return ignored("no-actor");
        if (activity instanceof Create) return onCreate(activity);
        if (activity instanceof Like) return onLike(activity);
        if (activity instanceof Follow) return onFollow(activity);
        if (activity instanceof Undo) return onUndo(activity);
        if (activity instanceof Accept) return onAnswer(activity, true);
        if (activity instanceof Reject) return onAnswer(activity, false);
        if (activity instanceof Delete) return onDelete(activity);
        if (activity instanceof Update) return onUpdate(activity);
        if (activity instanceof Announce) return ok; /* counted only */
        return ignored("unsupported-type");
    };
}

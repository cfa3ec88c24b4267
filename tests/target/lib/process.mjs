// What an inbox worker does with one verified activity. Each handler returns
// {verdict: "ok"} or {verdict: "ignored", reason}, or throws (counted as failed); sub, when
// given, names what the activity was about (in /stats activities.TYPE.by_object).
import { Follow } from "@fedify/fedify";
import { idOf, statType, typeOf } from "./apjson.mjs";
import { makeContent } from "./content.mjs";
import { recipientOf, sendAccept } from "./federation.mjs";

const ok = { verdict: "ok" };
const REMOTE_TTL_MS = 24 * 3600 * 1000;
const ignored = (reason, sub) => ({ verdict: "ignored", reason, sub });

export function makeProcessor({ store, stats, context: ctx, followups, ignoreRepeatFollow }) {
    /* The sender as a remote account: from the store when known (as a server keeps
     * accounts in its database), else fetched through Fedify's document loader. */
    async function remoteActor(activity) {
        const known = store.remotes.get(activity.actorId.href);
        if (known && known.inbox && Date.now() - known.fetchedAt < REMOTE_TTL_MS)
            return { account: known };
        const actor = await activity.getActor();
        if (!actor || !actor.id) return null;
        if (actor.id.href !== activity.actorId.href) return null;
        return { account: await followups.remember(actor) };
    }

    const content = makeContent({ store, followups, remoteActor });

    function localOf(uri) {
        if (!uri) return null;
        /* Fedify's parseUri takes a URL: an embedded object's id comes as a string (an
         * Undo's Follow), which it would never match */
        if (typeof uri === "string") {
            try {
                uri = new URL(uri);
            } catch {
                return null;
            }
        }
        const parsed = ctx.parseUri(uri);
        if (parsed?.type !== "actor") return null;
        return store.locals.get(parsed.identifier) ?? null;
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
        /* A Follow from an actor that already follows. Mastodon (ActivityPub::Activity::Follow,
         * "Fast-forward repeat follow requests"), Misskey (UserFollowingService.follow: the
         * duplicate insert is ignored, the Accept still delivered), GoToSocial
         * (AcceptFollowRequest: ON CONFLICT the follow's URI replaced, then an Accept) and
         * Pleroma/Akkoma (SideEffects' Follow: User.follow succeeds, an Accept is built) answer
         * again; Hackers' Pub, on Fedify (federation/inbox/following.ts onFollowed: insert ...
         * onConflictDoNothing, no row, return) sends nothing. --ignore-repeat-follow does as
         * the latter: the first Follow's relation is kept and no Accept goes out. */
        if (known && ignoreRepeatFollow) return ignored("already-following", "Follow");
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

    /* Undo of a Follow, a Like, an Announce or a reaction: embedded (as Mastodon requires
     * for a Like) or by id when the target knows the id. */
    async function onUndo(activity, raw) {
        const actor = activity.actorId.href;
        const o = raw?.object;
        const inner = o && typeof o === "object" && !Array.isArray(o) && typeOf(o) ? o : null;
        const id = idOf(o) ?? activity.objectId?.href ?? null;
        if (!inner && id) {
            const e = followersEntryById(id);
            if (e) {
                if (e.uri !== actor) return ignored("actor-mismatch", "Follow");
                e.a.followers.delete(e.uri);
                return { ...ok, sub: "Follow" };
            }
        }
        const c = content.undoContent(actor, inner, id);
        if (c) return c;
        if (!inner) return ignored("unknown-object", "id");
        const type = statType(inner);
        const innerActor = idOf(inner.actor);
        if (innerActor !== actor) return ignored("actor-mismatch", type);
        if (type === "Follow") {
            const a = localOf(idOf(inner.object));
            if (!a || !a.followers.delete(actor)) return ignored("not-following", type);
            return { ...ok, sub: type };
        }
        if (type === "Like") {
            const st = store.statusOfUri(idOf(inner.object) ?? "");
            if (!st || !st.favourites.delete(actor)) return ignored("not-liked", type);
            return { ...ok, sub: type };
        }
        return ignored("unsupported-undo", type);
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

    return async function process(item) {
        const { activity, raw } = item.payload;
        if (!activity.actorId) return ignored("no-actor");
        switch (item.type) {
            case "Create":
                return content.onCreate(activity, raw);
            case "Like":
                return onLike(activity);
            case "Follow":
                return onFollow(activity);
            case "Undo":
                return onUndo(activity, raw);
            case "Accept":
                return onAnswer(activity, true);
            case "Reject":
                return onAnswer(activity, false);
            case "Delete":
                return content.onDelete(activity, raw);
            case "Update":
                return content.onUpdate(activity, raw);
            case "Announce":
                return content.onAnnounce(activity, raw);
            case "EmojiReact":
                return content.onReact(activity, raw);
            case "Question":
                return ignored("bare-question"); /* a poll comes in a Create */
            default:
                return ignored("unsupported-type");
        }
    };
}

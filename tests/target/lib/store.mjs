// Everything the target holds, in memory: local accounts, remote accounts it has seen,
// statuses (with their media, card, poll, reblogs and reactions), home timelines,
// notifications, follow relations.
import { randomBytes } from "node:crypto";

const HOME_MAX = 800; /* Mastodon keeps 800 entries per home feed */
const NOTIFICATIONS_MAX = 800;
const REFS_MAX = 200000; /* Announce and reaction ids kept for an Undo by id */
const TOMBSTONES_MAX = 100000;

export class Store {
    /* maxStatuses bounds the statuses held: the oldest remote ones are dropped first. */
    constructor({ maxStatuses = 200000 } = {}) {
        this.maxStatuses = maxStatuses;
        this.nextId = 1;
        this.locals = new Map(); /* username -> local account */
        this.tokens = new Map(); /* bearer token -> username */
        this.accounts = new Map(); /* account id -> local or remote account */
        this.remotes = new Map(); /* actor uri -> remote account */
        this.statuses = new Map(); /* status id -> status */
        this.statusByUri = new Map();
        this.remoteStatusOrder = []; /* ids of remote statuses, oldest first */
        this.sentFollows = new Map(); /* Follow id we sent -> {username, target} */
        this.byAuthor = new Map(); /* author uri -> Set of status ids */
        this.refs = new Map(); /* Announce / reaction activity id -> {kind, statusId, actor, emoji} */
        this.tombstones = new Set(); /* uris of deleted remote posts (a late Create is ignored) */
        this.dropped = 0;
        this.deletedAccounts = 0;
    }

    newId() {
        return String(this.nextId++);
    }

    /* Returns the new local account; keys are filled in by the caller. */
    addLocal(username, actorUri) {
        const acct = {
            kind: "local",
            id: this.newId(),
            username,
            uri: actorUri,
            token: randomBytes(24).toString("hex"),
            createdAt: new Date(),
            keys: null,
            followers: new Map(), /* actor uri -> {followId, inbox, sharedInbox} */
            following: new Map(), /* actor uri -> {followId, state: "pending"|"accepted"} */
            posts: [], /* local status ids, oldest first */
            home: [], /* status ids, oldest first */
            notifications: [],
        };
        this.locals.set(username, acct);
        this.tokens.set(acct.token, username);
        this.accounts.set(acct.id, acct);
        return acct;
    }

    localByUri(uri) {
        for (const a of this.locals.values()) if (a.uri === uri) return a;
        return null;
    }

    /* Records (or refreshes) a remote account from a Fedify Actor; returns it, with isNew
     * true when it was not known. images: {avatar, header} URLs or null. */
    upsertRemote(actor, images = {}) {
        const uri = actor.id.href;
        let r = this.remotes.get(uri);
        const host = actor.id.hostname;
        const username = actor.preferredUsername?.toString() ?? uri.split("/").pop();
        const isNew = !r;
        if (!r) {
            r = { kind: "remote", id: this.newId(), uri, createdAt: new Date(), statuses: 0 };
            this.remotes.set(uri, r);
            this.accounts.set(r.id, r);
        }
        r.isNew = isNew;
        r.avatar = images.avatar ?? null;
        r.header = images.header ?? null;
        r.username = username;
        r.acct = `${username}@${host}`;
        r.displayName = actor.name?.toString() ?? username;
        r.url = actor.url instanceof URL ? actor.url.href : uri;
        r.inbox = actor.inboxId?.href ?? null;
        r.sharedInbox = actor.endpoints?.sharedInbox?.href ?? null;
        r.locked = actor.manuallyApprovesFollowers ?? false;
        r.fetchedAt = Date.now();
        return r;
    }

    addStatus(st) {
        if (!st.id) st.id = this.newId();
        st.favourites = new Set();
        st.reblogs = new Map(); /* actor uri -> Announce id */
        st.reactions = new Map(); /* emoji -> Map(actor uri -> activity id) */
        st.attachments ??= [];
        st.emojis ??= [];
        st.card ??= null;
        st.poll ??= null;
        st.editedAt = null;
        this.statuses.set(st.id, st);
        this.statusByUri.set(st.uri, st.id);
        let mine = this.byAuthor.get(st.author);
        if (!mine) this.byAuthor.set(st.author, (mine = new Set()));
        mine.add(st.id);
        if (st.local) {
            this.locals.get(st.author).posts.push(st.id);
        } else {
            this.remoteStatusOrder.push(st.id);
            while (this.statuses.size > this.maxStatuses && this.remoteStatusOrder.length > 0) {
                if (this.removeStatus(this.remoteStatusOrder.shift())) this.dropped++;
            }
        }
        return st;
    }

    /* Removes a status; returns it, or null when it was not held. */
    removeStatus(id) {
        const st = this.statuses.get(id);
        if (!st) return null;
        this.statuses.delete(id);
        this.statusByUri.delete(st.uri);
        this.byAuthor.get(st.author)?.delete(id);
        if (this.byAuthor.get(st.author)?.size === 0) this.byAuthor.delete(st.author);
        if (st.local) {
            const a = this.locals.get(st.author);
            if (a) a.posts = a.posts.filter((x) => x !== id);
        }
        return st;
    }

    /* Remembers a deleted post's uri so that a Create arriving after its Delete is dropped. */
    tombstone(uri) {
        this.tombstones.add(uri);
        if (this.tombstones.size > TOMBSTONES_MAX) this.tombstones.delete(this.tombstones.values().next().value);
    }

    /* Records an Announce or reaction by activity id, for an Undo naming only the id. */
    addRef(id, ref) {
        if (!id) return;
        this.refs.set(id, ref);
        if (this.refs.size > REFS_MAX) this.refs.delete(this.refs.keys().next().value);
    }

    statusesBy(uri) {
        return [...(this.byAuthor.get(uri) ?? [])];
    }

    /* Deletes a remote account and everything it left here, as Mastodon's account deletion
     * does: its posts, its follow relations both ways, its likes, reblogs, reactions and
     * votes on local posts, and the notifications it caused. Returns the posts removed, or
     * -1 when the account is not known. */
    removeRemote(uri) {
        const r = this.remotes.get(uri);
        if (!r) return -1;
        let removed = 0;
        for (const id of this.statusesBy(uri)) if (this.removeStatus(id)) removed++;
        for (const a of this.locals.values()) {
            a.followers.delete(uri);
            const f = a.following.get(uri);
            if (f) {
                this.sentFollows.delete(f.followId);
                a.following.delete(uri);
            }
            a.notifications = a.notifications.filter((n) => n.accountId !== r.id);
            for (const id of a.posts) {
                const st = this.statuses.get(id);
                if (!st) continue;
                st.favourites.delete(uri);
                st.reblogs.delete(uri);
                for (const [emoji, who] of st.reactions) {
                    who.delete(uri);
                    if (who.size === 0) st.reactions.delete(emoji);
                }
                if (st.poll?.voters.has(uri)) {
                    for (const i of st.poll.voters.get(uri)) st.poll.options[i].votes--;
                    st.poll.voters.delete(uri);
                }
            }
        }
        this.remotes.delete(uri);
        this.accounts.delete(r.id);
        this.deletedAccounts++;
        return removed;
    }

    statusOfUri(uri) {
        const id = this.statusByUri.get(uri);
        return id ? this.statuses.get(id) : null;
    }

    pushHome(acct, statusId) {
        acct.home.push(statusId);
        if (acct.home.length > HOME_MAX * 2) acct.home = acct.home.slice(-HOME_MAX);
    }

    notify(acct, type, fromAccountId, statusId = null) {
        acct.notifications.push({
            id: this.newId(),
            type,
            createdAt: new Date(),
            accountId: fromAccountId,
            statusId,
        });
        if (acct.notifications.length > NOTIFICATIONS_MAX * 2)
            acct.notifications = acct.notifications.slice(-NOTIFICATIONS_MAX);
    }

    counts() {
        let followers = 0;
        let following = 0;
        let pending = 0;
        for (const a of this.locals.values()) {
            followers += a.followers.size;
            for (const f of a.following.values()) {
                if (f.state === "accepted") following++;
                else pending++;
            }
        }
        let local = 0;
        for (const a of this.locals.values()) local += a.posts.length;
        return {
            accounts: this.locals.size,
            remote_accounts: this.remotes.size,
            posts_held: this.statuses.size,
            local_posts: local,
            posts_dropped: this.dropped,
            accounts_deleted: this.deletedAccounts,
            tombstones: this.tombstones.size,
            followers,
            following,
            following_pending: pending,
        };
    }
}

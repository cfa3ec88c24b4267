// Everything the target holds, in memory: local accounts, remote accounts it has seen,
// statuses, home timelines, notifications, follow relations.
import { randomBytes } from "node:crypto";

const HOME_MAX = 800; /* Mastodon keeps 800 entries per home feed */
const NOTIFICATIONS_MAX = 800;

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
        this.dropped = 0;
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

    /* Records (or refreshes) a remote account from a Fedify Actor; returns it. */
    upsertRemote(actor) {
        const uri = actor.id.href;
        let r = this.remotes.get(uri);
        const host = actor.id.hostname;
        const username = actor.preferredUsername?.toString() ?? uri.split("/").pop();
        if (!r) {
            r = { kind: "remote", id: this.newId(), uri, createdAt: new Date(), statuses: 0 };
            this.remotes.set(uri, r);
            this.accounts.set(r.id, r);
        }
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
        this.statuses.set(st.id, st);
        this.statusByUri.set(st.uri, st.id);
        if (st.local) {
            this.locals.get(st.author).posts.push(st.id);
        } else {
            this.remoteStatusOrder.push(st.id);
            while (this.statuses.size > this.maxStatuses && this.remoteStatusOrder.length > 0) {
                this.removeStatus(this.remoteStatusOrder.shift());
                this.dropped++;
            }
        }
        return st;
    }

    removeStatus(id) {
        const st = this.statuses.get(id);
        if (!st) return;
        this.statuses.delete(id);
        this.statusByUri.delete(st.uri);
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
            followers,
            following,
            following_pending: pending,
        };
    }
}

// The Mastodon client API subset load tests use, with bearer tokens.
import { isActor } from "@fedify/fedify";
import { postStatus, sendFollow, sendUnfollow } from "./federation.mjs";

const USERNAME = /^[a-z0-9_]+([.-]+[a-z0-9_]+)*$/i;

class ApiError extends Error {
    constructor(status, message) {
        super(message);
        this.status = status;
    }
}

/* Host names resolved by WebFinger over plain HTTP: lab names that cannot have
 * certificates. Every other host is asked over HTTPS, as Mastodon does. */
function plainHttpHost(host) {
    const h = host.replace(/:\d+$/, "");
    return h.endsWith(".test") || h.endsWith(".localhost") || h === "localhost";
}

/* remember(actor) records a fetched Fedify actor as a remote account (lib/followup.mjs). */
export function makeApi({ store, stats, context: ctx, domain, log, remember }) {
    const byAcct = new Map(); /* "user@host" lower-case -> remote account */

    function accountJson(acc) {
        if (acc.kind === "local") {
            let following = 0;
            for (const f of acc.following.values()) if (f.state === "accepted") following++;
            return {
                id: acc.id,
                username: acc.username,
                acct: acc.username,
                display_name: acc.username,
                locked: false,
                bot: false,
                discoverable: true,
                group: false,
                created_at: acc.createdAt.toISOString(),
                note: "",
                url: acc.uri,
                uri: acc.uri,
                avatar: "",
                avatar_static: "",
                header: "",
                header_static: "",
                followers_count: acc.followers.size,
                following_count: following,
                statuses_count: acc.posts.length,
                last_status_at: null,
                emojis: [],
                fields: [],
            };
        }
        return {
            id: acc.id,
            username: acc.username,
            acct: acc.acct,
            display_name: acc.displayName,
            locked: acc.locked,
            bot: false,
            discoverable: true,
            group: false,
            created_at: acc.createdAt.toISOString(),
            note: "",
            url: acc.url,
            uri: acc.uri,
            avatar: acc.avatar ?? "",
            avatar_static: acc.avatar ?? "",
            header: acc.header ?? "",
            header_static: acc.header ?? "",
            followers_count: 0,
            following_count: 0,
            statuses_count: acc.statuses,
            last_status_at: null,
            emojis: [],
            fields: [],
        };
    }

    function accountOfUri(uri) {
        return store.localByUri(uri) ?? store.remotes.get(uri) ?? null;
    }

    function statusJson(st, viewer) {
        const author = store.accounts.get(st.accountId);
        const mentions = [];
        for (const uri of st.mentions) {
            const m = accountOfUri(uri);
            if (m) {
                mentions.push({
                    id: m.id,
                    username: m.username,
                    acct: m.kind === "local" ? m.username : m.acct,
                    url: m.kind === "local" ? m.uri : m.url,
                });
            }
        }
        const parent = st.inReplyTo ? store.statusOfUri(st.inReplyTo) : null;
        return {
            id: st.id,
            created_at: st.createdAt.toISOString(),
            edited_at: st.editedAt ? st.editedAt.toISOString() : null,
            in_reply_to_id: parent?.id ?? null,
            in_reply_to_account_id: parent?.accountId ?? null,
            sensitive: false,
            spoiler_text: st.spoiler ?? "",
            visibility: st.visibility,
            language: null,
            uri: st.uri,
            url: st.url ?? st.uri,
            replies_count: 0,
            reblogs_count: st.reblogs.size,
            favourites_count: st.favourites.size,
            favourited: viewer ? st.favourites.has(viewer.uri) : false,
            reblogged: false,
            muted: false,
            bookmarked: false,
            content: st.content,
            reblog: null,
            application: null,
            account: author ? accountJson(author) : null,
            media_attachments: st.attachments.map((a, i) => ({
                id: `${st.id}-${i}`,
                type: a.state === "unsupported" ? "unknown" : "image",
                url: a.url,
                preview_url: a.url,
                remote_url: a.url,
                description: a.description ?? null,
                blurhash: a.blurhash ?? null,
                meta: a.width && a.height ? { original: { width: a.width, height: a.height } } : {},
                flood_state: a.state,
            })),
            mentions,
            tags: [],
            emojis: st.emojis.map((e) => ({
                shortcode: e.shortcode,
                url: e.url,
                static_url: e.url,
                visible_in_picker: false,
            })),
            card: st.card && {
                url: st.card.url,
                title: st.card.title ?? "",
                description: st.card.description ?? "",
                type: "link",
                image: st.card.image,
            },
            poll: st.poll && pollJson(st, viewer),
            /* Pleroma's reactions, as Akkoma and Misskey-compatible clients read them. */
            pleroma: {
                emoji_reactions: [...st.reactions].map(([name, who]) => ({
                    name,
                    count: who.size,
                    me: viewer ? who.has(viewer.uri) : false,
                })),
            },
        };
    }

    function pollJson(st, viewer) {
        const p = st.poll;
        const votes = p.options.reduce((n, o) => n + o.votes, 0);
        const mine = viewer ? p.voters.get(viewer.uri) : null;
        return {
            id: st.id,
            expires_at: p.expiresAt ? new Date(p.expiresAt).toISOString() : null,
            expired: p.closed || (p.expiresAt !== null && Date.now() > p.expiresAt),
            multiple: p.multiple,
            votes_count: votes,
            voters_count: st.local ? p.voters.size : p.votersCount,
            options: p.options.map((o) => ({ title: o.title, votes_count: o.votes })),
            emojis: [],
            voted: Boolean(mine),
            own_votes: mine ? [...mine] : [],
        };
    }

    /* The poll of a POST /api/v1/statuses: JSON {poll: {options, expires_in, multiple}} or
     * form poll[options][]=…&poll[expires_in]=…&poll[multiple]=…; null without one. */
    function pollParams(p, url, headers, body) {
        let poll = p.get("poll");
        if (!poll || typeof poll !== "object") {
            const form = new URLSearchParams(url.search);
            if (body && !(headers["content-type"] ?? "").includes("json")) {
                for (const [k, v] of new URLSearchParams(body.toString("utf8"))) form.append(k, v);
            }
            const options = form.getAll("poll[options][]");
            if (options.length === 0) return null;
            poll = {
                options,
                expires_in: form.get("poll[expires_in]"),
                multiple: form.get("poll[multiple]"),
            };
        }
        const options = Array.isArray(poll.options) ? poll.options : [];
        if (options.length < 2 || options.length > 4 || !options.every((o) => typeof o === "string" && o.trim() && o.length <= 50))
            throw new ApiError(422, "Validation failed: Poll options must be 2 to 4 texts of up to 50 characters");
        if (new Set(options).size !== options.length)
            throw new ApiError(422, "Validation failed: Poll options must be unique");
        const expiresInS = Number(poll.expires_in ?? 86400);
        if (!Number.isFinite(expiresInS) || expiresInS < 300 || expiresInS > 2629746)
            throw new ApiError(422, "Validation failed: Poll expires_in must be 300 to 2629746 seconds");
        const multiple = poll.multiple === true || poll.multiple === "true" || poll.multiple === "1";
        return { options, multiple, expiresInS };
    }

    function relationshipJson(viewer, acc) {
        const f = viewer.following.get(acc.uri);
        return {
            id: acc.id,
            following: f?.state === "accepted",
            showing_reblogs: f?.state === "accepted",
            notifying: false,
            followed_by: viewer.followers.has(acc.uri),
            blocking: false,
            blocked_by: false,
            muting: false,
            muting_notifications: false,
            requested: f?.state === "pending",
            domain_blocking: false,
            endorsed: false,
            note: "",
        };
    }

    /* Mastodon's id pagination over a list of ids sorted oldest first. */
    function page(ids, q) {
        const limit = Math.min(Math.max(Number.parseInt(q.get("limit") ?? "20", 10) || 20, 1), 40);
        const max = q.get("max_id") ? Number(q.get("max_id")) : Infinity;
        const since = q.get("since_id") ? Number(q.get("since_id")) : -Infinity;
        const min = q.get("min_id") ? Number(q.get("min_id")) : null;
        const sel = ids.filter((id) => Number(id) < max && Number(id) > since);
        if (min !== null) {
            return sel.filter((id) => Number(id) > min).slice(0, limit).reverse();
        }
        return sel.slice(-limit).reverse();
    }

    async function webfinger(user, host) {
        const scheme = plainHttpHost(host) ? "http" : "https";
        const resource = encodeURIComponent(`acct:${user}@${host}`);
        const url = `${scheme}://${host}/.well-known/webfinger?resource=${resource}`;
        let res;
        try {
            res = await fetch(url, {
                headers: { accept: "application/jrd+json, application/json" },
                signal: AbortSignal.timeout(10000),
            });
        } catch (err) {
            log(`lookup: WebFinger ${url}: ${err?.cause?.code ?? err?.message ?? err}`);
            return null;
        }
        if (!res.ok) {
            log(`lookup: WebFinger ${url}: ${res.status}`);
            return null;
        }
        let jrd;
        try {
            jrd = await res.json();
        } catch {
            log(`lookup: WebFinger ${url}: bad JSON`);
            return null;
        }
        const self = (jrd.links ?? []).find(
            (l) =>
                l.rel === "self" &&
                typeof l.href === "string" &&
                /application\/(activity\+json|ld\+json)/.test(l.type ?? "")
        );
        return self ? self.href : null;
    }

    async function resolveRemote(user, host) {
        const key = `${user}@${host}`.toLowerCase();
        const known = byAcct.get(key);
        if (known && store.remotes.get(known.uri) === known) return known;
        const href = await webfinger(user, host);
        if (!href) return null;
        let actor;
        try {
            actor = await ctx.lookupObject(href);
        } catch (err) {
            log(`lookup: actor ${href}: ${err?.message ?? err}`);
            return null;
        }
        if (!actor || !isActor(actor) || !actor.id || !actor.inboxId) {
            log(`lookup: ${href} is not an actor with an inbox`);
            return null;
        }
        const r = await remember(actor);
        byAcct.set(key, r);
        byAcct.set(r.acct.toLowerCase(), r);
        return r;
    }

    async function lookup(acctParam) {
        const acct = (acctParam ?? "").replace(/^acct:/, "").replace(/^@/, "");
        const [user, host] = acct.split("@");
        if (!user || !USERNAME.test(user)) throw new ApiError(404, "Record not found");
        if (!host || host.toLowerCase() === domain.toLowerCase()) {
            const a = store.locals.get(user);
            if (!a) throw new ApiError(404, "Record not found");
            return a;
        }
        const r = await resolveRemote(user, host);
        if (!r) throw new ApiError(404, "Record not found");
        return r;
    }

    function auth(headers) {
        const m = /^Bearer\s+(\S+)$/i.exec(headers["authorization"] ?? "");
        const username = m && store.tokens.get(m[1]);
        if (!username) {
            stats.api.unauthorized++;
            throw new ApiError(401, "The access token is invalid");
        }
        return store.locals.get(username);
    }

    function accountById(id) {
        const acc = store.accounts.get(id);
        if (!acc) throw new ApiError(404, "Record not found");
        return acc;
    }

    /* Request parameters: the query string, then a JSON or form body. */
    function params(url, headers, body) {
        const p = new Map(url.searchParams);
        if (body && body.length > 0) {
            const type = headers["content-type"] ?? "";
            if (type.includes("json")) {
                let obj;
                try {
                    obj = JSON.parse(body.toString("utf8"));
                } catch {
                    throw new ApiError(400, "Invalid JSON body");
                }
                if (obj && typeof obj === "object") {
                    for (const [k, v] of Object.entries(obj)) p.set(k, v);
                }
            } else {
                for (const [k, v] of new URLSearchParams(body.toString("utf8"))) p.set(k, v);
            }
        }
        return p;
    }

    async function route(method, url, headers, body) {
        const path = url.pathname.replace(/\/+$/, "");
        const q = url.searchParams;
        let m;
        if (method === "GET" && path === "/api/v1/instance") {
            return {
                uri: domain,
                title: "flood reference target",
                version: "4.0.0 (compatible; flood-target 0.1.0)",
                registrations: false,
                stats: { user_count: store.locals.size, status_count: store.counts().local_posts },
            };
        }
        const me = auth(headers);
        if (method === "GET" && path === "/api/v1/accounts/verify_credentials") {
            return accountJson(me);
        }
        if (method === "GET" && path === "/api/v1/accounts/lookup") {
            return accountJson(await lookup(q.get("acct")));
        }
        if (method === "GET" && path === "/api/v1/accounts/relationships") {
            const ids = [...q.getAll("id[]"), ...q.getAll("id")];
            return ids
                .filter((id) => store.accounts.has(id))
                .map((id) => relationshipJson(me, store.accounts.get(id)));
        }
        if (method === "GET" && (m = /^\/api\/v1\/accounts\/(\d+)$/.exec(path))) {
            return accountJson(accountById(m[1]));
        }
        if (method === "GET" && (m = /^\/api\/v1\/accounts\/(\d+)\/statuses$/.exec(path))) {
            const acc = accountById(m[1]);
            const ids =
                acc.kind === "local"
                    ? acc.posts
                    : store.remoteStatusOrder.filter((id) => store.statuses.get(id)?.author === acc.uri);
            return page(ids, q)
                .map((id) => store.statuses.get(id))
                .filter((st) => st)
                .map((st) => statusJson(st, me));
        }
        if (method === "POST" && (m = /^\/api\/v1\/accounts\/(\d+)\/(follow|unfollow)$/.exec(path))) {
            const acc = accountById(m[1]);
            if (acc === me) throw new ApiError(422, "Validation failed: cannot follow yourself");
            if (m[2] === "follow") {
                if (acc.kind === "local") {
                    /* Both ends are here: the follow is accepted at once. */
                    me.following.set(acc.uri, { followId: null, state: "accepted" });
                    acc.followers.set(me.uri, { followId: null });
                    store.notify(acc, "follow", me.id);
                } else if (!me.following.has(acc.uri)) {
                    await sendFollow(ctx, store, stats, me, acc);
                }
            } else if (acc.kind === "local") {
                me.following.delete(acc.uri);
                acc.followers.delete(me.uri);
            } else {
                await sendUnfollow(ctx, store, stats, me, acc);
            }
            return relationshipJson(me, acc);
        }
        if (method === "POST" && path === "/api/v1/statuses") {
            const p = params(url, headers, body);
            const text = p.get("status");
            if (typeof text !== "string" || text.trim() === "")
                throw new ApiError(422, "Validation failed: Text can't be blank");
            const visibility = p.get("visibility") ?? "public";
            if (!["public", "unlisted", "private", "direct"].includes(visibility))
                throw new ApiError(422, "Validation failed: Visibility is not included in the list");
            const mentions = [];
            for (const mm of text.matchAll(/(^|\s)@([a-z0-9_.-]+)@([a-z0-9.:-]+)/gi)) {
                const r = byAcct.get(`${mm[2]}@${mm[3]}`.toLowerCase());
                if (r && !mentions.includes(r)) mentions.push(r);
            }
            const poll = pollParams(p, url, headers, body);
            const st = await postStatus(ctx, store, stats, me, text, visibility, mentions, poll);
            /* Local followers of me see it at once. */
            for (const a of store.locals.values()) {
                if (a !== me && a.following.get(me.uri)?.state === "accepted") store.pushHome(a, st.id);
            }
            return statusJson(st, me);
        }
        if (method === "GET" && (m = /^\/api\/v1\/statuses\/(\d+)$/.exec(path))) {
            const st = store.statuses.get(m[1]);
            if (!st) throw new ApiError(404, "Record not found");
            return statusJson(st, me);
        }
        if (method === "GET" && path === "/api/v1/timelines/home") {
            return page(me.home, q)
                .map((id) => store.statuses.get(id))
                .filter((st) => st)
                .map((st) => statusJson(st, me));
        }
        if (method === "GET" && path === "/api/v1/notifications") {
            const types = q.getAll("types[]");
            const byId = new Map(me.notifications.map((n) => [n.id, n]));
            const ids = me.notifications
                .filter((n) => types.length === 0 || types.includes(n.type))
                .map((n) => n.id);
            return page(ids, q).map((id) => {
                const n = byId.get(id);
                const from = store.accounts.get(n.accountId);
                const st = n.statusId ? store.statuses.get(n.statusId) : null;
                return {
                    id: n.id,
                    type: n.type,
                    created_at: n.createdAt.toISOString(),
                    account: from ? accountJson(from) : null,
                    status: st ? statusJson(st, me) : null,
                };
            });
        }
        throw new ApiError(404, "Not found");
    }

    /* Returns {status, body} for an /api/ request. */
    return async function handle(method, url, headers, body) {
        stats.api.requests++;
        try {
            return { status: 200, body: await route(method, url, headers, body) };
        } catch (err) {
            if (err instanceof ApiError) return { status: err.status, body: { error: err.message } };
            log(`api: ${method} ${url.pathname}: ${err?.stack ?? err}`);
            return { status: 500, body: { error: "Internal server error" } };
        }
    };
}

export { USERNAME };

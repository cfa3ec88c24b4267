// Reading ActivityStreams JSON as servers do (Mastodon reads the compacted JSON, not
// JSON-LD): one value or an array, an id or an embedded object, a URL or a Link. Anything
// malformed becomes null or an empty list, never an exception.

export const MAX_ATTACHMENTS = 4; /* Mastodon keeps the first 4 */
const MAX_TAGS = 100;
const MAX_OPTIONS = 20;
const MAX_TEXT = 100000;
export const POST_TYPES = ["Note", "Article", "Question", "Page"];
export const ACTOR_TYPES = ["Person", "Service", "Application", "Group", "Organization"];

export function asArray(v) {
    if (v === undefined || v === null) return [];
    return Array.isArray(v) ? v : [v];
}

/* An http(s) URL string, normalized, or null. */
export function httpUrl(v) {
    if (typeof v !== "string" || v.length > 4096) return null;
    try {
        const u = new URL(v);
        return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch {
        return null;
    }
}

/* The id of a reference: a URL string or an object with an id. */
export function idOf(v) {
    if (typeof v === "string") return httpUrl(v);
    if (v && typeof v === "object" && !Array.isArray(v)) return httpUrl(v.id);
    return null;
}

const KNOWN_TYPES = new Set([
    ...POST_TYPES,
    ...ACTOR_TYPES,
    "Tombstone",
    "Image",
    "Video",
    "Audio",
    "Document",
    "Event",
    "Follow",
    "Like",
    "Announce",
    "Block",
    "Accept",
    "Reject",
    "EmojiReact",
    "EmojiReaction",
]);

/* A type name fit to be a key in /stats: a known one, else "other" (the network may send
 * any string), or "none". */
export function statType(obj) {
    const t = typeOf(obj);
    if (t === null) return "none";
    return KNOWN_TYPES.has(t) ? t : "other";
}

export function typeOf(obj) {
    if (!obj || typeof obj !== "object") return null;
    const t = Array.isArray(obj.type) ? obj.type.find((x) => typeof x === "string") : obj.type;
    return typeof t === "string" ? t : null;
}

export function hasType(obj, types) {
    const t = asArray(obj?.type);
    return t.some((x) => types.includes(x));
}

/* The href of a url value: a string, a Link {href, mediaType}, or a list of those (the
 * first whose mediaType starts with prefer, else the first). */
export function hrefOf(v, prefer = "") {
    const items = asArray(v).slice(0, 20);
    let first = null;
    for (const it of items) {
        const href = typeof it === "string" ? httpUrl(it) : httpUrl(it?.href);
        if (!href) continue;
        first ??= href;
        if (prefer && typeof it === "object" && String(it.mediaType ?? "").startsWith(prefer))
            return href;
    }
    return first;
}

/* The URL of an image value (an actor's icon or image, an Emoji's icon): a URL string, an
 * Image with url, or a list of those. */
export function imageUrlOf(v) {
    for (const it of asArray(v).slice(0, 10)) {
        if (typeof it === "string") {
            const u = httpUrl(it);
            if (u) return u;
        } else if (it && typeof it === "object") {
            const u = hrefOf(it.url, "image/") ?? httpUrl(it.href);
            if (u) return u;
        }
    }
    return null;
}

/* A natural-language value: the plain property, else the first of its Map. */
export function textOf(obj, name) {
    let v = obj?.[name];
    if (typeof v !== "string") {
        const map = obj?.[`${name}Map`];
        if (map && typeof map === "object") v = Object.values(map).find((x) => typeof x === "string");
    }
    return typeof v === "string" ? v.slice(0, MAX_TEXT) : null;
}

function count(v) {
    const n = Number(v);
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

function dim(v) {
    const n = Number(v);
    return Number.isSafeInteger(n) && n > 0 && n < 100000 ? n : null;
}

/* The post in a Note, Article, Question or Page object, or {reason} when it is none. */
export function parsePost(obj) {
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) return { reason: "no-object" };
    const type = typeOf(obj);
    if (!POST_TYPES.includes(type)) return { reason: "unsupported-object" };
    const id = httpUrl(obj.id);
    if (!id) return { reason: "no-object-id" };
    const attachments = [];
    let skipped = 0;
    for (const a of asArray(obj.attachment).slice(0, MAX_TAGS)) {
        if (!a || typeof a !== "object") continue;
        const url = hrefOf(a.url, typeof a.mediaType === "string" ? a.mediaType : "");
        if (!url) continue;
        if (attachments.length >= MAX_ATTACHMENTS) {
            skipped++;
            continue;
        }
        attachments.push({
            url,
            mediaType: typeof a.mediaType === "string" ? a.mediaType.slice(0, 100) : null,
            description: textOf(a, "name")?.slice(0, 1500) ?? null,
            width: dim(a.width),
            height: dim(a.height),
            blurhash:
                typeof a.blurhash === "string" && /^[0-9A-Za-z#$%*+,-.:;=?@[\]^_{|}~]{6,}$/.test(a.blurhash)
                    ? a.blurhash.slice(0, 100)
                    : null,
        });
    }
    const mentions = [];
    const hashtags = [];
    const emojis = [];
    for (const t of asArray(obj.tag).slice(0, MAX_TAGS)) {
        if (!t || typeof t !== "object") continue;
        if (hasType(t, ["Mention"])) {
            const href = httpUrl(t.href);
            if (href) mentions.push(href);
        } else if (hasType(t, ["Hashtag"])) {
            hashtags.push({ name: typeof t.name === "string" ? t.name : "", href: httpUrl(t.href) });
        } else if (hasType(t, ["Emoji"])) {
            const name = typeof t.name === "string" ? t.name.replace(/:/g, "") : "";
            const url = imageUrlOf(t.icon);
            if (/^[A-Za-z0-9_+-]{1,64}$/.test(name) && url) emojis.push({ shortcode: name, url });
        }
    }
    let poll = null;
    if (type === "Question") {
        const multiple = Array.isArray(obj.anyOf); /* as Mastodon decides */
        const options = [];
        for (const o of asArray(multiple ? obj.anyOf : obj.oneOf).slice(0, MAX_OPTIONS)) {
            const title = textOf(o, "name");
            if (title) options.push({ title: title.slice(0, 200), votes: count(o?.replies?.totalItems) });
        }
        poll = {
            multiple,
            options,
            votersCount: obj.votersCount === undefined ? null : count(obj.votersCount),
            endTime: typeof obj.endTime === "string" ? obj.endTime : null,
            closed: obj.closed !== undefined && obj.closed !== false,
        };
    }
    const published = typeof obj.published === "string" ? new Date(obj.published) : null;
    return {
        id,
        type,
        attributedTo: idOf(asArray(obj.attributedTo)[0]),
        content: textOf(obj, "content") ?? "",
        name: textOf(obj, "name"),
        summary: textOf(obj, "summary"),
        url: hrefOf(obj.url, "text/html"),
        published: published && !Number.isNaN(published.getTime()) ? published : null,
        inReplyTo: idOf(obj.inReplyTo),
        to: asArray(obj.to).map(idOf).filter(Boolean),
        cc: asArray(obj.cc).map(idOf).filter(Boolean),
        attachments,
        attachmentsSkipped: skipped,
        mentions,
        hashtags,
        emojis,
        poll,
    };
}

/* The reaction an EmojiReact (Pleroma), EmojiReaction or Like with _misskey_reaction
 * (Misskey) carries: {emoji, custom: {shortcode, url}|null} or {reason}. A unicode emoji,
 * or :shortcode: with an Emoji tag of that name. */
export function parseReaction(raw) {
    const text = typeof raw?._misskey_reaction === "string" ? raw._misskey_reaction : raw?.content;
    if (typeof text !== "string") return { reason: "no-reaction" };
    const content = text.trim();
    if (content.length === 0 || content.length > 66) return { reason: "bad-reaction" };
    const m = /^:([A-Za-z0-9_+-]{1,64}):$/.exec(content);
    if (m) {
        for (const t of asArray(raw.tag).slice(0, MAX_TAGS)) {
            if (!hasType(t, ["Emoji"]) || typeof t.name !== "string") continue;
            if (t.name.replace(/:/g, "") !== m[1]) continue;
            const url = imageUrlOf(t.icon);
            if (url) return { emoji: content, custom: { shortcode: m[1], url } };
        }
        return { reason: "unknown-emoji" };
    }
    if (isUnicodeEmoji(content)) return { emoji: content, custom: null };
    return { reason: "bad-reaction" };
}

/* Emoji only (ZWJ sequences, modifiers, flags, keycaps), at least one, no other text. */
export function isUnicodeEmoji(s) {
    if (!/^(?:\p{Extended_Pictographic}|\p{Emoji_Component}|\u200d|\u20e3|\ufe0f)+$/u.test(s))
        return false;
    return /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u.test(s);
}

/* The type an activity is counted and handled as: its class, except that the reactions of
 * Misskey (a Like with _misskey_reaction, or EmojiReaction) count as EmojiReact. raw is
 * the activity's JSON as received. */
export function activityKind(activity, raw) {
    const t = typeof raw?.type === "string" ? raw.type : null;
    if (t === "EmojiReact" || t === "EmojiReaction") return "EmojiReact";
    if (t === "Like" && raw._misskey_reaction != null) return "EmojiReact";
    return activity.constructor.name;
}

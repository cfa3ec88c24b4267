// Link cards: the first link of a post worth a preview, and the OpenGraph tags of the page
// it leads to. A small tag scanner, not an HTML parser: enough for pages that put their
// <meta> tags in the usual form, and bounded by what the caller passes in.

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

export function decodeEntities(s) {
    return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/gi, (m, e) => {
        if (e[0] === "#") {
            const n = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
            return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : m;
        }
        return ENTITIES[e.toLowerCase()] ?? m;
    });
}

/* The attributes of a tag's inside (`a href="x" class=y`), names lower case. */
export function attributes(s) {
    const out = {};
    const re = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
    let m;
    let n = 0;
    while ((m = re.exec(s)) !== null && n++ < 50) {
        const name = m[1].toLowerCase();
        if (!(name in out)) out[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? "");
    }
    return out;
}

function stripTags(s) {
    return decodeEntities(s.replace(/<[^>]*>/g, "")).trim();
}

/* The first http(s) link in a post's HTML content that is not a mention or a hashtag, as
 * Mastodon picks it (FetchLinkCardService): links marked class mention/hashtag or
 * rel tag, links to a mentioned account or a hashtag, and links whose text starts with @
 * or # are skipped. skip: hrefs of Mention and Hashtag tags. Returns a URL or null. */
export function firstLink(html, skip = new Set()) {
    if (typeof html !== "string") return null;
    const re = /<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi;
    let m;
    let n = 0;
    while ((m = re.exec(html)) !== null && n++ < 100) {
        const a = attributes(m[1]);
        const href = a.href;
        if (!href) continue;
        let url;
        try {
            url = new URL(href);
        } catch {
            continue;
        }
        if (url.protocol !== "http:" && url.protocol !== "https:") continue;
        if (/\b(mention|hashtag)\b/i.test(a.class ?? "")) continue;
        if (/\btag\b/i.test(a.rel ?? "")) continue;
        if (skip.has(url.href) || skip.has(href)) continue;
        const text = stripTags(m[2]);
        if (text.startsWith("@") || text.startsWith("#")) continue;
        return url.href;
    }
    return null;
}

/* The OpenGraph card of a page: {title, description, image} (image resolved against
 * pageUrl), each null when missing; title falls back to <title>. */
export function parseOpenGraph(html, pageUrl) {
    const og = {};
    const re = /<meta\b([^>]*)>/gi;
    let m;
    let n = 0;
    while ((m = re.exec(html)) !== null && n++ < 500) {
        const a = attributes(m[1]);
        const key = (a.property ?? a.name ?? "").toLowerCase();
        if (!key.startsWith("og:") || typeof a.content !== "string") continue;
        if (!(key in og)) og[key] = a.content.trim().slice(0, 2000);
    }
    let title = og["og:title"] ?? null;
    if (!title) {
        const t = /<title\b[^>]*>([\s\S]{0,2000}?)<\/title\s*>/i.exec(html);
        if (t) title = stripTags(t[1]) || null;
    }
    let image = null;
    const src = og["og:image:secure_url"] ?? og["og:image"] ?? og["og:image:url"];
    if (src) {
        try {
            const u = new URL(src, pageUrl);
            if (u.protocol === "http:" || u.protocol === "https:") image = u.href;
        } catch {
            image = null;
        }
    }
    return { title, description: og["og:description"] ?? null, image };
}

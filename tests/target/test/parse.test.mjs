// Unit tests of the parsers the follow-up workers use on what the network sends:
// lib/apjson.mjs, lib/linkcard.mjs, lib/media.mjs, and lib/fetcher.mjs's bounds and cache.
// Run: node --test tests/target/test/
import assert from "node:assert/strict";
import http from "node:http";
import { test } from "node:test";
import { activityKind, isUnicodeEmoji, parsePost, parseReaction, statType } from "../lib/apjson.mjs";
import { Fetcher } from "../lib/fetcher.mjs";
import { decodeEntities, firstLink, parseOpenGraph } from "../lib/linkcard.mjs";
import { magicMatches, mediaClass, sniff } from "../lib/media.mjs";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]);
const GIF = Buffer.from("GIF89a\0\0");
const WEBP = Buffer.from("RIFF\0\0\0\0WEBPVP8 ");

test("sniff names the format by its magic number, and nothing else", () => {
    assert.equal(sniff(PNG), "png");
    assert.equal(sniff(JPEG), "jpeg");
    assert.equal(sniff(GIF), "gif");
    assert.equal(sniff(WEBP), "webp");
    assert.equal(sniff(Buffer.from("RIFF\0\0\0\0WAVE")), null);
    assert.equal(sniff(Buffer.from("<html>")), null);
    assert.equal(sniff(Buffer.alloc(0)), null);
    assert.equal(sniff(null), null);
});

test("mediaClass takes the four image types and octet streams only", () => {
    assert.equal(mediaClass("image/png"), "png");
    assert.equal(mediaClass("Image/JPEG; charset=x"), "jpeg");
    assert.equal(mediaClass("application/octet-stream"), "octet");
    assert.equal(mediaClass("video/mp4"), null);
    assert.equal(mediaClass("text/html"), null);
    assert.equal(mediaClass(undefined), null);
    assert.ok(magicMatches("png", PNG));
    assert.ok(!magicMatches("png", GIF));
    assert.ok(magicMatches("octet", Buffer.from("anything")));
});

test("parsePost reads attachments, tags and polls as servers do", () => {
    const p = parsePost({
        id: "http://a.test/users/u/notes/1",
        type: "Note",
        attributedTo: { id: "http://a.test/users/u", type: "Person" },
        contentMap: { en: "<p>hi</p>" },
        inReplyTo: { id: "http://a.test/users/u/notes/0" },
        attachment: [
            { type: "Image", mediaType: "image/png", url: "http://a.test/media/1.png", width: 10, blurhash: "LEHV6nWB2yk8" },
            { type: "Document", url: [{ type: "Link", href: "http://a.test/media/2.bin", mediaType: "application/octet-stream" }] },
            { type: "Image", url: "javascript:alert(1)" },
            { type: "Image", url: "http://a.test/media/3.png" },
            { type: "Image", url: "http://a.test/media/4.png" },
            { type: "Image", url: "http://a.test/media/5.png" },
        ],
        tag: [
            { type: "Mention", href: "http://t.test/users/p" },
            { type: "Hashtag", name: "#x", href: "http://a.test/tags/x" },
            { type: "Emoji", name: ":blob:", icon: { type: "Image", url: "http://a.test/emoji/blob.png" } },
            { type: "Emoji", name: ":bad name:", icon: { url: "http://a.test/emoji/x.png" } },
            "junk",
        ],
    });
    assert.equal(p.content, "<p>hi</p>");
    assert.equal(p.attributedTo, "http://a.test/users/u");
    assert.equal(p.inReplyTo, "http://a.test/users/u/notes/0");
    assert.deepEqual(
        p.attachments.map((a) => a.url),
        ["http://a.test/media/1.png", "http://a.test/media/2.bin", "http://a.test/media/3.png", "http://a.test/media/4.png"]
    );
    assert.equal(p.attachmentsSkipped, 1);
    assert.equal(p.attachments[0].width, 10);
    assert.deepEqual(p.mentions, ["http://t.test/users/p"]);
    assert.deepEqual(p.emojis, [{ shortcode: "blob", url: "http://a.test/emoji/blob.png" }]);
    const q = parsePost({
        id: "http://a.test/q/1",
        type: "Question",
        oneOf: [{ name: "a", replies: { totalItems: 3 } }, { name: "b", replies: { totalItems: -1 } }, { nope: 1 }],
    });
    assert.deepEqual(q.poll.options, [
        { title: "a", votes: 3 },
        { title: "b", votes: 0 },
    ]);
    assert.equal(q.poll.multiple, false);
    assert.equal(parsePost({ id: "http://a.test/x", type: "Like" }).reason, "unsupported-object");
    assert.equal(parsePost({ type: "Note" }).reason, "no-object-id");
    assert.equal(parsePost("http://a.test/x").reason, "no-object");
    assert.equal(parsePost(null).reason, "no-object");
});

test("parseReaction takes unicode emoji, and :shortcode: with its Emoji tag", () => {
    assert.deepEqual(parseReaction({ content: "👍" }), { emoji: "👍", custom: null });
    assert.deepEqual(parseReaction({ content: "👩‍💻" }).emoji, "👩‍💻");
    assert.deepEqual(parseReaction({ content: "🇫🇷" }).emoji, "🇫🇷");
    assert.equal(parseReaction({ _misskey_reaction: "❤️", content: "x" }).emoji, "❤️");
    const custom = parseReaction({
        content: ":blob:",
        tag: [{ type: "Emoji", name: ":blob:", icon: { url: "http://a.test/emoji/blob.png" } }],
    });
    assert.deepEqual(custom.custom, { shortcode: "blob", url: "http://a.test/emoji/blob.png" });
    assert.equal(parseReaction({ content: ":blob:" }).reason, "unknown-emoji");
    assert.equal(parseReaction({ content: "hello" }).reason, "bad-reaction");
    assert.equal(parseReaction({ content: "1" }).reason, "bad-reaction");
    assert.equal(parseReaction({}).reason, "no-reaction");
    assert.ok(isUnicodeEmoji("1️⃣"));
    assert.ok(!isUnicodeEmoji("a👍"));
});

test("activityKind counts Misskey's and Pleroma's reactions as EmojiReact", () => {
    class Like {}
    class Activity {}
    assert.equal(activityKind(new Like(), { type: "Like", _misskey_reaction: "👍" }), "EmojiReact");
    assert.equal(activityKind(new Like(), { type: "Like" }), "Like");
    assert.equal(activityKind(new Activity(), { type: "EmojiReact" }), "EmojiReact");
    assert.equal(activityKind(new Activity(), { type: "EmojiReaction" }), "EmojiReact");
    assert.equal(activityKind(new Activity(), { type: "Whatever" }), "Activity");
    assert.equal(statType({ type: "Whatever" }), "other");
    assert.equal(statType({ type: ["Note"] }), "Note");
    assert.equal(statType(null), "none");
});

test("firstLink skips mentions, hashtags and non-http links", () => {
    const html =
        '<p><span class="h-card"><a href="http://t.test/users/p" class="u-url mention">@<span>p</span></a></span> ' +
        '<a href="http://a.test/tags/x" class="mention hashtag" rel="tag">#<span>x</span></a> ' +
        '<a href="mailto:x@y">mail</a> <a href="http://a.test/tags/y">#y</a> ' +
        "<a href='https://e.test/pages/a?x=1&amp;y=2' rel=nofollow>a page</a> <a href=\"http://e.test/b\">b</a></p>";
    assert.equal(firstLink(html), "https://e.test/pages/a?x=1&y=2");
    assert.equal(firstLink('<a href="http://t.test/users/p">p</a>', new Set(["http://t.test/users/p"])), null);
    assert.equal(firstLink("no links"), null);
    assert.equal(firstLink(null), null);
});

test("parseOpenGraph reads og tags in any attribute order, resolving the image", () => {
    const html =
        '<html><head><title>T &amp; t</title><meta content="/img/a.png" property="og:image">' +
        "<meta property='og:description' content='d &quot;q&quot;'><meta name=og:title content=Hello></head>";
    assert.deepEqual(parseOpenGraph(html, "http://e.test/pages/a"), {
        title: "Hello",
        description: 'd "q"',
        image: "http://e.test/img/a.png",
    });
    assert.deepEqual(parseOpenGraph("<title>Only</title>", "http://e.test/"), {
        title: "Only",
        description: null,
        image: null,
    });
    assert.equal(parseOpenGraph('<meta property="og:image" content="javascript:x">', "http://e.test/").image, null);
    assert.equal(decodeEntities("&#x41;&#66;&amp;&bogus;"), "AB&&bogus;");
});

test("Fetcher.get stops reading past maxBytes; memo caches unless the cache is off", async () => {
    const server = http.createServer((req, res) => {
        const size = Number(new URL(req.url, "http://x").searchParams.get("size"));
        if (req.url.startsWith("/chunked")) {
            res.writeHead(200, { "content-type": "image/png" });
            res.write(Buffer.alloc(size / 2));
            res.end(Buffer.alloc(size / 2));
        } else {
            res.writeHead(200, { "content-type": "image/png", "content-length": size });
            res.end(Buffer.alloc(size));
        }
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${server.address().port}`;
    try {
        const f = new Fetcher({ cache: true, userAgent: "test" });
        const small = await f.get(`${base}/x?size=100`, { maxBytes: 100 });
        assert.equal(small.error, null);
        assert.equal(small.body.length, 100);
        assert.equal(small.type, "image/png");
        const big = await f.get(`${base}/x?size=200000`, { maxBytes: 1000 });
        assert.equal(big.error, "too_large");
        assert.equal(big.body, null);
        const chunked = await f.get(`${base}/chunked?size=200000`, { maxBytes: 1000 });
        assert.equal(chunked.error, "too_large");
        const refused = await f.get("http://127.0.0.1:1/", { maxBytes: 10 });
        assert.equal(refused.status, 0);
        assert.ok(refused.error);

        let calls = 0;
        const producer = async () => ({ cacheable: true, n: ++calls });
        assert.equal((await f.memo("k", 60000, producer)).value.n, 1);
        assert.equal((await f.memo("k", 60000, producer)).hit, true);
        assert.equal(calls, 1);
        const off = new Fetcher({ cache: false, userAgent: "test" });
        await off.memo("k", 60000, producer);
        await off.memo("k", 60000, producer);
        assert.equal(calls, 3);
    } finally {
        server.close();
    }
});

test("the fetch cache holds no more than its bound in cost", async () => {
    const f = new Fetcher({ cache: true, maxCost: 3000, userAgent: "test" });
    for (const k of ["a", "b", "c"]) await f.memo(k, 60000, async () => ({ cacheable: true, cost: 1000 }));
    assert.equal(f.json().entries, 2);
    assert.ok(f.json().bytes <= 3000);
    assert.equal((await f.memo("a", 60000, async () => ({ cacheable: true }))).hit, false);
    assert.equal((await f.memo("c", 60000, async () => ({ cacheable: true }))).hit, true);
    assert.equal((await f.memo("x", 60000, async () => ({ cacheable: false }))).hit, false);
    assert.equal((await f.memo("x", 60000, async () => ({ cacheable: false }))).hit, false);
});

// Unit test of lib/fetchkind.mjs: node --test tests/target/test/
import assert from "node:assert/strict";
import { test } from "node:test";
import { FETCH_KINDS, fetchKind } from "../lib/fetchkind.mjs";

const H = "http://flood1.test";
const cases = [
    ["/.well-known/webfinger?resource=acct:a@flood1.test", "webfinger"],
    ["/.well-known/host-meta", "webfinger"],
    ["/.well-known/host-meta.json", "other"],
    ["/.well-known/nodeinfo", "nodeinfo"],
    ["/nodeinfo/2.1", "nodeinfo"],
    ["/nodeinfo", "other"],
    ["/users/user1", "actor"],
    ["/users/user1#main-key", "actor"],
    ["/users/user1?x=1", "actor"],
    ["/actor", "actor"],
    ["/actor#main-key", "actor"],
    ["/actor/", "other"],
    ["/actors", "other"],
    ["/users/", "other"],
    ["/users", "other"],
    ["/users/user1/", "other"],
    ["/users/user1/main-key", "key"],
    ["/actor/main-key", "key"],
    ["/users/user1/main-key/x", "other"],
    ["/users/user1/notes/42", "note"],
    ["/users/user1/notes/42/activity", "note"],
    ["/users/user1/activities/9", "note"],
    ["/users/user1/notes", "other"],
    ["/users/user1/notes/", "other"],
    ["/users/user1/statuses/1", "other"],
    ["/users/user1/inbox", "collection"],
    ["/users/user1/outbox?page=true", "collection"],
    ["/users/user1/followers", "collection"],
    ["/users/user1/following", "collection"],
    ["/users/user1/featured", "collection"],
    ["/users/user1/collections/tags", "collection"],
    ["/users/user1/collections", "other"],
    ["/users/user1/avatar", "avatar"],
    ["/users/user1/avatar.png?v=2", "avatar"],
    ["/users/user1/header.webp", "avatar"],
    ["/users/user1/headers", "avatar"],
    ["/media/abc.png", "media"],
    ["/media/", "media"],
    ["/media", "other"],
    ["/pages/p1", "link"],
    ["/emoji/blob.png", "emoji"],
    ["/inbox", "other"],
    ["/", "other"],
    ["/favicon.ico", "other"],
];

test("fetchKind classifies by path", () => {
    for (const [path, want] of cases) assert.equal(fetchKind(H + path), want, path);
});

test("fetchKind takes URL objects and ignores the host", () => {
    assert.equal(fetchKind(new URL("https://other.example:8443/users/x/notes/1")), "note");
});

test("fetchKind answers other for what is not an absolute URL", () => {
    assert.equal(fetchKind("/users/user1"), "other");
    assert.equal(fetchKind(""), "other");
    assert.equal(fetchKind(null), "other");
});

test("every answer is one of FETCH_KINDS", () => {
    for (const [path] of cases) assert.ok(FETCH_KINDS.includes(fetchKind(H + path)));
});

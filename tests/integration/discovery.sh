#!/usr/bin/env bash
# Persona discovery (flood fetch --discover, the code `flood run` uses): WebFinger, a signed
# GET of the actor, the outbox's first page. Three targets: flood serve itself (a stand-in,
# not an independent check), a small Node server written here with the edge cases
# (profile-typed self links, same-host and cross-host redirects, oversized bodies, spoofed
# ids, outboxes in every shape), and the reference target (tests/target, Fedify) when its
# dependencies are installed.
set -u
cd "$(dirname "$0")/../.."
FLOOD=${FLOOD:-build/flood}
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
wait_port() {
    for _ in $(seq 600); do
        local p
        p=$(sed -n 's/^listening on http:\/\/.*:\([0-9][0-9]*\)$/\1/p' "$1" | head -1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}

CROWD=(--state "$tmp/state" --instances 2 --actors 2)
"$FLOOD" serve --listen 127.0.0.1:0 "${CROWD[@]}" --exit-after 300 --quiet >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
port=$(wait_port "$tmp/serve.out") || { nok "flood serve starts"; cat "$tmp/serve.err"; exit 1; }
ok "flood serve listens on port $port"
D=("$FLOOD" fetch --discover "${CROWD[@]}" --timeout 5)

# 1. flood serve as a stand-in target
"${D[@]}" --target-http --connect-to "flood2.test:80:127.0.0.1:$port" acct:user1@flood2.test >"$tmp/p.json" 2>"$tmp/e"
check "acct:user1@flood2.test resolves (exit 0)" '[ $? -eq 0 ]'
check "actor, inbox and shared inbox from the crowd's documents" \
    '[ "$(jq -c "[.acct,.actor,.inbox,.sharedInbox]" "$tmp/p.json")" = "[\"acct:user1@flood2.test\",\"http://flood2.test/users/user1\",\"http://flood2.test/users/user1/inbox\",\"http://flood2.test/inbox\"]" ]'
"${D[@]}" --target-http --connect-to "flood2.test:80:127.0.0.1:$port" acct:user9@flood2.test >/dev/null 2>"$tmp/e"
check "an unknown account: exit 1, the step and the status named" \
    '[ $? -eq 1 ] && grep -q "target: webfinger of .acct:user9@flood2.test.: HTTP 404" "$tmp/e"'
"${D[@]}" --connect-to "flood2.test:80:127.0.0.1:$port" not-a-persona >/dev/null 2>"$tmp/e"
check "a malformed persona: exit 1 with a clear error" '[ $? -eq 1 ] && grep -q "bad persona" "$tmp/e"'

# 2. edge cases from a server written here
cat >"$tmp/odd.mjs" <<'JS'
import http from "node:http";
const log = [];
const J = (res, code, obj, type = "application/activity+json") => { res.writeHead(code, { "content-type": type }); res.end(JSON.stringify(obj)); };
const B = "http://odd.test";
const actor = (name, extra = {}) => ({ "@context": "https://www.w3.org/ns/activitystreams", id: `${B}/users/${name}`, type: "Person",
    inbox: `${B}/users/${name}/inbox`, endpoints: { sharedInbox: `${B}/inbox` }, outbox: `${B}/users/${name}/outbox`, ...extra });
const srv = http.createServer((req, res) => {
    const u = new URL(req.url, B);
    log.push({ path: u.pathname, signed: !!req.headers.signature, keyId: (/keyId="([^"]*)"/.exec(req.headers.signature ?? "") ?? [])[1] ?? null });
    if (u.pathname === "/_log") return J(res, 200, log, "application/json");
    if (u.pathname === "/.well-known/webfinger" || u.pathname === "/wf2") {
        const r = u.searchParams.get("resource");
        const self = (name, type = "application/activity+json") => J(res, 200, { subject: r, links: [
            { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: `${B}/@${name}` },
            { rel: "self", type: "application/json", href: `${B}/users/wrongtype` },
            { rel: "self", type, href: `${B}/users/${name}` }] }, "application/jrd+json");
        if (r === "acct:a@odd.test") return self("a", 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"');
        if (r === "acct:nolink@odd.test") return J(res, 200, { subject: r, links: [] }, "application/jrd+json");
        if (r === "acct:same@odd.test" && u.pathname !== "/wf2") { res.writeHead(302, { location: `/wf2?resource=${encodeURIComponent(r)}` }); return res.end(); }
        if (r === "acct:same@odd.test") return self("b");
        if (r === "acct:away@odd.test") { res.writeHead(302, { location: `http://elsewhere.test/.well-known/webfinger?resource=x` }); return res.end(); }
        return J(res, 404, { error: "no" });
    }
    if (u.pathname === "/users/d/outbox" && u.searchParams.get("page") === "1")
        return J(res, 200, { type: "OrderedCollectionPage", orderedItems: [{ type: "Create", object: { id: `${B}/n/d1` } }] });
    switch (u.pathname) {
    case "/users/a": return J(res, 200, actor("a"));
    case "/users/a/outbox": return J(res, 200, { type: "OrderedCollection", totalItems: 6, first: { type: "OrderedCollectionPage", orderedItems: [
        { type: "Create", object: { id: `${B}/n/1`, type: "Note" } },
        { type: "Announce", object: `${B}/n/announced` },
        { id: `${B}/n/2`, type: "Note" },
        `${B}/n/bare-string`,
        { type: "Create", object: `${B}/n/3` },
        { type: "Like", object: `${B}/n/liked` },
        { id: `${B}/n/4`, type: "Question" }] } });
    case "/users/b": return J(res, 200, actor("b", { endpoints: undefined }));
    case "/users/b/outbox": return J(res, 500, { error: "boom" });
    case "/users/c": return J(res, 200, actor("c"));
    case "/users/c/outbox": return J(res, 200, { type: "OrderedCollection", first: "http://elsewhere.test/page" });
    case "/users/d": return J(res, 200, actor("d"));
    case "/users/d/outbox": return J(res, 200, { type: "OrderedCollection", first: `${B}/users/d/outbox?page=1` });
    case "/users/big": res.writeHead(200, { "content-type": "application/activity+json" }); return res.end("[" + " ".repeat(2 * 1024 * 1024) + "]");
    case "/users/spoof": return J(res, 200, actor("spoof", { id: "http://evil.test/users/spoof" }));
    case "/users/noinbox": return J(res, 200, actor("noinbox", { inbox: undefined }));
    case "/users/html": return J(res, 200, "<html>", "text/html");
    case "/users/slow": return; /* never answers */
    }
    return J(res, 404, { error: "not found" });
});
srv.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${srv.address().port}`));
setTimeout(() => process.exit(0), 300000).unref();
JS
node "$tmp/odd.mjs" >"$tmp/odd.out" 2>&1 &
pids+=($!)
oport=$(wait_port "$tmp/odd.out") || { nok "edge-case server starts"; exit 1; }
O=("${D[@]}" --target-http --connect-to "odd.test:80:127.0.0.1:$oport" --connect-to "elsewhere.test:80:127.0.0.1:$oport")

"${O[@]}" acct:a@odd.test >"$tmp/a.json" 2>"$tmp/e"
check "acct:a@odd.test: a self link typed ld+json with a profile is taken" \
    '[ $? -eq 0 ] && [ "$(jq -r .actor "$tmp/a.json")" = http://odd.test/users/a ]'
check "outbox: Create objects (embedded or by id) and plain objects, not Announce/Like/strings" \
    '[ "$(jq -c .posts "$tmp/a.json")" = "[\"http://odd.test/n/1\",\"http://odd.test/n/2\",\"http://odd.test/n/3\",\"http://odd.test/n/4\"]" ]'
curl -s --connect-to "odd.test:80:127.0.0.1:$oport" http://odd.test/_log >"$tmp/log.json"
check "WebFinger unsigned; actor and outbox signed by flood1.test's instance actor" \
    '[ "$(jq -c "[.[] | select(.path != \"/_log\") | [.path, .signed, .keyId]]" "$tmp/log.json")" = "[[\"/.well-known/webfinger\",false,null],[\"/users/a\",true,\"http://flood1.test/actor#main-key\"],[\"/users/a/outbox\",true,\"http://flood1.test/actor#main-key\"]]" ]'
"${O[@]}" acct:same@odd.test >"$tmp/b.json" 2>"$tmp/e"
check "a redirect on the same host is followed; no sharedInbox is null" \
    '[ $? -eq 0 ] && [ "$(jq -c "[.actor,.sharedInbox]" "$tmp/b.json")" = "[\"http://odd.test/users/b\",null]" ]'
check "an outbox answering 500: no posts, a warning, not a failure" \
    '[ "$(jq -c .posts "$tmp/b.json")" = "[]" ] && grep -q "warning: target: outbox of .acct:same@odd.test.: HTTP 500" "$tmp/e"'
"${O[@]}" acct:away@odd.test >/dev/null 2>"$tmp/e"
check "a redirect to another host is refused" '[ $? -eq 1 ] && grep -q "redirect off the host" "$tmp/e"'
"${O[@]}" acct:nolink@odd.test >/dev/null 2>"$tmp/e"
check "a JRD without a self link: named error" '[ $? -eq 1 ] && grep -q "no rel=self activity+json link" "$tmp/e"'
"${O[@]}" http://odd.test/users/c >"$tmp/c.json" 2>"$tmp/e"
check "an outbox whose first page is on another host: not followed" \
    '[ "$(jq -c .posts "$tmp/c.json")" = "[]" ] && grep -q "first page on another host" "$tmp/e"'
"${O[@]}" http://odd.test/users/d >"$tmp/d.json" 2>"$tmp/e"
check "an outbox whose first page is a link: the page is read" \
    '[ "$(jq -c .posts "$tmp/d.json")" = "[\"http://odd.test/n/d1\"]" ]'
"${O[@]}" http://odd.test/users/big >/dev/null 2>"$tmp/e"
check "a body over 1 MiB is refused" '[ $? -eq 1 ] && grep -q "target: actor of .http://odd.test/users/big.: http: GET .*body over 1048576 bytes" "$tmp/e"'
"${O[@]}" http://odd.test/users/spoof >/dev/null 2>"$tmp/e"
check "an actor whose id is on another host is refused" '[ $? -eq 1 ] && grep -q "is not on .odd.test." "$tmp/e"'
"${O[@]}" http://odd.test/users/noinbox >/dev/null 2>"$tmp/e"
check "an actor without inbox is refused" '[ $? -eq 1 ] && grep -q "no inbox" "$tmp/e"'
"${O[@]}" http://odd.test/users/html >/dev/null 2>"$tmp/e"
check "an actor that is not a JSON object is refused" '[ $? -eq 1 ] && grep -q "not a JSON object" "$tmp/e"'
start=$SECONDS
"${D[@]}" --timeout 1 --connect-to "odd.test:80:127.0.0.1:$oport" http://odd.test/users/slow >/dev/null 2>"$tmp/e"
check "a target that never answers: timeout error within the bound" \
    '[ $? -eq 1 ] && [ $((SECONDS - start)) -le 5 ] && grep -qi "timed out\|timeout" "$tmp/e"'

# 3. the reference target (Fedify), when its dependencies are installed
if [ ! -f tests/target/server.mjs ] || [ ! -d tests/target/node_modules/@fedify ]; then
    echo "# skip: the reference target (tests/target) or its node_modules is missing"
else
    node tests/target/server.mjs --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$port" >"$tmp/t.out" 2>"$tmp/t.err" &
    pids+=($!)
    if ! tport=$(wait_port "$tmp/t.out"); then
        nok "reference target starts"
        cat "$tmp/t.err"
    else
        ok "reference target listens on port $tport"
        TB="http://127.0.0.1:$tport"
        tok=$(curl -s -X POST -H 'content-type: application/json' -d '{"username":"load0"}' "$TB/admin/accounts" | jq -r .token)
        uris=()
        for i in 1 2 3; do
            uris+=("$(curl -s -X POST -H "authorization: Bearer $tok" -H 'content-type: application/json' \
                -d "{\"status\":\"post $i\"}" "$TB/api/v1/statuses" | jq -r .uri)")
        done
        T=("${D[@]}" --target-http --connect-to "target.test:$tport:127.0.0.1:$tport")
        "${T[@]}" "acct:load0@target.test:$tport" >"$tmp/t.json" 2>"$tmp/e"
        check "reference target: acct:load0 resolves" '[ $? -eq 0 ]' || cat "$tmp/e"
        check "reference target: its actor, inbox and shared inbox" \
            '[ "$(jq -c "[.actor,.inbox,.sharedInbox]" "$tmp/t.json")" = "[\"http://target.test:$tport/users/load0\",\"http://target.test:$tport/users/load0/inbox\",\"http://target.test:$tport/inbox\"]" ]'
        want=$(printf '%s\n' "${uris[@]}" | sort | jq -R . | jq -sc .)
        check "reference target: the posts are the 3 statuses it made (newest first)" \
            '[ "$(jq -c "[.posts[]] | sort" "$tmp/t.json")" = "$want" ] && [ "$(jq -r ".posts[0]" "$tmp/t.json")" = "${uris[2]}" ]'
        "${T[@]}" "http://target.test:$tport/users/load0" >"$tmp/t2.json" 2>/dev/null
        check "reference target: the actor URL gives the same persona" \
            '[ "$(jq -c "[.actor,.inbox,.posts]" "$tmp/t2.json")" = "$(jq -c "[.actor,.inbox,.posts]" "$tmp/t.json")" ]'
        "${T[@]}" "acct:nobody@target.test:$tport" >/dev/null 2>"$tmp/e"
        check "reference target: an unknown account fails at WebFinger" \
            '[ $? -eq 1 ] && grep -q "webfinger of .acct:nobody@target.test:$tport.: HTTP 404" "$tmp/e"'
    fi
fi

echo "$n tests, $failed failed"
[ "$failed" -eq 0 ]

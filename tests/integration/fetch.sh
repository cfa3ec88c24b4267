#!/usr/bin/env bash
# flood fetch: a signed GET as a crowd actor. The crowd (flood serve on port 0) answers
# the fetches and publishes the keys; a small Node server records what flood sends, and
# the signatures are checked with openssl from the key in the crowd's actor document, the
# signing string rebuilt here from draft-cavage-12 section 2.3 and RFC 9421 section 2.5.
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

# wait_port FILE: the port of the first "listening on http://ADDR:PORT" line, within 60 s
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
"$FLOOD" serve --listen 127.0.0.1:0 "${CROWD[@]}" --exit-after 120 --quiet >"$tmp/serve.out" 2>"$tmp/serve.err" &
pids+=($!)
port=$(wait_port "$tmp/serve.out") || { nok "flood serve starts"; cat "$tmp/serve.err"; exit 1; }
ok "flood serve listens on port $port"
CT=(--connect-to "flood1.test:80:127.0.0.1:$port" --connect-to "flood2.test:80:127.0.0.1:$port")

# 1. the actor document, as flood fetch prints it and as curl gets it
"$FLOOD" fetch "${CROWD[@]}" "${CT[@]}" http://flood2.test/users/user1 >"$tmp/f.json" 2>"$tmp/f.err"
rc=$?
check "fetch of an actor exits 0" '[ $rc -eq 0 ]'
curl -s -H 'Accept: application/activity+json' --connect-to "flood2.test:80:127.0.0.1:$port" \
    http://flood2.test/users/user1 >"$tmp/c.json"
check "its output is the JSON curl gets (compared by jq)" \
    '[ "$(jq -S . "$tmp/f.json")" = "$(jq -S . "$tmp/c.json")" ] && [ -s "$tmp/c.json" ]'
check "pretty-printed (indented lines)" 'grep -q "^  \"id\": \"http://flood2.test/users/user1\"" "$tmp/f.json"'

# 2. non-2xx: status on stderr, exit 1; the twin of case 1
"$FLOOD" fetch "${CROWD[@]}" "${CT[@]}" http://flood2.test/users/user9 >"$tmp/o" 2>"$tmp/e"
rc=$?
check "a 404 exits 1 with the status on stderr" '[ $rc -eq 1 ] && grep -q "HTTP 404" "$tmp/e" && [ ! -s "$tmp/o" ]'
"$FLOOD" fetch "${CROWD[@]}" "${CT[@]}" --include http://flood2.test/users/user1 >"$tmp/o" 2>/dev/null
check "--include prints the status line and headers" 'head -1 "$tmp/o" | grep -q "^HTTP/1.1 200" && grep -qi "^content-type: application/activity+json" "$tmp/o"'

# 3. usage errors
"$FLOOD" fetch "${CROWD[@]}" >/dev/null 2>&1
check "no URL: exit 2" '[ $? -eq 2 ]'
"$FLOOD" fetch "${CROWD[@]}" --as 3 http://flood1.test/actor >/dev/null 2>&1
check "--as outside the crowd: exit 2" '[ $? -eq 2 ]'
"$FLOOD" fetch "${CROWD[@]}" --dialect hmac http://flood1.test/actor >/dev/null 2>&1
check "unknown --dialect: exit 2" '[ $? -eq 2 ]'
"$FLOOD" fetch --help >"$tmp/o" 2>&1
check "--help exits 0 and names --as" '[ $? -eq 0 ] && grep -q -- "--as" "$tmp/o"'
"$FLOOD" fetch "${CROWD[@]}" --timeout 2 --connect-to "flood1.test:80:127.0.0.1:1" http://flood1.test/actor >/dev/null 2>"$tmp/e"
check "connection refused: exit 1 with a message" '[ $? -eq 1 ] && grep -q "flood: fetch: http: GET" "$tmp/e"'

# 4. what flood sends, recorded by a Node server and verified with openssl
cat >"$tmp/rec.mjs" <<'JS'
import http from "node:http";
import fs from "node:fs";
const out = process.argv[2];
let n = 0;
const srv = http.createServer((req, res) => {
    const h = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) h[req.rawHeaders[i].toLowerCase()] = req.rawHeaders[i + 1];
    fs.writeFileSync(`${out}/req${++n}.json`, JSON.stringify({ method: req.method, url: req.url, headers: h }));
    if (req.url.startsWith("/text")) { res.writeHead(200, { "content-type": "text/plain" }); return res.end("plain words"); }
    res.writeHead(200, { "content-type": "application/activity+json" });
    res.end(JSON.stringify({ id: "http://target.test" + req.url, type: "Note" }));
});
srv.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${srv.address().port}`));
setTimeout(() => process.exit(0), 120000).unref();
JS
mkdir -p "$tmp/rec"
node "$tmp/rec.mjs" "$tmp/rec" >"$tmp/rec.out" 2>&1 &
pids+=($!)
rport=$(wait_port "$tmp/rec.out") || { nok "recorder starts"; exit 1; }
TT=(--connect-to "target.test:80:127.0.0.1:$rport")

# pubkey URL FILE: the publicKeyPem of an actor, fetched with curl
pubkey() {
    curl -s --connect-to "${1%%/*}:80:127.0.0.1:$port" -H 'Accept: application/activity+json' "http://$1" 2>/dev/null |
        jq -r .publicKey.publicKeyPem >"$2"
}
pubkey flood1.test/actor "$tmp/k10.pem"
pubkey flood2.test/users/user1 "$tmp/k21.pem"
check "the crowd publishes the keys" 'grep -q "BEGIN PUBLIC KEY" "$tmp/k10.pem" && grep -q "BEGIN PUBLIC KEY" "$tmp/k21.pem" && ! cmp -s "$tmp/k10.pem" "$tmp/k21.pem"'

# verify_cavage REQ KEY [TAMPER]: rebuild the signing string from the recorded request and
# check the signature with openssl
verify_cavage() {
    local req=$1 key=$2 tamper=${3:-}
    local sig hdrs
    sig=$(jq -r .headers.signature "$req")
    hdrs=$(echo "$sig" | sed -n 's/.*headers="\([^"]*\)".*/\1/p')
    echo "$sig" | sed -n 's/.*signature="\([^"]*\)".*/\1/p' | base64 -d >"$tmp/sig.bin" 2>/dev/null || return 1
    : >"$tmp/ss"
    local first=1 h line
    for h in $hdrs; do
        if [ "$h" = "(request-target)" ]; then
            line="(request-target): $(jq -r '.method|ascii_downcase' "$req") $(jq -r .url "$req")$tamper"
        else
            line="$h: $(jq -r --arg h "$h" '.headers[$h] // empty' "$req")"
        fi
        [ $first = 1 ] || printf '\n' >>"$tmp/ss"
        printf '%s' "$line" >>"$tmp/ss"
        first=0
    done
    openssl dgst -sha256 -verify "$key" -signature "$tmp/sig.bin" "$tmp/ss" >/dev/null 2>&1
}

"$FLOOD" fetch "${CROWD[@]}" "${TT[@]}" "http://target.test/notes/1?page=2" >"$tmp/o" 2>"$tmp/e"
req="$tmp/rec/req1.json"
check "default signer: keyId of the instance actor of instance 1" \
    'jq -r .headers.signature "$req" | grep -q "keyId=\"http://flood1.test/actor#main-key\""'
check "cavage, rsa-sha256, (request-target) host date" \
    'jq -r .headers.signature "$req" | grep -q "algorithm=\"rsa-sha256\",headers=\"(request-target) host date\""'
check "Host and an IMF-fixdate Date are sent" \
    '[ "$(jq -r .headers.host "$req")" = target.test ] && jq -r .headers.date "$req" | grep -Eq "^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$"'
check "Accept: application/activity+json by default" '[ "$(jq -r .headers.accept "$req")" = application/activity+json ]'
check "openssl verifies the signature (query string signed)" 'verify_cavage "$req" "$tmp/k10.pem"'
check "... and not over another path (negative twin)" '! verify_cavage "$req" "$tmp/k10.pem" x'
check "... nor with another actor's key (negative twin)" '! verify_cavage "$req" "$tmp/k21.pem"'
check "the JSON answer is printed" '[ "$(jq -r .type "$tmp/o")" = Note ]'

"$FLOOD" fetch "${CROWD[@]}" "${TT[@]}" --as 2/1 --accept application/ld+json http://target.test/a >/dev/null 2>&1
req="$tmp/rec/req2.json"
check "--as 2/1 signs as user1 of flood2" \
    'jq -r .headers.signature "$req" | grep -q "keyId=\"http://flood2.test/users/user1#main-key\"" && verify_cavage "$req" "$tmp/k21.pem"'
check "--accept is sent" '[ "$(jq -r .headers.accept "$req")" = application/ld+json ]'

"$FLOOD" fetch "${CROWD[@]}" "${TT[@]}" --dialect none http://target.test/text >"$tmp/o" 2>&1
req="$tmp/rec/req3.json"
check "--dialect none: no signature" '[ "$(jq -r ".headers.signature // \"none\"" "$req")" = none ]'
check "a body that is not JSON is printed as it came" '[ "$(cat "$tmp/o")" = "plain words" ]'

"$FLOOD" fetch "${CROWD[@]}" "${TT[@]}" --dialect rfc9421 http://target.test/r9 >/dev/null 2>&1
req="$tmp/rec/req4.json"
# RFC 9421 2.5: one line per covered component, then "@signature-params": the input
input=$(jq -r '.headers["signature-input"] // empty' "$req")
label=${input%%=*}
params=${input#*=}
sigb64=$(jq -r '.headers.signature // empty' "$req" | sed -n "s/^$label=:\(.*\):\$/\1/p")
: >"$tmp/base"
for c in $(echo "$params" | sed -n 's/^(\([^)]*\)).*/\1/p' | tr -d '"'); do
    case "$c" in
    @method) v=GET ;;
    @target-uri) v="http://target.test/r9" ;;
    @authority) v=target.test ;;
    @path) v=/r9 ;;
    *) v=$(jq -r --arg h "$c" '.headers[$h] // empty' "$req") ;;
    esac
    printf '"%s": %s\n' "$c" "$v" >>"$tmp/base"
done
printf '"@signature-params": %s' "$params" >>"$tmp/base"
echo "$sigb64" | base64 -d >"$tmp/sig9.bin" 2>/dev/null
check "rfc9421: Signature-Input names the instance actor's key" \
    'echo "$params" | grep -q "keyid=\"http://flood1.test/actor#main-key\""'
check "rfc9421: openssl verifies the signature base" \
    'openssl dgst -sha256 -verify "$tmp/k10.pem" -signature "$tmp/sig9.bin" "$tmp/base" >/dev/null 2>&1'
check "rfc9421: and not another actor's key (negative twin)" \
    '! openssl dgst -sha256 -verify "$tmp/k21.pem" -signature "$tmp/sig9.bin" "$tmp/base" >/dev/null 2>&1'

# 5. TLS: the crowd with --tls (same state, so the same keys) and its CA
"$FLOOD" serve --listen 127.0.0.1:0 "${CROWD[@]}" --tls --exit-after 120 --quiet >"$tmp/tls.out" 2>"$tmp/tls.err" &
pids+=($!)
for _ in $(seq 600); do
    sport=$(sed -n 's/^listening on https:\/\/.*:\([0-9][0-9]*\)$/\1/p' "$tmp/tls.out")
    [ -n "$sport" ] && break
    sleep 0.1
done
if [ -z "$sport" ]; then
    nok "flood serve --tls starts"
else
    ca=$(sed -n 's/^tls: CA certificate //p' "$tmp/tls.err" | head -1)
    [ -n "$ca" ] || ca="$tmp/state/ca.pem"
    TLS=("${CROWD[@]}" --tls --connect-to "flood1.test:443:127.0.0.1:$sport")
    "$FLOOD" fetch "${TLS[@]}" --cacert "$ca" https://flood1.test/actor >"$tmp/o" 2>"$tmp/e"
    check "https with --cacert the crowd's CA" '[ $? -eq 0 ] && [ "$(jq -r .id "$tmp/o")" = https://flood1.test/actor ]'
    "$FLOOD" fetch "${TLS[@]}" https://flood1.test/actor >/dev/null 2>"$tmp/e"
    check "... and refused without it (negative twin)" '[ $? -eq 1 ] && grep -qi "certificate" "$tmp/e"'
    "$FLOOD" fetch "${TLS[@]}" --insecure https://flood1.test/actor >"$tmp/o" 2>/dev/null
    check "... or accepted with --insecure" '[ $? -eq 0 ] && [ "$(jq -r .type "$tmp/o")" = Application ]'
fi

echo "$n tests, $failed failed"
[ "$failed" -eq 0 ]

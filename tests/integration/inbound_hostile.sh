#!/usr/bin/env bash
# Hostile input to the crowd's inboxes over real HTTP: each gets a clear 4xx with its
# reason, and the daemon keeps serving. Signed requests are made with `flood sign` and a
# crowd key (the crowd resolves its own keys without a fetch), so bad JSON gets past the
# signature check and is refused for what it is.
set -u
FLOOD=${FLOOD:-build/flood}
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
check() { if eval "$1"; then ok "$2"; else bad "$2"; fi; }

dir=$(mktemp -d)
pid="" slow=""
cleanup() {
    [ -n "$slow" ] && kill "$slow" 2>/dev/null
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

"$FLOOD" serve --listen 127.0.0.1:0 --state "$dir/state" --instances 3 --actors 2 \
    --key-pool 1 --server-threads 4 --exit-after 120 --log-deliveries \
    >"$dir/out" 2>"$dir/err" &
pid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/out")
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then
    bad "flood serve starts"
    cat "$dir/err"
    exit 1
fi
ok "flood serve listens on port $port"
base=http://127.0.0.1:$port
key=$(ls "$dir"/state/keys/rsa-2048/*.pem | head -1)
kid=http://flood2.test/users/user1#main-key

# A slow sender: headers announcing 1000 bytes, then 10 bytes and silence. Started first,
# measured last: the server must cut it off on its own (idle timeout) while serving others.
(
    start=$(date +%s)
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    printf 'POST /inbox HTTP/1.1\r\nHost: flood1.test\r\nContent-Type: application/activity+json\r\nContent-Length: 1000\r\n\r\n{"type":"C' >&3
    timeout 60 cat <&3 >/dev/null
    echo $(($(date +%s) - start)) >"$dir/slow"
) &
slow=$!

# post_signed BODY_FILE [KEY_ID] [HOST]: a signed POST to HOST's shared inbox; prints "CODE BODY"
post_signed() {
    local body=$1 k=${2:-$kid} host=${3:-flood1.test}
    local hdrs=()
    while IFS= read -r line; do hdrs+=(-H "$line"); done < <(
        "$FLOOD" sign --key "$key" --key-id "$k" --method POST --url "http://$host/inbox" \
            --body "$body")
    curl -s -w ' %{http_code}' --data-binary "@$body" "${hdrs[@]}" "$base/inbox"
}
code_of() { echo "${1##* }"; }

cat >"$dir/note.json" <<'EOF'
{"@context":"https://www.w3.org/ns/activitystreams","id":"http://flood2.test/users/user1/activities/1","type":"Create","actor":"http://flood2.test/users/user1","object":{"id":"http://flood2.test/users/user1/notes/1","type":"Note","published":"2026-01-01T00:00:00Z","content":"hi"}}
EOF
r=$(post_signed "$dir/note.json")
check '[ "$(code_of "$r")" = 202 ]' "a signed Create is accepted ($r)"

printf '{"type":"Create","actor":' >"$dir/broken.json"
r=$(post_signed "$dir/broken.json")
check '[ "$(code_of "$r")" = 400 ] && [[ "$r" == *bad_json* ]]' "malformed JSON: 400 bad_json ($r)"

python3 -c 'print("[" * 10000 + "]" * 10000)' >"$dir/deep.json" 2>/dev/null ||
    node -e 'console.log("[".repeat(10000) + "]".repeat(10000))' >"$dir/deep.json"
r=$(post_signed "$dir/deep.json")
check '[ "$(code_of "$r")" = 400 ] && [[ "$r" == *too_deep* ]]' "JSON nested 10,000 deep: 400 too_deep"

echo '{"id":"http://flood2.test/x","type":"Note"}' >"$dir/noact.json"
r=$(post_signed "$dir/noact.json")
check '[ "$(code_of "$r")" = 400 ] && [[ "$r" == *not_activity* ]]' "an object with no actor: 400 not_activity"

r=$(curl -s -w ' %{http_code}' -H "Host: flood1.test" -H 'Content-Type: application/activity+json' \
    --data-binary "@$dir/note.json" "$base/inbox")
check '[ "$(code_of "$r")" = 401 ] && [[ "$r" == *"signature: missing"* ]]' "unsigned: 401 with the reason ($r)"

r=$(post_signed "$dir/note.json" "http://elsewhere.test/users/x#main-key")
check '[ "$(code_of "$r")" = 401 ] && [[ "$r" == *host_not_allowed* ]]' "a keyId outside the allowed hosts: 401 host_not_allowed"

r=$(curl -s -w ' %{http_code}' -H "Host: flood1.test" -H 'Content-Type: text/plain' \
    --data-binary "@$dir/note.json" "$base/inbox")
check '[ "$(code_of "$r")" = 415 ]' "text/plain: 415"

head -c 2097152 /dev/zero | tr '\0' 'a' >"$dir/big.json"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: flood1.test" \
    -H 'Content-Type: application/activity+json' --data-binary "@$dir/big.json" "$base/inbox")
check '[ "$code" = 413 ]' "a 2 MiB body: 413"

big=$(head -c 102400 /dev/zero | tr '\0' 'h')
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: flood1.test" -H "X-Big: $big" "$base/users/user1")
check '[ "$code" = 431 ] || [ "$code" = 413 ] || [ "$code" = 400 ]' "100 KB of headers: clear 4xx ($code)"

code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: flood1.test" "$base/users/user1")
check '[ "$code" = 200 ]' "the daemon still serves while a slow sender waits"

wait "$slow"
slow=""
secs=$(cat "$dir/slow" 2>/dev/null || echo 999)
check '[ "$secs" -le 40 ]' "the slow sender is cut off after ${secs} s"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: flood1.test" "$base/users/user1")
check '[ "$code" = 200 ]' "the daemon still serves afterwards"

kill "$pid"
wait "$pid"
rc=$?
pid=""
check '[ "$rc" = 0 ]' "SIGTERM stops the daemon cleanly (exit $rc)"
check 'grep -q "inbound: Create from http://flood2.test/users/user1 to flood1.test/inbox: 202" "$dir/err"' \
    "--log-deliveries prints a line per delivery"
check '! grep -qi "sanitizer\|runtime error\|leak" "$dir/err"' "no sanitizer report on stderr"
echo "# $n checks, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# Two crowds federate over loopback: crowd A (flood1.test..) and crowd B (other1.test..),
# each allowed to fetch keys from the other only. A delivery signed by B's actor makes A
# fetch B's key with a signed GET; a Follow of A's actor by B's gets a signed Accept posted
# to B's inbox (after A fetches B's actor for its inbox), B verifies it by fetching A's key,
# A's followers collection shows B's actor, and Undo removes it. A key that cannot be
# fetched is 401 key_fetch, and so is one from a host that hangs, after the 5 s bound.
set -u
FLOOD=${FLOOD:-build/flood}
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
check() { if eval "$1"; then ok "$2"; else bad "$2"; fi; }

dir=$(mktemp -d)
pa="" pb=""
cleanup() {
    for p in $pa $pb; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT; [ -n "${KEEP:-}" ] && trap - EXIT

# launch NAME PORT DOMAIN ALLOW_HOST OTHER_PORT: a crowd whose URLs carry its port, allowed
# to fetch from the other crowd's first host only; sets pid_NAME, returns once listening.
launch() {
    local name=$1 port=$2 domain=$3 allow=$4 other=$5
    shift 5
    "$FLOOD" serve --listen "127.0.0.1:$port" --public-port "$port" --domain "$domain" \
        --state "$dir/state-$name" --instances 2 --actors 2 --key-pool 1 \
        --server-threads 4 --exit-after 120 --log-deliveries \
        --allow-host "$allow" --resolve "$allow:$other:127.0.0.1" "$@" \
        >"$dir/out-$name" 2>"$dir/err-$name" &
    eval "pid_$name=$!"
    for _ in $(seq 100); do
        grep -q "listening on" "$dir/out-$name" && return 0
        kill -0 "$(eval echo "\$pid_$name")" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# Both ports must be known before either starts (each names the other's): pick two, and
# pick again when one is taken.
up=""
for _ in $(seq 10); do
    port_a=$((20000 + RANDOM % 20000))
    port_b=$((40000 + RANDOM % 20000))
    pid_a="" pid_b=""
    if launch a "$port_a" 'flood%d.test' other1.test "$port_b" \
        --allow-host other2.test --resolve "other2.test:$port_b:127.0.0.1" &&
        launch b "$port_b" 'other%d.test' flood1.test "$port_a" \
            --fault other2:hang,scope=get; then
        up=1
        break
    fi
    for p in $pid_a $pid_b; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
done
pa=$pid_a pb=$pid_b
if [ -z "$up" ]; then
    bad "both crowds start"
    cat "$dir"/err-*
    exit 1
fi
ok "crowd A on $port_a, crowd B on $port_b"

A=http://flood1.test:$port_a
B=http://other1.test:$port_b
key_b=$(ls "$dir"/state-b/keys/rsa-2048/*.pem | head -1)

# send KEY_ID BODY_FILE URL: a signed POST by B's key to URL (on A); prints "BODY CODE"
send() {
    local k=$1 body=$2 url=$3 hdrs=()
    while IFS= read -r line; do hdrs+=(-H "$line"); done < <(
        "$FLOOD" sign --key "$key_b" --key-id "$k" --method POST --url "$url" --body "$body")
    curl -s -w ' %{http_code}' --resolve "flood1.test:$port_a:127.0.0.1" \
        --data-binary "@$body" "${hdrs[@]}" "$url"
}

cat >"$dir/note.json" <<EOF
{"@context":"https://www.w3.org/ns/activitystreams","id":"$B/users/user1/activities/1","type":"Create","actor":"$B/users/user1","published":"2026-01-01T00:00:00Z","object":{"id":"$B/users/user1/notes/1","type":"Note","content":"hi"}}
EOF
r=$(send "$B/users/user1#main-key" "$dir/note.json" "$A/inbox")
check '[ "${r##* }" = 202 ]' "a Create signed by B's actor verifies at A after a key fetch ($r)"
r=$(send "$B/users/user2#main-key" "$dir/note.json" "$A/inbox")
check '[ "${r##* }" = 202 ]' "a second keyId of B (user2, the same pool key) is fetched and verifies"
r=$(send "$B/users/user9#main-key" "$dir/note.json" "$A/inbox")
check '[ "${r##* }" = 401 ] && [[ "$r" == *key_fetch* ]]' "a key that cannot be fetched (404): 401 key_fetch"

# other2 (a host A may fetch from) hangs on every GET: the key fetch gives up after 5 s
start=$(date +%s%N)
r=$(send "http://other2.test:$port_b/users/user1#main-key" "$dir/note.json" "$A/inbox")
el=$((($(date +%s%N) - start) / 1000000))
check '[ "${r##* }" = 401 ] && [[ "$r" == *key_fetch* ]] && [ "$el" -ge 4900 ] && [ "$el" -lt 9000 ]' \
    "a key fetch from a hanging host is cut off after ${el} ms: 401 key_fetch"
code=$(curl -s -o /dev/null -w '%{http_code}' --resolve "flood1.test:$port_a:127.0.0.1" \
    -H 'Accept: application/activity+json' "$A/users/user1")
check '[ "$code" = 200 ]' "crowd A still serves"

cat >"$dir/follow.json" <<EOF
{"@context":"https://www.w3.org/ns/activitystreams","id":"$B/users/user1/follows/1","type":"Follow","actor":"$B/users/user1","object":"$A/users/user1"}
EOF
r=$(send "$B/users/user1#main-key" "$dir/follow.json" "$A/users/user1/inbox")
check '[ "${r##* }" = 202 ]' "B's Follow of A's user1 is accepted"
got=""
for _ in $(seq 50); do
    grep -q "inbound: Accept from $A/users/user1 to other1.test:$port_b/users/user1/inbox: 202" \
        "$dir/err-b" && got=1 && break
    sleep 0.1
done
check '[ -n "$got" ]' "A's Accept reaches B's inbox and verifies there (202)"
fol=$(curl -s --resolve "flood1.test:$port_a:127.0.0.1" -H 'Accept: application/activity+json' \
    "$A/users/user1/followers")
check '[[ "$fol" == *"$B/users/user1"* ]]' "A's user1 followers show B's user1"
fol2=$(curl -s --resolve "flood1.test:$port_a:127.0.0.1" -H 'Accept: application/activity+json' \
    "$A/users/user2/followers")
check '[[ "$fol2" != *"$B/users/user1"* ]]' "A's user2 followers do not"

cat >"$dir/undo.json" <<EOF
{"@context":"https://www.w3.org/ns/activitystreams","id":"$B/users/user1/undos/1","type":"Undo","actor":"$B/users/user1","object":$(cat "$dir/follow.json")}
EOF
r=$(send "$B/users/user1#main-key" "$dir/undo.json" "$A/users/user1/inbox")
fol=$(curl -s --resolve "flood1.test:$port_a:127.0.0.1" -H 'Accept: application/activity+json' \
    "$A/users/user1/followers")
check '[ "${r##* }" = 202 ] && [[ "$fol" != *"$B/users/user1"* ]]' "Undo(Follow) removes B's user1 from the followers"

for p in $pa $pb; do kill "$p"; wait "$p"; done
pa="" pb=""
check '! grep -qi "sanitizer\|runtime error" "$dir/err-a" "$dir/err-b"' "no sanitizer report on stderr"
echo "# $n checks, $fail failed"
[ "$fail" = 0 ]

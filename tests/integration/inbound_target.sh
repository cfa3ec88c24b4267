#!/usr/bin/env bash
# The crowd's inboxes against the reference target (tests/target, Fedify): target accounts
# follow crowd actors through the Mastodon API and get Accepts (the target then shows them
# as followed, the crowd's followers collection shows the target account); a post by the
# target is delivered to the crowd and verifies (the crowd fetches the target's keys, the
# only host it may fetch from). Then the target's deliveries to faulted instances are
# observed in its /stats: a delay (deliveries slow but succeed), 503 with Retry-After, a
# reset, a hang and 410 Gone (retried or failed as the target decides).
# INBOUND_TARGET_REPORT=FILE writes what the target showed under each fault.
set -u
cd "$(dirname "$0")/../.."
. tests/tools/target_lib.sh

dir=$(mktemp -d)
pf="" pt=""
cleanup() {
    for p in $pt $pf; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT

# The crowd names the target's port in --resolve before the target starts, and the target
# names the crowd's: pick the target's port, start the crowd on port 0, then the target.
up=""
for _ in $(seq 10); do
    tport=$(pick_port) || break
    "$FLOOD" serve --listen 127.0.0.1:0 --state "$dir/state" --instances 8 --actors 2 \
        --key-pool 1 --server-threads 8 --exit-after 170 --log-deliveries \
        --allow-host target.test --resolve "target.test:$tport:127.0.0.1" \
        --fault flood3:delay=2s,scope=inbox \
        --fault flood4:status=503,retry-after=2,scope=inbox \
        --fault flood5:reset,scope=inbox \
        --fault flood6:hang,scope=inbox \
        --fault flood7:gone,scope=inbox \
        >"$dir/flood.out" 2>"$dir/flood.err" &
    pf=$!
    fport=""
    for _ in $(seq 100); do
        fport=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/flood.out")
        [ -n "$fport" ] && break
        sleep 0.1
    done
    if [ -z "$fport" ]; then
        kill "$pf" 2>/dev/null
        wait "$pf" 2>/dev/null
        pf=""
        break # the crowd listens on port 0: a failure here is not a busy port
    fi
    timeout 170 node "$TARGET_DIR/server.mjs" --listen "127.0.0.1:$tport" --domain target.test \
        --resolve-crowd "127.0.0.1:$fport" --workers 2 >"$dir/target.out" 2>"$dir/target.err" &
    pt=$!
    for _ in $(seq 300); do
        grep -q "listening on" "$dir/target.out" && { up=1; break; }
        kill -0 "$pt" 2>/dev/null || break
        sleep 0.1
    done
    [ -n "$up" ] && break
    for p in $pt $pf; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    pt="" pf=""
done
if [ -z "$up" ]; then
    bad "the crowd and the target start"
    cat "$dir/flood.err" "$dir/target.err" 2>/dev/null | tail -20
    exit 1
fi
ok "crowd on $fport, target on $tport"
T=http://127.0.0.1:$tport
F=http://127.0.0.1:$fport

acct() {
    curl -s -X POST "$T/admin/accounts" -H 'Content-Type: application/json' -d "{\"username\":\"$1\"}"
}
api() { # api TOKEN METHOD PATH
    curl -s -X "$2" -H "Authorization: Bearer $1" "$T$3"
}
acct load0 >"$dir/load0.json"
tok=$(jq -r .token "$dir/load0.json")
me=$(jq -r .actor "$dir/load0.json")
check '[ -n "$tok" ] && [ "$tok" != null ]' "target account load0 ($me)"

# follow ACCT: look it up, follow; prints the remote account id
follow() {
    local id
    id=$(api "$tok" GET "/api/v1/accounts/lookup?acct=$1" | jq -r .id)
    api "$tok" POST "/api/v1/accounts/$id/follow" >/dev/null
    echo "$id"
}
following() { api "$tok" GET "/api/v1/accounts/relationships?id[]=$1" | jq -r '.[0].following'; }

rid=$(follow user1@flood1.test)
state=""
for _ in $(seq 100); do
    state=$(following "$rid")
    [ "$state" = true ] && break
    sleep 0.1
done
check '[ "$state" = true ]' "load0 follows user1@flood1.test: the crowd's Accept reached the target"
check 'grep -q "inbound: Follow from $me to flood1.test" "$dir/flood.err"' \
    "the target's Follow verified at the crowd (key fetched from target.test)"
fol=$(curl -s -H 'Host: flood1.test' -H 'Accept: application/activity+json' "$F/users/user1/followers")
check '[[ "$fol" == *"$me"* ]]' "the crowd's followers of user1 show load0"

rid2=$(follow user2@flood2.test)
for _ in $(seq 100); do [ "$(following "$rid2")" = true ] && break; sleep 0.1; done
check '[ "$(following "$rid2")" = true ]' "load0 follows user2@flood2.test too"

post() {
    curl -s -X POST -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
        "$T/api/v1/statuses" -d "{\"status\":\"$1\",\"visibility\":\"public\"}"
}

# The crowd's user1@flood1 follows load0: a Follow signed with the crowd's key (flood sign);
# the target fetches that key from the crowd and answers with an Accept.
key=$(ls "$dir"/state/keys/rsa-2048/*.pem | head -1)
fid="http://flood1.test/users/user1/follows/$RANDOM$RANDOM"
printf '{"@context":"https://www.w3.org/ns/activitystreams","id":"%s","type":"Follow","actor":"http://flood1.test/users/user1","object":"%s"}' \
    "$fid" "$me" >"$dir/follow.json"
hdrs=()
while IFS= read -r line; do hdrs+=(-H "$line"); done < <("$FLOOD" sign --key "$key" \
    --key-id "http://flood1.test/users/user1#main-key" --method POST \
    --url "http://target.test:$tport/users/load0/inbox" --body "$dir/follow.json")
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary "@$dir/follow.json" "${hdrs[@]}" \
    "$T/users/load0/inbox")
check '[ "$code" = 202 ]' "the target takes a Follow of load0 signed by the crowd's user1 ($code)"
got=""
for _ in $(seq 100); do
    grep -q "inbound: Accept from $me to flood1.test/users/user1/inbox: 202" "$dir/flood.err" &&
        got=1 && break
    sleep 0.1
done
check '[ -n "$got" ]' "the target's Accept reaches the crowd and verifies"

post "hello crowd" >"$dir/status.json"
got=""
for _ in $(seq 100); do
    grep -q "inbound: Create from $me to flood1.test/inbox: 202" "$dir/flood.err" && got=1 && break
    sleep 0.1
done
check '[ -n "$got" ]' "the target's post reaches its follower's shared inbox and verifies"
check '! grep -q "inbound: - from - to .*: 401" "$dir/flood.err"' "no delivery from the target was refused"

# ---- faults: follow one actor of each faulted instance, mention them, watch the target ----
for i in 3 4 5 6 7; do follow "user1@flood$i.test" >/dev/null; done
post "faults @user1@flood3.test @user1@flood4.test @user1@flood5.test @user1@flood6.test @user1@flood7.test" >/dev/null
sleep 15
curl -s "$T/stats" >"$dir/stats.json"
check 'jq -e ".deliveries.attempts > 0" "$dir/stats.json" >/dev/null' "the target's /stats shows its delivery attempts"
curl -s -H 'Host: flood1.test' "$F/.well-known/nodeinfo" -o /dev/null -w '%{http_code}' >"$dir/ni"
check '[ "$(cat "$dir/ni")" = 200 ]' "the crowd still answers NodeInfo"
fault_lines=$(grep -c "flood[3-7].test" "$dir/flood.err")
if [ -n "${INBOUND_TARGET_REPORT:-}" ]; then
    {
        echo "== target /stats after following flood3..7 (delay 2s, 503+RA 2, reset, hang, gone) and posting"
        jq '{deliveries, inbox, activities: (.activities | with_entries(.value |= {enqueued, ok, failed}))}' "$dir/stats.json"
        echo "== relationships (following) per faulted instance"
        for i in 3 4 5 6 7; do
            id=$(api "$tok" GET "/api/v1/accounts/lookup?acct=user1@flood$i.test" | jq -r .id)
            echo "flood$i: $(following "$id")"
        done
        echo "== crowd log lines for flood3..7: $fault_lines"
        grep "flood[3-7].test" "$dir/flood.err" | head -40
        echo "== target stderr"
        tail -40 "$dir/target.err"
    } >"$INBOUND_TARGET_REPORT"
fi

for p in $pt $pf; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
pt="" pf=""
check '! grep -qi "sanitizer\|runtime error" "$dir/flood.err"' "no sanitizer report on stderr"
echo "# $n checks, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# Smoke test of the reference target (tests/target): accounts, the Mastodon API subset,
# signature checks on the inbox (signed with openssl, keys served by a one-actor fake
# instance), Follow answered by Accept, the per-origin limit, --lax, and /stats.
# Run from the repository root: bash tests/integration/target_smoke.sh
# TARGET_ARGS adds options to the main target: TARGET_ARGS=--lax shows the refusal checks
# failing, as they must when signatures are not verified.
# shellcheck disable=SC2016 # jq filters use $names given with --arg
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
TARGET_DIR="$ROOT/tests/target"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
# jqt FILE FILTER [jq options...]: true when FILTER yields true on FILE.
jqt() {
    local file=$1 filter=$2
    shift 2
    jq -e "$@" "$filter" "$file" >/dev/null 2>&1
}
check() { # check "what" command...
    local what=$1
    shift
    if "$@"; then ok "$what"; else not_ok "$what"; fi
}

for tool in node npm curl jq openssl python3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "not ok 1 - $tool is not installed"; exit 1; }
done
if [ ! -d "$TARGET_DIR/node_modules/@fedify/fedify" ]; then
    (cd "$TARGET_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        { echo "not ok 1 - npm ci in tests/target"; exit 1; }
fi

TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

# The port printed on the first line "listening on http://127.0.0.1:PORT" of file $1.
wait_port() {
    local _ p
    for _ in $(seq 600); do
        p=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$1" 2>/dev/null)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}

# The fake instance: flood1.test/users/user1 with a key made here by openssl.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/key.pem" 2>/dev/null
openssl pkey -in "$TMP/key.pem" -pubout -out "$TMP/pub.pem"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/other.pem" 2>/dev/null
: >"$TMP/crowd-inbox.log"
timeout 120 python3 "$TARGET_DIR/test/mini_crowd.py" --public-key "$TMP/pub.pem" \
    --inbox-log "$TMP/crowd-inbox.log" --lifetime 110 >"$TMP/crowd.out" 2>"$TMP/crowd.err" &
PIDS+=($!)
CROWD=$(wait_port "$TMP/crowd.out") || { echo "not ok 1 - fake instance did not start"; exit 1; }

# start_target NAME ARGS...: sets STARTED_PORT (empty on failure) and STARTED_PID.
start_target() {
    local name=$1
    shift
    timeout 120 node "$TARGET_DIR/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$CROWD" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    STARTED_PID=$!
    PIDS+=("$STARTED_PID")
    STARTED_PORT=$(wait_port "$TMP/$name.out") || STARTED_PORT=""
}

# shellcheck disable=SC2086
start_target main --workers 2 --origin-burst 20 --origin-refill 0.01 ${TARGET_ARGS:-}
PORT=$STARTED_PORT
MAIN_PID=$STARTED_PID
if [ -z "$PORT" ]; then
    not_ok "target starts and prints its port"
    cat "$TMP/main.err"
    exit 1
fi
ok "target starts and prints its port ($PORT)"
B="http://127.0.0.1:$PORT"
HOSTHDR="Host: target.test:$PORT"

# HTTP status of a request; the body goes to $TMP/body.
status() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }

# eventually COMMAND...: true once COMMAND succeeds, trying for 10 s (queued work).
eventually() {
    local _
    for _ in $(seq 100); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# api_true BASE TOKEN PATH FILTER [jq options...]: GET an API path, test its JSON.
api_true() {
    local base=$1 token=$2 path=$3 filter=$4
    shift 4
    [ "$(status -H "Authorization: Bearer $token" "$base$path")" = 200 ] &&
        jqt "$TMP/body" "$filter" "$@"
}

# A draft-cavage-12 signed POST from flood1.test/users/user1, signed by openssl.
# signed_post PATH BODY [KEYFILE]
signed_post() {
    local path=$1 body=$2 key=${3:-$TMP/key.pem} date digest sig
    date=$(LC_ALL=C TZ=GMT date '+%a, %d %b %Y %H:%M:%S GMT')
    digest="SHA-256=$(printf '%s' "$body" | openssl dgst -sha256 -binary | base64 -w0)"
    sig=$(printf '(request-target): post %s\nhost: target.test:%s\ndate: %s\ndigest: %s\ncontent-type: application/activity+json' \
        "$path" "$PORT" "$date" "$digest" | openssl dgst -sha256 -sign "$key" | base64 -w0)
    status -X POST "$B$path" -H "$HOSTHDR" -H "Date: $date" -H "Digest: $digest" \
        -H 'Content-Type: application/activity+json' \
        -H "Signature: keyId=\"http://flood1.test/users/user1#main-key\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date digest content-type\",signature=\"$sig\"" \
        --data-binary "$body"
}

# Accounts.
s=$(status -X POST "$B/admin/accounts" -H 'Content-Type: application/json' -d '{"username":"load0"}')
cp "$TMP/body" "$TMP/load0.json"
check "POST /admin/accounts creates load0 (201)" test "$s" = 201
check "account answer has id, token, actor and acct" \
    jqt "$TMP/load0.json" '.id and (.token|length > 20) and .actor == $a and .acct == "load0@target.test"' \
    --arg a "http://target.test:$PORT/users/load0"
s=$(status -X POST "$B/admin/accounts" -d '{"username":"load1"}')
cp "$TMP/body" "$TMP/load1.json"
check "POST /admin/accounts creates load1 (201)" test "$s" = 201
s=$(status -X POST "$B/admin/accounts" -d '{"username":"Bad Name!"}')
check "a bad username is refused (422)" test "$s" = 422
T0=$(jq -r .token "$TMP/load0.json")
T1=$(jq -r .token "$TMP/load1.json")
ME0=$(jq -r .actor "$TMP/load0.json")

# Discovery and the actor, as another server would fetch them.
s=$(status -H "$HOSTHDR" "$B/.well-known/webfinger?resource=acct:load0@target.test")
check "WebFinger answers for acct:load0@target.test" \
    jqt "$TMP/body" '.subject == "acct:load0@target.test" and any(.links[]; .rel == "self" and .href == $a)' --arg a "$ME0"
s=$(status -H "$HOSTHDR" "$B/.well-known/webfinger?resource=acct:nobody@target.test")
check "WebFinger answers 404 for an unknown account" test "$s" = 404
s=$(status -H "$HOSTHDR" -H 'Accept: application/activity+json' "$B/users/load0")
check "actor document has id, inbox, sharedInbox and an RSA publicKey" \
    jqt "$TMP/body" '.id == $a and .type == "Person" and (.inbox|endswith("/users/load0/inbox")) and (.endpoints.sharedInbox|endswith("/inbox")) and .publicKey.owner == $a and (.publicKey.publicKeyPem|startswith("-----BEGIN PUBLIC KEY-----"))' --arg a "$ME0"
s=$(status -H "$HOSTHDR" -H 'Accept: application/activity+json' "$B/users/nobody")
check "unknown actor is 404" test "$s" = 404

# The Mastodon API.
s=$(status "$B/api/v1/accounts/verify_credentials")
check "verify_credentials without a token is 401" test "$s" = 401
s=$(status -H "Authorization: Bearer not-a-token" "$B/api/v1/timelines/home")
check "home timeline with a wrong token is 401" test "$s" = 401
s=$(status -H "Authorization: Bearer $T0" "$B/api/v1/accounts/verify_credentials")
check "verify_credentials with load0's token names load0" \
    jqt "$TMP/body" '.username == "load0" and .acct == "load0"'
s=$(status -X POST -H "Authorization: Bearer $T0" -H 'Content-Type: application/json' \
    "$B/api/v1/statuses" -d '{"status":"hello <b>world</b>","visibility":"public"}')
cp "$TMP/body" "$TMP/status.json"
check "POST /api/v1/statuses creates a status (200), HTML escaped" \
    jqt "$TMP/status.json" '.id and .content == "<p>hello &lt;b&gt;world&lt;/b&gt;</p>" and .account.acct == "load0"'
s=$(status -X POST -H "Authorization: Bearer $T0" "$B/api/v1/statuses" --data-urlencode 'status=')
check "an empty status is refused (422)" test "$s" = 422
SID=$(jq -r .id "$TMP/status.json")
SURI=$(jq -r .uri "$TMP/status.json")
s=$(status -H "Authorization: Bearer $T0" "$B/api/v1/timelines/home?limit=40")
check "the post is on load0's home timeline" jqt "$TMP/body" 'any(.[]; .id == $id)' --arg id "$SID"
s=$(status -H "Authorization: Bearer $T1" "$B/api/v1/timelines/home?limit=40")
check "load1's home timeline is empty (load1 follows nobody)" jqt "$TMP/body" 'length == 0'
s=$(status -H "$HOSTHDR" -H 'Accept: application/activity+json' "$B/users/load0/statuses/$SID")
check "the note is served at its id" jqt "$TMP/body" '.id == $u and .type == "Note"' --arg u "$SURI"
s=$(status -H "$HOSTHDR" -H 'Accept: application/activity+json' "$B/users/load0/outbox?cursor=0")
check "the outbox holds a Create with the note embedded" \
    jqt "$TMP/body" 'any(.orderedItems[]; .type == "Create" and .object.id == $u)' --arg u "$SURI"

# The inbox: unsigned and forged deliveries are refused, signed ones accepted.
FOLLOW="{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"http://flood1.test/users/user1/follows/$RANDOM$RANDOM\",\"type\":\"Follow\",\"actor\":\"http://flood1.test/users/user1\",\"object\":\"$ME0\"}"
s=$(status -X POST "$B/inbox" -H "$HOSTHDR" -H 'Content-Type: application/activity+json' --data-binary "$FOLLOW")
check "an unsigned POST to /inbox is refused (401)" test "$s" = 401
s=$(signed_post /inbox "$FOLLOW" "$TMP/other.pem")
check "a POST signed with a key not the actor's is refused (401)" test "$s" = 401
s=$(signed_post /inbox "$FOLLOW")
check "a Follow signed by flood1.test/users/user1 is accepted (202)" test "$s" = 202
eventually grep -q '"Accept"' "$TMP/crowd-inbox.log"
check "an Accept with the Follow embedded reached the fake instance" \
    jqt "$TMP/crowd-inbox.log" 'any(.[]; .type == "Accept" and .actor == $a and .object.type == "Follow" and .object.actor == "http://flood1.test/users/user1" and .object.object == $a)' -s --arg a "$ME0"
NOTE="{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"http://flood1.test/users/user1/statuses/1/activity\",\"type\":\"Create\",\"actor\":\"http://flood1.test/users/user1\",\"to\":[\"https://www.w3.org/ns/activitystreams#Public\"],\"object\":{\"id\":\"http://flood1.test/users/user1/statuses/1\",\"type\":\"Note\",\"attributedTo\":\"http://flood1.test/users/user1\",\"content\":\"hello @load1\",\"tag\":[{\"type\":\"Mention\",\"href\":\"http://target.test:$PORT/users/load1\"}]}}"
s=$(signed_post /users/load1/inbox "$NOTE")
check "a signed Create(Note) mentioning load1 is accepted (202)" test "$s" = 202
LIKE="{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"http://flood1.test/users/user1/likes/1\",\"type\":\"Like\",\"actor\":\"http://flood1.test/users/user1\",\"object\":\"$SURI\"}"
s=$(signed_post /inbox "$LIKE")
check "a signed Like of load0's post is accepted (202)" test "$s" = 202
check "the mention is on load1's home timeline, Mastodon-shaped" \
    eventually api_true "$B" "$T1" "/api/v1/timelines/home?limit=40" \
    '.[0].content == "hello @load1" and .[0].account.acct == "user1@flood1.test" and .[0].uri == "http://flood1.test/users/user1/statuses/1" and (.[0].created_at|test("^[0-9]{4}-"))'
check "load1 has a mention notification" eventually api_true "$B" "$T1" /api/v1/notifications \
    'any(.[]; .type == "mention" and .account.acct == "user1@flood1.test")'
check "load0 has follow and favourite notifications" eventually api_true "$B" "$T0" /api/v1/notifications \
    '([.[].type] | index("follow") != null and index("favourite") != null)'
check "the liked status shows favourites_count 1" \
    eventually api_true "$B" "$T0" "/api/v1/statuses/$SID" '.favourites_count == 1'

# Following a remote account through the API: Follow out, pending until the Accept.
s=$(status -H "Authorization: Bearer $T1" "$B/api/v1/accounts/lookup?acct=user1@flood1.test")
check "lookup resolves user1@flood1.test by WebFinger" \
    jqt "$TMP/body" '.acct == "user1@flood1.test" and .url == "http://flood1.test/users/user1"'
RID=$(jq -r .id "$TMP/body")
s=$(status -H "Authorization: Bearer $T1" "$B/api/v1/accounts/lookup?acct=nobody@flood1.test")
check "lookup of an unknown remote account is 404" test "$s" = 404
s=$(status -X POST -H "Authorization: Bearer $T1" "$B/api/v1/accounts/$RID/follow")
check "follow answers requested, not yet following" jqt "$TMP/body" '.requested == true and .following == false'
eventually grep -q '"Follow"' "$TMP/crowd-inbox.log"
FID=$(jq -r 'select(.type == "Follow") | .id' "$TMP/crowd-inbox.log" | head -1)
check "the Follow reached the fake instance" test -n "$FID"
ME1=$(jq -r .actor "$TMP/load1.json")
ACCEPT="{\"@context\":\"https://www.w3.org/ns/activitystreams\",\"id\":\"http://flood1.test/users/user1/accepts/1\",\"type\":\"Accept\",\"actor\":\"http://flood1.test/users/user1\",\"object\":{\"id\":\"$FID\",\"type\":\"Follow\",\"actor\":\"$ME1\",\"object\":\"http://flood1.test/users/user1\"}}"
s=$(status -H "Authorization: Bearer $T1" "$B/api/v1/accounts/relationships?id[]=$RID")
check "relationship is requested before the Accept" jqt "$TMP/body" '.[0].requested == true and .[0].following == false'
s=$(signed_post /users/load1/inbox "$ACCEPT")
check "the signed Accept is taken (202)" test "$s" = 202
check "relationship is following after the Accept" eventually api_true "$B" "$T1" \
    "/api/v1/accounts/relationships?id[]=$RID" '.[0].following == true and .[0].requested == false'

# Per-origin limit: 20 tokens per origin, nearly no refill.
codes=""
for _ in $(seq 21); do
    codes="$codes $(curl -s -o /dev/null -w '%{http_code}' -X POST "$B/inbox" -H 'Content-Type: application/activity+json' \
        -H 'Signature: keyId="http://flood9.test/users/user1#main-key",algorithm="rsa-sha256",headers="date",signature="AA=="' -d '{}')"
done
check "the 21st POST from one origin within its burst of 20 is 429" test "${codes##* }" = 429
check "the first 20 POSTs from that origin were not limited" test "$(echo "$codes" | grep -o 429 | wc -l)" = 1
s=$(status -D "$TMP/headers" -X POST "$B/inbox" -H 'Content-Type: application/activity+json' \
    -H 'Signature: keyId="http://flood9.test/users/user1#main-key",algorithm="rsa-sha256",headers="date",signature="AA=="' -d '{}')
check "a 429 carries Retry-After in whole seconds" grep -qiE '^retry-after: [0-9]+' "$TMP/headers"
s=$(status -X POST "$B/inbox" -H 'Content-Type: application/activity+json' \
    -H 'Signature: keyId="http://flood8.test/users/user1#main-key",algorithm="rsa-sha256",headers="date",signature="AA=="' -d '{}')
check "another origin is not limited" test "$s" != 429

# /stats.
s=$(status "$B/stats")
check "/stats answers without a token (200)" test "$s" = 200
check "/stats counts verdicts, queue figures, deliveries and the store" \
    jqt "$TMP/body" '.inbox.accepted >= 4 and .inbox.rejected.signature >= 2 and .inbox.rejected["rate-limited"] >= 2 and .queue.peak >= 0 and .activities.Follow.ok >= 1 and (.activities.Create.queue_wait_ms.p50 != null) and (.activities.Create.processing_ms.p95 != null) and .deliveries.queued.Accept >= 1 and .deliveries.ok >= 2 and .store.posts_held >= 2 and .store.following == 1 and .store.followers == 1'

# --lax: the same unsigned delivery refused above is taken.
start_target lax --lax
LPORT=$STARTED_PORT
if [ -n "$LPORT" ]; then
    ok "target starts with --lax ($LPORT)"
    curl -s -X POST "http://127.0.0.1:$LPORT/admin/accounts" -d '{"username":"load0"}' >"$TMP/lax0.json"
    LNOTE=${NOTE//"http://target.test:$PORT/users/load1"/"http://target.test:$LPORT/users/load0"}
    s=$(status -X POST "http://127.0.0.1:$LPORT/inbox" -H "Host: target.test:$LPORT" \
        -H 'Content-Type: application/activity+json' --data-binary "$LNOTE")
    check "with --lax an unsigned Create is accepted (202)" test "$s" = 202
    check "with --lax the unsigned note reaches the timeline" eventually api_true \
        "http://127.0.0.1:$LPORT" "$(jq -r .token "$TMP/lax0.json")" /api/v1/timelines/home 'length == 1'
else
    not_ok "target starts with --lax"
    sed 's/^/#   stderr: /' "$TMP/lax.err" | head -20
    sed 's/^/#   stdout: /' "$TMP/lax.out" | head -5
fi

# Stopping: SIGTERM ends the target promptly.
kill "$MAIN_PID"
stopped=no
for _ in $(seq 50); do
    kill -0 "$MAIN_PID" 2>/dev/null || { stopped=yes; break; }
    sleep 0.1
done
check "SIGTERM stops the target within 5 s" test "$stopped" = yes

if [ "$failed" -ne 0 ]; then
    echo "--- target stderr"
    cat "$TMP/main.err"
fi
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

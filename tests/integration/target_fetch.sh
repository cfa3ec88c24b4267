#!/usr/bin/env bash
# What the reference target (tests/target) fetches back for what it is sent: media
# attachments, link cards and their images, reply parents, announced posts, actors on
# Update(Person), custom emoji; Delete, poll votes and emoji reactions; the fetch cache and
# --no-fetch-cache; and that the target's count of its GETs by kind equals the count the
# fake instance (tests/target/test/mini_crowd.py) keeps of the GETs it served.
# Deliveries are signed with openssl, as in target_smoke.sh.
# Run from the repository root: bash tests/integration/target_fetch.sh
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
# expect_eq GOT WANT "what"
expect_eq() {
    if [ "$1" = "$2" ]; then ok "$3"; else
        not_ok "$3"
        echo "#   got:  $1"
        echo "#   want: $2"
    fi
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

# The unit tests of the target's parsers and of the fetch-kind rule (node:test).
if (cd "$TARGET_DIR" && timeout 60 node --test test/ >"$TMP/unit.log" 2>&1); then
    ok "unit tests of tests/target (node --test tests/target/test/)"
else
    not_ok "unit tests of tests/target (node --test tests/target/test/)"
    grep -E '^not ok|Error|expected|actual' "$TMP/unit.log" | head -20 | sed 's/^/#   /'
fi

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

# The fake instance flood1.test with actors user1..user3, one key made here by openssl.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/key.pem" 2>/dev/null
openssl pkey -in "$TMP/key.pem" -pubout -out "$TMP/pub.pem"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/key2.pem" 2>/dev/null
openssl pkey -in "$TMP/key2.pem" -pubout -out "$TMP/pub2.pem"
: >"$TMP/crowd-inbox.log"
timeout 170 python3 "$TARGET_DIR/test/mini_crowd.py" --public-key "$TMP/pub.pem" \
    --next-public-key "$TMP/pub2.pem" --inbox-log "$TMP/crowd-inbox.log" --actors user1,user2,user3 --lifetime 160 \
    >"$TMP/crowd.out" 2>"$TMP/crowd.err" &
PIDS+=($!)
CROWD=$(wait_port "$TMP/crowd.out") || { echo "not ok 1 - fake instance did not start"; exit 1; }
CB="http://127.0.0.1:$CROWD"
C=http://flood1.test
U1=$C/users/user1
U2=$C/users/user2
U3=$C/users/user3
PUB=https://www.w3.org/ns/activitystreams#Public

# start_target NAME ARGS...: sets PORT (empty on failure), TPID, B, ME, TOKEN.
start_target() {
    local name=$1
    shift
    timeout 170 node "$TARGET_DIR/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$CROWD" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    TPID=$!
    PIDS+=("$TPID")
    TNAME=$name
    PORT=$(wait_port "$TMP/$name.out") || PORT=""
    [ -n "$PORT" ] || return 1
    B="http://127.0.0.1:$PORT"
    curl -s -X POST "$B/admin/accounts" -d '{"username":"load0"}' >"$TMP/load0.json"
    ME=$(jq -r .actor "$TMP/load0.json")
    TOKEN=$(jq -r .token "$TMP/load0.json")
    [ -n "$TOKEN" ] && [ "$TOKEN" != null ]
}

# signed_post ACTOR BODY: a draft-cavage-12 signed POST to the shared inbox, signed with
# the crowd's first key, or the second for the actors in $ROTATED; prints the status.
ROTATED=""
signed_post() {
    local actor=$1 body=$2 date digest sig key=$TMP/key.pem
    case " $ROTATED " in *" $actor "*) key=$TMP/key2.pem ;; esac
    date=$(LC_ALL=C TZ=GMT date '+%a, %d %b %Y %H:%M:%S GMT')
    digest="SHA-256=$(printf '%s' "$body" | openssl dgst -sha256 -binary | base64 -w0)"
    sig=$(printf '(request-target): post /inbox\nhost: target.test:%s\ndate: %s\ndigest: %s\ncontent-type: application/activity+json' \
        "$PORT" "$date" "$digest" | openssl dgst -sha256 -sign "$key" | base64 -w0)
    curl -s -o /dev/null -w '%{http_code}' -X POST "$B/inbox" -H "Host: target.test:$PORT" \
        -H "Date: $date" -H "Digest: $digest" -H 'Content-Type: application/activity+json' \
        -H "Signature: keyId=\"$actor#main-key\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date digest content-type\",signature=\"$sig\"" \
        --data-binary "$body"
}

# deliver "what" ACTOR JQ_PROGRAM [jq args...]: builds the activity with jq -n and posts it;
# one check that it was taken (202). The program sees $c, $me, $pub and $u1..$u3.
deliver() {
    local what=$1 actor=$2 prog=$3 body s
    shift 3
    body=$(jq -n -c --arg c "$C" --arg me "$ME" --arg pub "$PUB" --arg u1 "$U1" --arg u2 "$U2" \
        --arg u3 "$U3" "$@" "{\"@context\": \"https://www.w3.org/ns/activitystreams\"} + ($prog)")
    s=$(signed_post "$actor" "$body")
    expect_eq "$s" 202 "$what is taken (202)"
}

# settle: waits (up to 20 s) until the inbox queue and every pool are idle twice in a row,
# then leaves /stats in $TMP/stats.json and the crowd's counts in $TMP/crowd.json.
IDLE='.queue.depth == 0 and .queue.busy_workers == 0 and ([.pools[] | .depth + .busy_workers] | add) == 0'
settle() {
    local _ quiet=0
    for _ in $(seq 200); do
        if curl -s "$B/stats" >"$TMP/stats.json" && jqt "$TMP/stats.json" "$IDLE"; then
            quiet=$((quiet + 1))
            [ "$quiet" -ge 2 ] && break
        else
            quiet=0
        fi
        sleep 0.1
    done
    curl -s "$CB/_crowd/stats" >"$TMP/crowd.json"
}
# served URL: how many times the crowd served URL (after settle).
served() { jq --arg u "$1" '.urls[$u] // 0' "$TMP/crowd.json"; }
# counted FILE KIND: the count of KIND in a /stats or crowd JSON.
counted() { jq --arg k "$2" '.by_kind[$k].count // .fetches.by_kind[$k].count // 0' "$1"; }
# api PATH: GET an API path as load0; the body in $TMP/api.json.
api() { curl -s -H "Authorization: Bearer $TOKEN" "$B$1" >"$TMP/api.json"; }
# status_of URI: the id of the status with that uri on load0's home timeline.
status_of() {
    api "/api/v1/timelines/home?limit=40"
    jq -r --arg u "$1" 'map(select(.uri == $u))[0].id // empty' "$TMP/api.json"
}
# by_kind_counts FILE: "kind=count ..." for the kinds counted at least once.
by_kind_counts() {
    jq -r '(.fetches.by_kind // .by_kind) | to_entries | map(select(.value.count > 0) | "\(.key)=\(.value.count)") | join(" ")' "$1"
}

# --- A target with the fetch cache on, 3 reply parents, media up to 100000 bytes.
if ! start_target cached --media-max-bytes 100000 --reply-depth 3 --media-workers 2 \
    --link-workers 1 --fetch-workers 2; then
    not_ok "target starts and makes load0"
    cat "$TMP/cached.err"
    exit 1
fi
ok "target starts and makes load0 ($PORT)"
settle
check "/stats shows the three pools, fetches by kind and the fetch cache on" jqt "$TMP/stats.json" \
    '(.pools | keys) == ["fetch", "link", "media"] and .pools.media.workers == 2 and .pools.link.workers == 1 and (.pools.fetch.queue_wait_ms | has("p95")) and (.fetches.by_kind | has("actor") and has("media") and has("other")) and .fetches.cache.enabled == true and .config.reply_depth == 3 and .config.media_max_bytes == 100000'

# Media: a Create with two attachments makes two media fetches.
deliver "a Create(Note) with 2 attachments" "$U1" '{id: "\($u1)/activities/att", type: "Create", actor: $u1, to: [$pub], cc: [$me],
  object: {id: "\($u1)/notes/att", type: "Note", attributedTo: $u1, content: "<p>two pictures</p>", to: [$pub], cc: [$me],
    tag: [{type: "Mention", href: $me}],
    attachment: [{type: "Image", mediaType: "image/png", url: "\($c)/media/a1.png", name: "first", width: 640, height: 480, blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj"},
                 {type: "Document", mediaType: "image/jpeg", url: "\($c)/media/a2.jpg", name: "second"}]}}'
settle
expect_eq "$(served "$C/media/a1.png") $(served "$C/media/a2.jpg")" "1 1" "each attachment was fetched once"
expect_eq "$(counted "$TMP/stats.json" media)" 2 "the target counts 2 media fetches"
ATT=$(status_of "$U1/notes/att")
api "/api/v1/statuses/$ATT"
check "the status shows both attachments, downloaded and verified" jqt "$TMP/api.json" \
    '(.media_attachments | length) == 2 and all(.media_attachments[]; .flood_state == "ok") and .media_attachments[0].description == "first"'

# The cache: a1.png again is not fetched again; a liar and an oversized file are counted.
deliver "a Create repeating a1.png, with a mislabeled and an oversized attachment" "$U1" '{id: "\($u1)/activities/att2", type: "Create", actor: $u1, to: [$pub], cc: [$me],
  object: {id: "\($u1)/notes/att2", type: "Note", attributedTo: $u1, content: "<p>more</p>", to: [$pub], cc: [$me], tag: [{type: "Mention", href: $me}],
    attachment: [{type: "Image", mediaType: "image/png", url: "\($c)/media/a1.png"},
                 {type: "Image", mediaType: "image/png", url: "\($c)/media/liar.png?magic=gif"},
                 {type: "Image", mediaType: "image/png", url: "\($c)/media/big.png?size=200000"},
                 {type: "Video", mediaType: "video/mp4", url: "\($c)/media/clip.bin"}]}}'
settle
expect_eq "$(served "$C/media/a1.png")" 1 "with the fetch cache a repeated media URL is fetched once"
check "a GIF sent as image/png counts as a type mismatch, 200000 bytes as too large, video/mp4 as unsupported (not fetched)" \
    jqt "$TMP/stats.json" '.media.type_mismatch == 1 and .media.too_large == 1 and .media.unsupported_type == 1 and .media.cache_hits >= 1'
expect_eq "$(served "$C/media/clip.bin")" 0 "an unsupported media type is not downloaded"

# A link card: the page and its og:image; the mention's link is not crawled.
deliver "a Create(Note) with a mention and a link" "$U1" '{id: "\($u1)/activities/link", type: "Create", actor: $u1, to: [$pub], cc: [$me],
  object: {id: "\($u1)/notes/link", type: "Note", attributedTo: $u1, to: [$pub], cc: [$me], tag: [{type: "Mention", href: $me}],
    content: "<p><span class=\"h-card\"><a href=\"\($me)\" class=\"u-url mention\">@<span>load0</span></a></span> see <a href=\"\($c)/pages/p1\" rel=\"nofollow noopener\">this page</a></p>"}}'
settle
expect_eq "$(served "$C/pages/p1") $(served "$C/media/p1-og.png")" "1 1" "a link makes 1 page fetch and 1 og:image fetch"
expect_eq "$(counted "$TMP/stats.json" link)" 1 "the target counts 1 link fetch"
api "/api/v1/statuses/$(status_of "$U1/notes/link")"
check "the status carries the link card from OpenGraph" jqt "$TMP/api.json" \
    '.card.title == "Page p1" and .card.description == "About p1 & more" and .card.image == $i' --arg i "$C/media/p1-og.png"

# Reply parents: a reply to chain-4 (chain-4 -> chain-3 -> chain-2 -> chain-1) with
# --reply-depth 3 fetches chain-4, chain-3 and chain-2.
deliver "a reply whose thread is 4 posts deep" "$U1" '{id: "\($u1)/activities/reply", type: "Create", actor: $u1, to: [$pub], cc: [$me],
  object: {id: "\($u1)/notes/reply", type: "Note", attributedTo: $u1, content: "<p>a reply</p>", to: [$pub], cc: [$me],
    tag: [{type: "Mention", href: $me}], inReplyTo: "\($u1)/notes/chain-4"}}'
settle
expect_eq "$(served "$U1/notes/chain-4") $(served "$U1/notes/chain-3") $(served "$U1/notes/chain-2") $(served "$U1/notes/chain-1")" \
    "1 1 1 0" "--reply-depth 3 fetches the 3 nearest parents, not the 4th"
check "the target counts 3 parents fetched and 1 left at the depth limit" jqt "$TMP/stats.json" \
    '.objects.parents_fetched == 3 and .objects.depth_limited == 1 and .pools.fetch.jobs.parent.ok == 3'

# Announce of a note the target has never seen: it is fetched once.
deliver "an Announce of an unknown note" "$U1" '{id: "\($u1)/activities/boost1", type: "Announce", actor: $u1, to: [$pub], cc: [$me], object: "\($u1)/notes/solo-1"}'
settle
expect_eq "$(served "$U1/notes/solo-1")" 1 "the announced note was fetched once"
check "the Announce is counted as about an unknown object, and the note stored" jqt "$TMP/stats.json" \
    '.activities.Announce.by_object.unknown.ok == 1 and .objects.announced_fetched == 1 and .pools.fetch.jobs.announced.ok == 1'

# Announce of load0's own post: counted, nothing fetched.
curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    "$B/api/v1/statuses" -d '{"status":"hello from load0"}' >"$TMP/own.json"
OWN=$(jq -r .uri "$TMP/own.json")
OWNID=$(jq -r .id "$TMP/own.json")
deliver "an Announce of load0's post" "$U2" '{id: "\($u2)/activities/boost2", type: "Announce", actor: $u2, to: [$pub], cc: [$me], object: $own}' --arg own "$OWN"
settle
api "/api/v1/statuses/$OWNID"
check "load0's post shows reblogs_count 1" jqt "$TMP/api.json" '.reblogs_count == 1'

# Update(Person): the actor is fetched again, with its new avatar and header.
before=$(served "$U1")
curl -s -X POST "$CB/_crowd/bump?actor=user1" >/dev/null
deliver "an Update(Person)" "$U1" '{id: "\($u1)#updates/1", type: "Update", actor: $u1, to: [$pub], object: {id: $u1, type: "Person", name: "user1 v2"}}'
settle
expect_eq "$(( $(served "$U1") - before ))" 1 "Update(Person) makes the target fetch the actor again"
expect_eq "$(served "$U1/avatar.png?v=2") $(served "$U1/header.png?v=2")" "1 1" "and the new avatar and header"
api "/api/v1/statuses/$(status_of "$U1/notes/link")"
check "the account shows its new name and avatar" jqt "$TMP/api.json" \
    '.account.display_name == "user1 v2" and (.account.avatar | endswith("/avatar.png?v=2"))'

# A rotated key: user2's Update(Person) signed with its new key is taken (the stale cached
# key fails, the key is fetched again), and so is what user2 signs with it next.
curl -s -X POST "$CB/_crowd/bump?actor=user2&rotate=1" >/dev/null
before=$(served "$U2")
ROTATED="$U2"
deliver "an Update(Person) of user2 signed with its rotated key" "$U2" \
    '{id: "\($u2)#updates/1", type: "Update", actor: $u2, to: [$pub], object: {id: $u2, type: "Person"}}'
settle
check "the key and the actor were fetched again (2 or more GETs of user2)" test "$(( $(served "$U2") - before ))" -ge 2
deliver "a Like signed with the rotated key" "$U2" \
    '{id: "\($u2)/likes/1", type: "Like", actor: $u2, object: $own}' --arg own "$OWN"
settle
check "Update(Person) counted twice, the Like processed" jqt "$TMP/stats.json" \
    '.activities.Update.by_object.Person.ok == 2 and .activities.Like.ok == 1 and .objects.actors_refetched == 2'

# A poll from the crowd is stored with its options and counts; Update(Question) moves them.
deliver "a Create(Question)" "$U1" '{id: "\($u1)/activities/q1", type: "Create", actor: $u1, to: [$pub], cc: [$me],
  object: {id: "\($u1)/notes/q1", type: "Question", attributedTo: $u1, content: "<p>tea?</p>", to: [$pub], cc: [$me], tag: [{type: "Mention", href: $me}],
    endTime: "2099-01-01T00:00:00Z", votersCount: 3,
    anyOf: [{type: "Note", name: "yes", replies: {type: "Collection", totalItems: 2}}, {type: "Note", name: "no", replies: {type: "Collection", totalItems: 1}}]}}'
deliver "an Update(Question) with new counts" "$U1" '{id: "\($u1)/activities/q1-update", type: "Update", actor: $u1, to: [$pub],
  object: {id: "\($u1)/notes/q1", type: "Question", attributedTo: $u1, content: "<p>tea?</p>", votersCount: 4,
    anyOf: [{type: "Note", name: "yes", replies: {type: "Collection", totalItems: 3}}, {type: "Note", name: "no", replies: {type: "Collection", totalItems: 1}}]}}'
settle
api "/api/v1/statuses/$(status_of "$U1/notes/q1")"
check "the remote poll shows its options, counts and voters after the update" jqt "$TMP/api.json" \
    '.poll.multiple == true and .poll.options == [{"title": "yes", "votes_count": 3}, {"title": "no", "votes_count": 1}] and .poll.voters_count == 4'

# Undo of an Announce.
deliver "an Undo of the Announce of load0's post" "$U2" '{id: "\($u2)/activities/undo-boost2", type: "Undo", actor: $u2,
  object: {id: "\($u2)/activities/boost2", type: "Announce", actor: $u2, object: $own}}' --arg own "$OWN"
settle
api "/api/v1/statuses/$OWNID"
check "the reblog is gone (reblogs_count 0)" jqt "$TMP/api.json" '.reblogs_count == 0'

# Delete of a note sent earlier.
deliver "a Delete(Tombstone) of the note with attachments" "$U1" '{id: "\($u1)/activities/del1", type: "Delete", actor: $u1, to: [$pub], object: {id: "\($u1)/notes/att", type: "Tombstone"}}'
settle
s=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$B/api/v1/statuses/$ATT")
expect_eq "$s" 404 "the deleted status is gone (404)"

# A poll by load0 and a vote.
curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' "$B/api/v1/statuses" \
    -d '{"status":"red or blue?","poll":{"options":["red","blue"],"expires_in":3600}}' >"$TMP/poll.json"
POLL=$(jq -r .uri "$TMP/poll.json")
POLLID=$(jq -r .id "$TMP/poll.json")
curl -s -H "Host: target.test:$PORT" -H 'Accept: application/activity+json' "$B${POLL#http://target.test:"$PORT"}" >"$TMP/question.json"
check "the poll is served as a Question with oneOf options" jqt "$TMP/question.json" \
    '.type == "Question" and ([.oneOf[].name] == ["red", "blue"])'
deliver "a vote for blue" "$U2" '{id: "\($u2)/activities/vote1", type: "Create", actor: $u2, to: [$me],
  object: {id: "\($u2)/notes/vote1", type: "Note", attributedTo: $u2, name: "blue", inReplyTo: $poll, to: [$me]}}' --arg poll "$POLL"
deliver "a second vote by the same voter" "$U2" '{id: "\($u2)/activities/vote2", type: "Create", actor: $u2, to: [$me],
  object: {id: "\($u2)/notes/vote2", type: "Note", attributedTo: $u2, name: "red", inReplyTo: $poll, to: [$me]}}' --arg poll "$POLL"
settle
api "/api/v1/statuses/$POLLID"
check "the vote counts once (blue 1, red 0, 1 voter)" jqt "$TMP/api.json" \
    '.poll.options == [{"title": "red", "votes_count": 0}, {"title": "blue", "votes_count": 1}] and .poll.voters_count == 1'
check "the second vote is ignored as already-voted" jqt "$TMP/stats.json" \
    '.activities.Create.by_object.vote.ok == 1 and .activities.Create.reasons["already-voted"] == 1'

# Emoji reactions: Pleroma's EmojiReact, Misskey's Like with _misskey_reaction (custom
# emoji, its icon fetched once), and the Undo of one.
deliver "an EmojiReact 👍 on load0's post" "$U3" '{id: "\($u3)/activities/react1", type: "EmojiReact", actor: $u3, object: $own, content: "👍"}' --arg own "$OWN"
deliver "a Misskey reaction :blob: on load0's post" "$U2" '{id: "\($u2)/activities/react2", type: "Like", actor: $u2, object: $own, content: ":blob:", _misskey_reaction: ":blob:",
  tag: [{type: "Emoji", id: "\($c)/emoji/blob", name: ":blob:", icon: {type: "Image", mediaType: "image/png", url: "\($c)/emoji/blob.png"}}]}' --arg own "$OWN"
settle
api "/api/v1/statuses/$OWNID"
check "both reactions count on load0's post" jqt "$TMP/api.json" \
    '(.pleroma.emoji_reactions | map({(.name): .count}) | add) == {"👍": 1, ":blob:": 1}'
expect_eq "$(served "$C/emoji/blob.png")" 1 "the custom emoji's icon was fetched once"
deliver "an Undo of the EmojiReact" "$U3" '{id: "\($u3)/activities/undo-react1", type: "Undo", actor: $u3,
  object: {id: "\($u3)/activities/react1", type: "EmojiReact", actor: $u3, object: $own, content: "👍"}}' --arg own "$OWN"
settle
api "/api/v1/statuses/$OWNID"
check "the undone reaction is gone" jqt "$TMP/api.json" '[.pleroma.emoji_reactions[].name] == [":blob:"]'

# Delete of an actor: its account and posts go.
deliver "a Create by user3" "$U3" '{id: "\($u3)/activities/p1", type: "Create", actor: $u3, to: [$pub], cc: [$me],
  object: {id: "\($u3)/notes/p1", type: "Note", attributedTo: $u3, content: "<p>bye</p>", to: [$pub], cc: [$me], tag: [{type: "Mention", href: $me}]}}'
settle
P3=$(status_of "$U3/notes/p1")
deliver "a Delete of the actor user3" "$U3" '{id: "\($u3)#delete", type: "Delete", actor: $u3, to: [$pub], object: $u3}'
settle
s=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$B/api/v1/statuses/$P3")
check "Delete(actor) removes the account and its posts" test -n "$P3" -a "$s" = 404
check "/stats counts every new activity type with its outcome" jqt "$TMP/stats.json" \
    '.activities.Announce.ok == 2 and .activities.Update.by_object.Person.ok == 2 and .activities.Delete.by_object.Tombstone.ok == 1 and .activities.Delete.by_object.actor.ok == 1 and .activities.EmojiReact.ok == 2 and .activities.Undo.by_object.EmojiReact.ok == 1 and .activities.Undo.by_object.Announce.ok == 1 and .activities.Create.by_object.Question.ok == 1 and .activities.Update.by_object.Question.ok == 1 and .store.accounts_deleted == 1'

# The two counts of GETs, the target's and the crowd's, agree kind by kind.
tk=$(by_kind_counts "$TMP/stats.json")
ck=$(by_kind_counts "$TMP/crowd.json")
expect_eq "$tk" "$ck" "the target's fetches by kind equal the crowd's count of GETs served ($ck)"
check "the target's total equals the crowd's" test "$(jq .fetches.total.count "$TMP/stats.json")" = "$(jq .total.count "$TMP/crowd.json")"
[ "$failed" -eq 0 ] || { echo "--- target stderr"; cat "$TMP/$TNAME.err"; }

# --- A target with --no-fetch-cache: the same media URL is fetched every time.
kill "$TPID" 2>/dev/null
curl -s -X POST "$CB/_crowd/reset" >/dev/null
if start_target uncached --no-fetch-cache; then
    ok "target starts with --no-fetch-cache ($PORT)"
    for i in 1 2; do
        deliver "Create $i with the attachment same.png" "$U1" '{id: "\($u1)/activities/same\($i)", type: "Create", actor: $u1, to: [$pub], cc: [$me],
  object: {id: "\($u1)/notes/same\($i)", type: "Note", attributedTo: $u1, content: "<p>again</p>", to: [$pub], cc: [$me], tag: [{type: "Mention", href: $me}],
    attachment: [{type: "Image", mediaType: "image/png", url: "\($c)/media/same.png"}]}}' --arg i "$i"
    done
    settle
    expect_eq "$(served "$C/media/same.png")" 2 "with --no-fetch-cache a repeated media URL is fetched twice"
    check "actor and key fetches are not cached either (3 or more actor GETs for 2 deliveries)" \
        test "$(counted "$TMP/crowd.json" actor)" -ge 3
    check "/stats says the fetch cache is off" jqt "$TMP/stats.json" '.fetches.cache.enabled == false and .config.fetch_cache == false'
    tk=$(by_kind_counts "$TMP/stats.json")
    ck=$(by_kind_counts "$TMP/crowd.json")
    expect_eq "$tk" "$ck" "without the cache too, the target's fetches by kind equal the crowd's ($ck)"
else
    not_ok "target starts with --no-fetch-cache"
fi

if [ "$failed" -ne 0 ]; then
    echo "--- target stderr"
    cat "$TMP/$TNAME.err"
fi
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Realistic traffic against the reference target (tests/target, Fedify): a seeded run with
# every kind in the mix and the heavy content profile (media sizes capped for a test) is
# accepted and processed (the target's /stats activities by type); the mix shares hold; the
# crowd's count of the target's GETs by kind equals the target's own count (same kind rule,
# discovery included, compared once the target is idle, through --metrics during
# --metrics-hold); every URL of a sample of sent activities answers 200 with the right
# content type; --rotate-keys: the target takes the rotated keys; a target with
# --no-fetch-cache repeats fetches, one with its cache repeats no media; a slow media host
# (--fault all:delay=2s,scope=media) backs up the target's media pool, not its inbox queue.
# shellcheck disable=SC2016 # jq filters
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh" # need_target, free_port (its jget is replaced below)
need_target

# start_target NAME [target options]: TPORT, TPID; the crowd is to listen on CPORT. An
# account alice with three posts (to like and react to).
start_target() {
    local name=$1
    shift
    CPORT=$(free_port)
    node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$CPORT" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
    TPID=$!
    T_PIDS="$T_PIDS $TPID"
    TPORT=""
    for _ in $(seq 1 300); do
        TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/$name.out")
        [ -n "$TPORT" ] && break
        sleep 0.1
    done
    [ -n "$TPORT" ] || return 1
    local tok
    tok=$(curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
        "http://127.0.0.1:$TPORT/admin/accounts" | jq -r .token)
    for i in 1 2 3; do
        curl -sf -X POST -H "authorization: Bearer $tok" -H 'content-type: application/json' \
            -d "{\"status\":\"post $i\"}" "http://127.0.0.1:$TPORT/api/v1/statuses" >/dev/null ||
            return 1
    done
}

tstats() {
    curl -sf "http://127.0.0.1:$TPORT/stats" | jq -r "$1"
}

# wait_idle SECONDS: until the target's inbox queue and pools are empty and idle.
wait_idle() {
    for _ in $(seq 1 $(($1 * 2))); do
        [ "$(tstats '[.queue.depth, .queue.busy_workers, (.pools[] | .depth, .busy_workers)]
                     | add')" = 0 ] && return 0
        sleep 0.5
    done
    return 1
}

# trun NAME ARGS...: flood run against the target in the background, its metrics held for
# a minute; waits for its results. RUN_DIR, RUN_PID, MURL (its /metrics).
trun() {
    local name=$1
    shift
    RUN_DIR=$T_TMP/$name
    "$FLOOD" run --listen "127.0.0.1:$CPORT" --public-port "$CPORT" --state "$TEST_STATE" \
        --instances 3 --actors 4 --key-pool 4 --persona "http://target.test:$TPORT/users/alice" \
        --resolve "target.test:$TPORT:127.0.0.1" --timeout 30s --grace 5s --seed 11 \
        --metrics 127.0.0.1:0 --metrics-hold 90s --out "$RUN_DIR" "$@" \
        >"$T_TMP/$name.run.out" 2>"$T_TMP/$name.run.err" &
    RUN_PID=$!
    T_PIDS="$T_PIDS $RUN_PID"
    MURL=""
    for _ in $(seq 1 1200); do
        [ -z "$MURL" ] && MURL=$(sed -n 's/^flood: run: metrics on \(http:[^ ]*\)$/\1/p' \
            "$T_TMP/$name.run.err" | head -1)
        grep -q '^results: ' "$T_TMP/$name.run.out" && return 0
        kill -0 "$RUN_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "# flood run $name did not finish:"
    tail -5 "$T_TMP/$name.run.err" | sed 's/^/#   /'
    return 1
}

# end_run: SIGTERM ends the metrics hold; the exit code in RUN_RC.
end_run() {
    kill -TERM "$RUN_PID" 2>/dev/null
    wait "$RUN_PID"
    RUN_RC=$?
}

jget() { jq -r "$1" "$RUN_DIR/run.json"; }

# fetch_compare WHAT: the crowd's count of GETs by kind (its metrics, now) equals the
# target's (its /stats, now), kind by kind.
fetch_compare() {
    local crowd target
    crowd=$(curl -sf "$MURL" | sed -n 's/^flood_fetches_total{kind="\([a-z]*\)"} \([0-9]*\)$/\1=\2/p' |
        grep -v '=0$' | sort | tr '\n' ' ')
    target=$(tstats '.fetches.by_kind | to_entries[] | select(.value.count > 0)
                     | "\(.key)=\(.value.count)"' | sort | tr '\n' ' ')
    echo "# $1: crowd served  $crowd"
    echo "# $1: target fetched $target"
    expect_eq "$crowd" "$target" "$1: the crowd's fetches by kind equal the target's own count"
}

KINDS="create announce reply update delete update-actor question vote emoji-react like follow"
MIX="create=16,announce=10,reply=10,update=8,delete=6,update-actor=8,question=6,vote=6,emoji-react=10,like=12,follow=8"
CAP="media-size=20k,media-max=48k"

# 1. every kind, the heavy profile; the target processes each
start_target main
check $? "the reference target starts, alice has 3 posts"
trun main --stages 8:10s,0:8s --mix "$MIX" --content heavy --content-opt "$CAP"
check $? "a run of every kind with --content heavy finishes"
wait_idle 60
check $? "the target's queue and pools drain"
fetch_compare "every kind"
sent=$(jget .totals.sent)
expect_eq "$(jget '.totals.outcomes["202"]')" "$sent" "all $sent answered 202 by the target"
expect_eq "$(tstats '.inbox.accepted')/$(tstats '[.inbox.rejected[]] | add // 0')" "$sent/0" \
    "the target verified all $sent signatures"
for k in $KINDS; do
    n=$(jget ".operations[\"$k\"].scheduled // 0")
    [ "$n" -gt 0 ]
    check $? "$k sent ($n)"
done
# shares: the weights over 100 against what was scheduled (update and delete fall back to
# a Create while the sender has none, so create is not checked)
python3 - "$RUN_DIR/run.json" "$MIX" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
want = dict((k, int(v)) for k, v in (e.split("=") for e in sys.argv[2].split(",")))
total = sum(op["scheduled"] for op in run["operations"].values())
bad = []
for k, w in want.items():
    if k == "create":
        continue
    got = sum(op["scheduled"] for name, op in run["operations"].items()
              if name == k or (name == "undo" and k == "follow"))
    if abs(100.0 * got / total - w) > 9:
        bad.append(f"{k} {100.0 * got / total:.1f}% (want {w}%)")
print("# shares off: " + (", ".join(bad) if bad else "none"))
sys.exit(1 if bad else 0)
PY
check $? "each kind's share within 9 points of its weight ($sent activities)"
acts=$(curl -sf "http://127.0.0.1:$TPORT/stats")
for t in Create Announce Update Delete EmojiReact Like Follow; do
    ok=$(jq -r ".activities.$t.ok // 0" <<<"$acts")
    [ "$ok" -gt 0 ]
    check $? "the target processed $t ($ok ok; ignored: $(jq -c ".activities.$t.reasons // {}" <<<"$acts"))"
done
for sub in Create.Question Update.Person Update.Note; do
    t=${sub%.*}
    o=${sub#*.}
    ok=$(jq -r ".activities.$t.by_object.$o.ok // 0" <<<"$acts")
    [ "$ok" -gt 0 ]
    check $? "the target processed $t($o) ($ok)"
done
# ignored by design: a vote on a crowd poll the target never held (Mastodon drops it too),
# and a Create whose Delete, sent moments later on another connection, was processed first
unrel=$(jq -r '.activities.Create.reasons.unrelated // 0' <<<"$acts")
first=$(jq -r '.activities.Create.reasons["deleted-first"] // 0' <<<"$acts")
votes=$(jget '.operations.vote.scheduled')
[ "$(jq -r '[.activities.Create.reasons | to_entries[]
            | select(.key != "unrelated" and .key != "deleted-first") | .value] | add // 0' \
    <<<"$acts")" = 0 ] && [ "$unrel" -le "$votes" ] && [ "$first" -le "$(jget .operations.delete.scheduled)" ]
check $? "the target ignores only votes on polls it never held ($unrel of $votes) and Creates it saw deleted first ($first)"
expect_eq "$(jq -r '.activities.Announce.reasons.unrelated // 0' <<<"$acts")" 0 \
    "no Announce ignored as unrelated (an Announce of a crowd note cc's the persona)"
[ "$(jq -r '.objects.actors_refetched' <<<"$acts")" -gt 0 ]
check $? "the target refetched revised actors ($(jq -r '.objects.actors_refetched' <<<"$acts"))"
expect_eq "$(jget '.fetches.by_kind.media.repeat_requests')" 0 \
    "with the target's fetch cache no media URL is fetched twice"

# every URL of a sample of sent activities (outboxes and what they refer to) answers 200
python3 - "$CPORT" "$RUN_DIR/run.json" <<'PY' >"$T_TMP/urls.txt"
import json, re, sys, urllib.request
port = sys.argv[1]
seen, bad, queue = set(), [], []
def get(url):
    host = re.match(r"https?://([^/]+)", url).group(1)
    path = url[len(re.match(r"https?://[^/]+", url).group(0)):] or "/"
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={
        "Host": host, "Accept": "application/activity+json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), b""
def urls_in(j):
    if isinstance(j, dict):
        for v in j.values():
            yield from urls_in(v)
    elif isinstance(j, list):
        for v in j:
            yield from urls_in(v)
    elif isinstance(j, str) and re.match(r"https?://flood\d+\.test", j):
        yield j.split("#")[0]
for i in range(1, 4):
    for a in range(1, 5):
        queue.append(f"http://flood{i}.test:{port}/users/user{a}/outbox")
checked = 0
while queue and checked < 300:
    u = queue.pop(0)
    if u in seen:
        continue
    seen.add(u)
    if "/tags/" in u or u.endswith("/inbox"):
        continue  # a hashtag's link is for people; an inbox is POSTed to, not fetched
    st, ct, body = get(u)
    checked += 1
    want = ("image/png" if u.endswith(".png") else
            "text/html" if "/pages/" in u else "application/activity+json")
    if st == 410 and "/notes/" in u:
        continue  # a deleted note
    if st != 200 or not ct.startswith(want):
        bad.append(f"{u} {st} {ct}")
        continue
    if want == "application/activity+json":
        queue.extend(x for x in urls_in(json.loads(body)) if x not in seen)
    elif want == "text/html":
        queue.extend(re.findall(r'content="(http://flood[^"]+)"', body.decode()))
print(checked, len(bad))
for b in bad[:10]:
    print("#", b)
PY
read -r checked nbad <"$T_TMP/urls.txt"
sed -n '2,$p' "$T_TMP/urls.txt"
[ "${checked:-0}" -ge 50 ] && [ "$nbad" = 0 ]
check $? "every URL reached from the outboxes answers 200 with its type ($checked checked, $nbad bad)"
end_run
check "$RUN_RC" "the run exits 0 (conserved, results written)"

# 2. key rotation: every update-actor rotates the key; later activities signed with it
trun rotate --stages 3:8s,0:4s --mix create=50,update-actor=50 --rotate-keys 100
check $? "a run with --rotate-keys 100 finishes"
wait_idle 30
rej=$(jget '.totals.outcomes["401"]')
sent=$(jget .totals.sent)
echo "# rotate: $rej of $sent answered 401 (a delivery in flight while its actor's key changed)"
[ "$rej" -le $((sent / 5)) ]
check $? "the target takes rotated keys (401s only from in-flight overlap: $rej of $sent)"
end_run

# 3. a target without its fetch cache fetches the same URLs again
kill "$TPID" 2>/dev/null
wait "$TPID" 2>/dev/null
start_target nocache --no-fetch-cache
check $? "a target with --no-fetch-cache starts"
trun nocache --stages 6:6s,0:6s --mix create=40,reply=20,announce=20,emoji-react=20 \
    --content heavy --content-opt "$CAP"
check $? "a run against it finishes"
wait_idle 60
fetch_compare "no fetch cache"
[ "$(jget '.fetches.top_repeats | length')" -gt 0 ] &&
    [ "$(jget '[.fetches.by_kind[].repeat_requests] | add')" -gt 0 ]
check $? "repeat fetches found ($(jget '[.fetches.by_kind | to_entries[] | select(.value.repeat_requests > 0) | "\(.key) \(.value.repeat_requests)"] | join(", ")'))"
end_run

# 4. a slow media host: the target's media pool backs up, its inbox queue does not
kill "$TPID" 2>/dev/null
wait "$TPID" 2>/dev/null
start_target slow
check $? "a fresh target starts"
trun slow --stages 6:6s,0:4s --mix create=100 --content heavy \
    --content-opt "media=100%,media-size=8k,media-max=16k" --fault all:delay=2s,scope=media
check $? "a run with --fault all:delay=2s,scope=media finishes"
mw=$(tstats '.pools.media.queue_wait_ms.p95 // 0')
mp=$(tstats '.pools.media.peak // 0')
iw=$(tstats '.queue.queue_wait_ms.p95 // 0')
ip=$(tstats '.queue.peak // 0')
echo "# media pool: peak depth $mp, queue wait p95 $mw ms; inbox queue: peak $ip, wait p95 $iw ms"
python3 -c "import sys; sys.exit(0 if float('$mw') > 2000 and float('$mw') > 2 * float('$iw') else 1)"
check $? "the media pool's queue wait ($mw ms) rises past the delay and the inbox's ($iw ms)"
[ "$mp" -gt "$ip" ]
check $? "the media pool holds more jobs ($mp) than the inbox queue ($ip)"
end_run
check "$RUN_RC" "the slow-media run exits 0"

done_testing

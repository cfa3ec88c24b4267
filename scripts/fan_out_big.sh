#!/bin/bash
# scripts/fan_out_big.sh: the fan-out preset at scale against the reference target
# (tests/target): F followers on I instances (default 50,000 on 10,000), set up at once with
# POST /admin/followers, the persona posting POSTS times GAP seconds apart through the
# target's API (the first 5 s after the followers are in), the crowd's run.json
# inbound.fan_out beside the target's own delivery log. Too big for `make check`;
# docs/BACKPRESSURE.md records a run.
#
#   scripts/fan_out_big.sh [INSTANCES [ACTORS [DURATION [POSTS [GAP]]]]]
#   FLOOD=build/flood OUT=/tmp/fanout-big scripts/fan_out_big.sh 10000 5 420s 1 60
#
# Prints the command, the figures (posts, deliveries, first/last delivery p50/p99, lag by
# class, share within 10 s/60 s, concurrent connections per instance), the time taken and
# the load average; leaves run.json, summary.md and the target's log in $OUT.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FLOOD=${FLOOD:-$ROOT/build/flood}
I=${1:-10000}
K=${2:-5}
DURATION=${3:-420s}
POSTS=${4:-1}
GAP=${5:-60}
WORKERS=${WORKERS:-64}
OUT=${OUT:-$(mktemp -d /tmp/flood-fanout-big.XXXXXX)}
mkdir -p "$OUT"
STATE=$OUT/state
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
}
trap cleanup EXIT
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

CPORT=$(free_port)
node --max-old-space-size=4096 "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 \
    --domain target.test --resolve-crowd "127.0.0.1:$CPORT" --outbox-workers "$WORKERS" \
    --delivery-log "$OUT/deliveries.log" \
    >"$OUT/target.out" 2>"$OUT/target.err" &
TPID=$!
pids="$pids $TPID"
TPORT=""
for _ in $(seq 1 600); do
    TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$OUT/target.out")
    [ -n "$TPORT" ] && break
    sleep 0.1
done
[ -n "$TPORT" ] || { echo "fan_out_big: the target did not start: $(cat "$OUT/target.err")" >&2; exit 1; }
TOKEN=$(curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
    "http://127.0.0.1:$TPORT/admin/accounts" | jq -r .token)
[ -n "$TOKEN" ] || { echo "fan_out_big: no alice" >&2; exit 1; }

CMD=("$FLOOD" run --preset fan-out --listen "127.0.0.1:$CPORT" --state "$STATE" --key-pool 1
    --instances "$I" --actors "$K" --duration "$DURATION" --quiet --out "$OUT/run"
    --persona "http://target.test:$TPORT/users/alice" --resolve "target.test:$TPORT:127.0.0.1")
echo "# ${CMD[*]}"
t0=$(date +%s)
"${CMD[@]}" >"$OUT/run.out" 2>"$OUT/run.err" &
RPID=$!
pids="$pids $RPID"
for _ in $(seq 1 1200); do
    curl -sf -o /dev/null -H "Host: flood$I.test" "http://127.0.0.1:$CPORT/users/user$K" && break
    sleep 0.1
done
echo "# the crowd serves after $(($(date +%s) - t0)) s"

# every actor of every instance follows alice, each instance's shared inbox taking its posts
python3 - "$I" "$K" >"$OUT/followers.json" <<'PY'
import json, sys
n, k = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps({"username": "alice", "followers": [
    {"uri": f"http://flood{i}.test/users/user{a}", "inbox": f"http://flood{i}.test/users/user{a}/inbox",
     "sharedInbox": f"http://flood{i}.test/inbox"} for i in range(1, n + 1) for a in range(1, k + 1)]}))
PY
curl -sf -X POST -H 'content-type: application/json' --data-binary "@$OUT/followers.json" \
    "http://127.0.0.1:$TPORT/admin/followers" >"$OUT/followers.out"
echo "# alice's followers: $(jq -r .followers "$OUT/followers.out") after $(($(date +%s) - t0)) s"
sleep 5
for k in $(seq 1 "$POSTS"); do
    curl -sf -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" --data-urlencode "status=fan-out $k" \
        "http://127.0.0.1:$TPORT/api/v1/statuses" || echo "fan_out_big: post $k refused" >&2
    echo "# post $k at $(($(date +%s) - t0)) s"
    [ "$k" -lt "$POSTS" ] && sleep "$GAP"
done

# the processes' CPU time while the run goes on: which side is the bottleneck
while kill -0 "$RPID" 2>/dev/null; do
    sleep 30
    echo "# at $(($(date +%s) - t0)) s: $(wc -l <"$OUT/deliveries.log") attempts logged, cpu s: target $(($(cut -d' ' -f14 /proc/$TPID/stat 2>/dev/null || echo 0) / 100)), flood $(($(cut -d' ' -f14 /proc/$RPID/stat 2>/dev/null || echo 0) / 100)), load $(cut -d' ' -f1 /proc/loadavg)"
done
wait "$RPID"
rc=$?
t1=$(date +%s)
load=$(cut -d' ' -f1-3 /proc/loadavg)
kill "$TPID" 2>/dev/null
wait "$TPID" 2>/dev/null
echo "# flood run exit $rc after $((t1 - t0)) s, load average $load"
J=$OUT/run/run.json
jq -r '.inbound.fan_out | "posts \(.posts), deliveries \(.deliveries) (\(.per_post.min)..\(.per_post.max) a post)",
    "first delivery p50 \(.first_ms.p50) ms p99 \(.first_ms.p99) ms; last p50 \(.last_ms.p50) ms p99 \(.last_ms.p99) ms",
    "within 10 s \(.within_10s), within 60 s \(.within_60s)",
    (.lag_ms_by_class | to_entries[] | "lag \(.key): \(.value.count) p50 \(.value.p50) ms p99 \(.value.p99) ms"),
    "concurrent per instance: max \(.concurrent_per_instance.max) mean \(.concurrent_per_instance.mean) over \(.concurrent_per_instance.instances) instances"' "$J"
python3 - "$OUT/deliveries.log" <<'PY'
import json, sys
by, other = {}, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["inbox"].endswith(".test/inbox") and 200 <= r["status"] < 300:
        by.setdefault(r["digest"], []).append(r["t"])
    else:
        other += 1
spread = sorted(max(v) - min(v) for v in by.values())
print(f"# the target's log: {len(by)} posts, {sum(len(v) for v in by.values())} deliveries 2xx, "
      f"{other} other attempts, spread p50 {spread[len(spread) // 2] if spread else 0} ms")
PY
grep -E '^(fan-out|population)' "$OUT/run/summary.md"
exit $rc

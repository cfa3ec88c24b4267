#!/bin/bash
# tests/integration/fan_out.sh: the fan-out preset, 1,000 followers on 500 instances, against
# the reference target: its persona's followers set up at once (POST /admin/followers), its
# posts (--autopost-ms) delivered to 500 shared inboxes while flood runs the crowd. The
# crowd's run.json inbound.fan_out (posts, deliveries, each post's first and last delivery)
# is checked against the target's own log of every delivery attempt (--delivery-log).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

for tool in node jq curl python3; do
    command -v "$tool" >/dev/null 2>&1 || { check 1 "$tool is installed"; done_testing; exit 1; }
done
if [ ! -d "$ROOT/tests/target/node_modules/@fedify/fedify" ]; then
    check 1 "tests/target has its node_modules (scripts/deps.sh)"
    grep -q '^fan-out: [0-9]* posts' "$RUN_DIR/summary.md" && grep -q 'id="retries"' "$RUN_DIR/report.html"
check $? "summary.md and report.html show the fan-out"
done_testing
    exit 1
fi

CPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
    --resolve-crowd "127.0.0.1:$CPORT" --outbox-workers 16 --autopost-ms 10000 \
    --delivery-log "$T_TMP/deliveries.log" >"$T_TMP/target.out" 2>"$T_TMP/target.err" &
TPID=$!
T_PIDS="$T_PIDS $TPID"
TPORT=""
for _ in $(seq 1 300); do
    TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/target.out")
    [ -n "$TPORT" ] && break
    sleep 0.1
done
curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
    "http://127.0.0.1:$TPORT/admin/accounts" >/dev/null
check $? "the target runs and has alice"

frun_bg --listen "127.0.0.1:$CPORT" --persona "http://target.test:$TPORT/users/alice" \
    --resolve "target.test:$TPORT:127.0.0.1" --quiet --preset fan-out
up() {
    curl -sf -o /dev/null -H 'Host: flood500.test' "http://127.0.0.1:$CPORT/users/user2"
}
for _ in $(seq 1 300); do
    up && break
    sleep 0.1
done
up
check $? "the crowd of 500 instances serves"

# two followers on each of the 500 instances, sharing its inbox; the list sent ten times
# over in one body of 1.4 MB (past the 1 MB an inbox takes: the admin routes take 64 MB, so
# 50,000 followers on 10,000 instances, 7 MB, are set up in one call too)
python3 -c '
import json
print(json.dumps({"username": "alice", "followers": [
    {"uri": f"http://flood{i}.test/users/user{k}", "inbox": f"http://flood{i}.test/users/user{k}/inbox",
     "sharedInbox": f"http://flood{i}.test/inbox"} for i in range(1, 501) for k in (1, 2)] * 10}))' >"$T_TMP/followers.json"
added=$(curl -sf -X POST -H 'content-type: application/json' --data-binary "@$T_TMP/followers.json" \
    "http://127.0.0.1:$TPORT/admin/followers" | jq -r .followers)
expect_eq "$added" 1000 "alice has 1,000 followers (a body of $(($(wc -c <"$T_TMP/followers.json") / 1024)) KiB taken)"
curl -sf -X POST -H 'content-type: application/json' -d '{"username":"x","followers":[{"uri":"nope"}]}' \
    "http://127.0.0.1:$TPORT/admin/followers" >/dev/null
expect_eq "$?" 22 "a follower set up for no account is refused"

wait "$RUN_PID"
RUN_RC=$?
check "$RUN_RC" "the fan-out run exits 0" || show_run
kill "$TPID" 2>/dev/null
wait "$TPID" 2>/dev/null

f=.inbound.fan_out
echo "# fan-out: $(jget "$f.posts") posts, $(jget "$f.deliveries") deliveries ($(jget "$f.per_post.min")..$(jget "$f.per_post.max") a post), first p50 $(jget "$f.first_ms.p50") ms, last p50 $(jget "$f.last_ms.p50") p99 $(jget "$f.last_ms.p99") ms, within 10 s $(jget "$f.within_10s"), 60 s $(jget "$f.within_60s"), slow p50 $(jget "$f.lag_ms_by_class.slow.p50") ms against fast $(jget "$f.lag_ms_by_class.fast.p50") ms, concurrency per instance max $(jget "$f.concurrent_per_instance.max") mean $(jget "$f.concurrent_per_instance.mean")"
# the target's log: shared-inbox deliveries answered 2xx, by post (the body's digest)
read -r tposts tdel tspread tmax <<<"$(python3 - "$T_TMP/deliveries.log" <<'PY'
import json, sys
by = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["inbox"].endswith(".test/inbox") and 200 <= r["status"] < 300:
        by.setdefault(r["digest"], []).append(r["t"])
spread = sorted(max(v) - min(v) for v in by.values())
print(len(by), sum(len(v) for v in by.values()), spread[len(spread) // 2] if spread else 0,
      max((len(v) for v in by.values()), default=0))
PY
)"
echo "# the target's log: $tposts posts, $tdel deliveries, spread p50 $tspread ms, at most $tmax instances a post"
fposts=$(jget "$f.posts") fdel=$(jget "$f.deliveries")
[ "${fposts:-0}" -ge 1 ] && [ "${fdel:-0}" -ge 100 ]
check $? "the crowd saw posts delivered ($fposts posts, $fdel deliveries)"
# the crowd's record is read when the run ends, the target's log when it stops: what arrived
# in between (the run's last moments) the log has and the record not
[ "$fposts" -le "${tposts:-0}" ] && [ "$fposts" -ge $((tposts - 1)) ]
check $? "the crowd's posts are the target's ($fposts against $tposts)"
[ "$fdel" -le "${tdel:-0}" ] && [ $((fdel * 100)) -ge $((tdel * 95)) ]
check $? "the crowd's deliveries are the target's 2xx to shared inboxes, less those of the run's last moments ($fdel against $tdel)"
expect_eq "$(jget "$f.per_post.max")" "$tmax" "the most instances a post reached, at the crowd and in the log"
[ "$tmax" -eq 500 ]
check $? "a post reached all 500 instances"
spread=$(jget "$f.spread_ms.p50")
awk -v a="$spread" -v b="$tspread" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1000 + b / 5) }'
check $? "first-to-last spread p50 agrees with the log's ($spread ms against $tspread ms)"
[ "$(jget "$f.lag_ms_by_class.slow.count > 0 and $f.lag_ms_by_class.fast.count > 0")" = true ]
check $? "lag by class: fast and slow instances both measured"
[ "$(jget "$f.concurrent_per_instance.max >= 1 and $f.concurrent_per_instance.instances >= $f.per_post.max")" = true ]
check $? "concurrency per instance measured on every instance delivered to ($(jget "$f.concurrent_per_instance.instances"))"
[ "$(jget "$f.within_60s >= $f.within_10s and $f.within_60s > 0")" = true ]
check $? "shares within 10 s and 60 s ($(jget "$f.within_10s"), $(jget "$f.within_60s"))"
grep -q '^fan-out: [0-9]* posts' "$RUN_DIR/summary.md" && grep -q 'id="retries"' "$RUN_DIR/report.html"
check $? "summary.md and report.html show the fan-out"
done_testing

#!/usr/bin/env bash
# --target-queue against real queues at known depths: Debian's redis-server started here,
# Sidekiq's layout written as Sidekiq's client writes it and a real BullMQ queue (Misskey's
# job queue library, from the npm registry), both driven by tests/queue/load.mjs at set
# rates; a Prometheus exposition and a JSON document served by python3; a source that cannot
# be read (missing, never 0, said once); then the reference target with its inbox queue in
# Redis (--inbox-queue), read both ways (BullMQ in Redis and its /stats JSON), a short
# flood capacity whose verdict names the queue that broke and reads in users, and a Fedify
# 2.3 server in benchmark mode (tests/fedify23) read through its stats endpoint.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
. "$ROOT/tests/tools/ports.sh"

for tool in redis-server redis-cli node jq python3 curl; do
    command -v "$tool" >/dev/null 2>&1 || { check 1 "$tool is installed"; done_testing; exit 1; }
done
QUEUE_TOOL=$ROOT/tests/queue/load.mjs
[ -d "$ROOT/tests/queue/node_modules/bullmq" ]
check $? "tests/queue has its npm packages (scripts/deps.sh: npm ci)" || { done_testing; exit 1; }

RPORT=$(pick_port)
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$T_TMP" >"$T_TMP/redis.log" 2>&1 &
T_PIDS="$T_PIDS $!"
for _ in $(seq 100); do redis-cli -p "$RPORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
redis-cli -p "$RPORT" ping 2>/dev/null | grep -q PONG
check $? "redis-server answers on 127.0.0.1:$RPORT" || { done_testing; exit 1; }
REDIS=redis://127.0.0.1:$RPORT

start_sink --status 202
SINK_INBOX="http://127.0.0.1:$SINK_PORT/inbox"

# gauge SOURCE GAUGE: the gauge's readings of the run, one a line ("null" when missing)
gauge() { jq -r --arg s "$1" --arg g "$2" '.series[] | .target_queue[$s][$g] // "null"' "$RUN_DIR/run.json"; }

# 1. Sidekiq: 40 in ingress at the start, then +20/s enqueued and 10/s worked for 12 s
#    (so +10/s, past the run's end however long its start takes), 5 in push, 2 scheduled,
#    1 retrying
redis-cli -p "$RPORT" flushall >/dev/null
node "$QUEUE_TOOL" --redis "127.0.0.1:$RPORT" --layout sidekiq --fill 40 --other 5 --delayed 2 \
    --failed 1 --enqueue-rate 20 --work-rate 10 --seconds 12 >"$T_TMP/sidekiq.log" 2>&1 &
QPID=$!
frun --inbox "$SINK_INBOX" --sign none --rate 20 --duration 5s --target-queue "sidekiq:$REDIS/0"
wait "$QPID"
check $? "the Sidekiq driver ran ($(tail -1 "$T_TMP/sidekiq.log"))"
check "$RUN_RC" "flood run --target-queue sidekiq:... exits 0" || show_run
expect_eq "$(jget '.config.target_queue[0]')" "sidekiq:$REDIS/0" "run.json's config names the source"
expect_eq "$(jget '.target_queue[0].missing')" 0 "every Sidekiq reading taken"
expect_eq "$(jget '.target_queue[0].gauges.ingress.role')" inbound "ingress is the inbound queue (Mastodon's ActivityPub::ProcessingWorker)"
expect_eq "$(jget '.target_queue[0].gauges.push.last')" 5 "push: the 5 deliveries waiting"
expect_eq "$(jget '.target_queue[0].gauges.schedule.last')" 2 "schedule: 2 jobs for later"
expect_eq "$(jget '.target_queue[0].gauges.retry.last')" 1 "retry: 1 job retrying"
first=$(gauge sidekiq ingress | grep -v null | head -1)
python3 -c "import sys; sys.exit(0 if $first >= 40 else 1)"
check $? "the first ingress reading at least the 40 filled (got $first)"
# the growth a second over the readings of seconds 1..5, against +10/s by construction
slope=$(jq -r '[.series[] | select(.t >= 1 and .t <= 5) | [.t, .target_queue.sidekiq.ingress]
    | select(.[1] != null)] | if length < 3 then "none" else
    ((.[-1][1] - .[0][1]) / (.[-1][0] - .[0][0])) end' "$RUN_DIR/run.json")
python3 -c "import sys; sys.exit(0 if '$slope' != 'none' and 6 <= float('$slope') <= 14 else 1)"
check $? "ingress grows about +10/s in the series (got $slope/s)" ||
    jq -c '.series[] | [.t, .target_queue]' "$RUN_DIR/run.json" | sed 's/^/#   /' | head -12

# 2. BullMQ with Misskey's key prefix: 50 waiting in inbox, 3 delayed, 2 failed, 7 in deliver
redis-cli -p "$RPORT" flushall >/dev/null
node "$QUEUE_TOOL" --redis "127.0.0.1:$RPORT" --layout bullmq --prefix misskey.test --fill 50 \
    --other 7 --delayed 3 --failed 2 --seconds 1 >"$T_TMP/bullmq.log" 2>&1
check $? "the BullMQ driver filled its queues ($(tail -1 "$T_TMP/bullmq.log"))"
frun --inbox "$SINK_INBOX" --sign none --rate 10 --duration 2s \
    --target-queue "bullmq:$REDIS/0?prefix=misskey.test" --target-queue "bullmq:$REDIS/0"
check "$RUN_RC" "flood run with two bullmq sources exits 0" || show_run
expect_eq "$(jget '.target_queue[0].gauges["inbox.waiting"].last')" 50 "inbox.waiting: 50"
expect_eq "$(jget '.target_queue[0].gauges["inbox.waiting"].role')" inbound "the inbox queue is inbound (Misskey's QUEUE.INBOX)"
expect_eq "$(jget '.target_queue[0].gauges["inbox.delayed"].last')" 3 "inbox.delayed: 3"
expect_eq "$(jget '.target_queue[0].gauges["inbox.failed"].last')" 2 "inbox.failed: 2"
expect_eq "$(jget '.target_queue[0].gauges["deliver.waiting"].last')" 7 "deliver.waiting: 7"
expect_eq "$(jget '.target_queue[1].source')" "bullmq#2" "a second source of a kind is bullmq#2"
expect_eq "$(jget '.target_queue[1].gauges["inbox.waiting"].last')" 50 "without a prefix the queues are found by their meta keys"

# 3. Prometheus and JSON documents, and a source that cannot be read
mkdir -p "$T_TMP/www"
printf '# TYPE jobs_waiting gauge\njobs_waiting{queue="inbox",shard="a"} 12\njobs_waiting{queue="inbox",shard="b"} 3\njobs_waiting{queue="push"} 40\n' >"$T_TMP/www/metrics"
printf '{"queue":{"depth":17}}' >"$T_TMP/www/stats.json"
HPORT=$(pick_port)
(cd "$T_TMP/www" && exec python3 -m http.server "$HPORT" --bind 127.0.0.1) >"$T_TMP/http.log" 2>&1 &
T_PIDS="$T_PIDS $!"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$HPORT/stats.json" >/dev/null && break; sleep 0.05; done
DEAD=$(pick_port)
frun --inbox "$SINK_INBOX" --sign none --rate 10 --duration 2s \
    --target-queue "prometheus:http://127.0.0.1:$HPORT/metrics#jobs_waiting{queue=\"inbox\"}" \
    --target-queue "json:http://127.0.0.1:$HPORT/stats.json#queue.depth" \
    --target-queue "sidekiq:redis://127.0.0.1:$DEAD/0"
check "$RUN_RC" "a run whose third source cannot be read still exits 0" || show_run
expect_eq "$(jget '.target_queue[0].gauges.depth.last')" 15 "prometheus: the inbox samples summed (12 + 3)"
expect_eq "$(jget '.target_queue[1].gauges.depth.last')" 17 "json: the number at queue.depth"
expect_eq "$(jget '.target_queue[2].missing == .target_queue[2].readings and .target_queue[2].readings > 0')" true \
    "the unreadable source: every reading missing"
expect_eq "$(gauge sidekiq ingress | sort -u | tr '\n' ' ')" "null " "its series values are null, never 0"
expect_eq "$(jget '.series[0].target_queue.sidekiq')" null "its entry in a row is null"
expect_eq "$(grep -c 'target-queue sidekiq:redis://127.0.0.1:'"$DEAD"'/0: sidekiq: redis .*refused' "$RUN_ERR")" 1 \
    "the failure said once on stderr, with the reason"
grep -q 'sidekiq ([0-9]* of [0-9]* readings missing: sidekiq: redis' "$RUN_OUT"
check $? "the final table's target queue line counts the missing readings"
grep -q 'target queue' "$RUN_DIR/summary.md"
check $? "summary.md has the target queue line"
grep -q 'id="target-queue"' "$RUN_DIR/report.html"
check $? "report.html has the target queue section"

# 4. a bad spec is a usage error naming the forms
"$FLOOD" run --inbox "$SINK_INBOX" --rate 1 --duration 1s --target-queue "redis://x:1" \
    >/dev/null 2>"$T_TMP/bad.err"
expect_eq "$?" 2 "a bad --target-queue is a usage error"
grep -q -- "--target-queue: expected sidekiq:redis://" "$T_TMP/bad.err"
check $? "its message names the accepted forms"
stop_sink

# 5. the reference target with its inbox queue in Redis (BullMQ, Misskey's keys), read both
#    ways: from Redis and from its /stats JSON; then capacity names the queue that broke
redis-cli -p "$RPORT" flushall >/dev/null
CPORT=$(pick_port)
: >"$T_TMP/target.out"
node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
    --resolve-crowd "127.0.0.1:$CPORT" --workers 1 --work-ms 200 \
    --inbox-queue "$REDIS/0?prefix=misskey.test" >"$T_TMP/target.out" 2>"$T_TMP/target.err" &
TPID=$!
T_PIDS="$T_PIDS $TPID"
TPORT=""
for _ in $(seq 300); do
    TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/target.out")
    [ -n "$TPORT" ] && break
    sleep 0.1
done
curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
    "http://127.0.0.1:$TPORT/admin/accounts" >/dev/null
check $? "the reference target starts with --inbox-queue (1 worker, 200 ms an activity)"
RUN_I=$((RUN_I + 1))
RUN_DIR=$T_TMP/run.$RUN_I RUN_OUT=$T_TMP/run.$RUN_I.out RUN_ERR=$T_TMP/run.$RUN_I.err
"$FLOOD" run --listen "127.0.0.1:$CPORT" --state "$TEST_STATE" --instances 4 --actors 5 \
    --persona "http://target.test:$TPORT/users/alice" --resolve "target.test:$TPORT:127.0.0.1" \
    --rate 10 --duration 4s --mix create=100 --accept-wait 1s --out "$RUN_DIR" \
    --target-queue "bullmq:$REDIS/0?prefix=misskey.test" \
    --target-queue "json:http://127.0.0.1:$TPORT/stats#queue.depth" >"$RUN_OUT" 2>"$RUN_ERR"
RUN_RC=$?
check "$RUN_RC" "a run against it exits 0" || show_run
peak_redis=$(jget '.target_queue[0].gauges["inbox.waiting"].max')
peak_json=$(jget '.target_queue[1].gauges.depth.max')
# each read once a second at its own instant while the backlog moves by about 5 a second,
# and the target counts an activity from its push, Redis from its job's arrival: the peaks
# agree within a second's movement and a fifth
python3 -c "import sys; r=float('$peak_redis'); j=float('$peak_json'); sys.exit(0 if r >= 10 and j >= 10 and abs(r - j) <= 10 + 0.2 * max(r, j) else 1)"
check $? "the backlog's peak read from Redis ($peak_redis) and from the target's /stats ($peak_json) agree"

# (--max-p99 10s: the queue is what is judged here; on a loaded machine the generator's own
# lag must not reach a tenth of the latency limit, which would make the step flood's)
CAP=$T_TMP/cap
"$FLOOD" capacity --listen "127.0.0.1:$CPORT" --persona "http://target.test:$TPORT/users/alice" \
    --resolve "target.test:$TPORT:127.0.0.1" --state "$TEST_STATE" --instances 4 --actors 5 \
    --mix create=100 --timeout 10s --hold 6s --cooldown 30s --start 2.5 --factor 4 --refine 0 \
    --max-p99 10s \
    --target-queue "bullmq:$REDIS/0?prefix=misskey.test" --out "$CAP" >"$CAP.stdout" 2>"$CAP.stderr"
check $? "flood capacity with --target-queue exits 0" || sed 's/^/#   /' "$CAP.stdout" "$CAP.stderr" | tail -20
grep -q '^sustains .*; at 10/s queue growth +[0-9.]*/s (bullmq inbox.waiting) breaks the .* limit$' "$CAP.stdout"
check $? "the verdict names the queue that broke: $(grep '^sustains' "$CAP.stdout")"
expect_eq "$(jq -r .broke_queue "$CAP/capacity.json")" "bullmq inbox.waiting" "capacity.json's broke_queue"
grep -q '≈ the inbound federation of [0-9,]* active users at peak (model: follows=150' "$CAP.stdout"
check $? "the verdict in active users, with the model's parameters"
expect_eq "$(jq -r '.users.model.follows' "$CAP/capacity.json")" 150 "capacity.json keeps the model"
kill "$TPID" 2>/dev/null
wait "$TPID" 2>/dev/null

# 6. a Fedify 2.3 server in benchmark mode (tests/fedify23): its stats endpoint's queue depth,
#    one message worked at a time for 100 ms while 30 a second arrive
if [ -d "$ROOT/tests/fedify23/node_modules/@fedify/fedify" ]; then
    : >"$T_TMP/f23.out"
    node "$ROOT/tests/fedify23/server.mjs" --listen 127.0.0.1:0 --work-ms 100 \
        >"$T_TMP/f23.out" 2>"$T_TMP/f23.err" &
    FPID=$!
    T_PIDS="$T_PIDS $FPID"
    FPORT=""
    for _ in $(seq 300); do
        FPORT=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$T_TMP/f23.out")
        [ -n "$FPORT" ] && break
        sleep 0.1
    done
    check "$([ -n "$FPORT" ]; echo $?)" "the Fedify 2.3 server starts in benchmark mode"
    frun --inbox "http://127.0.0.1:$FPORT/inbox" --sign none --rate 30 --duration 4s \
        --target-queue "fedify:http://127.0.0.1:$FPORT/.well-known/fedify/bench/stats"
    check "$RUN_RC" "a run reading its stats exits 0" || show_run
    expect_eq "$(jget '.target_queue[0].gauges["shared.queued"].role')" inbound \
        "its one queue (role shared, serving the inbox) is the inbound queue"
    max=$(jget '.target_queue[0].gauges["shared.queued"].max')
    python3 -c "import sys; sys.exit(0 if float('${max:-0}') >= 20 else 1)"
    check $? "the queue grew past 20 while 30 a second arrived and 10 were worked (max $max)"
    kill "$FPID" 2>/dev/null
    wait "$FPID" 2>/dev/null
else
    check 1 "tests/fedify23 has its npm packages (scripts/deps.sh: npm ci)"
fi
done_testing

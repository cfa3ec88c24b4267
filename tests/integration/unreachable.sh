#!/usr/bin/env bash
# A run in which the target answered 2xx but fetched nothing from the crowd is flagged:
# against tests/tools/sink (202, fetches nothing) run.json says crowd_unreachable with a
# reason, the table, summary.md and report.html say it, and the start warns about
# --public-port; against the reference target (it fetches the actors' keys), given
# --public-port, neither appears and the key fetches are counted.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

for tool in jq curl python3; do
    command -v "$tool" >/dev/null 2>&1 || { check 1 "$tool is installed"; done_testing; exit 1; }
done

# 1. the sink: 202 to everything, never a GET back
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 1s --sign none \
    --mix create=1
stop_sink
check "$RUN_RC" "a run against the sink exits 0" || show_run
expect_eq "$(jget .crowd_unreachable)" true "run.json: crowd_unreachable"
jget .crowd_unreachable_reason | grep -q 'fetched nothing from the crowd.*--public-port'
check $? "run.json: its reason names --public-port"
expect_eq "$(jget .fetches.total.requests)" 0 "run.json: no fetches"
expect_eq "$(jget '.fetches.by_kind | keys | length')" 11 "run.json: every kind listed"
expect_eq "$(jget '.series | map(has("fetches")) | all')" true "the series has fetches each second"
grep -q '^warning: the target answered .* fetched nothing from the crowd' "$RUN_OUT"
check $? "the table's output says so"
grep -q 'crowd unreachable' "$RUN_DIR/summary.md"
check $? "summary.md says so"
grep -q 'the target fetched nothing from the crowd' "$RUN_DIR/report.html"
check $? "report.html says so"
grep -q 'warning: the crowd listens on port [0-9]* but its URLs name port 80 .*--public-port' \
    "$RUN_ERR"
check $? "the start warns, naming --public-port"

# 2. the reference target: it fetches the senders' keys
if [ ! -d "$ROOT/tests/target/node_modules/@fedify/fedify" ] || ! command -v node >/dev/null; then
    echo "# skipping the reference target: no node or no tests/target/node_modules"
    done_testing
    exit $?
fi
CPORT=$(free_port)
node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
    --resolve-crowd "127.0.0.1:$CPORT" >"$T_TMP/target.out" 2>"$T_TMP/target.err" &
TPID=$!
T_PIDS="$T_PIDS $TPID"
TPORT=""
for _ in $(seq 1 300); do
    TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/target.out" 2>/dev/null)
    [ -n "$TPORT" ] && break
    sleep 0.1
done
curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
    "http://127.0.0.1:$TPORT/admin/accounts" >/dev/null
check $? "the reference target starts and has an account"
frun --listen "127.0.0.1:$CPORT" --public-port "$CPORT" \
    --persona "http://target.test:$TPORT/users/alice" \
    --resolve "target.test:$TPORT:127.0.0.1" --timeout 20s --grace 3s \
    --rate 10 --duration 1s --sign cavage --mix create=1
check "$RUN_RC" "a run against the target exits 0" || show_run
expect_eq "$(jget '.totals.outcomes["202"] > 0')" true "the target accepted deliveries"
expect_eq "$(jget .crowd_unreachable)" false "run.json: not crowd_unreachable"
expect_eq "$(jget '.fetches.by_kind.actor.requests + .fetches.by_kind.key.requests > 0')" true \
    "the target's key fetches are counted (actor $(jget .fetches.by_kind.actor.requests))"
expect_eq "$(jget '.fetches.amplification.actor > 0')" true "and amplified per send"
! grep -q 'fetched nothing' "$RUN_OUT" "$RUN_DIR/summary.md" "$RUN_DIR/report.html"
check $? "no unreachable line in the table, summary.md or report.html"
! grep -q 'warning: the crowd listens on port' "$RUN_ERR"
check $? "no port warning with --public-port"
done_testing

#!/usr/bin/env bash
# `flood run --presign`: a presigned run against the reference target (tests/target, Fedify),
# which verifies every signature, and its twin of bad signatures refused; the refusals
# (memory bound up front and while signing, steering, a bad value); an interrupted
# presigned run (SIGINT while sending, and while presigning) still writes conserved results
# that count the requests signed and not sent.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

need_target

# presign_ok: run.json's presign adds up: every request signed is taken (sent or shed) or
# not sent, and the loops took exactly what the schedule offered
presign_ok() {
    [ "$(jget '.presign.presigned + .presign.signed_late == .presign.taken + .presign.not_sent and .presign.taken == .totals.scheduled')" = true ]
}

# ---- 1. presigned against the reference target: every signature verified ---------------
CPORT=$(free_port)
node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
    --resolve-crowd "127.0.0.1:$CPORT" >"$T_TMP/target.out" 2>"$T_TMP/target.err" &
TPID=$!
T_PIDS="$T_PIDS $TPID"
TPORT=""
for _ in $(seq 1 300); do
    TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/target.out")
    [ -n "$TPORT" ] && break
    sleep 0.1
done
[ -n "$TPORT" ] && curl -sf -X POST -H 'content-type: application/json' \
    -d '{"username":"alice"}' "http://127.0.0.1:$TPORT/admin/accounts" >/dev/null
check $? "the reference target starts and has an account"
tstats() {
    curl -sf "http://127.0.0.1:$TPORT/stats" | jq -r "$1"
}
target_run() {
    frun --listen "127.0.0.1:$CPORT" --persona "http://target.test:$TPORT/users/alice" \
        --resolve "target.test:$TPORT:127.0.0.1" --timeout 20s --grace 3s "$@"
}

before=$(tstats .inbox.accepted)
target_run --rate 20 --duration 3s --sign cavage --presign all \
    --mix create=60,follow=20,update=10,delete=10
check "$RUN_RC" "a presigned run against the target exits 0" || show_run
sent=$(jget .totals.sent)
expect_eq "$sent" 60 "60 sent (20/s x 3 s)"
conserved
check $? "conserved"
expect_eq "$(jget .presign.presigned)/$(jget .presign.signed_late)/$(jget .presign.not_sent)" \
    "60/0/0" "all 60 signed before the first send, none late, none left"
expect_eq "$(jget .presign.complete)" true "the whole window was signed by the start"
presign_ok
check $? "presigned + signed late = taken + not sent, taken = scheduled"
expect_eq "$(jget '.totals.outcomes["202"]')" "$sent" "every presigned delivery answered 202"
expect_eq "$(jget '.totals.outcomes["401"]')" 0 "none answered 401"
expect_eq "$(tstats .inbox.accepted)" "$((before + sent))" \
    "the target verified and accepted all $sent presigned signatures"
expect_eq "$(tstats '[.inbox.rejected[]] | add // 0')" 0 "the target rejected none"
grep -q '^presign: 60 requests signed before the first send' "$RUN_OUT"
check $? "the run's output says how many were presigned"
expect_eq "$(jget .config.presign)" all "run.json's config records --presign all"

# its twin: presigned bad signatures are refused by the same target
before=$(tstats .inbox.accepted)
target_run --rate 15 --duration 1s --sign cavage --presign all --bad-signatures 100% \
    --mix create=1
check "$RUN_RC" "a presigned run of bad signatures exits 0" || show_run
sent=$(jget .totals.sent)
expect_eq "$(jget '.totals.outcomes["202"]')/$(tstats .inbox.accepted)" "0/$before" \
    "none of $sent presigned bad signatures accepted"
kill "$TPID" 2>/dev/null

# ---- 2. refused before anything is sent ------------------------------------------------
start_sink --status 202
INBOX="http://127.0.0.1:$SINK_PORT/inbox"
frun --inbox "$INBOX" --rate 1000 --duration 2s --presign all --presign-memory 1MiB
expect_eq "$RUN_RC" 2 "a window of 2000 requests under --presign-memory 1MiB: refused (exit 2)"
grep -q -- "--presign-memory" "$RUN_ERR"
check $? "the refusal names --presign-memory" || cat "$RUN_ERR"
# twin: the same window, room enough
frun --inbox "$INBOX" --rate 1000 --duration 2s --presign all --presign-memory 64MiB \
    --sign none --quiet
check "$RUN_RC" "and taken with --presign-memory 64MiB" || show_run
# past the up-front floor (a kilobyte a request) but not the requests' real size
frun --inbox "$INBOX" --rate 500 --duration 3s --presign all --presign-memory 1600KiB \
    --content default --mix create=1
expect_eq "$RUN_RC" 1 "requests larger than their floor fill --presign-memory: refused (exit 1)"
grep -q -- "--presign-memory.*nothing was sent" "$RUN_ERR"
check $? "the refusal names --presign-memory and says nothing was sent" || cat "$RUN_ERR"
[ ! -f "$RUN_DIR/run.json" ]
check $? "no results for a refused run"
frun --inbox "$INBOX" --rate 10 --duration 2s --presign 1s --dashboard 127.0.0.1:0
expect_eq "$RUN_RC" 2 "--presign with --dashboard (steering) refused"
grep -q -- "--presign 1s: not with --dashboard" "$RUN_ERR"
check $? "the refusal says why" || cat "$RUN_ERR"
frun --inbox "$INBOX" --rate 10 --duration 2s --presign soon
expect_eq "$RUN_RC" 2 "--presign soon refused"
grep -q -- "--presign: expected a duration" "$RUN_ERR"
check $? "naming the option and its forms" || cat "$RUN_ERR"
frun --inbox "$INBOX" --rate 10 --duration 2s --presign 1s --lookahead 2s
expect_eq "$RUN_RC" 2 "--presign with --lookahead refused"
stop_sink
expect_eq "$(sink_count requests)" 2000 "the sink saw only the run that was taken (2000)"

# flood capacity passes --presign to each step: every step presigned all it sent
start_sink --status 202
"$FLOOD" capacity --listen 127.0.0.1:0 --state "$TEST_STATE" --instances 2 --actors 3 \
    --key-pool 1 --inbox "http://127.0.0.1:$SINK_PORT/inbox" --start 50 --max-rate 100 \
    --hold 2s --refine 0 --warmup 0 --cooldown 1s --mix create=1 --presign all \
    --out "$T_TMP/cap" >"$T_TMP/cap.out" 2>&1
check $? "flood capacity --presign all exits 0" || tail -5 "$T_TMP/cap.out"
steps=$(ls -d "$T_TMP"/cap/steps/*/ 2>/dev/null | wc -l)
ok=0
for d in "$T_TMP"/cap/steps/*/; do
    [ "$(jq -r '.presign.presigned == .totals.sent and .totals.sent > 0 and .config.presign == "all"' "$d/run.json" 2>/dev/null)" = true ] && ok=$((ok + 1))
done
expect_eq "$ok/$steps" "2/2" "each of its 2 steps presigned every request it sent"
stop_sink

# ---- 3. interrupted: SIGINT while sending, then while presigning -----------------------
start_sink --status 202
INBOX="http://127.0.0.1:$SINK_PORT/inbox"
# a 2 s window over a 10 s run: refilled; stopped about 2 s into the sending
frun_bg --inbox "$INBOX" --rate 200 --duration 10s --presign 2s --grace 1s
head=""
for _ in $(seq 1 200); do
    head=$(sed -n 's/.*before the start, in \([0-9.]*\) s at most$/\1/p' "$RUN_ERR")
    [ -n "$head" ] && break
    sleep 0.05
done
sleep "$(awk -v h="${head:-1}" 'BEGIN { print h + 2 }')"
kill -INT "$RUN_PID"
wait "$RUN_PID"
RUN_RC=$?
check "$RUN_RC" "a presigned run stopped by SIGINT exits 0" || show_run
expect_eq "$(jget .generator.interrupted)" true "run.json says it was interrupted"
conserved
check $? "conserved"
presign_ok
check $? "presigned + signed late = taken + not sent, taken = scheduled"
expect_eq "$(jget '.presign.not_sent > 0 and .totals.scheduled < 2000')" true \
    "requests signed for after the stop are counted not sent ($(jget .presign.not_sent))"
expect_eq "$(jget '.presign.signed_late > 0')" true \
    "the window was refilled during the run ($(jget .presign.signed_late) signed late)"

# SIGINT before the first send: the whole (slow, RSA) window is still being signed
frun_bg --inbox "$INBOX" --rate 2000 --duration 30s --presign all --mix create=1
for _ in $(seq 1 200); do
    grep -q "before the start" "$RUN_ERR" && break
    sleep 0.05
done
sleep 0.5
kill -INT "$RUN_PID"
wait "$RUN_PID"
RUN_RC=$?
check "$RUN_RC" "a run stopped while presigning exits 0" || show_run
grep -q "stopped while presigning: nothing was sent" "$RUN_ERR"
check $? "it says it stopped while presigning"
expect_eq "$(jget .totals.scheduled)/$(jget .totals.sent)" 0/0 "nothing scheduled or sent"
expect_eq "$(jget .presign.interrupted)" true "run.json's presign says interrupted"
expect_eq "$(jget '.presign.not_sent == .presign.presigned and .presign.presigned > 0')" true \
    "every request signed ($(jget .presign.presigned)) counted not sent"
presign_ok
check $? "presigned + signed late = taken + not sent, taken = scheduled"
conserved
check $? "conserved"
stop_sink

done_testing

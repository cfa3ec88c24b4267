#!/usr/bin/env bash
# --expect thresholds on flood run and --expect gates on flood compare, end to end against
# tests/tools/sink: a passing set exits 0, one failure exits 3 with its row marked, the
# verdicts land in run.json and report.html, a bad expression is a usage error (2) naming
# the problem, and compare's gate fails in the worse direction only.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

start_sink --status 202
INBOX="http://127.0.0.1:$SINK_PORT/inbox"
frun --inbox "$INBOX" --rate 200 --duration 1s --sign none --mix create=1 \
    --expect 'p99<5s' --expect '2xx>=99%' --expect 'shed==0' --expect 'errors==0' \
    --expect 'create.p99.9 <= 5s'
expect_eq "$RUN_RC" 0 "every expectation met: exit 0" || show_run
grep -q '^expectations:' "$RUN_OUT" && [ "$(grep -c '^  pass ' "$RUN_OUT")" = 5 ]
check $? "the table prints five passes"
expect_eq "$(jget '[.expectations[] | select(.pass)] | length')" 5 "run.json records five passes"
expect_eq "$(jget '.config.expect | length')" 5 "and the expressions in its config"
grep -q '<h2 id="expectations">' "$RUN_DIR/report.html"
check $? "report.html has its Expectations table"
A=$RUN_DIR

frun --inbox "$INBOX" --rate 200 --duration 1s --sign none --mix create=1 \
    --expect 'p99<5s' --expect 'p50<1us'
expect_eq "$RUN_RC" 3 "one expectation failed: exit 3"
grep -q '^  FAIL p50<1us' "$RUN_OUT"
check $? "its row says FAIL"
expect_eq "$(jget '[.expectations[] | select(.pass | not) | .expr] | join(",")')" "p50<1us" \
    "run.json names the failed one"
[ -s "$RUN_DIR/run.json" ] && [ -s "$RUN_DIR/report.html" ]
check $? "and every result is still written"
grep -q 'FAIL' "$RUN_DIR/report.html"
check $? "report.html marks it"
B=$RUN_DIR

for bad in 'p99<5%' 'p98<1s' 'shed<3ms' 'p99 1s'; do
    "$FLOOD" run --inbox "$INBOX" --rate 10 --duration 1s --expect "$bad" >/dev/null 2>"$T_TMP/bad.err"
    rc=$?
    [ "$rc" = 2 ] && grep -q "^flood: run: --expect '$bad': " "$T_TMP/bad.err"
    check $? "'$bad' is a usage error (exit $rc): $(head -1 "$T_TMP/bad.err")"
done
stop_sink

# Gates: B against A on a metric B equals within noise passes; p50 against an impossible
# base fails one way only.
"$FLOOD" compare "$A" "$B" --expect '2xx within 1%' >"$T_TMP/gate1" 2>&1
expect_eq "$?" 0 "a gate met: exit 0"
doctored=$T_TMP/doctored
mkdir -p "$doctored"
jq '.totals.latency_ms.p99 = 0.001' "$A/run.json" >"$doctored/run.json"
"$FLOOD" compare "$doctored" "$A" --expect 'p99 within 10%' >"$T_TMP/gate2" 2>&1
expect_eq "$?" 3 "p99 far worse than the base: exit 3"
grep -q "FAIL p99 within 10%" "$T_TMP/gate2"
check $? "the gate's row says FAIL" || sed 's/^/#   /' "$T_TMP/gate2"
"$FLOOD" compare "$A" "$doctored" --expect 'p99 within 10%' >"$T_TMP/gate3" 2>&1
expect_eq "$?" 0 "better than the base passes"
"$FLOOD" compare "$A" --expect 'p99 within 10%' >/dev/null 2>&1
expect_eq "$?" 2 "a gate with one run folder is a usage error"
"$FLOOD" compare "$A" "$B" --expect 'p99 < 10ms' >/dev/null 2>&1
expect_eq "$?" 2 "a gate takes 'within' only"
done_testing

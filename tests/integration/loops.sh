#!/usr/bin/env bash
# `flood run --loops N` against tests/tools/sink on loopback: the same seeded run with 1, 4
# and 2 event loops dispatches the same activities (number, intended time, operation in
# --log-sends), the sink counts exactly run.json's 2xx, the loops' merged figures conserve
# and add up, and SIGTERM with 3 loops still writes run.json with every activity accounted
# for. No timing assertions: the machine may be busy.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

args=(--rate 200 --duration 2s --sign none --seed 11 --arrival poisson
    --mix create=60,follow=20,undo=20 --accept-wait 0)
sends_of() { awk '{print $1, $2, $3}' "$1" | sort; }

for n in 1 4 2; do
    start_sink --status 202
    frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" "${args[@]}" --loops "$n" \
        --log-sends "$T_TMP/sends.$n"
    stop_sink
    check "$RUN_RC" "--loops $n: the run exits 0" || show_run
    conserved
    check $? "--loops $n: conserved (printed and in run.json)"
    expect_eq "$(jget .config.loops)/$(jget .generator.loops)/$(jget '.generator.per_loop | length')" \
        "$n/$n/$n" "--loops $n: run.json's config, generator and per_loop say $n"
    ok=$(jget '[.totals.outcomes["200", "202", "2xx_other"]] | add')
    expect_eq "$(sink_count requests)" "$ok" "--loops $n: the sink received run.json's 2xx ($ok)"
    expect_eq "$(wc -l <"$T_TMP/sends.$n" | tr -d ' ')" "$(jget .totals.scheduled)" \
        "--loops $n: a --log-sends line per activity scheduled"
    expect_eq "$(jget '[.generator.per_loop[].sent] | add')/$(jget '[.series[].sent] | add')/$(jget '[.series[].completed] | add')" \
        "$(jget .totals.sent)/$(jget .totals.sent)/$(jget .totals.completed)" \
        "--loops $n: the loops' sends and the merged series add up to the totals"
    # activity k goes to loop k mod n: loop i sends ceil((total - i) / n) of them
    expect_eq "$(jq -c --argjson n "$n" '.totals.sent as $t | [range(0; $n) | (($t - .) + $n - 1) / $n | floor]' "$RUN_DIR/run.json")" \
        "$(jq -c '[.generator.per_loop[].sent]' "$RUN_DIR/run.json")" \
        "--loops $n: loop i sent the activities k = i mod $n"
    expect_eq "$(jget '[.series[] | select(.completed > 0) | .p99_ms >= .p50_ms and .max_ms >= .p99_ms] | all')" \
        true "--loops $n: every second's merged percentiles are ordered"
done
sends_of "$T_TMP/sends.1" >"$T_TMP/s1"
sends_of "$T_TMP/sends.4" >"$T_TMP/s4"
sends_of "$T_TMP/sends.2" >"$T_TMP/s2"
[ -s "$T_TMP/s1" ] && cmp -s "$T_TMP/s1" "$T_TMP/s4"
check $? "--loops 1 and 4 dispatch the same (activity, intended_ns, op) set" ||
    diff "$T_TMP/s1" "$T_TMP/s4" | head -5 | sed 's/^/#   /'
cmp -s "$T_TMP/s1" "$T_TMP/s2"
check $? "--loops 1 and 2 too"

# SIGTERM mid-run with 3 loops: every loop stops, run.json is written, all accounted for
start_sink --status 202
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 200 --duration 20s --sign none \
    --mix create=1 --loops 3 --log-sends "$T_TMP/sends.term" --accept-wait 0
for _ in $(seq 1 300); do
    grep -q 'activities over' "$RUN_ERR" 2>/dev/null && break
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.1
done
sleep 1.5
kill -TERM "$RUN_PID"
wait "$RUN_PID"
RUN_RC=$?
stop_sink
check "$RUN_RC" "--loops 3 stopped by SIGTERM exits 0" || show_run
expect_eq "$(jget .generator.interrupted)" true "run.json written, marked interrupted"
conserved
check $? "conserved after SIGTERM"
sched=$(jget .totals.scheduled)
[ "$sched" -gt 0 ] && [ "$sched" -lt 4000 ]
check $? "sending stopped early ($sched of 4000 scheduled)"
expect_eq "$(wc -l <"$T_TMP/sends.term" | tr -d ' ')" "$sched" \
    "a --log-sends line for each of them"
ok=$(jget '[.totals.outcomes["200", "202", "2xx_other"]] | add')
unf=$(jget .totals.unfinished)
got=$(sink_count requests)
[ "$got" -ge "$ok" ] && [ "$got" -le $((ok + unf)) ]
check $? "the sink received the 2xx ($ok) and at most the unfinished ($unf) more: $got"
expect_eq "$(grep -c 'SIGTERM: sending stopped' "$RUN_ERR")" 1 "one stop message, not one a loop"

# refusals: usage errors, exit 2
for a in "--loops 0" "--loops 65" "--loops 2 --dashboard 127.0.0.1:0" \
    "--loops 8 --connections 4" "--loops 4 --max-inflight 2"; do
    # shellcheck disable=SC2086
    frun --inbox http://127.0.0.1:1/inbox --rate 10 --duration 1s $a
    [ "$RUN_RC" -eq 2 ] && [ -s "$RUN_ERR" ] && [ ! -e "$RUN_DIR" ]
    check $? "usage error exits 2: $a ($(head -1 "$RUN_ERR"))"
done
"$FLOOD" run --help 2>&1 | grep -q -- '--loops N'
check $? "flood run --help documents --loops"

done_testing

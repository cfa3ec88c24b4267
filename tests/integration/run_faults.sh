#!/usr/bin/env bash
# `flood run` when the target misbehaves or the run is cut short: the target killed mid-run,
# hanging (timeouts), closing connections with no answer, refusing from the start, a
# persona that does not resolve, SIGINT mid-run. Each run stops as documented, writes its
# results (when it ran) and its counts add up.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

# 1. the target killed mid-run: answers, then refused connections; the run finishes
start_sink --status 202
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 200 --duration 3s --sign none \
    --timeout 2s --mix create=1
for _ in $(seq 1 200); do grep -q 'activities over' "$RUN_ERR" && break; sleep 0.05; done
sleep 1.5
kill -9 "$SINK_PID"
wait "$SINK_PID" 2>/dev/null
wait "$RUN_PID"
RUN_RC=$?
check "$RUN_RC" "a run whose target died mid-run exits 0" || show_run
ok=$(jget '.totals.outcomes["202"]') tr=$(jget '.totals.outcomes.transport')
echo "# 202: $ok, transport: $tr, refused: $(jget .totals.transport_kinds.refused), reset: $(jget .totals.transport_kinds.reset)"
[ "$ok" -gt 50 ] && [ "$tr" -gt 50 ]
check $? "answers before the kill, transport errors after"
[ "$(jget .totals.transport_kinds.refused)" -gt 50 ]
check $? "connections refused after the kill are counted as refused"
expect_eq "$(jget .totals.scheduled)" 600 "every one of 600 scheduled"
conserved
check $? "conserved"

# 2. a hanging target: every request times out
start_sink --mode hang
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 1s --sign none \
    --timeout 1s --mix create=1
stop_sink
check "$RUN_RC" "a run against a hanging target exits 0" || show_run
expect_eq "$(jget .totals.outcomes.timeout)/$(jget .totals.completed)" 50/50 "50 timeouts"
s=$(jget .operations.create.service_ms.p50)
awk -v s="$s" 'BEGIN { exit !(s >= 990 && s < 1500) }'
check $? "service time of a timeout is about the 1 s timeout (p50 $s ms)"
conserved
check $? "conserved"

# 2b. a hanging target with few connections: the requests queued behind them time out
# too (--timeout counts from the start), none is left unfinished at the end
start_sink --mode hang
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 40 --duration 2s --sign none \
    --timeout 1s --connections 2 --mix create=1
stop_sink
expect_eq "$(jget .totals.outcomes.timeout)/$(jget .totals.unfinished)" 80/0 \
    "80 timeouts behind 2 hung connections, none unfinished"
s=$(jget .operations.create.service_ms.max)
awk -v s="$s" 'BEGIN { exit !(s >= 990 && s < 2600) }'
check $? "a queued request times out about --timeout after its start (max $s ms)"
conserved
check $? "conserved"

# 3. a target that closes every connection without answering: reset
start_sink --mode close
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 1s --sign none --mix create=1
stop_sink
expect_eq "$(jget .totals.transport_kinds.reset)" 50 "50 closed without an answer: reset"

# 4. connection refused from the start: exit 1 before the run, a clear message, no results
frun --inbox "http://127.0.0.1:1/inbox" --rate 50 --duration 1s --sign none
[ "$RUN_RC" -eq 1 ] && grep -q "unreachable" "$RUN_ERR" && [ ! -e "$RUN_DIR" ]
check $? "refused before the start: exit 1, 'unreachable', nothing written" || show_run
# ...and with --no-check it runs, every request refused
frun --inbox "http://127.0.0.1:1/inbox" --rate 50 --duration 1s --sign none --no-check \
    --mix create=1
check "$RUN_RC" "with --no-check the run goes on and exits 0" || show_run
expect_eq "$(jget .totals.transport_kinds.refused)" 50 "50 refused"
conserved
check $? "conserved"

# 5. a persona that does not resolve: exit 1 with a message naming it, before any send
frun --persona "http://127.0.0.1:1/users/nobody" --rate 50 --duration 1s --sign none
[ "$RUN_RC" -eq 1 ] && grep -q "127.0.0.1:1/users/nobody" "$RUN_ERR" && [ ! -e "$RUN_DIR" ]
check $? "an unresolvable persona: exit 1, named, nothing sent ($(tail -1 "$RUN_ERR"))" || show_run

# 6. SIGINT mid-run: sending stops, results written, counts add up
start_sink --status 202
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 200 --duration 10s --sign none \
    --grace 2s --mix create=1
for _ in $(seq 1 200); do grep -q 'activities over' "$RUN_ERR" && break; sleep 0.05; done
sleep 2
kill -INT "$RUN_PID"
wait "$RUN_PID"
RUN_RC=$?
stop_sink
check "$RUN_RC" "SIGINT mid-run: exit 0" || show_run
sched=$(jget .totals.scheduled)
[ -n "$sched" ] && [ "$sched" -gt 100 ] && [ "$sched" -lt 1000 ]
check $? "sending stopped early ($sched of 2000 scheduled)"
expect_eq "$(jget .generator.interrupted)" true "run.json says interrupted"
expect_eq "$(sink_count requests)" "$(jget .totals.sent)" "the sink saw every request sent"
conserved
check $? "conserved after SIGINT"
grep -q 'SIGINT' "$RUN_ERR"
check $? "the stop is announced on stderr"

# 7. SIGTERM against a hanging target: the grace period ends, the rest are unfinished
start_sink --mode hang
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 10s --sign none \
    --grace 500ms --timeout 30s --mix create=1
# a SIGTERM before the run has started ends the process as usual: wait for the start
for _ in $(seq 1 200); do grep -q 'activities over' "$RUN_ERR" && break; sleep 0.05; done
sleep 1
kill -TERM "$RUN_PID"
wait "$RUN_PID"
RUN_RC=$?
stop_sink
check "$RUN_RC" "SIGTERM with requests hanging: exit 0" || show_run
u=$(jget .totals.unfinished)
[ -n "$u" ] && [ "$u" -gt 0 ] && [ "$u" = "$(jget .totals.sent)" ]
check $? "every request sent is unfinished ($u)"
conserved
check $? "conserved with unfinished requests"

done_testing

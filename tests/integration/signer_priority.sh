#!/usr/bin/env bash
# The signers' priority follows how far ahead they are: while more than half a look-ahead of
# the schedule is signed a signer runs at nice 19 (background work, out of the event loop's
# way); once under a quarter is signed it goes back to the process's own priority, so that
# other busy processes on the machine cannot starve it and the run fall behind its schedule.
# A signed run to the sink: 2 s at 50/s (signers far ahead: lowered), then 20,000/s RSA-2048
# for 2 s (more than this machine signs: behind: back up). The threads' nice values are read
# from /proc in each stage. Raising a thread's priority back needs the right to (root,
# CAP_SYS_NICE or RLIMIT_NICE): without it that part is skipped.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

# nice19 PID: how many of the process's threads run at nice 19
nice19() {
    local n=0 t f
    for t in /proc/"$1"/task/*/stat; do
        f=$(sed 's/^.*) //' "$t" 2>/dev/null | awk '{print $17}')
        [ "$f" = 19 ] && n=$((n + 1))
    done
    echo "$n"
}

start_sink --status 202
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --sign cavage --mix create=100 \
    --content plain --stages 50:0,50:2s,20000:0,20000:2s --timeout 5s --max-inflight 2000
pid=$RUN_PID
base=$(sed 's/^.*) //' /proc/"$pid"/stat 2>/dev/null | awk '{print $17}')
sleep 1.8 # the signers have been far ahead for a second: lowered
low=$(nice19 "$pid")
sleep 1.9 # 1.4 s into 20,000/s: behind by far
high=$(nice19 "$pid")
wait "$pid"
rc=$?
stop_sink
check "$rc" "the run exits 0" || sed 's/^/#   /' "$RUN_ERR"
echo "# threads at nice 19: $low at 50/s, $high at 20,000/s (the process at nice ${base:-?})"
check "$([ "${low:-0}" -ge 1 ] && echo 0 || echo 1)" \
    "at 50/s, signed far ahead: the signer threads at nice 19 ($low)"
rlim=$(ulimit -e 2>/dev/null || echo 0)
if [ "$(id -u)" = 0 ] || { [ "$rlim" != unlimited ] && [ $((20 - rlim)) -le "${base:-0}" ]; } ||
    [ "$rlim" = unlimited ]; then
    expect_eq "$high" 0 "at 20,000/s, behind: every signer back at the process's priority"
    grep -q "^flood: the signers fell behind their look-ahead" "$RUN_ERR"
    check $? "said once on stderr" || sed 's/^/#   /' "$RUN_ERR"
    expect_eq "$(grep -c "signers fell behind" "$RUN_ERR")" 1 "said once, not once a signer"
else
    check 0 "back at the process's priority when behind # SKIP raising a thread's priority needs root, CAP_SYS_NICE or RLIMIT_NICE"
fi
conserved
check $? "every activity accounted for"

done_testing

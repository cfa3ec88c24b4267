#!/usr/bin/env bash
# The signers' priority follows how far ahead they are: while more than half a look-ahead of
# the schedule is signed a signer runs at nice 19 (background work, out of the event loop's
# way); once under a quarter is signed it goes back to the process's own priority, so that
# other busy processes on the machine cannot starve it and the run fall behind its schedule.
# Below 100/s a signer is never lowered (signing costs the loop little there, and a lowered
# signer on a saturated machine wakes late).
# A signed run to the sink: 4 s at 20/s (never lowered), 4 s at 150/s (far ahead: lowered),
# then 20,000/s RSA-2048 for 2 s (more than this machine signs: behind: back up). The
# threads' nice values are read from /proc every 0.1 s: none at 19 in the first stage, one
# seen in the second, and once the run says
# its signers fell behind, none at 19 (within 3 s: a signer raises itself when it next
# runs). Raising a thread's priority back needs the right to (root, CAP_SYS_NICE or
# RLIMIT_NICE): without it that part is skipped.
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
# since: seconds since the run was launched
since() { awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { printf "%.2f", a - b }'; }
before() { awk -v n="$(since)" -v t="$1" 'BEGIN { exit !(n < t) }'; }

start_sink --status 202
T0=$(date +%s.%N)
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --sign cavage --mix create=100 \
    --content plain --stages 20:0,20:4s,150:0,150:4s,20000:0,20000:2s --timeout 5s \
    --max-inflight 2000
pid=$RUN_PID
base=$(sed 's/^.*) //' /proc/"$pid"/stat 2>/dev/null | awk '{print $17}')
# most FROM TO: the most threads at 19 seen from FROM to TO s after the launch
most() {
    local m=0 v
    while before "$1"; do sleep 0.05; done
    while before "$2"; do
        v=$(nice19 "$pid")
        [ "$v" -gt "$m" ] && m=$v
        sleep 0.1
    done
    echo "$m"
}
# the schedule starts 0 to 1.5 s after the launch, and a signer looks a second ahead: each
# window sees one stage's rate whatever the start
slow=$(most 0.5 2.5) # 20/s
low=$(most 5.5 7.5)  # 150/s, far ahead
# the fast stage: once the run says its signers fell behind, every signer back up
said=0
for _ in $(seq 1 300); do
    grep -q "signers fell behind" "$RUN_ERR" 2>/dev/null && { said=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
high=-
if [ "$said" = 1 ]; then
    for _ in $(seq 1 30); do
        high=$(nice19 "$pid")
        [ "$high" = 0 ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
fi
wait "$pid"
rc=$?
stop_sink
check "$rc" "the run exits 0" || sed 's/^/#   /' "$RUN_ERR"
echo "# threads at nice 19: at most $slow at 20/s, $low at 150/s; $high once behind at 20,000/s (the process at nice ${base:-?})"
expect_eq "$slow" 0 "at 20/s: no signer lowered"
check "$([ "${low:-0}" -ge 1 ] && echo 0 || echo 1)" \
    "at 150/s, signed far ahead: a signer thread at nice 19 ($low)"
rlim=$(ulimit -e 2>/dev/null || echo 0)
if [ "$(id -u)" = 0 ] || [ "$rlim" = unlimited ] || [ $((20 - rlim)) -le "${base:-0}" ]; then
    check "$([ "$said" = 1 ] && echo 0 || echo 1)" "behind at 20,000/s: said on stderr" ||
        sed 's/^/#   /' "$RUN_ERR"
    expect_eq "$high" 0 "then every signer back at the process's priority"
    expect_eq "$(grep -c "signers fell behind" "$RUN_ERR")" 1 "said once, not once a signer"
else
    check 0 "back at the process's priority when behind # SKIP raising a thread's priority needs root, CAP_SYS_NICE or RLIMIT_NICE"
fi
conserved
check $? "every activity accounted for"

done_testing

#!/usr/bin/env bash
# `flood capacity --dashboard ADDR:PORT` against tests/tools/sink (3 short steps): every
# step's run serves the page at that address in turn (another listener each step, told by
# the stream's hello and /api/state's instance); an open page follows from step to step
# (tests/browser/dashboard_follow.mjs in Debian's headless Chromium when present); the
# steps' rows carry the target's queue; port 0 is refused (the steps could not share it).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
. "$ROOT/tests/tools/ports.sh" # pick_port
# capacity ARGS...: flood capacity against the sink, 20, 40 and 80/s for 2 s each
# (--max-p99 10s: what is judged here is the dashboard following the steps; with the
# default 1 s, a second's stall of a busy machine in a 2 s step of 40 requests ended the
# search at its first step)
capacity() {
    "$FLOOD" capacity --inbox "http://127.0.0.1:$SINK_PORT/inbox" --sign none --mix create=1 \
        --listen 127.0.0.1:0 --state "$TEST_STATE" --instances 2 --actors 3 --key-pool 1 \
        --start 20 --max-rate 80 --factor 2 --refine 0 --warmup 0 --hold 2s --cooldown 1s \
        --max-f2a 0 --max-p99 10s --target-queue "cmd:echo 0" --out "$T_TMP/cap" "$@"
}

start_sink --status 202
capacity --dashboard 127.0.0.1:0 >"$T_TMP/cap0.out" 2>&1
expect_eq "$?" 2 "--dashboard with port 0: a usage error"
grep -q 'needs a fixed port' "$T_TMP/cap0.out"
check $? "  saying the port must be fixed" || cat "$T_TMP/cap0.out"

DPORT=$(pick_port)
DASH=127.0.0.1:$DPORT
if [ -x "$CHROMIUM" ] && [ -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
    # the browser first: it opens the page as soon as the first step's run serves it
    node "$ROOT/tests/browser/dashboard_follow.mjs" "http://$DASH/" >"$T_TMP/browser.out" 2>&1 &
    BR_PID=$!
    T_PIDS="$T_PIDS $BR_PID"
    for _ in $(seq 1 600); do
        grep -q '^# ready' "$T_TMP/browser.out" && break
        kill -0 "$BR_PID" 2>/dev/null || break
        sleep 0.1
    done
else
    BR_PID=""
fi
capacity --dashboard "$DASH" >"$T_TMP/cap.out" 2>"$T_TMP/cap.err" &
CAP_PID=$!
T_PIDS="$T_PIDS $CAP_PID"
# meanwhile: the page, /api/state's instance and the stream's hello, every 0.2 s
: >"$T_TMP/inst"
pages=0
while kill -0 "$CAP_PID" 2>/dev/null; do
    st=$(curl -s -m 1 "http://$DASH/api/state" 2>/dev/null)
    if [ -n "$st" ]; then
        echo "$st" | jq -r .instance >>"$T_TMP/inst"
        curl -s -m 1 "http://$DASH/" | grep -q 'floodDash' && pages=$((pages + 1))
        timeout 0.5 curl -sN "http://$DASH/events" 2>/dev/null | tee -a "$T_TMP/events" |
            sed -n 's/^data: \({"instance".*\)/\1/p' | jq -r .instance >>"$T_TMP/inst"
    fi
    sleep 0.2
done
wait "$CAP_PID"
expect_eq "$?" 0 "flood capacity --dashboard runs its steps and exits 0"
grep -q "^dashboard: http://$DASH/ (each step's run serves it in turn" "$T_TMP/cap.out"
check $? "it prints the dashboard's URL once" || cat "$T_TMP/cap.out"
nsteps=$(grep -c '^step ' "$T_TMP/cap.out")
[ "$nsteps" -ge 2 ]
check $? "its steps ran ($nsteps; 3 unless a busy machine broke a limit)" || cat "$T_TMP/cap.out"
[ "$pages" -ge 1 ]
check $? "the page is served during a step ($pages times)"
ninst=$(sort -u "$T_TMP/inst" | grep -c .)
[ "$ninst" -ge 2 ]
check $? "the address is served by one step's run after another ($ninst listeners seen)"
grep -q '"target_queue":{"cmd":{"depth":0' "$T_TMP/events"
check $? "the steps' rows carry the target's queue (--target-queue, given to every step)"
grep -q '^dashboard: http://' "$T_TMP"/cap/steps/*.log 2>/dev/null ||
    grep -q '^dashboard: http://' "$T_TMP"/cap/*.log
check $? "each step's log names the dashboard"
if [ -n "$BR_PID" ]; then
    wait "$BR_PID"
    rc=$?
    sed 's/^ok /# browser: ok /; s/^not ok /# browser: NOT OK /' "$T_TMP/browser.out"
    check "$rc" "chromium: a page opened during a step follows to the next, starting over" ||
        cat "$T_TMP/cap.out"
else
    check 0 "the page following steps in a real browser # SKIP needs $CHROMIUM and npm ci in tests/browser"
fi
stop_sink
done_testing

# tests/tools/run_lib.sh: helpers for the `flood run` integration tests (source it after
# tests/integration/lib.sh).
#   start_sink [sink options...]  - starts tests/tools/sink on a loopback port: SINK_PID,
#                                   SINK_PORT, SINK_STATS (its counts file, written on stop)
#   stop_sink                     - SIGTERM, wait, counts in $SINK_STATS
#   sink_count NAME               - a count from the sink ("requests", "create", ...)
#   frun ARGS...                  - `flood run` with a small quick crowd; RUN_RC, RUN_OUT,
#                                   RUN_ERR (files) and RUN_DIR (its --out folder)
#   jget EXPR                     - jq EXPR on $RUN_DIR/run.json
#   need_target                   - node, jq, curl, python3 and tests/target's node_modules,
#                                   or a failed check and the suite's end
#   free_port                     - a free loopback TCP port
SINK=${SINK:-${FLOOD_BUILD:-$ROOT/build}/tools/sink}
RUN_I=0

start_sink() {
    SINK_STATS=$T_TMP/sink.$RUN_I.$RANDOM.stats
    local log=$T_TMP/sink.$RUN_I.$RANDOM.log
    "$SINK" --stats "$SINK_STATS" --exit-after 300 "$@" >"$log" 2>&1 &
    SINK_PID=$!
    T_PIDS="$T_PIDS $SINK_PID"
    SINK_PORT=""
    for _ in $(seq 1 100); do
        SINK_PORT=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$log")
        [ -n "$SINK_PORT" ] && return 0
        sleep 0.05
    done
    echo "# sink did not start"
    return 1
}

stop_sink() {
    kill "$SINK_PID" 2>/dev/null
    wait "$SINK_PID" 2>/dev/null
}

sink_count() {
    awk -v k="$1" '$1 == k {print $2}' "$SINK_STATS"
}

frun() {
    RUN_I=$((RUN_I + 1))
    RUN_DIR=$T_TMP/run.$RUN_I
    RUN_OUT=$T_TMP/run.$RUN_I.out
    RUN_ERR=$T_TMP/run.$RUN_I.err
    "$FLOOD" run --listen 127.0.0.1:0 --state "$TEST_STATE" --instances 2 --actors 3 \
        --key-pool 1 --out "$RUN_DIR" "$@" >"$RUN_OUT" 2>"$RUN_ERR"
    RUN_RC=$?
}

# frun_bg ARGS...: as frun, in the background (RUN_PID)
frun_bg() {
    RUN_I=$((RUN_I + 1))
    RUN_DIR=$T_TMP/run.$RUN_I
    RUN_OUT=$T_TMP/run.$RUN_I.out
    RUN_ERR=$T_TMP/run.$RUN_I.err
    "$FLOOD" run --listen 127.0.0.1:0 --state "$TEST_STATE" --instances 2 --actors 3 \
        --key-pool 1 --out "$RUN_DIR" "$@" >"$RUN_OUT" 2>"$RUN_ERR" &
    RUN_PID=$!
    T_PIDS="$T_PIDS $RUN_PID"
}

# crowd_url ERRFILE: the crowd's base URL (http or https) once the `flood run` writing
# ERRFILE says it listens (up to 5 s; empty and 1 if it never does)
crowd_url() {
    local u _
    for _ in $(seq 1 100); do
        u=$(sed -n 's/^flood: run: crowd listening on \(https\{0,1\}:[^ ]*\)$/\1/p' "$1" | head -1)
        [ -n "$u" ] && { echo "$u"; return 0; }
        sleep 0.05
    done
    return 1
}

jget() {
    jq -r "$1" "$RUN_DIR/run.json" 2>/dev/null
}

# conserved: the run printed the conservation line with ": ok" and run.json agrees
conserved() {
    grep -q '^conservation: .*: ok$' "$RUN_OUT" &&
        [ "$(jget '.totals.scheduled == .totals.sent + .totals.shed and .totals.sent == .totals.completed + .totals.unfinished and .totals.completed == ([.totals.outcomes[]] | add)')" = true ]
}

show_run() {
    echo "# exit $RUN_RC; stdout:"
    sed 's/^/#   /' "$RUN_OUT" | head -20
    echo "# stderr:"
    sed 's/^/#   /' "$RUN_ERR" | head -20
}

need_target() {
    local tool
    for tool in node jq curl python3; do
        command -v "$tool" >/dev/null 2>&1 || { check 1 "$tool is installed"; done_testing; exit 1; }
    done
    if [ ! -d "$ROOT/tests/target/node_modules/@fedify/fedify" ]; then
        check 1 "tests/target has its node_modules (scripts/deps.sh)"
        done_testing
        exit 1
    fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

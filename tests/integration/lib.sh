# tests/integration/lib.sh: helpers for the integration scripts (source it).
#   ok COND_EXIT_CODE "what"   - prints "ok N - what" or "not ok N - what"
#   start_serve OUTVAR ARGS... - starts `flood serve --listen 127.0.0.1:0 ARGS`, sets
#                                 SERVE_PID and SERVE_PORT; stopped by the EXIT trap
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FLOOD=${FLOOD:-$ROOT/build/flood}
TEST_STATE=${TEST_STATE:-$ROOT/build/test-state}
T_N=0
T_FAILED=0
T_TMP=$(mktemp -d)
T_PIDS=""

t_cleanup() {
    for p in $T_PIDS; do kill "$p" 2>/dev/null; done
    for p in $T_PIDS; do wait "$p" 2>/dev/null; done
    rm -rf "$T_TMP"
}
trap t_cleanup EXIT

# check STATUS DESCRIPTION: STATUS 0 passes. Returns non-zero on a failure, so that
# `check $? "..." || show_why` prints the cause beside the failing line.
check() {
    T_N=$((T_N + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $T_N - $2"
    else
        echo "not ok $T_N - $2"
        T_FAILED=$((T_FAILED + 1))
        return 1
    fi
}

# expect_eq GOT WANT DESCRIPTION
expect_eq() {
    if [ "$1" = "$2" ]; then check 0 "$3"; else
        check 1 "$3"
        echo "#   got:  $1"
        echo "#   want: $2"
    fi
}

# start_serve [flood serve options...]: SERVE_PID, SERVE_PORT, SERVE_LOG
start_serve() {
    SERVE_LOG=$T_TMP/serve.$T_N.log
    : >"$SERVE_LOG" # a second start before a check: not the last one's port
    "$FLOOD" serve --listen 127.0.0.1:0 --state "$TEST_STATE" --quiet "$@" >"$SERVE_LOG" 2>&1 &
    SERVE_PID=$!
    T_PIDS="$T_PIDS $SERVE_PID"
    SERVE_PORT=""
    for _ in $(seq 1 600); do
        SERVE_PORT=$(sed -n 's/^listening on https\{0,1\}:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$SERVE_LOG" | head -1)
        [ -n "$SERVE_PORT" ] && return 0
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "# flood serve did not start:"
    sed 's/^/#   /' "$SERVE_LOG"
    return 1
}

# stop PID: SIGTERM and wait
stop_pid() {
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

done_testing() {
    echo "$((T_N - T_FAILED)) passed, $T_FAILED failed"
    [ "$T_FAILED" -eq 0 ]
}

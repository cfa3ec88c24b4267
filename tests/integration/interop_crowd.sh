#!/usr/bin/env bash
# flood's crowd read by an independent client: Fedify 1.5's own WebFinger, ActivityPub and
# NodeInfo code (tests/interop/crowd.mjs), with the *.test names pointed at flood's listener
# for that Node process alone. Two crowds share one state folder ($TEST_STATE, as the other
# integration tests, default build/test-state: keys made once): HTTPS with --tls (Fedify
# resolves acct: over HTTPS only) and plain HTTP with a --public-port that differs from the
# listening port. Passes the "ok N - ..." lines through, then checks that both crowds stop
# cleanly on SIGTERM (exit 0, no sanitizer report).
#   FLOOD=path/to/flood bash tests/integration/interop_crowd.sh
set -u
cd "$(dirname "$0")/../.."
FLOOD=${FLOOD:-build/flood}
case "$FLOOD" in /*) ;; *) FLOOD="$PWD/$FLOOD" ;; esac
TEST_STATE=${TEST_STATE:-$PWD/build/test-state}

tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
    echo "not ok 1 - interop_crowd: $*"
    exit 1
}

[ -x "$FLOOD" ] || fail "no flood binary at $FLOOD"
[ -d tests/interop/node_modules/@fedify/fedify ] ||
    fail "tests/interop has no node_modules (run scripts/deps.sh)"

# start NAME ARGS...: run `flood serve` in the background (it stops by itself after
# --exit-after), wait for its "listening on" line, set $listen to ADDR:PORT. The wait is
# long because a fresh state folder means 220 RSA-2048 keys to make first (about 25 s on
# two idle cores, minutes on a loaded machine).
start() {
    local name=$1
    shift
    "$FLOOD" serve --listen 127.0.0.1:0 --state "$TEST_STATE" --exit-after 600 "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    local pid=$! i
    pids+=("$pid")
    eval "pid_$name=$pid"
    for i in $(seq 1 3000); do
        listen=$(sed -n 's|^listening on https\{0,1\}://\([^/ ]*\)$|\1|p' "$tmp/$name.out" | head -1)
        [ -n "$listen" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "# flood serve $* (stdout):"
    sed 's/^/#   /' "$tmp/$name.out"
    echo "# (stderr):"
    sed 's/^/#   /' "$tmp/$name.err"
    fail "flood serve $* did not print 'listening on'"
}

start https --tls --scheme https
https_listen=$listen
# The CA's path, as flood prints it: "tls: CA certificate PATH".
ca=$(sed -n 's/^tls: CA certificate \(.*\)$/\1/p' "$tmp/https.out" | head -1)
[ -n "$ca" ] && [ -f "$ca" ] || fail "flood serve --tls printed no readable CA path ('$ca')"

start http --scheme http --public-port 8443
http_listen=$listen

timeout --kill-after=5 120 node tests/interop/crowd.mjs --state "$TEST_STATE" \
    --crowd "{\"scheme\":\"https\",\"listen\":\"$https_listen\",\"ca\":\"$ca\"}" \
    --crowd "{\"scheme\":\"http\",\"listen\":\"$http_listen\",\"publicPort\":8443}" |
    tee "$tmp/node.out"
rc=${PIPESTATUS[0]}
n=$(sed -n 's/^\(not \)\{0,1\}ok \([0-9]*\) .*/\2/p' "$tmp/node.out" | tail -1)
n=${n:-0}

# Both crowds stop on SIGTERM with status 0 and nothing from the sanitizers.
for name in https http; do
    n=$((n + 1))
    eval "pid=\$pid_$name"
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
    status=$?
    if [ "$status" -eq 0 ] && ! grep -qE 'Sanitizer|runtime error' "$tmp/$name.err"; then
        echo "ok $n - flood serve ($name) stops cleanly on SIGTERM"
    else
        echo "not ok $n - flood serve ($name) stops cleanly on SIGTERM (status $status)"
        sed 's/^/#   /' "$tmp/$name.err" | tail -40
        rc=1
    fi
done
pids=()
exit "$rc"

#!/usr/bin/env bash
# scripts/bench_dashboard.sh: the dashboard's cost on the sender. 5,000/s unsigned against
# tests/tools/sink for D seconds, once without a dashboard and once with --dashboard and two
# pages' streams open (curl -N on /events); pacing error (the worst whole second's sends
# against the rate) and dispatch lag p99 side by side, and their ratios (with / without).
#
#   scripts/bench_dashboard.sh [SECONDS]     (default 15)
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-$PWD/build/flood}
SINK=${SINK:-${FLOOD_BUILD:-$PWD/build}/tools/sink}
STATE=${TEST_STATE:-$PWD/build/test-state}
dur=${1:-15}
rate=5000
TMP=$(mktemp -d)
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
"$SINK" --exit-after $((dur + 60)) >"$TMP/sink.log" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 1 50); do grep -q '^port' "$TMP/sink.log" && break; sleep 0.1; done
port=$(awk '/^port/ {print $2}' "$TMP/sink.log")

# one run: $1 = label, the rest extra options; prints "pacing_error_pct lag_p99_ms"
one() {
    local label=$1
    shift
    "$FLOOD" run --listen 127.0.0.1:0 --state "$STATE" --instances 2 --actors 3 --key-pool 1 \
        --inbox "http://127.0.0.1:$port/inbox" --rate $rate --duration "${dur}s" --sign none \
        --mix create=1 --quiet --out "$TMP/$label" "$@" >"$TMP/$label.out" 2>&1 &
    local pid=$!
    PIDS="$PIDS $pid"
    if [ $# -gt 0 ]; then # two pages' streams
        local dash=""
        for _ in $(seq 1 100); do
            dash=$(sed -n 's|^dashboard: http://\(.*\)/$|\1|p' "$TMP/$label.out")
            [ -n "$dash" ] && break
            sleep 0.1
        done
        for i in 1 2; do
            curl -sN "http://$dash/events" >"$TMP/stream.$i" 2>/dev/null &
            PIDS="$PIDS $!"
        done
    fi
    wait "$pid"
    # whole seconds of the schedule (not the first, not the drain)
    jq -r --argjson r $rate --argjson d "$dur" '.generator.lag_p99_ms as $l
        | [.series[1:$d][] | ((.sent - $r) | fabs) / $r * 100] | max as $e
        | "\($e) \($l)"' "$TMP/$label/run.json"
}
read -r e0 l0 < <(one plain)
read -r e1 l1 < <(one dash --dashboard 127.0.0.1:0)
rows=$(grep -c '^event: row' "$TMP/stream.1" 2>/dev/null || echo 0)
printf 'dashboard: %d/s unsigned for %d s; two streams open got %s rows each\n' $rate "$dur" "$rows"
printf '  %-22s %14s %14s %8s\n' "" "no dashboard" "2 pages open" "ratio"
awk -v a="$e0" -v b="$e1" 'BEGIN {printf "  %-22s %13.3f%% %13.3f%% %8.2f\n", "worst second off rate", a, b, (a > 0 ? b / a : 0)}'
awk -v a="$l0" -v b="$l1" 'BEGIN {printf "  %-22s %12.3f ms %11.3f ms %8.2f\n", "dispatch lag p99", a, b, (a > 0 ? b / a : 0)}'

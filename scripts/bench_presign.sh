#!/usr/bin/env bash
# scripts/bench_presign.sh: what --presign takes off the measured window (issue 30, part 1).
# flood at 1,000/s with RSA-2048 keys and the realistic mix (every kind, --content default,
# as bench_run.sh's pacing) against the loopback sink, signed as it goes and presigned
# (--presign all), one after the other in this run: flood's CPU during the measured window
# (user + system of the whole process from the first send to the end, as a share of one
# core), the dispatch lag p99 and the achieved rate of each, and the ratio of the CPU shares.
# About a minute (the presigned run signs its 8,000 requests first).
#
#   scripts/bench_presign.sh [--quick]      (--quick: 4 s runs instead of 8)
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-$PWD/build/flood}
SINK=${SINK:-${FLOOD_BUILD:-$PWD/build}/tools/sink}
STATE=${TEST_STATE:-$PWD/build/test-state}
rate=1000
dur=8
[ "${1:-}" = "--quick" ] && dur=4
command -v jq >/dev/null 2>&1 || { echo "bench: jq is missing (scripts/deps.sh installs it)" >&2; exit 1; }
[ -x "$FLOOD" ] || { echo "bench: no flood binary at $FLOOD (make)" >&2; exit 1; }
[ -x "$SINK" ] || { echo "bench: no sink at $SINK (make)" >&2; exit 1; }
TMP=$(mktemp -d)
SPID=""
cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

"$SINK" --status 202 --exit-after 600 >"$TMP/sink.log" 2>&1 &
SPID=$!
port=""
for _ in $(seq 1 100); do
    port=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$TMP/sink.log")
    [ -n "$port" ] && break
    sleep 0.05
done
[ -n "$port" ] || { echo "bench: the sink did not start" >&2; exit 1; }
INBOX="http://127.0.0.1:$port/inbox"

# run NAME ARGS...: the realistic mix at $rate/s for $dur s, RSA-2048 (the state's keys)
run() {
    local name=$1
    shift
    "$FLOOD" run --listen 127.0.0.1:0 --state "$STATE" --instances 2 --actors 3 --key-pool 1 \
        --quiet --out "$TMP/$name" --inbox "$INBOX" --rate "$rate" --duration "${dur}s" \
        --sign cavage --content default \
        --mix create=40,reply=10,announce=15,like=20,follow=5,update=5,delete=5 \
        --like-object "${INBOX%/inbox}/users/alice/statuses/1" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
}
j() { jq -r "$2" "$TMP/$1/run.json" 2>/dev/null; }
# figures NAME: CPU share of a core over the window, lag p99 ms, achieved rate /s, 202s
figures() {
    j "$1" '"\((.generator.cpu_s / .generator.wall_s * 1000 | round) / 1000) \(.totals.dispatch_lag_ms.p99) \((.totals.sent / '"$dur"' * 10 | round) / 10) \(.totals.outcomes["202"])"'
}

run signed || { echo "bench: the signed run failed:" >&2; cat "$TMP/signed.err" >&2; exit 1; }
run presigned --presign all || {
    echo "bench: the presigned run failed:" >&2
    cat "$TMP/presigned.err" >&2
    exit 1
}
read -r s_cpu s_lag s_rate s_ok <<<"$(figures signed)"
read -r p_cpu p_lag p_rate p_ok <<<"$(figures presigned)"
pre=$(j presigned .presign.presigned)
late=$(j presigned .presign.signed_late)
took=$(j presigned '.presign.presign_s * 10 | round / 10')
head=$(j presigned '.presign.head_s * 10 | round / 10')
mem=$(j presigned '.presign.memory_peak / 1048576 | round')
complete=$(j presigned .presign.complete)
note=""
[ "$complete" = true ] || note=" (NOT all signed by the start: the machine was too busy for the estimate, the rest was signed during the window and its CPU counted there)"
echo "bench: presign: $rate/s for $dur s, RSA-2048, the realistic mix (--content default), against a loopback sink; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench:   signed as it goes: flood's CPU $s_cpu of a core over the window, dispatch lag p99 $s_lag ms, $s_rate/s achieved ($s_ok answered 202)"
echo "bench:   presigned (--presign all): flood's CPU $p_cpu of a core over the window, dispatch lag p99 $p_lag ms, $p_rate/s achieved ($p_ok answered 202); $pre signed before the first send in $took s (the start set $head s ahead, $mem MiB held), $late late$note"
ratio=$(awk -v a="$p_cpu" -v b="$s_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "bench: presign: flood's CPU share over the measured window, presigned against signed as it goes: $ratio (aim: well under 1)"
echo "bench: figures: presign_rate=$rate presign_s=$dur signed_cpu_share=$s_cpu presigned_cpu_share=$p_cpu presign_cpu_ratio=$ratio signed_lag_p99_ms=$s_lag presigned_lag_p99_ms=$p_lag signed_rate=$s_rate presigned_rate=$p_rate presigned_before_start=$pre presigned_late=$late presign_took_s=$took presign_head_s=$head presign_mem_mb=$mem presign_complete=$complete"

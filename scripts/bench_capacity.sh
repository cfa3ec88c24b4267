#!/usr/bin/env bash
# flood capacity at full length against the reference target, whose capacity is known by
# construction: --workers W --work-ms M processes at most W x 1000 / M activities a second.
# For W = 1, 2, 4 (M = 20 by default: 50, 100, 200/s) it prints the verdict beside the
# construction figure and their ratio. The target is one Node process on these 2 cores,
# sharing them with the crowd and the sender: where its own CPU caps it below W x 1000 / M,
# the verdict says the lower figure, and this prints both.
#   BENCH_CAP_WORK_MS=20 BENCH_CAP_WORKERS="1 2 4" BENCH_CAP_HOLD=20s scripts/bench_capacity.sh
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-build/flood}
M=${BENCH_CAP_WORK_MS:-20}
HOLD=${BENCH_CAP_HOLD:-20s}
tmp=$(mktemp -d)
tpid=""
cleanup() {
    [ -n "$tpid" ] && kill "$tpid" 2>/dev/null && wait "$tpid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
printf '%-8s %-8s %-14s %-14s %s\n' workers work_ms construction sustained ratio
for w in ${BENCH_CAP_WORKERS:-1 2 4}; do
    cport=$(free_port)
    node tests/target/server.mjs --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$cport" --workers "$w" --work-ms "$M" \
        >"$tmp/target.out" 2>"$tmp/target.err" &
    tpid=$!
    tport=""
    for _ in $(seq 1 300); do
        tport=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/target.out")
        [ -n "$tport" ] && break
        sleep 0.1
    done
    curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
        "http://127.0.0.1:$tport/admin/accounts" >/dev/null
    want=$((w * 1000 / M))
    out=$tmp/cap-$w
    "$FLOOD" capacity --listen "127.0.0.1:$cport" --persona "http://target.test:$tport/users/alice" \
        --resolve "target.test:$tport:127.0.0.1" --state build/test-state --instances 10 --actors 10 \
        --mix create=80,follow=20 --stats-url "http://127.0.0.1:$tport/stats" \
        --start $((want / 4)) --factor 2 --refine 4 --hold "$HOLD" --out "$out" >"$out.log" 2>&1
    got=$(jq -r '.sustained_rate // 0' "$out/capacity.json" 2>/dev/null || echo 0)
    printf '%-8s %-8s %-14s %-14s %.2f\n' "$w" "$M" "$want/s" "$got/s" \
        "$(python3 -c "print($got / $want)")"
    grep '^sustains' "$out.log" | sed 's/^/    /'
    kill "$tpid" 2>/dev/null
    wait "$tpid" 2>/dev/null
    tpid=""
done

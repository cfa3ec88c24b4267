#!/usr/bin/env bash
# A crowd of 10,000 instances against the default 20, measured in the same run, plain and
# over TLS: start (from `flood serve` to the first 200 for the last instance's actor, keys
# already in the state folder), resident memory after start and after serving, and actor
# GETs a second (wrk on CPU 1, 32 keep-alive connections, each request for a random actor of
# a random instance by its Host header; flood on CPU 0 with one server thread). Printed as
# the 10,000 crowd's ratios to the 20 crowd's (aim: GETs a second at least 0.9).
# Over TLS wrk connects to 127.0.0.1 (no SNI, the same certificate for both crowds): the
# ratio is the serving path's; the per-instance leaves cost each new connection's handshake
# only (tests/integration/crowd_10k.sh checks that they answer).
#   BENCH_SCALE_ROUNDS=N rounds, alternated (default 3); BENCH_SECONDS wrk's (default 5)
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-build/flood}
ROUNDS=${BENCH_SCALE_ROUNDS:-3}
SECS=${BENCH_SECONDS:-5}
state=build/bench-scale-state
tmp=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
ncpu=$(nproc)
pin_server="taskset -c 0"
pin_client="taskset -c $((ncpu > 1 ? 1 : 0))"
command -v wrk >/dev/null || { echo "bench: no wrk (scripts/deps.sh installs it)"; exit 1; }

cat >"$tmp/hosts.lua" <<'LUA'
local n = tonumber(os.getenv("BENCH_N"))
math.randomseed(7)
request = function()
    return wrk.format("GET", "/users/user" .. math.random(10),
        {["Host"] = "flood" .. math.random(n) .. ".test", ["Accept"] = "application/activity+json"})
end
LUA

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# one N TLS(0|1): "start_s rss_start_kb req_s rss_after_kb"
one() {
    local n=$1 tls=$2 log=$tmp/serve.log port="" t0 t1 scheme=http extra=""
    [ "$tls" = 1 ] && scheme=https extra=--tls
    t0=$(date +%s%N)
    $pin_server "$FLOOD" serve --listen 127.0.0.1:0 --state "$state" --instances "$n" \
        --server-threads 1 --quiet --exit-after 600 $extra >"$log" 2>"$log.err" &
    pid=$!
    while [ -z "$port" ]; do
        kill -0 "$pid" 2>/dev/null || { echo "bench: flood serve exited:" >&2; cat "$log.err" >&2; return 1; }
        port=$(sed -n 's/^listening on https\{0,1\}:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$log" | head -1)
        [ -n "$port" ] || sleep 0.01
    done
    until curl -skf -o /dev/null -H "Host: flood$n.test" -H 'Accept: application/activity+json' \
        "$scheme://127.0.0.1:$port/users/user10"; do
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.01
    done
    t1=$(date +%s%N)
    local r0 rq r1
    r0=$(rss_kb "$pid")
    rq=$(BENCH_N=$n $pin_client wrk -t1 -c32 -d"${SECS}s" -s "$tmp/hosts.lua" \
        "$scheme://127.0.0.1:$port/" 2>&1 | awk '/^Requests\/sec/ {printf "%d", $2}')
    r1=$(rss_kb "$pid")
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=""
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", (b - a) / 1e9}') $r0 ${rq:-0} $r1"
}

"$FLOOD" serve --listen 127.0.0.1:0 --state "$state" --instances 1 --quiet --exit-after 1 \
    >/dev/null 2>&1 # the keys, made once

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for tls in 0 1; do
    name=http
    [ "$tls" = 1 ] && name=https
    s20="" m20="" q20="" a20="" s10k="" m10k="" q10k="" a10k=""
    for r in $(seq 1 "$ROUNDS"); do
        read -r s m q a < <(one 20 $tls) || exit 1
        s20="$s20 $s" m20="$m20 $m" q20="$q20 $q" a20="$a20 $a"
        read -r s m q a < <(one 10000 $tls) || exit 1
        s10k="$s10k $s" m10k="$m10k $m" q10k="$q10k $q" a10k="$a10k $a"
        echo "$name round $r: 20 instances $(echo "$s20" | awk '{print $NF}') s ${q20##* } GET/s; 10,000 instances $s s $q GET/s"
    done
    S20=$(echo $s20 | median) S10=$(echo $s10k | median)
    Q20=$(echo $q20 | median) Q10=$(echo $q10k | median)
    M20=$(echo $m20 | median) M10=$(echo $m10k | median)
    A20=$(echo $a20 | median) A10=$(echo $a10k | median)
    echo "$name crowd of 10,000 vs 20 (medians of $ROUNDS): start $S10 s vs $S20 s," \
        "resident $((M10 / 1024)) MB vs $((M20 / 1024)) MB (after serving $((A10 / 1024)) vs $((A20 / 1024)) MB)," \
        "actor GET/s $Q10 vs $Q20, ratio $(echo "$Q10 $Q20" | awk '{printf "%.2f", ($2 > 0) ? $1 / $2 : 0}') (aim >= 0.9)"
done

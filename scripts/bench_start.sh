#!/usr/bin/env bash
# The crowd's first start: from `flood serve --state NEWDIR` (the default crowd, 20 x 10)
# to the first 200 for an actor document, on a new state folder each round (the keys made
# then), against a start on the same folder once its keys are there. Printed as measured
# figures (aim: the new folder's crowd answers within 3 s on two cores).
#   BENCH_START_ROUNDS=N  rounds of each (default 3)
#   BENCH_PER_ACTOR=1     also one first start with --key-pool 0 (a key per actor: slow)
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-build/flood}
ROUNDS=${BENCH_START_ROUNDS:-3}
tmp=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

now() { date +%s.%N; }

# first_answer STATE [options...]: seconds from start to the first 200 for the crowd's
# last actor, printed; the process is stopped afterwards.
first_answer() {
    local state=$1 log=$tmp/serve.log port="" t0 t1
    shift
    t0=$(now)
    "$FLOOD" serve --listen 127.0.0.1:0 --state "$state" --exit-after 600 "$@" >"$log" 2>"$log.err" &
    pid=$!
    while [ -z "$port" ]; do
        kill -0 "$pid" 2>/dev/null || { echo "bench: flood serve exited:" >&2; cat "$log.err" >&2; return 1; }
        port=$(sed -n 's/^listening on http:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$log" | head -1)
        [ -n "$port" ] || sleep 0.01
    done
    until curl -sf -o /dev/null -H 'Host: flood20.test' -H 'Accept: application/activity+json' \
        "http://127.0.0.1:$port/users/user10"; do
        kill -0 "$pid" 2>/dev/null || { echo "bench: flood serve exited" >&2; return 1; }
        sleep 0.01
    done
    t1=$(now)
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=""
    echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}

median() { tr ' ' '\n' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

new="" warm=""
for r in $(seq 1 "$ROUNDS"); do
    s=$(first_answer "$tmp/state$r") || exit 1
    w=$(first_answer "$tmp/state$r") || exit 1
    new="$new $s" warm="$warm $w"
done
keys=$(cat "$tmp/state1/keys/rsa-2048/pool")
echo "first start, default crowd (20 x 10, a pool of $keys RSA keys), new state folder to first actor 200:" \
    "median $(echo $new | median) s (rounds:$new; aim < 3 s); keys already there: median $(echo $warm | median) s (rounds:$warm); $(nproc) cores"
if [ "${BENCH_PER_ACTOR:-0}" = 1 ]; then
    p=$(first_answer "$tmp/per-actor" --key-pool 0) || exit 1
    echo "first start with a key per actor (--key-pool 0, 220 RSA keys): $p s"
fi

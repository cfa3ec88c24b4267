#!/usr/bin/env bash
# make stress: is any suite flaky? Every unit test binary 20 times and every integration
# suite 3 times, one after another in a random order, while busy loops of our own keep the
# cores loaded. Counts suite runs; a failed run is printed with its log, and the last line
# is "N passed, N failed". A flake found here is fixed at its root, never retried.
#
#   scripts/stress.sh [--san]       --san: the ASan+UBSan build (build-san/) instead
#   STRESS_SEED=N        replay an order (the seed is printed at the start)
#   STRESS_UNIT=20 STRESS_INTEGRATION=3   runs of each kind of suite
#   STRESS_BUSY=2        busy loops beside the suites (default: one per core)
#   STRESS_ONLY=PATTERN  only the suites whose name contains PATTERN
#   SUITE_TIMEOUT=600    seconds before a suite run is killed (and counted as failed)
set -u
cd "$(dirname "$0")/.."
san=0
while [ $# -gt 0 ]; do
    case "$1" in
    --san) san=1 ;;
    *) echo "stress: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
build=build make_args=()
if [ "$san" = 1 ]; then
    build=build-san make_args=(SANITIZE=address,undefined)
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
fi
make -s -j"$(nproc)" "${make_args[@]}" all || { echo "stress: build failed"; exit 1; }

seed=${STRESS_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
units=${STRESS_UNIT:-20} integ=${STRESS_INTEGRATION:-3} busy=${STRESS_BUSY:-$(nproc)}
only=${STRESS_ONLY:-}
logdir=$build/stress-logs
rm -rf "$logdir"
mkdir -p "$logdir"
export FLOOD="$PWD/$build/flood" FLOOD_BUILD="$PWD/$build" FLOOD_ROUND=stress

busy_pids="" suite=""
stop_busy() {
    for p in $busy_pids $suite; do kill "$p" 2>/dev/null; done
    for p in $busy_pids $suite; do wait "$p" 2>/dev/null; done
    busy_pids="" suite=""
}
trap stop_busy EXIT
trap 'stop_busy; exit 130' INT TERM

# The plan: one line per suite run ("unit|integration NAME PATH"), shuffled by the seed.
plan=$logdir/plan
: >"$plan"
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    n=$(basename "$t")
    [ -n "$only" ] && [[ "$n" != *$only* ]] && continue
    for _ in $(seq 1 "$units"); do echo "unit $n $t" >>"$plan"; done
done
for t in tests/integration/*.sh; do
    n=$(basename "$t" .sh)
    [ "$n" = lib ] && continue # helpers, not a suite
    [ -n "$only" ] && [[ "$n" != *$only* ]] && continue
    for _ in $(seq 1 "$integ"); do echo "integration $n $t" >>"$plan"; done
done
# shuf draws from --random-source: a stream made from the seed replays the same order
shuf --random-source=<(openssl enc -aes-256-ctr -pass "pass:$seed" -nosalt -pbkdf2 \
    </dev/zero 2>/dev/null) "$plan" >"$plan.shuffled"
total=$(wc -l <"$plan.shuffled")
echo "stress: $total suite runs ($units x each unit binary, $integ x each integration suite)," \
    "$busy busy loops, $build, seed $seed (STRESS_SEED=$seed replays this order)"

for _ in $(seq 1 "$busy"); do
    (while :; do :; done) &
    busy_pids="$busy_pids $!"
done

passed=0 failed=0 i=0 start=$SECONDS
while read -r kind name path; do
    i=$((i + 1))
    log=$logdir/$(printf '%04d' "$i")-$name.log
    t0=$SECONDS
    # in the background and waited for, so that a signal to this script acts at once
    if [ "$kind" = unit ]; then
        timeout --kill-after=10 "${SUITE_TIMEOUT:-600}" "$path" </dev/null >"$log" 2>&1 &
    else
        timeout --kill-after=10 "${SUITE_TIMEOUT:-600}" bash "$path" </dev/null >"$log" 2>&1 &
    fi
    suite=$!
    wait "$suite"
    rc=$?
    suite=""
    if [ "$rc" -eq 0 ] && ! grep -qE '^not ok [0-9]+' "$log"; then
        passed=$((passed + 1))
        rm -f "$log"
    else
        failed=$((failed + 1))
        [ "$rc" -eq 124 ] && echo "not ok - $name timed out after ${SUITE_TIMEOUT:-600} s" >>"$log"
        printf '  FAIL %-24s run %d of %d, exit %d (%ds) log: %s\n' "$name" "$i" "$total" "$rc" \
            $((SECONDS - t0)) "$log"
        grep -E '^not ok|^#|ERROR|Sanitizer|runtime error' "$log" | head -20 | sed 's/^/       /'
    fi
    if [ $((i % 50)) -eq 0 ]; then
        echo "  ... $i of $total runs, $failed failed, $((SECONDS - start)) s"
    fi
done <"$plan.shuffled"
stop_busy
echo "stress: $total runs in $((SECONDS - start)) s, seed $seed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

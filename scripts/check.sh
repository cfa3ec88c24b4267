#!/usr/bin/env bash
# Every test flood has, in two rounds: a plain build, and the same tests against an
# ASan+UBSan build, the two rounds side by side (each its own build folder, state folder
# and ports; --serial runs them one after the other). Unit test binaries (tests/unit/test_*.c), integration scripts
# (tests/integration/*.sh, which may drive Node clients) and short fuzz smoke runs
# (tests/fuzz/fuzz_*.c). Every suite prints "ok N - ..." / "not ok N - ..." lines; this
# script counts them and ends with one line "N passed, N failed".
#
#   scripts/check.sh [--no-deps] [--no-san] [--serial] [--only PATTERN]
set -u
cd "$(dirname "$0")/.."
deps=1 san=1 only="" serial=0
while [ $# -gt 0 ]; do
    case "$1" in
    --no-deps) deps=0 ;;
    --no-san) san=0 ;;
    --serial) serial=1 ;;
    --only) only="$2"; shift ;;
    *) echo "check: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
[ "$deps" = 1 ] && { scripts/deps.sh || exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
logdir=build/test-logs
mkdir -p "$logdir"
passed=0 failed=0 broken=""

# run_suite NAME LOG COMMAND...: run one suite, count its ok / not ok lines. A suite that
# exits non-zero without a "not ok" line counts as one failure, so a crash is never lost.
run_suite() {
    local name=$1 log=$2
    shift 2
    local start=$SECONDS rc
    timeout --kill-after=10 "${SUITE_TIMEOUT:-600}" "$@" >"$log" 2>&1
    rc=$?
    local ok bad
    ok=$(grep -cE '^ok [0-9]+' "$log")
    bad=$(grep -cE '^not ok [0-9]+' "$log")
    if [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ]; then
        bad=1
        echo "not ok - $name exited with status $rc" >>"$log"
    fi
    passed=$((passed + ok))
    failed=$((failed + bad))
    # one write a suite: the rounds side by side never interleave within a block
    if [ "$bad" -gt 0 ]; then
        broken="$broken $name"
        printf '%s\n' "$(printf '  FAIL %-40s %4d ok %3d failed (%ds) log: %s\n' "$name" "$ok" "$bad" \
            $((SECONDS - start)) "$log"
            grep -E '^not ok|^#|ERROR|Sanitizer|runtime error' "$log" | head -40 | sed 's/^/       /')"
    else
        printf '  pass %-40s %4d ok (%ds)\n' "$name" "$ok" $((SECONDS - start))
    fi
}

round() {
    local tag=$1 build=$2
    shift 2
    echo "== $tag: building ($build)"
    if ! make -s -j"$jobs" "$@" all >"$logdir/build-$tag.log" 2>&1; then
        cat "$logdir/build-$tag.log" | tail -40
        echo "not ok - build ($tag)"
        failed=$((failed + 1))
        broken="$broken build-$tag"
        return
    fi
    export FLOOD="$PWD/$build/flood" FLOOD_BUILD="$PWD/$build" FLOOD_ROUND="$tag"
    for t in "$build"/tests/test_*; do
        [ -x "$t" ] || continue
        local n
        n=$(basename "$t")
        [ -n "$only" ] && [[ "$n" != *$only* ]] && continue
        run_suite "$tag/$n" "$logdir/$tag-$n.log" "$t"
    done
    for t in tests/integration/*.sh; do
        [ -f "$t" ] || continue
        [ "$(basename "$t")" = lib.sh ] && continue # helpers, not a suite
        local n
        n=$(basename "$t" .sh)
        [ -n "$only" ] && [[ "$n" != *$only* ]] && continue
        run_suite "$tag/$n" "$logdir/$tag-$n.log" bash "$t"
    done
}

# The C style (clang-format, .clang-format at the root) is one more suite.
if [ -z "$only" ] || [[ format == *$only* ]]; then
    run_suite "format" "$logdir/format.log" bash -c '
        if make -s format-check >/dev/null 2>&1; then
            echo "ok 1 - every C file is clang-formatted"
        else
            echo "not ok 1 - clang-format: run make format (make format-check lists the places)"
            exit 1
        fi'
fi

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
fuzz_smoke() {
    if [ -z "$only" ] || [[ fuzz == *$only* ]]; then
        if ls tests/fuzz/fuzz_*.c >/dev/null 2>&1; then
            run_suite "fuzz-smoke" "$logdir/fuzz-smoke.log" scripts/fuzz.sh "${FUZZ_SMOKE_SECONDS:-10}"
        fi
    fi
}
# lane NAME COMMAND...: run a round (or more) in a subshell beside the others; its counts
# come back through $logdir/lane-NAME.counts
lane() {
    local name=$1
    shift
    (
        passed=0 failed=0 broken=""
        "$@"
        echo "$passed $failed $broken" >"$logdir/lane-$name.counts"
    ) &
    lanes="$lanes $name:$!"
}
san_lane() {
    [ "$san" = 1 ] && round san build-san SANITIZE=address,undefined
    fuzz_smoke
}
if [ "$serial" = 1 ]; then
    round plain build
    san_lane
else
    lanes=""
    rm -f "$logdir"/lane-*.counts
    lane plain round plain build
    lane san san_lane
    for l in $lanes; do
        wait "${l#*:}"
        c="$logdir/lane-${l%%:*}.counts"
        if [ -s "$c" ]; then
            read -r p f b <"$c"
            passed=$((passed + p))
            failed=$((failed + f))
            broken="$broken $b"
        else
            failed=$((failed + 1))
            broken="$broken lane-${l%%:*}"
            echo "not ok - the ${l%%:*} lane ended without its counts"
        fi
    done
    broken=$(echo $broken)
    [ -n "$broken" ] && broken=" $broken"
fi
echo
[ -n "$broken" ] && echo "failed suites:$broken"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

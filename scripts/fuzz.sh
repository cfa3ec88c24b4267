#!/usr/bin/env bash
# scripts/fuzz.sh SECONDS: build every tests/fuzz/fuzz_*.c with clang's libFuzzer (ASan +
# UBSan) into build-fuzz/ and run each for SECONDS, seeded from fixtures/fuzz/<name>/ where
# <name> is the harness file name without "fuzz_" (fuzz_sign_cavage.c -> sign_cavage).
# Prints "ok N - fuzz <name> <runs> runs" or "not ok N - ...", ends with "N passed, N failed",
# exits non-zero when a harness crashed or did not build. Crash inputs stay in
# build-fuzz/artifacts/.
#   scripts/fuzz.sh 60          a minute each      FUZZ_ONLY=sign scripts/fuzz.sh 10
set -u
cd "$(dirname "$0")/.."
secs=${1:-60}
case "$secs" in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh SECONDS" >&2; exit 2 ;; esac
CC=${FUZZ_CC:-clang}
out=build-fuzz
PKGS="libmicrohttpd gnutls openssl jansson libcurl libevent libevent_pthreads libevent_openssl ldns hiredis"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CFLAGS="-std=c11 -O1 -g -D_GNU_SOURCE -DFLOOD_VERSION=\"fuzz\" -I. -pthread $SAN $(pkg-config --cflags $PKGS 2>/dev/null)"
LIBS="$(pkg-config --libs $PKGS 2>/dev/null) -lhttp_parser -pthread -lm"
mkdir -p "$out/obj" "$out/artifacts"
log="$out/build.log"
: >"$log"

if ! command -v "$CC" >/dev/null; then
    echo "not ok 1 - fuzz: no $CC (scripts/deps.sh installs clang)"
    exit 1
fi

# Every library source but main.c, compiled once (again only when the source is newer).
# A file that does not compile (a module being written) is left out; a harness that needs
# it then fails to link and is reported.
objs=()
for src in sign/*.c webfinger/*.c flood/*/*.c; do
    [ -f "$src" ] || continue
    [ "$src" = flood/main.c ] && continue
    obj="$out/obj/${src//\//_}"
    obj="${obj%.c}.o"
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find sign webfinger flood -name '*.h' -newer "$obj" 2>/dev/null | head -1)" ]; then
        # shellcheck disable=SC2086
        if ! $CC $CFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj" >>"$log" 2>&1; then
            echo "# fuzz: $src does not compile, left out (see $log)"
            rm -f "$obj"
            continue
        fi
    fi
    objs+=("$obj")
done
rm -f "$out/libfuzzlib.a"
ar rcs "$out/libfuzzlib.a" "${objs[@]}"

n=0 failed=0
for h in tests/fuzz/fuzz_*.c; do
    [ -f "$h" ] || continue
    base=$(basename "$h" .c)
    name=${base#fuzz_}
    [ -n "${FUZZ_ONLY:-}" ] && [[ "$name" != *"$FUZZ_ONLY"* ]] && continue
    n=$((n + 1))
    bin="$out/$base"
    # shellcheck disable=SC2086
    if ! $CC $CFLAGS -fsanitize=fuzzer "$h" "$out/libfuzzlib.a" $LIBS -o "$bin" >>"$log" 2>&1; then
        echo "not ok $n - fuzz $name: does not build (see $log)"
        failed=$((failed + 1))
        continue
    fi
    corpus=$(mktemp -d)
    for seeds in "fixtures/fuzz/$name" "fixtures/fuzz/$base"; do
        [ -d "$seeds" ] && cp -r "$seeds/." "$corpus/" 2>/dev/null
    done
    flog="$out/$name.log"
    timeout --kill-after=10 $((secs + 120)) "$bin" "$corpus" -max_total_time="$secs" \
        -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$name-" >"$flog" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$flog" | tail -1)
    [ -z "$runs" ] && runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$flog" | tail -1)
    rm -rf "$corpus"
    if [ "$rc" -eq 0 ] && ! grep -q 'ERROR: \(AddressSanitizer\|libFuzzer\|LeakSanitizer\)\|runtime error' "$flog"; then
        echo "ok $n - fuzz $name ${runs:-0} runs"
    else
        echo "not ok $n - fuzz $name crashed after ${runs:-?} runs (exit $rc, log $flog)"
        grep -m5 'ERROR\|runtime error\|SUMMARY' "$flog" | sed 's/^/#   /'
        failed=$((failed + 1))
    fi
done
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

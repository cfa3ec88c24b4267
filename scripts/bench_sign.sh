#!/usr/bin/env bash
# scripts/bench_sign.sh [SECONDS]: flood's signing throughput next to OpenSSL's own, on this
# machine, in the same run. `openssl speed -seconds S rsa2048` and `... ed25519` give the
# reference sign/s; build/tools/bench_sign signs a ~1 KB ActivityPub POST with sign_request
# (digest, signing string, signature, header formatting) on one thread. Both count signs
# per second of user CPU time, so a busy machine skews neither. Prints, per key type:
#   sign rsa2048: flood X/s, openssl Y/s, ratio Z
# plus the like-for-like ratio (20-byte message, as openssl speed signs).
set -u
cd "$(dirname "$0")/.."
secs=${1:-5}
BUILD=${BUILD:-build}
bin=$BUILD/tools/bench_sign
if ! make -s BUILD="$BUILD" "$bin" >/dev/null 2>&1; then
    # The full library may be mid-change; the tool needs sign/ alone.
    mkdir -p "$BUILD/tools"
    cc -std=c11 -O2 -D_GNU_SOURCE -I. tests/tools/bench_sign.c sign/*.c \
        $(pkg-config --cflags --libs openssl) -o "$bin" || { echo "bench_sign: cannot build $bin"; exit 1; }
fi

ossl() { # ossl ALG: OpenSSL's sign/s for rsa2048 or ed25519
    openssl speed -seconds "$secs" "$1" 2>/dev/null | awk -v alg="$1" '
        alg == "rsa2048" && $1 == "rsa" && $2 == "2048" { print $6 }
        alg == "ed25519" && /Ed25519/ { for (i = 1; i <= NF; i++) if ($i ~ /s$/ && $(i+1) ~ /s$/) { print $(i+2); exit } }'
}

ref_rsa=$(ossl rsa2048)
ref_ed=$(ossl ed25519)
out=$("$bin" "$secs") || { echo "bench_sign: $bin failed"; exit 1; }
echo "$out" | sed 's/^/# /'
get() { echo "$out" | awk -v k="$1" -v d="$2" '$1 == k && $2 == d { print $3; exit }'; }
status=0
for pair in "rsa2048:$ref_rsa" "ed25519:$ref_ed"; do
    alg=${pair%%:*}
    ref=${pair#*:}
    ours=$(get "$alg" cavage)
    raw=$(get "$alg" raw20)
    if [ -z "$ref" ] || [ -z "$ours" ]; then
        echo "sign $alg: no figure (openssl '$ref', flood '$ours')"
        status=1
        continue
    fi
    awk -v a="$alg" -v f="$ours" -v o="$ref" -v r="$raw" 'BEGIN {
        printf "sign %s: flood %.0f/s, openssl %.0f/s, ratio %.3f\n", a, f, o, f / o
        if (r != "") printf "sign %s (20-byte message, like for like): flood %.0f/s, openssl %.0f/s, ratio %.3f\n", a, r, o, r / o }'
done
exit $status

#!/usr/bin/env bash
# Install what flood's build, tests, demo and benchmarks need, when it is missing:
# Debian packages with apt-get (as root, or through sudo), and the npm packages of the
# Node test tools from their committed lockfiles. Idempotent; quiet when all is there.
set -eu
cd "$(dirname "$0")/.."

# One package a line: the build (libldns-dev: the name server's wire format), the tests
# (curl, clang's libFuzzer and sanitizer runtimes; chromium and fonts for the report test, prometheus for promtool, libxml2-utils
# for xmllint, which checks the JUnit file against its schema), the
# benchmarks (nginx-light, wrk, util-linux's taskset; strace for bench_http's system calls
# per request).
PKGS="gcc make pkg-config git clang libclang-rt-14-dev clang-format
libmicrohttpd-dev libgnutls28-dev libssl-dev openssl libjansson-dev libcurl4-openssl-dev libevent-dev
libhttp-parser-dev libldns-dev libhiredis-dev redis-server strace
curl ca-certificates nginx-light wrk util-linux procps iproute2 python3 python3-yaml jq
chromium fonts-liberation prometheus groff-base man-db libxml2-utils"

missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
        missing="$missing $p"
done
# Node 20 and npm come with these machines; Debian's own nodejs is the fallback.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"

if [ -n "$missing" ]; then
    echo "deps: installing$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq >/dev/null
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# nginx-light's package starts a system nginx on port 80; the benchmarks run their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet nginx 2>/dev/null; then
    systemctl stop nginx 2>/dev/null || true
fi

# npm packages of each Node tool, from its lockfile, reinstalled when the lockfile changed.
for lock in tests/*/package-lock.json; do
    [ -f "$lock" ] || continue
    dir=$(dirname "$lock")
    stamp="$dir/node_modules/.flood-lock"
    if [ ! -f "$stamp" ] || ! cmp -s "$lock" "$stamp"; then
        echo "deps: npm ci in $dir"
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
        cp "$lock" "$stamp"
    fi
done

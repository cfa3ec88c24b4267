#!/usr/bin/env bash
# make bench: every benchmark, each printing ratios against a reference measured in the
# same run on this machine (never an absolute figure compared with a constant).
set -u
cd "$(dirname "$0")/.."
status=0
for b in scripts/bench_start.sh scripts/bench_crowd.sh scripts/bench_sign.sh scripts/bench_run.sh; do
    [ -x "$b" ] || continue
    echo "== $b"
    "$b" || status=1
    echo
done
exit $status

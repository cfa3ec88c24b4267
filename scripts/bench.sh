#!/usr/bin/env bash
# make bench: every benchmark, each printing ratios against a reference measured in the
# same run on this machine (never an absolute figure compared with a constant).
set -u
cd "$(dirname "$0")/.."
status=0
for b in scripts/bench_start.sh scripts/bench_crowd.sh scripts/bench_scale.sh scripts/bench_sign.sh scripts/bench_run.sh scripts/bench_presign.sh scripts/bench_http.sh \
    scripts/bench_wrk2.sh scripts/bench_capacity.sh scripts/bench_dashboard.sh; do
    [ -x "$b" ] || continue
    echo "== $b"
    "$b" || status=1
    echo
done
# building bodies against signing them (ratios; the aim is building under a tenth of signing)
echo "== build/tools/bench_build"
make -s build/tools/bench_build >/dev/null 2>&1 && build/tools/bench_build 2 || status=1
echo
exit $status

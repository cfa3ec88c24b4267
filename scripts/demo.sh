#!/usr/bin/env bash
# scripts/demo.sh: what `make demo` runs once flood is built: a short load run against the
# reference target (about 100 activities a second for 20 s), printing the table row and
# where the results are. A step that fails is named and the exit status is non-zero.
#
#   scripts/demo.sh [more scripts/load.sh options]
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
FLOOD=${FLOOD:-$ROOT/build/flood}

if [ ! -f "$FLOOD" ] || [ ! -x "$FLOOD" ]; then
    echo "demo: no flood binary at $FLOOD: the build did not produce it (run make, or set FLOOD=PATH)" >&2
    exit 1
fi
if [ ! -d tests/target/node_modules/@fedify/fedify ]; then
    echo "demo: the reference target's npm packages are missing: run scripts/deps.sh" >&2
    exit 1
fi

echo "demo: a load run against the reference target (tests/target, Fedify): 10 personas each"
echo "demo: following 20 of flood's 200 crowd actors, then 100 activities a second for 20 s,"
echo "demo: with a home-timeline probe 4 times a second; then the wait for the queue to drain."
echo
scripts/load.sh --flood="$FLOOD" --rate=100 --seconds=20 --personas=10 --follows=20 --workers=2 \
    --drain-timeout=300 "$@"
rc=$?
echo
if [ "$rc" -eq 0 ]; then
    echo "demo: done. The row above is one real run; docs/LOAD.md explains each column."
else
    echo "demo: FAILED (load.sh exit status $rc): the step named above did not complete." >&2
fi
exit "$rc"

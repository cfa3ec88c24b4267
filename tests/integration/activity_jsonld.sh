#!/usr/bin/env bash
# Every kind of activity flood sends expands under JSON-LD (the jsonld package, offline:
# only the ActivityStreams and security contexts Fedify ships are served) with every term
# defined and kept. build/tools/dump_activities prints N documents of each kind, from the
# library's text writer; tests/interop/jsonld.mjs expands them and passes its "ok N - ..."
# lines through.
#   bash tests/integration/activity_jsonld.sh [N]
set -u
cd "$(dirname "$0")/../.."
DUMP=${DUMP:-${FLOOD_BUILD:-build}/tools/dump_activities}

if [ ! -x "$DUMP" ]; then
    echo "not ok 1 - activity_jsonld: no $DUMP (make all)"
    exit 1
fi
if [ ! -d tests/interop/node_modules/jsonld ]; then
    echo "not ok 1 - activity_jsonld: tests/interop has no jsonld (run scripts/deps.sh)"
    exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$DUMP" "${1:-4}" >"$out"; then
    echo "not ok 1 - activity_jsonld: $DUMP failed"
    exit 1
fi
# node stops by itself; the timeout only bounds a hang.
timeout --kill-after=5 120 node tests/interop/jsonld.mjs <"$out"

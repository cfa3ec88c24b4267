#!/usr/bin/env bash
# HTTP signatures between flood and independent implementations from the npm registry
# (joyent http-signature, Fedify 1.5, http-message-signatures), both directions, draft-cavage
# and RFC 9421, RSA and Ed25519, each with its altered twins. The checks live in
# tests/interop/sign.mjs; this passes its "ok N - ..." lines through.
#   FLOOD=path/to/flood bash tests/integration/interop_sign.sh
set -u
cd "$(dirname "$0")/../.."
FLOOD=${FLOOD:-build/flood}
case "$FLOOD" in /*) ;; *) FLOOD="$PWD/$FLOOD" ;; esac

if [ ! -x "$FLOOD" ]; then
    echo "not ok 1 - interop_sign: no flood binary at $FLOOD"
    exit 1
fi
if [ ! -d tests/interop/node_modules/@fedify/fedify ]; then
    echo "not ok 1 - interop_sign: tests/interop has no node_modules (run scripts/deps.sh)"
    exit 1
fi
# node stops by itself; the timeout only bounds a hang.
timeout --kill-after=5 120 node tests/interop/sign.mjs --flood "$FLOOD"

#!/usr/bin/env bash
# scripts/ci_example.sh [WORKDIR]: the workflow of docs/CI.md, run against the reference
# target (tests/target, Fedify) so that the example is known to work. The lines between the
# ">>> docs/CI.md" and "<<< docs/CI.md" marks are the documented commands, word for word:
# tests/integration/ci_example.sh runs this script (part of make check) and fails when
# docs/CI.md lacks one of them. Only what docs/CI.md leaves to the server project differs:
# here the server under test is the reference target, started on loopback on port 0 (its
# port read back), reaching the crowd through its --resolve-crowd instead of /etc/hosts.
#
# WORKDIR (default: a new temporary folder) receives out/: card.json, junit.xml and
# run/ (run.json, report.html, ...). Exit 0 when flood check and flood run --expect pass.
set -euo pipefail
FLOOD_SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-$(mktemp -d)}
mkdir -p "$WORK"
cd "$WORK"
echo "ci_example: in $WORK"

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# What the workflow's env: sets (docs/CI.md), for the reference target.
FLOOD_PREFIX=$WORK/prefix
GITHUB_PATH=$WORK/github_path # as GitHub Actions: each line joins PATH in later steps
CROWD_PORT=$(free_port)
TARGET_NAME=reference-target
TOKEN_FILE=$WORK/ci.token

# The server under test: the reference target, its crowd hosts sent to the crowd's port.
node "$FLOOD_SRC/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
    --resolve-crowd "127.0.0.1:$CROWD_PORT" >"$WORK/target.out" 2>"$WORK/target.err" &
TARGET_PID=$!
trap 'kill $TARGET_PID 2>/dev/null; wait $TARGET_PID 2>/dev/null || true' EXIT
TARGET_PORT=""
for _ in $(seq 300); do
    # the redirect is opened in the child: the file may not be there yet (set -e)
    TARGET_PORT=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$WORK/target.out" \
        2>/dev/null || true)
    [ -n "$TARGET_PORT" ] && break
    sleep 0.1
done
[ -n "$TARGET_PORT" ] || { echo "ci_example: the target did not start" >&2; exit 1; }
# the persona and its API token (each server has its own way: docs/CI.md)
curl -sf -X POST "http://127.0.0.1:$TARGET_PORT/admin/accounts" \
    -H 'Content-Type: application/json' -d '{"username":"alice"}' | jq -r .token >"$TOKEN_FILE"
PERSONA=http://target.test:$TARGET_PORT/users/alice
FLOOD_NET="--resolve target.test:$TARGET_PORT:127.0.0.1"

# >>> docs/CI.md
make -C "$FLOOD_SRC" -j2
make -C "$FLOOD_SRC" install PREFIX="$FLOOD_PREFIX"
echo "$FLOOD_PREFIX/bin" >>"$GITHUB_PATH"
# <<< docs/CI.md
PATH="$(tail -1 "$GITHUB_PATH"):$PATH"

# >>> docs/CI.md
mkdir -p out
flood check --persona "$PERSONA" --token-file "$TOKEN_FILE" --name "$TARGET_NAME" $FLOOD_NET \
    --listen "127.0.0.1:$CROWD_PORT" --public-port "$CROWD_PORT" \
    --json --junit out/junit.xml >out/card.json
flood run --persona "$PERSONA" $FLOOD_NET \
    --listen "127.0.0.1:$CROWD_PORT" --public-port "$CROWD_PORT" \
    --rate 20 --duration 5s --out out/run --quiet \
    --expect 'p99<5s' --expect '2xx>=99%' --expect 'shed==0'
# <<< docs/CI.md
echo "ci_example: passed; artifacts in $WORK/out"

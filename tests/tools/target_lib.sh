# tests/tools/target_lib.sh: the preamble of the integration tests that drive the reference
# target (tests/target): sourced from the repository root. It defines ok/bad/check (TAP
# lines, counted in n and fail; check returns its verdict, so `check ... || diagnose`),
# checks the tools, and installs the target's npm packages from its lockfile when they are
# missing.
FLOOD=${FLOOD:-build/flood}
TARGET_DIR=tests/target
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
check() { if eval "$1"; then ok "$2"; else bad "$2"; return 1; fi; }

. tests/tools/ports.sh # pick_port

for tool in node curl jq; do
    command -v "$tool" >/dev/null || { echo "not ok 1 - $tool is not installed"; exit 1; }
done
if [ ! -d "$TARGET_DIR/node_modules/@fedify/fedify" ]; then
    (cd "$TARGET_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        { echo "not ok 1 - npm ci in tests/target"; exit 1; }
fi

#!/usr/bin/env bash
# `make install PREFIX=P` puts the binary, the man page and the presets where an installed
# flood looks for them (P/share/flood/presets): from a temporary prefix, run outside the
# checkout with FLOOD_PRESETS unset, `flood presets` lists every preset of fixtures/presets
# and `flood run --preset NAME` expands one.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

BUILD_DIR=${FLOOD_BUILD:-$ROOT/build}
PREFIX_DIR=$T_TMP/prefix
# -o: the binary is taken as built (the suite tests what it was given, never rebuilds)
make -s -C "$ROOT" install PREFIX="$PREFIX_DIR" BUILD="$BUILD_DIR" -o "$BUILD_DIR/flood" \
    >"$T_TMP/install.log" 2>&1
check $? "make install PREFIX=\$TMP exits 0" || sed 's/^/#   /' "$T_TMP/install.log"
[ -x "$PREFIX_DIR/bin/flood" ] && [ -f "$PREFIX_DIR/share/man/man1/flood.1" ]
check $? "the binary and the man page are installed"
n_src=$(find "$ROOT/fixtures/presets" -maxdepth 1 -type f | wc -l)
n_dst=$(find "$PREFIX_DIR/share/flood/presets" -maxdepth 1 -type f 2>/dev/null | wc -l)
expect_eq "$n_dst" "$n_src" "every preset of fixtures/presets is in PREFIX/share/flood/presets"

# outside the checkout: a folder of its own, no FLOOD_PRESETS, no ./fixtures
mkdir -p "$T_TMP/elsewhere"
cd "$T_TMP/elsewhere" || exit 1
env -u FLOOD_PRESETS "$PREFIX_DIR/bin/flood" presets >"$T_TMP/list" 2>&1
check $? "the installed flood presets exits 0" || sed 's/^/#   /' "$T_TMP/list"
for f in "$ROOT"/fixtures/presets/*; do
    p=$(basename "$f")
    grep -Eq "^$p +[a-z]" "$T_TMP/list"
    check $? "it lists $p"
done
grep -q "none found" "$T_TMP/list"
[ $? -ne 0 ]
check $? "and never says none found"
env -u FLOOD_PRESETS "$PREFIX_DIR/bin/flood" presets --show origin-limit | grep -q '^--'
check $? "flood presets --show NAME prints the installed file"

# --preset NAME from the installed copy, against the sink
start_sink --status 202
env -u FLOOD_PRESETS "$PREFIX_DIR/bin/flood" run --listen 127.0.0.1:0 --state "$TEST_STATE" \
    --instances 2 --actors 3 --key-pool 1 --out "$T_TMP/run" \
    --inbox "http://127.0.0.1:$SINK_PORT/inbox" --preset origin-limit --rate 20 --duration 1s \
    --sign none --quiet >"$T_TMP/run.out" 2>"$T_TMP/run.err"
rc=$?
stop_sink
check "$rc" "the installed flood run --preset origin-limit exits 0" ||
    sed 's/^/#   /' "$T_TMP/run.err" | head -10
expect_eq "$(jq -r '.preset.name' "$T_TMP/run/run.json" 2>/dev/null)" origin-limit \
    "run.json names the preset it expanded"
expect_eq "$(jq -r '.totals.sent' "$T_TMP/run/run.json" 2>/dev/null)" 20 \
    "options after the preset win (20/s for 1 s)"
cd "$ROOT" || exit 1
done_testing

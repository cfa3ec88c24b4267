#!/usr/bin/env bash
# The architecture's rules, checked and shown to bite: the include order
# (scripts/deps_check.sh: sign/ <- webfinger/ <- flood/'s rooms in their order) holds on
# the tree, and a planted wrong-way include in a copy is named by FILE:LINE; no two files
# call each other (scripts/calls_check.py over the build's objects), and a planted pair
# that does is named; sign/ builds and passes its unit tests alone, from a copy holding
# sign/ and nothing of flood/ or webfinger/; webfinger/ with sign/ alone.
. "$(dirname "$0")/lib.sh"
BUILD=${FLOOD_BUILD:-$ROOT/build}

out=$("$ROOT/scripts/deps_check.sh" "$ROOT" 2>&1)
check $? "the include order holds on the tree ($out)"

# The map names every file of the rooms (cmd_*.c stand under one entry), so it cannot drift
# from the tree.
unnamed=""
for f in "$ROOT"/flood/*/*.c; do
    b=$(basename "$f")
    case "$b" in cmd_*.c) continue ;; esac
    grep -q "\`$b\`" "$ROOT/docs/ARCHITECTURE.md" || unnamed="$unnamed ${f#"$ROOT"/}"
done
[ -z "$unnamed" ]
check $? "docs/ARCHITECTURE.md names every file of flood/'s rooms${unnamed:+ (not:$unnamed)}"
rooms=$(sed -n 's/^ROOMS="\(.*\)"$/\1/p' "$ROOT/scripts/deps_check.sh")
missing=""
for r in $rooms; do
    grep -q "^| \`$r/\` |" "$ROOT/docs/ARCHITECTURE.md" || missing="$missing $r"
done
[ -n "$rooms" ] && [ -z "$missing" ]
check $? "every room of the checked order has its row in the map${missing:+ (not:$missing)}"

copy=$T_TMP/tree
mkdir -p "$copy"
cp -r "$ROOT/sign" "$ROOT/webfinger" "$ROOT/flood" "$copy/"
sed -i '0,/^#include/s||#include "flood/cmd/cmd.h"\n#include|' "$copy/flood/crowd/fault.c"
sed -i '0,/^#include/s||#include "flood/crowd/crowd.h"\n#include|' "$copy/sign/key.c"
"$ROOT/scripts/deps_check.sh" "$copy" >"$T_TMP/planted.out" 2>&1
rc=$?
sed 's/^/#   /' "$T_TMP/planted.out"
[ "$rc" -eq 1 ]
check $? "a planted wrong-way include fails the check (exit $rc)"
grep -Eq '^flood/crowd/fault.c:[0-9]+: flood/crowd includes "flood/cmd/cmd.h"' "$T_TMP/planted.out"
check $? "it names the crowd file including a command header, with its line"
grep -Eq '^sign/key.c:[0-9]+: sign includes "flood/crowd/crowd.h"' "$T_TMP/planted.out"
check $? "it names sign/ reaching into flood/"

python3 "$ROOT/scripts/calls_check.py" "$BUILD" >"$T_TMP/calls.out" 2>&1
check $? "no two files call each other ($(tail -1 "$T_TMP/calls.out"))" || sed 's/^/#   /' "$T_TMP/calls.out"

# A planted pair of objects that call each other.
fake=$T_TMP/fake
mkdir -p "$fake/obj/flood/x"
printf 'int b(void);\nint a(void) { return b(); }\n' >"$T_TMP/a.c"
printf 'int a(void);\nint b(void) { return a() + 1; }\n' >"$T_TMP/b.c"
cc -c "$T_TMP/a.c" -o "$fake/obj/flood/x/a.o" && cc -c "$T_TMP/b.c" -o "$fake/obj/flood/x/b.o"
python3 "$ROOT/scripts/calls_check.py" "$fake" >"$T_TMP/calls2.out" 2>&1
rc=$?
sed 's/^/#   /' "$T_TMP/calls2.out"
[ "$rc" -eq 1 ] && grep -q 'flood/x/a.c -> flood/x/b.c: b' "$T_TMP/calls2.out"
check $? "a planted pair of files calling each other is named, with the symbol"

# sign/ alone: its sources and unit tests compile and pass with no flood/ or webfinger/.
alone=$T_TMP/alone
mkdir -p "$alone/tests/unit"
cp -r "$ROOT/sign" "$ROOT/fixtures" "$alone/"
cp "$ROOT/tests/check.h" "$alone/tests/"
cp "$ROOT"/tests/unit/test_sign_*.c "$alone/tests/unit/"
ok=0
for t in "$alone"/tests/unit/test_sign_*.c; do
    n=$(basename "$t" .c)
    if ! (cd "$alone" && cc -std=c11 -D_GNU_SOURCE -I. -o "$n" "$t" sign/*.c \
        $(pkg-config --cflags --libs openssl) >"$T_TMP/$n.build" 2>&1); then
        sed 's/^/#   /' "$T_TMP/$n.build" | head -20
        ok=1
        continue
    fi
    (cd "$alone" && "./$n" >"$T_TMP/$n.log" 2>&1) || { ok=1; grep '^not ok' "$T_TMP/$n.log" | head; }
done
check "$ok" "sign/ builds and passes its unit tests from a tree with no flood/ or webfinger/"

# webfinger/ with sign/ alone.
cp -r "$ROOT/webfinger" "$alone/"
cp "$ROOT"/tests/unit/test_wf_*.c "$alone/tests/unit/"
# test_wf_png decodes its images with an independent checker (Python), not with flood
mkdir -p "$alone/tests/tools"
cp "$ROOT/tests/tools/png_check.py" "$alone/tests/tools/"
ok=0
for t in "$alone"/tests/unit/test_wf_*.c; do
    n=$(basename "$t" .c)
    if ! (cd "$alone" && cc -std=c11 -D_GNU_SOURCE -I. -o "$n" "$t" webfinger/*.c sign/*.c \
        $(pkg-config --cflags --libs openssl jansson) -lm >"$T_TMP/$n.build" 2>&1); then
        sed 's/^/#   /' "$T_TMP/$n.build" | head -20
        ok=1
        continue
    fi
    (cd "$alone" && "./$n" >"$T_TMP/$n.log" 2>&1) || { ok=1; grep '^not ok' "$T_TMP/$n.log" | head; }
done
check "$ok" "webfinger/ builds and passes its unit tests with sign/ alone"
done_testing

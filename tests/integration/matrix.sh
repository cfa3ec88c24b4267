#!/usr/bin/env bash
# `flood matrix` and `flood check --junit`: the reference target (tests/target, Fedify) is
# checked strict and with --lax (signature verification off); the matrix of the two cards
# shows the five refusal rows differing (strict pass, lax fail) and every other row
# agreeing, in Markdown and in a self-contained HTML page (no script, nothing loaded). The
# JUnit file of each check validates against the JUnit schema (fixtures/junit/junit.xsd,
# with xmllint) and its counts are the card's; a doctored file is refused by the same
# check. Bad inputs: a missing file, a file that is not JSON and JSON that is not a card
# exit 1 naming the file; no card at all or an unknown option exit 2.
set -u
cd "$(dirname "$0")/../.."
. tests/tools/target_lib.sh
XSD=fixtures/junit/junit.xsd
command -v xmllint >/dev/null || { echo "not ok 1 - xmllint is not installed (libxml2-utils)"; exit 1; }

dir=$(mktemp -d)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    [ -n "${KEEP:-}" ] && cp -r "$dir" "$KEEP"; rm -rf "$dir"
}
trap cleanup EXIT

# --- bad inputs need no target ---
echo '{"steps": 3}' >"$dir/notcard.json"
echo 'not json' >"$dir/notjson.json"
"$FLOOD" matrix "$dir/missing.json" >/dev/null 2>"$dir/e1"
rc=$?
check '[ $rc -eq 1 ] && grep -q "^flood: matrix: .*missing.json.: cannot read: No such file" "$dir/e1"' \
    "a missing card: exit 1 naming it ($rc: $(cat "$dir/e1"))"
"$FLOOD" matrix "$dir/notjson.json" >/dev/null 2>"$dir/e2"
rc=$?
check '[ $rc -eq 1 ] && grep -q "notjson.json.: not JSON" "$dir/e2"' "not JSON: exit 1 ($rc)"
"$FLOOD" matrix "$dir/notcard.json" >/dev/null 2>"$dir/e3"
rc=$?
check '[ $rc -eq 1 ] && grep -q "notcard.json.: not a flood check card: no \"steps\" array" "$dir/e3"' \
    "JSON that is not a card: exit 1, refused as such ($rc: $(cat "$dir/e3"))"
"$FLOOD" matrix >/dev/null 2>"$dir/e4"
rc=$?
check '[ $rc -eq 2 ] && grep -q "at least one CARD" "$dir/e4"' "no card: exit 2 ($rc)"
"$FLOOD" matrix --bogus x.json >/dev/null 2>"$dir/e5"
rc=$?
check '[ $rc -eq 2 ] && grep -q "unknown option .--bogus." "$dir/e5"' "an unknown option: exit 2 ($rc)"

# --- the reference target, strict and --lax (as tests/integration/check.sh starts it) ---
start_target() { # NAME CROWD_PORT [--lax]
    local name=$1 fport=$2
    shift 2
    timeout 120 node "$TARGET_DIR/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$fport" "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
    pids="$pids $!"
}
wait_target() { # NAME: prints the port
    for _ in $(seq 300); do
        local p
        p=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/$1.out")
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}
fs=$(pick_port) && fl=$(pick_port) || { bad "free ports"; exit 1; }
start_target strict "$fs"
start_target lax "$fl" --lax
ts=$(wait_target strict) && tl=$(wait_target lax)
if [ -z "${ts:-}" ] || [ -z "${tl:-}" ]; then
    bad "the targets start"
    tail -5 "$dir"/*.err
    exit 1
fi
for t in "$ts" "$tl"; do
    curl -s -X POST "http://127.0.0.1:$t/admin/accounts" -H 'Content-Type: application/json' \
        -d '{"username":"alice"}' | jq -r .token >"$dir/token.$t"
done
check '[ -s "$dir/token.$ts" ] && [ -s "$dir/token.$tl" ]' "targets on $ts (strict) and $tl (--lax), with a token each"

run_check() { # NAME CROWD_PORT TARGET_PORT: $dir/NAME.json, $dir/NAME.xml
    local name=$1 fport=$2 tport=$3
    timeout 90 "$FLOOD" check --listen "127.0.0.1:$fport" --state "$dir/state.$name" \
        --persona acct:alice@target.test --target-http --settle 1 --name "$name" \
        --connect-to "target.test:80:127.0.0.1:$tport" --resolve "target.test:$tport:127.0.0.1" \
        --token-file "$dir/token.$tport" --json --junit "$dir/$name.xml" \
        >"$dir/$name.json" 2>"$dir/$name.json.err"
    echo $? >"$dir/$name.rc"
}
# the two checks are independent: run them side by side
run_check strict "$fs" "$ts" &
p1=$!
run_check lax "$fl" "$tl" &
p2=$!
wait "$p1" "$p2"
check '[ "$(cat "$dir/strict.rc")" = 0 ] && [ "$(cat "$dir/lax.rc")" = 1 ]' \
    "flood check: strict exit 0, lax exit 1 ($(cat "$dir/strict.rc") $(cat "$dir/lax.rc"))"
check 'jq -e ".target == \"strict\"" "$dir/strict.json" >/dev/null' "--name is the card's target"

# --- the matrix ---
"$FLOOD" matrix --html "$dir/m.html" "$dir/strict.json" "$dir/lax.json" >"$dir/m.md" 2>"$dir/m.err"
rc=$?
check '[ $rc -eq 0 ] && [ -s "$dir/m.md" ] && [ -s "$dir/m.html" ]' "flood matrix writes Markdown and HTML ($rc)"
check 'grep -q "^| step | strict | lax |$" "$dir/m.md"' "targets across: | step | strict | lax |"
nsteps=$(jq '.steps | length' "$dir/strict.json")
nrows=$(grep -c '^| [^*-]' "$dir/m.md")
check '[ "$nrows" -eq $((nsteps + 1)) ]' "one row a step ($nsteps) under the header ($nrows rows)"
refusals="unsigned bad-key stale-date digest-mismatch foreign-keyid"
for s in $refusals; do
    check 'grep -q "^| ≠ send $s expect refused | pass | \*\*fail\*\* |$" "$dir/m.md"' \
        "the '$s' row differs: strict pass, lax fail"
done
# and the RFC 9421 dialects, which the strict target does not verify (unsupported) and the
# lax one takes unverified (pass); every other row agrees
others=$(grep '^| ≠ ' "$dir/m.md" | grep -v 'expect refused' | cut -d'|' -f2 | sed 's/^ ≠ //; s/ *$//' | sort | tr '\n' ,)
check '[ "$others" = "send dialect rfc9421-ed25519,send dialect rfc9421-rsa," ]' \
    "besides them only the RFC 9421 dialect rows differ (${others%,})"
first=$(jq -r '.steps[0].step' "$dir/strict.json")
check 'sed -n "/^|---/{n;p;q}" "$dir/m.md" | grep -qF "| $first |"' "rows in scenario order ($first first)"
s_sum=$(jq -r '.summary | "\(.pass) pass, \(.fail) fail, \(.skip) skip, \(.deferred) deferred, \(.unsupported) unsupported"' "$dir/strict.json")
l_sum=$(jq -r '.summary | "\(.pass) pass, \(.fail) fail, \(.skip) skip, \(.deferred) deferred, \(.unsupported) unsupported"' "$dir/lax.json")
check 'grep -qF "| **summary** | $s_sum | $l_sum |" "$dir/m.md"' "the summary row: $s_sum | $l_sum"
check 'grep -q "send unsigned expect refused, lax: fail: expected" "$dir/m.md"' \
    "the details name what was expected for a failed cell"

# the page: coloured cells, details on hover, nothing to run and nothing to load
h="$dir/m.html"
check '[ "$(grep -c "<td class=\"fail\" title=\"expected " "$h")" -eq 5 ]' "five red cells with a title of what was expected"
check 'grep -q "<tr class=\"differs\"><td class=\"k\">send bad-key expect refused</td><td class=\"pass\"" "$h"' \
    "a differing row is marked"
check '! grep -qiE "<script|javascript:|src=|href=\"(https?:)?//|@import|url\(" "$h"' \
    "no script and no external reference in the page"
check 'xmllint --html --noout "$h" 2>/dev/null' "the page parses as HTML"

# two cards of one target are told apart by file name; --md writes a file
cp "$dir/strict.json" "$dir/again.json"
"$FLOOD" matrix --md "$dir/m2.md" "$dir/strict.json" "$dir/again.json" >"$dir/m2.out" 2>&1
rc=$?
check '[ $rc -eq 0 ] && [ ! -s "$dir/m2.out" ] && grep -q "^| step | strict (strict.json) | strict (again.json) |$" "$dir/m2.md"' \
    "--md FILE; one target twice is told apart by file ($rc)"

# --- JUnit ---
for name in strict lax; do
    x="$dir/$name.xml"
    xmllint --noout --schema "$XSD" "$x" 2>"$dir/$name.xsd.err"
    rc=$?
    check '[ $rc -eq 0 ]' "$name: the JUnit file validates against the schema"
    sed 's/^/#   /' "$dir/$name.xsd.err" | grep -v ' validates$' | head -5
    tests=$(xmllint --xpath 'string(/testsuites/testsuite/@tests)' "$x")
    failures=$(xmllint --xpath 'string(/testsuites/testsuite/@failures)' "$x")
    skipped=$(xmllint --xpath 'string(/testsuites/testsuite/@skipped)' "$x")
    cases=$(xmllint --xpath 'count(//testcase)' "$x")
    nfail=$(xmllint --xpath 'count(//testcase/failure)' "$x")
    nskip=$(xmllint --xpath 'count(//testcase/skipped)' "$x")
    want=$(jq -r '"\(.steps | length) \(.summary.fail) \(.summary.skip + .summary.unsupported)"' "$dir/$name.json")
    check '[ "$tests $failures $skipped" = "$want" ] && [ "$cases $nfail $nskip" = "$want" ]' \
        "$name: tests/failures/skipped are the card's ($tests $failures $skipped; card $want)"
    check '[ "$(xmllint --xpath "string(/testsuites/testsuite/@name)" "$x")" = "$name" ]' \
        "$name: the suite is named after the target"
done
check 'xmllint --xpath "//testcase[@name=\"send unsigned expect refused\"]/failure/@message" "$dir/lax.xml" 2>/dev/null | grep -q "expected "' \
    "lax: a refusal step is a <failure> with what was expected"
check '[ "$(xmllint --xpath "count(//testcase/skipped[starts-with(@message, \"unsupported: \")])" "$dir/strict.xml")" = \
    "$(jq .summary.unsupported "$dir/strict.json")" ]' "unsupported dialects are <skipped> saying so"
check '[ "$(xmllint --xpath "string(//property[@name=\"flood.version\"]/@value)" "$dir/strict.xml")" = "$(cat VERSION)" ]' \
    "the flood version is a property"
# the negative twin: a doctored file is refused by the same check
sed 's/<failure /<failed /; s|</failure>|</failed>|' "$dir/lax.xml" >"$dir/bad1.xml"
check '! xmllint --noout --schema "$XSD" "$dir/bad1.xml" 2>/dev/null' "a doctored file (<failed>) is refused by the schema"
sed '0,/classname="flood.check" time="[0-9.]*"/s//classname="flood.check" time="soon"/' "$dir/strict.xml" >"$dir/bad2.xml"
check '! xmllint --noout --schema "$XSD" "$dir/bad2.xml" 2>/dev/null' "a doctored file (time=\"soon\") is refused"
sed 's/<testsuite name="[^"]*"/<testsuite/' "$dir/strict.xml" >"$dir/bad3.xml"
check '! xmllint --noout --schema "$XSD" "$dir/bad3.xml" 2>/dev/null' "a doctored file (a suite without a name) is refused"

# --junit to a place that cannot be written: the check fails, saying so (the refusals only)
timeout 60 "$FLOOD" check --listen "127.0.0.1:$fs" --state "$dir/state.strict" \
    --persona acct:alice@target.test --target-http --settle 1 \
    --connect-to "target.test:80:127.0.0.1:$ts" --resolve "target.test:$ts:127.0.0.1" \
    --scenario fixtures/scenarios/refusals.flood --junit "$dir/no/such/dir/j.xml" \
    >"$dir/j.out" 2>"$dir/j.err"
rc=$?
check '[ $rc -eq 1 ] && grep -q "^flood: check: --junit: cannot write .*j.xml.tmp" "$dir/j.err" && grep -q "^5 steps: 5 pass" "$dir/j.out"' \
    "an unwritable --junit FILE: the report still printed, exit 1 with why ($rc: $(head -1 "$dir/j.err"))"

[ "$fail" -eq 0 ] || { for f in "$dir"/*.json.err; do echo "# $f:"; tail -3 "$f" | sed 's/^/#   /'; done; }
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# docs/CI.md's workflow is what this suite runs: scripts/ci_example.sh performs its commands
# against the reference target (flood built and installed into a prefix with the README's
# make commands, then flood check --json --junit and a short flood run --expect) and this
# suite checks the artifacts the workflow uploads: the card, junit.xml (valid against the
# JUnit schema), run.json with every expectation met, and report.html. Then every command
# line between the script's ">>> docs/CI.md" marks must appear in docs/CI.md word for word,
# so the two cannot drift; a copy of the doc missing one of them is caught.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
for tool in node jq curl python3 xmllint; do
    command -v "$tool" >/dev/null 2>&1 || { check 1 "$tool is installed"; done_testing; exit 1; }
done

# The documented lines of the script, trimmed: one a line.
documented() {
    awk '/^# >>> docs\/CI.md/ {on = 1; next} /^# <<< docs\/CI.md/ {on = 0} on' \
        scripts/ci_example.sh | sed 's/^ *//; s/ *$//' | grep -v '^$'
}
# missing DOC: the documented lines DOC lacks, one a line
missing() {
    local line
    documented | while IFS= read -r line; do
        grep -qF -- "$line" "$1" || echo "$line"
    done
}

n_doc=$(documented | wc -l)
check "$([ "$n_doc" -ge 8 ] && echo 0 || echo 1)" "the script marks its documented lines ($n_doc)"
gone=$(missing docs/CI.md)
check "$([ -z "$gone" ] && echo 0 || echo 1)" "docs/CI.md names every documented command of the script"
[ -n "$gone" ] && echo "$gone" | sed 's/^/#   not in docs\/CI.md: /'
grep -vF -- "--expect 'shed==0'" docs/CI.md >"$T_TMP/CI.md"
gone=$(missing "$T_TMP/CI.md")
check "$(echo "$gone" | grep -qF -- "--expect 'shed==0'" && echo 0 || echo 1)" \
    "a doc missing a documented line is caught"

# The sanitizer round installs (and so runs) its own build.
[ "${FLOOD_ROUND:-}" = san ] && export SANITIZE=address,undefined
work=$T_TMP/ci
timeout 300 scripts/ci_example.sh "$work" >"$T_TMP/ci.log" 2>&1
rc=$?
check "$rc" "scripts/ci_example.sh: the documented workflow passes against the reference target"
[ "$rc" -eq 0 ] || tail -20 "$T_TMP/ci.log" | sed 's/^/#   /'
out=$work/out
"$work/prefix/bin/flood" --version >"$T_TMP/v" 2>&1
check "$([ "$(cat "$T_TMP/v")" = "flood $(cat VERSION)" ] && echo 0 || echo 1)" \
    "flood installed from source into the prefix ($(cat "$T_TMP/v"))"
jq -e '.ok == true and .target == "reference-target" and (.steps | length) > 20' \
    "$out/card.json" >/dev/null 2>&1
check $? "the card: every step passed or stated why, named after the target"
xmllint --noout --schema fixtures/junit/junit.xsd "$out/junit.xml" >/dev/null 2>&1
check $? "junit.xml validates against the JUnit schema"
expect_eq "$(xmllint --xpath 'string(/testsuites/testsuite/@failures)' "$out/junit.xml" 2>/dev/null)" 0 \
    "junit.xml: no failure"
expect_eq "$(jq -r '[.expectations[] | select(.pass)] | length' "$out/run/run.json" 2>/dev/null)" 3 \
    "run.json: the three expectations met"
expect_eq "$(jq -r .totals.sent "$out/run/run.json" 2>/dev/null)" 100 "run.json: 100 sent (20/s x 5 s)"
grep -q '<h2 id="expectations">' "$out/run/report.html" 2>/dev/null
check $? "report.html written, with the expectations"

done_testing

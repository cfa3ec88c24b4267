#!/usr/bin/env bash
# `flood compare RUN_DIR...` on two real runs against tests/tools/sink: every figure of the
# Markdown table equals the one jq reads from that run's run.json; --html writes an overlay
# page; a doctored run.json shows through (the table reads run.json, nothing else); errors.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 300 --duration 2s --sign none \
    --mix create=60,follow=40
stop_sink
check "$RUN_RC" "run A (202 at 300/s) exits 0" || show_run
A=$RUN_DIR
start_sink --status 429 --retry-after 5
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 150 --duration 2s --sign none --mix create=1
stop_sink
check "$RUN_RC" "run B (429 at 150/s) exits 0" || show_run
B=$RUN_DIR

"$FLOOD" compare "$A" "$B" >"$T_TMP/table.md" 2>"$T_TMP/compare.err"
check $? "flood compare A B exits 0" || sed 's/^/#   /' "$T_TMP/compare.err"
sed 's/^/#   /' "$T_TMP/table.md"
expect_eq "$(wc -l <"$T_TMP/table.md")" 4 "a header, a rule and one row a run"
head -1 "$T_TMP/table.md" | grep -q '^| run | rate | duration s | scheduled | sent | shed | ok | 429 | errors | unfinished | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | service p50 ms | service p99 ms | follow-to-accept p50 ms | follow-to-accept p99 ms | generator saturated |$'
check $? "the header names every column"
sed -n 2p "$T_TMP/table.md" | grep -Eq '^(\|---)+\|$'
check $? "the second line is the Markdown rule"

# cell FILE ROW COLUMN (1-based, the run folder is column 1)
cell() {
    awk -F'|' -v r="$2" -v c="$3" 'NR == r + 2 {v = $(c + 1); gsub(/^ +| +$/, "", v); print v}' "$1"
}
# jq expressions for columns 3.., in table order (column 2, the rate, is checked apart)
COLS=(
    '.config.scheduled_duration_s'
    '.totals.scheduled' '.totals.sent' '.totals.shed'
    '.totals.outcomes | .["200"] + .["202"] + .["2xx_other"]'
    '.totals.outcomes["429"]'
    '.totals.outcomes.timeout + .totals.outcomes.transport'
    '.totals.unfinished'
    '.totals.latency_ms.p50' '.totals.latency_ms.p90' '.totals.latency_ms.p99'
    '.totals.latency_ms["p99.9"]' '.totals.latency_ms.max'
    '.totals.service_ms.p50' '.totals.service_ms.p99'
)
NAMES=(duration scheduled sent shed ok 429 errors unfinished "p50" "p90" "p99" "p99.9" "max" "service p50" "service p99")
row=0
for dir in "$A" "$B"; do
    row=$((row + 1))
    expect_eq "$(cell "$T_TMP/table.md" $row 1)" "$dir" "row $row names its run folder"
    expect_eq "$(cell "$T_TMP/table.md" $row 2)" "$(jq -r '.config.rate | tostring + "/s"' "$dir/run.json")" \
        "row $row: the rate is run.json's"
    bad=""
    for i in "${!COLS[@]}"; do
        want=$(jq "${COLS[$i]}" "$dir/run.json")
        got=$(cell "$T_TMP/table.md" $row $((i + 3)))
        # compared as numbers (jq's and flood's shortest forms of one double)
        jq -e -n "$got == $want" >/dev/null 2>&1 || bad="$bad ${NAMES[$i]}(table $got, run.json $want)"
    done
    expect_eq "$bad" "" "row $row: all 15 figures equal run.json's"
    fa=$(jq -r 'if .probes.follow_to_accept_ms.count > 0 then .probes.follow_to_accept_ms.p50 else "-" end' "$dir/run.json")
    expect_eq "$(cell "$T_TMP/table.md" $row 18)" "$fa" "row $row: Follow-to-Accept p50 as in run.json"
    expect_eq "$(cell "$T_TMP/table.md" $row 20)" "$(jq -r 'if .generator.saturated then "yes" else "no" end' "$dir/run.json")" \
        "row $row: generator saturated as in run.json"
done
[ "$(cell "$T_TMP/table.md" 1 7)" != "$(cell "$T_TMP/table.md" 2 7)" ]
check $? "the two runs' ok counts differ (the rows are not one run twice)"

# a doctored copy: the table follows run.json
mkdir -p "$T_TMP/doctored"
jq '.totals.latency_ms.p99 = 12345.678 | .totals.sent = 4242' "$A/run.json" >"$T_TMP/doctored/run.json"
"$FLOOD" compare "$T_TMP/doctored" >"$T_TMP/doctored.md"
expect_eq "$(cell "$T_TMP/doctored.md" 1 13)/$(cell "$T_TMP/doctored.md" 1 5)" 12345.678/4242 \
    "a doctored run.json's p99 and sent show in the table"

# --html
"$FLOOD" compare --html "$T_TMP/cmp.html" "$A" "$B" >/dev/null 2>"$T_TMP/html.err"
check $? "compare --html exits 0" || sed 's/^/#   /' "$T_TMP/html.err"
for id in plot-distribution plot-rate plot-p99; do
    n=$(sed -n "/<svg id=\"$id\"/,/<\\/svg>/p" "$T_TMP/cmp.html" | grep -c 'class="series"')
    expect_eq "$n" 2 "the overlay's $id has one curve per run"
done
grep -qF "data-series=\"$A\"" "$T_TMP/cmp.html" && grep -qF "data-series=\"$B\"" "$T_TMP/cmp.html"
check $? "curves named by their run folders"
! grep -Eiq '<script|src=|url\(' "$T_TMP/cmp.html"
check $? "the overlay page loads nothing from elsewhere"

# errors
"$FLOOD" compare "$A" "$T_TMP/none" >"$T_TMP/e.out" 2>"$T_TMP/e1"
expect_eq "$?" 1 "a missing run folder exits 1"
grep -q "^flood: compare: report: cannot read '$T_TMP/none/run.json'" "$T_TMP/e1"
check $? "naming the file"
[ ! -s "$T_TMP/e.out" ]
check $? "and prints no partial table"
"$FLOOD" compare >/dev/null 2>"$T_TMP/e2"
expect_eq "$?" 2 "no run folder is a usage error"
"$FLOOD" compare "$A" --html >/dev/null 2>"$T_TMP/e3"
expect_eq "$?" 2 "--html without a file is a usage error"
grep -q "^flood: compare: option needs a value '--html'" "$T_TMP/e3"
check $? "saying which option"
"$FLOOD" compare --html "$T_TMP/no/such/dir/x.html" "$A" >/dev/null 2>"$T_TMP/e4"
expect_eq "$?" 1 "an --html file that cannot be written exits 1"
done_testing

#!/usr/bin/env bash
# `flood report RUN_DIR`: report.html from real runs against tests/tools/sink. The page is
# one self-contained file (no script, nothing fetched); its figures are checked against
# run.json; then Debian's headless Chromium opens it (tests/browser/report.mjs: every chart
# drawn with data for every series, no console error, no network request) and saves a
# screenshot to $FLOOD_BUILD/report.png. Errors: missing or bad run folders, usage.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
SHOTS=${FLOOD_BUILD:-$ROOT/build}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

# report_ok DIR WHAT: flood report DIR succeeds and writes a self-contained page
report_ok() {
    rm -f "$1/report.html"
    "$FLOOD" report "$1" >"$T_TMP/report.out" 2>"$T_TMP/report.err"
    local rc=$?
    check "$rc" "$2: flood report exits 0" || sed 's/^/#   /' "$T_TMP/report.err"
    grep -qx "report: $1/report.html" "$T_TMP/report.out"
    check $? "$2: it prints where the report went"
    head -c 15 "$1/report.html" 2>/dev/null | grep -q '^<!DOCTYPE html>'
    check $? "$2: report.html is an HTML page"
    ! grep -Eiq '<script|<iframe|<img|<object|<embed|src=|@import|url\(' "$1/report.html"
    check $? "$2: no script, image, frame or anything loaded from elsewhere"
    [ "$(grep -o '<link[^>]*>' "$1/report.html")" = '<link rel="icon" href="data:,">' ]
    check $? "$2: its one <link> is an empty data: icon (so no favicon request)"
    local missing=""
    for id in plot-rate plot-outcomes plot-latency plot-distribution plot-inflight; do
        grep -q "<svg id=\"$id\"" "$1/report.html" || missing="$missing $id"
    done
    expect_eq "$missing" "" "$2: all five charts are in the page"
    grep -qF "$(jq -r .conservation.line "$1/run.json")" "$1/report.html"
    check $? "$2: the conservation line is run.json's"
}

# 1. a healthy run with a fault in force on the crowd (delays its GETs)
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 300 --duration 3s --sign none \
    --mix create=70,follow=30 --fault "flood2:delay=100ms,scope=get"
stop_sink
check "$RUN_RC" "run 1 (202 from the sink, a fault in force) exits 0" || show_run
OK_DIR=$RUN_DIR
report_ok "$OK_DIR" "run 1"
grep -qF 'flood2:delay=100ms,scope=get' "$OK_DIR/report.html"
check $? "run 1: the fault in force is listed"
# the stacked 2xx layer adds up to run.json's per-second 2xx answers
want=$(jq '[.series[].outcomes | (.["200"] + .["202"] + .["2xx_other"])] | add' "$OK_DIR/run.json")
got=$(sed -n '/<svg id="plot-outcomes"/,/<\/svg>/p' "$OK_DIR/report.html" |
    grep -o 'data-series="2xx" data-points="[0-9]*" data-sum="[^"]*"' | sed 's/.*data-sum="\([^"]*\)"/\1/')
expect_eq "$got" "$want" "run 1: the 2xx layer of the outcomes chart sums to run.json's $want"
# 4 rate + 6 outcomes + 4 distribution + 1 in flight + the latency lines the series records
# (p50 and p99 always; max, service p50/p99, dispatch lag p99 and host steal when present) + the two
# Follow charts' Accepts, Rejects, Follow-to-Accept p50 and p99 when the series has accepts,
# + the fetches chart's lines
extra=$(jq '[.series[0] | has("max_ms"), has("service_p50_ms"), has("service_p99_ms"), has("lag_p99_ms"), has("steal_ms")] | map(select(.)) | length' "$OK_DIR/run.json")
extra=$((extra + 4 * $(jq '[.series[0] | has("accepts")] | map(select(.)) | length' "$OK_DIR/run.json")))
# the fetches chart: the activities sent and each kind the target fetched
extra=$((extra + $(jq 'if (.series[0] | has("fetches")) then 1 + ([.fetches.by_kind[] | select(.requests > 0)] | length) else 0 end' "$OK_DIR/run.json")))
expect_eq "$(grep -c 'class="series"' "$OK_DIR/report.html")" "$((17 + extra))" \
    "run 1: $((17 + extra)) series drawn" ||
    grep -o 'data-series="[^"]*"' "$OK_DIR/report.html" | sed 's/^/#   /'
# the per-second Accepts chart: the sink answers no Follow, so its Accepts line is all zeros
# and the Follow-to-Accept lines have no point (a second without Accepts has none)
grep -q '<svg id="plot-accepts"' "$OK_DIR/report.html" && grep -q '<svg id="plot-f2a"' "$OK_DIR/report.html"
check $? "run 1: the Follows-answered and Follow-to-Accept charts are in the page"
got=$(grep -o 'data-series="Accepts" data-points="[0-9]*" data-sum="[^"]*"' "$OK_DIR/report.html" | sed 's/.*data-sum="\([^"]*\)"/\1/')
expect_eq "$got" "$(jq '[.series[].accepts] | add' "$OK_DIR/run.json")" "run 1: the Accepts line sums to run.json's (0)"
expect_eq "$(grep -o 'data-series="Follow-to-Accept p99" data-points="[0-9]*"' "$OK_DIR/report.html")" \
    'data-series="Follow-to-Accept p99" data-points="0"' "run 1: no Follow-to-Accept point without an Accept"

# 2. a target that never answers: requests time out, the rest are shed
start_sink --mode hang
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 200 --duration 2s --sign none \
    --mix create=1 --max-inflight 50 --timeout 1s --grace 1s
stop_sink
check "$RUN_RC" "run 2 (a hanging target, --max-inflight 50) exits 0" || show_run
ERR_DIR=$RUN_DIR
[ "$(jq '.totals.shed > 0 and .totals.outcomes.timeout > 0' "$ERR_DIR/run.json")" = true ]
check $? "run 2 shed some activities and timed some out"
report_ok "$ERR_DIR" "run 2"

# 3. many personas: the header lists them (a few, the rest behind a toggle), not one long
# JSON array that makes the page scroll sideways
MANY_DIR=$T_TMP/many
mkdir -p "$MANY_DIR"
jq '.config.inbox = null | .config.personas = [range(30) | "acct:load\(.)-with-a-rather-long-name@target-instance-with-a-long-host-name.test"]' \
    "$OK_DIR/run.json" >"$MANY_DIR/run.json"
cp "$OK_DIR"/*.hgrm "$MANY_DIR/" 2>/dev/null
"$FLOOD" report "$MANY_DIR" >/dev/null 2>"$T_TMP/many.err"
check $? "a report of a run with 30 personas" || sed 's/^/#   /' "$T_TMP/many.err"
header=$(sed -n '/<p class="sub">/,/<h2 id="summary">/p' "$MANY_DIR/report.html")
echo "$header" | grep -q '30 personas'
check $? "the header counts the personas"
expect_eq "$(echo "$header" | grep -o '<li><code>acct:load[0-9]*-' | wc -l)" 30 "every persona is an item of a list"
echo "$header" | grep -q '<summary>22 more</summary>'
check $? "eight shown, 22 behind a toggle"
! echo "$header" | grep -q '\["acct:'
check $? "no JSON array in the header"

# 4. in a real browser
if [ -x "$CHROMIUM" ] && [ -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
    for pair in "$OK_DIR:report.png" "$ERR_DIR:report-errors.png" "$MANY_DIR:report-personas.png"; do
        dir=${pair%%:*} png=$SHOTS/${pair#*:}
        rm -f "$png"
        node "$ROOT/tests/browser/report.mjs" "$dir" "$png" >"$T_TMP/browser.out" 2>&1
        rc=$?
        sed 's/^ok /# browser: ok /; s/^not ok /# browser: NOT OK /' "$T_TMP/browser.out"
        check "$rc" "chromium draws $(basename "$png" .png): every chart and series, no console error, no request"
        [ -s "$png" ] && [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
        check $? "a PNG screenshot saved to $png"
    done
else
    check 0 "the report in a real browser # SKIP needs $CHROMIUM (Debian package chromium) and npm ci in tests/browser"
fi

# 5. errors
"$FLOOD" report "$T_TMP/no-such-run" >/dev/null 2>"$T_TMP/e1"
expect_eq "$?" 1 "a missing run folder exits 1"
grep -q "^flood: report: cannot read '$T_TMP/no-such-run/run.json'" "$T_TMP/e1"
check $? "naming the file it could not read"
mkdir -p "$T_TMP/bad"
printf '{"totals": {' >"$T_TMP/bad/run.json"
"$FLOOD" report "$T_TMP/bad" >/dev/null 2>"$T_TMP/e2"
expect_eq "$?" 1 "a run.json that is not JSON exits 1"
grep -q "^flood: report: '$T_TMP/bad/run.json' line 1" "$T_TMP/e2"
check $? "naming the file and the line"
echo '{"hello": 1}' >"$T_TMP/bad/run.json"
"$FLOOD" report "$T_TMP/bad" >/dev/null 2>"$T_TMP/e3"
expect_eq "$?" 1 "JSON that is not a flood run exits 1"
grep -q "not a flood run.json" "$T_TMP/e3"
check $? "saying so"
[ ! -e "$T_TMP/bad/report.html" ] && [ ! -e "$T_TMP/bad/report.html.tmp" ]
check $? "and leaves no report behind"
"$FLOOD" report >/dev/null 2>"$T_TMP/e4"
expect_eq "$?" 2 "no run folder is a usage error (2)"
grep -q '^flood: report: ' "$T_TMP/e4"
check $? "with 'flood: report: ...' on stderr"
chmod 0555 "$OK_DIR"
if [ ! -w "$OK_DIR" ]; then
    "$FLOOD" report "$OK_DIR" >/dev/null 2>"$T_TMP/e5"
    expect_eq "$?" 1 "a folder it cannot write to exits 1"
else
    check 0 "a folder it cannot write to # SKIP running as root: every folder is writable"
fi
chmod 0755 "$OK_DIR"
done_testing

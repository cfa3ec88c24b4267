#!/usr/bin/env bash
# flood's Prometheus endpoint (flood/report/metrics.c). First over a synthetic source
# (tests/tools/metrics_fixture, figures fixed in its header comment): scraped with curl,
# parsed by a real Prometheus parser (promtool check metrics, from Debian's prometheus
# package), values compared with the ones worked out by hand below. Then, when `flood run
# --help` lists --metrics, during a real run: the final scrape against run.json.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
FIXTURE=${FLOOD_BUILD:-$ROOT/build}/tools/metrics_fixture
PROMTOOL=${PROMTOOL:-$(command -v promtool)}

# start_fixture ARGS...: FIX_PID, FIX_PORT
start_fixture() {
    local log=$T_TMP/fixture.$RANDOM.log
    "$FIXTURE" --exit-after 120 "$@" >"$log" 2>&1 &
    FIX_PID=$!
    T_PIDS="$T_PIDS $FIX_PID"
    FIX_PORT=""
    for _ in $(seq 1 100); do
        FIX_PORT=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$log")
        [ -n "$FIX_PORT" ] && return 0
        kill -0 "$FIX_PID" 2>/dev/null || break
        sleep 0.05
    done
    echo "# fixture did not start:"
    sed 's/^/#   /' "$log"
    return 1
}

# metric FILE 'NAME{LABELS}': the value of that exact series in an exposition file
metric() {
    awk -v k="$2" '$1 == k {print $2}' "$1"
}

# 1. the synthetic source
start_fixture
M=$T_TMP/fixture.prom
code=$(curl -s -o "$M" -D "$T_TMP/fixture.hdr" -w '%{http_code}' "http://127.0.0.1:$FIX_PORT/metrics")
expect_eq "$code" 200 "GET /metrics answers 200"
grep -qi '^content-type: text/plain; version=0.0.4' "$T_TMP/fixture.hdr"
check $? "in the Prometheus text format 0.0.4 (Content-Type)"
if [ -n "$PROMTOOL" ]; then
    "$PROMTOOL" check metrics <"$M" >"$T_TMP/promtool.out" 2>&1
    check $? "promtool check metrics accepts it (no lint problem)" || sed 's/^/#   /' "$T_TMP/promtool.out"
    # negative twin: the same parser refuses a broken exposition (a sample with no value)
    { cat "$M"; echo 'flood_broken{op="x"}'; } | "$PROMTOOL" check metrics >/dev/null 2>&1
    [ $? -ne 0 ]
    check $? "promtool refuses a broken exposition (the parser is really checking)"
else
    check 0 "promtool check metrics # SKIP promtool not installed (Debian package prometheus)"
    check 0 "promtool negative twin # SKIP promtool not installed"
fi
expect_eq "$(metric "$M" 'flood_requests_total{op="create",outcome="202"}')" 5 "create 202 answers: 5"
expect_eq "$(metric "$M" 'flood_requests_total{op="create",outcome="429"}')" 2 "create 429 answers: 2"
expect_eq "$(metric "$M" 'flood_requests_total{op="create",outcome="timeout"}')" 1 "create timeouts: 1"
expect_eq "$(metric "$M" 'flood_requests_total{op="like",outcome="202"}')" 0 "like 202 answers: 0"
expect_eq "$(metric "$M" 'flood_scheduled_total{op="create"}')/$(metric "$M" 'flood_sent_total{op="create"}')/$(metric "$M" 'flood_shed_total{op="create"}')" \
    10/9/1 "scheduled/sent/shed 10/9/1"
expect_eq "$(metric "$M" 'flood_in_flight_requests')" 1 "in flight: 1"
# samples 0.3 ms x3, 2 ms x2, 70 ms x1, 1.5 s x2: cumulative counts by bound, worked by hand
for pair in 0.0005=3 0.001=3 0.0025=5 0.05=5 0.1=6 1=6 2.5=8 +Inf=8; do
    le=${pair%=*} want=${pair#*=}
    expect_eq "$(metric "$M" "flood_latency_seconds_bucket{op=\"create\",le=\"$le\"}")" "$want" \
        "latency bucket le=$le holds $want"
done
expect_eq "$(metric "$M" 'flood_latency_seconds_count{op="create"}')" 8 "latency count: 8"
# 3 x 0.0003 + 2 x 0.002 + 0.07 + 2 x 1.5 = 3.0749 s
expect_eq "$(awk -v v="$(metric "$M" 'flood_latency_seconds_sum{op="create"}')" 'BEGIN {print (v > 3.07489 && v < 3.07491) ? "3.0749" : v}')" \
    3.0749 "latency sum: 3.0749 s"
expect_eq "$(metric "$M" 'flood_follow_to_accept_seconds_bucket{le="0.1"}')/$(metric "$M" 'flood_follow_to_accept_seconds_bucket{le="0.25"}')" \
    0/1 "Follow-to-Accept 240 ms falls between the 0.1 s and 0.25 s bounds"
expect_eq "$(metric "$M" 'flood_inbound_deliveries_total{type="Create"}')/$(metric "$M" 'flood_inbound_rejected_total{reason="digest"}')" \
    4/2 "inbound: 4 Creates delivered, 2 rejected for their digest"
expect_eq "$(metric "$M" 'flood_inbound_accepts_total')" 1 "inbound Accepts: 1"
# every bucket series is cumulative (never decreasing)
cumulative() {
    awk '/_bucket[{]/ {key = $1; sub(/,?le="[^"]*"/, "", key);
        if (key == prev && $2 + 0 < last + 0) bad = 1; prev = key; last = $2} END {exit bad}' "$1"
}
cumulative "$M"
check $? "histogram buckets are cumulative"
printf 'a_bucket{le="1"} 5\na_bucket{le="2"} 4\n' >"$T_TMP/notcum.prom"
cumulative "$T_TMP/notcum.prom"
[ $? -ne 0 ]
check $? "(and that check catches a bucket that decreases)"

code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$FIX_PORT/other")
expect_eq "$code" 404 "another path answers 404"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x "http://127.0.0.1:$FIX_PORT/metrics")
expect_eq "$code" 405 "POST /metrics answers 405"
stop_pid "$FIX_PID"

start_fixture --empty
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$FIX_PORT/metrics")
expect_eq "$code" 503 "a source with nothing to report answers 503"
stop_pid "$FIX_PID"

"$FIXTURE" --listen "no-such-address" >/dev/null 2>"$T_TMP/bad.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "metrics: bad address 'no-such-address'" "$T_TMP/bad.err"
check $? "a bad address is refused with a clear error"
# negative twin of a free port: the port the first fixture holds is taken
start_fixture
"$FIXTURE" --listen "127.0.0.1:$FIX_PORT" >/dev/null 2>"$T_TMP/busy.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "metrics: cannot listen on '127.0.0.1:$FIX_PORT'" "$T_TMP/busy.err"
check $? "a port in use is refused with a clear error"
stop_pid "$FIX_PID"

# 2. during a real run, when flood run has --metrics
if "$FLOOD" run --help 2>/dev/null | grep -q -- '--metrics'; then
    start_sink --status 202
    hold=""
    "$FLOOD" run --help | grep -q -- '--metrics-hold' && hold="--metrics-hold 3s"
    # port 0: the run binds a free port itself and prints it (a port picked here and handed
    # over could be taken by another process meanwhile)
    # shellcheck disable=SC2086
    frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 200 --duration 2s --sign none \
        --mix create=80,follow=20 --metrics 127.0.0.1:0 $hold
    MPORT=""
    while [ -z "$MPORT" ] && kill -0 "$RUN_PID" 2>/dev/null; do
        MPORT=$(sed -n 's|^flood: run: metrics on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$RUN_ERR")
        [ -n "$MPORT" ] || sleep 0.05
    done
    last=$T_TMP/run.prom
    # scrape until the run has written its results, keeping the last good scrape
    while kill -0 "$RUN_PID" 2>/dev/null; do
        curl -sf -o "$T_TMP/scrape.prom" "http://127.0.0.1:$MPORT/metrics" &&
            mv "$T_TMP/scrape.prom" "$last"
        [ -s "$RUN_DIR/run.json" ] && [ -s "$last" ] && [ -z "$hold" ] && break
        [ -s "$RUN_DIR/run.json" ] && [ -n "$hold" ] && {
            sleep 0.3
            curl -sf -o "$last" "http://127.0.0.1:$MPORT/metrics"
            break
        }
        sleep 0.1
    done
    wait "$RUN_PID"
    stop_sink
    [ -s "$last" ]
    check $? "the run served /metrics while it ran"
    if [ -n "$PROMTOOL" ] && [ -s "$last" ]; then
        "$PROMTOOL" check metrics <"$last" >/dev/null 2>&1
        check $? "promtool accepts the run's exposition"
    fi
    sum_metric() { awk -v re="$2" '$1 ~ re {s += $2} END {print s + 0}' "$1"; }
    got_sent=$(sum_metric "$last" '^flood_sent_total[{]')
    got_202=$(sum_metric "$last" '^flood_requests_total[{].*outcome="202"')
    if [ -n "$hold" ]; then
        expect_eq "$got_sent" "$(jget .totals.sent)" "flood_sent_total adds up to run.json's sent"
        expect_eq "$got_202" "$(jget '.totals.outcomes["202"]')" "202 answers match run.json"
        # every per-operation counter and outcome, as jq reads them from run.json
        jq -r '.operations | to_entries[] | .key as $op | .value as $v |
            (["scheduled", "sent", "shed", "completed"][] | "flood_\(.)_total{op=\"\($op)\"} \($v[.])"),
            ($v.outcomes | to_entries[] | select(.key != "transport") |
                "flood_requests_total{op=\"\($op)\",outcome=\"\(.key)\"} \(.value)"),
            "flood_unfinished_requests{op=\"\($op)\"} \($v.unfinished)",
            "flood_latency_seconds_count{op=\"\($op)\"} \($v.latency_ms.count)",
            "flood_service_seconds_count{op=\"\($op)\"} \($v.service_ms.count)"' \
            "$RUN_DIR/run.json" >"$T_TMP/want.txt"
        bad=$(awk 'NR == FNR {got[$1] = $2; next} got[$1] != $2 {print $1 " /metrics " got[$1] " run.json " $2}' \
            "$last" "$T_TMP/want.txt")
        expect_eq "$bad" "" "all $(wc -l <"$T_TMP/want.txt") per-operation series equal run.json's"
        expect_eq "$(sum_metric "$last" '^flood_requests_total[{].*outcome="transport_')" \
            "$(jget .totals.outcomes.transport)" "the transport_* outcomes add up to run.json's transport"
        expect_eq "$(metric "$last" flood_in_flight_requests)" 0 "nothing in flight at the end"
        expect_eq "$(metric "$last" flood_host_steal_cpus)/$(awk '$1 == "flood_host_steal_seconds_total" && $2 >= 0 {print "ok"}' "$last")" \
            "$(nproc)/ok" "the host's steal: a total in seconds, over the CPUs flood may run on"
        expect_eq "$(metric "$last" flood_follow_to_accept_seconds_count)" \
            "$(jget .probes.follow_to_accept_ms.count)" "Follow-to-Accept count matches run.json"
    else
        [ "$got_sent" -le "$(jget .totals.sent)" ] && [ "$got_sent" -gt 0 ]
        check $? "flood_sent_total ($got_sent) within run.json's sent (no --metrics-hold to read the final figures)"
    fi
else
    check 0 "values match run.json at the end of a run # SKIP flood run has no --metrics option yet (flood/report/metrics.c is not wired into flood/cmd/cmd_run.c)"
fi

# 3. flood serve --metrics: the inbound families alone
if "$FLOOD" serve --help 2>/dev/null | grep -q -- '--metrics'; then
    start_serve --instances 2 --actors 3 --key-pool 1 --metrics 127.0.0.1:0
    MURL=$(sed -n 's/^metrics on \(http:[^ ]*\)$/\1/p' "$SERVE_LOG" | head -1)
    [ -n "$MURL" ]
    check $? "flood serve prints where its metrics are ($MURL)"
    # one unsigned delivery: refused for its missing signature
    curl -s -o /dev/null -X POST -H 'Host: flood1.test' -H 'Content-Type: application/activity+json' \
        --data '{"type":"Create","actor":"http://x.test/a","object":{"type":"Note"}}' \
        "http://127.0.0.1:$SERVE_PORT/inbox"
    curl -s -o "$T_TMP/serve.prom" -w '%{http_code}' "$MURL" >"$T_TMP/serve.code"
    expect_eq "$(cat "$T_TMP/serve.code")" 200 "flood serve's /metrics answers 200"
    if [ -n "$PROMTOOL" ]; then
        "$PROMTOOL" check metrics <"$T_TMP/serve.prom" >/dev/null 2>&1
        check $? "promtool accepts flood serve's exposition"
    fi
    expect_eq "$(metric "$T_TMP/serve.prom" 'flood_inbound_rejected_total{reason="missing"}')" 1 \
        "the unsigned delivery is counted as rejected (missing signature)"
    ! grep -q '^flood_sent_total' "$T_TMP/serve.prom"
    check $? "no sender families without a sender"
    stop_pid "$SERVE_PID"
else
    check 0 "flood serve --metrics # SKIP flood serve has no --metrics option yet"
fi
done_testing

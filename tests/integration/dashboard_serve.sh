#!/usr/bin/env bash
# `flood serve --dashboard`: the page of a crowd without a sender. Its rows (one a second)
# rise while curl fetches crowd actors and posts a delivery; a fault switched on from the
# API changes the crowd's answers (a delay, a status) and off again; the rate controls are
# refused (nothing to steer); the target's own queue (--target-queue) in the rows, in
# /metrics and on the page; a non-loopback client is refused without a token.
. "$(dirname "$0")/lib.sh"

# dash_of LOG: the "dashboard: http://..." line's ADDR:PORT into DASH
dash_of() {
    DASH=""
    for _ in $(seq 1 100); do
        DASH=$(sed -n 's|^dashboard: http://\(.*\)/$|\1|p' "$1" | head -1)
        [ -n "$DASH" ] && return 0
        sleep 0.1
    done
    return 1
}
# api METHOD PATH [BODY]: prints "STATUS BODY"
api() {
    curl -s -m 5 -o "$T_TMP/api.body" -w '%{http_code}' -X "$1" ${3:+-d "$3"} "http://$DASH$2"
    printf ' '
    cat "$T_TMP/api.body"
}
# get HOST PATH: "STATUS MS"
get() {
    curl -s -o /dev/null -m 5 -w '%{http_code} %{time_total}\n' -H "Host: $1" \
        "http://127.0.0.1:$SERVE_PORT$2" | awk '{ printf "%s %d", $1, $2 * 1000 }'
}
# rows FROM: the stream's rows from second FROM on, one JSON a line (2 s of it)
rows() {
    timeout 2 curl -sN "http://$DASH/events?from=$1" | sed -n 's/^data: \({"kind":"crowd".*\)$/\1/p'
}
# sum JQ ROWS_FILE: the sum of JQ over the rows
sum() { jq -s "map($1) | add // 0" "$2"; }

start_serve --instances 3 --actors 2 --key-pool 1 --no-verify --exit-after 120 \
    --dashboard 127.0.0.1:0
check $? "flood serve --dashboard starts"
dash_of "$SERVE_LOG"
check $? "it prints the dashboard's URL"
grep -q '^flood: serve: dashboard on http://127.0.0.1:[0-9]*/$' "$SERVE_LOG"
check $? "  on stderr too"
page=$(curl -s -m 5 "http://$DASH/")
echo "$page" | grep -q 'CROWD=true' && ! echo "$page" | grep -qE '(src|href)="(https?:)?//'
check $? "the page is served as a crowd's and loads nothing from the network"
st=$(api GET /api/state | cut -d' ' -f2-)
expect_eq "$(echo "$st" | jq -c '[.crowd, .steerable, .sending]')" '[true,false,false]' \
    "the state: a crowd, nothing to steer"
expect_eq "$(api POST /api/rate '{"rate": 10}' | cut -c1-3)" 409 "a rate change: 409"
grep -q 'nothing to steer' "$T_TMP/api.body"
check $? "  saying there is nothing to steer" || cat "$T_TMP/api.body"

# 1. the rows rise: 5 actor GETs and a delivery, counted in the seconds they happened
sleep 1.2
n0=$(api GET /api/state | cut -d' ' -f2- | jq .seconds)
for i in 1 2 3 4 5; do get flood1.test /users/user1 >/dev/null; done
code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' -H 'Host: flood2.test' \
    -H 'Content-Type: application/activity+json' -X POST \
    -d '{"@context":"https://www.w3.org/ns/activitystreams","id":"https://t.example/a/1","type":"Create","actor":"https://t.example/users/x","object":{"id":"https://t.example/n/1","type":"Note","content":"hi"}}' \
    "http://127.0.0.1:$SERVE_PORT/users/user1/inbox")
expect_eq "$code" 202 "an unsigned delivery (--no-verify) is accepted"
sleep 2.2
rows "$n0" >"$T_TMP/rows1"
expect_eq "$(sum '.fetches.actor // 0' "$T_TMP/rows1")" 5 "the rows count the 5 actor fetches"
[ "$(sum '.fetch_bytes.actor // 0' "$T_TMP/rows1")" -gt 1000 ]
check $? "  and their bytes"
expect_eq "$(sum '.deliveries.Create // 0' "$T_TMP/rows1")" 1 "  and the delivery, by type"
expect_eq "$(sum '.requests' "$T_TMP/rows1")" 6 "  and the requests served"
rows 0 >"$T_TMP/rows0"
expect_eq "$(jq -s '[.[].t] == [range(0; length)]' "$T_TMP/rows0")" true \
    "a row each second, from 0 on ($(wc -l <"$T_TMP/rows0") so far)"
n1=$(wc -l <"$T_TMP/rows0")
sleep 2
[ "$(rows 0 | wc -l)" -ge $((n1 + 1)) ]
check $? "  and they go on rising"

# 2. faults from the API change the answers, and off again
read -r code ms < <(get flood1.test /users/user1)
check $([ "$code" = 200 ] && [ "$ms" -lt 400 ]; echo $?) "before: flood1 answers 200 at once ($ms ms)"
expect_eq "$(api POST /api/fault '{"instance": "flood1", "spec": "delay=600ms", "on": true}' | cut -c1-3)" 200 \
    "a delay switched on for flood1"
expect_eq "$(api POST /api/fault '{"instance": "flood2", "spec": "status=503", "on": true}' | cut -c1-3)" 200 \
    "a 503 switched on for flood2"
read -r code ms < <(get flood1.test /users/user1)
check $([ "$code" = 200 ] && [ "$ms" -ge 600 ]; echo $?) "flood1 answers after the delay ($ms ms)"
read -r code ms < <(get flood2.test /users/user1)
expect_eq "$code" 503 "flood2 answers 503"
n2=$(api GET /api/state | cut -d' ' -f2- | jq .seconds)
sleep 1.5
rows "$((n2 > 2 ? n2 - 2 : 0))" >"$T_TMP/rows2"
[ "$(sum '.faulted.total // 0' "$T_TMP/rows2")" -ge 2 ] &&
    jq -e 'select(.faults == ["flood1:delay=600ms", "flood2:status=503"])' "$T_TMP/rows2" >/dev/null
check $? "the rows show the faulted answers and the faults in force"
expect_eq "$(timeout 1 curl -sN "http://$DASH/events?from=99999" | sed -n 's/^data: \(\[.*\)/\1/p' | jq -c '[.[] | [.kind, .value, .on]]')" \
    '[["fault","flood1:delay=600ms",true],["fault","flood2:status=503",true]]' \
    "the switches are logged for the charts' marks"
api POST /api/fault '{"instance": "flood1", "spec": "delay=600ms", "on": false}' >/dev/null
api POST /api/fault '{"instance": "flood2", "spec": "status=503", "on": false}' >/dev/null
read -r code ms < <(get flood1.test /users/user1)
check $([ "$code" = 200 ] && [ "$ms" -lt 400 ]; echo $?) "switched off: flood1 answers at once again ($ms ms)"
read -r code ms < <(get flood2.test /users/user1)
expect_eq "$code" 200 "  and flood2 answers 200"
expect_eq "$(api GET /api/state | cut -d' ' -f2- | jq -c '[.faults[].on]')" '[false,false]' \
    "the state shows both off"
expect_eq "$(api POST /api/fault '{"instance": "flood9", "spec": "delay=1s", "on": true}' | cut -c1-3)" 400 \
    "a fault on an unknown instance: 400"
stop_pid "$SERVE_PID"
expect_eq "$?" 0 "flood serve stops cleanly on SIGTERM"

# 3. the target's own queue while serving (--target-queue): each row carries its second's
#    readings, a second whose reading failed null (never 0); /metrics the gauges; the page a
#    line per queue with a gap there (tests/browser/dashboard_tqueue.mjs in Debian's
#    headless Chromium when present)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
echo 20 >"$T_TMP/q1"
echo 5 >"$T_TMP/q2"
start_serve --instances 2 --actors 1 --key-pool 1 --exit-after 90 --dashboard 127.0.0.1:0 \
    --metrics 127.0.0.1:0 --target-queue "cmd:cat $T_TMP/q1" --target-queue "cmd:cat $T_TMP/q2"
check $? "flood serve --target-queue (twice) starts"
dash_of "$SERVE_LOG"
MET=$(sed -n 's|^metrics on http://\(.*\)/metrics$|\1|p' "$SERVE_LOG")
BR_PID=""
if [ -x "$CHROMIUM" ] && [ -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
    node "$ROOT/tests/browser/dashboard_tqueue.mjs" "http://$DASH/" 20 5 30 >"$T_TMP/browser.out" 2>&1 &
    BR_PID=$!
    T_PIDS="$T_PIDS $BR_PID"
fi
sleep 3
mv "$T_TMP/q1" "$T_TMP/q1.away" # the first source fails for 3 s
sleep 3
echo 30 >"$T_TMP/q1"
sleep 2.5
rows 0 >"$T_TMP/rows4"
expect_eq "$(jq -s '[.[] | .target_queue.cmd | if . == null then "gap" else .depth end] | [.[0], (index("gap") != null), (.[index("gap"):] | index(30) != null)]' -c "$T_TMP/rows4")" \
    '[20,true,true]' "the rows: the first source read (20), then seconds without a reading, then 30"
expect_eq "$(jq -s '[.[] | .target_queue.cmd | select(. != null) | .depth] | min' "$T_TMP/rows4")" 20 \
    "  a failed second is null in its row, never 0"
expect_eq "$(jq -s '[.[] | .target_queue["cmd#2"].depth] | unique' -c "$T_TMP/rows4")" '[5]' \
    "  the second source (cmd#2) read in every row"
m=$(curl -s -m 5 "http://$MET/metrics")
echo "$m" | grep -qx 'flood_target_queue_jobs{source="cmd",gauge="depth",role="inbound"} 30' &&
    echo "$m" | grep -qx 'flood_target_queue_up{source="cmd"} 1' &&
    echo "$m" | grep -q '^flood_target_queue_missing_total{source="cmd"} [1-9]'
check $? "/metrics: the depth now, the source up, its missing readings counted" ||
    echo "$m" | grep target_queue | sed 's/^/#   /'
if [ -n "$BR_PID" ]; then
    wait "$BR_PID"
    rc=$?
    sed 's/^ok /# browser: ok /; s/^not ok /# browser: NOT OK /' "$T_TMP/browser.out"
    check "$rc" "chromium: a line per queue, the failed seconds a gap, never a 0"
else
    check 0 "the target's queue chart in a real browser # SKIP needs $CHROMIUM and npm ci in tests/browser"
fi
stop_pid "$SERVE_PID"

# 4. non-loopback clients: refused without a token, served with it
ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep -v : | head -1)
if [ -n "$ip" ]; then
    start_serve --instances 2 --actors 1 --key-pool 1 --exit-after 60 --dashboard 0.0.0.0:0
    dash_of "$SERVE_LOG"
    port=${DASH##*:}
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$ip:$port/api/state")" 403 \
        "without a token, a non-loopback client ($ip) is refused: 403"
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" 200 \
        "and a loopback client served"
    stop_pid "$SERVE_PID"
    start_serve --instances 2 --actors 1 --key-pool 1 --exit-after 60 --dashboard 0.0.0.0:0 \
        --dashboard-token s3cret
    dash_of "$SERVE_LOG"
    port=${DASH##*:}
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$ip:$port/api/state")" 401 \
        "with --dashboard-token: a request without it is refused: 401"
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer s3cret' \
        -d '{"instance": "flood1", "spec": "delay=1s", "on": true}' "http://$ip:$port/api/fault")" 200 \
        "with the token, a non-loopback client switches a fault"
    stop_pid "$SERVE_PID"
else
    check 0 "non-loopback clients # SKIP no non-loopback IPv4 address here"
fi
done_testing

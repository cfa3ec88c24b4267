#!/usr/bin/env bash
# `flood run --dashboard` against tests/tools/sink: the page and its stream, the API's
# refusals (a bad value gets a clear 400; a non-loopback client without the token is
# refused, with it served), steering measured by the sink (tests/browser/dashboard.mjs in
# Debian's headless Chromium when present), run.json's steering, conservation, the
# replay line and report.html's markers; the target's queue (--target-queue) in the rows.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

# dash_url: wait for the run's "dashboard: http://..." line (DASH, e.g. 127.0.0.1:40123)
dash_url() {
    DASH=""
    for _ in $(seq 1 300); do
        DASH=$(sed -n 's|^dashboard: http://\(.*\)/$|\1|p' "$RUN_OUT" | head -1)
        [ -n "$DASH" ] && return 0
        kill -0 "$RUN_PID" 2>/dev/null || break
        sleep 0.1
    done
    show_run
    return 1
}
# wait_sending PORT [CURL ARGS...]: until the run's state says it is sending (the dashboard
# is up before the crowd and the target are ready, and steering before that is a 409)
wait_sending() {
    local port=$1
    shift
    for _ in $(seq 1 300); do
        [ "$(curl -s -m 5 "$@" "http://127.0.0.1:$port/api/state" | jq -r .sending 2>/dev/null)" = true ] &&
            return 0
        kill -0 "$RUN_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "# the run never said it was sending"
    return 1
}
# api METHOD PATH [BODY]: prints "STATUS BODY"
api() {
    curl -s -m 5 -o "$T_TMP/api.body" -w '%{http_code}' -X "$1" ${3:+-d "$3"} "http://$DASH$2"
    printf ' '
    cat "$T_TMP/api.body"
}

# 1. a steered run: the page, the stream, the API
start_sink --status 202 --per-second "$T_TMP/sink.sec"
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 200 --duration 120s --sign none \
    --mix create=1 --dashboard 127.0.0.1:0 --dashboard-hold 120s --quiet \
    --target-queue "cmd:echo 12"
dash_url
check $? "the run prints the dashboard's URL"
# a page watching from the start: what it got live is compared below with a late page's
timeout 170 curl -sN "http://$DASH/events" >"$T_TMP/live.ev" 2>/dev/null &
LIVE_PID=$!
page=$(curl -s -m 5 "http://$DASH/")
echo "$page" | grep -q '<svg\|floodDash' && ! echo "$page" | grep -qE '(src|href)="(https?:)?//'
check $? "the page is served and loads nothing from the network"
sleep 2.2
ev=$(timeout 2 curl -sN "http://$DASH/events" | head -c 4000)
echo "$ev" | grep -q '^id: 0$' && echo "$ev" | grep -q '^event: row$' &&
    echo "$ev" | grep -q '"offered":200'
check $? "the stream sends the series rows (id 0, event row, offered 200)"
echo "$ev" | grep -q '"target_queue":{"cmd":{"depth":12\(\.0\)\{0,1\}}}'
check $? "  each with the target's queue read that second (--target-queue)"
expect_eq "$(curl -s -m 5 "http://$DASH/api/state" | jq -c '[.target_queue[0].source, .target_queue[0].gauges.depth.role]')" \
    '["cmd","inbound"]' "the state names the queue sources and their gauges' roles"
ev=$(timeout 2 curl -sN -H 'Last-Event-ID: 0' "http://$DASH/events" | head -c 2000)
echo "$ev" | grep -q '^id: 1$' && ! echo "$ev" | grep -q '^id: 0$'
check $? "a reconnecting stream (Last-Event-ID: 0) goes on from second 1"
expect_eq "$(api POST /api/rate '{"rate": -5}' | cut -c1-3)" 400 "a negative rate: 400"
grep -q 'rate: want .*rate.*: a number 0..10000000' "$T_TMP/api.body"
check $? "  with a clear message" || cat "$T_TMP/api.body"
expect_eq "$(api POST /api/rate '{"rate": "fast"}' | cut -c1-3)" 400 "a rate not a number: 400"
expect_eq "$(api POST /api/rate '{"rate": 100, "ramp_s": -1}' | cut -c1-3)" 400 "a negative ramp: 400"
expect_eq "$(api POST /api/rate 'rate=100' | cut -c1-3)" 400 "a body not JSON: 400"
expect_eq "$(api POST /api/fault '{"instance": "flood99", "spec": "delay=1s", "on": true}' | cut -c1-3)" 400 \
    "a fault on an unknown instance: 400"
grep -q "no instance 'flood99'" "$T_TMP/api.body"
check $? "  naming it" || cat "$T_TMP/api.body"
expect_eq "$(api GET /api/rate | cut -c1-3)" 405 "GET on a command: 405"
expect_eq "$(api POST /api/fault '{"instance": "flood1", "spec": "delay=200ms", "on": true}' | cut -c1-3)" 200 \
    "a fault switched on for flood1"
expect_eq "$(api GET /api/state | cut -d' ' -f2- | jq -c '[.sending, .faults]')" \
    '[true,[{"spec":"flood1:delay=200ms","on":true}]]' "the state shows it"
expect_eq "$(api POST /api/fault '{"instance": "flood1", "spec": "delay=200ms", "on": false}' | cut -c1-3)" 200 \
    "and off again"

# 2. in a real browser: steering measured by the sink
if [ -x "$CHROMIUM" ] && [ -d "$ROOT/tests/browser/node_modules/playwright-core" ]; then
    node "$ROOT/tests/browser/dashboard.mjs" "http://$DASH/" "$T_TMP/sink.sec" "$T_TMP/dash.png" \
        >"$T_TMP/browser.out" 2>&1
    rc=$?
    sed 's/^ok /# browser: ok /; s/^not ok /# browser: NOT OK /' "$T_TMP/browser.out"
    check "$rc" "chromium: counts rise, the rate knob moves the sink's rate (median second within 2%), pause/resume, a lost stream catches up, the end links the report"
    [ -n "${DASH_SHOT:-}" ] && cp "$T_TMP/dash.png" "$DASH_SHOT"
else
    check 0 "the dashboard in a real browser # SKIP needs $CHROMIUM and npm ci in tests/browser"
    curl -s -m 5 -X POST "http://$DASH/api/rate" -d '{"rate": 400, "ramp_s": 1}' >/dev/null
    curl -s -m 5 -X POST "http://$DASH/api/pause" >/dev/null
    sleep 1
    curl -s -m 5 -X POST "http://$DASH/api/resume" >/dev/null
    sleep 1
    curl -s -m 5 -X POST "http://$DASH/api/stop" >/dev/null
fi
for _ in $(seq 1 300); do grep -q '^results:' "$RUN_OUT" && break; sleep 0.1; done
# a page opened once the run has ended gets every second of it, read back from the rows'
# file: the same rows, byte for byte, as the page that watched live (a row is the second as
# it closed: run.json's series may count a late send more)
wait "$LIVE_PID"
timeout 10 curl -sN "http://$DASH/events" >"$T_TMP/late.ev"
rows_of() {
    awk '/^id: / { id = $2 } /^event: row$/ { row = 1; next }
        row && /^data: / { print id, substr($0, 7) } { row = 0 }' "$1"
}
rows_of "$T_TMP/live.ev" >"$T_TMP/live.rows"
rows_of "$T_TMP/late.ev" >"$T_TMP/late.rows"
expect_eq "$(wc -l <"$T_TMP/late.rows")" "$(jget '.series | length')" \
    "a page opened at the end gets every second of the run (run.json's series' count)"
expect_eq "$(cut -d' ' -f2- "$T_TMP/late.rows" | jq -sc '[.[].t] == [range(length)]')" true \
    "  seconds 0 .. the last, in order"
cmp -s "$T_TMP/live.rows" "$T_TMP/late.rows"
check $? "  the same rows, byte for byte, as the page that watched live" ||
    diff "$T_TMP/live.rows" "$T_TMP/late.rows" | head -5
grep -q '^event: end$' "$T_TMP/late.ev"
check $? "  and the end event after them"
expect_eq "$(curl -s -m 5 "http://$DASH/api/state" | jq .rows_lost)" 0 "no row lost (/api/state's rows_lost)"
kill "$RUN_PID" 2>/dev/null # ends --dashboard-hold
wait "$RUN_PID"
RUN_RC=$?
stop_sink
check "$RUN_RC" "the steered run exits 0" || show_run
conserved
check $? "conservation holds through the steering"
expect_eq "$(jget .totals.sent)" "$(sink_count requests)" "the sink received every request sent"
kinds=$(jget '[.steering[].kind] | unique | join(",")')
case "$kinds" in *pause*resume*rate*stop* | *fault*pause*rate*resume*stop*) r=0 ;; *) r=1 ;; esac
[ "$(jget '[.steering[] | select(.kind == "pause" or .kind == "rate" or .kind == "resume" or .kind == "stop")] | length')" -ge 4 ]
check $? "run.json's steering has rate, pause, resume and stop ($kinds)"
expect_eq "$(jget '[.steering[].t_s] | . == sort')" true "in time order, with their times"
grep -q '^steering: .* replay the rate with: flood run --stages ' "$RUN_OUT"
check $? "the end prints the equivalent --stages command"
grep -q 'class="mark"' "$RUN_DIR/report.html" && grep -q 'data-kind="pause"' "$RUN_DIR/report.html"
check $? "report.html marks the changes on its charts"

# 3. the printed --stages, integrated up to the stop, schedules what the steered run did
stages=$(sed -n 's/^steering: .* --stages \([^ ]*\) .*/\1/p' "$RUN_OUT")
stop_t=$(jget '[.steering[] | select(.kind == "stop") | .t_s][0] // 1e9')
want=$(echo "$stages" | tr ',' '\n' | awk -F: -v stop="$stop_t" '
    { r = $1; d = $2; sub(/s$/, "", d); r0 = prev; if (d + 0 == 0) { prev = r; next }
      e = t + d; if (e > stop) { f = (stop - t) / d; r1 = r0 + (r - r0) * f; n += (r0 + r1) / 2 * (stop - t); t = stop; exit }
      n += (r0 + r) / 2 * d; t = e; prev = r }
    END { printf "%d", n + 0.5 }')
# (a send still due when the stop came, the loop being late on a busy core, is not scheduled:
# 1% leaves room for a quarter second of that at 500/s)
d=$(($(jget .totals.scheduled) - want))
[ "${d#-}" -le $((want / 100 + 3)) ]
check $? "the printed --stages curve, up to the stop, schedules what the run did ($want vs $(jget .totals.scheduled))"

# 4. non-loopback clients: refused without a token, served with it
ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v '^127\.' | grep -v : | head -1)
if [ -n "$ip" ]; then
    start_sink --status 202
    frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 30s --sign none \
        --mix create=1 --dashboard 0.0.0.0:0 --quiet
    dash_url
    port=${DASH##*:}
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$ip:$port/api/state")" 403 \
        "without a token, a non-loopback client ($ip) is refused: 403"
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/state")" 200 \
        "and a loopback client served"
    kill "$RUN_PID"
    wait "$RUN_PID"
    frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 30s --sign none \
        --mix create=1 --dashboard 0.0.0.0:0 --dashboard-token s3cret --quiet
    dash_url
    port=${DASH##*:}
    wait_sending "$port" -H 'Authorization: Bearer s3cret'
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "http://$ip:$port/api/pause")" 401 \
        "with --dashboard-token: a request without it is refused: 401"
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer s3cret' "http://$ip:$port/api/pause")" 200 \
        "with the token, a non-loopback client steers"
    expect_eq "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$ip:$port/?token=wrong")" 401 \
        "a wrong token: 401"
    kill "$RUN_PID"
    wait "$RUN_PID"
    stop_sink
else
    check 0 "non-loopback clients # SKIP no non-loopback IPv4 address here"
fi
done_testing

#!/usr/bin/env bash
# The hot path against a target that misbehaves on purpose (tests/tools/sink's modes):
# every activity is accounted for, in the outcome class the target's behaviour calls for.
# Keep-alive lost under a request is retried once on a new connection (as curl does);
# nothing else is retried, so what the sink counts is what flood says it sent, plus those.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
. "$ROOT/tests/tools/ports.sh"
. "$ROOT/tests/tools/nginx.sh"

N=40 # 20/s for 2 s

# case MODE [SINK OPTIONS...] -- run N activities against the sink in MODE
case_run() {
    local mode=$1
    shift
    start_sink --mode "$mode" "$@" || return 1
    frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 20 --duration 2s --sign none \
        --mix create=100 --timeout 1.5s --connections 4
    stop_sink
}

# outcome KEY: how many answers run.json classes as KEY ("202", "timeout", "reset", ...)
outcome() {
    jget ".totals.transport_kinds[\"$1\"] // .totals.outcomes[\"$1\"] // 0"
}

# every answer in one class, and the run conserved
all_in() {
    local mode=$1 class=$2 what=$3
    expect_eq "$(jget .totals.sent)/$(outcome "$class")/$(jget .totals.unfinished)" "$N/$N/0" \
        "$mode: all $N sent, all $N $what" || show_run
    conserved
    check $? "$mode: conserved"
}

for mode in answer chunked continue trickle http10 eof-body; do
    case_run "$mode"
    all_in "$mode" 202 "answered 202"
    expect_eq "$(sink_count requests)" "$N" "$mode: the sink read exactly $N requests"
done

# Connection: close on every 3rd request of a connection: new connections, nothing lost
case_run close-after --every 3
all_in close-after 202 "answered 202 (Connection: close on every 3rd)"
expect_eq "$(sink_count requests)" "$N" "close-after: the sink read exactly $N requests"

# every 2nd request of a connection read and never answered, the connection closed: flood
# sends it again once on a new connection, where it is the first and answered
case_run drop-after --every 2
all_in drop-after 202 "answered 202 after one retry each on a new connection"
got=$(sink_count requests)
[ "$got" -gt "$N" ] && [ "$got" -le $((2 * N)) ]
check $? "drop-after: the sink read more than $N requests (the retries) and at most $((2 * N)): $got"

# answers that never come, or end in a reset, or are not HTTP
case_run hang
all_in hang timeout "timed out (the sink never answers)"
case_run close
all_in close reset "reset (closed with no answer on a new connection)"
case_run reset
all_in reset reset "reset (half an answer, then RST)"
case_run garbage
all_in garbage transport "classed transport (not HTTP)"

# 429 with Retry-After, chunked: the header is seen whatever the framing
case_run chunked --status 429 --retry-after 5
all_in "chunked 429" 429 "answered 429"
expect_eq "$(jget '.totals.retry_after["429"]')" "$N" "chunked 429: Retry-After counted on all $N"

# Signed requests to nginx, a strict HTTP/1.1 server of its own (a second Host header, or
# any malformed head, is a 400 there: RFC 9112 section 3.2): every one answered 202 in both
# dialects, and with a second knock on the way.
nginx_start "$T_TMP/nginx"
rc=$?
if [ "$rc" = 77 ]; then
    check 0 "# SKIP no nginx"
else
    check $rc "nginx answers 202 on a loopback port"
    for sign in cavage rfc9421 rfc9421,cavage; do
        frun --inbox "http://127.0.0.1:$NGINX_PORT/inbox" --rate 20 --duration 1s --sign "$sign" \
            --mix create=40,like=30,follow=30 --like-object "http://127.0.0.1:$NGINX_PORT/notes/1" --timeout 3s --connections 4 --grace 0
        expect_eq "$(jget .totals.sent)/$(outcome 202)" "20/20" \
            "--sign $sign: nginx answers all 20 signed requests 202" || show_run
    done
    expect_eq "$(awk '$9 == 400' "$T_TMP/nginx/access.log" | wc -l)" 0 "nginx logged no 400"
fi

done_testing

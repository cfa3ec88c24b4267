#!/usr/bin/env bash
# `flood run` against tests/tools/sink on loopback: counts conserved to the unit (checked
# against the sink's own count), mix proportions, 429 with Retry-After, 503, second knocks,
# deliberately bad signatures, shedding, usage errors.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

# 1. 300/s for 3 s, unsigned: 900 scheduled, every one answered 202 and counted by the sink
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 300 --duration 3s --sign none \
    --mix create=70,follow=30
stop_sink
check "$RUN_RC" "a 3 s run at 300/s exits 0" || show_run
expect_eq "$(jget .totals.scheduled)" 900 "900 scheduled (300/s x 3 s)"
expect_eq "$(jget .totals.sent)/$(jget .totals.shed)/$(jget .totals.unfinished)" 900/0/0 \
    "all 900 sent, none shed or unfinished"
expect_eq "$(sink_count requests)" 900 "the sink received exactly 900 requests"
expect_eq "$(jget '.totals.outcomes["202"]')" 900 "900 answers classed 202"
conserved
check $? "conservation line printed and run.json conserves"
expect_eq "$(jget '[.series[].sent] | add')" 900 "the per-second series adds up to 900 sent"
expect_eq "$(jget '[.series[].completed] | add')" 900 "and to 900 completed"
# per second: corrected max and service percentiles, and Follow-to-Accept (the sink answers
# no Follow, so none): every key in every second, ordered as percentiles must be
expect_eq "$(jget '[.series[] | has("max_ms") and has("service_p50_ms") and has("service_p99_ms") and has("accepts") and has("rejects") and has("f2a_p50_ms") and has("f2a_p99_ms")] | all')" true \
    "every second has max_ms, service_p50/p99_ms, accepts, rejects, f2a_p50/p99_ms"
expect_eq "$(jget '[.series[] | select(.completed > 0) | .max_ms >= .p99_ms and .p99_ms >= .p50_ms and .p50_ms > 0] | all')" true \
    "every second with answers: max_ms >= p99_ms >= p50_ms > 0"
expect_eq "$(jget '[.series[] | select(.completed > 0) | .service_p99_ms >= .service_p50_ms and .service_p50_ms <= .p50_ms and .service_p99_ms <= .p99_ms] | all')" true \
    "and service p99 >= service p50, each at most its corrected percentile"
expect_eq "$(jget '[.series[] | select(.completed == 0) | .max_ms == 0 and .p99_ms == 0] | all')" true \
    "a second without answers has max_ms 0 (no figure carried over)"
expect_eq "$(jget '[.series[].max_ms] | max')" "$(jget .totals.latency_ms.max)" \
    "the largest per-second max_ms is the run's latency max"
expect_eq "$(jget '[.series[].accepts] | add')/$(jget '.probes.after_series.accepts')/$(jget .probes.accepted)" 0/0/0 \
    "no Accepts from the sink, in the series or after it"
expect_eq "$(jget '[.operations[].scheduled] | add')" 900 \
    "the operations add up to the totals (refollows too, once every actor follows)"
expect_eq "$(jget '.operations.create.sent')" "$(sink_count create)" \
    "creates sent = Creates the sink saw"
for k in flood_version started_at config host totals operations inbound generator series; do
    [ "$(jget "has(\"$k\")")" = true ]
    check $? "run.json has $k"
done
# the host's steal time over the CPUs flood may run on: a time, and a share of theirs
expect_eq "$(jget .generator.steal_cpus)" "$(nproc)" "generator.steal_cpus: the CPUs flood may run on"
expect_eq "$(jget '.generator.steal_s >= 0 and .generator.steal_share >= 0 and .generator.steal_share <= 1')" \
    true "generator.steal_s and steal_share: a time and a share"
expect_eq "$(jq -c '.crowd | keys' "$RUN_DIR/run.json")" \
    '["bad_host","by_status","faults_injected","hangs_closed","requests","tls_cut","too_large"]' \
    "run.json's crowd: what the crowd's server answered"
expect_eq "$(jget '.crowd.requests == ([.crowd.by_status[]] | add)')" true \
    "the crowd's requests = the sum of its answers by status"
[ -f "$RUN_DIR/fetches.tsv" ] && [ "$(grep -vc '^#' "$RUN_DIR/fetches.tsv")" = 0 ]
check $? "fetches.tsv written (no URL: the sink fetches nothing)"
expect_eq "$(jget '[.series[] | .steal_ms | type == "number" and . >= 0] | all')" true \
    "every second of the series says the host's steal in ms"
grep -q 'data-series="host steal"' "$RUN_DIR/report.html"
check $? "report.html draws the host's steal a second beside the latencies"
grep -Eq "saturated: (yes|no), host steal [0-9]+ ms \([0-9.]+%\)" "$RUN_OUT"
check $? "the generator line says the host's steal"
grep -q "the host's steal [0-9]* ms ([0-9.]*% of its CPUs)" "$RUN_DIR/report.html"
check $? "and so does report.html"
expect_eq "$(jget '.operations.create.latency_ms | has("p50") and has("p90") and has("p99") and has("p99.9") and has("max")')" true \
    "latency_ms has p50 p90 p99 p99.9 max"
[ -s "$RUN_DIR/latency-create.hgrm" ] && [ -s "$RUN_DIR/summary.md" ] &&
    grep -q '^#\[Mean' "$RUN_DIR/latency-create.hgrm"
check $? ".hgrm files and summary.md written"
grep -q '^| 300/s | 3 s | 900 | 900 | 0 | 0 |' "$RUN_DIR/summary.md"
check $? "summary.md row: rate, duration, sent, ok, 429, errors" || cat "$RUN_DIR/summary.md"

# 2. mix proportions, counted by the sink: create=60,like=40 over 1500 activities (the
# share's standard deviation is 1.3 points: 5 points is about 4 of them)
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 500 --duration 3s --sign none \
    --mix create=60,like=40 --like-object "http://127.0.0.1:$SINK_PORT/notes/1" --seed 7
stop_sink
c=$(sink_count create) l=$(sink_count like)
echo "# sink: create $c like $l of $(sink_count requests)"
[ "$((c + l))" -eq 1500 ] && [ "$c" -ge 825 ] && [ "$c" -le 975 ]
check $? "creates are 60% +- 5 of 1500 (got $c)"
[ "$l" -ge 525 ] && [ "$l" -le 675 ]
check $? "likes are 40% +- 5 of 1500 (got $l)"
[ "$c" -ne 1500 ] && [ "$l" -ne 0 ]
check $? "and not all of one kind"

# 3. 429 with Retry-After, then without: the header is seen only when sent
start_sink --status 429 --retry-after 30
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 1s --sign none --mix create=1
stop_sink
check "$RUN_RC" "a run answered 429 still exits 0" || show_run
expect_eq "$(jget '.totals.outcomes["429"]')/$(jget '.totals.retry_after["429"]')" 100/100 \
    "100 answers 429, all with Retry-After"
start_sink --status 429
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 1s --sign none --mix create=1
stop_sink
expect_eq "$(jget '.totals.outcomes["429"]')/$(jget '.totals.retry_after["429"]')" 100/0 \
    "100 answers 429 without Retry-After: none counted"

# 4. 503
start_sink --status 503 --retry-after 5
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 1s --sign none --mix create=1
stop_sink
expect_eq "$(jget '.totals.outcomes["503"]')/$(jget '.totals.outcomes["202"]')" 100/0 "100 answers 503"
conserved
check $? "conserved with 503s"

# 5. double knock: a 401 gets a second knock in the other dialect only with two dialects
start_sink --status 401
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 1s --sign cavage,rfc9421 \
    --mix create=1
stop_sink
check "$RUN_RC" "signed run with double knocking exits 0" || show_run
expect_eq "$(jget .totals.second_knocks)/$(sink_count requests)/$(jget '.totals.outcomes["401"]')" \
    50/100/50 "50 second knocks: the sink saw 100 requests, 50 final 401s"
start_sink --status 401
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 1s --sign cavage --mix create=1
stop_sink
expect_eq "$(jget .totals.second_knocks)/$(sink_count requests)" 0/50 "one dialect: no second knock"

# 6. bad signatures: a target answering 202 to everything accepts them, and it is reported
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 2s --sign cavage \
    --bad-signatures 30% --mix create=1
stop_sink
bad=$(jget '[.totals.bad_signatures.sent[]] | add')
echo "# bad signatures sent: $bad of 200"
[ "$bad" -ge 30 ] && [ "$bad" -le 90 ]
check $? "about 30% of 200 sent bad (got $bad)"
[ "$(jget .accepted_bad)" = "$bad" ] && grep -q '^warning: the target accepted' "$RUN_OUT"
check $? "a target answering 202 accepted them all: accepted_bad and a warning"
[ "$(jget '.totals.bad_signatures.sent.wrong_key')" -gt 0 ] &&
    [ "$(jget '.totals.bad_signatures.sent.stale_date')" -gt 0 ] &&
    [ "$(jget '.totals.bad_signatures.sent.digest')" -gt 0 ]
check $? "all three kinds sent"
start_sink --status 401
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 1s --sign cavage \
    --bad-signatures 30% --mix create=1
stop_sink
expect_eq "$(jget .accepted_bad)" 0 "a target answering 401 accepted none"
! grep -q '^warning: the target accepted' "$RUN_OUT"
check $? "and no warning"

# 7. shedding: a sink that never answers, at most 5 in flight
start_sink --mode hang
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 1s --sign none \
    --max-inflight 5 --timeout 1s --mix create=1
stop_sink
expect_eq "$(jget .totals.scheduled)/$(jget .totals.sent)/$(jget .totals.shed)" 100/5/95 \
    "beyond 5 in flight the other 95 are shed"
expect_eq "$(jget .totals.outcomes.timeout)" 5 "the 5 sent time out"
conserved
check $? "conserved with shedding"

# 8. --source-ips: each instance sends from its own loopback address (the sink counts the
# distinct client addresses); without it, one address
start_sink --listen 127.0.0.1 --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 1s --sign none \
    --source-ips 127.0.0.11-127.0.0.12 --mix create=1
stop_sink
check "$RUN_RC" "a run with --source-ips exits 0" || show_run
expect_eq "$(sink_count peers)/$(jget '.totals.outcomes["202"]')" 2/100 \
    "two instances, two source addresses, 100 answered"
start_sink --listen 127.0.0.1 --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 100 --duration 1s --sign none --mix create=1
stop_sink
expect_eq "$(sink_count peers)" 1 "without --source-ips: one source address"

# 8b. connections opened before the first send (--preconnect): auto opens the first
# second's activities' worth, at most --connections, and the run uses them; 0 opens each
# when a request needs it (--no-check: no preflight connection in the sink's counts;
# connections_before_first counts the one carrying the first request too)
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 20 --duration 1s --sign none \
    --mix create=1 --connections 8 --no-check
stop_sink
check "$RUN_RC" "a run with --preconnect auto exits 0" || show_run
expect_eq "$(sink_count requests)/$(sink_count connections_before_first)/$(sink_count connections)" \
    20/8/8 "auto: 8 connections open when the first request came, and no other opened"
expect_eq "$(jget .config.preconnect)" auto "run.json's config says preconnect auto"
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 20 --duration 1s --sign none \
    --mix create=1 --connections 8 --preconnect 0 --no-check
stop_sink
check "$RUN_RC" "a run with --preconnect 0 exits 0" || show_run
expect_eq "$(sink_count requests)/$(sink_count connections_before_first)" 20/1 \
    "--preconnect 0: only the first request's own connection when it came"
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 20 --duration 1s --sign none \
    --mix create=1 --connections 8 --preconnect 3 --loops 2 --no-check
stop_sink
check "$RUN_RC" "a run with --preconnect 3 --loops 2 exits 0" || show_run
expect_eq "$(sink_count requests)/$(sink_count connections_before_first)" 20/3 \
    "--preconnect 3 shared by 2 loops: 3 connections open when the first request came"

# 8b. a crowd answer over TLS that finds no room for a second (a preloaded shim makes
# GnuTLS say EAGAIN for 5 s, as a full socket would): its connection is cut, and run.json
# counts it and warns
${CC:-cc} -shared -fPIC -o "$T_TMP/uncork_stall.so" "$ROOT/tests/shims/uncork_stall.c" -ldl
check $? "the uncork shim builds"
start_sink --status 202
UNCORK_STALLS=5000 LD_PRELOAD="$T_TMP/uncork_stall.so" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    frun_bg --tls --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 10 --duration 4s \
    --sign none --mix create=1 --no-check
CROWD=$(crowd_url "$RUN_ERR")
code=$(curl -sk -o /dev/null -w '%{http_code}' --max-time 8 -H "Host: flood1.test" "$CROWD/users/user1")
wait "$RUN_PID"
RUN_RC=$?
stop_sink
check "$RUN_RC" "a --tls run with a stalled crowd answer exits 0" || show_run
expect_eq "$code/$(jget .crowd.tls_cut)" 000/1 "the answer's connection cut, and run.json's crowd.tls_cut counts it"
expect_eq "$(jget '[.warnings[] | select(startswith("the crowd cut 1 TLS connections"))] | length')" 1 \
    "and the run warns of it"

# 9. usage errors exit 2 with a message
for args in "--rate 10" "--rate 10 --duration 1s" "--inbox http://127.0.0.1:1/ --stages 10" \
    "--inbox http://127.0.0.1:1/ --rate 10 --duration 1s --sign bogus" \
    "--inbox http://127.0.0.1:1/ --rate 10 --duration 1s --nope" \
    "--inbox http://127.0.0.1:1/ --rate 10 --duration 1s --bad-signatures 200%" \
    "--inbox http://127.0.0.1:1/ --rate 10 --duration 1s --source-ips 10.0.0.9-10.0.0.1" \
    "--inbox http://127.0.0.1:1/ --rate 10 --duration 1s --preconnect many"; do
    # shellcheck disable=SC2086
    frun $args
    [ "$RUN_RC" -eq 2 ] && [ -s "$RUN_ERR" ] && [ ! -e "$RUN_DIR" ]
    check $? "usage error exits 2: $args ($(head -1 "$RUN_ERR"))"
done
"$FLOOD" run --help >"$T_TMP/help" 2>&1
check $? "flood run --help exits 0"
for o in --rate --duration --stages --arrival --mix --max-inflight --timeout --connections --preconnect \
    --source-ips --sign --bad-signatures --seed --persona --personas --inbox --resolve \
    --insecure --cacert --like-object --out --grace --signers --instances --fault; do
    grep -q -- "$o" "$T_TMP/help" || { check 1 "help documents $o"; continue; }
done
check 0 "help documents every option"

done_testing

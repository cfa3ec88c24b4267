#!/usr/bin/env bash
# `flood run` against the reference target (tests/target, Fedify): the sender's Follows come
# back as Accepts, each closing its probe, and run.json's inbound figures fill
# (follow_to_accept_ms, accepts, follows_unanswered). A second run with a 2 s inbox delay on
# one crowd instance shows the target's slower answers in the same histogram.
set -u
cd "$(dirname "$0")/../.."
. tests/tools/target_lib.sh

dir=$(mktemp -d)
pt=""
cleanup() {
    [ -n "$pt" ] && kill "$pt" 2>/dev/null && wait "$pt" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

# run NAME [flood run options...]: a fresh target, an account, then a run of Follows (and
# Creates) at it; run.json in $dir/NAME/run.json. The crowd's port is chosen first, since
# the target sends every *.test fetch there; should another process take it before flood
# run listens (the run then stops at once, "cannot listen on"), both start again on new
# ports.
run() {
    local name=$1
    shift
    local tport fport started rc=1
    for _ in $(seq 10); do
        tport=$(pick_port) && fport=$(pick_port) || return 1
        started=""
        timeout 150 node "$TARGET_DIR/server.mjs" --listen "127.0.0.1:$tport" \
            --domain target.test --resolve-crowd "127.0.0.1:$fport" --workers 2 \
            >"$dir/$name-target.out" 2>"$dir/$name-target.err" &
        pt=$!
        for _ in $(seq 300); do
            grep -q "listening on" "$dir/$name-target.out" && { started=1; break; }
            kill -0 "$pt" 2>/dev/null || break
            sleep 0.1
        done
        if [ -z "$started" ]; then
            kill "$pt" 2>/dev/null
            wait "$pt" 2>/dev/null
            pt=""
            continue
        fi
        curl -s -X POST "http://127.0.0.1:$tport/admin/accounts" -d '{"username":"load0"}' >/dev/null
        timeout 140 "$FLOOD" run --listen "127.0.0.1:$fport" --state "$dir/state" --instances 4 \
            --actors 5 --key-pool 2 --persona "http://target.test:$tport/users/load0" \
            --resolve "target.test:$tport:127.0.0.1" --mix create=50,follow=50 --rate 20 \
            --duration 5s --grace 30s --out "$dir/$name" --quiet "$@" \
            >"$dir/$name-run.out" 2>"$dir/$name-run.err"
        rc=$?
        curl -s "http://127.0.0.1:$tport/stats" >"$dir/$name-stats.json"
        kill "$pt" 2>/dev/null
        wait "$pt" 2>/dev/null
        pt=""
        grep -q "cannot listen on" "$dir/$name-run.err" || break
    done
    return $rc
}
j() { jq -r "$2" "$dir/$1/run.json" 2>/dev/null; }

# show NAME: what a failed run said (its stderr, the target's) and its inbound figures
show() {
    echo "# $1: exit, flood run's stderr:"
    tail -15 "$dir/$1-run.err" | sed 's/^/#   /'
    echo "# $1: the target's stderr:"
    tail -15 "$dir/$1-target.err" | sed 's/^/#   /'
    echo "# $1: inbound $(jq -c '.inbound | {rejected, accepts, follows_sent}' "$dir/$1/run.json" 2>/dev/null)"
}

if run base; then ok "a run of Follows against the target"; else
    bad "a run of Follows against the target"
    show base
fi
sent=$(j base .inbound.follows_sent)
acc=$(j base .inbound.accepts)
# 4 x 5 actors, each following once (the follow state: a Follow comes from an actor that does
# not follow yet; the draws past the twentieth are refollows, counted apart)
check '[ "${sent:-0}" -ge 20 ] && [ "$acc" = "$sent" ]' "every Follow sent ($sent) came back as an Accept ($acc)"
check '[ "$(j base .inbound.follows_unanswered)" = 0 ]' "no Follow left unanswered"
check '[ "$(j base .inbound.follow_to_accept_ms.count)" = "$acc" ]' "the Follow-to-Accept histogram holds every Accept"
p50=$(j base '.inbound.follow_to_accept_ms.p50')
check 'awk -v p="$p50" "BEGIN { exit !(p > 0) }"' "Follow-to-Accept p50 ${p50} ms"
# Follow-to-Accept per second: the series' Accepts, plus those that closed after its last
# second (the grace period), are every Accept the crowd received
sacc=$(j base '[.series[].accepts] | add')
tail_acc=$(j base .probes.after_series.accepts)
check '[ -n "$sacc" ] && [ "$((sacc + tail_acc))" = "$acc" ] && [ "$(j base .probes.accepted)" = "$acc" ]' \
    "per-second Accepts ($sacc in the series + $tail_acc after it) add up to the inbound Accepts ($acc)"
check '[ "$sacc" -gt 0 ]' "the series holds Accepts ($sacc)"
# The target's deliveries the crowd accepted, per second: every Accept is one, so the
# series holds at least the Accepts it counted, and never more than the run's total.
sdel=$(j base '[.series[].deliveries] | add')
tdel=$(j base '[.inbound.deliveries[]] | add')
check '[ "$sdel" -ge "$sacc" ] && [ "$sdel" -le "$tdel" ]' \
    "per-second deliveries ($sdel) hold the series' Accepts ($sacc), at most the run's $tdel"
check '[ "$(j base "[.series[] | select(.accepts > 0) | .f2a_p99_ms >= .f2a_p50_ms and .f2a_p50_ms > 0] | all")" = true ]' \
    "every second with Accepts has Follow-to-Accept p99 >= p50 > 0"
check '[ "$(j base "[.series[] | select(.accepts == 0) | .f2a_p50_ms == 0 and .f2a_p99_ms == 0] | all")" = true ]' \
    "a second without Accepts has no Follow-to-Accept figures"
# Every Accept verified: no signature or key document was wrong. A fetch of the target's key
# that failed (a target too busy to answer within the crowd's 5 s) refuses that delivery
# with 401 and the target delivers it again: every Follow still came back as a verified
# Accept (above), so those are counted, not failed.
verified='[ "$(j base .inbound.rejected.mismatch)" = 0 ] && [ "$(j base .inbound.rejected.key)" = 0 ]'
check "$verified" "every Accept from the target verified ($(j base .inbound.rejected.key_fetch) deliveries refused once as the target's key did not come within 5 s)"
eval "$verified" || show base

# the report of this run draws the Follow charts from those per-second figures
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ] && [ -d tests/browser/node_modules/playwright-core ]; then
    node tests/browser/report.mjs "$dir/base" "$dir/base.png" >"$dir/browser.out" 2>&1
    brc=$?
    sed 's/^ok /# browser: ok /; s/^not ok /# browser: NOT OK /' "$dir/browser.out" | grep -E 'plot-(accepts|f2a)|NOT OK'
    check '[ "$brc" = 0 ] && grep -q "plot-f2a: .Follow-to-Accept p99. adds up" "$dir/browser.out"' \
        "chromium draws the base run's report, Follow-to-Accept per second included"
else
    ok "the report in a real browser # SKIP needs $CHROMIUM and npm ci in tests/browser"
fi

if run slow --fault flood1:delay=2s,scope=inbox; then ok "a run with flood1's inboxes 2 s slow"; else
    bad "a run with flood1's inboxes 2 s slow"
    show slow
fi
max=$(j slow '.inbound.follow_to_accept_ms.max')
check 'awk -v m="$max" "BEGIN { exit !(m >= 2000) }"' "Follow-to-Accept max ${max} ms (>= the 2 s delay)"
smax=$(j slow '[(.series[].f2a_p99_ms), .probes.after_series.f2a_p99_ms] | max')
check 'awk -v m="$smax" "BEGIN { exit !(m >= 2000) }"' "the per-second Follow-to-Accept p99 reaches ${smax} ms (>= 2 s)"
check '[ "$(( $(j slow "[.series[].accepts] | add") + $(j slow .probes.after_series.accepts) ))" = "$(j slow .inbound.accepts)" ]' \
    "slow run: per-second Accepts add up to the inbound Accepts ($(j slow .inbound.accepts))"
check '[ "$(j slow .inbound.faulted.delay)" -gt 0 ] && [ "$(j slow ".inbound.faults[0]")" = "flood1:delay=2s,scope=inbox" ]' \
    "run.json lists the fault and counts the delayed answers ($(j slow .inbound.faulted.delay))"
echo "# base: $(jq -c .inbound.follow_to_accept_ms "$dir/base/run.json" 2>/dev/null)"
echo "# slow: $(jq -c .inbound.follow_to_accept_ms "$dir/slow/run.json" 2>/dev/null)"
echo "# base per second (t accepts f2a_p50 f2a_p99): $(jq -c '[.series[] | [.t, .accepts, .f2a_p50_ms, .f2a_p99_ms]]' "$dir/base/run.json" 2>/dev/null) after: $(jq -c .probes.after_series "$dir/base/run.json" 2>/dev/null)"
echo "# $n checks, $fail failed"
[ "$fail" = 0 ]

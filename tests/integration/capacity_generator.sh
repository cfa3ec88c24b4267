#!/usr/bin/env bash
# flood capacity when flood itself is the limit: a sink that answers 202 at once, and a rate
# of RSA-2048 signatures no two-core machine makes (12,000/s; this one signs about 6,000).
# flood's generator saturates and sends a fraction of what the step offers: the step must
# not pass (the target never got that rate), the verdict must say the limit was flood's,
# not the target's, and the search must not bisect below it.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

start_sink --status 202 || { check 1 "the sink starts"; done_testing; exit 1; }
out=$T_TMP/cap
"$FLOOD" capacity --inbox "http://127.0.0.1:$SINK_PORT/inbox" --listen 127.0.0.1:0 \
    --state "$TEST_STATE" --instances 2 --actors 3 --key-pool 1 --mix create=1 \
    --start 12000 --max-rate 12000 --hold 2s --cooldown 1s --out "$out" >"$out.stdout" 2>"$out.stderr"
rc=$?
sed 's/^/#   /' "$out.stdout"
expect_eq "$rc" 0 "flood capacity finishes"
expect_eq "$(jq -r '.steps[0].flood_limited' "$out/capacity.json")" true \
    "the step says flood was the limit"
expect_eq "$(jq -r '.steps[0].pass' "$out/capacity.json")" false "and does not pass"
expect_eq "$(jq -r '.steps[0].sent_per_s < 0.95 * .steps[0].offered_per_s' "$out/capacity.json")" true \
    "flood sent under 95% of what the tail offered"
expect_eq "$(jq -r '.broke_first' "$out/capacity.json")" generator "what broke first: flood's generator"
expect_eq "$(jq -r '.sustained_rate' "$out/capacity.json")" null "no rate is said to be sustained"
expect_eq "$(jq -r '.steps | length' "$out/capacity.json")" 1 "no bisection below flood's own limit"
grep -q "flood's generator was saturated (it sent [0-9.e+]*/s of [0-9.e+]*/s offered, dispatch lag p99 [0-9]* ms, event loop at [0-9]*% of a core): the limit there was flood's, not the target's" \
    "$out.stdout"
check $? "the verdict says the limit was flood's"
grep -q "broke: flood's generator (saturated" "$out.stdout"
check $? "and so does the step's line"
grep -q "generator was saturated (it sent" "$out/capacity.html"
check $? "and capacity.html"
grep -q "broke: flood's generator (saturated)</td>" "$out/capacity.html"
check $? "whose step table names flood's generator"
expect_eq "$(jq -r '.generator.saturated' "$out/$(jq -r '.steps[0].dir' "$out/capacity.json")/run.json")" \
    true "the step's run.json agrees"
# a failure at the first rate runs again (nothing below it was seen): the step says how
# many runs, why, and how many sustained; its verdict is their majority
runs=$(jq -r '.steps[0].runs' "$out/capacity.json")
expect_eq "$(jq -r '.steps[0] | [.runs >= 2, .runs_sustained, (.repeated_because | IN("confirm a failure", "close to a limit"))] | @tsv' "$out/capacity.json")" \
    "$(printf 'true\t0\ttrue')" "capacity.json: the failed step ran $runs times, none sustained, and says why"
grep -Eq "broke: flood's generator .*\($runs runs, (to confirm a failure|close to a limit): 0 sustained; the last one's figures\)$" "$out.stdout"
check $? "the step's line says the runs, why and how many sustained"
stop_sink
done_testing

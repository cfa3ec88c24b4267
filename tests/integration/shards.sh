#!/usr/bin/env bash
# Shards (docs/SHARDS.md): scripts/shards.sh 2 (two network namespaces, nginx in a third)
# sends exactly the unsharded run's activities (ids, intended times, operations), nginx's
# access log counts the merged 2xx, the merged histograms are the shards' added exactly
# and the counts a single run's; a Poisson run stripes the same way; an Accept reaching
# another shard than its Follow is joined; missing, repeated or foreign shard folders are
# refused; the state travels with its modes.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

SEED=7 RATE=200 DURATION=3s MIX=create=60,follow=25,undo=15
S=$T_TMP/sh

# 1. two shards in their own namespaces, merged
OUT=$S SEED=$SEED RATE=$RATE DURATION=$DURATION MIX=$MIX FLOOD=$FLOOD \
    timeout 300 "$ROOT/scripts/shards.sh" 2 >"$T_TMP/shards.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
    check 0 "scripts/shards.sh 2 # SKIP $(sed -n 's/^shards.sh: SKIP: //p' "$T_TMP/shards.out")"
    NETNS=0
else
    check $rc "scripts/shards.sh 2 runs two namespaced shards, merges, nginx agrees" ||
        sed 's/^/#   /' "$T_TMP/shards.out" | tail -20
    NETNS=1
fi

# the unsharded run, same seed and schedule, on loopback against the sink
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate $RATE --duration $DURATION \
    --seed $SEED --mix $MIX --instances 20 --actors 10 --log-sends "$T_TMP/single.sends"
stop_sink
check "$RUN_RC" "the unsharded run" || show_run
SINGLE=$RUN_DIR

if [ $NETNS = 1 ]; then
    cut -d' ' -f1-3 "$S/shard-0.sends" "$S/shard-1.sends" | sort -n >"$T_TMP/union"
    cut -d' ' -f1-3 "$T_TMP/single.sends" | sort -n >"$T_TMP/single"
    cmp -s "$T_TMP/union" "$T_TMP/single"
    check $? "the shards' activities (number, intended ns, operation) = the unsharded run's, $(wc -l <"$T_TMP/single") of them"
    expect_eq "$(cut -d' ' -f1 "$S/shard-0.sends" "$S/shard-1.sends" | sort | uniq -d | wc -l)" 0 \
        "no activity sent by both shards"
    expect_eq "$(awk '$1 % 2 != 0' "$S/shard-0.sends" | wc -l)/$(awk '$1 % 2 != 1' "$S/shard-1.sends" | wc -l)" 0/0 \
        "shard K sends exactly the activities n with n mod 2 == K"
    expect_eq "$(jq -r .shard.run "$S/shard-0/run.json")" "$(jq -r .shard.run "$S/shard-1/run.json")" \
        "both shards carry the same run id (from --seed and --start-at)"
    M=$S/merged/run.json
    expect_eq "$(jq -s -c '[(map(.generator.steal_cpus) | add), (map(.generator.steal_s) | add)]' \
        "$S/shard-0/run.json" "$S/shard-1/run.json")" \
        "$(jq -c '[.generator.steal_cpus, .generator.steal_s]' "$M")" \
        "merged steal: the shards' CPUs and steal time added"
    expect_eq "$(jq -c '[.totals.scheduled, .totals.sent, ([.operations[] | .scheduled])]' "$M")" \
        "$(jq -c '[.totals.scheduled, .totals.sent, ([.operations[] | .scheduled])]' "$SINGLE/run.json")" \
        "merged totals and per-operation counts = the single run's"
    # the merged histograms are exactly the shards' added up, bucket by bucket
    python3 - "$M" "$S/shard-0/run.json" "$S/shard-1/run.json" <<'PY'
import json, sys
from collections import Counter
def parse(t):
    f = dict(kv.split("=", 1) for kv in t.split()[1:])
    b = Counter()
    for x in filter(None, f["buckets"].split(",")):
        lo, c = x.split(":"); b[int(lo)] += int(c)
    return int(f["count"]), int(f["min"]), int(f["max"]), int(f["sum"]), b
m, shards = json.load(open(sys.argv[1])), [json.load(open(p)) for p in sys.argv[2:]]
for op, e in m["exact"]["ops"].items():
    for k in ("latency", "service", "lag"):
        parts = [parse(s["exact"]["ops"][op][k]) for s in shards]
        got = parse(e[k])
        want = (sum(p[0] for p in parts), sum(p[3] for p in parts),
                sum((p[4] for p in parts), Counter()))
        assert (got[0], got[3], got[4]) == want, (op, k)
        if got[0]:
            assert got[1] == min(p[1] for p in parts if p[0]) and got[2] == max(p[2] for p in parts), (op, k)
PY
    check $? "merged histograms = the shards' merged bucket by bucket (count, min, max, sum exact)"
    expect_eq "$(jq '.totals.latency_ms.count' "$M")" "$(jq '.totals.latency_ms.count' "$SINGLE/run.json")" \
        "merged latency count = the single run's"
    expect_eq "$(jq '[.series[].sent] | add' "$M")" "$(jq .totals.sent "$M")" \
        "the merged series (wall-clock seconds) adds up to the sent total"
    [ -s "$S/merged/report.html" ] && [ -s "$S/merged/latency-all.hgrm" ] && [ -s "$S/merged/summary.md" ]
    check $? "merge wrote report.html, the .hgrm set and summary.md"
    a=$(find "$S/work/state" -name '*.pem' -printf '%m %P\n' | sort | md5sum)
    b=$(find "$S/work/state-1" -name '*.pem' -printf '%m %P\n' | sort | md5sum)
    expect_eq "$b" "$a" "the state exported and imported with tar keeps every key and its mode"
    expect_eq "$(find "$S/work/state-1" -name '*.pem' ! -perm 600 | wc -l)" 0 "keys stay 0600"
fi

# 2. Poisson arrivals stripe the same way (two shards on loopback, no namespaces)
T=$(($(date +%s) + 2))
start_sink --status 202
for k in 0 1; do
    frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 300 --duration 2s --seed 3 \
        --arrival poisson --mix $MIX --shard $k/2 --start-at $T --log-sends "$T_TMP/p$k.sends" --quiet
    eval "P$k=\$RUN_DIR PID$k=\$RUN_PID"
done
wait "$PID0"; r0=$?
wait "$PID1"; r1=$?
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 300 --duration 2s --seed 3 \
    --arrival poisson --mix $MIX --log-sends "$T_TMP/p.sends" --quiet
stop_sink
expect_eq "$r0/$r1/$RUN_RC" 0/0/0 "two Poisson shards and the unsharded run ran"
cut -d' ' -f1-3 "$T_TMP/p0.sends" "$T_TMP/p1.sends" | sort -n >"$T_TMP/pu"
cut -d' ' -f1-3 "$T_TMP/p.sends" | sort -n >"$T_TMP/ps"
cmp -s "$T_TMP/pu" "$T_TMP/ps"
check $? "Poisson: the shards' activities and intended times = the unsharded run's ($(wc -l <"$T_TMP/ps"))"
"$FLOOD" merge "$T_TMP/pm" "$P0" "$P1" >"$T_TMP/pm.out" 2>&1
check $? "Poisson shards merge" || cat "$T_TMP/pm.out"
expect_eq "$(jq .totals.scheduled "$T_TMP/pm/run.json")" "$(wc -l <"$T_TMP/ps")" \
    "merged Poisson scheduled = the unsharded run's"
# a host that took 1.5 s of each shard's two CPUs (edited into copies of their run.json):
# the merged run adds it up and warns
for k in 0 1; do
    eval "src=\$P$k"
    cp -r "$src" "$T_TMP/st$k"
    jq '.generator.steal_s = 1.5 | .generator.steal_cpus = 2 | .series[0].steal_ms = 40' \
        "$src/run.json" >"$T_TMP/st$k/run.json"
done
"$FLOOD" merge "$T_TMP/stm" "$T_TMP/st0" "$T_TMP/st1" >"$T_TMP/stm.out" 2>&1
check $? "shards with steal merge" || cat "$T_TMP/stm.out"
expect_eq "$(jq -c '[.generator.steal_s, .generator.steal_cpus]' "$T_TMP/stm/run.json")" "[3,4]" \
    "merged steal: 3 s over 4 CPUs"
expect_eq "$(jq '[.warnings[] | select(test("^the host took 3000 ms of the generator.s 4 CPUs \\(steal time, [0-9.]*% of theirs\\)"))] | length' "$T_TMP/stm/run.json")" 1 \
    "the merged run warns of the host's steal"
expect_eq "$(jq -s 'map([.series[].steal_ms] | add) | add | round' "$T_TMP/st0/run.json" "$T_TMP/st1/run.json")" \
    "$(jq '[.series[].steal_ms] | add | round' "$T_TMP/stm/run.json")" \
    "merged steal a second: the shards' seconds added (80 ms edited in)"

# 2b. what the target fetched, from whichever shard it reached: the test fetches as a
# target would (an actor three times: twice from shard 0, once from shard 1; another actor
# and a key once from each), and the merge counts repeats as one crowd would have. Each
# shard has its egress proxy too, asked for what it refuses and for tunnels that carry
# nothing (so the fetches above stay the only ones): the merged egress record adds up.
T=$(($(date +%s) + 2))
start_sink --status 202
for k in 0 1; do
    frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 50 --duration 5s --seed 5 \
        --mix create=1 --shard $k/2 --start-at $T --proxy 127.0.0.1:0
    eval "F$k=\$RUN_DIR FPID$k=\$RUN_PID FERR$k=\$RUN_ERR"
done
C0=$(crowd_url "$FERR0") C1=$(crowd_url "$FERR1")
while [ "$(date +%s)" -lt "$T" ]; do sleep 0.1; done # inside the runs' seconds: their series
fetch() { curl -s -o /dev/null -w '%{http_code}\n' -H "Host: flood1.test" "$1$2"; }
{
    fetch "$C0" /users/user1; fetch "$C0" /users/user1; fetch "$C1" /users/user1
    fetch "$C0" /users/user2; fetch "$C1" /users/user2
    fetch "$C0" /users/user2/main-key; fetch "$C1" /users/user2/main-key
} >"$T_TMP/fetched"
for k in 0 1; do
    eval "e=\$FERR$k"
    for _ in $(seq 1 100); do
        p=$(sed -n 's|^flood: run: proxy listening on http://.*:\([0-9]*\)$|\1|p' "$e")
        [ -n "$p" ] && break
        sleep 0.05
    done
    eval "X$k=$p"
done
px_refused() { curl -s -o /dev/null -w '%{http_code}\n' -x "http://127.0.0.1:$1" "$2"; }
px_tunnel() { # PORT HOST: a CONNECT answered, then closed without a byte through it
    exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf 'CONNECT %s:80 HTTP/1.1\r\n\r\n' "$2" >&3
    head -c 12 <&3
    echo
    exec 3>&-
}
{
    px_refused "$X0" http://canary.example/; px_refused "$X0" http://canary.example/
    px_refused "$X1" http://canary.example/; px_refused "$X1" http://10.1.2.3/
    px_tunnel "$X0" flood1.test; px_tunnel "$X1" flood1.test; px_tunnel "$X1" flood2.test
} >"$T_TMP/proxied"
expect_eq "$(sort "$T_TMP/proxied" | uniq -c | awk '{$1 = $1 "x"; print}' | tr '\n' ' ')" "4x 403 3x HTTP/1.1 200 " \
    "each shard's proxy: 4 refused, 3 tunnels opened (proxies on $X0 and $X1)"
wait "$FPID0"; r0=$?
wait "$FPID1"; r1=$?
stop_sink
expect_eq "$r0/$r1/$(sort -u "$T_TMP/fetched" | tr '\n' ' ')" "0/0/200 " \
    "two shards ran, the crowd answered each of the 7 fetches 200 (from $C0 and $C1)"
"$FLOOD" merge "$T_TMP/fm" "$F0" "$F1" >"$T_TMP/fm.out" 2>&1
check $? "shards with fetches merge" || cat "$T_TMP/fm.out"
FM=$T_TMP/fm/run.json
expect_eq "$(jq -c '[.fetches.by_kind.actor | .requests, .repeat_requests, .repeat_urls]' "$FM")" \
    "[5,3,2]" "merged actors: 5 fetches, 3 repeats of 2 URLs (one repeated only across shards)"
expect_eq "$(jq -c '[.fetches.by_kind.key | .requests, .repeat_requests, .repeat_urls]' "$FM")" \
    "[2,1,1]" "merged key: 2 fetches, one from each shard, 1 repeat"
expect_eq "$(jq -c '[.fetches.by_kind.actor.repeat_requests, .fetches.by_kind.key.repeat_requests]' \
    "$F0/run.json")/$(jq -c '.fetches.total.repeat_requests' "$F1/run.json")" "[1,0]/0" \
    "alone, shard 0 saw one repeat and shard 1 none"
expect_eq "$(jq -c '.fetches.top_repeats[0] | [.url, .count, .kind]' "$FM")" \
    '["flood1.test/users/user1",3,"actor"]' "the merged top list counts every shard's fetches"
expect_eq "$(jq -s -c 'map(.fetches.total.bytes) | add' "$F0/run.json" "$F1/run.json")" \
    "$(jq .fetches.total.bytes "$FM")" "merged fetch bytes = the shards' sum"
expect_eq "$(jq '[.series[].fetches.total] | add' "$FM")" 7 \
    "the merged series carries the fetches, second by second (7 in all)"
expect_eq "$(jq '.fetches.amplification.total * 100 | round' "$FM")" \
    "$(jq '7 / .totals.sent * 100 | round' "$FM")" "merged amplification: fetches over the merged sends"
expect_eq "$(jq -s -c 'map(.crowd.requests) | add' "$F0/run.json" "$F1/run.json")" \
    "$(jq .crowd.requests "$FM")" "merged crowd requests = the shards' sum"
expect_eq "$(jq '.series | map(.deliveries != null) | all' "$FM")" true \
    "the merged series keeps the deliveries a second"
# the egress records: every count the shards' sum, the tables joined, conservation again
sums='[.requests, .refused, .connects, .refused_by_reason.not_crowd, .refused_by_reason.address, .tunnels.opened, .connections.accepted, .connections.closed]'
expect_eq "$(jq -s -c "map(.egress | $sums) | transpose | map(add)" "$F0/run.json" "$F1/run.json")" \
    "$(jq -c ".egress | $sums" "$FM")" "merged egress: requests, refusals by reason, CONNECTs, tunnels, connections = the shards' sums"
expect_eq "$(jq -c '.egress | [.requests, .refused, .connects, .refused_by_host["canary.example"].requests, .refused_by_host["10.1.2.3"].requests, .instances["flood1.test"].connects, .instances["flood2.test"].connects]' "$FM")" \
    "[7,4,3,3,1,2,1]" "merged egress: 7 requests, 4 refused (canary.example 3, 10.1.2.3 1), CONNECTs by instance (flood1.test 2, flood2.test 1)"
expect_eq "$(jq -c '.egress | [.conservation.ok, .shards, (.proxies | length), (.not_merged | has("connections.open_max"))]' "$FM")" \
    "[true,2,2,true]" "merged egress conserved, from 2 proxies, the peaks said to be an upper bound"
grep -q '^egress: proxy 127.0.0.1:[0-9]*, 127.0.0.1:[0-9]*: 7 requests' "$T_TMP/fm/summary.md" &&
    grep -q 'id="egress"' "$T_TMP/fm/report.html"
check $? "the merged summary.md and report.html show the egress record"
cp -r "$F1" "$T_TMP/nf1" && rm "$T_TMP/nf1/fetches.tsv"
"$FLOOD" merge "$T_TMP/fr1" "$F0" "$T_TMP/nf1" >"$T_TMP/fr1.out" 2>&1
expect_eq "$?/$(grep -c "nf1/fetches.tsv" "$T_TMP/fr1.out")" 1/1 "a shard without fetches.tsv is refused, named"
cp -r "$F1" "$T_TMP/bf1" && printf 'zz\t1\n' >>"$T_TMP/bf1/fetches.tsv"
"$FLOOD" merge "$T_TMP/fr2" "$F0" "$T_TMP/bf1" >"$T_TMP/fr2.out" 2>&1
expect_eq "$?/$(grep -c "not a URL's key and count" "$T_TMP/fr2.out")" 1/1 "a bad fetches.tsv line is refused"
cp -r "$F1" "$T_TMP/xf1" && jq 'del(.exact.fetches)' "$F1/run.json" >"$T_TMP/xf1/run.json"
"$FLOOD" merge "$T_TMP/fr3" "$F0" "$T_TMP/xf1" >"$T_TMP/fr3.out" 2>&1
expect_eq "$?/$(grep -c "no fetch record where the other shards have one" "$T_TMP/fr3.out")" 1/1 \
    "a shard without the fetch record the others have is refused"

# 3. an Accept reaching the other shard: shard 1 receives the Accepts of shard 0's Follows
cp -r "$P0" "$T_TMP/a0" && cp -r "$P1" "$T_TMP/a1"
awk -F'\t' '$1 == "F" {printf "A\t%s\t%.0f\n", $2, $3 + 50000}' "$P0/follows.tsv" >>"$T_TMP/a1/follows.tsv"
nf=$(grep -c '^F' "$P0/follows.tsv")
"$FLOOD" merge "$T_TMP/am" "$T_TMP/a0" "$T_TMP/a1" >"$T_TMP/am.out" 2>&1
check $? "merge with Accepts on the other shard" || cat "$T_TMP/am.out"
expect_eq "$(jq -c '[.probes.follows_sent, .probes.accepted, .probes.unknown]' "$T_TMP/am/run.json")" \
    "[$(jq .probes.follows_sent "$T_TMP/pm/run.json"),$nf,0]" \
    "every Accept joined to its Follow across shards, none unknown"
expect_eq "$(jq '.probes.follow_to_accept_ms.p50 >= 50 and .probes.follow_to_accept_ms.p99 <= 50.05' "$T_TMP/am/run.json")" true \
    "Follow-to-Accept = Accept arrival - Follow send on the wall clock (50 ms, within 0.1%)"
expect_eq "$(jq '[.series[].accepts] | add' "$T_TMP/am/run.json")" "$nf" \
    "each joined Accept lands in its wall-clock second of the series"

# 4. refusals
"$FLOOD" merge "$T_TMP/r1" "$P0" >"$T_TMP/r1.out" 2>&1
expect_eq "$?/$(grep -c 'shard 1/2 missing' "$T_TMP/r1.out")" 1/1 "a missing shard is refused, named"
"$FLOOD" merge "$T_TMP/r2" "$P0" "$SINGLE" >"$T_TMP/r2.out" 2>&1
expect_eq "$?/$(grep -c 'is from another run' "$T_TMP/r2.out")" 1/1 "a folder from another run is refused"
"$FLOOD" merge "$T_TMP/r3" "$P0" "$P0" >"$T_TMP/r3.out" 2>&1
expect_eq "$?/$(grep -c 'given twice' "$T_TMP/r3.out")" 1/1 "a shard given twice is refused"
"$FLOOD" merge "$T_TMP/r4" "$P0" "$T_TMP/nowhere" >"$T_TMP/r4.out" 2>&1
expect_eq "$?/$(grep -c 'no run.json' "$T_TMP/r4.out")" 1/1 "a folder without run.json is refused"
[ ! -e "$T_TMP/r1" ] && [ ! -e "$T_TMP/r2/run.json" ]
check $? "a refused merge writes nothing"

# 5. usage
"$FLOOD" run --inbox http://127.0.0.1:9/inbox --rate 1 --duration 1s --shard 2/2 >/dev/null 2>"$T_TMP/u1"
expect_eq "$?/$(grep -c 'K/N with 0 <= K < N' "$T_TMP/u1")" 2/1 "--shard 2/2 refused (K counts from 0)"
"$FLOOD" run --inbox http://127.0.0.1:9/inbox --rate 1 --duration 1s --shard 0/2 >/dev/null 2>"$T_TMP/u2"
expect_eq "$?/$(grep -c 'needs --start-at' "$T_TMP/u2")" 2/1 "--shard without --start-at refused"
"$FLOOD" run --inbox http://127.0.0.1:9/inbox --rate 1 --duration 1s --start-at $(($(date +%s) - 3600)) >/dev/null 2>"$T_TMP/u3"
expect_eq "$?/$(grep -c 'in the past' "$T_TMP/u3")" 2/1 "a start an hour ago refused"
done_testing

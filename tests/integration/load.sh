#!/usr/bin/env bash
# A shortened scripts/load.sh against the reference target: a few seconds at a low rate,
# two personas, a small crowd. Checks what a load run promises: every Create the target
# answered 202 is processed and held, no signature failure at the target, an Accept for
# every Follow, the home-timeline probes answered 200, the table row printed.
. "$(dirname "$0")/lib.sh"

if [ ! -d "$ROOT/tests/target/node_modules/@fedify/fedify" ]; then
    echo "# the reference target's npm packages are missing (scripts/deps.sh)"
    check 1 "reference target installed"
    done_testing
    exit 1
fi
OUTD=$T_TMP/load
RATE=3 SECS=4
"$ROOT/scripts/load.sh" --flood="$FLOOD" --state="$TEST_STATE" --out="$OUTD" \
    --rate=$RATE --seconds=$SECS --personas=2 --follows=3 --instances=2 --actors=5 \
    --setup-timeout=90 --drain-timeout=120 >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
check $rc "load.sh ran every step (exit status $rc)"
if [ "$rc" -ne 0 ]; then
    sed 's/^/#   /' "$T_TMP/err" | tail -30
fi

grep -qE "^\| $RATE \| $SECS \| 2 \| off \| [0-9]+ \| [0-9]+ / [0-9]+ \| [0-9]+ / [0-9]+ \| [0-9]+ \| [0-9.]+ s \| [0-9]+( \([0-9]+/[0-9]+ timed out\))? \| [0-9]+ / [0-9]+ / [0-9]+ \| " "$T_TMP/out"
check $? "the table row is printed with every figure"
sed 's/^/#   /' "$T_TMP/out" | grep '^#   |' | tail -1
grep -q "^results: $OUTD" "$T_TMP/out"
check $? "the results folder is printed"
for f in run.json stats.jsonl stats-final.json probe.csv summary.md flood/follow-to-accept.hgrm; do
    [ -s "$OUTD/$f" ]
    check $? "results hold $f"
done

R=$OUTD/run.json S=$OUTD/stats-final.json
if [ -s "$R" ] && [ -s "$S" ]; then
    c202=$(jq '.operations.create.outcomes."202"' "$R")
    [ "$c202" -gt 0 ]
    check $? "the target answered 202 to flood's Creates ($c202)"
    expect_eq "$(jq '.totals.unfinished + .totals.outcomes.timeout + .totals.outcomes.transport' "$R")" 0 \
        "no flood request unfinished, timed out or failed"
    expect_eq "$(jq '.activities.Create.enqueued' "$S")" "$c202" "every Create answered 202 entered the target's queue"
    expect_eq "$(jq '.activities.Create.ok' "$S")" "$c202" "every Create answered 202 was processed (ok)"
    expect_eq "$(jq '.store.posts_held - .store.local_posts' "$S")" "$c202" \
        "every Create answered 202 is held as a status"
    expect_eq "$(jq '.store.local_posts' "$S")" 4 "each persona's two posts are held"
    expect_eq "$(jq '.queue.depth' "$S")" 0 "the queue is empty at the end"
    expect_eq "$(jq '(.inbox.rejected.signature // 0) + (.inbox.rejected["signer-mismatch"] // 0)' "$S")" 0 \
        "no signature failure at the target"
    expect_eq "$(jq '.store.following' "$S")" 6 "every setup Follow (2 personas x 3) was accepted"
    expect_eq "$(jq '.store.following_pending' "$S")" 0 "no setup Follow left pending"
    sent=$(jq '.probes.follows_sent' "$R")
    got=$(jq '.inbound.deliveries.Accept' "$R")
    late=$(grep -c '^inbound: Accept from .*: 2[0-9][0-9]$' "$OUTD/crowd-setup.log")
    [ "$sent" -gt 0 ]
    check $? "flood sent Follows ($sent)"
    expect_eq "$((got + late))" "$sent" "the target sent an Accept for every Follow ($got during the run, $late after)"
    expect_eq "$(jq '.probes.accepted' "$R")" "$got" \
        "flood matched every Accept it received to its Follow (Follow-to-Accept probes closed)"
    expect_eq "$(jq '.activities.Follow.ok' "$S")" "$sent" "the target processed every Follow"
else
    check 1 "run.json and the final stats are there"
fi

n=$(awk -F, 'NR > 1' "$OUTD/probe.csv" 2>/dev/null | wc -l)
[ "$n" -ge $((SECS * 2)) ]
check $? "the home timeline was read during the run ($n reads)"
expect_eq "$(awk -F, 'NR > 1 && $2 != 200' "$OUTD/probe.csv" 2>/dev/null | wc -l)" 0 "every home-timeline read answered 200"
grep -q 'queue drained' "$OUTD/log.txt"
check $? "the drain was waited for and timed"
[ ! -e "$OUTD/error.txt" ]
check $? "no error recorded"

# Negative twin: a wrong binary path is a clear error, not a run.
"$ROOT/scripts/load.sh" --flood="$T_TMP/no-such-flood" --out="$T_TMP/nf" --rate=1 --seconds=1 \
    >"$T_TMP/out2" 2>"$T_TMP/err2"
expect_eq "$?" 1 "a missing flood binary exits 1"
grep -q "no flood binary at" "$T_TMP/err2"
check $? "and says so"
done_testing

#!/usr/bin/env bash
# scripts/load.sh's failure paths: a target that is down, a token it refuses, bad usage.
# Each gives a clear error and a non-zero exit, and keeps what was collected.
. "$(dirname "$0")/lib.sh"
LOAD=$ROOT/scripts/load.sh

# A port nothing listens on: bind one, note it, close it.
DEAD=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
echo "tok-never-used" >"$T_TMP/tokens"

start=$SECONDS
timeout 120 "$LOAD" --flood="$FLOOD" --state="$TEST_STATE" --target="http://127.0.0.1:$DEAD" \
    --token-file="$T_TMP/tokens" --rate=1 --seconds=1 --out="$T_TMP/down" >"$T_TMP/o1" 2>"$T_TMP/e1"
expect_eq "$?" 1 "target down: exit status 1"
grep -q "reaching the target: target not reachable at http://127.0.0.1:$DEAD" "$T_TMP/e1"
check $? "target down: the error names the step and the address"
sed 's/^/#   /' "$T_TMP/e1" | grep -v '^#   \[' | head -3
[ -s "$T_TMP/down/error.txt" ] && grep -q "not reachable" "$T_TMP/down/summary.md"
check $? "target down: error.txt and summary.md are kept in the results folder"
[ -s "$T_TMP/down/log.txt" ]
check $? "target down: the log of the steps so far is kept"
[ $((SECONDS - start)) -lt 60 ]
check $? "target down: the failure is quick ($((SECONDS - start)) s)"

# A live reference target, and a token it does not know.
node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test >"$T_TMP/target.log" 2>&1 &
TPID=$!
T_PIDS="$T_PIDS $TPID"
TPORT=""
for _ in $(seq 1 300); do
    TPORT=$(sed -n 's/^listening on http:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$T_TMP/target.log" | head -1)
    [ -n "$TPORT" ] && break
    kill -0 "$TPID" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$TPORT" ]; then
    sed 's/^/#   /' "$T_TMP/target.log"
    check 1 "the reference target starts"
else
    echo "0123456789abcdef-not-a-token" >"$T_TMP/bad"
    timeout 120 "$LOAD" --flood="$FLOOD" --state="$TEST_STATE" --target="http://127.0.0.1:$TPORT" \
        --token-file="$T_TMP/bad" --rate=1 --seconds=1 --out="$T_TMP/badtok" >"$T_TMP/o2" 2>"$T_TMP/e2"
    expect_eq "$?" 1 "bad token: exit status 1"
    grep -q "reading the tokens: token 1 of '$T_TMP/bad' refused: HTTP 401" "$T_TMP/e2"
    check $? "bad token: the error says the target refused it (401)"
    sed 's/^/#   /' "$T_TMP/e2" | grep -v '^#   \[' | head -2
    [ -s "$T_TMP/badtok/error.txt" ]
    check $? "bad token: error.txt is kept"

    # Its positive twin: a token the target made is taken.
    tok=$(curl -s -X POST -H 'content-type: application/json' -d '{"username":"lf0"}' \
        "http://127.0.0.1:$TPORT/admin/accounts" | jq -r .token)
    echo "lf0 $tok" >"$T_TMP/good"
    # --follows=0 and an unreachable crowd name make the run stop after the token step
    # only if the token was refused; here it must get past it.
    timeout 120 "$LOAD" --flood="$FLOOD" --state="$TEST_STATE" --target="http://127.0.0.1:$TPORT" \
        --token-file="$T_TMP/good" --rate=1 --seconds=1 --follows=0 --drain-timeout=5 \
        --quiet-seconds=1 --out="$T_TMP/goodtok" >"$T_TMP/o3" 2>"$T_TMP/e3"
    grep -q "personas: lf0" "$T_TMP/goodtok/log.txt"
    check $? "good token: the persona is read from verify_credentials"
    ! grep -q "refused" "$T_TMP/e3"
    check $? "good token: not refused"
    stop_pid "$TPID"
fi

# The reference target dies in the middle of the flood: a clear error, exit 1, and what
# was collected (flood's results, the stats so far, the probe) kept.
if [ -d "$ROOT/tests/target/node_modules/@fedify/fedify" ]; then
    timeout 300 "$LOAD" --flood="$FLOOD" --state="$TEST_STATE" --rate=5 --seconds=8 --personas=1 \
        --follows=1 --instances=2 --actors=5 --out="$T_TMP/dies" >"$T_TMP/o8" 2>"$T_TMP/e8" &
    LPID=$!
    killed=0
    for _ in $(seq 1 1200); do
        if grep -q 'flood run: crowd on' "$T_TMP/dies/log.txt" 2>/dev/null; then
            sleep 2
            kill "$(cat "$T_TMP/dies/.work/target.pid")" 2>/dev/null && killed=1
            break
        fi
        kill -0 "$LPID" 2>/dev/null || break
        sleep 0.1
    done
    wait "$LPID"
    rc=$?
    check $((1 - killed)) "target dies mid-run: the target was stopped during the flood"
    expect_eq "$rc" 1 "target dies mid-run: exit status 1"
    grep -q "the reference target exited during the" "$T_TMP/e8"
    check $? "target dies mid-run: the error says the target exited"
    sed 's/^/#   /' "$T_TMP/e8" | grep '^#   load.sh:' | head -2
    [ -s "$T_TMP/dies/run.json" ] && [ -s "$T_TMP/dies/probe.csv" ] && [ -s "$T_TMP/dies/error.txt" ]
    check $? "target dies mid-run: run.json, probe.csv and error.txt are kept"
fi

# Usage errors: exit 2 with the option named.
"$LOAD" --rate=fast >/dev/null 2>"$T_TMP/e4"
expect_eq "$?" 2 "--rate=fast is a usage error"
grep -q -- "--rate: expected a number" "$T_TMP/e4"
check $? "and names --rate"
"$LOAD" --target=https://example.test >/dev/null 2>"$T_TMP/e5"
expect_eq "$?" 2 "--target without --token-file is a usage error"
"$LOAD" --rate 5 >/dev/null 2>"$T_TMP/e6"
expect_eq "$?" 2 "an option without '=' is a usage error"
"$LOAD" --help >"$T_TMP/o7" 2>&1
expect_eq "$?" 0 "--help exits 0"
grep -q "^usage: scripts/load.sh" "$T_TMP/o7"
check $? "--help prints the usage"
done_testing

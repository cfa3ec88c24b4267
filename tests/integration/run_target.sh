#!/usr/bin/env bash
# `flood run` against the reference target (tests/target, Fedify): a persona discovered by
# its actor URL, signed deliveries that the target verifies (its own /stats count them),
# counts conserved; deliberately bad signatures refused by the target and not reported as
# accepted.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

need_target

# start_target: TPID, TPORT; the crowd will listen on CPORT
start_target() {
    CPORT=$(free_port)
    node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$CPORT" >"$T_TMP/target.out" 2>"$T_TMP/target.err" &
    TPID=$!
    T_PIDS="$T_PIDS $TPID"
    TPORT=""
    for _ in $(seq 1 300); do
        TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/target.out")
        [ -n "$TPORT" ] && break
        sleep 0.1
    done
    [ -n "$TPORT" ] &&
        curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
            "http://127.0.0.1:$TPORT/admin/accounts" >/dev/null
}

tstats() {
    curl -sf "http://127.0.0.1:$TPORT/stats" | jq -r "$1"
}

target_run() {
    frun --listen "127.0.0.1:$CPORT" --persona "http://target.test:$TPORT/users/alice" \
        --resolve "target.test:$TPORT:127.0.0.1" --timeout 20s --grace 3s "$@"
}

# 1. signed deliveries, verified by the target
start_target
check $? "the reference target starts and has an account"
target_run --rate 15 --duration 2s --sign cavage --mix create=70,follow=30
check "$RUN_RC" "a run against the target exits 0" || show_run
sent=$(jget .totals.sent)
expect_eq "$sent" 30 "30 sent (15/s x 2 s)"
conserved
check $? "conserved"
expect_eq "$(jget '.totals.outcomes["202"]')" "$sent" "every delivery answered 202"
expect_eq "$(tstats .inbox.accepted)" "$sent" "the target verified and accepted all $sent"
expect_eq "$(tstats '[.inbox.rejected[]] | add // 0')" 0 "the target rejected none"
grep -q "persona http://target.test:$TPORT/users/alice: actor" "$RUN_ERR"
check $? "the persona was discovered (actor and inbox)"

# 2. RFC 9421 first, cavage on a second knock: a target that does not verify RFC 9421
# (Fedify 1.5 here) answers 401 and takes the cavage knock; one that does takes the first
before=$(tstats .inbox.accepted)
target_run --rate 15 --duration 1s --sign rfc9421,cavage --mix create=1
check "$RUN_RC" "an RFC 9421-first run exits 0" || show_run
sent=$(jget .totals.sent)
knocks=$(jget .totals.second_knocks)
echo "# second knocks: $knocks of $sent"
expect_eq "$(jget '.totals.outcomes["202"]')" "$sent" "all $sent accepted in the end"
[ "$knocks" = 0 ] || [ "$knocks" = "$sent" ]
check $? "second knocks are all or none, never partial ($knocks)"
expect_eq "$(tstats .inbox.accepted)" "$((before + sent))" "the target verified them all"

# 3. its twin: every signature deliberately bad, the target refuses them all
before=$(tstats .inbox.accepted)
target_run --rate 15 --duration 1s --sign cavage --bad-signatures 100% --mix create=1
check "$RUN_RC" "a run of bad signatures exits 0" || show_run
sent=$(jget .totals.sent)
ok=$(jget '.totals.outcomes["200"] + .totals.outcomes["202"] + .totals.outcomes["2xx_other"]')
expect_eq "$ok/$(jget .accepted_bad)" 0/0 "none of $sent bad signatures answered 2xx"
expect_eq "$(tstats .inbox.accepted)" "$before" "the target accepted none of them"
expect_eq "$(jget '.totals.outcomes["401"] + .totals.outcomes["4xx_other"]')" "$sent" \
    "all refused with 4xx"

done_testing

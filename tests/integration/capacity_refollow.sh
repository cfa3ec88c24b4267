#!/usr/bin/env bash
# flood capacity against a target that ignores a repeated Follow gives the verdict of one that
# answers it again. The crowd (20 actors, one state folder each search) follows the persona
# across the steps (warm-up, 2.5/s, 5/s, 10/s, judged on Follow-to-Accept and the answers);
# once every actor follows, the Follows drawn are sent as Undos of an earlier step's follows
# (--refollow alternate, capacity's default), whose actors follow again in the next step, so
# no step repeats a Follow and none races an Undo: both searches reach --max-rate 10/s, well
# inside the targets' capacity (1 worker, 25 ms an activity). Before the follow state the
# ignoring target's search stopped at the first step with a repeated Follow (a Follow
# unanswered).
. "$(dirname "$0")/lib.sh"

for tool in node jq curl python3; do
    command -v "$tool" >/dev/null 2>&1 || { check 1 "$tool is installed"; done_testing; exit 1; }
done
. "$ROOT/tests/tools/ports.sh" # pick_port

# start_target NAME [options]: NAME_PID, NAME_TPORT, NAME_CPORT
start_target() {
    local name=$1 cport tport pid
    shift
    cport=$(pick_port)
    : >"$T_TMP/$name.out"
    node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$cport" --workers 1 --work-ms 25 "$@" \
        >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" &
    pid=$!
    T_PIDS="$T_PIDS $pid"
    tport=""
    for _ in $(seq 1 300); do
        tport=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/$name.out")
        [ -n "$tport" ] && break
        sleep 0.1
    done
    [ -n "$tport" ] &&
        curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
            "http://127.0.0.1:$tport/admin/accounts" >/dev/null || return 1
    eval "${name}_PID=$pid ${name}_TPORT=$tport ${name}_CPORT=$cport"
}

# search NAME: capacity against target NAME, its own state folder (keys from the test state)
search() {
    local name=$1 tport cport
    tport=$(eval echo "\$${name}_TPORT")
    cport=$(eval echo "\$${name}_CPORT")
    mkdir -p "$T_TMP/$name.state"
    cp -r "$TEST_STATE/keys" "$T_TMP/$name.state/" 2>/dev/null
    "$FLOOD" capacity --listen "127.0.0.1:$cport" --persona "http://target.test:$tport/users/alice" \
        --resolve "target.test:$tport:127.0.0.1" --state "$T_TMP/$name.state" --instances 4 \
        --actors 5 --key-pool 1 --mix create=50,follow=50 --timeout 10s --hold 6s --cooldown 5s \
        --start 2.5 --factor 2 --max-rate 10 --refine 0 --max-f2a 5s --max-p99 3s \
        --confirm no --out "$T_TMP/$name" \
        >"$T_TMP/$name.stdout" 2>"$T_TMP/$name.stderr"
    echo $? >"$T_TMP/$name.rc"
}

start_target answers
check $? "a target that answers a repeated Follow again starts"
start_target ignores --ignore-repeat-follow
check $? "a target that ignores it (--ignore-repeat-follow) starts"
# the two searches side by side: each target has one worker of its own
search answers &
p1=$!
search ignores &
p2=$!
wait "$p1" "$p2"
for t in answers ignores; do
    expect_eq "$(cat "$T_TMP/$t.rc")" 0 "$t: flood capacity exits 0" ||
        sed 's/^/#   /' "$T_TMP/$t.stderr" | tail -5
    sed 's/^/#   /' "$T_TMP/$t.stdout" | tail -2
done
va=$(jq -r '.sustained_rate // 0' "$T_TMP/answers/capacity.json")
vi=$(jq -r '.sustained_rate // 0' "$T_TMP/ignores/capacity.json")
expect_eq "$vi" "$va" "the same verdict: sustains $va/s against either"
[ "$(jq -r '.sustained_rate >= 10' "$T_TMP/ignores/capacity.json")" = true ]
check $? "past the steps where actors follow twice (the --max-rate 10/s sustained)"
# --refollow alternate (capacity's default): a step's Follows come from actors that do not
# follow, those a step undid among them; once every actor follows, the Follows drawn are
# sent as Undos of an earlier step's follows, which the next step follows again: every step
# past the warm-up has first Follows, all accepted, and no refollow is sent
for t in answers ignores; do
    judged=1 ref=0 undos=0 steps=""
    for d in $(jq -r '.steps[].dir' "$T_TMP/$t/capacity.json"); do
        f=$(jq -r '.mix.kinds.follow.sent // 0' "$T_TMP/$t/$d/run.json")
        a=$(jq -r '.probes.accepted // 0' "$T_TMP/$t/$d/run.json")
        u=$(jq -r '.mix.kinds.undo.sent // 0' "$T_TMP/$t/$d/run.json")
        ref=$((ref + $(jq -r '.mix.kinds.refollow.sent // 0' "$T_TMP/$t/$d/run.json")))
        undos=$((undos + u))
        steps="$steps $d:$f/$a/$u"
        { [ "$f" -gt 0 ] && [ "$a" = "$f" ]; } || judged=0
    done
    echo "# $t: step:follows/accepted/undos$steps"
    [ "$judged" = 1 ] && [ "$ref" = 0 ] && [ "$undos" -gt 0 ]
    check $? "$t: every step judged Follow-to-Accept on first Follows, all accepted, $undos Undos for the next steps, no refollow"
done
ls "$T_TMP/ignores.state/follows/"*.tsv >/dev/null 2>&1
check $? "the follow state carried across the steps in the state folder"
done_testing

#!/usr/bin/env bash
# scripts/load.sh with the target's only way to the crowd given by flood: --proxy (the
# reference target's outgoing proxy, no --resolve-crowd) and --dns (its resolver, no
# --resolve-crowd, no hosts line), each a short run on loopback. Checks every setup Follow
# accepted through that way alone, every fetch the target made counted by a crowd process
# (the setup crowd's and flood run's), and the egress record and the name server's counts
# in run.json and summary.md. The --dns run binds port 53 and 80 of an address of its own
# in 127.0.0.0/8: root only, skipped otherwise.
. "$(dirname "$0")/lib.sh"

if [ ! -d "$ROOT/tests/target/node_modules/@fedify/fedify" ]; then
    echo "# the reference target's npm packages are missing (scripts/deps.sh)"
    check 1 "reference target installed"
    done_testing
    exit 1
fi
RATE=3 SECS=2 PERSONAS=1 FOLLOWS=3
# load NAME OPTIONS...: a short load.sh run into $T_TMP/NAME; its exit status
load() {
    local name=$1
    shift
    "$ROOT/scripts/load.sh" --flood="$FLOOD" --state="$TEST_STATE" --out="$T_TMP/$name" \
        --rate=$RATE --seconds=$SECS --personas=$PERSONAS --follows=$FOLLOWS --instances=2 \
        --actors=5 --setup-timeout=90 --drain-timeout=120 "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    local rc=$?
    [ "$rc" -eq 0 ] || sed 's/^/#   /' "$T_TMP/$name.err" | tail -20
    return $rc
}
# the checks every run shares: follows accepted, the target's fetches all counted by the crowd
common() {
    local d=$T_TMP/$1 what=$2
    local S=$d/stats-final.json R=$d/run.json
    expect_eq "$(jq '.store.following' "$S")" $((PERSONAS * FOLLOWS)) \
        "$what: every setup Follow ($PERSONAS x $FOLLOWS) accepted"
    expect_eq "$(jq '.config.resolve_crowd' "$S")" null "$what: the target has no --resolve-crowd"
    expect_eq "$(jq '(.inbox.rejected.signature // 0) + (.inbox.rejected["signer-mismatch"] // 0)' "$S")" 0 \
        "$what: no signature failure at the target"
    local tf cf sf
    tf=$(jq '.fetches.total.count' "$S")
    cf=$(jq '.fetches.total.requests' "$R")
    sf=$(sed -n 's/^serve: fetches \([0-9]*\).*/\1/p' "$d/crowd-setup.log")
    [ "${tf:-0}" -gt 0 ] && [ "$(jq '.fetches.total.errors' "$S")" = 0 ]
    check $? "$what: the target fetched from the crowd ($tf GETs), none failed"
    expect_eq "$((cf + sf))" "$tf" "$what: every fetch counted by a crowd (flood run $cf + the setup crowd $sf)"
    grep -q '^results: ' "$T_TMP/$1.out" && [ ! -e "$d/error.txt" ]
    check $? "$what: the table row and the results folder printed, no error"
}

# 1. --proxy: the reference target's outgoing proxy is load.sh's relay to the proxy of the
# crowd process answering at the time
load proxy --proxy=127.0.0.1:0
check $? "load.sh --proxy=127.0.0.1:0 ran every step"
D=$T_TMP/proxy
if [ -s "$D/run.json" ] && [ -s "$D/stats-final.json" ]; then
    PX=$(jq -r '.config.proxy' "$D/stats-final.json")
    grep -q "egress proxy for the target: $PX\$" "$D/log.txt"
    check $? "the target's --proxy ($PX) is the address load.sh printed"
    common proxy "--proxy"
    R=$D/run.json
    expect_eq "$(jq '.egress.conservation.ok' "$R")/$(jq '.egress.refused' "$R")/$(jq '.egress.malformed' "$R")" true/0/0 \
        "run.json egress (flood run's proxy): conserved, nothing refused or malformed"
    n=$(jq '.egress.connects + .egress.answered' "$R")
    [ "$n" -gt 0 ] && [ "$(jq '.egress.instances | length' "$R")" -gt 0 ]
    check $? "the target reached flood run's crowd through its proxy ($n CONNECTs and requests, by instance)"
    expect_eq "$(jq '[.egress.instances[].connects] | add' "$R")" "$(jq '.egress.connects' "$R")" \
        "every CONNECT counted by its instance"
    line=$(grep '^egress conserved: ' "$D/crowd-setup.log")
    t=$(echo "$line" | sed -n 's/.* tunnelled \([0-9]*\) .*/\1/p')
    [ "${t:-0}" -gt 0 ] && echo "$line" | grep -q "refused 0 .*tunnels $t = closed $t + open 0"
    check $? "the setup crowd's proxy: $t tunnels, none refused, every tunnel closed at its end" ||
        echo "# $line"
    grep -q "^- egress (flood run's proxy, behind $PX): .*conserved: true" "$D/summary.md" &&
        grep -q "^- egress (the setup crowd's proxy" "$D/summary.md"
    check $? "summary.md has both proxies' egress lines"
else
    check 1 "the --proxy run's run.json and final stats are there"
fi

# 2. --dns: the reference target's resolver is the setup crowd's name server; the crowd's
# names resolve to the relay's address, on port 80 as the crowd's URLs say
if [ "$(id -u)" = 0 ]; then
    A=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
    load dns --dns=$A:53 --crowd-listen=$A:80
    check $? "load.sh --dns=$A:53 --crowd-listen=$A:80 ran every step"
    D=$T_TMP/dns
    if [ -s "$D/run.json" ] && [ -s "$D/stats-final.json" ]; then
        expect_eq "$(jq -r '.config.dns' "$D/stats-final.json")" "$A:53" "the target's resolver is flood's name server"
        common dns "--dns"
        line=$(sed -n 's/^serve: name server: //p' "$D/crowd-setup.log")
        q=$(echo "$line" | sed -n 's/.*address \([0-9]*\),.*/\1/p')
        [ "${q:-0}" -gt 0 ] && echo "$line" | grep -q 'malformed 0'
        check $? "the name server answered the crowd's names ($line)"
        grep -q "^- name server ($A:53, the setup crowd's): .*address $q," "$D/summary.md"
        check $? "summary.md has the name server's line"
    else
        check 1 "the --dns run's run.json and final stats are there"
    fi
else
    check 0 "load.sh --dns # SKIP binds port 53 and 80: root only"
fi

# bad options: a usage error naming the option, before anything starts
"$ROOT/scripts/load.sh" --flood="$FLOOD" --out="$T_TMP/bad" --proxy=nonsense >/dev/null 2>"$T_TMP/bad.err"
expect_eq "$?/$(grep -c "^load.sh: --proxy: expected ADDR:PORT, got 'nonsense'" "$T_TMP/bad.err")" 2/1 "--proxy=nonsense: usage error naming it"
"$ROOT/scripts/load.sh" --flood="$FLOOD" --out="$T_TMP/bad" --dns=127.0.0.1:0 >/dev/null 2>"$T_TMP/bad.err"
expect_eq "$?/$(grep -c "^load.sh: --dns: expected ADDR:PORT with a fixed port" "$T_TMP/bad.err")" 2/1 "--dns with port 0: usage error saying why"
"$ROOT/scripts/load.sh" --flood="$FLOOD" --out="$T_TMP/bad" --dns=127.0.0.1:53 >/dev/null 2>"$T_TMP/bad.err"
expect_eq "$?/$(grep -c "^load.sh: --dns: the crowd's names resolve to --crowd-listen's address on port 80" "$T_TMP/bad.err")" 2/1 \
    "--dns with the relay on any port: usage error (the answers name no port)"
done_testing

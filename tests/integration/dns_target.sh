#!/usr/bin/env bash
# The crowd's name server (--dns) as a target's only way to the crowd's names: the reference
# target (tests/target, Fedify) runs in a network namespace of its own whose resolv.conf
# (/etc/netns/NAME/resolv.conf, bind-mounted by `ip netns exec`) names flood's name server,
# with no --resolve-crowd and no hosts line. flood runs in the same namespace with 1,000
# instances and sends Follows; the target resolves each sender's host through flood, fetches
# its key, verifies, and answers with Accepts. Every Follow accepted, every fetch the target
# made counted by the crowd, the queries counted in run.json's "dns". Skips when `ip netns`
# is not permitted.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

skip_all() {
    check 0 "the target resolves the crowd through flood --dns # SKIP $1"
    done_testing
    exit 0
}
need_target
command -v getent >/dev/null 2>&1 || { check 1 "getent is installed"; done_testing; exit 1; }
[ "$(id -u)" = 0 ] || skip_all "needs root for ip netns"
[ -f /etc/resolv.conf ] || skip_all "no /etc/resolv.conf for ip netns exec to cover"
NS=fldns$$r$RANDOM
ip netns add "$NS" 2>/dev/null || skip_all "ip netns add is not permitted here"
ns_cleanup() {
    ip netns pids "$NS" 2>/dev/null | xargs -r kill 2>/dev/null
    sleep 0.3
    ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    rm -rf "/etc/netns/$NS"
    t_cleanup
}
trap ns_cleanup EXIT
ip -n "$NS" link set lo up || skip_all "cannot bring lo up in a namespace"
mkdir -p "/etc/netns/$NS" &&
    printf 'nameserver 127.0.0.1\noptions timeout:2 attempts:2\n' >"/etc/netns/$NS/resolv.conf"
check $? "the namespace's resolv.conf names 127.0.0.1 (flood's name server, port 53)"
NX=(ip netns exec "$NS")

# The namespace is this test's alone: fixed ports are free in it.
TPORT=8200 CPORT=8080
"${NX[@]}" node "$ROOT/tests/target/server.mjs" --listen "127.0.0.1:$TPORT" --domain target.test \
    >"$T_TMP/target.out" 2>"$T_TMP/target.err" &
T_PIDS="$T_PIDS $!"
for _ in $(seq 300); do
    grep -q "^listening on" "$T_TMP/target.out" && break
    sleep 0.1
done
"${NX[@]}" curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
    "http://127.0.0.1:$TPORT/admin/accounts" >/dev/null
check $? "the reference target starts in the namespace, without --resolve-crowd" ||
    sed 's/^/#   /' "$T_TMP/target.err" | tail -5
tstats() { "${NX[@]}" curl -sf "http://127.0.0.1:$TPORT/stats" | jq -r "$1"; }

RUN_DIR=$T_TMP/run
"${NX[@]}" "$FLOOD" run --listen "127.0.0.1:$CPORT" --public-port "$CPORT" --dns 127.0.0.1:53 \
    --state "$TEST_STATE" --instances 1000 --actors 2 --key-pool 1 \
    --persona "http://target.test:$TPORT/users/alice" --resolve "target.test:$TPORT:127.0.0.1" \
    --mix follow=1 --rate 20 --duration 3s --accept-wait 30s --timeout 20s --grace 3s \
    --out "$RUN_DIR" >"$T_TMP/run.out" 2>"$T_TMP/run.err" &
RUN_PID=$!
T_PIDS="$T_PIDS $RUN_PID"
for _ in $(seq 300); do
    grep -q "dns on 127.0.0.1:53" "$T_TMP/run.err" && break
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.1
done
grep -q "flood: run: dns on 127.0.0.1:53" "$T_TMP/run.err"
check $? "flood run says where its name server listens" || sed 's/^/#   /' "$T_TMP/run.err" | tail -5

# the namespace's resolver (glibc, as Node's lookup) goes to flood for crowd names only
expect_eq "$("${NX[@]}" getent ahosts flood1000.test | awk '{print $1}' | sort -u | tr '\n' ' ')" \
    "127.0.0.1 " "getent: flood1000.test is the crowd's address"
"${NX[@]}" getent hosts example.com >/dev/null
check $((! $?)) "getent: example.com does not resolve (REFUSED, never forwarded)"
"${NX[@]}" getent hosts flood1001.test >/dev/null
check $((! $?)) "getent: flood1001.test (past the crowd) does not resolve"

wait "$RUN_PID"
RUN_RC=$?
check "$RUN_RC" "the run exits 0" || sed 's/^/#   /' "$T_TMP/run.err" | tail -8
jr() { jq -r "$1" "$RUN_DIR/run.json"; }
follows=$(jr '.operations.follow.scheduled')
expect_eq "$follows" 60 "60 Follows sent (20/s x 3 s)"
expect_eq "$(jr '.operations.follow.outcomes["202"]')" "$follows" "the target answered 202 to all"
expect_eq "$(tstats .inbox.accepted)" "$follows" "the target verified every Follow"
expect_eq "$(jr '.inbound.accepts')" "$follows" "an Accept came back for every Follow"
expect_eq "$(tstats '.fetches.by_kind | [.[].errors] | add')" 0 "none of the target's fetches failed"
tf=$(tstats '.fetches.by_kind | [.[].count] | add')
cf=$(jr '.fetches.total.requests')
[ "${tf:-0}" -gt 0 ]
check $? "the target fetched from the crowd ($tf GETs)"
expect_eq "$cf" "$tf" "the crowd counted every fetch the target made"
addr=$(jr '.dns.answers.address')
[ "${addr:-0}" -gt 0 ]
check $? "run.json dns: $addr address answers (udp $(jr .dns.udp), tcp $(jr .dns.tcp))"
expect_eq "$(jr '.dns.answers.malformed')" 0 "no malformed queries"
[ "$(jr '.dns.answers.refused')" -ge 2 ]
check $? "the two names past the crowd were REFUSED and counted ($(jr .dns.answers.refused))"
grep -q '^\*\*name server:\*\* ' "$RUN_DIR/summary.md"
check $? "summary.md has the name server's line"

done_testing

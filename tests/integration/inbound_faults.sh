#!/usr/bin/env bash
# Faults injected by `flood serve --fault`, measured by a real client (curl): the delay is at
# least what was asked and a healthy instance is fast; the share of 503s lies within
# tolerance and carries Retry-After; reset and hang act as specified (a hang lets a
# connection go once its client has closed it); NodeInfo stays healthy under a fault unless
# the spec names it; a scope=inbox fault leaves GETs alone.
set -u
FLOOD=${FLOOD:-build/flood}
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
check() { if eval "$1"; then ok "$2"; else bad "$2"; fi; }

dir=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

"$FLOOD" serve --listen 127.0.0.1:0 --state "$dir/state" --instances 9 --actors 2 \
    --key-pool 1 --server-threads 8 --exit-after 120 \
    --fault flood3:delay=500ms \
    --fault flood4:status=503,share=20%,retry-after=30 \
    --fault flood5:reset \
    --fault flood6:hang \
    --fault flood7:gone,scope=inbox \
    --fault flood8:status=503,scope=nodeinfo \
    >"$dir/out" 2>"$dir/err" &
pid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/out")
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then
    bad "flood serve starts"
    cat "$dir/err"
    exit 1
fi
ok "flood serve listens on port $port"
base=http://127.0.0.1:$port

# time_total in ms and status of a GET to host/path
get() { curl -s -o /dev/null -m "${3:-5}" -w '%{http_code} %{time_total}' -H "Host: $1" "$base$2"; }
ms() { awk -v t="$1" 'BEGIN { printf "%d", t * 1000 }'; }

read -r code t < <(get flood3.test /users/user1)
check '[ "$code" = 200 ] && [ "$(ms "$t")" -ge 500 ]' "delay=500ms: answer 200 after $(ms "$t") ms (>= 500)"
read -r code t < <(get flood2.test /users/user1)
check '[ "$code" = 200 ] && [ "$(ms "$t")" -lt 400 ]' "no fault on flood2: 200 after $(ms "$t") ms (< 400)"
read -r code t < <(get flood3.test /.well-known/nodeinfo)
check '[ "$code" = 200 ] && [ "$(ms "$t")" -lt 400 ]' "NodeInfo of flood3 stays fast under delay ($(ms "$t") ms)"

# 400 GETs at share=20%: expect 80, binomial sd 8; accept 4 sd either side (48..112)
# (one curl process, one connection: the fault is decided per request)
args=()
for i in $(seq 400); do args+=(-o /dev/null "$base/users/user1?i=$i"); done
codes=$(curl -s -w '%{http_code}\n' -H "Host: flood4.test" "${args[@]}")
n503=$(grep -c '^503$' <<<"$codes")
n200=$(grep -c '^200$' <<<"$codes")
other=$((400 - n503 - n200))
check '[ "$n503" -ge 48 ] && [ "$n503" -le 112 ] && [ "$other" = 0 ]' "share=20%: $n503 of 400 answers are 503 (48..112), $n200 are 200"
args=()
for i in $(seq 60); do args+=(-o /dev/null "$base/users/user1?r=$i"); done
ra=$(curl -s -D - -H "Host: flood4.test" "${args[@]}" | tr -d '\r' |
    awk 'tolower($1) == "retry-after:" { print $2; exit }')
check '[ "$ra" = 30 ]' "a faulted 503 carries Retry-After: 30"

curl -s -o /dev/null -m 5 -H "Host: flood5.test" "$base/users/user1"
rc=$?
check '[ "$rc" = 56 ] || [ "$rc" = 52 ]' "reset: the connection closes without an answer (curl exit $rc)"
read -r code t < <(get flood5.test /nodeinfo/2.0)
check '[ "$code" = 200 ]' "NodeInfo of flood5 answers under reset"

start=$(date +%s%N)
curl -s -o /dev/null -m 2 -H "Host: flood6.test" "$base/users/user1"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
check '[ "$rc" = 28 ] && [ "$el" -ge 1900 ]' "hang: curl times out after ${el} ms (exit $rc)"
read -r code t < <(get flood6.test /.well-known/nodeinfo)
check '[ "$code" = 200 ]' "NodeInfo of flood6 answers under hang"
# A hang holds a connection while its client waits and lets it go once the client has
# closed its end: five clients give up after 1 s, a sixth waits 6 s. The crowd's side of a
# connection its client closed sits in CLOSE-WAIT until the crowd closes it.
sockets() { # STATE: the crowd's sockets on its port in that state
    ss -Htanp state "$1" "( sport = :$port )" 2>/dev/null | grep -c "pid=$pid,"
}
start=$(date +%s%N)
curl -s -o /dev/null -m 6 -H "Host: flood6.test" "$base/users/user2?waits" &
waiter=$!
quitters=""
for i in 1 2 3 4 5; do
    curl -s -o /dev/null -m 1 -H "Host: flood6.test" "$base/users/user1?quits=$i" &
    quitters="$quitters $!"
done
for q in $quitters; do wait "$q"; done
left=""
for _ in $(seq 40); do
    left=$(sockets close-wait)
    [ "$left" = 0 ] && break
    sleep 0.1
done
check '[ "$left" = 0 ]' "hang: the connections whose clients gave up are closed within 4 s ($left left in CLOSE-WAIT)"
# three clients that reset their connection (SO_LINGER 0): the crowd's side is then in no TCP
# table, only in its descriptors, which must come back to what they were
nsock() { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 -lname 'socket:*' 2>/dev/null | wc -l; }
before=$(nsock)
python3 -c '
import socket, struct, sys, time
conns = []
for i in range(3):
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    c.sendall(b"GET /users/user1?resets=%d HTTP/1.1\r\nHost: flood6.test\r\n\r\n" % i)
    conns.append(c)
time.sleep(0.5)
for c in conns:
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
' "$port"
after=""
for _ in $(seq 40); do
    after=$(nsock)
    [ "$after" -le "$before" ] && break
    sleep 0.1
done
check '[ "$after" -le "$before" ]' "hang: connections reset by their clients are closed within 4 s (sockets $before before, $after after)"
held=$(sockets established)
check '[ "$held" -ge 1 ] && kill -0 "$waiter" 2>/dev/null' "hang: the waiting client's connection is still held ($held established)"
wait "$waiter"
rc=$?
el=$((($(date +%s%N) - start) / 1000000))
check '[ "$rc" = 28 ] && [ "$el" -ge 5900 ]' "hang: the waiting client times out after ${el} ms (exit $rc)"

read -r code t < <(get flood7.test /users/user1)
check '[ "$code" = 200 ]' "gone,scope=inbox: GET of flood7's actor is still 200"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: flood7.test" \
    -H 'Content-Type: application/activity+json' --data '{}' "$base/inbox")
check '[ "$code" = 410 ]' "gone,scope=inbox: POST to flood7's inbox is 410"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: flood2.test" \
    -H 'Content-Type: application/activity+json' --data '{}' "$base/inbox")
check '[ "$code" = 401 ]' "an unsigned POST to flood2's inbox is 401 (no fault there)"

read -r code t < <(get flood8.test /.well-known/nodeinfo)
check '[ "$code" = 503 ]' "scope=nodeinfo: flood8's NodeInfo is 503"
read -r code t < <(get flood8.test /users/user1)
check '[ "$code" = 200 ]' "scope=nodeinfo: flood8's actor is 200"

read -r code t < <(get flood2.test /users/user2)
check '[ "$code" = 200 ]' "the daemon still serves after every fault"

kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=""
check '! grep -qi "sanitizer\|runtime error" "$dir/err"' "no sanitizer report on stderr"
echo "# $n checks, $fail failed"
[ "$fail" = 0 ]

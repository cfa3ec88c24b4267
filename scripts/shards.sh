#!/usr/bin/env bash
# scripts/shards.sh N: N shards of one flood run on this machine, each in its own network
# namespace with its own address, against nginx in another, then `flood merge`
# (docs/SHARDS.md). Everything stays inside namespaces this script makes: a hub namespace
# holding a bridge, the target's namespace (nginx answering 202 at 10.231.0.1:8080) and one
# namespace a shard (10.231.0.10+K); nothing is routed out. Needs root (ip netns) and nginx.
#
#   scripts/shards.sh 2                  # prints the merged table; results in $OUT
#   OUT=out/shards RATE=500 DURATION=5s SEED=7 scripts/shards.sh 4
#
# Also: FLOOD (the binary, build/flood), MIX, EXTRA (more flood run options), START_IN
# (seconds from now to the common start, 3). Exit 0 when every shard ran, the merge
# conserved, and nginx's access log counts exactly the merged 2xx; 77 when the machine
# does not allow network namespaces (a test skips then). Cleans up on any exit.
set -u
N=${1:-}
case "$N" in '' | *[!0-9]*) echo "usage: scripts/shards.sh N (1..32)" >&2; exit 2 ;; esac
[ "$N" -ge 1 ] && [ "$N" -le 32 ] || { echo "shards.sh: N must be 1..32" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FLOOD=${FLOOD:-$ROOT/build/flood}
OUT=${OUT:-out/shards-$(date -u +%Y%m%dT%H%M%SZ)}
RATE=${RATE:-200}
DURATION=${DURATION:-3s}
SEED=${SEED:-1}
MIX=${MIX:-create=60,follow=25,undo=15}
START_IN=${START_IN:-3}
EXTRA=${EXTRA:-}
TAG=fl$$ # names: fl<pid>h (hub), fl<pid>t (target), fl<pid>s<K> (shards)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

skip() { echo "shards.sh: SKIP: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root for ip netns (run as root or under sudo)"
[ -x "$NGINX" ] || skip "no nginx (apt-get install nginx-light)"
[ -x "$FLOOD" ] || { echo "shards.sh: no $FLOOD (make)" >&2; exit 1; }

NS=()
NGINX_PID=
cleanup() {
    [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null
    for ns in "${NS[@]}"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null; done
    sleep 0.2
    for ns in "${NS[@]}"; do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "${TAG}h" 2>/dev/null || skip "ip netns add is not permitted here"
NS+=("${TAG}h")
ip -n "${TAG}h" link add br0 type bridge && ip -n "${TAG}h" link set br0 up &&
    ip -n "${TAG}h" link set lo up || skip "cannot make a bridge in a namespace"

# attach NAME ADDR: a namespace on the hub's bridge at 10.231.0.ADDR/24
attach() {
    local ns=$TAG$1
    ip netns add "$ns" && NS+=("$ns") &&
        ip -n "${TAG}h" link add "v$1" type veth peer name eth0 netns "$ns" &&
        ip -n "${TAG}h" link set "v$1" master br0 up &&
        ip -n "$ns" addr add "10.231.0.$2/24" dev eth0 &&
        ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up
}
attach t 1 || skip "cannot make veth pairs between namespaces"
for ((k = 0; k < N; k++)); do attach "s$k" $((10 + k)) || exit 1; done

mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
WORK=$OUT/work
rm -rf "$WORK" && mkdir -p "$WORK/nginx/logs" || exit 1

# the target: nginx answering 202 to every POST, one access-log line a request
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log $WORK/nginx/logs/access.log;
    client_body_temp_path $WORK/nginx/body;
    proxy_temp_path $WORK/nginx/proxy;
    fastcgi_temp_path $WORK/nginx/fastcgi;
    uwsgi_temp_path $WORK/nginx/uwsgi;
    scgi_temp_path $WORK/nginx/scgi;
    keepalive_requests 1000000;
    server {
        listen 10.231.0.1:8080 reuseport;
        location / { return 202; }
    }
}
CONF
ip netns exec "${TAG}t" "$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do
    ip netns exec "${TAG}t" bash -c 'exec 3<>/dev/tcp/10.231.0.1/8080' 2>/dev/null && break
    sleep 0.1
done

# the crowd's state (keys, mode 0600) made once, exported, imported by every shard: what a
# Kubernetes Secret carries (docs/SHARDS.md)
"$FLOOD" serve --state "$WORK/state" --listen 127.0.0.1:0 --exit-after 1 >/dev/null 2>&1 ||
    { echo "shards.sh: cannot make the crowd's state" >&2; exit 1; }
tar --preserve-permissions -cf "$WORK/state.tar" -C "$WORK/state" . || exit 1

START=$(($(date +%s) + START_IN))
echo "shards.sh: $N shards, $RATE/s for $DURATION, seed $SEED, start at $START"
pids=()
for ((k = 0; k < N; k++)); do
    mkdir -p "$WORK/state-$k" && tar --preserve-permissions -xf "$WORK/state.tar" -C "$WORK/state-$k" || exit 1
    # shellcheck disable=SC2086
    ip netns exec "$TAG""s$k" timeout 120 "$FLOOD" run --inbox http://10.231.0.1:8080/inbox \
        --rate "$RATE" --duration "$DURATION" --seed "$SEED" --mix "$MIX" --quiet --no-check \
        --listen "10.231.0.$((10 + k)):8090" --state "$WORK/state-$k" \
        --shard "$k/$N" --start-at "$START" --out "$OUT/shard-$k" \
        --log-sends "$OUT/shard-$k.sends" $EXTRA >"$WORK/shard-$k.log" 2>&1 &
    pids+=($!)
done
rc=0
for ((k = 0; k < N; k++)); do
    wait "${pids[$k]}" || { echo "shards.sh: shard $k failed:" >&2; cat "$WORK/shard-$k.log" >&2; rc=1; }
done
kill "$NGINX_PID" 2>/dev/null
wait "$NGINX_PID" 2>/dev/null
NGINX_PID=
[ $rc = 0 ] || exit 1

dirs=()
for ((k = 0; k < N; k++)); do dirs+=("$OUT/shard-$k"); done
"$FLOOD" merge "$OUT/merged" "${dirs[@]}" || exit 1

logged=$(awk '$9 ~ /^2/' "$WORK/nginx/logs/access.log" | wc -l)
merged=$(python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["totals"]["outcomes"]; print(o["200"]+o["202"]+o["2xx_other"])' "$OUT/merged/run.json")
echo "shards.sh: nginx logged $logged 2xx answers, the merged run counts $merged"
[ "$logged" = "$merged" ] || { echo "shards.sh: the counts differ" >&2; exit 1; }
echo "shards.sh: results in $OUT/merged"

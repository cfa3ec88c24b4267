#!/usr/bin/env bash
# The crowd's serving speed and memory.
# 1. Actor document GETs per second: flood serve against nginx serving the same bytes from
#    a file, both pinned to CPU 0, wrk pinned to CPU 1, alternated in the same run; the
#    ratio flood/nginx is printed (aim: at least 0.8).
# 2. A crowd of 1,000 instances x 1,000 actors with --key-pool 64: start time (keys cached)
#    and resident memory after start and after serving requests across the crowd.
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-build/flood}
SECS=${BENCH_SECONDS:-8}
CONNS=${BENCH_CONNECTIONS:-32}
ROUNDS=${BENCH_ROUNDS:-3}
state=build/bench-state
tmp=$(mktemp -d)
chmod 755 "$tmp" # nginx workers run as another user
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
ncpu=$(nproc)
pin_server="taskset -c 0"
pin_client="taskset -c $((ncpu > 1 ? 1 : 0))"

wait_port() { # LOGFILE -> port
    for _ in $(seq 1 600); do
        p=$(sed -n 's/^listening on http:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$1" | head -1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}

# --- 1. flood vs nginx ---------------------------------------------------------------
$pin_server "$FLOOD" serve --listen 127.0.0.1:0 --state "$state" --server-threads 1 --quiet >"$tmp/flood.log" 2>&1 &
fpid=$!
pids="$pids $fpid"
fport=$(wait_port "$tmp/flood.log") || { echo "bench: flood serve did not start"; cat "$tmp/flood.log"; exit 1; }
AP='Accept: application/activity+json'
mkdir -p "$tmp/www/users"
curl -sf -H 'Host: flood1.test' -H "$AP" "http://127.0.0.1:$fport/users/user1" >"$tmp/www/users/user1" ||
    { echo "bench: cannot fetch the actor document"; exit 1; }
bytes=$(wc -c <"$tmp/www/users/user1")
nport=$((20000 + RANDOM % 20000))
cat >"$tmp/nginx.conf" <<NGX
worker_processes 1;
daemon off;
pid $tmp/nginx.pid;
error_log $tmp/nginx.err;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    open_file_cache max=16 inactive=60s;
    open_file_cache_valid 60s;
    sendfile on;
    tcp_nopush on;
    types { }
    default_type application/activity+json;
    server {
        listen 127.0.0.1:$nport;
        root $tmp/www;
        location / { add_header Vary Accept; }
    }
}
NGX
$pin_server nginx -c "$tmp/nginx.conf" -p "$tmp" &
npid=$!
pids="$pids $npid"
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$nport/users/user1" >/dev/null && break; sleep 0.1; done
cmp -s <(curl -s "http://127.0.0.1:$nport/users/user1") "$tmp/www/users/user1" ||
    { echo "bench: nginx does not serve the same bytes"; tail -3 "$tmp/nginx.err"; exit 1; }

rps() { # URL -> requests/s
    $pin_client wrk -t1 -c"$CONNS" -d"${SECS}s" -H 'Host: flood1.test' -H "$AP" "$1" 2>&1 |
        awk '/Requests\/sec/ {print $2}'
}
best_f=0 best_n=0
for r in $(seq 1 "$ROUNDS"); do
    f=$(rps "http://127.0.0.1:$fport/users/user1")
    n=$(rps "http://127.0.0.1:$nport/users/user1")
    echo "round $r: flood $f req/s, nginx $n req/s"
    best_f=$(echo "$f $best_f" | awk '{print ($1>$2)?$1:$2}')
    best_n=$(echo "$n $best_n" | awk '{print ($1>$2)?$1:$2}')
done
ratio=$(echo "$best_f $best_n" | awk '{printf "%.2f", ($2>0)?$1/$2:0}')
echo "actor GET ($bytes bytes, $CONNS connections, best of $ROUNDS x ${SECS}s): flood $best_f/s, nginx $best_n/s, ratio $ratio (aim >= 0.8)"
kill "$fpid" "$npid"; wait "$fpid" "$npid" 2>/dev/null
pids=""

# --- 2. a big crowd ------------------------------------------------------------------
big="--instances 1000 --actors 1000 --key-pool 64"
# First start makes the 64 keys (not timed); the second is the measured one.
"$FLOOD" serve --listen 127.0.0.1:0 --state "$state" $big --quiet --exit-after 1 >/dev/null 2>&1
t0=$(date +%s.%N)
"$FLOOD" serve --listen 127.0.0.1:0 --state "$state" $big --quiet >"$tmp/big.log" 2>&1 &
bpid=$!
pids="$bpid"
bport=$(wait_port "$tmp/big.log") || { echo "bench: big crowd did not start"; exit 1; }
t1=$(date +%s.%N)
rss0=$(awk '/VmRSS/ {print $2}' /proc/$bpid/status)
# Requests spread over the crowd: actors and WebFinger of 2,000 random accounts.
for k in $(seq 1 2000); do
    i=$((RANDOM % 1000 + 1)); a=$((RANDOM % 1000 + 1))
    echo "url = \"http://127.0.0.1:$bport/users/user$a\""
    echo "header = \"Host: flood$i.test\""
    echo "header = \"$AP\""
    echo "output = /dev/null"
done >"$tmp/curl.cfg"
curl -s --no-progress-meter --parallel --parallel-max 16 -K "$tmp/curl.cfg" 2>/dev/null
rss1=$(awk '/VmRSS/ {print $2}' /proc/$bpid/status)
echo "big crowd (1,000 x 1,000, --key-pool 64): ready in $(echo "$t0 $t1" | awk '{printf "%.2f", $2-$1}') s (aim < 2 s); RSS $((rss0 / 1024)) MB after start, $((rss1 / 1024)) MB after 2,000 GETs (aim < 300 MB)"

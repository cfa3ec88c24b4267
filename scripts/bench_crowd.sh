#!/usr/bin/env bash
# The crowd's serving speed and memory.
# 1. Actor document GETs per second: flood serve against nginx serving the same bytes from
#    a file, both pinned to CPU 0, wrk pinned to CPU 1, alternated in the same run; the
#    ratio flood/nginx is printed (aim: at least 0.8). The same GETs through flood's egress
#    proxy (--proxy, absolute-form "GET http://flood1.test/users/user1", relayed to the
#    crowd's listener by a thread of the same process on the same CPU), alternated with
#    them: the ratio proxy/direct is printed on the same line.
# 2. The same over https: flood serve --tls against nginx with flood's own certificate and
#    key from the state folder, TLS 1.3 on both and no session resumption on either (flood
#    issues no tickets; nginx is told to issue none, as wrk would resume one). Two cases:
#    reused connections, and a new connection with a full handshake per request (wrk with
#    'Connection: close'). For each: best req/s of alternated rounds, the ratio, and the
#    server's CPU time per request (steadier than req/s on a loaded machine). Aim: 1.0.
# 3. A crowd of 1,000 instances x 1,000 actors with --key-pool 64: start time (keys cached)
#    and resident memory after start and after serving requests across the crowd.
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-build/flood}
SECS=${BENCH_SECONDS:-8}
TLS_SECS=${BENCH_TLS_SECONDS:-5}
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
        p=$(sed -n 's/^listening on https\?:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$1" | head -1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}

# --- 1. flood vs nginx ---------------------------------------------------------------
$pin_server "$FLOOD" serve --listen 127.0.0.1:0 --state "$state" --server-threads 1 --quiet \
    --proxy 127.0.0.1:0 >"$tmp/flood.log" 2>&1 &
fpid=$!
pids="$pids $fpid"
fport=$(wait_port "$tmp/flood.log") || { echo "bench: flood serve did not start"; cat "$tmp/flood.log"; exit 1; }
pport=$(sed -n 's/^proxy listening on http:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$tmp/flood.log" | head -1)
[ -n "$pport" ] || { echo "bench: flood serve printed no proxy port"; cat "$tmp/flood.log"; exit 1; }
# wrk's request in absolute-form, as a target sends it to its proxy
printf 'wrk.path = "http://flood1.test/users/user1"\n' >"$tmp/proxy.lua"
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
cmp -s <(curl -s -x "http://127.0.0.1:$pport" -H "$AP" http://flood1.test/users/user1) "$tmp/www/users/user1" ||
    { echo "bench: the proxy does not relay the same bytes"; exit 1; }
rps_proxy() { # -> requests/s through the proxy
    $pin_client wrk -t1 -c"$CONNS" -d"${SECS}s" -s "$tmp/proxy.lua" -H "$AP" \
        "http://127.0.0.1:$pport/" 2>&1 | awk '/Requests\/sec/ {print $2}'
}
best_f=0 best_n=0 best_p=0
for r in $(seq 1 "$ROUNDS"); do
    f=$(rps "http://127.0.0.1:$fport/users/user1")
    p=$(rps_proxy)
    n=$(rps "http://127.0.0.1:$nport/users/user1")
    echo "round $r: flood $f req/s, through --proxy $p req/s, nginx $n req/s"
    best_f=$(echo "$f $best_f" | awk '{print ($1>$2)?$1:$2}')
    best_p=$(echo "$p $best_p" | awk '{print ($1>$2)?$1:$2}')
    best_n=$(echo "$n $best_n" | awk '{print ($1>$2)?$1:$2}')
done
ratio=$(echo "$best_f $best_n" | awk '{printf "%.2f", ($2>0)?$1/$2:0}')
pratio=$(echo "$best_p $best_f" | awk '{printf "%.2f", ($2>0)?$1/$2:0}')
echo "actor GET ($bytes bytes, $CONNS connections, best of $ROUNDS x ${SECS}s): flood $best_f/s, nginx $best_n/s, ratio $ratio (aim >= 0.8); through --proxy $best_p/s, proxy/direct $pratio"
kill "$fpid" "$npid"; wait "$fpid" "$npid" 2>/dev/null
pids=""

# --- 2. flood vs nginx over https ------------------------------------------------------
$pin_server "$FLOOD" serve --tls --listen 127.0.0.1:0 --state "$state" --server-threads 1 --quiet >"$tmp/flood-tls.log" 2>&1 &
fpid=$!
pids="$fpid"
fport=$(wait_port "$tmp/flood-tls.log") || { echo "bench: flood serve --tls did not start"; cat "$tmp/flood-tls.log"; exit 1; }
# The leaf flood made (or kept) for this crowd: nginx serves the same certificate and key.
cert="$PWD/$state/crowd.pem" key="$PWD/$state/crowd.key"
mkdir -p "$tmp/tls/users"
curl -sfk -H 'Host: flood1.test' -H "$AP" "https://127.0.0.1:$fport/users/user1" >"$tmp/tls/users/user1" ||
    { echo "bench: cannot fetch the actor document over https"; exit 1; }
tbytes=$(wc -c <"$tmp/tls/users/user1")
nport=$((20000 + RANDOM % 20000))
cat >"$tmp/nginx-tls.conf" <<NGX
worker_processes 1;
daemon off;
pid $tmp/nginx-tls.pid;
error_log $tmp/nginx-tls.err;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    open_file_cache max=16 inactive=60s;
    open_file_cache_valid 60s;
    types { }
    default_type application/activity+json;
    server {
        listen 127.0.0.1:$nport ssl;
        ssl_certificate $cert;
        ssl_certificate_key $key;
        ssl_protocols TLSv1.3;
        ssl_session_cache off;
        ssl_session_tickets off;
        ssl_conf_command NumTickets 0;
        root $tmp/tls;
        location / { add_header Vary Accept; }
    }
}
NGX
$pin_server nginx -c "$tmp/nginx-tls.conf" -p "$tmp" &
npid=$!
pids="$pids $npid"
for _ in $(seq 1 50); do curl -sfk "https://127.0.0.1:$nport/users/user1" >/dev/null && break; sleep 0.1; done
cmp -s <(curl -sk "https://127.0.0.1:$nport/users/user1") "$tmp/tls/users/user1" ||
    { echo "bench: nginx does not serve the same bytes over https"; tail -3 "$tmp/nginx-tls.err"; exit 1; }
nworker=$(pgrep -P "$npid" | head -1)
[ -n "$nworker" ] || { echo "bench: no nginx worker"; exit 1; }

# What each negotiates with OpenSSL's client defaults (wrk's too), which certificate it
# shows, and whether a second connection resumes the first one's session.
tls_params() { # PORT -> one line
    local out fp res
    out=$(openssl s_client -connect "127.0.0.1:$1" -servername flood1.test -sess_out "$tmp/sess.$1" \
        -ign_eof 2>&1 < <(printf 'GET /users/user1 HTTP/1.1\r\nHost: flood1.test\r\nConnection: close\r\n\r\n'))
    fp=$(echo "$out" | openssl x509 -noout -fingerprint -sha256 2>/dev/null | sed 's/.*=//; s/://g' | cut -c1-16)
    res="no session to resume"
    if [ -s "$tmp/sess.$1" ]; then
        res=$(openssl s_client -connect "127.0.0.1:$1" -servername flood1.test -sess_in "$tmp/sess.$1" \
            -ign_eof 2>/dev/null < <(printf 'GET /users/user1 HTTP/1.1\r\nHost: flood1.test\r\nConnection: close\r\n\r\n') |
            awk -F, '/^(New|Reused),/ {print ($1=="Reused") ? "resumed" : "not resumed"}')
    fi
    printf '%s, %s, %s, %s signature; cert sha256 %s...; second connection: %s\n' \
        "$(echo "$out" | awk '/^New,|^Reused,/ {sub(/,$/, "", $2); print $2}')" \
        "$(echo "$out" | awk '/^New,|^Reused,/ {print $NF}')" \
        "$(echo "$out" | sed -n 's/^Server Temp Key: \([^,]*\).*/\1/p')" \
        "$(echo "$out" | sed -n 's/^Peer signature type: //p')" "$fp" "$res"
}
echo "TLS flood: $(tls_params "$fport")"
echo "TLS nginx: $(tls_params "$nport")"
closes() { # PORT -> the Connection header answered to 'Connection: close'
    curl -sk -o /dev/null -D - -H 'Host: flood1.test' -H "$AP" -H 'Connection: close' \
        "https://127.0.0.1:$1/users/user1" | tr -d '\r' | awk -F': ' 'tolower($1)=="connection" {print $2}'
}
echo "'Connection: close' answered with Connection: flood '$(closes "$fport")', nginx '$(closes "$nport")'"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# URL PID [HEADER] -> "req/s cpu_us_per_request"
tls_rps() {
    local c0 c1 out n
    c0=$(cpu_ticks "$2")
    out=$($pin_client wrk -t1 -c"$CONNS" -d"${TLS_SECS}s" -H 'Host: flood1.test' -H "$AP" ${3:+-H "$3"} "$1" 2>&1)
    c1=$(cpu_ticks "$2")
    n=$(echo "$out" | awk '/requests in/ {print $1}')
    echo "$out" | awk -v c="$((c1 - c0))" -v n="${n:-0}" -v hz="$(getconf CLK_TCK)" \
        '/Requests\/sec/ {printf "%s %.0f\n", $2, (n > 0) ? c * 1e6 / hz / n : 0}'
}
max() { echo "$1 $2" | awk '{print ($1 > $2) ? $1 : $2}'; }
min() { echo "$1 $2" | awk '{print ($2 == 0 || $1 < $2) ? $1 : $2}'; }
for case in keepalive close; do
    hdr="" what="reused connections"
    [ "$case" = close ] && hdr="Connection: close" what="a full handshake per request"
    best_f=0 best_n=0 cpu_f=0 cpu_n=0
    for r in $(seq 1 "$ROUNDS"); do
        read -r f fc < <(tls_rps "https://127.0.0.1:$fport/users/user1" "$fpid" "$hdr")
        read -r n nc < <(tls_rps "https://127.0.0.1:$nport/users/user1" "$nworker" "$hdr")
        echo "https $case round $r: flood ${f:-0} req/s (${fc:-0} us CPU/req), nginx ${n:-0} req/s (${nc:-0} us CPU/req)"
        best_f=$(max "${f:-0}" "$best_f") best_n=$(max "${n:-0}" "$best_n")
        cpu_f=$(min "${fc:-0}" "$cpu_f") cpu_n=$(min "${nc:-0}" "$cpu_n")
    done
    ratio=$(echo "$best_f $best_n" | awk '{printf "%.2f", ($2>0)?$1/$2:0}')
    cratio=$(echo "$cpu_f $cpu_n" | awk '{printf "%.2f", ($1>0)?$2/$1:0}')
    echo "https actor GET, $what ($tbytes bytes, $CONNS connections, best of $ROUNDS x ${TLS_SECS}s): flood $best_f/s, nginx $best_n/s, ratio $ratio (aim >= 1.0); CPU/request flood $cpu_f us, nginx $cpu_n us, nginx/flood $cratio"
done
kill "$fpid" "$npid"; wait "$fpid" "$npid" 2>/dev/null
pids=""

# --- 3. a big crowd ------------------------------------------------------------------
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

#!/usr/bin/env bash
# scripts/bench_http.sh: the hot path's carrier chosen by measurement (docs/PERFORMANCE.md).
# nginx answers 202 on /inbox (one worker, pinned to CPU 0, http and https with a
# self-signed certificate made here); each generator is pinned to CPU 1 and POSTs the same
# flood-shaped request (build/tools/bench_http --emit-lua writes it for wrk) closed-loop on
# 64 keep-alive connections: wrk (the reference), then bench_http's carriers: libcurl multi
# on libevent as flood's sender sets it up, libevent's evhttp, flood's own client
# (flood/send/hclient.c) and raw sockets with http-parser (the lower bound). Rounds
# alternate the order; each candidate is given as the medians of its req/s, its requests
# per CPU-second (user + system of the generator's process, from bash's `time`) and both
# as ratios against wrk's in the same round. About two minutes; loopback only; stops by
# itself and cleans up.
#
#   scripts/bench_http.sh [--rounds N] [--seconds S] [--quick] [--only "wrk curl ..."]
#   scripts/bench_http.sh --tunings    libcurl's tunings one by one against flood's setup
#   scripts/bench_http.sh --syscalls   system calls per request of each (strace -c -f)
#   scripts/bench_http.sh --perf       where each spends its CPU: perf's shares by library
#                                      and its hottest functions
# KEEP_TMP=1 keeps the run's directory (nginx's configuration, the wrk script, runs.log:
# every bench_http output line).
set -u
cd "$(dirname "$0")/.." || exit 1
GEN=${BENCH_HTTP:-${FLOOD_BUILD:-$PWD/build}/tools/bench_http}
rounds=3
secs=3
conns=64
mode=compare
only=""
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=$2; shift ;;
    --seconds) secs=$2; shift ;;
    --quick) rounds=1; secs=1 ;;
    --only) only=$2; shift ;;
    --tunings) mode=tunings ;;
    --syscalls) mode=syscalls ;;
    --perf) mode=perf ;;
    *) echo "usage: scripts/bench_http.sh [--rounds N] [--seconds S] [--quick] [--only LIST] [--tunings|--syscalls|--perf]" >&2
        exit 2 ;;
    esac
    shift
done

for tool in nginx wrk taskset openssl; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || {
        echo "bench_http: $tool is missing (scripts/deps.sh installs it)" >&2
        exit 1
    }
done
[ "$mode" != syscalls ] || command -v strace >/dev/null 2>&1 || {
    echo "bench_http: strace is missing (scripts/deps.sh installs it)" >&2
    exit 1
}
[ "$mode" != perf ] || command -v perf >/dev/null 2>&1 || {
    echo "bench_http: perf is missing (Debian's linux-perf)" >&2
    exit 1
}
[ -x "$GEN" ] || { echo "bench_http: no generator at $GEN (make)" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
SRV_CPU=0
GEN_CPU=1
if [ "$(nproc)" -lt 2 ]; then
    GEN_CPU=0
    echo "bench_http: one core only: nginx and the generator share it" >&2
fi
TMP=$(mktemp -d)
NPID=""
cleanup() {
    [ -n "$NPID" ] && kill "$NPID" 2>/dev/null && wait "$NPID" 2>/dev/null
    if [ -n "${KEEP_TMP:-}" ]; then
        echo "bench_http: kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ---- nginx: 202 on /inbox, one worker, pinned; http and https ---------------------------
HPORT=$(free_port)
SPORT=$(free_port)
mkdir -p "$TMP/nginx"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -keyout "$TMP/nginx/key.pem" -out "$TMP/nginx/cert.pem" >/dev/null 2>&1 || {
    echo "bench_http: openssl could not make a certificate" >&2
    exit 1
}
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $TMP/nginx;
    proxy_temp_path $TMP/nginx;
    fastcgi_temp_path $TMP/nginx;
    uwsgi_temp_path $TMP/nginx;
    scgi_temp_path $TMP/nginx;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    ssl_certificate $TMP/nginx/cert.pem;
    ssl_certificate_key $TMP/nginx/key.pem;
    server {
        listen 127.0.0.1:$HPORT;
        listen 127.0.0.1:$SPORT ssl;
        location = /inbox { return 202; }
        location / { return 404; }
    }
}
EOF
taskset -c "$SRV_CPU" "$NGINX" -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" \
    >"$TMP/nginx/out.log" 2>&1 &
NPID=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null -X POST "http://127.0.0.1:$HPORT/inbox" && break
    sleep 0.05
done
url_of() { [ "$1" = https ] && echo "https://127.0.0.1:$SPORT/inbox" || echo "http://127.0.0.1:$HPORT/inbox"; }
"$GEN" --emit-lua "$TMP/post.lua" || exit 1

candidates="wrk curl evhttp raw"
if "$GEN" -b own -d 0.2 "$(url_of http)" >/dev/null 2>"$TMP/own.err"; then
    candidates="wrk curl evhttp own raw"
else
    echo "bench_http: own client left out: $(cat "$TMP/own.err")"
fi
[ -n "$only" ] && candidates=$only

# run NAME SCHEME SECONDS [TUNINGS]: one pinned run; prints "REQUESTS REQ_S CPU_S ERRORS"
run() {
    local name=$1 url out
    url=$(url_of "$2")
    out=$TMP/run.out
    local TIMEFORMAT='%3U %3S'
    if [ "$name" = wrk ]; then
        { time taskset -c "$GEN_CPU" wrk -t 1 -c "$conns" -d "${3}s" -s "$TMP/post.lua" "$url" \
            >"$out" 2>&1; } 2>"$TMP/time"
        awk -v t="$(cat "$TMP/time")" '
            / requests in / { n = $1 } /^Requests\/sec/ { r = $2 }
            /Non-2xx|Socket errors/ { e += $NF }
            END { split(t, c, " "); printf "%d %s %.3f %d\n", n, r, c[1] + c[2], e }' "$out"
    else
        { time taskset -c "$GEN_CPU" "$GEN" -b "$name" -c "$conns" -d "$3" ${4:+-T "$4"} "$url" \
            >"$out" 2>&1; } 2>"$TMP/time"
        cat "$out" >>"$TMP/runs.log"
        awk -v t="$(cat "$TMP/time")" '
            /^bench_http: backend/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
            END { split(t, c, " "); printf "%d %s %.3f %d\n", f["requests"], f["req_s"], c[1] + c[2], f["errors"] }' "$out"
    fi
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure FILE NAME RUN-ARGS...: one run, appended to FILE as "NAME REQ_S REQ_PER_CPU_S ERRORS"
measure() {
    local file=$1 name=$2 n rs cpu err
    shift 2
    read -r n rs cpu err <<<"$(run "$@")"
    echo "$name $rs $(awk -v n="$n" -v c="$cpu" 'BEGIN { printf "%.1f", (c > 0 ? n / c : 0) }') ${err:-0}" >>"$file"
}

# table PREFIX REF NAMES...: each name's medians over the rounds' files PREFIX.1 .. PREFIX.N
# and the medians of its ratios against REF in the same round; sets FIGURES
table() {
    local prefix=$1 ref=$2 c k files
    shift 2
    files=$(seq -f "$prefix.%g" 1 "$rounds")
    printf '  %-20s %10s %12s %8s %10s %7s\n' "" req/s req/cpu-s ratio cpu-ratio errors
    FIGURES=""
    for c in "$@"; do
        local v=()
        for k in 2 3; do
            # shellcheck disable=SC2086
            v+=("$(awk -v c="$c" -v k="$k" '$1 == c { print $k }' $files | median)")
            v+=("$(for f in $files; do
                awk -v c="$c" -v r="$ref" -v k="$k" '$1 == r { b = $k } $1 == c { x = $k }
                    END { printf "%.3f\n", (b > 0 ? x / b : 0) }' "$f"
            done | median)")
        done
        local err
        # shellcheck disable=SC2086
        err=$(awk -v c="$c" '$1 == c { s += $4 } END { print s + 0 }' $files)
        printf '  %-20s %10.0f %12.0f %8.2f %10.2f %7d\n' "$c" "${v[0]}" "${v[2]}" "${v[1]}" "${v[3]}" "$err"
        FIGURES="$FIGURES ${c}_rps=${v[0]%.*} ${c}_per_cpu=${v[2]%.*} ${c}_ratio=${v[1]} ${c}_cpu_ratio=${v[3]}"
    done
}

echo "bench_http: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average $(cut -d' ' -f1-3 /proc/loadavg); nginx on CPU $SRV_CPU, generators on CPU $GEN_CPU, $conns connections"

# ---- system calls per request ------------------------------------------------------------
if [ "$mode" = syscalls ]; then
    for scheme in http https; do
        for c in $candidates; do
            url=$(url_of "$scheme")
            if [ "$c" = wrk ]; then
                taskset -c "$GEN_CPU" strace -c -f -o "$TMP/strace" wrk -t 1 -c "$conns" -d 3s \
                    -s "$TMP/post.lua" "$url" >"$TMP/out" 2>&1
                n=$(awk '/ requests in / { print $1 }' "$TMP/out")
            else
                taskset -c "$GEN_CPU" strace -c -f -o "$TMP/strace" "$GEN" -b "$c" -c "$conns" -d 3 \
                    "$url" >"$TMP/out" 2>&1
                n=$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' "$TMP/out")
            fi
            # strace -c: "% time seconds usecs/call calls [errors] syscall", then a total
            sort -k4,4nr "$TMP/strace" | awk -v n="${n:-0}" -v c="$c" -v s="$scheme" '
                $NF == "total" { tot = $4 }
                $1 ~ /^[0-9.]+$/ && $NF != "total" && n > 0 && $4 / n >= 0.05 {
                    line = line sprintf(" %s %.2f", $NF, $4 / n) }
                END {
                    if (n == 0) { printf "bench_http: syscalls %s %s: no requests\n", s, c; exit }
                    printf "bench_http: syscalls %-5s %-6s %7d requests under strace, %.2f a request:%s\n", s, c, n, tot / n, line
                }'
        done
    done
    exit 0
fi

# ---- where the CPU goes ------------------------------------------------------------------
if [ "$mode" = perf ]; then
    for scheme in http https; do
        for c in $candidates; do
            [ "$c" = wrk ] && continue
            taskset -c "$GEN_CPU" perf record -q -F 1999 -o "$TMP/perf.data" -- "$GEN" -b "$c" \
                -c "$conns" -d 3 "$(url_of "$scheme")" >"$TMP/out" 2>/dev/null
            echo "bench_http: perf $scheme $c: $(sed -n 's/.* req_per_cpu_s=//p' "$TMP/out") req/cpu-s; by library:"
            perf report -i "$TMP/perf.data" --no-children --sort dso --stdio -q 2>/dev/null |
                awk 'NF >= 2 && $1 ~ /%$/ && $1 + 0 >= 1 { printf "    %7s %s\n", $1, $2 }'
            echo "  hottest functions:"
            perf report -i "$TMP/perf.data" --no-children --sort dso,sym --stdio -q 2>/dev/null |
                awk 'NF >= 4 && $1 ~ /%$/ { $3 = ""; sub(/^ +/, ""); printf "    %s\n", $0 }' | head -12
        done
    done
    exit 0
fi

# ---- libcurl's tunings, one by one, against flood's setup --------------------------------
if [ "$mode" = tunings ]; then
    list="- nochangelist noprecise bufdefault notimeout keepopts nokick nonodelay maxtotal keepopts,notimeout"
    for r in $(seq 1 "$rounds"); do
        for t in $list; do
            tt=$t
            [ "$t" = - ] && tt=""
            measure "$TMP/tun.$r" "$t" curl http "$secs" "$tt"
        done
    done
    printf 'bench_http: curl tunings, http, %d round(s) of %s s, medians; ratios against flood'"'"'s setup (-) in the same round\n' "$rounds" "$secs"
    # shellcheck disable=SC2086
    table "$TMP/tun" - $list
    exit 0
fi

# ---- the comparison ------------------------------------------------------------------------
for r in $(seq 1 "$rounds"); do
    # the order turns by one each round: no candidate always runs first or after the same one
    # shellcheck disable=SC2086
    order=$(echo $candidates | awk -v k="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + k - 1) % NF + 1) }')
    for scheme in http https; do
        for c in $order; do
            measure "$TMP/res.$scheme.$r" "$c" "$c" "$scheme" "$secs"
        done
    done
done
figures=""
for scheme in http https; do
    printf 'bench_http: %s, %d round(s) of %s s, medians; ratios against wrk in the same round\n' \
        "$scheme" "$rounds" "$secs"
    # shellcheck disable=SC2086
    table "$TMP/res.$scheme" wrk $candidates
    figures="$figures${FIGURES// / ${scheme}_}"
done
echo "bench_http: figures:$figures"

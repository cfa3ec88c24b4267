#!/usr/bin/env bash
# scripts/bench_wrk2.sh: flood's open loop against wrk2's, side by side on one core each.
# wrk2 (github.com/giltene/wrk2) is wrk with a constant request rate (-R) and latency
# measured from each request's intended time, as flood measures it: the open-loop
# reference. nginx answers 202 on /inbox on CPU 0; flood (`run --sign none --mix
# create=100 --content plain --loops 1`) and wrk2 (`-t1 -c64 -R RATE`, flood's own request
# captured by the sink as its Lua script) take turns on CPU 1 at each rate, for the same
# seconds. For each run: the requests answered, the generator's CPU (user + system: flood's
# run.json generator.cpu_s, the whole process during the run; wrk2's from /usr/bin/time),
# requests per CPU-second and the answers' p99 from the intended time; flood's dispatch lag
# p99 too. A rate is sustained when at least 99% of the offered requests were answered
# with an answer p99 of at most 10 ms. wrk2 offers fewer than RATE x SECONDS: it connects
# its 64 connections 5 ms apart, starts each one's schedule at its connect, and most runs sent
# 89-90% of RATE x 10 s from 1,000 to 40,000/s on a quiet machine (one 98%): its offer is measured
# first, at 1,000/s for the same seconds, and wrk2 sustains a rate when it answers 99% of
# that share of it.
#
# wrk2 is no Debian package: build it by hand (make in its source; its bundled LuaJIT) and
# give its path as WRK2=/path/to/wrk, or put it in PATH as wrk2. Without it this script
# says so and exits 0 (CI has Debian's packages only; `make bench` measures against
# Debian's closed-loop wrk).
#
#   scripts/bench_wrk2.sh [--rates "5000 10000 20000 40000 60000"] [--seconds 10] [--rounds 1]
#   FLOOD_ARGS="--dispatch-quantum 1ms" scripts/bench_wrk2.sh   (more options for flood's runs)
#   FLOOD_B=/path/to/other/flood FLOOD_B_ARGS=... FLOOD_C=... FLOOD_C_ARGS=...
#       (a second and a third flood, binaries or options, alternated with the first: named
#       flood-b and flood-c in the figures)
#   BENCH_NICE=-10 scripts/bench_wrk2.sh   (nginx and the generators at that niceness: on a
#       shared machine, so that other work does not starve them; root only below 0)
#   BENCH_NGINX_RT=1 scripts/bench_wrk2.sh   (nginx at SCHED_FIFO priority 10 (chrt), root
#       only: on a loaded machine nginx is then never the limit of either generator)
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-$PWD/build/flood}
FLOOD_B=${FLOOD_B:-}
FLOOD_C=${FLOOD_C:-}
read -r -a flood_args <<<"${FLOOD_ARGS:-}"
read -r -a flood_b_args <<<"${FLOOD_B_ARGS:-}"
read -r -a flood_c_args <<<"${FLOOD_C_ARGS:-}"
SINK=${SINK:-${FLOOD_BUILD:-$PWD/build}/tools/sink}
STATE=${TEST_STATE:-$PWD/build/test-state}
WRK2=${WRK2:-$(command -v wrk2 || true)}
rates="5000 10000 20000 40000 60000"
secs=10
rounds=1
while [ $# -gt 0 ]; do
    case "$1" in
    --rates) rates=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "bench_wrk2: unknown argument '$1' (--rates \"R ...\", --seconds N, --rounds N)" >&2; exit 2 ;;
    esac
done

if [ -z "$WRK2" ] || [ ! -x "$WRK2" ]; then
    echo "bench_wrk2: skipped: wrk2 is not installed (build github.com/giltene/wrk2 and give WRK2=/path/to/wrk, or put wrk2 in PATH)"
    exit 0
fi
for tool in nginx taskset jq curl python3; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || {
        echo "bench_wrk2: $tool is missing (scripts/deps.sh installs it)" >&2
        exit 1
    }
done
[ -x /usr/bin/time ] || { echo "bench_wrk2: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
for f in "$FLOOD" ${FLOOD_B:+"$FLOOD_B"} ${FLOOD_C:+"$FLOOD_C"} "$SINK"; do
    [ -x "$f" ] || { echo "bench_wrk2: no binary at $f (make)" >&2; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ "$(nproc)" -lt 2 ]; then
    echo "bench_wrk2: skipped: needs two cores (nginx on one, the generator on the other)"
    exit 0
fi
SRV_CPU=0
GEN_CPU=1
NICE=(nice -n "${BENCH_NICE:-0}")
SRV=("${NICE[@]}")
[ "${BENCH_NGINX_RT:-0}" = 1 ] && SRV=(chrt -f 10)

TMP=$(mktemp -d)
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    [ -n "${KEEP_TMP:-}" ] && echo "bench_wrk2: kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

NPORT=$(free_port)
mkdir -p "$TMP/nginx"
cat >"$TMP/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 20000; }
http {
    access_log off;
    client_body_temp_path $TMP/nginx;
    proxy_temp_path $TMP/nginx;
    fastcgi_temp_path $TMP/nginx;
    uwsgi_temp_path $TMP/nginx;
    scgi_temp_path $TMP/nginx;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$NPORT;
        location = /inbox { return 202; }
        location / { return 404; }
    }
}
EOF
"${SRV[@]}" taskset -c "$SRV_CPU" "$NGINX" -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" \
    >"$TMP/nginx/out.log" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 1 100); do
    curl -s -o /dev/null -X POST "http://127.0.0.1:$NPORT/inbox" && break
    sleep 0.05
done
INBOX="http://127.0.0.1:$NPORT/inbox"

common=(--listen 127.0.0.1:0 --state "$STATE" --instances 2 --actors 3 --key-pool 1
    --mix create=100 --content plain --sign none --quiet --connections 64 --loops 1)

# flood's own request, captured by the sink, is what wrk2 sends
"$SINK" --dump "$TMP/req.txt" --exit-after 60 >"$TMP/sink.port" &
SPID=$!
PIDS="$PIDS $SPID"
sleep 0.2
SPORT=$(awk '/^port/ {print $2}' "$TMP/sink.port")
"$FLOOD" run "${common[@]}" --out "$TMP/capture" --inbox "http://127.0.0.1:$SPORT/inbox" \
    --rate 10 --duration 200ms >/dev/null 2>&1
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
[ -s "$TMP/req.txt" ] || { echo "bench_wrk2: flood's request was not captured" >&2; exit 1; }
python3 - "$TMP/req.txt" "$TMP/post.lua" "$TMP/body.json" <<'EOF'
import sys
raw = open(sys.argv[1], 'rb').read()
head, body = raw.split(b'\r\n\r\n', 1)
open(sys.argv[3], 'wb').write(body)
out = ['wrk.method = "POST"', 'local f = io.open("%s", "rb")' % sys.argv[3],
       'wrk.body = f:read("*a")', 'f:close()']
for line in head.decode().split('\r\n')[1:]:
    k, v = line.split(':', 1)
    if k.lower() in ('host', 'content-length'):
        continue
    out.append('wrk.headers["%s"] = "%s"' % (k, v.strip().replace('"', '\\"')))
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
EOF

echo "bench_wrk2: nginx on CPU $SRV_CPU, generators on CPU $GEN_CPU (nice ${BENCH_NICE:-0}$([ "${BENCH_NGINX_RT:-0}" = 1 ] && echo ", nginx SCHED_FIFO")), $secs s a run, $(wc -c <"$TMP/body.json") byte body; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bench_wrk2: flood: $FLOOD ${FLOOD_ARGS:-}${FLOOD_B:+; flood-b: $FLOOD_B ${FLOOD_B_ARGS:-}}${FLOOD_C:+; flood-c: $FLOOD_C ${FLOOD_C_ARGS:-}}; wrk2: $WRK2"

# a run's figures, one line: NAME RATE ROUND ANSWERED CPU_S PER_CPU P99_MS LAG_P99_MS SUSTAINED
# (wrk2's offer: the share of RATE x SECONDS it sent at 1,000/s, WRK2_OFFER)
WRK2_OFFER=1
fig() {
    awk -v n="$1" -v r="$2" -v k="$3" -v a="$4" -v c="$5" -v p="$6" -v l="$7" -v d="$secs" \
        -v f="$WRK2_OFFER" \
        'BEGIN { pc = (c > 0 ? a / c : 0); if (n == "wrk2") d *= f;
                 s = (a >= 0.99 * r * d && p <= 10) ? "yes" : "no";
                 printf "%s %d %d %d %.3f %d %.3f %s %s\n", n, r, k, a, c, pc, p, l, s }'
}

run_flood() { # NAME BINARY RATE ROUND [OPTIONS...]
    local name=$1 bin=$2 rate=$3 round=$4 dir="$TMP/$1-$3-$4"
    shift 4
    "${NICE[@]}" taskset -c "$GEN_CPU" "$bin" run "${common[@]}" --out "$dir" --inbox "$INBOX" \
        --rate "$rate" --duration "${secs}s" --timeout 5s "$@" >"$dir.out" 2>"$dir.err"
    local a c p l
    a=$(jq -r '[.totals.outcomes | to_entries[] | select(.key | test("^2")) | .value] | add // 0' "$dir/run.json" 2>/dev/null)
    c=$(jq -r '.generator.cpu_s' "$dir/run.json" 2>/dev/null)
    p=$(jq -r '.totals.latency_ms.p99' "$dir/run.json" 2>/dev/null)
    l=$(jq -r '.totals.dispatch_lag_ms.p99' "$dir/run.json" 2>/dev/null)
    fig "$name" "$rate" "$round" "${a:-0}" "${c:-0}" "${p:-999999}" "${l:--}" >>"$TMP/figs"
}

run_wrk2() { # RATE ROUND
    local rate=$1 round=$2 out="$TMP/wrk2-$1-$2"
    "${NICE[@]}" taskset -c "$GEN_CPU" /usr/bin/time -f 'cpu %U %S' -o "$out.time" \
        "$WRK2" -t1 -c64 -d "${secs}s" -R "$rate" --latency -s "$TMP/post.lua" "$INBOX" \
        >"$out.out" 2>&1
    local a c p
    # wrk2 counts every request answered in its window; non-2xx ones are listed apart
    a=$(awk '/requests in/ {print $1}' "$out.out")
    local bad
    bad=$(awk '/Non-2xx or 3xx responses/ {print $NF}' "$out.out")
    a=$((${a:-0} - ${bad:-0}))
    c=$(awk '/^cpu/ {print $2 + $3}' "$out.time")
    # the 99.000% line of the corrected latency distribution, in ms
    p=$(awk '$1 == "99.000%" { v = $2; u = v; sub(/[a-z]+$/, "", v); sub(/^[0-9.]+/, "", u);
              m = (u == "us" ? 0.001 : u == "s" ? 1000 : u == "m" ? 60000 : 1); print v * m; exit }' "$out.out")
    fig wrk2 "$rate" "$round" "$a" "${c:-0}" "${p:-999999}" - >>"$TMP/figs"
}

: >"$TMP/figs"
# wrk2's own offer, at a rate it holds with room to spare
run_wrk2 1000 0
WRK2_OFFER=$(awk '{ printf "%.4f", $4 / (1000 * '"$secs"') }' "$TMP/figs")
echo "bench_wrk2: wrk2's offer: $(awk '{print $4}' "$TMP/figs") answered at 1000/s in $secs s: $WRK2_OFFER of rate x seconds"
: >"$TMP/figs"
for rate in $rates; do
    for round in $(seq 1 "$rounds"); do
        # the order turns each round: neither generator always runs first
        if [ $((round % 2)) = 1 ]; then
            run_flood flood "$FLOOD" "$rate" "$round" "${flood_args[@]}"
            [ -n "$FLOOD_B" ] && run_flood flood-b "$FLOOD_B" "$rate" "$round" "${flood_b_args[@]}"
            [ -n "$FLOOD_C" ] && run_flood flood-c "$FLOOD_C" "$rate" "$round" "${flood_c_args[@]}"
            run_wrk2 "$rate" "$round"
        else
            run_wrk2 "$rate" "$round"
            [ -n "$FLOOD_C" ] && run_flood flood-c "$FLOOD_C" "$rate" "$round" "${flood_c_args[@]}"
            [ -n "$FLOOD_B" ] && run_flood flood-b "$FLOOD_B" "$rate" "$round" "${flood_b_args[@]}"
            run_flood flood "$FLOOD" "$rate" "$round" "${flood_args[@]}"
        fi
        grep " $rate $round " "$TMP/figs" | while read -r n r k a c pc p l s; do
            echo "bench_wrk2:   $n at $r/s, round $k: $a answered, CPU $c s, $pc req per CPU-second, answer p99 $p ms$([ "$l" != - ] && echo ", lag p99 $l ms"), sustained: $s"
        done
    done
done

# per rate: the median over the rounds of each generator's requests per CPU-second, the
# ratio against wrk2's, and whether it sustained the rate in every round
echo "bench_wrk2: load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TMP/figs" <<'EOF'
import sys, statistics
runs = {}
for line in open(sys.argv[1]):
    n, r, k, a, c, pc, p, l, s = line.split()
    runs.setdefault((n, int(r)), []).append((int(pc), float(p), s == "yes"))
names = sorted({n for n, _ in runs}, key=lambda n: (n != "wrk2", n))
rates = sorted({r for _, r in runs})
best = {}
for r in rates:
    w = runs.get(("wrk2", r), [])
    wpc = statistics.median(x[0] for x in w) if w else 0
    parts = []
    for n in names:
        x = runs.get((n, r), [])
        if not x:
            continue
        pc = statistics.median(v[0] for v in x)
        p99 = statistics.median(v[1] for v in x)
        sus = all(v[2] for v in x)
        if sus:
            best[n] = r
        ratio = "" if n == "wrk2" else ", %.2f of wrk2's" % (pc / wpc if wpc else 0)
        parts.append("%s %d req per CPU-second%s (answer p99 %.2f ms%s)" %
                     (n, pc, ratio, p99, "" if sus else ", not sustained"))
    print("bench_wrk2: at %d/s: %s" % (r, "; ".join(parts)))
print("bench_wrk2: figures: highest rate sustained on one core: %s" %
      ", ".join("%s %d/s" % (n, best.get(n, 0)) for n in names))
EOF

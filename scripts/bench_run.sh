#!/usr/bin/env bash
# scripts/bench_run.sh: the sender's benchmarks (issue 4, "Performance"), measured side by
# side in one run on this machine, printed as figures and ratios:
#   1. the HTTP path: nginx answering 202 on /inbox pinned to one core, the generator on
#      another; wrk's closed-loop POST rate with flood's own body and headers is the
#      reference; flood's highest sustained open-loop rate with --sign none and one loop
#      (at least 99% of offered answered, dispatch lag p99 at most 1 ms beyond flood's
#      dispatch quantum: 2 ms with the default 1 ms), found by stepping
#      rates, and its requests per CPU-second against wrk's (both processes' user+system);
#      the same over https (nginx with TLS, wrk over https);
#   1b. loops: requests per CPU-second with --loops 2 against --loops 1 at one rate,
#      alternated;
#   1c. the dispatch quantum: requests per CPU-second with --dispatch-quantum 1ms (wrk2's
#      timer tick, flood's default) and 200us at one rate, alternated, against wrk's;
#   2. the signed path: flood's highest sustained rate with a fresh RSA-2048 signature on
#      every request and S signer threads, against S x `openssl speed rsa2048` sign/s;
#      then a signer on every core, unpinned, against `openssl speed -multi` (within the
#      machine's lateness);
#   3. pacing: 5000/s for 20 s unsigned and 600/s with RSA-2048 (plain posts, and the
#      realistic mix of every kind with --content default): every whole second's sends
#      within 0.5% of the rate, dispatch lag p99 at most 1 ms beyond the quantum;
#   4. memory: resident size with 10,000 requests in flight (a sink that never answers).
# About seven minutes. Needs nginx (nginx-light), wrk, taskset, jq, openssl.
#
#   scripts/bench_run.sh [--quick]      (--quick: shorter steps, for a smoke run)
set -u
cd "$(dirname "$0")/.."
FLOOD=${FLOOD:-$PWD/build/flood}
SINK=${SINK:-${FLOOD_BUILD:-$PWD/build}/tools/sink}
STATE=${TEST_STATE:-$PWD/build/test-state}
quick=0
[ "${1:-}" = "--quick" ] && quick=1
step_s=4
pace_s=20
[ "$quick" = 1 ] && step_s=2 && pace_s=5

for tool in nginx wrk taskset jq openssl; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || {
        echo "bench: $tool is missing (scripts/deps.sh installs it)" >&2
        exit 1
    }
done
[ -x "$FLOOD" ] || { echo "bench: no flood binary at $FLOOD (make)" >&2; exit 1; }
[ -x "$SINK" ] || { echo "bench: no sink at $SINK (make)" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

cores=$(nproc)
if [ "$cores" -ge 2 ]; then
    SRV_CPU=0
    GEN_CPU=1
    [ "$cores" -ge 4 ] && GEN_CPU=1-$((cores - 1))
else
    SRV_CPU=0
    GEN_CPU=0
    echo "bench: one core only: nginx and the generator share it" >&2
fi
gen_cores=$(taskset -c "$GEN_CPU" nproc)
TMP=$(mktemp -d)
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ---- the machine's own timer lateness: a reference for dispatch lag -------------------
base=$(taskset -c "${GEN_CPU%%-*}" python3 -c '
import time
d = []
for _ in range(400):
    t = time.monotonic_ns() + 5000000
    time.sleep(0.005)
    d.append((time.monotonic_ns() - t) / 1e6)
d.sort()
print("%.3f %.3f" % (d[200], d[396]))
')
base_p50=${base% *}
base_p99=${base#* }
# A request leaves up to a dispatch quantum after its intended time by design (flood's
# default --dispatch-quantum, wrk2's own tick): the verdicts allow 1 ms of lateness beyond
# it (LAG_LIMIT). Dispatch lag cannot beat the machine's own wakeup lateness either: every
# verdict is also given against the quantum and twice the machine's p99 (at least 1 ms).
QUANTUM_MS=1
LAG_LIMIT=$(awk -v q="$QUANTUM_MS" 'BEGIN { printf "%.3f", q + 1 }')
LAG_MACHINE=$(awk -v b="$base_p99" -v q="$QUANTUM_MS" 'BEGIN { v = 2 * b; printf "%.3f", q + (v > 1 ? v : 1) }')
echo "bench: this machine's own wakeup lateness (5 ms sleeps on the generator's core): p50 $base_p50 ms, p99 $base_p99 ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- nginx: 202 on /inbox, one worker, pinned ------------------------------------------
NPORT=$(free_port)
TPORT=$(free_port)
mkdir -p "$TMP/nginx"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
    -keyout "$TMP/nginx/key.pem" -out "$TMP/nginx/cert.pem" >/dev/null 2>&1
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
    server {
        listen 127.0.0.1:$TPORT ssl;
        ssl_certificate $TMP/nginx/cert.pem;
        ssl_certificate_key $TMP/nginx/key.pem;
        ssl_session_cache shared:S:1m;
        location = /inbox { return 202; }
        location / { return 404; }
    }
}
EOF
taskset -c "$SRV_CPU" "$NGINX" -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" \
    >"$TMP/nginx/out.log" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 1 100); do
    curl -s -o /dev/null -X POST "http://127.0.0.1:$NPORT/inbox" && break
    sleep 0.05
done
INBOX="http://127.0.0.1:$NPORT/inbox"
TINBOX="https://127.0.0.1:$TPORT/inbox"

common=(--listen 127.0.0.1:0 --state "$STATE" --instances 2 --actors 3 --key-pool 1
    --mix create=1 --quiet --connections 64)

# run_flood NAME ARGS...: one flood run pinned to the generator's cores, into $TMP/NAME
run_flood() {
    local name=$1
    shift
    taskset -c "$GEN_CPU" "$FLOOD" run "${common[@]}" --out "$TMP/$name" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
}
j() { jq -r "$2" "$TMP/$1/run.json" 2>/dev/null; }

# sustained NAME RATE LAG_LIMIT: at least 99% of the offered answered 202, dispatch lag
# p99 at most LAG_LIMIT ms, none shed
sustained() {
    local ok lag shed
    ok=$(j "$1" '.totals.outcomes["202"]')
    lag=$(j "$1" '.totals.dispatch_lag_ms.p99')
    shed=$(j "$1" '.totals.shed')
    [ -n "$ok" ] || return 1
    awk -v ok="$ok" -v r="$2" -v d="$step_s" -v lag="$lag" -v shed="$shed" -v lim="$3" \
        'BEGIN { exit !(ok >= 0.99 * r * d && lag <= lim && shed == 0) }'
}

# ---- 1. the HTTP path ------------------------------------------------------------------
# flood's own request, captured by the sink, is what wrk sends
"$SINK" --dump "$TMP/req.txt" --exit-after 60 >"$TMP/sink.port" &
SPID=$!
PIDS="$PIDS $SPID"
sleep 0.2
SPORT=$(awk '/^port/ {print $2}' "$TMP/sink.port")
"$FLOOD" run "${common[@]}" --out "$TMP/capture" --inbox "http://127.0.0.1:$SPORT/inbox" \
    --rate 10 --duration 200ms --sign none >/dev/null 2>&1
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
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
wrk_s=5
[ "$quick" = 1 ] && wrk_s=3
# wrk_run URL NAME: wrk closed loop on the generator's cores; req/s and its CPU seconds
wrk_run() {
    taskset -c "$GEN_CPU" /usr/bin/time -f 'cpu %U %S' -o "$TMP/$2.time" \
        wrk -t "$gen_cores" -c 64 -d "${wrk_s}s" -s "$TMP/post.lua" "$1" >"$TMP/$2.out" 2>&1
    local rps req cpu
    rps=$(awk '/^Requests\/sec/ {print $2}' "$TMP/$2.out")
    req=$(awk '/requests in/ {print $1}' "$TMP/$2.out")
    cpu=$(awk '/^cpu/ {print $2 + $3}' "$TMP/$2.time")
    echo "$rps $(awk -v r="$req" -v c="$cpu" 'BEGIN { printf "%d", (c > 0 ? r / c : 0) }')"
}
# per_cpu NAME: flood's requests answered per CPU-second of the whole process
per_cpu() {
    jq -r '(.totals.completed / (.generator.cpu_s + 1e-9)) | floor' "$TMP/$1/run.json" 2>/dev/null
}

# http_path LABEL URL: wrk's rate and flood's highest sustained --sign none rate, one loop
http_path() {
    local label=$1 url=$2 w wrk_rps wrk_pc
    w=$(wrk_run "$url" "wrk-$label")
    wrk_rps=${w% *}
    wrk_pc=${w#* }
    echo "bench: $label: wrk closed loop, 64 connections, $(wc -c <"$TMP/body.json") byte body: ${wrk_rps} req/s, $wrk_pc req per CPU-second"
    local best=0 mbest=0 best_pc=0 mbest_pc=0 limit=""
    for rate in 1000 2000 3000 5000 7500 10000 15000 20000 30000 40000 50000 60000 80000; do
        # a rate not sustained is tried once more (every try printed): one stall of this
        # shared machine should not end the steps, a rate flood cannot hold fails twice; a
        # second or third miss while the host took 1% or more of the generator's core
        # (steal) is tried again, up to four tries
        local try lag ok cpu pc verdict steal share
        for try in 1 2 3 4; do
            run_flood "$label-$rate" --inbox "$url" --rate "$rate" --duration "${step_s}s" \
                --sign none --timeout 5s --loops 1 --insecure
            verdict="not sustained"
            lag=$(j "$label-$rate" '.totals.dispatch_lag_ms.p99')
            ok=$(j "$label-$rate" '.totals.outcomes["202"]')
            cpu=$(j "$label-$rate" '.generator.loop_cpu_share')
            pc=$(per_cpu "$label-$rate")
            steal=$(j "$label-$rate" '(.generator.steal_s // 0) * 1000 | floor')
            share=$(j "$label-$rate" '(.generator.steal_share // 0) * 100 | . * 10 | floor / 10')
            if sustained "$label-$rate" "$rate" "$LAG_LIMIT"; then
                verdict="sustained"
                best=$rate best_pc=$pc
            fi
            if sustained "$label-$rate" "$rate" "$LAG_MACHINE"; then
                mbest=$rate mbest_pc=$pc
                [ "$best" = "$rate" ] || verdict="sustained within the machine's lateness ($LAG_MACHINE ms)"
            fi
            echo "bench:   $label --sign none at $rate/s$([ "$try" -gt 1 ] && echo ", try $try"): $verdict ($ok of $((rate * step_s)) answered, lag p99 $lag ms, event loop $(printf '%.2f' "$cpu") of a core, $pc req per CPU-second, the host's steal $steal ms, $share%)"
            [ "$best" = "$rate" ] && break
            [ "$try" -ge 2 ] && awk -v s="$share" 'BEGIN { exit !(s < 1) }' && break
            [ "$try" -lt 4 ] && rm -rf "${TMP:?}/$label-$rate"
        done
        if [ "$mbest" != "$rate" ]; then
            limit="at $rate/s: event loop $(printf '%.2f' "$cpu") of a core, lag p99 $lag ms, $ok of $((rate * step_s)) answered, the host took $steal ms of the generator's core"
            break
        fi
    done
    local ratio pratio mratio mpratio
    ratio=$(awk -v a="$best" -v b="$wrk_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    pratio=$(awk -v a="$best_pc" -v b="$wrk_pc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    mratio=$(awk -v a="$mbest" -v b="$wrk_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    mpratio=$(awk -v a="$mbest_pc" -v b="$wrk_pc" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    echo "bench: $label path: flood --sign none, one loop, sustains $best/s with lag p99 <= $LAG_LIMIT ms (ratio to wrk's $wrk_rps/s: $ratio, aim >= 0.5; per CPU-second $best_pc against wrk's $wrk_pc: $pratio, aim >= 0.5) and $mbest/s within the machine's lateness $LAG_MACHINE ms (ratio $mratio; per CPU-second $mbest_pc: $mpratio); the limit: ${limit:-not reached}"
    eval "${label}_best=$best ${label}_wrk=$wrk_rps ${label}_ratio=$ratio ${label}_cpu_ratio=$pratio"
    eval "${label}_wrk_pc=$wrk_pc"
    eval "${label}_mratio=$mratio ${label}_mcpu_ratio=$mpratio"
}
http_path http "$INBOX"
http_path https "$TINBOX"
best=$http_best
[ "$best" = 0 ] && best=$(awk -v r="$http_mratio" -v w="$http_wrk" 'BEGIN { printf "%d", r * w }')

# ---- 1b. loops: requests per CPU-second, 2 loops against 1 -----------------------------
lrate=$(awk -v b="$best" 'BEGIN { r = int(b * 0.6 / 1000) * 1000; print (r < 2000 ? 2000 : r) }')
l1=0 l2=0
for round in 1 2; do
    for n in 1 2; do
        run_flood "loops$n-$round" --inbox "$INBOX" --rate "$lrate" --duration "${step_s}s" \
            --sign none --timeout 5s --loops "$n"
        pc=$(per_cpu "loops$n-$round")
        echo "bench:   --loops $n at $lrate/s, round $round: $pc req per CPU-second ($(j "loops$n-$round" '.totals.outcomes["202"]') answered, busiest loop $(printf '%.2f' "$(j "loops$n-$round" '.generator.loop_cpu_share')") of a core)"
        [ "$n" = 1 ] && l1=$((l1 + pc))
        [ "$n" = 2 ] && l2=$((l2 + pc))
    done
done
lratio=$(awk -v a="$l2" -v b="$l1" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "bench: loops: requests per CPU-second with 2 loops against 1 at $lrate/s (sum of 2 rounds): ratio $lratio (aim: within 10%, >= 0.90)"

# ---- 1c. the dispatch quantum: requests per CPU-second with wrk2's timer tick ----------
# --dispatch-quantum 1ms (wrk2's timers tick each millisecond; flood's default) against 200us at
# one rate, alternated, against wrk's closed loop: the cost of tighter sends than the default
qrate=$(awk -v b="$best" 'BEGIN { r = int(b * 0.6 / 1000) * 1000; print (r < 5000 ? 5000 : r) }')
q_def=0 q_1ms=0
for round in 1 2; do
    for q in 200us 1ms; do
        run_flood "quantum-$q-$round" --inbox "$INBOX" --rate "$qrate" --duration "${step_s}s" \
            --sign none --timeout 5s --loops 1 --dispatch-quantum "$q"
        pc=$(per_cpu "quantum-$q-$round")
        echo "bench:   --dispatch-quantum $q at $qrate/s, round $round: ${pc:-0} req per CPU-second (lag p99 $(j "quantum-$q-$round" '.totals.dispatch_lag_ms.p99') ms)"
        [ "$q" = 200us ] && q_def=$((q_def + ${pc:-0}))
        [ "$q" = 1ms ] && q_1ms=$((q_1ms + ${pc:-0}))
    done
done
q1ms_cpu_ratio=$(awk -v a="$q_1ms" -v b="$http_wrk_pc" 'BEGIN { printf "%.2f", (b > 0 ? a / 2 / b : 0) }')
qdef_cpu_ratio=$(awk -v a="$q_def" -v b="$http_wrk_pc" 'BEGIN { printf "%.2f", (b > 0 ? a / 2 / b : 0) }')
echo "bench: dispatch quantum: at $qrate/s, requests per CPU-second against wrk's closed loop: $qdef_cpu_ratio with --dispatch-quantum 200us, $q1ms_cpu_ratio with the default 1ms (wrk2's tick)"

# ---- 2. the signed path ----------------------------------------------------------------
# signed_steps TAG LABEL CPUS SIGNERS CAP: step the signed path down from CAP (fractions
# of it) on CPUS until a rate is sustained with lag p99 <= LAG_LIMIT; sets s_best to that rate
# and s_mbest to the first sustained within the machine's lateness
signed_steps() {
    local tag=$1 label=$2 cpus=$3 signers=$4 cap=$5 f rate lag nr verdict
    s_best=0
    s_mbest=0
    for f in 1.00 0.95 0.90 0.85 0.80 0.70 0.60 0.50; do
        rate=$(awk -v c="$cap" -v f="$f" 'BEGIN { printf "%d", c * f }')
        GEN_CPU=$cpus run_flood "$tag-$rate" --inbox "$INBOX" --rate "$rate" \
            --duration "${step_s}s" --sign cavage --signers "$signers" --timeout 5s
        lag=$(j "$tag-$rate" '.totals.dispatch_lag_ms.p99')
        nr=$(j "$tag-$rate" '.generator.not_ready')
        verdict="not sustained"
        if sustained "$tag-$rate" "$rate" "$LAG_MACHINE"; then
            [ "$s_mbest" = 0 ] && s_mbest=$rate
            verdict="sustained within the machine's lateness ($LAG_MACHINE ms)"
        fi
        if sustained "$tag-$rate" "$rate" "$LAG_LIMIT"; then
            s_best=$rate
            verdict="sustained"
        fi
        echo "bench:   RSA-2048 cavage$label at $rate/s ($f of openssl): $verdict (lag p99 $lag ms, $nr not signed in time)"
        [ "$s_best" = 0 ] || break
    done
}
ratio_of() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

ossl=$(taskset -c "${GEN_CPU%%-*}" openssl speed -seconds 2 rsa2048 2>/dev/null |
    awk '/^rsa 2048 bits/ {print $6}')
S=$gen_cores
cap=$(awk -v o="$ossl" -v s="$S" 'BEGIN { printf "%d", o * s }')
signed_steps rsa "" "$GEN_CPU" "$S" "$cap"
sbest=$s_best smbest=$s_mbest
sratio=$(ratio_of "$sbest" "$cap")
smratio=$(ratio_of "$smbest" "$cap")
echo "bench: signed path: $S signer(s) on $gen_cores core(s) (shared with the event loop) sustain $sbest/s (<= $LAG_LIMIT ms) and $smbest/s (<= $LAG_MACHINE ms); $S x openssl speed rsa2048 = $cap sign/s: ratio $sratio, $smratio within the machine's lateness (aim >= 0.9)"

# 2b. the whole machine: a signer on every core and the loop among them (nginx shares core
# 0, at these rates a tenth of it), against `openssl speed -multi` on every core: what a
# machine of this size signs, where the pinned step above also charges the loop's share of
# its one core to one signer
cap_all=$(openssl speed -seconds 2 -multi "$cores" rsa2048 2>/dev/null |
    awk '/^rsa 2048 bits/ {printf "%d", $6}')
signed_steps rsa-all ", $cores signers on every core," "0-$((cores - 1))" "$cores" "$cap_all"
abest=$s_best ambest=$s_mbest
aratio=$(ratio_of "$abest" "$cap_all")
amratio=$(ratio_of "$ambest" "$cap_all")
echo "bench: signed path, the whole machine: $cores signers and the loop on $cores cores sustain $abest/s (<= $LAG_LIMIT ms) and $ambest/s (<= $LAG_MACHINE ms); openssl speed -multi $cores rsa2048 = $cap_all sign/s: ratio $aratio, $amratio within the machine's lateness (aim >= 0.9)"

# ---- 3. pacing -------------------------------------------------------------------------
# pace NAME RATE: the worst whole second's deviation from the rate (seconds 1 .. n-2), lag
pace() {
    local worst lag
    # the schedule's whole seconds but its first and last (the series goes on through the
    # wait for Accepts after the schedule, with nothing sent)
    worst=$(jq -r --argjson r "$2" --argjson d "$pace_s" \
        '[.series[] | select(.t >= 1 and .t < $d - 1) | ((.sent - $r) | fabs) / $r * 100] | max // 0' \
        "$TMP/$1/run.json" 2>/dev/null)
    lag=$(j "$1" '.totals.dispatch_lag_ms.p99')
    local verdict="within 0.5% and $LAG_LIMIT ms"
    if ! awk -v w="$worst" -v l="$lag" -v m="$LAG_LIMIT" 'BEGIN { exit !(w <= 0.5 && l <= m) }'; then
        verdict="NOT within 0.5% and $LAG_LIMIT ms"
        awk -v w="$worst" -v l="$lag" -v m="$LAG_MACHINE" 'BEGIN { exit !(w <= 0.5 && l <= m) }' &&
            verdict="$verdict; within 0.5% and the machine's lateness ($LAG_MACHINE ms)"
    fi
    echo "bench: pacing $3 at $2/s for ${pace_s}s: worst second $(printf '%.3f' "$worst")% off the rate, dispatch lag p99 $lag ms, late sends $(j "$1" .generator.late_sends): $verdict"
}
run_flood pace-none --inbox "$INBOX" --rate 5000 --duration "${pace_s}s" --sign none
pace pace-none 5000 "--sign none"
run_flood pace-rsa --inbox "$INBOX" --rate 600 --duration "${pace_s}s" --sign cavage --signers "$S" \
    --content plain
pace pace-rsa 600 "RSA-2048, plain posts"
# the realistic traffic beside it: every kind, rich bodies built by the same signer threads
run_flood pace-real --inbox "$INBOX" --rate 600 --duration "${pace_s}s" --sign cavage --signers "$S" \
    --content default --mix create=40,reply=10,announce=15,like=20,follow=5,update=5,delete=5 \
    --like-object "${INBOX%/inbox}/users/alice/statuses/1"
pace pace-real 600 "RSA-2048, the realistic mix (--content default)"
lag_plain=$(j pace-rsa '.totals.dispatch_lag_ms.p99')
lag_real=$(j pace-real '.totals.dispatch_lag_ms.p99')
echo "bench: realistic against plain at 600/s signed: dispatch lag p99 $lag_real ms against $lag_plain ms (ratio $(awk -v a="$lag_real" -v b="$lag_plain" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'))"

# ---- 4. memory at 10,000 in flight -----------------------------------------------------
"$SINK" --mode hang --exit-after 120 >"$TMP/hang.port" &
HPID=$!
PIDS="$PIDS $HPID"
sleep 0.2
HPORT=$(awk '/^port/ {print $2}' "$TMP/hang.port")
taskset -c "$GEN_CPU" "$FLOOD" run "${common[@]}" --out "$TMP/rss" \
    --inbox "http://127.0.0.1:$HPORT/inbox" --rate 5000 --duration 4s --sign none \
    --max-inflight 10000 --timeout 60s --grace 0 >"$TMP/rss.out" 2>&1 &
FPID=$!
PIDS="$PIDS $FPID"
peak=0
for _ in $(seq 1 40); do
    kb=$(awk '/^VmRSS/ {print $2}' "/proc/$FPID/status" 2>/dev/null)
    [ -n "$kb" ] && [ "$kb" -gt "$peak" ] && peak=$kb
    sleep 0.1
done
kill -INT "$FPID" 2>/dev/null
wait "$FPID" 2>/dev/null
kill "$HPID" 2>/dev/null
inflight=$(jq -r '[.series[].in_flight] | max' "$TMP/rss/run.json" 2>/dev/null)
echo "bench: memory: resident $((peak / 1024)) MB with up to $inflight requests in flight (aim: 10000 under 200 MB)"
echo "bench: figures: machine_wakeup_p99_ms=$base_p99 wrk=$http_wrk none_max=$http_best ratio=$http_ratio cpu_ratio=$http_cpu_ratio wrk_https=$https_wrk https_max=$https_best https_ratio=$https_ratio https_cpu_ratio=$https_cpu_ratio http_machine_ratio=$http_mratio http_machine_cpu_ratio=$http_mcpu_ratio https_machine_ratio=$https_mratio https_machine_cpu_ratio=$https_mcpu_ratio loops_ratio=$lratio signed_max=$sbest signed_max_machine=$smbest openssl_x_S=$cap signed_ratio=$sratio signed_ratio_machine=$smratio openssl_multi=$cap_all signed_all_max=$abest signed_all_ratio=$aratio signed_all_ratio_machine=$amratio rss_mb=$((peak / 1024)) quantum_rate=$qrate cpu_ratio_q200us=$qdef_cpu_ratio cpu_ratio_q1ms=$q1ms_cpu_ratio"

#!/usr/bin/env bash
# scripts/soak.sh: what `make soak` runs: one long signed run against the reference target
# (tests/target, Fedify) with the crowd answering its deliveries and fetches, faults switched
# on and off through the dashboard's steering API all along, and flood's own resident memory,
# open descriptors and lateness sampled at fixed times. The verdict: no growth of memory or
# descriptors over the last two thirds of the run (within SOAK_LIMIT_PCT, 5%; descriptors
# are flood's own, all but the target's connections to the crowd, which the target keeps
# open or closes), no growth of the lag p99 beyond 5% or 250 ms, and every scheduled
# activity accounted for (run.json's conservation). Not part of make check or CI.
#
#   SOAK_SECONDS=3600 scripts/soak.sh        (the default: an hour)
#   SOAK_SECONDS=300 scripts/soak.sh         (a short run: the windows scale, see below)
#
# Environment (each optional):
#   SOAK_SECONDS     how long flood sends (default 3600)
#   SOAK_RATE        activities a second (default 2000)
#   SOAK_ACCEPT      activities a second the target takes into its queue: its per-origin
#                    token bucket refills SOAK_ACCEPT / SOAK_INSTANCES a second per crowd
#                    instance and answers 429 with Retry-After beyond (default 20; 0: no
#                    limit, and a target that cannot keep up grows its queue for the hour)
#   SOAK_INSTANCES   crowd instances (default 20, 10 actors each)
#   SOAK_MIX         flood run's --mix (default: the realistic mix below)
#   SOAK_LIMIT_PCT   the largest growth allowed (default 5)
#   SOAK_OUT         the run folder (default out/soak/UTCSTAMP)
#   FLOOD            the flood binary (default build/flood)
#
# Sampling: 60 samples over the run, one every SOAK_SECONDS/60 seconds (each minute for the
# hour, at the middle of each minute; every 5 s for 300 s). The verdict's window is the last 40 samples (the last 40
# minutes of the hour, the last two thirds of any run): the median of its first 5 samples
# against the median of its last 5. Faults switch every SOAK_SECONDS/20 seconds (3 minutes
# for the hour): one of four faults on for a period, then off for the next, in turn.
#
# Output in the run folder: soak.tsv (one row a sample), rows.jsonl (flood's per-second rows
# from the dashboard's stream), faults.tsv (each switch and its answer), flood/ (run.json,
# report.html), target.log, flood.log, summary.md (the 10-sample rows, the verdict, the
# command, the load average). Exit 0 when the verdict passes, 1 when it fails, 2 when the
# soak could not run (the step is named).
set -u
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

S=${SOAK_SECONDS:-3600}
RATE=${SOAK_RATE:-2000}
ACCEPT=${SOAK_ACCEPT:-20}
INSTANCES=${SOAK_INSTANCES:-20}
LIMIT=${SOAK_LIMIT_PCT:-5}
MIX=${SOAK_MIX:-create=50,like=15,announce=8,reply=8,follow=6,undo=4,update=4,delete=3,emoji-react=2}
FLOOD=${FLOOD:-$ROOT/build/flood}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${SOAK_OUT:-$ROOT/out/soak/$STAMP}

die() {
    echo "soak: $*" >&2
    [ -d "${OUT:-}" ] && echo "soak: $*" >>"$OUT/error.txt"
    exit 2
}
is_int() { [[ "$1" =~ ^[0-9]+$ ]]; }
is_int "$S" && [ "$S" -ge 60 ] || die "SOAK_SECONDS: expected whole seconds >= 60, got '$S'"
is_int "$RATE" && [ "$RATE" -ge 1 ] || die "SOAK_RATE: expected an integer >= 1, got '$RATE'"
is_int "$ACCEPT" || die "SOAK_ACCEPT: expected an integer >= 0, got '$ACCEPT'"
is_int "$INSTANCES" && [ "$INSTANCES" -ge 10 ] || die "SOAK_INSTANCES: expected an integer >= 10, got '$INSTANCES'"
[[ "$LIMIT" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "SOAK_LIMIT_PCT: expected a number, got '$LIMIT'"
for tool in node curl jq awk python3; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is missing (scripts/deps.sh installs it)"
done
[ -x "$FLOOD" ] || die "no flood binary at '$FLOOD' (make, or FLOOD=PATH)"
[ -d tests/target/node_modules/@fedify/fedify ] ||
    die "the reference target's packages are missing (scripts/deps.sh runs npm ci in tests/target)"
mkdir -p "$OUT" || die "cannot create '$OUT'"
OUT=$(cd "$OUT" && pwd)

# 60 samples, the fault switches every 1/20 of the run
NS=60
STEP_S=$(awk -v s="$S" 'BEGIN { printf "%.3f", s / 60 }')
FAULT_S=$(awk -v s="$S" 'BEGIN { printf "%.3f", s / 20 }')
WIN=40 # the verdict's window: the last 40 samples
EDGE=5 # compared: the median of its first 5 against its last 5

PIDS=""
FPID=""
# Interrupted, flood run gets SIGTERM and its --grace (15 s) and more to write its results
# before anything is killed; the target and the helpers get 5 s.
cleanup() {
    local rc=$? p n
    trap - EXIT INT TERM
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    for p in $PIDS; do
        n=50
        [ "$p" = "$FPID" ] && n=300
        for _ in $(seq 1 "$n"); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "soak: interrupted" >&2; exit 130' INT TERM
log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$OUT/log.txt" >&2; }

# a port named before its listener starts (the target and the crowd name each other)
. "$ROOT/tests/tools/ports.sh"
CPORT=$(pick_port) || die "no free port for the crowd"

# ---- the reference target -----------------------------------------------------------------
TARGS=(--listen 127.0.0.1:0 --domain target.test --workers 2 --resolve-crowd "127.0.0.1:$CPORT")
if [ "$ACCEPT" -gt 0 ]; then
    REFILL=$(awk -v a="$ACCEPT" -v n="$INSTANCES" 'BEGIN { printf "%g", a / n }')
    BURST=$(awk -v r="$REFILL" 'BEGIN { b = int(r * 2); print (b < 1 ? 1 : b) }')
    TARGS+=(--origin-burst "$BURST" --origin-refill "$REFILL")
fi
LIFE=$((S + 900))
timeout -k 5 "$LIFE" node tests/target/server.mjs "${TARGS[@]}" >"$OUT/target.out" 2>"$OUT/target.log" &
TPID=$!
PIDS="$PIDS $TPID"
TPORT=""
for _ in $(seq 1 300); do
    TPORT=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$OUT/target.out" | head -1)
    [ -n "$TPORT" ] && break
    kill -0 "$TPID" 2>/dev/null || break
    sleep 0.1
done
[ -n "$TPORT" ] || die "the reference target did not start (log: $OUT/target.log)"
API="http://127.0.0.1:$TPORT"
acct=$(curl -sS --max-time 20 -X POST -H 'content-type: application/json' -d '{"username":"soak0"}' \
    "$API/admin/accounts") || die "the target's admin API did not answer"
TOKEN=$(echo "$acct" | jq -r '.token // empty')
[ -n "$TOKEN" ] || die "no account made on the target: $acct"
for k in 1 2 3; do
    curl -sS --max-time 20 -o /dev/null -H "authorization: Bearer $TOKEN" \
        --data-urlencode "status=Soak $STAMP: post $k, for the crowd to like and boost." \
        "$API/api/v1/statuses" || die "the target did not take a post"
done
log "reference target on 127.0.0.1:$TPORT (target.test), accepting ${ACCEPT:-any}/s (${BURST:-no} burst, ${REFILL:-no} refill per origin); crowd on 127.0.0.1:$CPORT"

# ---- flood run ----------------------------------------------------------------------------
RUN=("$FLOOD" run --listen "127.0.0.1:$CPORT" --instances "$INSTANCES" --actors 10
    --state "$OUT/state" --persona "http://target.test:$TPORT/users/soak0"
    --resolve "target.test:$TPORT:127.0.0.1" --allow-host "target.test:$TPORT"
    --rate "$RATE" --duration "${S}s" --sign cavage --mix "$MIX" --refollow undo-first
    --timeout 10s --grace 15s --dashboard 127.0.0.1:0 --out "$OUT/flood")
echo "${RUN[*]}" >"$OUT/command.txt"
"${RUN[@]}" >"$OUT/flood.out" 2>"$OUT/flood.log" &
FPID=$!
PIDS="$PIDS $FPID"
# a watchdog: flood gone after its run and a bound, whatever happens to this script
(sleep $((S + 600)); kill -TERM "$FPID" 2>/dev/null) &
PIDS="$PIDS $!"
DASH=""
for _ in $(seq 1 1800); do # 180 s: a fresh state folder makes the crowd's keys first
    DASH=$(sed -n 's/^flood: run: dashboard on \(http:\/\/[^/]*\)\/.*$/\1/p' "$OUT/flood.log" | head -1)
    [ -n "$DASH" ] && grep -q '^flood: run: [0-9]* activities over' "$OUT/flood.log" && break
    kill -0 "$FPID" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$DASH" ] || ! kill -0 "$FPID" 2>/dev/null; then
    tail -20 "$OUT/flood.log" >&2
    die "flood run did not start sending (log: $OUT/flood.log)"
fi
T0=$(date +%s.%N)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
log "flood run (pid $FPID) sending $RATE/s for $S s; dashboard $DASH; a sample every $STEP_S s, a fault switch every $FAULT_S s"

# The dashboard's per-second rows, kept (the stream starts again should it drop).
(
    while kill -0 "$FPID" 2>/dev/null; do
        curl -sN --max-time $((S + 120)) "$DASH/events" 2>/dev/null |
            sed -un 's/^data: \({"t":.*\)$/\1/p' >>"$OUT/rows.jsonl"
        sleep 1
    done
) &
PIDS="$PIDS $!"

# ---- the faults ---------------------------------------------------------------------------
# In turn, each on for a period and off for the next: the crowd's inboxes and documents slow,
# refusing, resetting connections, holding them without an answer.
FAULTS=("flood1-flood3|delay=2s,scope=all" "flood4-flood5|status=503,retry-after=5,scope=inbox"
    "flood6-flood7|reset,share=30%,scope=all" "flood8|hang,scope=inbox")
printf 't_s\tinstance\tspec\ton\tanswer\n' >"$OUT/faults.tsv"
switch_fault() { # switch_fault INDEX true|false
    local inst=${FAULTS[$1]%%|*} spec=${FAULTS[$1]#*|} t a
    t=$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { printf "%.1f", a - b }')
    a=$(curl -sS --max-time 10 -X POST -H 'content-type: application/json' \
        -d "{\"instance\":\"$inst\",\"spec\":\"$spec\",\"on\":$2}" "$DASH/api/fault" 2>&1 | tr -d '\n\t')
    printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$inst" "$spec" "$2" "$a" >>"$OUT/faults.tsv"
}
(
    k=0
    while :; do
        at=$(awk -v t0="$T0" -v k="$((k + 1))" -v p="$FAULT_S" 'BEGIN { printf "%.3f", t0 + k * p }')
        w=$(awk -v at="$at" -v now="$(date +%s.%N)" 'BEGIN { w = at - now; printf "%.3f", (w > 0 ? w : 0) }')
        sleep "$w"
        kill -0 "$FPID" 2>/dev/null || exit 0
        # period k+1 starts: an odd period switches fault (k/2 mod 4) on, an even one off
        awk -v at="$at" -v t0="$T0" -v s="$S" 'BEGIN { exit !(at - t0 < s - 1) }' || exit 0
        i=$(((k / 2) % ${#FAULTS[@]}))
        if [ $((k % 2)) = 0 ]; then switch_fault "$i" true; else switch_fault "$i" false; fi
        k=$((k + 1))
    done
) &
PIDS="$PIDS $!"

# ---- the samples --------------------------------------------------------------------------
# crowd_probe: the crowd's answer time as the target sees it, 10 GETs of actor documents of
# instances no fault touches (flood10 on), each on a new connection: "p50 max" in ms.
# fd_kinds: flood's descriptors by kind, "target crowd tcp sockets files": its TCP
# connections to the target, the crowd's side of the target's connections, its other TCP
# sockets (listeners, dashboard clients), sockets no TCP table lists (a connection already
# closed whose descriptor is still open, Unix sockets), and the rest (files, pipes, epoll)
fd_kinds() {
    local links socks all
    links=$(find "/proc/$FPID/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' 2>/dev/null)
    all=$(grep -c . <<<"$links")
    socks=$(grep -c '^socket:' <<<"$links")
    ss -Htanp 2>/dev/null | awk -v pid="pid=$FPID," -v tp="$TPORT" -v cp="$CPORT" \
        -v socks="$socks" -v all="$all" '
        index($0, pid) {
            n = split($0, u, pid) - 1 # one per descriptor of flood on the socket
            l = $4; sub(/.*:/, "", l); r = $5; sub(/.*:/, "", r)
            if (r == tp) t += n; else if (l == cp && $1 != "LISTEN") c += n; else o += n
        }
        END { printf "%d %d %d %d %d", t, c, o, socks - t - c - o, all - socks }'
}

crowd_probe() {
    local i u times=""
    for i in $(seq 0 9); do
        u="http://flood$((10 + i % (INSTANCES - 9))).test:$CPORT/users/user$((1 + i))"
        times="$times $(curl -s --max-time 10 -o /dev/null -w '%{time_total}' \
            --resolve "flood$((10 + i % (INSTANCES - 9))).test:$CPORT:127.0.0.1" \
            -H 'accept: application/activity+json' "$u" 2>/dev/null || echo 10)"
    done
    echo "$times" | tr ' ' '\n' | awk 'NF { print $1 * 1000 }' | sort -n |
        awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[int((NR + 1) / 2)], v[NR] }'
}
# live.tsv: what /proc and the crowd said at each sample; soak.tsv adds the figures of the
# seconds since the sample before, from run.json's series once the run has ended (the
# dashboard's stream, rows.jsonl, only feeds the progress lines)
printf 'sample\tt_s\trss_kib\tfds\tthreads\tcrowd_p50_ms\tcrowd_max_ms\tload1\tcrowd_conns\trss_anon_kib\trss_file_kib\tfd_target\tfd_crowd\tfd_tcp\tfd_socket\tfd_other\n' >"$OUT/live.tsv"
# minute_figures FILE FROM TO: over the per-second rows (one JSON object a line) with
# FROM <= t < TO: the median and the largest per-second lag p99, the largest latency p99,
# the last in-flight count, the mean sent a second, the largest Follow-to-Accept p99, the
# target's deliveries and fetches the crowd answered
minute_figures() {
    jq -rs --argjson a "$2" --argjson b "$3" '
        [.[] | select(.t >= $a and .t < $b)] as $r |
        if ($r | length) == 0 then "-\t-\t-\t-\t-\t-\t-\t-" else
        ([$r[].lag_p99_ms] | sort) as $l |
        [ $l[(($l | length) / 2 | floor)], ($l | max), ([$r[].p99_ms] | max), $r[-1].in_flight,
          (([$r[].sent] | add) / ($r | length) | floor), ([$r[].f2a_p99_ms // 0] | max),
          ([$r[].deliveries // 0] | add), ([$r[].fetches.total // 0] | add) ] | map(tostring) | join("\t")
        end' "$1" 2>/dev/null || printf -- '-\t-\t-\t-\t-\t-\t-\t-'
}
n=0
prev_t=0
while [ "$n" -lt "$NS" ]; do
    n=$((n + 1))
    at=$(awk -v t0="$T0" -v k="$n" -v p="$STEP_S" 'BEGIN { printf "%.3f", t0 + (k - 0.5) * p }')
    w=$(awk -v at="$at" -v now="$(date +%s.%N)" 'BEGIN { w = at - now; printf "%.3f", (w > 0 ? w : 0) }')
    sleep "$w" &
    wait $! # a signal ends the wait at once (a foreground sleep would hold its trap)
    kill -0 "$FPID" 2>/dev/null || { log "flood run ended before sample $n"; break; }
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$FPID/status" 2>/dev/null)
    thr=$(awk '/^Threads:/ { print $2 }' "/proc/$FPID/status" 2>/dev/null)
    # the resident set's parts: anonymous (the heap and the stacks) and file-backed (the
    # records' file in the state folder, a tmpfs one counted as shared memory)
    anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$FPID/status" 2>/dev/null)
    rfile=$(awk '/^Rss(File|Shmem):/ { n += $2 } END { print n + 0 }' "/proc/$FPID/status" 2>/dev/null)
    fds=$(find "/proc/$FPID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
    # of those, the target's connections to the crowd (the crowd's side): the target keeps
    # them open or not, so flood's own descriptors are the rest
    conns=$(ss -Htn "( sport = :$CPORT )" 2>/dev/null | wc -l)
    kinds=$(fd_kinds)
    [ -n "$rss" ] || { log "flood run gone at sample $n"; break; }
    t=$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN { printf "%.0f", a - b }')
    # the rows just closed: the seconds since the last sample (the dashboard's row t counts
    # from the first send, as T0 does within the half second flood waits before it)
    crowd=$(crowd_probe)
    printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$t" "$rss" "$fds" "$thr" \
        "$(echo "$crowd" | tr ' ' '\t')" "$(cut -d' ' -f1 /proc/loadavg)" "$conns" "${anon:--}" \
        "${rfile:--}" "$(echo "$kinds" | tr ' ' '\t')" >>"$OUT/live.tsv"
    figs=""
    [ $((n % 10)) = 0 ] || [ "$n" -le 2 ] && figs=$(minute_figures "$OUT/rows.jsonl" "$prev_t" "$t")
    prev_t=$t
    [ $((n % 10)) = 0 ] || [ "$n" -le 2 ] &&
        log "sample $n/$NS at ${t}s: rss ${rss} KiB, fds $fds, lag p99 $(echo "$figs" | cut -f1) ms, crowd p50 ${crowd% *} ms, load $(cut -d' ' -f1-3 /proc/loadavg)"
done

# ---- the end ------------------------------------------------------------------------------
wait "$FPID"
FRC=$?
PIDS=$(echo " $PIDS " | sed "s/ $FPID / /")
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
log "flood run exited $FRC"
R=$OUT/flood/run.json
[ -f "$R" ] || die "flood run wrote no run.json (exit $FRC; log: $OUT/flood.log)"
kill -0 "$TPID" 2>/dev/null || log "warning: the reference target had exited (log: $OUT/target.log)"
jq -c '.series[]' "$R" >"$OUT/series.jsonl" 2>/dev/null
printf 'sample\tt_s\trss_kib\tfds\tthreads\tlag_p99_ms\tlag_p99_max_ms\tp99_ms\tin_flight\tsent_per_s\tf2a_p99_ms\tdeliveries\tfetches\tcrowd_p50_ms\tcrowd_max_ms\tload1\tcrowd_conns\town_fds\trss_anon_kib\trss_file_kib\tfd_target\tfd_crowd\tfd_tcp\tfd_socket\tfd_other\n' >"$OUT/soak.tsv"
prev_t=0
while IFS=$'\t' read -r sn st srss sfds sthr scp scm sload sconn sanon sfile skinds; do
    [ "$sn" = sample ] && continue
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sn" "$st" "$srss" \
        "$sfds" "$sthr" "$(minute_figures "$OUT/series.jsonl" "$prev_t" "$st")" "$scp" "$scm" \
        "$sload" "${sconn:-0}" "$((sfds - ${sconn:-0}))" "${sanon:--}" "${sfile:--}" \
        "${skinds:--}" >>"$OUT/soak.tsv"
    prev_t=$st
done <"$OUT/live.tsv"

# the verdict: growth over the window, medians of EDGE samples at each end
ROWS=$(($(wc -l <"$OUT/soak.tsv") - 1))
growth() { # growth COLUMN: "first last pct" over the window
    awk -F'\t' -v col="$1" -v rows="$ROWS" -v win="$WIN" -v edge="$EDGE" '
        function med(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        NR > 1 { v[NR - 1] = $col }
        END {
            w = rows < win ? rows : win; s = rows - w + 1
            for (i = 0; i < edge; i++) { f[i + 1] = v[s + i]; l[i + 1] = v[rows - edge + 1 + i] }
            a = med(f, edge); b = med(l, edge)
            printf "%s %s %.2f", a, b, (a > 0 ? (b - a) * 100 / a : 0)
        }' "$OUT/soak.tsv"
}
VERDICT=pass
WHY=""
if [ "$ROWS" -lt "$WIN" ]; then
    VERDICT=fail
    WHY="$WHY only $ROWS of $NS samples (flood run ended early: exit $FRC);"
fi
read -r RSS_A RSS_B RSS_G <<<"$(growth 3)"
read -r FD_A FD_B FD_G <<<"$(growth 18)" # flood's own: less the target's connections
read -r LAG_A LAG_B LAG_G <<<"$(growth 6)"
read -r ANON_A ANON_B ANON_G <<<"$(growth 19)" # the parts, told for the reader: not judged
read -r FILE_A FILE_B FILE_G <<<"$(growth 20)"
FDK=""
for k in "21 to the target" "22 the crowd's side" "23 other TCP" "24 sockets no TCP table lists" "25 files, pipes, epoll"; do
    read -r KA KB _ <<<"$(growth "${k%% *}")"
    FDK="$FDK${FDK:+, }${k#* } $KA -> $KB"
done
awk -v g="$RSS_G" -v l="$LIMIT" 'BEGIN { exit !(g <= l) }' || { VERDICT=fail; WHY="$WHY memory grew $RSS_G% (> $LIMIT%);"; }
awk -v g="$FD_G" -v l="$LIMIT" 'BEGIN { exit !(g <= l) }' || { VERDICT=fail; WHY="$WHY descriptors grew $FD_G% (> $LIMIT%);"; }
# lateness: the median per-second lag p99 may not grow by more than the limit or 250 ms,
# whichever is larger (a few milliseconds' noise is not drift)
awk -v a="$LAG_A" -v b="$LAG_B" -v l="$LIMIT" 'BEGIN { d = a * l / 100; if (d < 250) d = 250; exit !(b - a <= d) }' ||
    { VERDICT=fail; WHY="$WHY lag p99 grew $LAG_A -> $LAG_B ms;"; }
CONS_OK=$(jq -r '.conservation.ok' "$R")
CONS_LINE=$(jq -r '.conservation.line' "$R")
EXACT=$(jq -r '.totals.scheduled == .totals.sent + .totals.shed and .totals.sent == .totals.completed + .totals.unfinished and .totals.completed == ([.totals.outcomes[]] | add)' "$R")
[ "$CONS_OK" = true ] && [ "$EXACT" = true ] || { VERDICT=fail; WHY="$WHY activities unaccounted ($CONS_LINE);"; }
[ "$FRC" = 0 ] || { VERDICT=fail; WHY="$WHY flood run exited $FRC;"; }
SWITCHES=$(($(wc -l <"$OUT/faults.tsv") - 1))
SWITCH_BAD=$(awk -F'\t' 'NR > 1 && $5 !~ /"ok":true/' "$OUT/faults.tsv" | wc -l)
[ "$SWITCH_BAD" = 0 ] || { VERDICT=fail; WHY="$WHY $SWITCH_BAD fault switches refused (faults.tsv);"; }

{
    echo "# soak $STAMP: $VERDICT"
    echo
    echo "flood run at $RATE/s signed (cavage), mix $MIX, for $S s against the reference target"
    echo "(2 inbox workers, ${ACCEPT}/s taken into its queue: per-origin bucket ${BURST:-none}/${REFILL:-none} over $INSTANCES crowd instances, 429 beyond);"
    echo "the crowd answering the target's deliveries and fetches; $SWITCHES fault switches every $FAULT_S s."
    echo
    echo "| sample | t s | RSS KiB | fds | lag p99 ms (median / max of the seconds) | latency p99 ms (max) | in flight | sent/s | Follow-to-Accept p99 ms | crowd answer p50 / max ms | load 1 min | the target's connections to the crowd |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' 'NR > 1 && (($1 % 10) == 0 || $1 == 1) { printf "| %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s / %s | %s | %s |\n", $1, $2, $3, $4, $6, $7, $8, $9, $10, $11, $14, $15, $16, $17 }' "$OUT/soak.tsv"
    echo
    echo "- window: the last $WIN of $ROWS samples (one every $STEP_S s); medians of its first and last $EDGE."
    echo "- RSS: $RSS_A -> $RSS_B KiB ($RSS_G%); flood's own descriptors (all but the target's connections to the crowd): $FD_A -> $FD_B ($FD_G%); lag p99 (median of the seconds'): $LAG_A -> $LAG_B ms ($LAG_G%; judged within $LIMIT% or 250 ms); limit $LIMIT%."
    echo "- flood's descriptors by kind (told for the reader: the verdict judges their total less the crowd's side): $FDK."
    echo "- of the RSS: anonymous (heap, stacks) $ANON_A -> $ANON_B KiB ($ANON_G%), file-backed (the records' file) $FILE_A -> $FILE_B KiB ($FILE_G%)."
    echo "- $CONS_LINE"
    echo "- outcomes: $(jq -r '.totals.outcomes | to_entries | map(select(.value > 0) | "\(.key)=\(.value)") | join(" ")' "$R"); shed $(jq .totals.shed "$R"), unfinished $(jq .totals.unfinished "$R"); generator lag p99 $(jq .generator.lag_p99_ms "$R") ms, saturated $(jq .generator.saturated "$R")."
    echo "- the crowd's answers to the target: deliveries $(jq -r '.inbound.deliveries | to_entries | map(select(.value > 0) | "\(.key)=\(.value)") | join(" ")' "$R"); fetches (serving time p50/p99 ms over the run, the faults' delays included) $(jq -r '.fetches.by_kind | to_entries | map(select(.value.requests > 0) | "\(.key) \(.value.requests) (\(.value.serve_ms.p50)/\(.value.serve_ms.p99))") | join(", ")' "$R" 2>/dev/null)."
    echo "- host: $(nproc) cores; load average at the start $LOAD0, at the end $LOAD1."
    echo "- verdict: $VERDICT${WHY:+:$WHY}"
    echo
    echo "command: \`SOAK_SECONDS=$S SOAK_RATE=$RATE SOAK_ACCEPT=$ACCEPT make soak\`; flood: \`$(cat "$OUT/command.txt")\`"
} >"$OUT/summary.md"
cat "$OUT/summary.md"
echo
echo "soak: results in $OUT"
[ "$VERDICT" = pass ] || { echo "soak: FAILED:$WHY" >&2; exit 1; }
exit 0

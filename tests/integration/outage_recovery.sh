#!/bin/bash
# tests/integration/outage_recovery.sh: the outage-recovery preset (a 10 s dark window)
# against the reference target, once with a retry policy that ignores Retry-After
# (Mastodon's, its backoff scaled by 0.1) and once with one that honours it (GoToSocial's,
# scaled by 0.25). The crowd's retry curve (run.json inbound.retry_curve) is checked against
# the target's own log of every delivery attempt (--delivery-log): the 503s answered, what
# passed, and the gaps after a Retry-After, early or not.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

need_target
start_target() {
    CPORT=$(free_port)
    : >"$T_TMP/target.out"
    node "$ROOT/tests/target/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$CPORT" --autopost-ms 1000 --outbox-workers 8 "$@" >"$T_TMP/target.out" \
        2>"$T_TMP/target.err" &
    TPID=$!
    T_PIDS="$T_PIDS $TPID"
    TPORT=""
    for _ in $(seq 1 300); do
        TPORT=$(sed -n '1s/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T_TMP/target.out")
        [ -n "$TPORT" ] && break
        sleep 0.1
    done
    [ -n "$TPORT" ] &&
        curl -sf -X POST -H 'content-type: application/json' -d '{"username":"alice"}' \
            "http://127.0.0.1:$TPORT/admin/accounts" >/dev/null
}
stop_target() {
    kill "$TPID" 2>/dev/null
    wait "$TPID" 2>/dev/null
}

# log_curve LOG: from the target's delivery log, over the attempts at flood1-flood3: 503s,
# 2xx, transport errors, and the gaps after a 503 (Retry-After 5) shorter than 4.5 s
log_curve() {
    python3 - "$1" <<'PY'
import json, sys
by = {}
n503 = ok = err = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    host = r["inbox"].split("/")[2]
    if host.split(".")[0] not in ("flood1", "flood2", "flood3"):
        continue
    n503 += r["status"] == 503
    ok += 200 <= r["status"] < 300
    err += r["status"] == 0
    by.setdefault((r["inbox"], r["digest"]), []).append(r)
given = early = 0
for tries in by.values():
    tries.sort(key=lambda r: r["t"])
    for a, b in zip(tries, tries[1:]):
        if a["status"] == 503 and a["retry_after"]:
            given += 1
            early += b["t"] - a["t"] + 500 < a["retry_after"] * 1000
        if 200 <= a["status"] < 300:
            break
print(n503, ok, err, given, early)
PY
}

for policy in mastodon gotosocial; do
    scale=0.1
    [ $policy = gotosocial ] && scale=0.25
    start_target --retry-policy $policy --retry-scale $scale --delivery-log "$T_TMP/$policy.log"
    check $? "the target starts with --retry-policy $policy --retry-scale $scale"
    frun --listen "127.0.0.1:$CPORT" --persona "http://target.test:$TPORT/users/alice" \
        --resolve "target.test:$TPORT:127.0.0.1" --quiet --preset outage-recovery \
        --metrics 127.0.0.1:0 --metrics-hold 3s
    check "$RUN_RC" "outage-recovery against $policy exits 0" || show_run
    stop_target
    read -r t503 tok terr tgiven tearly <<<"$(log_curve "$T_TMP/$policy.log")"
    c=.inbound.retry_curve
    f503=$(jget "$c.answered.status") fpass=$(jget "$c.answered.passed")
    fgiven=$(jget "$c.retry_after.given") fearly=$(jget "$c.retry_after.early")
    echo "# $policy: crowd: $(jget "$c.attempts") attempts, $f503 503, $fpass passed, mean $(jget "$c.mean_attempts") a delivery, Retry-After given $fgiven early $fearly, recovered $(jget "$c.recovery.recovered") p99 $(jget "$c.recovery.p99_ms") ms, herd peak $(jget "$c.recovery.herd_peak_per_s")/s, never arrived $(jget "$c.never_arrived")"
    echo "# $policy: target's log: $t503 503, $tok 2xx, $terr errors, Retry-After given $tgiven early $tearly"
    [ "${f503:-0}" -gt 0 ]
    check $? "$policy: the crowd answered 503s in the dark window ($f503)"
    expect_eq "$f503" "$t503" "$policy: the crowd's 503s are the target's"
    # the target goes on delivering while the run writes its results and stops: the crowd
    # cuts every inbox POST once it reads its results (the attempts record closed under its
    # lock), so each attempt the target logged 2xx is one the crowd counted passed, and those
    # after are transport errors in the target's log
    expect_eq "$fpass" "$tok" "$policy: what passed at the crowd is what the target saw through ($fpass against $tok 2xx; $terr cut after the run)"
    # the metrics hold keeps the crowd up for 3 s after its results, the persona posting
    # meanwhile: those deliveries are cut (transport errors at the target), never taken unseen
    [ "${terr:-0}" -gt 0 ] && grep -q 'deliveries cut after the results were read' "$RUN_ERR"
    check $? "$policy: the deliveries after the results were cut and said ($terr)"
    awk -v a="$fgiven" -v b="$tgiven" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 2 + b / 10) }'
    check $? "$policy: retries after a Retry-After, crowd $fgiven against the log's $tgiven"
    [ "$(jget "$c.mean_attempts > 1")" = true ]
    check $? "$policy: deliveries took more than one attempt ($(jget "$c.mean_attempts"))"
    [ "$(jget "$c.recovery.recovered")" -gt 0 ]
    check $? "$policy: deliveries refused in the window arrived after it ($(jget "$c.recovery.recovered"))"
    grep -q '^retry curve: [0-9]* attempts at faulted inboxes' "$RUN_DIR/summary.md"
    check $? "$policy: summary.md has the retry curve"
    if [ $policy = mastodon ]; then
        awk -v e="$fearly" -v g="$fgiven" -v t="$tearly" 'BEGIN { exit !(e * 2 > g && t * 2 > g) }'
        check $? "mastodon ignores Retry-After: most retries early (crowd $fearly, log $tearly of $fgiven)"
    else
        awk -v e="$fearly" -v g="$fgiven" -v t="$tearly" 'BEGIN { exit !(e * 10 <= g && t * 10 <= g) }'
        check $? "gotosocial honours Retry-After: at most a tenth early (crowd $fearly, log $tearly of $fgiven)"
    fi
done
done_testing

#!/usr/bin/env bash
# `flood run --replay`: a synthetic access log of known per-second counts is replayed and
# the offered series (by intended second) matches it within 1%; --replay-speed scales it; the busiest origin gets
# its own instance; a malformed line is named FILE:LINE; and nothing from the log reaches
# the wire (a secret planted in its paths, agents and referers never reaches a recorder of
# every request's bytes).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"

SECRET=s3cr3t-$RANDOM$RANDOM
python3 - "$T_TMP/access.log" "$SECRET" <<'EOF'
import datetime, random, sys
path, secret = sys.argv[1], sys.argv[2]
counts = [40, 120, 20, 200, 60, 10]
base = datetime.datetime(2024, 10, 10, 13, 55, 0)
random.seed(7)
origins = ["big.example"] * 6 + ["mid.example"] * 3 + ["small.example"]
out = []
for s, c in enumerate(counts):
    ts = (base + datetime.timedelta(seconds=s)).strftime("%d/%b/%Y:%H:%M:%S +0000")
    for i in range(c):
        o = random.choice(origins)
        out.append(f'10.0.0.{i % 250} - - [{ts}] "POST /users/{secret}/inbox HTTP/1.1" '
                   f'202 0 "https://{secret}.example/" "http.rb/5.1.1 (Mastodon/4.2.0; +https://{o}/; {secret})"')
    out.append(f'10.0.0.1 - - [{ts}] "GET /users/{secret} HTTP/1.1" 200 123 "-" "curl/8"')
open(path, "w").write("\n".join(out) + "\n")
EOF

python3 "$ROOT/tests/tools/recorder.py" "$T_TMP/wire" "$T_TMP/rec.port" &
REC_PID=$!
T_PIDS="$T_PIDS $REC_PID"
for _ in $(seq 1 50); do [ -s "$T_TMP/rec.port" ] && break; sleep 0.1; done
frun --inbox "http://127.0.0.1:$(cat "$T_TMP/rec.port")/inbox" --replay "$T_TMP/access.log" \
    --mix create=100 --instances 5 --quiet
kill "$REC_PID" 2>/dev/null
check "$RUN_RC" "a replay of a 6 s access log exits 0" || show_run
expect_eq "$(jget .totals.sent)" 450 "every inbox POST of the log sent once (450), the GETs not"
expect_eq "$(grep -c '^POST /inbox HTTP/1.1' "$T_TMP/wire")" 450 "the recorder received 450 POSTs"
# the schedule the replay made, by intended second (what was sent when is the generator's
# lag on a loaded machine, not the replay's: the total sent is checked above)
series=$(jget '[.series[].offered] | map(tostring) | join(",")')
python3 - "$series" <<'EOF'
import sys
got = [int(x) for x in sys.argv[1].split(",")]
want = [40, 120, 20, 200, 60, 10]
got = got[: len(want)] + [0] * (len(want) - len(got))
bad = [(w, g) for w, g in zip(want, got) if abs(g - w) > max(1, 0.01 * w)]
print("# per second offered: %s (log: %s)" % (got, want))
sys.exit(1 if bad else 0)
EOF
check $? "the offered series (by intended second) matches the log's per-second counts within 1%"
expect_eq "$(jget '.config.replay.busiest[0].origin')/$(jget '.config.replay.busiest[0].instance')" \
    "big.example/1" "the busiest origin has instance 1"
expect_eq "$(jget .config.replay.skipped)" 6 "six GETs skipped"
conserved
check $? "conserved"
grep -q "$SECRET" "$T_TMP/wire" "$RUN_DIR/run.json"
expect_eq "$?" 1 "the secret in the log reached neither the wire (450 signed requests) nor run.json"

# at 4 times the speed: the same 450 in about 1.5 s
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --sign none --replay "$T_TMP/access.log" \
    --replay-speed 4 --mix create=100 --quiet
stop_sink
expect_eq "$RUN_RC/$(jget .totals.sent)" 0/450 "--replay-speed 4 sends the 450"
expect_eq "$(jget '.config.scheduled_duration_s')" 1.5 "over 1.5 s"

# a CSV with types, signed: the types are sent as their kinds
printf 'time,origin,type\n0,a.example,Create\n0.1,a.example,Follow\n0.2,b.example,Create\n0.3,c.example,Follow\n' \
    >"$T_TMP/p.csv"
start_sink --status 202
frun --inbox "http://127.0.0.1:$SINK_PORT/inbox" --replay "$T_TMP/p.csv" --quiet
stop_sink
expect_eq "$RUN_RC/$(jget .operations.create.sent)/$(jget .operations.follow.sent)" 0/2/2 \
    "CSV types become the operations (2 creates, 2 follows)"

# mistakes
printf 'time,origin,type\n0,a.example,Create\nsoon,b.example,Like\n' >"$T_TMP/bad.csv"
"$FLOOD" run --inbox http://127.0.0.1:9/inbox --replay "$T_TMP/bad.csv" --quiet 2>"$T_TMP/e1"
expect_eq "$?" 2 "a malformed line is a usage error"
grep -q "bad.csv:3: bad time" "$T_TMP/e1"
check $? "naming FILE:LINE: $(head -1 "$T_TMP/e1")"
"$FLOOD" run --inbox http://127.0.0.1:9/inbox --replay "$T_TMP/p.csv" --rate 5 --duration 1s \
    2>"$T_TMP/e2"
expect_eq "$?" 2 "--replay with --rate is a usage error"

done_testing

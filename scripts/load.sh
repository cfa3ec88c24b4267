#!/usr/bin/env bash
# scripts/load.sh: a whole load run from one command. Sets up accounts on the target, has
# them follow part of the crowd and post, floods the target's inbox with `flood run` while
# a probe reads a home timeline four times a second, waits for the target's queue to
# drain, and writes the figures to out/load/UTCSTAMP/.
#
#   scripts/load.sh --rate=300 --seconds=60 --personas=20 --follows=50 [--workers=2]
#                   [--origin-burst=B --origin-refill=R] [--out=DIR] [--flood=PATH]
#   scripts/load.sh --target=https://HOST --token-file=F --rate=... --seconds=...
#   scripts/load.sh ... --proxy=ADDR:PORT | --dns=ADDR:53   (the target's way to the crowd)
#
# See --help and docs/LOAD.md (the method, and how to set up Mastodon, GoToSocial, Akkoma).
set -u
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF=$$

usage() {
    cat <<'EOF'
usage: scripts/load.sh [options]
A load run against the reference target (tests/target, started and stopped here) or,
with --target and --token-file, against any server with the Mastodon client API.

Load:
  --rate=R             activities a second flood sends (default 300)
  --seconds=S          how long flood sends (default 60)
  --personas=N         accounts load0..load(N-1) on the reference target (default 20);
                       with --token-file, the first N tokens (default: all)
  --follows=F          crowd actors each persona follows (default 50); persona i follows
                       actors i*F .. i*F+F-1 of `flood actors` (wrapping around)
  --mix=M              flood run's mix (default: flood's own, create=70,like=20,follow=10)

Reference target (the default):
  --workers=N          its inbox queue workers (default 2)
  --origin-burst=B     per-origin token bucket: B requests...
  --origin-refill=R    ...refilled at R a second (429 with Retry-After beyond)
  --work-ms=MS         extra time each activity holds a worker (default 0)

Any target:
  --target=URL         https://HOST (or http://HOST:PORT for a lab server)
  --token-file=F       one bearer token a line (or 'NAME TOKEN'); '#' comments
  --stats-url=URL      a /stats document like the reference target's, sampled each second
  --crowd-listen=A:P   where the target reaches the crowd (default 127.0.0.1:0, any port);
                       with --target, the address the target's *.test names resolve to
  --crowd-tls          the crowd serves HTTPS (its CA's path is printed and kept)
  --proxy=A:P          the crowd's egress proxy listens on A:P (port 0 picks one) for the
                       whole run: point the target's outgoing proxy there (the reference
                       target is, and then has no --resolve-crowd); what it asked for is
                       in run.json's "egress" and summary.md
  --dns=A:P            the crowd's name server listens on A:P (a fixed port, 53 for a
                       resolv.conf) for the whole run, answering the crowd's names with the
                       address of --crowd-listen (give it port 443 with --crowd-tls, else
                       80): point the target's resolver there (the reference target is)
  --quiet-seconds=Q    without --stats-url, the queue counts as drained once no delivery
                       reached the crowd for Q seconds (default 10)

Run:
  --instances=N --actors=M   crowd size (default 20 x 10, flood's own default)
  --state=DIR          the crowd's keys (default $FLOOD_STATE, else build/load-state)
  --flood=PATH         the flood binary (default $FLOOD, else build/flood)
  --out=DIR            results (default out/load/UTCSTAMP)
  --crowd-opt=STR      more options for the crowd (flood serve and flood run), word-split
  --run-opt=STR        more options for flood run only, word-split
  --probe-hz=H         home timeline reads a second (default 4)
  --setup-timeout=S    bound on the follow/accept setup (default 180)
  --drain-timeout=S    bound on the wait for the queue to drain (default 300)
  -h, --help           this help

Output: run.json (flood's), flood/ (its histograms and summary), stats.jsonl (the
target's /stats each second), probe.csv (each timeline read), summary.md, and the table
row on stdout. Exit 0 when every step ran; 1 when one failed (the reason is printed and
kept in error.txt with what was collected so far); 2 for a usage error.
EOF
}

# ---- options ------------------------------------------------------------------------------
RATE=300 SECONDS_=60 PERSONAS="" FOLLOWS=50 WORKERS=2 BURST="" REFILL="" WORK_MS=0 MIX=""
TARGET="" TOKEN_FILE="" STATS_URL="" CROWD_LISTEN="127.0.0.1:0" CROWD_TLS=0 QUIET_S=10
INSTANCES=20 ACTORS=10 STATE="${FLOOD_STATE:-$ROOT/build/load-state}" FLOOD="${FLOOD:-$ROOT/build/flood}"
OUT="" CROWD_OPT="" RUN_OPT="" PROBE_HZ=4 SETUP_TIMEOUT=180 DRAIN_TIMEOUT=300
PROXY_LISTEN="" DNS_LISTEN=""

bad_usage() {
    echo "load.sh: $1" >&2
    echo "load.sh: see scripts/load.sh --help" >&2
    exit 2
}
is_num() { [[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]]; }
is_int() { [[ "$1" =~ ^[0-9]+$ ]]; }

for arg in "$@"; do
    case "$arg" in
    -h | --help) usage; exit 0 ;;
    --*=*) key=${arg%%=*} val=${arg#*=} ;;
    --crowd-tls) CROWD_TLS=1; continue ;;
    *) bad_usage "unknown argument '$arg' (options take --name=value)" ;;
    esac
    case "$key" in
    --rate) is_num "$val" && [ "$val" != 0 ] || bad_usage "--rate: expected a number > 0, got '$val'"; RATE=$val ;;
    --seconds) is_num "$val" && [ "$val" != 0 ] || bad_usage "--seconds: expected a number > 0, got '$val'"; SECONDS_=$val ;;
    --personas) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--personas: expected an integer >= 1, got '$val'"; PERSONAS=$val ;;
    --follows) is_int "$val" || bad_usage "--follows: expected an integer >= 0, got '$val'"; FOLLOWS=$val ;;
    --workers) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--workers: expected an integer >= 1, got '$val'"; WORKERS=$val ;;
    --origin-burst) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--origin-burst: expected an integer >= 1, got '$val'"; BURST=$val ;;
    --origin-refill) is_num "$val" || bad_usage "--origin-refill: expected a number >= 0, got '$val'"; REFILL=$val ;;
    --work-ms) is_num "$val" || bad_usage "--work-ms: expected a number >= 0, got '$val'"; WORK_MS=$val ;;
    --mix) MIX=$val ;;
    --target) [[ "$val" =~ ^https?://[^/]+/?$ ]] || bad_usage "--target: expected https://HOST[:PORT], got '$val'"; TARGET=${val%/} ;;
    --token-file) TOKEN_FILE=$val ;;
    --stats-url) STATS_URL=$val ;;
    --crowd-listen) [[ "$val" =~ ^.+:[0-9]+$ ]] || bad_usage "--crowd-listen: expected ADDR:PORT, got '$val'"; CROWD_LISTEN=$val ;;
    --proxy) [[ "$val" =~ ^.+:[0-9]+$ ]] || bad_usage "--proxy: expected ADDR:PORT, got '$val'"; PROXY_LISTEN=$val ;;
    --dns) [[ "$val" =~ ^.+:[0-9]+$ ]] && [ "${val##*:}" != 0 ] || bad_usage "--dns: expected ADDR:PORT with a fixed port (the target is started before the crowd and told it), got '$val'"; DNS_LISTEN=$val ;;
    --quiet-seconds) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--quiet-seconds: expected an integer >= 1, got '$val'"; QUIET_S=$val ;;
    --instances) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--instances: expected an integer >= 1, got '$val'"; INSTANCES=$val ;;
    --actors) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--actors: expected an integer >= 1, got '$val'"; ACTORS=$val ;;
    --state) STATE=$val ;;
    --flood) FLOOD=$val ;;
    --out) OUT=$val ;;
    --crowd-opt) CROWD_OPT=$val ;;
    --run-opt) RUN_OPT=$val ;;
    --probe-hz) is_num "$val" && [ "$val" != 0 ] || bad_usage "--probe-hz: expected a number > 0, got '$val'"; PROBE_HZ=$val ;;
    --setup-timeout) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--setup-timeout: expected seconds >= 1, got '$val'"; SETUP_TIMEOUT=$val ;;
    --drain-timeout) is_int "$val" && [ "$val" -ge 1 ] || bad_usage "--drain-timeout: expected seconds >= 1, got '$val'"; DRAIN_TIMEOUT=$val ;;
    *) bad_usage "unknown option '$key'" ;;
    esac
done

REFERENCE=1
if [ -n "$TARGET" ] || [ -n "$TOKEN_FILE" ]; then
    [ -n "$TARGET" ] && [ -n "$TOKEN_FILE" ] || bad_usage "--target and --token-file go together"
    REFERENCE=0
    if [ -n "$BURST$REFILL" ] || [ "$WORK_MS" != 0 ]; then
        bad_usage "--origin-burst, --origin-refill and --work-ms set up the reference target; with --target set them on the target itself"
    fi
fi
[ -n "$REFILL" ] && [ -z "$BURST" ] && bad_usage "--origin-refill needs --origin-burst"
[ -n "$BURST" ] && [ -z "$REFILL" ] && REFILL=1
[ -z "$PERSONAS" ] && [ "$REFERENCE" = 1 ] && PERSONAS=20
# The crowd processes listen on loopback behind the relay; with --dns on the relay's own
# address, since the name server answers the crowd's names with the address its crowd
# listens on (0.0.0.0: the --dns address), which is where the target must connect.
CROWD_BIND=127.0.0.1
if [ -n "$DNS_LISTEN" ]; then
    # the answers name an address, never a port: the target connects to the port the
    # crowd's URLs imply, so the relay must listen there
    want_port=80
    [ "$CROWD_TLS" = 1 ] && want_port=443
    if [ "${CROWD_LISTEN##*:}" != "$want_port" ] && [[ "$CROWD_OPT" != *--public-port* ]]; then
        bad_usage "--dns: the crowd's names resolve to --crowd-listen's address on port $want_port (the crowd's URLs name no port): give --crowd-listen=ADDR:$want_port, not '$CROWD_LISTEN'"
    fi
    CROWD_BIND=${CROWD_LISTEN%:*}
    CROWD_BIND=${CROWD_BIND#[}
    CROWD_BIND=${CROWD_BIND%]}
fi
BACKEND_HOST=$CROWD_BIND
case "$BACKEND_HOST" in 0.0.0.0 | ::) BACKEND_HOST=127.0.0.1 ;; esac
bind_of() { case "$1" in *:*) echo "[$1]:0" ;; *) echo "$1:0" ;; esac; }

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
[ -n "$OUT" ] || OUT="$ROOT/out/load/$STAMP"
mkdir -p "$OUT" || { echo "load.sh: cannot create '$OUT'" >&2; exit 1; }
OUT=$(cd "$OUT" && pwd)
TMP="$OUT/.work"
mkdir -p "$TMP"
: >"$OUT/log.txt"

# calc EXPR: EXPR's value with six decimals; cond EXPR: EXPR is true. (awk, no bc needed)
calc() { awk "BEGIN { printf \"%.6f\", $* }"; }
cond() { awk "BEGIN { exit !($*) }"; }
now() { date +%s.%N; }
usec() { echo "${EPOCHREALTIME/./}"; } # microseconds since the epoch, no fork

# ---- processes and failure ----------------------------------------------------------------
PIDS=""      # every process started here, stopped on exit
STEP="start" # the step under way, named in the error
T0=$(date +%s.%N)

log() {
    printf '[%6.1fs] %s\n' "$(calc "$(now) - $T0")" "$*" | tee -a "$OUT/log.txt" >&2
}

stop_all() {
    local p
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
    for p in $PIDS; do
        # bounded: a process still there after 5 s is killed
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    PIDS=""
}

stop_one() { # stop_one PID
    kill -TERM "$1" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    PIDS=$(echo " $PIDS " | sed "s/ $1 / /")
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    touch "$TMP/stop" 2>/dev/null
    stop_all
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "load.sh: interrupted" >&2; exit 130' INT TERM

# fail MESSAGE: a step failed. Say which, keep what was collected, exit 1.
fail() {
    local msg="load.sh: $STEP: $1"
    echo "$msg" >&2
    echo "$msg" >>"$OUT/error.txt"
    echo "$msg" >>"$OUT/log.txt"
    {
        echo "# load run $STAMP: FAILED"
        echo
        echo "$msg"
        echo
        echo "What was collected so far is in $OUT."
    } >"$OUT/summary.md"
    echo "load.sh: results so far: $OUT" >&2
    exit 1
}

# wait_listen LOG PID WHAT [PREFIX]: the port from a 'PREFIXlistening on SCHEME://ADDR:PORT'
# line (PREFIX a sed pattern, default any text), or fail.
wait_listen() {
    local logf=$1 pid=$2 what=$3 pre=${4:-.*} p
    for _ in $(seq 1 1200); do # 120 s: a fresh state folder generates the crowd's keys
        p=$(sed -n "s/^${pre}listening on [a-z]*:\/\/.*:\([0-9][0-9]*\)\$/\1/p" "$logf" | head -1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    sed 's/^/    /' "$logf" | tail -20 >&2
    fail "$what did not start (log: $logf)"
}

# ---- what is needed -----------------------------------------------------------------------
STEP="checking tools"
for tool in curl jq node awk timeout; do
    command -v "$tool" >/dev/null 2>&1 || fail "'$tool' is missing (scripts/deps.sh installs it)"
done
[ -f "$FLOOD" ] && [ -x "$FLOOD" ] || fail "no flood binary at '$FLOOD' (make, or --flood=PATH)"
if [ "$REFERENCE" = 1 ]; then
    [ -d "$ROOT/tests/target/node_modules/@fedify/fedify" ] ||
        fail "the reference target's packages are missing (scripts/deps.sh runs npm ci in tests/target)"
fi
mkdir -p "$STATE" || fail "cannot create the state folder '$STATE'"
# Every curl call is bounded.
CURL=(curl -sS --connect-timeout 5 --max-time 20)
# Every process started is bounded too, in case this script is killed without its trap.
LIFE=$(calc "$SETUP_TIMEOUT + $SECONDS_ + $DRAIN_TIMEOUT + 600" | cut -d. -f1)

CROWD=(--instances "$INSTANCES" --actors "$ACTORS" --state "$STATE")
[ "$CROWD_TLS" = 1 ] && CROWD+=(--tls)
# shellcheck disable=SC2206
[ -n "$CROWD_OPT" ] && CROWD+=($CROWD_OPT)

# ---- the relay ----------------------------------------------------------------------------
# The target reaches the crowd at one fixed address for the whole run, while three crowd
# processes take turns behind it: `flood serve` for the setup, `flood run` for the flood,
# `flood serve` again for the drain (the target's workers still fetch actors from the
# crowd while they empty the queue). The relay reads its backends from a file: new
# connections go to the first port that answers; when the first port changes, connections
# to other ports are closed, so the target's pooled connections move over at once.
RELAY_JS='
const net = require("net"), fs = require("fs");
const [listen, file, watchPid, backendHost] = process.argv.slice(1);
const m = /^\[?(.+?)\]?:(\d+)$/.exec(listen);
let ports = [];
const live = new Set();
function load() {
    let p;
    try { p = fs.readFileSync(file, "utf8").trim().split(/\s+/).filter(Boolean).map(Number); }
    catch { return; }
    if (p.join(" ") === ports.join(" ")) return;
    const first = ports[0];
    ports = p;
    if (first !== undefined && first !== p[0])
        for (const s of live) if (s.backend !== p[0]) s.client.destroy();
}
load();
setInterval(() => {
    load();
    try { process.kill(Number(watchPid), 0); } catch { process.exit(0); }
}, 100);
const server = net.createServer((client) => {
    client.pause();
    client.on("error", () => {});
    const conn = { client, backend: null };
    const attempt = (i) => {
        if (i >= ports.length) return client.destroy();
        const up = net.connect(ports[i], backendHost);
        up.once("error", () => attempt(i + 1));
        up.once("connect", () => {
            up.removeAllListeners("error");
            up.on("error", () => client.destroy());
            conn.backend = ports[i];
            live.add(conn);
            client.on("close", () => { live.delete(conn); up.destroy(); });
            up.on("close", () => client.destroy());
            client.pipe(up);
            up.pipe(client);
            client.resume();
        });
    };
    attempt(0);
});
server.on("error", (e) => { console.error("relay: " + e.message); process.exit(1); });
server.listen(Number(m[2]), m[1], () => console.log("listening on tcp://" + m[1] + ":" + server.address().port));
process.on("SIGTERM", () => process.exit(0));
'
STEP="starting the relay to the crowd"
: >"$TMP/backends"
timeout -k 5 "$LIFE" node -e "$RELAY_JS" "$CROWD_LISTEN" "$TMP/backends" "$SELF" "$BACKEND_HOST" >"$TMP/relay.log" 2>&1 &
RELAY_PID=$!
PIDS="$PIDS $RELAY_PID"
RELAY_PORT=$(wait_listen "$TMP/relay.log" "$RELAY_PID" "the relay") || exit 1
RELAY_HOST=${CROWD_LISTEN%:*}
log "crowd address for the target: $RELAY_HOST:$RELAY_PORT"
# The egress proxy: each crowd process has its own (--proxy 127.0.0.1:0), the one of the
# crowd process answering at the time reached through a second relay, so the target keeps
# one proxy address for the whole run.
PROXY=""
if [ -n "$PROXY_LISTEN" ]; then
    STEP="starting the relay to the crowd's egress proxy"
    : >"$TMP/pbackends"
    timeout -k 5 "$LIFE" node -e "$RELAY_JS" "$PROXY_LISTEN" "$TMP/pbackends" "$SELF" 127.0.0.1 >"$TMP/prelay.log" 2>&1 &
    PRELAY_PID=$!
    PIDS="$PIDS $PRELAY_PID"
    PROXY_PORT=$(wait_listen "$TMP/prelay.log" "$PRELAY_PID" "the proxy relay") || exit 1
    PROXY="${PROXY_LISTEN%:*}:$PROXY_PORT"
    log "egress proxy for the target: http://$PROXY"
fi
# set_backends FILE PORT...: the relay's backends, the first preferred
set_backends() {
    local f=$1
    shift
    echo "$*" >"$f.new" && mv "$f.new" "$f"
}

# ---- the target ---------------------------------------------------------------------------
if [ "$REFERENCE" = 1 ]; then
    STEP="starting the reference target"
    TARGS=(--listen 127.0.0.1:0 --domain target.test --workers "$WORKERS" --work-ms "$WORK_MS")
    if [ -n "$PROXY" ]; then
        TARGS+=(--proxy "http://$PROXY") # its only way to the crowd
    elif [ -n "$DNS_LISTEN" ]; then
        TARGS+=(--dns "$DNS_LISTEN") # its resolver: flood's name server
    else
        TARGS+=(--resolve-crowd "$BACKEND_HOST:$RELAY_PORT")
    fi
    [ -n "$BURST" ] && TARGS+=(--origin-burst "$BURST" --origin-refill "$REFILL")
    timeout -k 5 "$LIFE" node "$ROOT/tests/target/server.mjs" "${TARGS[@]}" >"$OUT/target.log" 2>&1 &
    TARGET_PID=$!
    PIDS="$PIDS $TARGET_PID"
    echo "$TARGET_PID" >"$TMP/target.pid"
    TPORT=$(wait_listen "$OUT/target.log" "$TARGET_PID" "the reference target") || exit 1
    TARGET="http://target.test:$TPORT"
    API="http://127.0.0.1:$TPORT"
    STATS_URL="$API/stats"
    TARGET_HOSTPORT="target.test:$TPORT"
    RESOLVE=(--resolve "target.test:$TPORT:127.0.0.1")
    log "reference target: $TARGET (listening on 127.0.0.1:$TPORT, $WORKERS workers${BURST:+, per-origin limit $BURST burst, $REFILL/s})"
else
    API=$TARGET
    TARGET_HOSTPORT=${TARGET#*://}
    RESOLVE=()
fi
TARGET_HOST=${TARGET_HOSTPORT%:*}

# api METHOD PATH TOKEN [curl args...]: the body on stdout, the status in $TMP/status.
api() {
    local method=$1 path=$2 token=$3
    shift 3
    "${CURL[@]}" -X "$method" -H "authorization: Bearer $token" -o "$TMP/body" \
        -w '%{http_code}' "$@" "$API$path" >"$TMP/status" 2>"$TMP/curl.err"
    local rc=$?
    cat "$TMP/body" 2>/dev/null
    return $rc
}

STEP="reaching the target"
code=$("${CURL[@]}" -o /dev/null -w '%{http_code}' "$API/api/v1/instance" 2>"$TMP/curl.err")
if [ $? -ne 0 ] || [ "$code" = 000 ]; then
    fail "target not reachable at $API: $(tail -1 "$TMP/curl.err")"
fi
log "target answers $API/api/v1/instance: $code"

# ---- the crowd for the setup --------------------------------------------------------------
start_serve() { # start_serve NAME: sets SERVE_PID, SERVE_PORT
    local name=$1
    local extra=()
    [ -n "$PROXY" ] && extra+=(--proxy 127.0.0.1:0)
    # the setup crowd stays up for the whole run: the name server is its
    [ -n "$DNS_LISTEN" ] && extra+=(--dns "$DNS_LISTEN")
    timeout -k 5 "$LIFE" "$FLOOD" serve --listen "$(bind_of "$CROWD_BIND")" "${CROWD[@]}" "${extra[@]}" \
        --allow-host "$TARGET_HOSTPORT" "${RESOLVE[@]}" --log-deliveries \
        >"$OUT/$name.log" 2>&1 &
    SERVE_PID=$!
    PIDS="$PIDS $SERVE_PID"
    SERVE_PORT=$(wait_listen "$OUT/$name.log" "$SERVE_PID" "flood serve ($name)" "") || exit 1
    SERVE_PROXY_PORT=""
    [ -n "$PROXY" ] && SERVE_PROXY_PORT=$(wait_listen "$OUT/$name.log" "$SERVE_PID" "flood serve's proxy ($name)" "proxy ")
    [ -z "$PROXY" ] || [ -n "$SERVE_PROXY_PORT" ] || exit 1
    if [ -n "$DNS_LISTEN" ]; then
        for _ in $(seq 1 100); do
            grep -q '^dns on ' "$OUT/$name.log" && break
            sleep 0.1
        done
        grep -q '^dns on ' "$OUT/$name.log" || fail "flood serve's name server did not start (log: $OUT/$name.log)"
    fi
}
STEP="starting the crowd (flood serve)"
start_serve crowd-setup
SETUP_PORT=$SERVE_PORT SETUP_PROXY_PORT=$SERVE_PROXY_PORT
set_backends "$TMP/backends" "$SETUP_PORT"
[ -n "$PROXY" ] && set_backends "$TMP/pbackends" "$SETUP_PROXY_PORT"
grep -h '^tls: CA certificate' "$OUT/crowd-setup.log" | head -1 | tee -a "$OUT/log.txt" >&2
log "crowd (setup): flood serve on $CROWD_BIND:$SETUP_PORT behind the relay${PROXY:+, its proxy on 127.0.0.1:$SETUP_PROXY_PORT behind the proxy relay}"
[ -n "$DNS_LISTEN" ] && log "name server for the target: $DNS_LISTEN (flood serve's, for the whole run), answering the crowd's names with $CROWD_BIND"
if [ "$REFERENCE" = 0 ]; then
    [ -n "$PROXY" ] && log "point $TARGET's outgoing proxy at http://$PROXY (docs/LOAD.md: the setting per server)"
    [ -n "$DNS_LISTEN" ] && log "point $TARGET's resolver (for the crowd's domain) at $DNS_LISTEN"
fi

STEP="listing the crowd (flood actors)"
"$FLOOD" actors --instances "$INSTANCES" --actors "$ACTORS" >"$OUT/actors.txt" 2>"$TMP/actors.err" ||
    fail "flood actors: $(cat "$TMP/actors.err")"
mapfile -t CROWD_ACCTS < <(sed 's/^acct://' "$OUT/actors.txt")
NACT=${#CROWD_ACCTS[@]}
[ "$NACT" -ge 1 ] || fail "flood actors listed nobody"

# ---- personas -----------------------------------------------------------------------------
# personas.tsv: name, token, persona for flood run (actor URL or acct:)
: >"$TMP/personas.tsv"
if [ "$REFERENCE" = 1 ]; then
    STEP="creating personas"
    for i in $(seq 0 $((PERSONAS - 1))); do
        body=$("${CURL[@]}" -X POST -H 'content-type: application/json' \
            -d "{\"username\":\"load$i\"}" -w '\n%{http_code}' "$API/admin/accounts" 2>"$TMP/curl.err") ||
            fail "persona load$i cannot be made: $(tail -1 "$TMP/curl.err")"
        code=$(echo "$body" | tail -1)
        json=$(echo "$body" | sed '$d')
        case "$code" in 200 | 201) ;; *) fail "persona load$i cannot be made: HTTP $code $json" ;; esac
        tok=$(echo "$json" | jq -r '.token // empty')
        actor=$(echo "$json" | jq -r '.actor // empty')
        [ -n "$tok" ] && [ -n "$actor" ] || fail "persona load$i: no token or actor in '$json'"
        printf 'load%s\t%s\t%s\n' "$i" "$tok" "$actor" >>"$TMP/personas.tsv"
    done
else
    STEP="reading the tokens"
    [ -r "$TOKEN_FILE" ] || fail "cannot read the token file '$TOKEN_FILE'"
    domain=$("${CURL[@]}" "$API/api/v1/instance" 2>/dev/null | jq -r '.uri // .domain // empty' 2>/dev/null)
    domain=${domain#https://}
    domain=${domain#http://}
    [ -n "$domain" ] || domain=$TARGET_HOST
    n=0
    while read -r a b _; do
        [ -z "$a" ] && continue
        case "$a" in \#*) continue ;; esac
        tok=${b:-$a}
        [ -n "$PERSONAS" ] && [ "$n" -ge "$PERSONAS" ] && break
        json=$(api GET /api/v1/accounts/verify_credentials "$tok") ||
            fail "target not reachable at $API: $(tail -1 "$TMP/curl.err")"
        code=$(cat "$TMP/status")
        [ "$code" = 200 ] || fail "token $((n + 1)) of '$TOKEN_FILE' refused: HTTP $code $(echo "$json" | head -c 200)"
        name=$(echo "$json" | jq -r '.username // empty')
        [ -n "$name" ] || fail "token $((n + 1)): verify_credentials gave no username"
        printf '%s\t%s\tacct:%s@%s\n' "$name" "$tok" "$name" "$domain" >>"$TMP/personas.tsv"
        n=$((n + 1))
    done <"$TOKEN_FILE"
    [ "$n" -ge 1 ] || fail "no token in '$TOKEN_FILE' (one a line: TOKEN or NAME TOKEN; make the accounts with tootctl accounts create / gotosocial admin account create / pleroma_ctl user new, then a token with scopes read write follow)"
    PERSONAS=$n
fi
mapfile -t P_NAME < <(cut -f1 "$TMP/personas.tsv")
mapfile -t P_TOKEN < <(cut -f2 "$TMP/personas.tsv")
mapfile -t P_FLOOD < <(cut -f3 "$TMP/personas.tsv")
cut -f1,3 "$TMP/personas.tsv" >"$OUT/personas.tsv"
log "personas: ${P_NAME[*]}"

# ---- follows ------------------------------------------------------------------------------
# Persona i follows crowd actors i*F .. i*F+F-1 (mod the crowd), so a crowd note reaches
# some homes and not others.
FOLLOW_N=$FOLLOWS
[ "$FOLLOW_N" -gt "$NACT" ] && FOLLOW_N=$NACT
STEP="looking up the crowd on the target"
declare -A NEEDED=()
for i in $(seq 0 $((PERSONAS - 1))); do
    for k in $(seq 0 $((FOLLOW_N - 1))); do
        [ "$FOLLOW_N" -eq 0 ] && break
        NEEDED[$(((i * FOLLOWS + k) % NACT))]=1
    done
done
declare -A CROWD_ID=()
if [ "${#NEEDED[@]}" -gt 0 ]; then
    # One curl, 4 transfers at a time; each lookup makes the target resolve the actor by
    # WebFinger and fetch it from the crowd. Lookups that failed are tried twice more.
    mkdir -p "$TMP/lookup"
    : >"$TMP/lookup.codes"
    todo=("${!NEEDED[@]}")
    for round in 1 2 3; do
        : >"$TMP/lookup.cfg"
        for j in "${todo[@]}"; do
            printf 'url = "%s/api/v1/accounts/lookup?acct=%s"\noutput = "%s/lookup/%s.json"\n' \
                "$API" "${CROWD_ACCTS[$j]}" "$TMP" "$j" >>"$TMP/lookup.cfg"
        done
        curl -sS --connect-timeout 5 --max-time $((20 * round)) -Z --parallel-max 4 \
            -H "authorization: Bearer ${P_TOKEN[0]}" -K "$TMP/lookup.cfg" -w '%{http_code}\n' \
            >>"$TMP/lookup.codes" 2>"$TMP/curl.err"
        grep -q '^401' "$TMP/lookup.codes" && break
        left=()
        for j in "${todo[@]}"; do
            id=$(jq -r '.id // empty' "$TMP/lookup/$j.json" 2>/dev/null)
            if [ -n "$id" ]; then CROWD_ID[$j]=$id; else left+=("$j"); fi
        done
        todo=("${left[@]}")
        [ "${#todo[@]}" -eq 0 ] && break
        sleep 1
    done
    bad=${#todo[@]}
    for j in "${todo[@]::3}"; do
        echo "load.sh: lookup ${CROWD_ACCTS[$j]}: $(head -c 200 "$TMP/lookup/$j.json" 2>/dev/null)" >&2
    done
    grep -q '^401' "$TMP/lookup.codes" && fail "the target refused the token of ${P_NAME[0]} (401)"
    [ "$bad" -eq 0 ] || fail "$bad of ${#NEEDED[@]} crowd actors could not be looked up on the target (is the crowd's name resolution and private-address access set up? see docs/LOAD.md)"
    log "looked up ${#NEEDED[@]} crowd actors"
fi

STEP="following the crowd"
FOLLOW_PIDS=()
if [ "$FOLLOW_N" -gt 0 ]; then
    # Per persona, two follow calls at a time; a call that timed out or got 429/5xx is
    # tried again (following twice is harmless: the relation is already pending), three
    # rounds at most. A 4xx other than 429 is final.
    for i in $(seq 0 $((PERSONAS - 1))); do
        (
            todo=()
            for k in $(seq 0 $((FOLLOW_N - 1))); do
                todo+=("$API/api/v1/accounts/${CROWD_ID[$(((i * FOLLOWS + k) % NACT))]}/follow")
            done
            : >"$TMP/follow.$i.codes"
            for round in 1 2 3; do
                args=()
                for u in "${todo[@]}"; do args+=(-o /dev/null "$u"); done
                curl -sS --connect-timeout 5 --max-time 60 -Z --parallel-max 2 -X POST \
                    -H "authorization: Bearer ${P_TOKEN[$i]}" -w '%{http_code} %{url}\n' \
                    "${args[@]}" >"$TMP/follow.$i.r$round" 2>>"$TMP/follow.$i.err"
                todo=()
                while read -r code url; do
                    case "$code" in
                    200) echo 200 >>"$TMP/follow.$i.codes" ;;
                    000 | 429 | 5*) if [ "$round" -lt 3 ]; then todo+=("$url"); else echo "$code" >>"$TMP/follow.$i.codes"; fi ;;
                    *) echo "$code" >>"$TMP/follow.$i.codes" ;;
                    esac
                done <"$TMP/follow.$i.r$round"
                [ "${#todo[@]}" -eq 0 ] && break
                sleep 1
            done
        ) &
        FOLLOW_PIDS+=($!)
    done
    wait_jobs_end=$((SECONDS + SETUP_TIMEOUT))
    for p in "${FOLLOW_PIDS[@]}"; do
        while kill -0 "$p" 2>/dev/null; do
            if [ "$SECONDS" -ge "$wait_jobs_end" ]; then
                kill "${FOLLOW_PIDS[@]}" 2>/dev/null
                fail "follows did not finish within $SETUP_TIMEOUT s"
            fi
            sleep 0.2
        done
        wait "$p"
    done
    for i in $(seq 0 $((PERSONAS - 1))); do
        n_ok=$(grep -c '^200$' "$TMP/follow.$i.codes")
        [ "$n_ok" -eq "$FOLLOW_N" ] ||
            fail "${P_NAME[$i]}: $n_ok of $FOLLOW_N follows answered 200 (codes: $(sort "$TMP/follow.$i.codes" | uniq -c | tr '\n' ' '))"
    done
    log "$PERSONAS personas sent $FOLLOW_N follows each; waiting for the Accepts"

    STEP="waiting for the Accepts"
    deadline=$((SECONDS + SETUP_TIMEOUT))
    for i in $(seq 0 $((PERSONAS - 1))); do
        q=""
        for k in $(seq 0 $((FOLLOW_N - 1))); do
            q="$q&id[]=${CROWD_ID[$(((i * FOLLOWS + k) % NACT))]}"
        done
        q="?${q#&}"
        while :; do
            rel=$(api GET "/api/v1/accounts/relationships$q" "${P_TOKEN[$i]}" -g) ||
                fail "target not reachable: $(tail -1 "$TMP/curl.err")"
            n=$(echo "$rel" | jq '[.[] | select(.following == true)] | length' 2>/dev/null || echo 0)
            [ "$n" -ge "$FOLLOW_N" ] && break
            [ "$SECONDS" -ge "$deadline" ] &&
                fail "${P_NAME[$i]}: $n of $FOLLOW_N follows accepted after $SETUP_TIMEOUT s (does the crowd reach the target's keys? see $OUT/crowd-setup.log)"
            sleep 0.5
        done
    done
    log "every follow accepted ($((PERSONAS * FOLLOW_N)) in all)"
fi

STEP="posting"
for i in $(seq 0 $((PERSONAS - 1))); do
    for k in 1 2; do
        json=$(api POST /api/v1/statuses "${P_TOKEN[$i]}" \
            --data-urlencode "status=Load run $STAMP: post $k of ${P_NAME[$i]}, for the crowd to like.") ||
            fail "target not reachable: $(tail -1 "$TMP/curl.err")"
        code=$(cat "$TMP/status")
        [ "$code" = 200 ] || fail "${P_NAME[$i]} cannot post: HTTP $code $(echo "$json" | head -c 200)"
    done
done
log "each persona posted twice"

# ---- samplers -----------------------------------------------------------------------------
# The target's /stats each second, for the whole run and the drain.
if [ -n "$STATS_URL" ]; then
    (
        while [ ! -e "$TMP/stop" ] && kill -0 "$SELF" 2>/dev/null; do
            t=$(usec)
            "${CURL[@]}" --max-time 2 "$STATS_URL" 2>/dev/null |
                jq -c --arg t "$t" '{sampled_at: ($t | tonumber / 1000000)} + .' >>"$OUT/stats.jsonl" 2>/dev/null
            wake=$((t + 1000000 - $(usec)))
            [ "$wake" -gt 0 ] && sleep "0.$(printf '%06d' "$wake")"
        done
    ) &
    SAMPLER_PID=$!
    PIDS="$PIDS $SAMPLER_PID"
fi

# The home-timeline probe, open loop: each read starts at its own time whether or not the
# previous one has answered (a slow answer does not delay the next read).
start_probe() {
    local tok=$1 period_us
    period_us=$(awk "BEGIN { printf \"%d\", 1000000 / $PROBE_HZ }")
    echo "t_s,status,time_s" >"$OUT/probe.csv"
    (
        start=$(usec)
        n=0
        while [ ! -e "$TMP/probe-stop" ] && [ ! -e "$TMP/stop" ] && kill -0 "$SELF" 2>/dev/null; do
            intended=$((n * period_us))
            (
                r=$(curl -s --connect-timeout 5 --max-time 10 -o /dev/null -w '%{http_code} %{time_total}' \
                    -H "authorization: Bearer $tok" "$API/api/v1/timelines/home?limit=40")
                printf '%d.%03d,%s,%s\n' $((intended / 1000000)) $((intended % 1000000 / 1000)) \
                    "${r% *}" "${r#* }" >>"$OUT/probe.csv"
            ) &
            n=$((n + 1))
            wake=$((start + n * period_us - $(usec)))
            [ "$wake" -gt 0 ] && sleep "$((wake / 1000000)).$(printf '%06d' $((wake % 1000000)))"
        done
        wait
    ) &
    PROBE_PID=$!
    PIDS="$PIDS $PROBE_PID"
}

# ---- the flood ----------------------------------------------------------------------------
STEP="flood run"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
RUN=("$FLOOD" run --listen "$(bind_of "$CROWD_BIND")" "${CROWD[@]}" --allow-host "$TARGET_HOSTPORT" "${RESOLVE[@]}"
    --rate "$RATE" --duration "${SECONDS_}s" --out "$OUT/flood"
    --accept-wait 60s) # a queue behind answers its Follows late: let the probes close
for p in "${P_FLOOD[@]}"; do RUN+=(--persona "$p"); done
[ -n "$MIX" ] && RUN+=(--mix "$MIX")
[ -n "$PROXY" ] && RUN+=(--proxy 127.0.0.1:0)
# a lab target on plain HTTP: WebFinger over HTTP too
[ "$REFERENCE" = 0 ] && [[ "$TARGET" == http://* ]] && RUN+=(--target-http)
# shellcheck disable=SC2206
[ -n "$RUN_OPT" ] && RUN+=($RUN_OPT)
echo "${RUN[*]}" >"$OUT/flood-command.txt"
start_probe "${P_TOKEN[0]}"
timeout -k 10 "$(calc "$SECONDS_ + 300" | cut -d. -f1)" "${RUN[@]}" >"$OUT/flood.out" 2>"$OUT/flood.log" &
RUN_PID=$!
PIDS="$PIDS $RUN_PID"
# As soon as flood run's crowd listens, the target's connections move to it; the setup
# crowd stays behind it as the fallback, and answers for the drain once flood run is gone.
run_port=""
for _ in $(seq 1 1200); do
    run_port=$(sed -n 's/.*crowd listening on [a-z]*:\/\/.*:\([0-9][0-9]*\)$/\1/p' "$OUT/flood.log" 2>/dev/null | head -1)
    [ -n "$run_port" ] && break
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.1
done
if [ -n "$run_port" ]; then
    if [ -n "$PROXY" ]; then # its proxy is printed right after its crowd
        run_pport=""
        for _ in $(seq 1 100); do
            run_pport=$(sed -n 's/.*proxy listening on http:\/\/.*:\([0-9][0-9]*\)$/\1/p' "$OUT/flood.log" 2>/dev/null | head -1)
            [ -n "$run_pport" ] && break
            sleep 0.05
        done
        [ -n "$run_pport" ] && set_backends "$TMP/pbackends" "$run_pport" "$SETUP_PROXY_PORT"
    fi
    set_backends "$TMP/backends" "$run_port" "$SETUP_PORT"
    log "flood run: crowd on $CROWD_BIND:$run_port${run_pport:+, its proxy on 127.0.0.1:$run_pport}, $RATE/s for $SECONDS_ s to $PERSONAS personas"
fi
# flood run prints 'activities over' half a second before its first send: from it, the
# time of the last scheduled send (1/rate before the end), from which the drain is timed
# (to within the 0.05 s of this poll and the 0.25 s of the drain's).
SEND_END=""
for _ in $(seq 1 3000); do
    if grep -q '^flood: run: [0-9]* activities over' "$OUT/flood.log" 2>/dev/null; then
        SEND_END=$(calc "$(now) + 0.5 + $SECONDS_ - 1 / $RATE")
        break
    fi
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.05
done
wait "$RUN_PID"
RUN_RC=$?
RUN_END=$(date +%s.%N)
[ -n "$SEND_END" ] || SEND_END=$RUN_END
if [ -n "${TARGET_PID:-}" ] && ! kill -0 "$TARGET_PID" 2>/dev/null; then
    touch "$TMP/probe-stop"
    [ -f "$OUT/flood/run.json" ] && cp "$OUT/flood/run.json" "$OUT/run.json"
    fail "the reference target exited during the flood (log: $OUT/target.log; flood's results kept)"
fi
PIDS=$(echo " $PIDS " | sed "s/ $RUN_PID / /")
set_backends "$TMP/backends" "$SETUP_PORT"
[ -n "$PROXY" ] && set_backends "$TMP/pbackends" "$SETUP_PROXY_PORT"
touch "$TMP/probe-stop"
cat "$OUT/flood.out" >&2
[ -f "$OUT/flood/run.json" ] && cp "$OUT/flood/run.json" "$OUT/run.json"
if [ "$RUN_RC" -ne 0 ] || [ ! -f "$OUT/run.json" ]; then
    tail -5 "$OUT/flood.log" | sed 's/^/    /' >&2
    fail "flood run exited with status $RUN_RC (log: $OUT/flood.log)"
fi
log "flood run done"

# ---- the drain ----------------------------------------------------------------------------
STEP="waiting for the queue to drain"
DRAIN_S="" DRAINED=0
if [ -n "$STATS_URL" ]; then
    # Drained: nothing queued, no worker busy, and every activity accepted at the inbox
    # processed (ok, ignored or failed).
    misses=0
    while :; do
        if [ -n "${TARGET_PID:-}" ] && ! kill -0 "$TARGET_PID" 2>/dev/null; then
            fail "the reference target exited during the drain (log: $OUT/target.log)"
        fi
        s=$("${CURL[@]}" --max-time 5 "$STATS_URL" 2>/dev/null)
        if [ -z "$s" ]; then
            misses=$((misses + 1))
            [ "$misses" -ge 40 ] && fail "the target stopped answering $STATS_URL (last good sample in $OUT/stats.jsonl)"
        else
            misses=0
        fi
        if [ -n "$s" ] && echo "$s" | jq -e '
            (.queue.depth == 0) and (.queue.busy_workers == 0) and
            (.inbox.accepted == ([.activities[] | .ok + .ignored + .failed] | add // 0))' >/dev/null 2>&1; then
            DRAINED=1
            break
        fi
        cond "$(now) - $RUN_END > $DRAIN_TIMEOUT" && break
        sleep 0.25
    done
    DRAIN_AT=$(now)
    echo "$s" | jq . >"$OUT/stats-final.json" 2>/dev/null
else
    # No queue figures: drained once no delivery reached the crowd for QUIET_S seconds.
    last_n=-1 last_change=$(date +%s.%N)
    while :; do
        n=$(grep -c '^inbound: ' "$OUT/crowd-setup.log")
        if [ "$n" != "$last_n" ]; then
            last_n=$n
            last_change=$(date +%s.%N)
        fi
        if cond "$(now) - $last_change >= $QUIET_S"; then
            DRAINED=1
            break
        fi
        cond "$(now) - $RUN_END > $DRAIN_TIMEOUT" && break
        sleep 0.5
    done
    DRAIN_AT=$last_change
fi
# the drain: from the last scheduled send until the queue was empty (0 if it never lagged)
DRAIN_S=$(printf '%.1f' "$(calc "$DRAIN_AT - $SEND_END" | sed 's/^-.*/0/')")
AFTER_RUN=$(printf '%.1f' "$(calc "$DRAIN_AT - $RUN_END" | sed 's/^-.*/0/')")
FLOOD_WAIT=$(printf '%.1f' "$(calc "$RUN_END - $SEND_END" | sed 's/^-.*/0/')")
touch "$TMP/stop"
[ -n "${SAMPLER_PID:-}" ] && stop_one "$SAMPLER_PID"
for _ in $(seq 1 60); do kill -0 "$PROBE_PID" 2>/dev/null || break; sleep 0.2; done
stop_one "$PROBE_PID"
if [ "$DRAINED" = 1 ]; then
    log "queue drained $DRAIN_S s after the last scheduled send ($AFTER_RUN s after flood run ended)"
else
    log "queue NOT drained after $DRAIN_TIMEOUT s"
fi

# Accepts of flood run's Follows that came after it ended reached the setup crowd.
LATE_ACCEPTS=$(grep -c '^inbound: Accept from .*: 2[0-9][0-9]$' "$OUT/crowd-setup.log")
stop_all

# ---- the figures --------------------------------------------------------------------------
STEP="writing the summary"
hgrm_q() { # hgrm_q FILE Q: the value at quantile Q from a .hgrm percentile table
    [ -f "$1" ] || { echo "-"; return; }
    awk -v q="$2" '$1 ~ /^[0-9.]+$/ && NF >= 3 && $2 + 0 >= q { printf "%.0f", $1; found = 1; exit }
        END { if (!found) printf "-" }' "$1"
}
fmt() { # fmt X: a number rounded, or '-'
    case "$1" in "" | null | -) echo "-" ;; *) printf '%.0f' "$1" ;; esac
}

R=$OUT/run.json
F_OK=$(jq '.totals.outcomes | ."200" + ."202" + ."2xx_other"' "$R")
F_429=$(jq '.totals.outcomes."429"' "$R")
F_ERR=$(jq '(.totals.outcomes | to_entries | map(select(.key != "200" and .key != "202" and .key != "2xx_other" and .key != "429") | .value) | add) + .totals.unfinished + .totals.shed' "$R")
F_SENT=$(jq '.totals.sent' "$R")
FOLLOWS_SENT=$(jq '.probes.follows_sent // .inbound.follows_sent // 0' "$R")
FOLLOWS_ACC=$(jq '.probes.accepted // 0' "$R")
FA50=$(fmt "$(jq '.probes.follow_to_accept_ms.count as $c | if $c > 0 then .probes.follow_to_accept_ms.p50 else null end' "$R")")
FA95=$(hgrm_q "$OUT/flood/follow-to-accept.hgrm" 0.95)
[ "$FOLLOWS_ACC" -gt 0 ] || FA95="-"
SATURATED=$(jq '.generator.saturated' "$R")

HOME_N=$(($(wc -l <"$OUT/probe.csv") - 1))
HOME_OK=$(awk -F, 'NR > 1 && $2 == 200' "$OUT/probe.csv" | wc -l)
HOME_TO=$(awk -F, 'NR > 1 && $2 == "000"' "$OUT/probe.csv" | wc -l)
# nearest rank over every read, a timed-out read counted at its 10 s bound
HOME95=$(awk -F, 'NR > 1 { print $3 * 1000 }' "$OUT/probe.csv" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(NR * 0.95 + 0.999999); if (i < 1) i = 1; printf "%.0f", v[i] }')

S=$OUT/stats-final.json
if [ -s "$S" ]; then
    HELD=$(jq '.store.posts_held' "$S")
    QW50=$(fmt "$(jq '.queue.queue_wait_ms.p50' "$S")")
    QW95=$(fmt "$(jq '.queue.queue_wait_ms.p95' "$S")")
    PR50=$(fmt "$(jq '.queue.processing_ms.p50' "$S")")
    PR95=$(fmt "$(jq '.queue.processing_ms.p95' "$S")")
    PEAK=$(jq '.queue.peak' "$S")
    TWORKERS=$(jq '.config.workers' "$S")
    SIGFAIL=$(jq '(.inbox.rejected.signature // 0) + (.inbox.rejected["signer-mismatch"] // 0)' "$S")
else
    HELD="-" QW50="-" QW95="-" PR50="-" PR95="-" PEAK="-" TWORKERS="-" SIGFAIL="-"
fi
LIMIT="off"
[ -n "$BURST" ] && LIMIT="$BURST/$REFILL"
DRAIN_CELL="$DRAIN_S s"
HOME_CELL=$HOME95
[ "$HOME_TO" -gt 0 ] && HOME_CELL="$HOME95 ($HOME_TO/$HOME_N timed out)"
[ "$DRAINED" = 1 ] || DRAIN_CELL="> $DRAIN_S s"

HEADER="| rate/s | s | workers | origin limit | posts held | queue wait p50/p95 ms | processing p50/p95 ms | queue peak | drain | home p95 ms | flood 2xx / 429 / errors | Follow-to-Accept p50/p95 ms (answered/sent) |"
RULE="|---|---|---|---|---|---|---|---|---|---|---|---|"
ROW="| $RATE | $SECONDS_ | $TWORKERS | $LIMIT | $HELD | $QW50 / $QW95 | $PR50 / $PR95 | $PEAK | $DRAIN_CELL | $HOME_CELL | $F_OK / $F_429 / $F_ERR | $FA50 / $FA95 ($FOLLOWS_ACC/$FOLLOWS_SENT) |"

{
    echo "# load run $STAMP"
    echo
    if [ "$REFERENCE" = 1 ]; then
        echo "Target: the reference target (tests/target), $WORKERS inbox workers, per-origin limit $LIMIT$([ "$WORK_MS" != 0 ] && echo ", work-ms $WORK_MS")."
    else
        echo "Target: $TARGET."
    fi
    echo "Personas: $PERSONAS, each following $FOLLOW_N of the crowd's $NACT actors; $F_SENT activities sent at $RATE/s for $SECONDS_ s."
    echo
    echo "$HEADER"
    echo "$RULE"
    echo "$ROW"
    echo
    echo "- flood: $(jq -r '.totals.outcomes | to_entries | map(select(.value > 0) | "\(.key)=\(.value)") | join(" ")' "$R"), shed $(jq .totals.shed "$R"), unfinished $(jq .totals.unfinished "$R"); generator saturated: $SATURATED."
    echo "- corrected latency of flood's POSTs (from the intended send time): p50 $(fmt "$(jq .totals.latency_ms.p50 "$R")") ms, p99 $(fmt "$(jq .totals.latency_ms.p99 "$R")") ms."
    echo "- Follow-to-Accept: $FOLLOWS_ACC of $FOLLOWS_SENT answered while flood run ran; $LATE_ACCEPTS Accepts arrived after it ended (at the setup crowd)."
    echo "- home timeline (${PROBE_HZ}/s during flood run): $HOME_N reads, $HOME_OK answered 200, $HOME_TO timed out (10 s)."
    echo "- host: $(nproc) cores; load average before the run $LOAD_BEFORE, after $(cut -d' ' -f1-3 /proc/loadavg)."
    [ -s "$S" ] && echo "- target: inbox $(jq -c .inbox "$S"), signature failures $SIGFAIL; deliveries $(jq -c '{attempts: .deliveries.attempts, ok: .deliveries.ok, failed: .deliveries.failed}' "$S")."
    [ -s "$S" ] && echo "- processed by type: $(jq -c '.activities | map_values({enqueued, ok, ignored, failed})' "$S")."
    if [ -n "$PROXY" ]; then
        echo "- egress (flood run's proxy, behind http://$PROXY): $(jq -r '.egress | "\(.requests) requests: relayed \(.relayed) (answered \(.answered), failed \(.failed)), CONNECT \(.connects), refused \(.refused)\(.refused_by_host | to_entries | map("\(.key) \(.value.requests)") | join(", ") | if . == "" then "" else " (" + . + ")" end), malformed \(.malformed); \(.instances | length) instances used; conserved: \(.conservation.ok)"' "$R")."
        echo "- egress (the setup crowd's proxy, before and after flood run): $(sed -n 's/^egress: proxy [^ ]* //p' "$OUT/crowd-setup.log" | head -1)"
    fi
    [ -n "$DNS_LISTEN" ] && echo "- name server ($DNS_LISTEN, the setup crowd's): $(sed -n 's/^serve: name server: //p' "$OUT/crowd-setup.log" | head -1)"
    echo "- drain: $([ "$DRAINED" = 1 ] && echo "$DRAIN_S s after the last scheduled send; flood run waited $FLOOD_WAIT s more for answers and the queue emptied $AFTER_RUN s after it ended" || echo "not drained within $DRAIN_TIMEOUT s")."
    echo
    echo "flood command: \`$(cat "$OUT/flood-command.txt")\`"
} >"$OUT/summary.md"

echo
echo "$HEADER"
echo "$RULE"
echo "$ROW"
echo
echo "results: $OUT"
[ "$DRAINED" = 1 ] || { STEP="waiting for the queue to drain"; fail "the queue did not drain within $DRAIN_TIMEOUT s (figures above are kept)"; }
rm -rf "$TMP"
exit 0

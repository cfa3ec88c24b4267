#!/usr/bin/env bash
# The egress proxy (--proxy, flood/crowd/proxy.c): curl (libcurl) through it to every name of
# a 1,000-instance crowd, plain (absolute-form) and CONNECT + TLS, every answer byte-equal to
# the same request made straight to the crowd's listener; the canary (a name outside the
# crowd), an address, the proxy's own port and a request to the proxy itself refused with
# 403 and counted; malformed input (a bad request line, 100 KB of headers, a head that never
# ends, a CONNECT that never sends TLS or sends no TLS, a half-closed tunnel and request)
# each answered or closed and counted, the proxy serving the next request after each; every
# count conserved, read from --metrics and from run.json after a short `flood run --proxy`.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
PY=python3
ACCEPT='Accept: application/activity+json'

# metric FILE 'NAME{LABELS}': the value of that exact series
metric() {
    awk -v k="$2" '$1 == k {print $2}' "$1"
}
# scrape PORT FILE
scrape() {
    curl -s -o "$2" "http://127.0.0.1:$1/metrics"
}
# port_of LOG PREFIX: the port of the line "PREFIX http://ADDR:PORT..."
port_of() {
    sed -n "s|^$2 https\{0,1\}://[^ ]*:\([0-9]*\)[^ ]*\$|\1|p" "$1" | head -1
}

# raw PORT: a python client for what curl will not send; prints what came back and how
raw() {
    "$PY" - "$@" <<'EOF'
import re, socket, sys, time
port, case = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
def readall():
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return out, "closed"
            out += b
    except socket.timeout:
        return out, "open"
    except ConnectionResetError:
        return out, "reset"
if case == "badline":
    s.sendall(b"GET  http://flood1.test/ HTTP/1.1\r\nHost: x\r\n\r\n")
elif case == "bigheaders":
    s.sendall(b"GET http://flood1.test/users/user1 HTTP/1.1\r\n")
    try:
        for i in range(100):
            s.sendall(b"X-Pad-%03d: " % i + b"a" * 1000 + b"\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass
elif case == "version":
    s.sendall(b"GET http://flood1.test/ HTTP/2.0\r\n\r\n")
elif case == "slowhead":
    s.sendall(b"GET http://flood1.test/users/user1 HTTP/1.1\r\nHost: fl")
elif case == "silent":
    s.sendall(b"CONNECT flood1.test:443 HTTP/1.1\r\nHost: flood1.test:443\r\n\r\n")
elif case == "nottls":
    s.sendall(b"CONNECT flood2.test:443 HTTP/1.1\r\n\r\n")
    time.sleep(0.3)
    s.sendall(b"GET /users/user1 HTTP/1.1\r\nHost: flood2.test\r\n\r\n")
elif case == "halftunnel":
    s.sendall(b"CONNECT flood3.test:80 HTTP/1.1\r\n\r\n"
              b"GET /users/user1 HTTP/1.1\r\nHost: flood3.test\r\n"
              b"Accept: application/activity+json\r\n\r\n")
    # the half-close after the request has reached the crowd: a FIN arriving in the same
    # read as the request is not seen by the crowd's libmicrohttpd (epoll, edge-triggered)
    # until its idle timeout, and the crowd's close is what ends the tunnel
    time.sleep(0.3)
    s.shutdown(socket.SHUT_WR)
elif case == "halfplain":
    s.sendall(b"GET http://flood4.test/users/user2 HTTP/1.1\r\n"
              b"Accept: application/activity+json\r\n\r\n")
    s.shutdown(socket.SHUT_WR)
elif case == "connectafter":
    s.sendall(b"GET http://flood5.test/.well-known/nodeinfo HTTP/1.1\r\n\r\n"
              b"CONNECT flood6.test:80 HTTP/1.1\r\n\r\n"
              b"GET /.well-known/nodeinfo HTTP/1.1\r\nHost: flood6.test\r\nConnection: close\r\n\r\n")
elif case == "pipeline":
    s.sendall(b"GET http://flood5.test/users/user1 HTTP/1.1\r\nAccept: application/activity+json\r\n\r\n"
              b"GET http://evil.example/ HTTP/1.1\r\n\r\n"
              b"HEAD http://flood6.test/users/user2 HTTP/1.1\r\nAccept: application/activity+json\r\n\r\n"
              b"GET http://flood7.test/.well-known/nodeinfo HTTP/1.1\r\nConnection: close\r\n\r\n")
out, how = readall()
statuses = [m.decode() for m in re.findall(rb"HTTP/1\.1 (\d{3}) ", out)]
print(" ".join(statuses) or "-", how, len(out))
sys.stdout.flush()
if case == "halftunnel" or case == "halfplain":
    sys.stderr.write(out.decode("latin-1"))
EOF
}

# ---- 1. plain: 1,000 names through the proxy, byte-equal to direct ------------------------
N=1000
start_serve --instances $N --actors 2 --proxy 127.0.0.1:0 --metrics 127.0.0.1:0 || exit 1
PLOG=$SERVE_LOG
L=$SERVE_PORT
P=$(port_of "$PLOG" "proxy listening on")
M=$(port_of "$PLOG" "metrics on")
[ -n "$P" ] && [ -n "$M" ]
check $? "flood serve --proxy 127.0.0.1:0 prints 'proxy listening on http://ADDR:PORT' ($P)" || cat "$PLOG"

mkdir -p "$T_TMP/px" "$T_TMP/direct"
: >"$T_TMP/px.cfg"
: >"$T_TMP/direct.cfg"
for i in $(seq 1 $N); do
    printf 'url = "http://flood%d.test/users/user1"\noutput = "%s/px/%d"\n' "$i" "$T_TMP" "$i" >>"$T_TMP/px.cfg"
    printf 'url = "http://flood%d.test/users/user1"\noutput = "%s/direct/%d"\n' "$i" "$T_TMP" "$i" >>"$T_TMP/direct.cfg"
done
curl -s -f -H "$ACCEPT" -x "http://127.0.0.1:$P" --config "$T_TMP/px.cfg"
check $? "curl through the proxy: $N actor GETs on $N names, every one 2xx"
curl -s -f -H "$ACCEPT" --connect-to "::127.0.0.1:$L" --config "$T_TMP/direct.cfg"
check $? "the same $N GETs straight to the crowd's listener"
diff -rq "$T_TMP/px" "$T_TMP/direct" >/dev/null && [ "$(ls "$T_TMP/px" | wc -l)" = $N ]
check $? "all $N answers through the proxy byte-equal to the direct ones"
grep -q '"id":"http://flood1000.test/users/user1"' "$T_TMP/px/1000"
check $? "each answer is its own instance's actor (flood1000.test's)"

# a 5 MB image (the answer outruns every buffer: back-pressure), and POSTs with a body by
# Content-Length and chunked (curl sends "Expect: 100-continue" beyond 1 KiB): the same
# bytes as direct
U=http://flood4.test/media/7-640x480-5000000.png
curl -s -o "$T_TMP/media.px" -x "http://127.0.0.1:$P" "$U"
curl -s -o "$T_TMP/media.direct" --connect-to "::127.0.0.1:$L" "$U"
cmp -s "$T_TMP/media.px" "$T_TMP/media.direct" && [ "$(wc -c <"$T_TMP/media.px")" = 5000000 ]
check $? "a 5 MB image through the proxy: byte-equal to direct"
head -c 3000 /dev/urandom | base64 >"$T_TMP/body"
post() { # CURL-ARGS...: the answer's head and body without its Date
    curl -s -i --data-binary @"$T_TMP/body" -H 'Content-Type: application/activity+json' "$@" \
        http://flood1.test/inbox | grep -v '^Date:'
}
post -x "http://127.0.0.1:$P" >"$T_TMP/post.px"
post --connect-to "::127.0.0.1:$L" >"$T_TMP/post.direct"
cmp -s "$T_TMP/post.px" "$T_TMP/post.direct" && grep -q '^HTTP/1.1 401' "$T_TMP/post.px"
check $? "a 4 KB POST to an inbox (Content-Length): the crowd's own answer (401: unsigned), same as direct"
post -H 'Transfer-Encoding: chunked' -x "http://127.0.0.1:$P" >"$T_TMP/post.px"
post -H 'Transfer-Encoding: chunked' --connect-to "::127.0.0.1:$L" >"$T_TMP/post.direct"
cmp -s "$T_TMP/post.px" "$T_TMP/post.direct" && grep -q '^HTTP/1.1 401' "$T_TMP/post.px"
check $? "the same POST chunked: the same answer as direct"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$T_TMP/body" -x "http://127.0.0.1:$P" http://leak.example/inbox)" 403 "a POST with a body to a name outside the crowd: 403"

# ---- 2. refusals: the canary, an address, the proxy's own port, the proxy itself ----------
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect_eq "$(code -x "http://127.0.0.1:$P" http://canary.example/leak)" 403 "the canary (a name outside the crowd) refused 403"
expect_eq "$(code -x "http://127.0.0.1:$P" "http://127.0.0.1:$L/users/user1")" 403 "an IP literal (even the crowd's own listener) refused 403"
expect_eq "$(code -x "http://127.0.0.1:$P" "http://127.0.0.1:$P/")" 403 "the proxy's own port refused 403"
expect_eq "$(code "http://127.0.0.1:$P/users/user1")" 403 "a request to the proxy itself (origin-form) refused 403"
expect_eq "$(code -x "http://127.0.0.1:$P" "http://flood$((N + 1)).test/")" 403 "flood$((N + 1)).test (one past the crowd) refused 403"
expect_eq "$(curl -s -o /dev/null -w '%{http_connect}' -p -x "http://127.0.0.1:$P" https://canary.example/)" 403 "CONNECT canary.example:443 refused 403"

# ---- 3. malformed input, each then a good request --------------------------------------
good() { expect_eq "$(code -H "$ACCEPT" -x "http://127.0.0.1:$P" http://flood9.test/users/user1)" 200 "$1"; }
expect_eq "$(raw "$P" badline | cut -d' ' -f1,2)" "400 closed" "a malformed request line: 400 and closed"
good "the proxy serves the next request"
expect_eq "$(raw "$P" bigheaders | cut -d' ' -f1,2)" "431 closed" "100 KB of headers: 431 and closed"
good "the proxy serves the next request after the 431"
expect_eq "$(raw "$P" version | cut -d' ' -f1,2)" "505 closed" "HTTP/2.0 on the request line: 505 and closed"
raw "$P" slowhead >"$T_TMP/slowhead" &
SLOW=$!
raw "$P" silent >"$T_TMP/silent" &
SILENT=$!
expect_eq "$(raw "$P" pipeline | cut -d' ' -f1-5)" "200 403 200 200 closed" "pipelined: actor, canary, HEAD, close: answered in order"
expect_eq "$(raw "$P" connectafter | cut -d' ' -f1-4)" "200 200 200 closed" "a CONNECT pipelined behind a GET: tunnelled once the GET is answered"
expect_eq "$(raw "$P" halftunnel 2>"$T_TMP/halftunnel.body" | cut -d' ' -f1-3)" "200 200 closed" "CONNECT to the plain crowd then a half-close: the answer comes whole, then the close"
grep -q '"id":"http://flood3.test/users/user1"' "$T_TMP/halftunnel.body"
check $? "the half-closed tunnel's answer is flood3.test's actor"
expect_eq "$(raw "$P" halfplain 2>"$T_TMP/halfplain.body" | cut -d' ' -f1,2)" "200 closed" "a request then a half-close: answered, then closed"
wait $SLOW $SILENT
expect_eq "$(cut -d' ' -f1,2 "$T_TMP/slowhead")" "408 closed" "a head that never ends: 408 after 10 s, closed"
expect_eq "$(cut -d' ' -f1,2 "$T_TMP/silent")" "200 closed" "a CONNECT that never sends a byte: closed after 10 s"
good "the proxy still serves after all of them"
expect_eq "$(curl -s -o /dev/null -o /dev/null -w '%{http_code} ' -H "$ACCEPT" -x "http://127.0.0.1:$P" http://flood8.test/users/user1 http://flood8.test/users/user2)" \
    "200 200 " "two actors of flood8.test on one connection"

# ---- 4. the counts, from --metrics -------------------------------------------------------
sleep 0.3
scrape "$M" "$T_TMP/m1"
r() { metric "$T_TMP/m1" "$1"; }
expect_eq "$(r 'flood_egress_refused_total{reason="not_crowd"}')" 5 "metrics: 5 refused as not the crowd's (leak.example, canary, one past, CONNECT canary, the pipelined one)"
expect_eq "$(r 'flood_egress_refused_total{reason="address"}')" 1 "metrics: 1 refused as an address"
expect_eq "$(r 'flood_egress_refused_total{reason="self"}')" 1 "metrics: 1 refused as the proxy's own port"
expect_eq "$(r 'flood_egress_refused_total{reason="origin"}')" 1 "metrics: 1 refused as origin-form"
expect_eq "$(r 'flood_egress_refused_host_total{host="canary.example"}')" 1 "metrics: the canary host counted by name"
expect_eq "$(r 'flood_egress_refused_host_total{host="canary.example:443"}')" 1 "metrics: the CONNECT canary counted by host:port"
expect_eq "$(r 'flood_egress_malformed_total{reason="line"}')/$(r 'flood_egress_malformed_total{reason="too_large"}')/$(r 'flood_egress_malformed_total{reason="version"}')/$(r 'flood_egress_malformed_total{reason="timeout"}')" \
    1/1/1/1 "metrics: malformed by reason: line 1, too_large 1, version 1, timeout 1"
# The half-closed tunnel ends "half_close" when the crowd's answer reaches the proxy after
# the client's end, "done" when it overtakes the client's shutdown (a loaded machine may
# run the proxy between the client's write and its shutdown): which of the two is a race
# of the client's own making, so either is right, but never an error.
expect_eq "$(r 'flood_egress_tunnels_closed_total{end="silent"}')/$(( $(r 'flood_egress_tunnels_closed_total{end="half_close"}') <= 1 ))/$(r 'flood_egress_tunnels_closed_total{end="error"}')" 1/1/0 "metrics: tunnels closed silent 1, half_close at most the one, none in error"
ANS=$(r 'flood_egress_requests_total{outcome="answered"}')
expect_eq "$ANS" $((N + 13)) "metrics: answered $((N + 13)) ($N, the image, 2 POSTs, 3 good, 3 pipelined, 1 before a CONNECT, the half-closed one, 2 of flood8.test)"
expect_eq "$(r 'flood_egress_instance_requests_total{instance="flood8.test"}')/$(r 'flood_egress_instance_reused_total{instance="flood8.test"}')/$(r 'flood_egress_instance_open_connections{instance="flood8.test"}')" \
    3/1/0 "metrics: flood8.test 3 requests (one of the $N, these 2), 1 on a connection already carrying it (reused), none open now"
grep -q '^# TYPE flood_egress_instance_open_connections gauge$' "$T_TMP/m1"
check $? "metrics: the connections open per instance are a gauge"
SUM=$(($(r 'flood_egress_requests_total{outcome="answered"}') + $(r 'flood_egress_requests_total{outcome="failed"}') + $(r 'flood_egress_requests_total{outcome="refused"}') + $(r 'flood_egress_requests_total{outcome="malformed"}') + $(r 'flood_egress_requests_total{outcome="tunnelled"}')))
expect_eq "$(r 'flood_egress_instance_connects_total{instance="flood3.test"}')" 1 "metrics: flood3.test's CONNECT counted by instance"
stop_pid "$SERVE_PID"
grep -q '^egress .*conserved' "$PLOG" && ! grep -q 'NOT conserved' "$PLOG"
check $? "flood serve's closing egress line: conserved (requests = answered + failed + refused + malformed + tunnelled)" || grep egress "$PLOG"
REQ=$(sed -n 's/^egress conserved: requests \([0-9]*\) .*/\1/p' "$PLOG")
expect_eq "$REQ" "$SUM" "the requests at the end equal the sum of the outcomes scraped"

# ---- 5. CONNECT + TLS: 1,000 names, byte-equal to direct ---------------------------------
start_serve --instances $N --actors 2 --tls --proxy 127.0.0.1:0 --metrics 127.0.0.1:0 || exit 1
TLOG=$SERVE_LOG
L=$SERVE_PORT
P=$(port_of "$TLOG" "proxy listening on")
M=$(port_of "$TLOG" "metrics on")
CA=$(sed -n 's/^tls: CA certificate //p' "$TLOG")
rm -rf "$T_TMP/px" "$T_TMP/direct"
mkdir -p "$T_TMP/px" "$T_TMP/direct"
sed -i 's|url = "http://|url = "https://|' "$T_TMP/px.cfg" "$T_TMP/direct.cfg"
curl -s --no-progress-meter -f -H "$ACCEPT" --cacert "$CA" -x "http://127.0.0.1:$P" --parallel --parallel-max 16 --config "$T_TMP/px.cfg"
check $? "curl through the proxy: $N CONNECT tunnels + TLS (SNI and Host per name), every GET 2xx"
curl -s --no-progress-meter -f -H "$ACCEPT" --cacert "$CA" --connect-to "::127.0.0.1:$L" --parallel --parallel-max 16 --config "$T_TMP/direct.cfg"
check $? "the same $N GETs over TLS straight to the crowd's listener"
diff -rq "$T_TMP/px" "$T_TMP/direct" >/dev/null && [ "$(ls "$T_TMP/px" | wc -l)" = $N ]
check $? "all $N answers through the tunnels byte-equal to the direct ones"
grep -q '"id":"https://flood777.test/users/user1"' "$T_TMP/px/777"
check $? "each tunnelled answer is its own instance's actor (flood777.test's)"
expect_eq "$(raw "$P" nottls | cut -d' ' -f1,2)" "200 closed" "CONNECT then plain text to a TLS crowd: closed"
expect_eq "$(code -H "$ACCEPT" --cacert "$CA" -x "http://127.0.0.1:$P" https://flood5.test:8443/users/user1)" 200 "CONNECT to any port of a crowd name (flood5.test:8443) reaches the crowd"
expect_eq "$(code -x "http://127.0.0.1:$P" http://flood5.test/users/user1)" 502 "plain http:// to a crowd serving TLS only: 502 (counted failed)"
sleep 0.3
scrape "$M" "$T_TMP/m2"
expect_eq "$(metric "$T_TMP/m2" 'flood_egress_requests_total{outcome="tunnelled"}')" $((N + 2)) "metrics: $N + 2 CONNECTs tunnelled"
expect_eq "$(metric "$T_TMP/m2" 'flood_egress_tunnels_closed_total{end="not_tls"}')" 1 "metrics: the tunnel that sent no TLS counted"
expect_eq "$(metric "$T_TMP/m2" 'flood_egress_instance_connects_total{instance="flood777.test"}')" 1 "metrics: one CONNECT for flood777.test"
stop_pid "$SERVE_PID"
grep -q "^egress conserved: requests $((N + 3)) = answered 0 + failed 1 + refused 0 + malformed 0 + tunnelled $((N + 2)) .*tunnels $((N + 2)) = closed $((N + 2)) + open 0" "$TLOG"
check $? "at the end: every tunnel closed and counted, conserved" || grep egress "$TLOG"

# ---- 6. flood run --proxy: run.json's egress record, summary.md -------------------------
start_sink || exit 1
frun_bg --inbox "http://127.0.0.1:$SINK_PORT/inbox" --rate 20 --duration 3s --sign none \
    --mix create=1 --proxy 127.0.0.1:0 --no-check
for _ in $(seq 1 100); do
    RP=$(port_of "$RUN_ERR" "flood: run: proxy listening on")
    [ -n "$RP" ] && break
    sleep 0.05
done
[ -n "$RP" ]
check $? "flood run --proxy prints the proxy's port ($RP)" || cat "$RUN_ERR"
expect_eq "$(code -x "http://127.0.0.1:$RP" http://canary.example/leak)" 403 "during the run: the canary refused"
expect_eq "$(code -x "http://127.0.0.1:$RP" http://198.51.100.7/)" 403 "during the run: an address refused"
expect_eq "$(curl -s -o /dev/null -o /dev/null -w '%{http_code} ' -H "$ACCEPT" -x "http://127.0.0.1:$RP" http://flood2.test/users/user3 http://flood2.test/users/user1)" "200 200 " "during the run: two actors of flood2.test relayed on one connection"
wait "$RUN_PID"
RUN_RC=$?
expect_eq "$RUN_RC" 0 "the run exits 0"
expect_eq "$(jget '.egress.refused_by_host["canary.example"].requests')" 1 "run.json: egress.refused_by_host has the canary"
expect_eq "$(jget '.egress.refused_by_reason.address')" 1 "run.json: one refused as an address"
expect_eq "$(jget '.egress.answered')/$(jget '.egress.instances["flood2.test"] | "\(.requests) \(.connections) \(.reused) \(.open)"')" "2/2 1 1 0" \
    "run.json: two answered, for flood2.test: 2 requests on 1 connection, 1 reused, none open at the end"
expect_eq "$(jget '.egress.conservation.ok')" true "run.json: egress conserved"
expect_eq "$(jget '.config.crowd.proxy')" 127.0.0.1:0 "run.json's config records --proxy"
grep -q '^egress: proxy 127.0.0.1:' "$RUN_DIR/summary.md"
check $? "summary.md has the egress line"
grep -q '^egress detail: refused by reason not_crowd 1, address 1; plain requests 2, 1 on a connection already carrying their instance; most used: flood2.test 1 connections (most open 1, CONNECT 0, reused 1)$' "$RUN_DIR/summary.md"
check $? "summary.md's egress detail: refusals by reason, reuse, the instances used most" ||
    grep '^egress detail' "$RUN_DIR/summary.md" | sed 's/^/#   /'
grep -q 'id="egress"' "$RUN_DIR/report.html" && grep -q 'canary.example' "$RUN_DIR/report.html"
check $? "report.html has the egress box"
stop_sink

# ---- 7. bad options -------------------------------------------------------------------------
"$FLOOD" serve --proxy nonsense --state "$TEST_STATE" >/dev/null 2>"$T_TMP/bad.err"
rc=$?
expect_eq "$rc" 2 "--proxy nonsense: usage error (exit 2)"
grep -q "^flood: serve: --proxy: expected ADDR:PORT" "$T_TMP/bad.err"
check $? "... naming --proxy and the value" || cat "$T_TMP/bad.err"

"$FLOOD" capacity --inbox http://127.0.0.1:9/inbox --proxy 127.0.0.1:0 >/dev/null 2>"$T_TMP/cap.err"
rc=$?
expect_eq "$rc" 2 "flood capacity --proxy with port 0: usage error (each step listens there in turn)"
grep -q "^flood: capacity: --proxy needs a fixed port" "$T_TMP/cap.err"
check $? "... saying why" || cat "$T_TMP/cap.err"
"$FLOOD" fetch --proxy 127.0.0.1:0 --state "$TEST_STATE" http://127.0.0.1:9/x >/dev/null 2>"$T_TMP/fetch.err"
rc=$?
# flood fetch takes no --proxy: its option rows are serve's, run's and capacity's alone
expect_eq "$rc/$(grep -c -- "unknown option '--proxy'" "$T_TMP/fetch.err")" 2/1 "flood fetch --proxy: a usage error naming the option"

done_testing

#!/usr/bin/env bash
# A crowd of 10,000 instances, plain and over TLS: it starts, its resident memory (from
# /proc) stays small, and the first, a middle and the last instance answer their actor and
# WebFinger. Over TLS each is reached by its own name (curl --resolve: SNI and Host) and
# verified against the crowd's CA (--cacert): with flood%d.test a leaf per instance by SNI,
# with i%d.flood.test one wildcard leaf (*.flood.test). The CA is made once and printed
# once; a later start keeps it. Start times are printed, not judged (make bench does).
# Through the egress proxy at 10,000 instances (--proxy): the same answers, byte-equal,
# absolute-form over HTTP and CONNECT tunnels over TLS, names outside the crowd refused, and
# every request counted once by the egress record, by outcome, reason and instance.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null 2>&1 || { check 1 "curl is installed"; done_testing; exit 1; }
STATE=$T_TMP/state
N=10000

# up MODE TEMPLATE [flood serve options...]: SERVE_PID, SERVE_PORT, SERVE_LOG, START_S
up() {
    local t0 t1
    t0=$(date +%s%N)
    SERVE_LOG=$T_TMP/serve.$1.log
    : >"$SERVE_LOG"
    "$FLOOD" serve --listen 127.0.0.1:0 --state "$STATE" --instances $N --actors 10 \
        --key-pool 1 --domain "$2" --exit-after 120 "${@:3}" >"$SERVE_LOG" 2>"$SERVE_LOG.err" &
    SERVE_PID=$!
    T_PIDS="$T_PIDS $SERVE_PID"
    SERVE_PORT=""
    for _ in $(seq 1 600); do
        SERVE_PORT=$(sed -n 's/^listening on https\{0,1\}:\/\/[^ ]*:\([0-9]*\)$/\1/p' "$SERVE_LOG")
        [ -n "$SERVE_PORT" ] && break
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.05
    done
    t1=$(date +%s%N)
    START_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    [ -n "$SERVE_PORT" ] || sed 's/^/#   /' "$SERVE_LOG.err" | tail -5
    [ -n "$SERVE_PORT" ]
}

rss_mb() { awk '/^VmRSS:/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }

# answers SCHEME TEMPLATE [curl options...]: the actor and WebFinger of instances 1, N/2, N
answers() {
    local scheme=$1 tpl=$2 i h code
    shift 2
    for i in 1 $((N / 2)) $N; do
        # shellcheck disable=SC2059
        h=$(printf "$tpl" "$i")
        code=$(curl -s -o "$T_TMP/actor.json" -w '%{http_code}' --max-time 20 "$@" \
            --resolve "$h:$SERVE_PORT:127.0.0.1" -H 'Accept: application/activity+json' \
            "$scheme://$h:$SERVE_PORT/users/user10")
        expect_eq "$code $(grep -o "\"id\": *\"[^\"]*\"" "$T_TMP/actor.json" | head -1 | tr -d ' ')" \
            "200 \"id\":\"$scheme://$h/users/user10\"" "$scheme $h: the actor of user10"
        cp "$T_TMP/actor.json" "$T_TMP/direct.$i.actor"
        code=$(curl -s -o "$T_TMP/wf.json" -w '%{http_code}' --max-time 20 "$@" \
            --resolve "$h:$SERVE_PORT:127.0.0.1" \
            "$scheme://$h:$SERVE_PORT/.well-known/webfinger?resource=acct:user1@$h")
        grep -q "\"subject\": *\"acct:user1@$h\"" "$T_TMP/wf.json"
        check $((code != 200 || $?)) "$scheme $h: WebFinger of acct:user1@$h"
        cp "$T_TMP/wf.json" "$T_TMP/direct.$i.wf"
    done
}

# proxied SCHEME TEMPLATE [curl options...]: the same six GETs through the proxy on
# $PROXY_PORT (http: absolute-form; https: a CONNECT tunnel each), byte-equal to answers'
proxied() {
    local scheme=$1 tpl=$2 i h n=0
    shift 2
    for i in 1 $((N / 2)) $N; do
        # shellcheck disable=SC2059
        h=$(printf "$tpl" "$i")
        curl -s -f -o "$T_TMP/px.actor" --max-time 20 "$@" -x "http://127.0.0.1:$PROXY_PORT" \
            -H 'Accept: application/activity+json' "$scheme://$h/users/user10" &&
            cmp -s "$T_TMP/px.actor" "$T_TMP/direct.$i.actor" && n=$((n + 1))
        curl -s -f -o "$T_TMP/px.wf" --max-time 20 "$@" -x "http://127.0.0.1:$PROXY_PORT" \
            "$scheme://$h/.well-known/webfinger?resource=acct:user1@$h" &&
            cmp -s "$T_TMP/px.wf" "$T_TMP/direct.$i.wf" && n=$((n + 1))
    done
    expect_eq "$n" 6 "$scheme through the proxy: the actor and WebFinger of instances 1, $((N / 2)), $N byte-equal to direct"
}

# refusals PORT: the canary, one past the crowd, an address: each 403
refusals() {
    local c
    c=$(for u in http://canary.example/ "http://flood$((N + 1)).test/users/user1" http://10.9.8.7/; do
        curl -s -o /dev/null -w '%{http_code} ' --max-time 20 -x "http://127.0.0.1:$PROXY_PORT" "$u"
    done)
    expect_eq "$c" "403 403 403 " "the canary, flood$((N + 1)).test and an address refused 403"
}

# metric NAME{LABELS}: its value from the crowd's --metrics
metric() {
    curl -s --max-time 20 "http://127.0.0.1:$METRICS_PORT/metrics" | awk -v k="$1" '$1 == k {print $2}'
}
# ports_of LOG: PROXY_PORT and METRICS_PORT from flood serve's lines
ports_of() {
    PROXY_PORT=$(sed -n 's|^proxy listening on http://[^ ]*:\([0-9]*\)$|\1|p' "$1")
    METRICS_PORT=$(sed -n 's|^metrics on http://[^ ]*:\([0-9]*\)/metrics$|\1|p' "$1")
    [ -n "$PROXY_PORT" ] && [ -n "$METRICS_PORT" ]
}

# the crowd's key made first, so the starts below time the crowd, not RSA
"$FLOOD" serve --listen 127.0.0.1:0 --state "$STATE" --instances 1 --key-pool 1 --quiet \
    --exit-after 1 >/dev/null 2>&1
check $? "the state folder's key is made"

# 1. plain HTTP, with the egress proxy
up plain 'flood%d.test' --proxy 127.0.0.1:0 --metrics 127.0.0.1:0
check $? "$N instances over HTTP start, with the proxy (${START_S} s)"
rss=$(rss_mb "$SERVE_PID")
echo "# plain: start ${START_S} s, resident ${rss} MB"
[ "$rss" -lt 200 ]
check $? "resident memory under 200 MB (${rss} MB)"
answers http 'flood%d.test'
ports_of "$SERVE_LOG"
check $? "the proxy's and the metrics' ports printed"
proxied http 'flood%d.test'
refusals
# 9 requests on 9 connections: 6 relayed and answered 2xx, 3 refused (2 not the crowd's, 1
# an address); each instance's two requests on its own connections
expect_eq "$(metric 'flood_egress_requests_total{outcome="answered"}')/$(metric 'flood_egress_requests_total{outcome="refused"}')/$(metric 'flood_egress_refused_total{reason="not_crowd"}')/$(metric 'flood_egress_refused_total{reason="address"}')" \
    "6/3/2/1" "metrics: answered 6, refused 3 (not the crowd's 2, an address 1)"
expect_eq "$(metric "flood_egress_instance_requests_total{instance=\"flood$N.test\"}")/$(metric "flood_egress_instance_requests_total{instance=\"flood$((N / 2)).test\"}")/$(metric 'flood_egress_instance_requests_total{instance="flood1.test"}')" \
    2/2/2 "metrics: two requests for each of flood1, flood$((N / 2)) and flood$N.test"
stop_pid "$SERVE_PID"
grep -q "^egress conserved: requests 9 = answered 6 + failed 0 + refused 3 + malformed 0 + tunnelled 0 + in flight 0; tunnels 0 = closed 0 + open 0; connections 9 = closed 9 + open 0" "$SERVE_LOG.err"
check $? "at the end: 9 requests = 6 answered + 3 refused, 9 connections closed: conserved" ||
    grep '^egress' "$SERVE_LOG.err" | sed 's/^/#   /'

# 2. TLS, names sharing no parent: a leaf per instance by SNI; the CA made and printed once;
# the proxy's CONNECT tunnels into the TLS listener
up sni 'flood%d.test' --tls --proxy 127.0.0.1:0 --metrics 127.0.0.1:0
check $? "$N instances over TLS (flood%d.test) start, with the proxy (${START_S} s)"
rss=$(rss_mb "$SERVE_PID")
echo "# tls, a leaf per instance: start ${START_S} s, resident ${rss} MB"
[ "$rss" -lt 200 ]
check $? "resident memory under 200 MB (${rss} MB)"
CA=$(sed -n 's/^tls: CA certificate //p' "$SERVE_LOG")
expect_eq "$(grep -c '^tls: CA certificate ' "$SERVE_LOG")/$CA" "1/$STATE/ca.pem" \
    "the CA's path printed once"
grep -q 'a leaf per instance' "$SERVE_LOG.err"
check $? "it says: a leaf per instance, made on first use by SNI"
answers https 'flood%d.test' --cacert "$CA"
ports_of "$SERVE_LOG"
check $? "the proxy's and the metrics' ports printed"
proxied https 'flood%d.test' --cacert "$CA"
refusals
expect_eq "$(metric 'flood_egress_requests_total{outcome="tunnelled"}')/$(metric 'flood_egress_requests_total{outcome="refused"}')/$(metric "flood_egress_instance_connects_total{instance=\"flood$N.test\"}")/$(metric "flood_egress_instance_connects_total{instance=\"flood$((N / 2)).test\"}")/$(metric 'flood_egress_instance_connects_total{instance="flood1.test"}')" \
    "6/3/2/2/2" "metrics: 6 CONNECTs tunnelled (2 for each of flood1, flood$((N / 2)), flood$N.test), 3 refused"
h=flood$((N / 2)).test
openssl x509 -in "$STATE/leaves/$h.pem" -noout -ext subjectAltName 2>/dev/null |
    grep -q "^ *DNS:$h\$"
check $? "$h's leaf names $h alone (STATE/leaves/$h.pem)"
size=$(openssl x509 -in "$STATE/leaves/$h.pem" -outform der 2>/dev/null | wc -c)
[ "$size" -gt 0 ] && [ "$size" -lt 2000 ]
check $? "a small leaf ($size bytes DER), not one naming every instance"
curl -s -o /dev/null --max-time 20 --cacert "$CA" --resolve "flood$((N + 1)).test:$SERVE_PORT:127.0.0.1" \
    "https://flood$((N + 1)).test:$SERVE_PORT/"
check $((! $?)) "a name past the crowd gets no certificate for it (the handshake fails)"
ca_sum=$(sha256sum "$STATE/ca.pem")
stop_pid "$SERVE_PID"
grep -q "^egress conserved: requests 9 = answered 0 + failed 0 + refused 3 + malformed 0 + tunnelled 6 + in flight 0; tunnels 6 = closed 6 + open 0; connections 9 = closed 9 + open 0" "$SERVE_LOG.err"
check $? "at the end: 9 requests = 6 tunnelled + 3 refused, every tunnel and connection closed: conserved" ||
    grep '^egress' "$SERVE_LOG.err" | sed 's/^/#   /'

# 3. TLS, a template under one parent: one wildcard leaf, the same CA
up wild 'i%d.flood.test' --tls
check $? "$N instances over TLS (i%d.flood.test) start (${START_S} s)"
rss=$(rss_mb "$SERVE_PID")
echo "# tls, a wildcard leaf: start ${START_S} s, resident ${rss} MB"
[ "$rss" -lt 200 ]
check $? "resident memory under 200 MB (${rss} MB)"
expect_eq "$(sha256sum "$STATE/ca.pem")" "$ca_sum" "the CA is kept across starts"
grep -q 'one wildcard leaf, \*\.flood\.test' "$SERVE_LOG.err"
check $? "it says: one wildcard leaf, *.flood.test"
answers https 'i%d.flood.test' --cacert "$CA"
stop_pid "$SERVE_PID"

done_testing

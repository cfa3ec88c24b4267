#!/usr/bin/env bash
# flood serve with curl: every document of several instances, the limits and the bad input.
. "$(dirname "$0")/lib.sh"

start_serve || { check 1 "flood serve starts"; done_testing; exit 1; }
check 0 "flood serve starts on port 0 and prints its address"
base() { echo "http://127.0.0.1:$SERVE_PORT"; }
AP='Accept: application/activity+json'

# get HOST PATH [curl args]: body to $T_TMP/body, headers to $T_TMP/hdr, prints the status
get() {
    local host=$1 path=$2
    shift 2
    curl -s -o "$T_TMP/body" -D "$T_TMP/hdr" -w '%{http_code}' -H "Host: $host" "$@" "$(base)$path"
}
ctype() { sed -n 's/^[Cc]ontent-[Tt]ype: *\([^;\r]*\).*/\1/p' "$T_TMP/hdr" | head -1; }

for i in 1 7 20; do
    h=flood$i.test
    expect_eq "$(get $h "/.well-known/webfinger?resource=acct:user3@$h")" 200 "$h webfinger by acct"
    expect_eq "$(ctype)" application/jrd+json "$h webfinger content type"
    expect_eq "$(jq -r .subject "$T_TMP/body")" "acct:user3@$h" "$h webfinger subject"
    expect_eq "$(jq -r '.links[] | select(.rel=="self") | .href' "$T_TMP/body")" \
        "http://$h/users/user3" "$h webfinger self link is the actor id"
    expect_eq "$(get $h "/.well-known/webfinger?resource=http%3A%2F%2F$h%2Fusers%2Fuser10")" 200 \
        "$h webfinger by actor URL"

    expect_eq "$(get $h /users/user3 -H "$AP")" 200 "$h actor"
    expect_eq "$(ctype)" application/activity+json "$h actor content type"
    grep -qi '^vary: *accept' "$T_TMP/hdr"
    check $? "$h actor has Vary: Accept"
    expect_eq "$(jq -r .id "$T_TMP/body")" "http://$h/users/user3" "$h actor id equals its URL"
    expect_eq "$(jq -r .publicKey.owner "$T_TMP/body")" "http://$h/users/user3" "$h key owner"
    expect_eq "$(jq -r .publicKey.id "$T_TMP/body")" "http://$h/users/user3#main-key" "$h key id"
    expect_eq "$(jq -r '.publicKey | type' "$T_TMP/body")" object "$h publicKey is one object"
    expect_eq "$(jq -r .endpoints.sharedInbox "$T_TMP/body")" "http://$h/inbox" "$h shared inbox"
    jq -r .publicKey.publicKeyPem "$T_TMP/body" >"$T_TMP/pub.pem"
    openssl pkey -pubin -in "$T_TMP/pub.pem" -noout -text 2>/dev/null | grep -q '2048 bit'
    check $? "$h key is an RSA-2048 public key openssl reads"

    expect_eq "$(get $h /users/user3 -H 'Accept: application/ld+json; profile="https://www.w3.org/ns/activitystreams"')" \
        200 "$h actor for ld+json with profile"
    expect_eq "$(get $h /actor -H "$AP")" 200 "$h instance actor"
    expect_eq "$(jq -r .type "$T_TMP/body")" Application "$h instance actor is an Application"
    for c in outbox followers following; do
        expect_eq "$(get $h /users/user3/$c -H "$AP")" 200 "$h $c"
        expect_eq "$(jq -r .type "$T_TMP/body")" OrderedCollection "$h $c is an OrderedCollection"
        expect_eq "$(jq -r .id "$T_TMP/body")" "http://$h/users/user3/$c" "$h $c id"
    done
    expect_eq "$(get $h /.well-known/host-meta)" 200 "$h host-meta"
    grep -q "http://$h/.well-known/webfinger?resource={uri}" "$T_TMP/body"
    check $? "$h host-meta template"
    expect_eq "$(get $h /.well-known/nodeinfo)" 200 "$h nodeinfo discovery"
    for v in 2.0 2.1; do
        expect_eq "$(get $h /nodeinfo/$v)" 200 "$h nodeinfo $v"
        expect_eq "$(ctype)" application/json "$h nodeinfo $v content type"
        expect_eq "$(jq -r .version "$T_TMP/body")" $v "$h nodeinfo $v version"
        expect_eq "$(jq -r .software.name "$T_TMP/body")" flood "$h nodeinfo $v software"
    done
    expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $h" -H 'Content-Type: application/activity+json' \
        --data '{"type":"Create","actor":"http://x.test/u"}' "$(base)/users/user1/inbox")" 401 \
        "$h personal inbox refuses an unsigned delivery"
done

# Bad input: every answer a clear 4xx.
expect_eq "$(get flood21.test /users/user1 -H "$AP")" 421 "instance 21 of 20 is an unknown host"
expect_eq "$(get example.org /users/user1 -H "$AP")" 421 "foreign host gets 421"
grep -q "not one of this crowd" "$T_TMP/body"
check $? "unknown host answer says why"
expect_eq "$(get flood1.test /users/user11 -H "$AP")" 404 "actor 11 of 10 is 404"
expect_eq "$(get flood1.test /nope)" 404 "unknown path is 404"
expect_eq "$(get flood1.test '/.well-known/webfinger')" 400 "webfinger without resource is 400"
expect_eq "$(get flood1.test '/.well-known/webfinger?resource=acct:nobody')" 400 "malformed acct is 400"
expect_eq "$(get flood1.test '/.well-known/webfinger?resource=acct:user1@flood2.test')" 404 \
    "acct of another instance is 404"
expect_eq "$(get flood1.test /users/user1 -X DELETE)" 405 "DELETE is 405"
expect_eq "$(get flood1.test /users/user1 -H 'Accept: text/html')" 406 "HTML only is 406"
head -c 1100000 /dev/zero | tr '\0' 'a' >"$T_TMP/big"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: flood1.test' \
    -H 'Content-Type: application/activity+json' --data-binary @"$T_TMP/big" "$(base)/inbox")" 413 \
    "a body over 1 MiB is 413"
expect_eq "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: flood1.test' \
    -H "X-Big: $(head -c 70000 /dev/zero | tr '\0' b)" "$(base)/users/user1")" 431 \
    "huge headers are refused"
# A slow sender is cut off by the idle timeout; meanwhile the server keeps serving.
(exec 3<>/dev/tcp/127.0.0.1/"$SERVE_PORT"; printf 'GET /users/user1 HTTP/1.1\r\nHo' >&3; sleep 3) &
slow=$!
expect_eq "$(get flood2.test /users/user2 -H "$AP")" 200 "a slow client does not block others"
kill $slow 2>/dev/null; wait $slow 2>/dev/null
kill -0 "$SERVE_PID"
check $? "the server survived the bad input"

# Keys kept in the state folder, mode 0600, and reused.
mode=$(stat -c %a "$TEST_STATE"/keys/rsa-2048/000001.pem)
expect_eq "$mode" 600 "key files are mode 0600"
pem1=$(jq -r .publicKey.publicKeyPem "$T_TMP/body" 2>/dev/null)
get flood1.test /users/user5 -H "$AP" >/dev/null
k1=$(jq -r .publicKey.publicKeyPem "$T_TMP/body")
stop_pid "$SERVE_PID"
start_serve || check 1 "second start"
get flood1.test /users/user5 -H "$AP" >/dev/null
k2=$(jq -r .publicKey.publicKeyPem "$T_TMP/body")
expect_eq "$k2" "$k1" "keys survive a restart"
stop_pid "$SERVE_PID"

# Public port and scheme in the URLs; listening address apart.
start_serve --public-port 8443 --scheme https --instances 3 --actors 2 || check 1 "start with public port"
expect_eq "$(get flood3.test /users/user2 -H "$AP")" 200 "public-port crowd serves"
expect_eq "$(jq -r .id "$T_TMP/body")" "https://flood3.test:8443/users/user2" "ids carry scheme and public port"
expect_eq "$(get flood3.test '/.well-known/webfinger?resource=acct:user2@flood3.test')" 200 \
    "webfinger acct without the port"
expect_eq "$(get flood3.test /users/user3 -H "$AP")" 404 "actors beyond --actors are 404"
stop_pid "$SERVE_PID"

# TLS: a CA and a leaf naming every instance; curl trusts the CA.
start_serve --tls --instances 5 --actors 2 || check 1 "start with --tls"
ca=$(sed -n 's/^tls: CA certificate //p' "$SERVE_LOG")
test -f "$ca"
check $? "--tls prints the CA path"
code=$(curl -s -o "$T_TMP/body" -w '%{http_code}' --cacert "$ca" \
    --resolve "flood4.test:$SERVE_PORT:127.0.0.1" -H "$AP" "https://flood4.test:$SERVE_PORT/users/user1")
expect_eq "$code" 200 "HTTPS with the crowd's CA verifies"
expect_eq "$(jq -r .id "$T_TMP/body")" "https://flood4.test/users/user1" "TLS crowd ids are https"
# An answer is one TLS record (its head and body written together), as openssl s_client
# counts the records it reads: two requests on one connection, two records after the
# handshake's Finished.
req='GET /users/user1 HTTP/1.1\r\nHost: flood4.test\r\nAccept: application/activity+json\r\n\r\n'
{ printf "$req"; sleep 0.3; printf "$req"; sleep 0.5; } |
    timeout 10 openssl s_client -connect "127.0.0.1:$SERVE_PORT" -servername flood4.test -msg \
        -ign_eof >"$T_TMP/sclient" 2>&1
expect_eq "$(grep -c '^HTTP/1.1 200 OK' "$T_TMP/sclient")" 2 "s_client: two answers on one connection"
expect_eq "$(awk '/^>>> .*Finished/ { f = 1; next } f && /^<<< .*RecordHeader/ { n++ } END { print n + 0 }' \
    "$T_TMP/sclient")" 2 "s_client: each answer came as one TLS record"
# A client pipelining 3,000 requests that reads nothing for 1.5 s: the answers fill its
# socket, then every one arrives, whole and in order, and no connection is cut.
python3 "$ROOT/tests/tools/tls_pipeline.py" "$SERVE_PORT" flood4.test /users/user1 3000 1.5 \
    >"$T_TMP/pipeline" 2>&1
expect_eq "$(head -1 "$T_TMP/pipeline")" "answers 3000 of 3000" "pipelined over TLS: every answer"
expect_eq "$(sed -n 2p "$T_TMP/pipeline")" "3000 HTTP/1.1 200 OK" "pipelined over TLS: all 200"
stop_pid "$SERVE_PID"
grep -q "connections cut" "$SERVE_LOG"
check $((!$?)) "pipelined over TLS: no answer cut off"

# A corked answer that finds no room (GnuTLS says EAGAIN; a preloaded shim says it here, as
# a full socket would): the answer waits, and leaves when room comes within a second; past
# a second its connection is cut and counted, and the next connection is served as usual.
# The first answer finds no room for 300 ms, the second for 5 s, the third finds room.
${CC:-cc} -shared -fPIC -o "$T_TMP/uncork_stall.so" "$ROOT/tests/shims/uncork_stall.c" -ldl
check $? "the uncork shim builds"
UNCORK_STALLS=300,5000 LD_PRELOAD="$T_TMP/uncork_stall.so" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    start_serve --tls --instances 2 --actors 2 || check 1 "start with --tls and the shim"
ca=$(sed -n 's/^tls: CA certificate //p' "$SERVE_LOG")
tget() {
    curl -s -o "$T_TMP/body" -w '%{http_code} %{time_total}' --max-time 10 --cacert "$ca" \
        --resolve "flood2.test:$SERVE_PORT:127.0.0.1" -H "$AP" "https://flood2.test:$SERVE_PORT/users/user1"
}
read -r code secs <<<"$(tget)"
expect_eq "$code" 200 "an answer without room for 300 ms still arrives"
expect_eq "$(jq -r .id "$T_TMP/body")" "https://flood2.test/users/user1" "and whole"
awk -v s="$secs" 'BEGIN { exit !(s >= 0.3) }'
check $? "and no sooner than room came ($secs s)"
read -r code secs <<<"$(tget)"
expect_eq "$code" 000 "an answer without room for a second: its connection is cut, no answer"
awk -v s="$secs" 'BEGIN { exit !(s >= 0.9 && s < 4) }'
check $? "cut after about a second, not when room would come ($secs s)"
read -r code secs <<<"$(tget)"
expect_eq "$code" 200 "the next connection is served as usual"
stop_pid "$SERVE_PID"
expect_eq "$(grep -c 'connections cut' "$SERVE_LOG")" 1 "flood serve says the cut, even with --quiet"
grep -q "^serve: 1 TLS answers found their socket full for a second: connections cut" "$SERVE_LOG"
check $? "and counts one"

# flood actors and bad options.
expect_eq "$("$FLOOD" actors | wc -l)" 200 "flood actors prints 200 actors by default"
expect_eq "$("$FLOOD" actors --instances 2 --actors 3 | tail -1)" "acct:user3@flood2.test" "flood actors format"
"$FLOOD" serve --instances 0 >/dev/null 2>"$T_TMP/err"
expect_eq "$?" 2 "--instances 0 is a usage error"
grep -q "^flood: serve: --instances" "$T_TMP/err"
check $? "usage error names the option"
"$FLOOD" serve --domain 'nodigits.test' --state "$TEST_STATE" >/dev/null 2>&1
expect_eq "$?" 2 "a template without %d is a usage error"
"$FLOOD" serve --listen nonsense --state "$TEST_STATE" >/dev/null 2>"$T_TMP/err"
expect_eq "$?" 2 "a bad --listen is a usage error"
"$FLOOD" serve --bogus >/dev/null 2>&1
expect_eq "$?" 2 "an unknown option is a usage error"
"$FLOOD" nonsense >/dev/null 2>&1
expect_eq "$?" 2 "an unknown command is a usage error"

done_testing

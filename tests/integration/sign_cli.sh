#!/usr/bin/env bash
# tests/integration/sign_cli.sh: `flood sign` and `flood verify` through the binary.
# Keys come from openssl(1). Round trips in both dialects with RSA and Ed25519, tampered
# body / path / date / key refused with the right verdict, usage errors exit 2, and the
# output of `flood sign` sent by curl to a loopback listener verifies as received.
#   FLOOD=path/to/flood bash tests/integration/sign_cli.sh
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FLOOD=${FLOOD:-$ROOT/build/flood}
TMP=$(mktemp -d)
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for p in $PIDS; do wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
N=0
FAILED=0
check() { # check STATUS WHAT
    N=$((N + 1))
    if [ "$1" -eq 0 ]; then echo "ok $N - $2"; else
        echo "not ok $N - $2"
        FAILED=$((FAILED + 1))
    fi
}

if ! "$FLOOD" sign --help >/dev/null 2>&1; then
    echo "ok 1 - sign_cli: $FLOOD has no sign command yet # SKIP"
    exit 0
fi

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/rsa.pem" 2>/dev/null
openssl pkey -in "$TMP/rsa.pem" -pubout -out "$TMP/rsa.pub"
openssl genpkey -algorithm ED25519 -out "$TMP/ed.pem"
openssl pkey -in "$TMP/ed.pem" -pubout -out "$TMP/ed.pub"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/other.pem" 2>/dev/null
openssl pkey -in "$TMP/other.pem" -pubout -out "$TMP/other.pub"
printf '{"type":"Create","id":"https://a.test/c/1"}' >"$TMP/body"
printf '{"type":"Create","id":"https://a.test/c/2"}' >"$TMP/body2"
URL='https://b.test/users/bob/inbox?x=1'
KID='https://a.test/users/alice#main-key'
T=1700000000

# verify_as WANT_RC WANT_TEXT WHAT ARGS...: run flood verify, check exit code and output
verify_as() {
    local want_rc=$1 want=$2 what=$3
    shift 3
    local out rc
    out=$("$FLOOD" verify "$@" 2>&1)
    rc=$?
    if [ "$rc" -eq "$want_rc" ] && printf '%s' "$out" | grep -q -- "$want"; then check 0 "$what"; else
        check 1 "$what"
        echo "#   exit $rc, output: $out"
    fi
}

for dialect in cavage rfc9421; do
    for k in rsa ed; do
        tag="$dialect/$k"
        "$FLOOD" sign --key "$TMP/$k.pem" --key-id "$KID" --method POST --url "$URL" \
            --body "$TMP/body" --dialect "$dialect" --time $T >"$TMP/h" 2>"$TMP/err"
        check $? "$tag: sign a POST"
        verify_as 0 "^ok $dialect keyId=$KID\$" "$tag: verify the POST" --key "$TMP/$k.pub" \
            --method POST --url "$URL" --body "$TMP/body" --headers-file "$TMP/h" --now $((T + 30))
        verify_as 0 "^ok $dialect" "$tag: verify with the private key file" --key "$TMP/$k.pem" \
            --method POST --url "$URL" --body "$TMP/body" --headers-file "$TMP/h" --now $T
        verify_as 1 "flood: verify: digest: " "$tag: tampered body -> digest" --key "$TMP/$k.pub" \
            --method POST --url "$URL" --body "$TMP/body2" --headers-file "$TMP/h" --now $T
        verify_as 1 "flood: verify: mismatch: " "$tag: other path -> mismatch" --key "$TMP/$k.pub" \
            --method POST --url "https://b.test/users/eve/inbox?x=1" --body "$TMP/body" \
            --headers-file "$TMP/h" --now $T
        verify_as 1 "flood: verify: mismatch: \|flood: verify: algorithm: " \
            "$tag: another key -> mismatch" --key "$TMP/other.pub" --method POST --url "$URL" \
            --body "$TMP/body" --headers-file "$TMP/h" --now $T
        verify_as 1 "flood: verify: date: " "$tag: two hours later -> date" --key "$TMP/$k.pub" \
            --method POST --url "$URL" --body "$TMP/body" --headers-file "$TMP/h" --now $((T + 7200))
        "$FLOOD" sign --key "$TMP/$k.pem" --key-id "$KID" --method GET \
            --url "https://b.test/users/bob/outbox?page=true" --dialect "$dialect" \
            --date 'Tue, 14 Nov 2023 22:13:20 GMT' >"$TMP/g"
        check $? "$tag: sign a GET with --date"
        args=()
        while IFS= read -r line; do args+=(--header "$line"); done <"$TMP/g"
        verify_as 0 "^ok $dialect" "$tag: verify the GET given as --header" --key "$TMP/$k.pub" \
            --method GET --url "https://b.test/users/bob/outbox?page=true" "${args[@]}" --now $T
    done
done

"$FLOOD" sign --key "$TMP/rsa.pem" --key-id "$KID" --method POST --url "$URL" --body "$TMP/body" \
    --time $T >"$TMP/h"
want_digest="SHA-256=$(openssl dgst -sha256 -binary "$TMP/body" | base64)"
grep -qx "Digest: $want_digest" "$TMP/h"
check $? "cavage Digest equals openssl's SHA-256 of the body"
grep -qx 'Date: Tue, 14 Nov 2023 22:13:20 GMT' "$TMP/h"
check $? "Date is the IMF-fixdate of --time"
grep -q '^Signature: keyId="'"$KID"'",algorithm="rsa-sha256",headers="(request-target) host date digest content-type",signature="' "$TMP/h"
check $? "cavage Signature header as servers expect it"

"$FLOOD" sign --key "$TMP/rsa.pem" --method POST --url "$URL" >/dev/null 2>&1
check $(($? == 2 ? 0 : 1)) "sign without --key-id: exit 2"
"$FLOOD" sign --key "$TMP/rsa.pem" --key-id k --method GET --url "not a url" >/dev/null 2>&1
check $(($? == 2 ? 0 : 1)) "sign with a bad URL: exit 2"
"$FLOOD" sign --key "$TMP/rsa.pub" --key-id k --method GET --url "$URL" 2>"$TMP/err" >/dev/null
rc=$?
check $((rc == 1 ? 0 : 1)) "sign with a public key: exit 1"
grep -q '^flood: sign: ' "$TMP/err"
check $? "sign errors read 'flood: sign: ...'"
"$FLOOD" verify --key "$TMP/rsa.pub" --method GET --url "$URL" >/dev/null 2>"$TMP/err"
check $(($? == 1 ? 0 : 1)) "verify an unsigned request: exit 1"
grep -q '^flood: verify: missing: ' "$TMP/err"
check $? "unsigned request -> missing"
"$FLOOD" verify --key "$TMP/rsa.pub" --method GET --url "$URL" --window x >/dev/null 2>&1
check $(($? == 2 ? 0 : 1)) "verify with a bad --window: exit 2"

# curl-able: send the signed POST with curl to a loopback listener, verify what arrived.
if command -v python3 >/dev/null && command -v curl >/dev/null; then
    cat >"$TMP/listen.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with open(sys.argv[1] + "/got-headers", "w") as f:
            for k, v in self.headers.items():
                f.write("%s: %s\n" % (k, v))
        with open(sys.argv[1] + "/got-body", "wb") as f:
            f.write(body)
        with open(sys.argv[1] + "/got-path", "w") as f:
            f.write(self.path)
        self.send_response(202)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.timeout = 20
s.handle_request()
PY
    timeout 30 python3 "$TMP/listen.py" "$TMP" >"$TMP/port" &
    PIDS="$PIDS $!"
    for _ in $(seq 1 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
    port=$(cat "$TMP/port")
    "$FLOOD" sign --key "$TMP/ed.pem" --key-id "$KID" --method POST \
        --url "http://b.test:$port/inbox" --body "$TMP/body" --dialect rfc9421 >"$TMP/h"
    cargs=()
    while IFS= read -r line; do cargs+=(-H "$line"); done <"$TMP/h"
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --connect-to "b.test:$port:127.0.0.1:$port" \
        "${cargs[@]}" --data-binary @"$TMP/body" "http://b.test:$port/inbox")
    expect=202
    check $([ "$code" = "$expect" ] && echo 0 || echo 1) "curl sends the signed POST (HTTP $code)"
    if [ -f "$TMP/got-headers" ]; then
        verify_as 0 "^ok rfc9421" "the request as received verifies" --key "$TMP/ed.pub" \
            --method POST --url "http://b.test:$port$(cat "$TMP/got-path")" \
            --body "$TMP/got-body" --headers-file "$TMP/got-headers"
    else
        check 1 "the request as received verifies (nothing received)"
    fi
fi

echo "$((N - FAILED)) passed, $FAILED failed"
[ "$FAILED" -eq 0 ]

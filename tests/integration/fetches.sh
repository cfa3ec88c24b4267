#!/usr/bin/env bash
# Every fetch the target makes back, counted: `flood serve --metrics` answers a known set of
# GETs (some twice) and its flood_fetches_total, flood_fetch_bytes_total and
# flood_fetch_repeats_total by kind match; a 20 MB media URL streams with its exact
# Content-Length and bytes and decodes as a PNG; a kind's fault slows that kind only.
. "$(dirname "$0")/lib.sh"

for tool in curl python3; do
    command -v "$tool" >/dev/null 2>&1 || { check 1 "$tool is installed"; done_testing; exit 1; }
done

start_serve --instances 2 --actors 3 --metrics 127.0.0.1:0 --fault flood2:delay=700ms,scope=media
check $? "flood serve starts with --metrics"
MURL=""
for _ in $(seq 1 50); do
    MURL=$(sed -n 's/^metrics on \(http:[^ ]*\)$/\1/p' "$SERVE_LOG" | head -1)
    [ -n "$MURL" ] && break
    sleep 0.1
done
B=http://127.0.0.1:$SERVE_PORT
H1="Host: flood1.test"

# get PATH [HOST]: the body into $T_TMP/body, prints "STATUS SIZE CONTENT-TYPE"
get() {
    curl -s -o "$T_TMP/body" -H "Host: ${2:-flood1.test}" \
        -w '%{http_code} %{size_download} %{content_type}' "$B$1"
}

# the media URLs the crowd makes itself (webfinger/media.h forms)
AV=/users/user1/avatar.png
HD=/users/user2/header.png
EM=/emoji/blobcat.png
PG=/pages/42
KEY=/users/user1/main-key
ACT=/users/user1
M1=/media/5-2981x2235-20000000.png
M2=/media/7-1x1-72.png

read -r st sz ct <<<"$(get "$AV")"
expect_eq "$st $sz $ct" "200 120000 image/png" "avatar: 200, 120000 bytes, image/png"
# (the colour and the stream are checked by test_wf_png; here: a PNG of the right size)
python3 - "$T_TMP/body" <<'PY'
import sys, struct, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
w, h = struct.unpack(">II", d[16:24])
assert (w, h) == (199, 199), (w, h)
PY
check $? "avatar: a 199x199 PNG"
read -r st sz ct <<<"$(get "$HD")"
expect_eq "$st $sz" "200 300000" "header: 200, 300000 bytes"
read -r st sz ct <<<"$(get "$EM")"
expect_eq "$st $sz $ct" "200 12420 image/png" "emoji: 200, a 64x64 PNG"
read -r st sz ct <<<"$(get "$PG")"
expect_eq "$st $ct" "200 text/html; charset=utf-8" "page: 200 text/html; charset=utf-8"
grep -q '<meta property="og:image" content="http://flood1.test/media/' "$T_TMP/body"
check $? "page: og:image on the same instance"
read -r st sz ct <<<"$(get "$KEY")"
expect_eq "$st $ct" "200 application/activity+json" "key: 200 activity+json"
read -r st sz ct <<<"$(get "$ACT")"
expect_eq "$st" 200 "actor: 200"
grep -q '"icon":{"type":"Image","mediaType":"image/png","url":"http://flood1.test/users/user1/avatar.png"}' "$T_TMP/body"
check $? "actor: icon names its avatar"

# the 20 MB image: exact Content-Length, exact bytes, a valid PNG, no Range or HEAD needed
curl -s -D "$T_TMP/headers" -o "$T_TMP/big.png" -H "$H1" "$B$M1"
grep -qi '^content-length: 20000000' "$T_TMP/headers"
check $? "20 MB media: Content-Length 20000000"
expect_eq "$(stat -c %s "$T_TMP/big.png")" 20000000 "20 MB media: 20000000 bytes received"
python3 - "$T_TMP/big.png" <<'PY'
import sys, struct, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(d):
    n, = struct.unpack(">I", d[pos:pos+4]); kind = d[pos+4:pos+8]; body = d[pos+8:pos+8+n]
    assert zlib.crc32(kind + body) == struct.unpack(">I", d[pos+8+n:pos+12+n])[0], kind
    if kind == b"IHDR": assert struct.unpack(">II", body[:8]) == (2981, 2235)
    if kind == b"IDAT": idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
assert len(raw) == 2235 * (1 + 3 * 2981)
PY
check $? "20 MB media: decodes (CRCs, zlib, dimensions 2981x2235)"

# repeats: the small media twice, the actor a second time (GET), the key by HEAD
get "$M2" >/dev/null
get "$M2" >/dev/null
get "$ACT" >/dev/null
curl -s -o /dev/null -I -H "$H1" "$B$KEY"
# malformed names are 404, counted as other (no route)
for bad in /media/5-1x1-71.png /emoji/Bad.png /pages/01 /users/user1/avatar.jpg; do
    read -r st sz ct <<<"$(get "$bad")"
    expect_eq "$st" 404 "malformed $bad: 404"
done
# the same path on another host is another URL
get "$M2" flood2.test >/dev/null

metric() {
    curl -s "$MURL" | awk -v k="$1" '$1 == k {print $2}'
}
sleep 0.3
expect_eq "$(metric 'flood_fetches_total{kind="media"}')" 4 "metrics: media 4 (20 MB once, small twice, other host once)"
expect_eq "$(metric 'flood_fetch_repeats_total{kind="media"}')" 1 "metrics: media repeats 1"
expect_eq "$(metric 'flood_fetch_bytes_total{kind="media"}')" $((20000000 + 72 * 3)) "metrics: media bytes exact"
expect_eq "$(metric 'flood_fetches_total{kind="avatar"}')" 2 "metrics: avatar 2 (avatar and header)"
expect_eq "$(metric 'flood_fetch_bytes_total{kind="avatar"}')" 420000 "metrics: avatar bytes 420000"
expect_eq "$(metric 'flood_fetches_total{kind="actor"}')" 2 "metrics: actor 2"
expect_eq "$(metric 'flood_fetch_repeats_total{kind="actor"}')" 1 "metrics: actor repeats 1"
expect_eq "$(metric 'flood_fetches_total{kind="key"}')" 2 "metrics: key 2 (GET and HEAD)"
expect_eq "$(metric 'flood_fetch_repeats_total{kind="key"}')" 1 "metrics: key repeats 1"
expect_eq "$(metric 'flood_fetches_total{kind="emoji"}')" 1 "metrics: emoji 1"
expect_eq "$(metric 'flood_fetch_bytes_total{kind="emoji"}')" 12420 "metrics: emoji bytes"
expect_eq "$(metric 'flood_fetches_total{kind="link"}')" 1 "metrics: link 1"
expect_eq "$(metric 'flood_fetches_total{kind="other"}')" 4 "metrics: the four malformed names are other"
expect_eq "$(metric 'flood_fetches_total{kind="webfinger"}')" 0 "metrics: webfinger 0"

# a fault aimed at media slows flood2's media only
t0=$(date +%s%N)
get "$M2" flood2.test >/dev/null
t1=$(date +%s%N)
get /users/user1 flood2.test >/dev/null
t2=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -ge 650 ]
check $? "scope=media: flood2's media delayed ($(((t1 - t0) / 1000000)) ms)"
[ $(((t2 - t1) / 1000000)) -lt 500 ]
check $? "scope=media: flood2's actor not delayed ($(((t2 - t1) / 1000000)) ms)"

stop_pid "$SERVE_PID"
done_testing

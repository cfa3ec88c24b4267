#!/usr/bin/env bash
# `flood check` against the reference target (tests/target, Fedify): with signature
# verification on, every step of the default scenario passes, or is skipped or recorded
# (a dialect the target refuses) with a stated reason, and the exit code is 0; against the
# same target started with --lax (verification off) the five refusal steps fail, because
# the target processes what it should have refused, and the exit code is 1. Without a
# token a refusal step sends a bad Follow beside a signed twin: the lax target's Accept of
# the bad one fails it, and a target that answers 202 and verifies later (--verify-later,
# as Misskey does) passes it, the twin's Accept proving it was processing. A scenario with a
# syntax error is refused with its file name and line number (exit 2). A target that answers
# 202 to everything and drops it gets "deferred" for the refusal steps, with a token or not.
set -u
cd "$(dirname "$0")/../.."
. tests/tools/target_lib.sh

dir=$(mktemp -d)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT

# A syntax error needs no target: it is refused before anything starts.
"$FLOOD" check --persona acct:alice@target.test --scenario fixtures/scenarios/bad-syntax.flood \
    >"$dir/syn.out" 2>"$dir/syn.err"
rc=$?
check '[ $rc -eq 2 ]' "a scenario with a syntax error exits 2 (got $rc)"
check 'grep -q "bad-syntax.flood:5: unknown step '"'"'folow'"'"'" "$dir/syn.err"' \
    "the error names the file and line 5: $(head -1 "$dir/syn.err")"
"$FLOOD" check --scenario fixtures/scenarios/default.flood >/dev/null 2>"$dir/use.err"
rc=$?
check '[ $rc -eq 2 ] && grep -q "persona is required" "$dir/use.err"' "no --persona: exit 2"

# The target must know the crowd's address when it starts, and flood check starts the
# crowd itself: pick a port for each crowd (pick_port), start the targets on port 0.
start_target() { # NAME CROWD_PORT [--lax]
    local name=$1 fport=$2
    shift 2
    timeout 120 node "$TARGET_DIR/server.mjs" --listen 127.0.0.1:0 --domain target.test \
        --resolve-crowd "127.0.0.1:$fport" "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
    pids="$pids $!"
}
wait_target() { # NAME: prints the port
    for _ in $(seq 300); do
        local p
        p=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/$1.out")
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
    done
    return 1
}
fs=$(pick_port) && fl=$(pick_port) && fv=$(pick_port) || { bad "free ports"; exit 1; }
start_target strict "$fs"
start_target lax "$fl" --lax
start_target later "$fv" --verify-later
ts=$(wait_target strict) && tl=$(wait_target lax) && tv=$(wait_target later)
if [ -z "${ts:-}" ] || [ -z "${tl:-}" ] || [ -z "${tv:-}" ]; then
    bad "the targets start"
    tail -5 "$dir"/*.err
    exit 1
fi
ok "targets on $ts (strict), $tl (--lax) and $tv (--verify-later)"
for t in "$ts" "$tl" "$tv"; do
    curl -s -X POST "http://127.0.0.1:$t/admin/accounts" -H 'Content-Type: application/json' \
        -d '{"username":"alice"}' | jq -r .token >"$dir/token.$t"
done
check '[ -s "$dir/token.$ts" ] && [ -s "$dir/token.$tl" ]' "an account and its token on each"

run_check() { # CROWD_PORT TARGET_PORT OUT [more options]
    local fport=$1 tport=$2 out=$3
    shift 3
    timeout 90 "$FLOOD" check --listen "127.0.0.1:$fport" --state "$dir/state" \
        --persona acct:alice@target.test --target-http \
        --connect-to "target.test:80:127.0.0.1:$tport" --resolve "target.test:$tport:127.0.0.1" \
        "$@" >"$out" 2>"$out.err"
}

# --- the strict target: nothing fails ---
run_check "$fs" "$ts" "$dir/strict.json" --token-file "$dir/token.$ts" --json
rc=$?
check '[ $rc -eq 0 ]' "strict target: exit 0 (got $rc)"
check 'jq -e ".steps | length == 31" "$dir/strict.json" >/dev/null' "31 steps reported"
check 'jq -e "[.steps[] | select(.result == \"fail\")] | length == 0" "$dir/strict.json" \
    >/dev/null' "strict target: no step fails"
jq -r '.steps[] | select(.result == "fail") | "#   \(.line) \(.step): expected \(.expected), got \(.got)"' \
    "$dir/strict.json" 2>/dev/null
check 'jq -e "[.steps[] | select(.result == \"skip\" or .result == \"unsupported\" or .result == \"deferred\") | select((.detail // \"\") == \"\")] | length == 0" \
    "$dir/strict.json" >/dev/null' "every step not passed states why"
for s in "send unsigned" "send bad-key" "send stale-date" "send digest-mismatch" \
    "send foreign-keyid"; do
    r=$(jq -r --arg s "$s" '.steps[] | select(.step | startswith($s)) | .result' "$dir/strict.json")
    expect=pass
    check '[ "$r" = "$expect" ]' "strict target: '$s' refused ($r)"
done
for s in "discover webfinger" "discover actor unsigned" "discover actor signed" \
    "discover nodeinfo" "expect accept" "undo follow" "api mention-notified" \
    "api like-counted" "undo like" "api follow-crowd" "send dialect cavage-rsa" \
    "rotate key then send" "announce unseen" "reply thread" "post media" "post poll" \
    "edit post" "delete post"; do
    r=$(jq -r --arg s "$s" '[.steps[] | select(.step | startswith($s)) | .result][0]' \
        "$dir/strict.json")
    check '[ "$r" = pass ]' "strict target: '$s' passes ($r)"
done
# the traffic steps saw their effects through the API, each within its 5 s bound
for s in "announce unseen:reblogs_count 1" "reply thread:its parent fetched too" \
    "post media:media_attachments: 1" "post poll:poll.options: 3" \
    "edit post:edited_at 20" "delete post:gone (404)"; do
    d=$(jq -r --arg s "${s%%:*}" '[.steps[] | select(.step | startswith($s)) | .detail][0]' \
        "$dir/strict.json")
    check '[[ "$d" == *"${s#*:}"* ]]' "strict target: '${s%%:*}' effect: $d"
done
acc=$(jq -r '.steps[] | select(.step | startswith("expect accept")) | .ms' "$dir/strict.json")
check 'awk -v m="$acc" "BEGIN { exit !(m > 0 && m < 10000) }"' \
    "Follow to Accept timed: $acc ms"
# Fedify 1.5 verifies draft-cavage only: RFC 9421 is recorded as unsupported, not failed
r=$(jq -r '.steps[] | select(.step == "send dialect rfc9421-rsa") | .result' "$dir/strict.json")
check '[ "$r" = unsupported ] || [ "$r" = pass ]' "rfc9421-rsa recorded ($r)"

# --- the lax target: the refusal steps fail, so they can ---
run_check "$fl" "$tl" "$dir/lax.json" --token-file "$dir/token.$tl" --json
rc=$?
check '[ $rc -eq 1 ]' "lax target: exit 1 (got $rc)"
for s in "send unsigned" "send bad-key" "send stale-date" "send digest-mismatch" \
    "send foreign-keyid"; do
    r=$(jq -r --arg s "$s" '.steps[] | select(.step | startswith($s)) | "\(.result) \(.got)"' \
        "$dir/lax.json")
    check '[[ "$r" == "fail 202"*processed* ]]' "lax target: '$s' fails: $r"
done
nf=$(jq '[.steps[] | select(.result == "fail")] | length' "$dir/lax.json")
check '[ "$nf" -eq 5 ]' "lax target: only those five fail ($nf)"

# --- without a token a Follow and its signed twin decide: the lax target accepts the bad
# Follow too, so each step fails; and the table form ---
run_check "$fl" "$tl" "$dir/lax.txt" --scenario fixtures/scenarios/refusals.flood
rc=$?
check '[ $rc -eq 1 ]' "lax target, no token: exit 1 (got $rc)"
check '[ "$(grep -c " fail " "$dir/lax.txt")" -eq 5 ]' "the five refusal steps fail"
check 'grep -q "^5 steps: 0 pass, 5 fail, 0 skip, 0 deferred, 0 unsupported$" "$dir/lax.txt"' \
    "the table's summary line"
run_check "$fl" "$tl" "$dir/lax-twin.json" --scenario fixtures/scenarios/refusals.flood --json
check 'jq -e "[.steps[] | select(.result == \"fail\" and .decided_by == \"follow-twin\" and (.got | test(\"sent an Accept\")))] | length == 5" \
    "$dir/lax-twin.json" >/dev/null' "each decided by a Follow twin: the target sent an Accept for the bad Follow" ||
    jq -c '.steps[] | [.step, .result, .decided_by, .detail, .got]' "$dir/lax-twin.json" | sed 's/^/#   /'

# --- a target that answers 202 and verifies later, no token: the twins pass each step ---
run_check "$fv" "$tv" "$dir/later.json" --scenario fixtures/scenarios/refusals.flood --json
rc=$?
check '[ $rc -eq 0 ]' "verify-later target, no token: exit 0 (got $rc)"
check 'jq -e "[.steps[] | select(.result == \"pass\" and .decided_by == \"follow-twin\" and (.detail | test(\"answered 202.*no Accept, while its signed twin was accepted\")))] | length == 5" \
    "$dir/later.json" >/dev/null' "its five refusal steps pass, decided by their Follow twins" ||
    jq -c '.steps[] | [.result, .decided_by, .detail, .got]' "$dir/later.json" | sed 's/^/#   /'
check 'jq -e "[.steps[] | select(.decided_by == \"answer\")] | length == 0" "$dir/later.json" >/dev/null' \
    "none decided by the answer (every one was 202)"
# --- a target that answers 202 to everything and drops it (as Mastodon's inbox answers
# before Sidekiq verifies): with a token the refusal steps are deferred, not failed ---
cat >"$dir/dropper.mjs" <<'JS'
import http from "node:http";
const server = http.createServer((req, res) => {
    const origin = `http://${req.headers.host}`;
    req.resume();
    req.on("end", () => {
        const json = (status, body, type = "application/json") => {
            res.writeHead(status, { "content-type": type });
            res.end(JSON.stringify(body));
        };
        const url = new URL(req.url, origin);
        if (url.pathname === "/users/bob")
            return json(200, { "@context": "https://www.w3.org/ns/activitystreams",
                id: `${origin}/users/bob`, type: "Person", preferredUsername: "bob",
                inbox: `${origin}/users/bob/inbox` }, "application/activity+json");
        if (req.method === "POST" && url.pathname === "/users/bob/inbox") return json(202, {});
        if (url.pathname === "/api/v1/notifications") return json(200, []);
        return json(404, { error: "not found" });
    });
});
server.listen(0, "127.0.0.1", () => console.log(`listening on ${server.address().port}`));
setTimeout(() => process.exit(0), 60000).unref();
JS
node "$dir/dropper.mjs" >"$dir/dropper.out" 2>&1 &
pids="$pids $!"
dp=""
for _ in $(seq 100); do
    dp=$(sed -n 's/^listening on \([0-9]*\)$/\1/p' "$dir/dropper.out")
    [ -n "$dp" ] && break
    sleep 0.1
done
echo token >"$dir/token.drop"
timeout 60 "$FLOOD" check --listen 127.0.0.1:0 --state "$dir/state" --settle 1 \
    --persona "http://drop.test:$dp/users/bob" --resolve "drop.test:$dp:127.0.0.1" \
    --token-file "$dir/token.drop" --scenario fixtures/scenarios/refusals.flood --json \
    >"$dir/drop.json" 2>"$dir/drop.err"
rc=$?
check '[ $rc -eq 0 ]' "202-and-drop target with a token: exit 0 (got $rc)"
check 'jq -e "[.steps[] | select(.result == \"deferred\" and (.detail | test(\"no mention\")))] | length == 5" \
    "$dir/drop.json" >/dev/null' "its five refusal steps are deferred: no mention seen"
# without a token: the twin gets no Accept either, so nothing decides (one step: each waits
# 10 s for the twin)
printf 'send unsigned expect refused\n' >"$dir/one-refusal.flood"
timeout 60 "$FLOOD" check --listen 127.0.0.1:0 --state "$dir/state" \
    --persona "http://drop.test:$dp/users/bob" --resolve "drop.test:$dp:127.0.0.1" \
    --scenario "$dir/one-refusal.flood" --json >"$dir/drop-twin.json" 2>"$dir/drop-twin.err"
rc=$?
check '[ $rc -eq 0 ]' "202-and-drop target without a token: exit 0 (got $rc)"
check 'jq -e "[.steps[] | select(.result == \"deferred\" and .decided_by == \"follow-twin\" and (.detail | test(\"twin got no Accept\")))] | length == 1" \
    "$dir/drop-twin.json" >/dev/null' "its refusal step is deferred: the twin got no Accept either"

[ "$fail" -eq 0 ] || { echo "# strict run:"; sed 's/^/#   /' "$dir/strict.json.err" | tail -5; }
echo "$((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]

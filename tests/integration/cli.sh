#!/usr/bin/env bash
# The command line as Unix users expect it: flood --help / --version, every subcommand's
# --help (exit 0, usage on stdout), unknown options (exit 2, "flood: ..." on stderr), the
# documented exit codes 0, 1 and 2 of each command, the man page (renders cleanly with
# groff, documents every option each --help lists, installed by make install), and the
# live line only on a terminal, with no colour escapes (NO_COLOR).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/run_lib.sh"
MAN=$ROOT/docs/flood.1

# runf NAME ARGS...: run flood, stdout in $T_TMP/NAME.out, stderr in NAME.err, code in RC
runf() {
    local name=$1
    shift
    "$FLOOD" "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err" </dev/null
    RC=$?
}

# 1. flood itself
runf top --help
expect_eq "$RC" 0 "flood --help exits 0"
grep -q '^usage: flood COMMAND' "$T_TMP/top.out" && [ ! -s "$T_TMP/top.err" ]
check $? "and prints its usage on stdout, nothing on stderr"
for h in -h help; do
    runf toph "$h"
    [ "$RC" -eq 0 ] && cmp -s "$T_TMP/top.out" "$T_TMP/toph.out"
    check $? "flood $h is flood --help"
done
runf none
expect_eq "$RC" 2 "flood with no command exits 2"
grep -q '^usage: flood COMMAND' "$T_TMP/none.err" && [ ! -s "$T_TMP/none.out" ]
check $? "with the usage on stderr"
runf bogus no-such-command
expect_eq "$RC" 2 "an unknown command exits 2"
grep -q "^flood: unknown command 'no-such-command'" "$T_TMP/bogus.err"
check $? "saying 'flood: unknown command ...' on stderr"
runf ver --version
expect_eq "$RC" 0 "flood --version exits 0"
expect_eq "$(cat "$T_TMP/ver.out")" "flood $(cat "$ROOT/VERSION")" "and prints 'flood VERSION' (the VERSION file)"
runf ver2 -V
expect_eq "$(cat "$T_TMP/ver2.out")" "flood $(cat "$ROOT/VERSION")" "flood -V too"

# 2. every subcommand flood --help lists
CMDS=$(awk '/^  [a-z]+ / {print $1}' "$T_TMP/top.out")
echo "# commands:" $CMDS
[ "$(echo "$CMDS" | wc -w)" -ge 9 ]
check $? "flood --help lists at least the 9 commands (serve actors run sign verify fetch check report compare)"
for c in $CMDS; do
    runf "h-$c" "$c" --help
    expect_eq "$RC" 0 "flood $c --help exits 0"
    grep -q "^usage: flood $c" "$T_TMP/h-$c.out" && [ ! -s "$T_TMP/h-$c.err" ]
    check $? "flood $c --help prints 'usage: flood $c ...' on stdout only"
    runf "u-$c" "$c" --no-such-option
    expect_eq "$RC" 2 "flood $c --no-such-option exits 2"
    head -1 "$T_TMP/u-$c.err" | grep -q "^flood: $c: .*'--no-such-option'" && [ ! -s "$T_TMP/u-$c.out" ]
    check $? "flood $c: the error reads 'flood: $c: ...' on stderr, naming the option"
    grep -q "^\\.SS flood $c\$" "$MAN"
    check $? "the man page has a section for flood $c"
    missing=""
    for o in $(grep -oE '(^|[ ,(])--[a-z0-9][a-z0-9-]*' "$T_TMP/h-$c.out" | sed 's/^[ ,(]//' | sort -u); do
        [ "$o" = --help ] && continue
        grep -qF -- "$(echo "$o" | sed 's/-/\\-/g')" "$MAN" || missing="$missing $o"
    done
    expect_eq "$missing" "" "every option flood $c --help lists is in the man page"
done

# 3. the man page
if command -v groff >/dev/null; then
    LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$MAN" >"$T_TMP/groff.out" 2>&1
    [ $? -eq 0 ] && [ ! -s "$T_TMP/groff.out" ]
    check $? "docs/flood.1 renders with groff -man and no warning" || sed 's/^/#   /' "$T_TMP/groff.out"
    printf '.TH X 1\n.SH NAME\n.BOGUS x\n' | groff -man -Tutf8 -ww -z >/dev/null 2>&1 </dev/stdin
    groff_warns=$(printf '.TH X 1\n.SH NAME\n.BOGUS x\n' | groff -man -Tutf8 -ww -z 2>&1 | wc -l)
    [ "$groff_warns" -gt 0 ]
    check $? "(groff does warn on a broken page: the check above means something)"
else
    check 0 "docs/flood.1 renders # SKIP groff not installed"
fi
if command -v man >/dev/null; then
    MANWIDTH=80 man -l "$MAN" 2>/dev/null | grep -q 'EXIT STATUS'
    check $? "man -l docs/flood.1 shows the page"
fi
# Only a binary that is its folder's up-to-date make target is installed, and install may
# never remake it (-o): a source edited since the build must not have this test relink the
# build under test (without the sanitizer flags, for build-san/). The target is named by
# its relative path: make knows no rule for an absolute one and calls any such file "up to
# date".
bdir=$(dirname "$FLOOD")
rel=${bdir#"$ROOT"/}
if [ "$rel" != "$bdir" ] && make -C "$ROOT" -q "BUILD=$rel" "$rel/flood" >/dev/null 2>&1; then
    make -s -C "$ROOT" install "BUILD=$rel" -o "$rel/flood" PREFIX="$T_TMP/prefix" >/dev/null 2>&1
    [ -x "$T_TMP/prefix/bin/flood" ] && cmp -s "$T_TMP/prefix/share/man/man1/flood.1" "$MAN"
    check $? "make install PREFIX=... installs bin/flood and share/man/man1/flood.1"
else
    check 0 "make install PREFIX=... # SKIP $FLOOD is not the up-to-date make target of its folder"
fi

# 4. the documented exit codes, command by command
start_sink --status 202
SINK_URL=http://127.0.0.1:$SINK_PORT
frun --inbox "$SINK_URL/inbox" --rate 50 --duration 1s --sign none --quiet
expect_eq "$RUN_RC" 0 "run: 0 when the run ran"
GOOD_RUN=$RUN_DIR
grep -q $'\r\|\033' "$RUN_ERR" "$RUN_OUT"
[ $? -ne 0 ]
check $? "run: no live line (no CR, no escape) when stderr is not a terminal"
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
frun --inbox "http://127.0.0.1:$dead/inbox" --rate 10 --duration 1s --sign none
expect_eq "$RUN_RC" 1 "run: 1 when the target is unreachable before the start"
grep -q '^flood: run: ' "$RUN_ERR"
check $? "run: saying so as 'flood: run: ...'"
frun --inbox "$SINK_URL/inbox" --rate -5 --duration 1s
expect_eq "$RUN_RC" 2 "run: 2 for a bad --rate"

if command -v script >/dev/null; then
    # under a pseudo-terminal the live line appears (CR, erase-line), still with no colour
    script -qfec "NO_COLOR=1 '$FLOOD' run --listen 127.0.0.1:0 --state '$TEST_STATE' --instances 2 --actors 3 --key-pool 1 --out '$T_TMP/tty-run' --inbox '$SINK_URL/inbox' --rate 50 --duration 2s --sign none" \
        "$T_TMP/tty.log" >/dev/null 2>&1 </dev/null
    grep -q $'\033\\[K' "$T_TMP/tty.log"
    check $? "run: the live line is drawn on a terminal"
    grep -q $'\033\\[[0-9;]*m' "$T_TMP/tty.log"
    [ $? -ne 0 ]
    check $? "run: no colour escape on the terminal (NO_COLOR honoured)"
else
    check 0 "live line on a terminal # SKIP script(1) not installed"
fi

runf serve serve --listen 127.0.0.1:0 --state "$TEST_STATE" --instances 1 --actors 1 --key-pool 1 --exit-after 1 --quiet
expect_eq "$RC" 0 "serve: 0 after --exit-after"
runf serve2 serve --listen "127.0.0.1:$SINK_PORT" --state "$TEST_STATE" --instances 1 --actors 1 --key-pool 1 --exit-after 1 --quiet
expect_eq "$RC" 1 "serve: 1 when its port is taken (by the sink)" || sed 's/^/#   /' "$T_TMP/serve2.err"
runf serve3 serve --listen 999.0.0.1:0
expect_eq "$RC" 2 "serve: 2 for a malformed --listen address"
runf actors actors --instances 2 --actors 3
[ "$RC" -eq 0 ] && [ "$(wc -l <"$T_TMP/actors.out")" -eq 6 ]
check $? "actors: 0, and 2 x 3 = 6 lines"

openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T_TMP/k.pem" 2>/dev/null
runf sign sign --key "$T_TMP/k.pem" --key-id https://a.test/actor#main-key --method GET --url https://a.test/x
expect_eq "$RC" 0 "sign: 0 with a key"
runf verify verify --key "$T_TMP/k.pem" --method GET --url https://a.test/x --headers-file "$T_TMP/sign.out"
expect_eq "$RC" 0 "verify: 0 for the request just signed"
runf verify2 verify --key "$T_TMP/k.pem" --method GET --url https://a.test/other --headers-file "$T_TMP/sign.out"
expect_eq "$RC" 1 "verify: 1 when the path differs from the signed one"
runf sign2 sign --key "$T_TMP/missing.pem" --key-id x --method GET --url https://a.test/x
expect_eq "$RC" 1 "sign: 1 when the key file is missing"
runf sign3 sign --key "$T_TMP/k.pem"
expect_eq "$RC" 2 "sign: 2 when required options are missing"

stop_sink
start_sink --status 200
runf fetch fetch --dialect none --state "$TEST_STATE" --instances 2 --actors 3 --key-pool 1 "http://127.0.0.1:$SINK_PORT/x"
expect_eq "$RC" 0 "fetch: 0 for a 2xx answer"
stop_sink
start_sink --status 404
runf fetch2 fetch --dialect none --state "$TEST_STATE" --instances 2 --actors 3 --key-pool 1 "http://127.0.0.1:$SINK_PORT/x"
expect_eq "$RC" 1 "fetch: 1 for a 404"
grep -q "^flood: fetch: HTTP 404" "$T_TMP/fetch2.err"
check $? "fetch: saying 'flood: fetch: HTTP 404 ...'"
stop_sink
runf fetch3 fetch
expect_eq "$RC" 2 "fetch: 2 without a URL"
runf check check
expect_eq "$RC" 2 "check: 2 without --persona"
runf report report "$T_TMP/none"
expect_eq "$RC" 1 "report: 1 for a missing run folder"
runf report2 report
expect_eq "$RC" 2 "report: 2 without a run folder"
runf report3 report "$GOOD_RUN"
expect_eq "$RC" 0 "report: 0 for a run folder (the first run's, above)"
runf compare compare "$T_TMP/none"
expect_eq "$RC" 1 "compare: 1 for a missing run folder"
runf compare2 compare
expect_eq "$RC" 2 "compare: 2 without a run folder"
done_testing

#!/usr/bin/env bash
# The include order, checked: sign/ includes only sign/; webfinger/ only webfinger/ and
# sign/; inside flood/ a room includes only itself, rooms below it, webfinger/ and sign/;
# flood/main.c (the program) may include any room. The order of the rooms is the one
# docs/ARCHITECTURE.md draws, lowest first. Prints every include that runs against the
# order as FILE:LINE, and "deps: N files, the order holds" or exits 1.
#
#   scripts/deps_check.sh [ROOT]     (ROOT: a tree to check, default the repository)
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2

# Lowest first. A room may include the rooms listed before it.
ROOMS="core crowd measure send inbound report dash check cmd"

rank_of() { # rank_of "flood/ROOM" or "sign" / "webfinger": a number, lower is lower
    case "$1" in
    sign) echo 0 ;;
    webfinger) echo 1 ;;
    flood/*)
        local r=${1#flood/} i=2
        for x in $ROOMS; do
            [ "$x" = "$r" ] && { echo "$i"; return; }
            i=$((i + 1))
        done
        echo "unknown" ;;
    *) echo "unknown" ;;
    esac
}

bad=0 files=0
while IFS= read -r f; do
    files=$((files + 1))
    case "$f" in
    sign/*) from=sign ;;
    webfinger/*) from=webfinger ;;
    flood/main.c) continue ;;
    flood/*/*) from=$(dirname "$f") ;;
    *)
        echo "$f: a source file outside the rooms (sign/, webfinger/, flood/ROOM/, flood/main.c)"
        bad=$((bad + 1))
        continue ;;
    esac
    fr=$(rank_of "$from")
    if [ "$fr" = unknown ]; then
        echo "$f: room '$from' is not in the order (scripts/deps_check.sh ROOMS)"
        bad=$((bad + 1))
        continue
    fi
    while IFS=: read -r line inc; do
        case "$inc" in
        sign/*) to=sign ;;
        webfinger/*) to=webfinger ;;
        flood/*/*) to=$(dirname "$inc") ;;
        *)
            echo "$f:$line: includes \"$inc\", which is in no module"
            bad=$((bad + 1))
            continue ;;
        esac
        tr=$(rank_of "$to")
        if [ "$tr" = unknown ] || [ "$tr" -gt "$fr" ]; then
            echo "$f:$line: $from includes \"$inc\" ($to is above it in the order: $ROOMS)"
            bad=$((bad + 1))
        fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$f" |
        sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/')
done < <(find sign webfinger flood -name '*.[ch]' | sort)

if [ "$bad" -gt 0 ]; then
    echo "deps: $bad include(s) against the order in $files files"
    exit 1
fi
echo "deps: $files files, the order holds"

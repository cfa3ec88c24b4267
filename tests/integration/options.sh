#!/usr/bin/env bash
# The options as the rows declare them (flood options) against what the docs say: every
# option a command takes is an item of its section of docs/flood.1 (flood run's in flood
# run's, the crowd's and the inbound side's in CROWD OPTIONS and INBOUND OPTIONS); every
# option item of a section is one the command takes; an item of an option with a default
# says that default; README.md names no option that no row has; and each command's --help
# lists exactly its rows. No network, a second or two.
. "$(dirname "$0")/lib.sh"
MAN=$ROOT/docs/flood.1

"$FLOOD" options >"$T_TMP/rows" 2>"$T_TMP/rows.err"
expect_eq "$?" 0 "flood options exits 0"
[ "$(wc -l <"$T_TMP/rows")" -ge 200 ] && [ ! -s "$T_TMP/rows.err" ]
check $? "and lists the rows of every command ($(wc -l <"$T_TMP/rows") rows)"
"$FLOOD" --help | grep -q '^  options '
[ $? -ne 0 ]
check $? "flood --help does not list it (a tool for the docs)"

# docs/flood.1 against the rows, both ways, and the defaults
python3 - "$T_TMP/rows" "$MAN" >"$T_TMP/man.out" <<'PY'
import re, sys
rows = [l.rstrip("\n") for l in open(sys.argv[1])]
man = open(sys.argv[2]).read().split("\n")

# every option item (.TP then .B/.BI \-\-NAME) of each section, with its paragraph
items, sec, cur = {}, None, None
i = 0
while i < len(man):
    l = man[i]
    if l.startswith(".SH "):
        sec = "crowd" if "CROWD OPTIONS" in l else "inbound" if "INBOUND OPTIONS" in l else None
        cur = None
    elif l.startswith(".SS flood "):
        sec, cur = l.split()[2], None
    elif l.startswith(".SS") or l.startswith(".PP"):
        cur = None
    elif l.startswith(".TP"):
        cur = None
        nxt = man[i + 1] if i + 1 < len(man) else ""
        if sec and re.match(r"^\.(B|BI|BR|IR|I|RB) +\\-\\-", nxt):
            name = nxt.split()[1].replace("\\-", "-").replace('"', "").split("=")[0][2:]
            cur = (sec, name)
            items[cur] = ""
            i += 2
            continue
    if cur:
        items[cur] += l + "\n"
    i += 1

def plain(t):
    t = t.replace("\\-", "-").replace('"', "")
    t = re.sub(r"\\\(..", "", t)
    t = re.sub(r"^\.\w+ ?", "", t, flags=re.M)
    return " ".join(t.split())

takes, n, bad = set(), 0, []
for line in rows:
    head, _, dflt = line.partition("\t")
    cmd, kind, name = head.split()[:3]
    name = name[2:]
    takes.add((cmd, name))
    home = kind if kind in ("crowd", "inbound") else "run" if kind == "run" else cmd
    n += 1
    if (home, name) not in items:
        bad.append("missing %s --%s (flood %s, %s)" % (home, name, cmd, kind))
        continue
    if dflt:
        t, d = plain(items[(home, name)]), re.escape(dflt)
        if not re.search(r"default:? %s(?!\w)|(?<!\w)%s \((the )?default\b|(?<!\w)%s, the default"
                         % (d, d, d), t):
            bad.append("default %s --%s: the rows say %s, the page: %s" % (home, name, dflt, t[:120]))
for (sec, name) in items:
    if sec in ("crowd", "inbound"):
        ok = any(l.split()[1] == sec and l.split()[2] == "--" + name for l in rows)
    else:
        ok = (sec, name) in takes
    if not ok:
        bad.append("extra %s --%s: an item of the page no row of that command has" % (sec, name))
print("rows %d items %d" % (n, len(items)))
for b in bad:
    print("BAD " + b)
PY
sed 's/^/# /' "$T_TMP/man.out" | grep -v '^# BAD' | head -3
grep '^BAD missing' "$T_TMP/man.out" | sed 's/^/#   /'
! grep -q '^BAD missing' "$T_TMP/man.out"
check $? "every row is an item of its section of flood.1"
grep '^BAD extra' "$T_TMP/man.out" | sed 's/^/#   /'
! grep -q '^BAD extra' "$T_TMP/man.out"
check $? "every option item of flood.1 is a row of its command"
grep '^BAD default' "$T_TMP/man.out" | sed 's/^/#   /'
! grep -q '^BAD default' "$T_TMP/man.out"
check $? "every default a row has, flood.1 says"

# README.md: every --option is a row's (lines running another program name its options:
# scripts/*.sh, tar)
cut -f1 "$T_TMP/rows" | awk '{print $3}' | sort -u >"$T_TMP/names"
grep -vE 'scripts/[a-z_]+\.sh|tar --' "$ROOT/README.md" |
    grep -oE -- '(^|[^a-zA-Z0-9-])--[a-z0-9][a-z0-9-]*' | grep -oE -- '--[a-z0-9][a-z0-9-]*' |
    sort -u | grep -vxE -- '--help|--version' | comm -23 - "$T_TMP/names" >"$T_TMP/readme.extra"
sed 's/^/#   README.md names /' "$T_TMP/readme.extra"
[ ! -s "$T_TMP/readme.extra" ]
check $? "README.md names no option that no row has"

# each command's --help lists its rows, and only them
for c in $(cut -d' ' -f1 "$T_TMP/rows" | sort -u); do
    "$FLOOD" "$c" --help >"$T_TMP/h" 2>&1
    grep -oE '^  --[a-z0-9][a-z0-9-]*' "$T_TMP/h" | sed 's/^  //' | sort -u >"$T_TMP/h.opts"
    awk -v c="$c" '$1 == c {print $3}' "$T_TMP/rows" | sort -u >"$T_TMP/r.opts"
    cmp -s "$T_TMP/h.opts" "$T_TMP/r.opts"
    check $? "flood $c --help lists its $(wc -l <"$T_TMP/r.opts") rows" ||
        diff "$T_TMP/r.opts" "$T_TMP/h.opts" | sed 's/^/#   /'
done

# a bad value names the option and the forms accepted, with the command's prefix
"$FLOOD" run --max-inflight 0 >/dev/null 2>"$T_TMP/e1"
expect_eq "$?" 2 "a value out of range: usage error"
grep -q "^flood: run: --max-inflight: expected a whole number from 1 to 10000000, got '0'$" "$T_TMP/e1"
check $? "naming the option, the range and the value: $(head -1 "$T_TMP/e1")"
"$FLOOD" capacity --hold 1s --inbox http://127.0.0.1:9/inbox >/dev/null 2>"$T_TMP/e2"
grep -q "^flood: capacity: --hold: expected a duration from 2s" "$T_TMP/e2"
check $? "a capacity option the same way: $(head -1 "$T_TMP/e2")"
done_testing

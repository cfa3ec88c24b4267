#!/usr/bin/env python3
"""The size rule, checked: no C file of sign/, webfinger/, flood/ or tests/ over 850
lines, no function over 150 (docs/ARCHITECTURE.md, "The rule, checked").

    scripts/size_check.py [ROOT] [--allow FILE]

A function is found from the clang-format layout the tree keeps (Linux braces): a line
that is exactly `{` at column 0 opens a function body, the next line that is exactly `}`
at column 0 closes it. A function's length counts from its signature's first line (the
line after the last blank line, comment, declaration or `}` before the `{`) to the
closing `}`.

The allowlist (scripts/size_allow.txt unless --allow) names known exceptions, one
`path:function` a line (`#` starts a comment). An allowlisted function over the limit is
reported as allowed; one that is no longer over it, or is gone, fails the check so that
the list only shrinks. Every violation is printed as `FILE:LINE: ...`; the exit status is
1 when there is one, 0 otherwise.
"""
import os
import re
import sys

FILE_MAX = 850
FUNC_MAX = 150
DIRS = ("sign", "webfinger", "flood", "tests")
EXTS = (".c", ".h")
SKIP = ("node_modules",)

NAME_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def c_files(root):
    for d in DIRS:
        top = os.path.join(root, d)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(n for n in dirnames if n not in SKIP)
            for f in sorted(filenames):
                if f.endswith(EXTS):
                    yield os.path.join(dirpath, f)


def signature_start(lines, brace):
    """The index of the first line of the signature ending just before lines[brace]."""
    i = brace - 1
    while i >= 0:
        s = lines[i].rstrip("\n")
        t = s.strip()
        if (not t or s.startswith("}") or t.endswith(";")
                or t.startswith(("/*", "*", "//", "#"))):
            break
        i -= 1
    return i + 1


def func_name(sig):
    """The declared name in a signature: the last identifier followed by `(` before the
    parameter list opens (a function-pointer return type is rare; the first `(` at depth 0
    that follows an identifier names it)."""
    depth = 0
    for m in NAME_RE.finditer(sig):
        head = sig[: m.start()]
        depth = head.count("(") - head.count(")")
        if depth == 0:
            return m.group(1)
    return None


def functions(lines):
    """(name, first line, last line) of every function body, 1-based."""
    out = []
    i = 0
    n = len(lines)
    while i < n:
        if lines[i].rstrip("\n") == "{":
            start = signature_start(lines, i)
            sig = " ".join(l.strip() for l in lines[start:i])
            name = func_name(sig) or "?"
            j = i + 1
            while j < n and lines[j].rstrip("\n") != "}":
                j += 1
            out.append((name, start + 1, j + 1))
            i = j + 1
        else:
            i += 1
    return out


def read_allow(path):
    allow = {}
    if not path or not os.path.exists(path):
        return allow
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            t = line.split("#", 1)[0].strip()
            if t:
                allow[t] = no
    return allow


def main(argv):
    root = "."
    allow_path = None
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--allow" and args:
            allow_path = args.pop(0)
        elif a.startswith("--allow="):
            allow_path = a.split("=", 1)[1]
        elif a.startswith("-"):
            print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
            return 2
        else:
            root = a
    root = os.path.abspath(root)
    if allow_path is None:
        allow_path = os.path.join(root, "scripts", "size_allow.txt")
    allow = read_allow(allow_path)
    seen = set()
    bad = 0
    files = 0
    funcs = 0
    for path in c_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        files += 1
        if len(lines) > FILE_MAX:
            key = rel + ":"
            if key in allow:
                seen.add(key)
                print(f"{rel}:1: allowed: file of {len(lines)} lines (over {FILE_MAX})")
            else:
                print(f"{rel}:1: file of {len(lines)} lines, over {FILE_MAX}")
                bad += 1
        for name, first, last in functions(lines):
            funcs += 1
            length = last - first + 1
            key = f"{rel}:{name}"
            if length <= FUNC_MAX:
                continue
            if key in allow:
                seen.add(key)
                print(f"{rel}:{first}: allowed: function {name} of {length} lines "
                      f"(over {FUNC_MAX})")
                continue
            print(f"{rel}:{first}: function {name} of {length} lines, over {FUNC_MAX}")
            bad += 1
    for key, no in sorted(allow.items(), key=lambda kv: kv[1]):
        if key not in seen:
            print(f"{os.path.relpath(allow_path, root)}:{no}: {key} is within the limits "
                  f"(or gone): take it off the list")
            bad += 1
    print(f"size check: {files} files, {funcs} functions, {bad} over the limits "
          f"(files {FILE_MAX} lines, functions {FUNC_MAX})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

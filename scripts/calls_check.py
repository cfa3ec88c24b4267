#!/usr/bin/env python3
"""No circles between files: from the objects of a build (nm), which file calls which
(a symbol one object uses and another defines), then every cycle of files that call each
other, each printed with the symbols that close it. Exit 1 when there is one.

    scripts/calls_check.py [BUILD]      (BUILD: a build folder, default build)
"""
import collections
import glob
import os
import subprocess
import sys


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    objs = sorted(glob.glob(f"{build}/obj/sign/*.o") + glob.glob(f"{build}/obj/webfinger/*.o")
                  + glob.glob(f"{build}/obj/flood/*/*.o"))
    if not objs:
        print(f"calls: no objects under {build}/obj (build first)")
        return 2
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        f = os.path.relpath(o, f"{build}/obj")[:-2] + ".c"
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRC":
                defs[p[2]] = f
            elif len(p) == 2 and p[0] == "U":
                uses[f].add(p[1])
    calls = collections.defaultdict(set)
    for f, syms in uses.items():
        for s in syms:
            if s in defs and defs[s] != f:
                calls[f].add(defs[s])
    # Tarjan's strongly connected components, iteratively.
    index, low, stack, on, comps, n = {}, {}, [], set(), [], 0
    for root in sorted(set(defs.values()) | set(calls)):
        if root in index:
            continue
        work = [(root, iter(sorted(calls[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = n
                n += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(calls[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    for comp in comps:
        print("calls: files that call each other: " + " ".join(comp))
        for a in comp:
            for b in sorted(calls[a] & set(comp)):
                syms = sorted(s for s in uses[a] if defs.get(s) == b)
                print(f"  {a} -> {b}: {', '.join(syms[:5])}")
    if comps:
        return 1
    print(f"calls: {len(objs)} objects, no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())

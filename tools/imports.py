#!/usr/bin/env python3
"""The structure drawing of issue 29: which module of `src/` names which (every
`crate::…` path in code, `use` lines and inline paths; comments and doc links aside),
and the circles among them.

    python3 tools/imports.py            # circles between files, then between areas
    python3 tools/imports.py --edges    # every arrow between areas, with a count

An area is a top-level module (`config`, `domain`, `store`, `web`, …). The areas sit in
the layers of `LAYERS` (docs/design.md#layering), bottom to top: an area may name its own
layer's areas and those below, never one above. Exit status 1 when a circle between files
or between areas exists, when an import runs up the layers, when an area is in no layer, or
when a source file of the workspace is longer than `MAX_LINES`, so CI can run it.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")

# The layers, bottom to top (docs/design.md#layering). `""` is `lib.rs` and `main.rs`.
LAYERS = [
    ("ground", ["room", "clock", "hex", "telemetry"]),
    ("settings", ["config"]),
    ("store", ["store"]),
    ("metrics", ["metrics"]),
    ("domain", ["domain"]),
    ("certificates", ["tls"]),
    ("start-up check", ["preflight"]),
    ("background tasks", ["hub", "reaper", "keeper", "drops", "outflow", "webhook"]),
    ("doors", ["web", "gateway"]),
    ("entry", ["startup", ""]),
]

# No source file of the workspace is longer than this (vendored code aside).
MAX_LINES = 1200


def modules():
    out = {}
    for dirpath, _, files in os.walk(SRC):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), SRC)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            out["::".join(rel)] = os.path.join(dirpath, f)
    return out


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def expand(paths):
    """`crate::a::{b, c::d}` → `a::b`, `a::c::d` (one level of braces is enough here)."""
    for p in paths:
        m = re.match(r"(.*?)::\{(.*)\}$", p, re.S)
        if not m:
            yield p
            continue
        for part in re.split(r",(?![^{]*\})", m.group(2)):
            part = part.strip()
            if part:
                yield from expand([m.group(1) + "::" + part])


def edges(mods):
    out = defaultdict(set)
    for name, path in mods.items():
        text = strip_comments(open(path, encoding="utf-8").read())
        found = re.findall(r"\bcrate((?:::\w+)+(?:::\{[^;]*?\})?)", text)
        # `super::` from a file inside an area counts too.
        for sup in re.findall(r"\bsuper((?:::\w+)+)", text):
            parent = name.split("::")[:-1]
            if os.path.basename(path) == "mod.rs":
                parent = name.split("::")[:-1]
            found.append("::" + "::".join(parent) + sup if parent else sup)
        for p in expand([f.lstrip(":") for f in found]):
            parts = [x for x in p.split("::") if x and x != "self"]
            target = None
            for i in range(len(parts), 0, -1):
                cand = "::".join(parts[:i])
                if cand in mods:
                    target = cand
                    break
            if target and target != name and not name.startswith(target + "::"):
                out[name].add(target)
    return out


def sccs(graph, nodes):
    index, low, stack, on, res, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                res.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return res


def area(m):
    return m.split("::")[0]


def main():
    mods = modules()
    g = edges(mods)
    file_circles = sccs(g, sorted(mods))
    ag = defaultdict(lambda: defaultdict(int))
    for a, bs in g.items():
        for b in bs:
            if area(a) != area(b):
                ag[area(a)][area(b)] += 1
    if "--edges" in sys.argv:
        for a in sorted(ag):
            for b in sorted(ag[a]):
                print(f"{a} -> {b} ({ag[a][b]})")
        return 0
    print("Circles between files:" if file_circles else "Circles between files: none")
    for c in file_circles:
        print("  " + " <-> ".join(c))
    area_graph = {a: set(bs) for a, bs in ag.items()}
    area_circles = sccs(area_graph, sorted({area(m) for m in mods}))
    print("Circles between areas:" if area_circles else "Circles between areas: none")
    for c in area_circles:
        print("  " + " <-> ".join(c))
        for a in c:
            for b in c:
                if b in ag.get(a, {}):
                    print(f"    {a} -> {b} ({ag[a][b]})")
    upward, unplaced = layer_problems(mods, g)
    print("Imports running up the layers:" if upward else "Imports running up the layers: none")
    for line in upward:
        print("  " + line)
    for a in unplaced:
        print(f"  area `{a}` is in no layer: add it to LAYERS in tools/imports.py")
    long_files = too_long()
    print(
        f"Files over {MAX_LINES} lines:" if long_files else f"Files over {MAX_LINES} lines: none"
    )
    for path, n in long_files:
        print(f"  {path}: {n}")
    bad = file_circles or area_circles or upward or unplaced or long_files
    return 1 if bad else 0


def layer_problems(mods, g):
    """Every file's import of an area in a higher layer, and the areas in no layer."""
    level = {a: i for i, (_, areas) in enumerate(LAYERS) for a in areas}
    unplaced = sorted({area(m) for m in mods} - set(level))
    upward = []
    for a, bs in sorted(g.items()):
        for b in sorted(bs):
            la, lb = level.get(area(a)), level.get(area(b))
            if la is not None and lb is not None and lb > la:
                upward.append(
                    f"{a or '(lib/main)'} ({LAYERS[la][0]}) -> {b} ({LAYERS[lb][0]})"
                )
    return upward, unplaced


def too_long():
    """The workspace's `.rs` files over `MAX_LINES` lines (target/ and vendor/ aside)."""
    out = []
    for dirpath, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(dirpath, ROOT)
        if rel.split(os.sep)[0] in ("target", "vendor", ".git"):
            dirs[:] = []
            continue
        for f in files:
            if f.endswith(".rs"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    n = sum(1 for _ in fh)
                if n > MAX_LINES:
                    out.append((os.path.relpath(path, ROOT), n))
    return sorted(out)


if __name__ == "__main__":
    sys.exit(main())

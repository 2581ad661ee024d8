#!/usr/bin/env python3
"""Checks every #include of the layers against the layer graph (docs/ARCHITECTURE.md,
"Layers"). Run by ctest (lint.layers); needs only the source tree and Python 3.

The graph is CMakeLists.txt's (OFLD_BENEATH_<layer>, closed over into OFLD_SEES_<layer>), handed
over on the command line, so that the build's staged include directories and this check hold
one graph:

  layers_check.py SRC check LAYER=SEEN,SEEN,... ...
      every file of src/LAYER/ and include/ofld/LAYER/ (and include/ofld/ofld.h for capi)
      includes project headers only of the layers in its SEEN list (ofld/version.hpp counts
      as core, ofld/ofld.h as capi), and no private header of another folder of src/ by a
      relative path; each offending line is printed as FILE:LINE with the rule it breaks.
  layers_check.py SRC report LAYER=SEEN,... ...
      prints, per layer, the layers it really includes and how often (the measured graph).

Folders of src/ that the graph does not name (cli: the command sits on everything) are not
checked.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def layer_of_header(path):
    """The layer a project header belongs to ("ofld/<layer>/x.hpp"), or None if not ours."""
    if path == "ofld/version.hpp":
        return "core"
    if path == "ofld/ofld.h":
        return "capi"
    m = re.match(r"ofld/([a-z_]+)/", path)
    return m.group(1) if m else None


def files_of(src, layer):
    out = []
    for top in (os.path.join("src", layer), os.path.join("include", "ofld", layer)):
        root = os.path.join(src, top)
        if not os.path.isdir(root):
            continue
        for dirpath, _, names in os.walk(root):
            for n in sorted(names):
                if n.endswith((".cpp", ".hpp", ".h", ".c", ".cc", ".inc")):
                    out.append(os.path.relpath(os.path.join(dirpath, n), src))
    if layer == "capi":
        out.append(os.path.join("include", "ofld", "ofld.h"))
    return sorted(out)


def parse_graph(args):
    sees = {}
    for a in args:
        if "=" not in a:
            sys.exit(f"layers_check: bad graph argument {a!r} (want LAYER=SEEN,SEEN,...)")
        layer, seen = a.split("=", 1)
        sees[layer] = set(s for s in seen.replace(";", ",").split(",") if s)
        sees[layer].add(layer)
    return sees


def includes(src, f):
    with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    for m in INCLUDE.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)


def check(src, sees):
    bad = []
    for layer in sorted(sees):
        for f in files_of(src, layer):
            for line, inc in includes(src, f):
                if inc.startswith("../") or "/../" in inc:
                    bad.append(f"{f}:{line}: includes {inc}: a private header of another "
                               f"folder (relative path); only public headers cross layers")
                    continue
                target = layer_of_header(inc)
                if target is None:
                    continue
                if target not in sees[layer]:
                    allowed = ", ".join(sorted(sees[layer]))
                    where = "not in the graph" if target not in sees else "not beneath it"
                    bad.append(f"{f}:{line}: layer {layer} includes {inc}: layer {target} is "
                               f"{where} (docs/ARCHITECTURE.md; {layer} sees {allowed})")
    return bad


def report(src, sees):
    for layer in sorted(sees):
        counts = {}
        for f in files_of(src, layer):
            for _, inc in includes(src, f):
                t = layer_of_header(inc)
                if t is not None and t != layer:
                    counts[t] = counts.get(t, 0) + 1
        row = ", ".join(f"{t} {n}" for t, n in sorted(counts.items()))
        print(f"{layer}: {row or '-'}")


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in ("check", "report"):
        sys.exit(__doc__)
    src, mode = sys.argv[1], sys.argv[2]
    sees = parse_graph(sys.argv[3:])
    if mode == "report":
        report(src, sees)
        return 0
    bad = check(src, sees)
    for b in bad:
        print(b)
    n = sum(len(files_of(src, layer)) for layer in sees)
    if bad:
        print(f"lint.layers: {len(bad)} include(s) against the layer graph")
        return 1
    print(f"lint.layers: {n} files of {len(sees)} layers include only the layers beneath them")
    return 0


if __name__ == "__main__":
    sys.exit(main())

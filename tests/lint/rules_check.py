#!/usr/bin/env python3
"""Checks the rule index (docs/rules.md) against the source tree, and that names tell the
subject rather than the history. Run by ctest (lint.rules_index, lint.history_names); needs
only the source tree and Python 3.

Rule IDs are the numbered rules of the offload specification (families C F X G N T U W V S I
K, docs/rules.md) and the repository's own GN rules (docs/geneve.md). In prose and code an ID
is cited with a hyphen (`X-24`, `N-16a`, `K-3b`); in a gtest name it is a token between
underscores (`K3b_X31_VxlanUdpCsumMatchesKernel`). A token is a family letter (or GN) right
after a non-alphanumeric, non-hyphen character, a hyphen, digits, and an optional lowercase
letter, so `UTF-8`, `SHA-256`, `AF-XDP` or `RFC 7348` never match.

  rules_check.py SRC index      docs/rules.md lists every cited ID; every listed ID is cited
                                by some test; every test the index names exists and cites it.
  rules_check.py SRC history    no gtest suite is named after an issue (Issue[0-9]) and no
                                comment in src/, include/, tests/ cites "issue N"/"session N".
  rules_check.py SRC skeleton   prints ID, where it is cited, and the tests that cite it.
"""
import os
import re
import subprocess
import sys

FAMILIES = r"(?:GN|[CFXGTUNWVSIK])"
CITE = re.compile(r"(?<![A-Za-z0-9_\-])(" + FAMILIES + r")-(\d+)([a-z]?)(?![A-Za-z0-9_])")
TOKEN = re.compile(r"^(" + FAMILIES + r")(\d+)([a-z]?)$")
TEST_MACRO = re.compile(
    r"^[ \t]*(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.M)
INDEX_ROW = re.compile(r"^\|\s*`?(" + FAMILIES + r"-\d+[a-z]?)`?\s*\|(.*)\|\s*$")
TEXT_EXT = (".cpp", ".hpp", ".h", ".c", ".cc", ".py", ".pyi", ".sh", ".cmake", ".txt", ".md",
            ".go", ".toml", ".8", ".in", ".json", ".service", "")
INDEX = "docs/rules.md"
SELF = "tests/lint/rules_check.py"  # its examples are not citations


def source_files(src):
    """The tracked text files (git ls-files when .git exists, else a walk), minus fuzz corpora,
    captures and the index itself."""
    try:
        out = subprocess.run(["git", "-C", src, "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
        files = [f for f in out if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(src):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d != "build"]
            for n in names:
                files.append(os.path.relpath(os.path.join(root, n), src))
    keep = []
    for f in files:
        if f.startswith("fuzz/corpus/") or f.startswith("build/") or f in (INDEX, SELF):
            continue
        base, ext = os.path.splitext(f)
        if ext not in TEXT_EXT or (ext == "" and not f.startswith("scripts/")):
            continue
        if f.startswith(("tests/data/", "data/", "docs/")) or ext == ".md":
            continue  # prose: the index and docs/*.md define and explain the rules
        keep.append(f)
    return sorted(keep)


def read(src, f):
    try:
        with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def rule_id(fam, num, suffix):
    return f"{fam}-{int(num)}{suffix}"


def cites(text):
    return {rule_id(*m.groups()) for m in CITE.finditer(text)}


def name_cites(name):
    return {rule_id(*m.groups()) for t in name.split("_") if (m := TOKEN.match(t))}


def gtests(src, files, weak):
    """{suite.name: set of cited IDs} for every gtest in tests/: IDs in the name, in the test's
    body and in the comment block right above it."""
    tests = {}
    file_level = {}
    for f in files:
        if not f.startswith("tests/") or not f.endswith(".cpp"):
            continue
        text = read(src, f)
        ms = list(TEST_MACRO.finditer(text))
        starts = []
        for m in ms:
            # the comment block right above the macro belongs to the test
            begin = m.start()
            lines = text[:begin].split("\n")[:-1]
            k = len(lines)
            while k > 0 and lines[k - 1].lstrip().startswith("//"):
                k -= 1
            starts.append(len("\n".join(lines[:k])) + (1 if k else 0))
        covered = []
        for i, m in enumerate(ms):
            end = starts[i + 1] if i + 1 < len(ms) else len(text)
            body = text[starts[i]:end]
            covered.append((starts[i], end))
            name = f"{m.group(1)}.{m.group(2)}"
            tests.setdefault(name, set()).update(cites(body) | name_cites(m.group(2)))
        rest = text
        for b, e in reversed(covered):
            rest = rest[:b] + rest[e:]
        # the file's header and helpers describe what all of its tests check
        file_level[f] = cites(rest)
        for m in ms:
            weak.setdefault(f"{m.group(1)}.{m.group(2)}", set()).update(file_level[f])
    return tests, file_level


def pytests(src, files):
    tests = {}
    for f in files:
        if f.startswith("python/tests/") and f.endswith(".py"):
            text = read(src, f)
            parts = re.split(r"^def (test_\w+)", text, flags=re.M)
            for i in range(1, len(parts), 2):
                tests[f"{os.path.basename(f)[:-3]}.{parts[i]}"] = cites(parts[i + 1])
    return tests


def collect(src):
    files = source_files(src)
    where = {}
    for f in files:
        for i in cites(read(src, f)):
            where.setdefault(i, set()).add(f)
    weak = {}
    tests, file_level = gtests(src, files, weak)
    tests.update(pytests(src, files))
    for t, ids in tests.items():
        for i in ids:
            where.setdefault(i, set()).add("(test name)")
    by_id = {}   # tests that cite the ID in their name, body or the comment above them
    for t, ids in tests.items():
        for i in ids:
            by_id.setdefault(i, set()).add(t)
    by_file = {}  # tests whose file cites the ID in its header or helpers
    for t, ids in weak.items():
        for i in ids:
            by_file.setdefault(i, set()).add(t)
        tests[t] = tests[t] | ids
    return files, where, by_id, by_file, tests


UNTESTED_HEADING = "## Cited in code, no test yet"


def parse_index(src):
    """{ID: cells} for the rule table and for the table under UNTESTED_HEADING."""
    rows, untested = {}, {}
    text = read(src, INDEX)
    if not text:
        sys.exit(f"rules_check: {INDEX} missing")
    table = rows
    for line in text.split("\n"):
        if line.startswith("## "):
            table = untested if line.strip() == UNTESTED_HEADING else rows
        m = INDEX_ROW.match(line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            if m.group(1) in rows or m.group(1) in untested:
                sys.exit(f"rules_check: {INDEX} lists {m.group(1)} twice")
            table[m.group(1)] = cells
    return rows, untested


def sort_key(i):
    fam, rest = i.split("-")
    num = re.match(r"\d+", rest).group(0)
    return (fam, int(num), rest[len(num):])


def check_index(src):
    files, where, by_id, by_file, tests = collect(src)
    rows, untested = parse_index(src)
    bad = []
    for i in sorted(set(where) - set(rows) - set(untested), key=sort_key):
        bad.append(f"{i} is cited ({', '.join(sorted(where[i])[:4])}) but not in {INDEX}")
    for i, cells in sorted(rows.items(), key=lambda kv: sort_key(kv[0])):
        if len(cells) != 3 or not all(cells):
            bad.append(f"{INDEX}: row {i} needs three filled cells: rule | mirrors | tests")
            continue
        if i not in by_id and i not in by_file:
            bad.append(f"{i} is in {INDEX} but no test cites it")
            continue
        named = re.findall(r"`([A-Za-z0-9_]+\.[A-Za-z0-9_]+)`", cells[2])
        if not named:
            bad.append(f"{INDEX}: row {i} names no test (`Suite.Name`)")
        for t in named:
            if t not in tests:
                bad.append(f"{INDEX}: row {i} names {t}, which is not a test")
            elif i not in tests[t]:
                bad.append(f"{INDEX}: row {i} names {t}, which does not cite {i}")
    for i, cells in sorted(untested.items(), key=lambda kv: sort_key(kv[0])):
        # the known gaps: cited by code and by no test; once a test cites one it moves up
        if i in by_id or i in by_file:
            citing = ", ".join(sorted(by_id.get(i, by_file.get(i)))[:3])
            bad.append(f"{i} is under '{UNTESTED_HEADING}' but a test cites it: move it "
                       f"into the rule table ({citing})")
        elif i not in where:
            bad.append(f"{i} is under '{UNTESTED_HEADING}' but nothing cites it")
        if len(cells) != 3 or not all(cells):
            bad.append(f"{INDEX}: row {i} needs three filled cells: rule | mirrors | cited in")
    if bad:
        print("\n".join(bad))
        return 1
    print(f"rules_check: {len(rows)} rules indexed with their tests, {len(untested)} cited by "
          f"code without a test (listed as such); every cited ID is in {INDEX}")
    return 0


HISTORY = re.compile(r"\b(?:issues?|sessions?)\s*#?\d+(?!\w)", re.I)


def comments(text, path):
    """The comment text of a C/C++/CMake/Python/shell file, line by line."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        if path.endswith((".cpp", ".hpp", ".h", ".c", ".cc")):
            k = line.find("//")
            if k >= 0:
                out.append((n, line[k:]))
            elif line.lstrip().startswith(("/*", "*")):
                out.append((n, line))
        else:
            k = line.find("#")
            if k >= 0:
                out.append((n, line[k:]))
    return out


def check_history(src):
    files = source_files(src)
    bad = []
    for f in files:
        text = read(src, f)
        if f.startswith("tests/"):
            for m in TEST_MACRO.finditer(text):
                suite, name = m.group(1), m.group(2)
                if re.search(r"Issue\d", suite) or re.search(r"Issue\d|(^|_)Item\d", name):
                    bad.append(f"{f}: test {m.group(1)}.{m.group(2)} is named after an issue")
        if f.startswith(("src/", "include/", "tests/")) or f in ("CMakeLists.txt",) or \
                f.startswith("cmake/"):
            if f.endswith((".md", ".txt")) and f != "CMakeLists.txt":
                continue
            for n, c in comments(text, f):
                m = HISTORY.search(c)
                if m and not re.search(r"#(include|define|if|endif|pragma|else|undef)", c):
                    bad.append(f"{f}:{n}: comment cites history ({m.group(0)!r}): "
                               f"{c.strip()[:100]}")
    if bad:
        print("\n".join(bad))
        return 1
    print(f"rules_check: no suite named after an issue, no comment citing an issue or session "
          f"({len(files)} files)")
    return 0


def skeleton(src):
    files, where, by_id, by_file, tests = collect(src)
    for i in sorted(where, key=sort_key):
        t = sorted(by_id.get(i, ()))
        fl = sorted(by_file.get(i, set()) - set(t))
        print(f"{i}\t{len(t)}\t{' '.join(t)}\t{' '.join(fl[:3])}\t{' '.join(sorted(where[i])[:5])}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("index", "history", "skeleton"):
        sys.exit("usage: rules_check.py SRC index|history|skeleton")
    sys.exit({"index": check_index, "history": check_history,
              "skeleton": skeleton}[sys.argv[2]](sys.argv[1]))

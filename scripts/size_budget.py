#!/usr/bin/env python3
"""The size budget: no hand-written source file over 800 lines, no class over 40 member functions.

Usage: scripts/size_budget.py [--max-lines 800] [--max-methods 40] [--report]

What counts: every C++ file (.cc, .h) and JavaScript file (.js: the dashboard, the FlowFuse driver
package, benchmark scripts; lines only) under src/, bench/, fuzz/, tests/ and integrations/ that
git tracks, except tests (*_test.cc, *_test_support.h, *.test.js, tests/ and a package's test/: a
test file is a list of cases, read one at a time) and the literal tables named in EXEMPT below. Member functions are counted per class or struct
body in those files: declarations and inline definitions, constructors and operators included,
nested classes counted on their own.

A file or class over its budget today is listed in scripts/size_budget.allow with the size it
had when the budget came (a ratchet): it may shrink, never grow, and once it fits the budget its
line must go. Anything else over the budget fails. Exit status 1 on any failure, with one line per
finding saying what to do; --report prints every measured file and class over half the budget.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from long_functions import strip_code  # noqa: E402 (comments and literals blanked, lines kept)

ROOTS = ("src/", "bench/", "fuzz/", "tests/", "integrations/")
# Literal tables: data written as code (schemas, type lists); splitting them explains nothing.
EXEMPT = {
    "src/cluster/apiserver/openapi_schemas.cc": "the OpenAPI schema documents the server serves",
    "src/kube/schema/kube_types.cc": "the Kubernetes object schemas the model validates against",
}
ALLOW_FILE = "scripts/size_budget.allow"


def is_test(path):
    base = os.path.basename(path)
    return (path.startswith("tests/") or "/test/" in path or base.endswith("_test.cc") or
            base.endswith("_test_support.h") or base.endswith("_test.h") or
            base.endswith(".test.js"))


def tracked_sources(root):
    # Tracked files and new ones not ignored (a file added by the change counts before its commit).
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--",
                          *ROOTS], cwd=root, check=True, capture_output=True, text=True).stdout
    return sorted({p for p in out.split() if p.endswith((".cc", ".h", ".js")) and
                   not is_test(p) and "node_modules/" not in p and p not in EXEMPT and
                   os.path.exists(os.path.join(root, p))})


# Thread-safety and attribute macros that look like calls on a data member.
ANNOTATIONS = re.compile(
    r"\b(GUARDED_BY|PT_GUARDED_BY|ACQUIRED_AFTER|ACQUIRED_BEFORE|REQUIRES|REQUIRES_SHARED|"
    r"EXCLUDES|ACQUIRE|RELEASE|TRY_ACQUIRE|RETURN_CAPABILITY|CAPABILITY|SCOPED_CAPABILITY|"
    r"alignas|__attribute__)\s*\([^()]*\)")
CLASS_HEAD = re.compile(r"\b(class|struct)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*(?:::\w+)*)"
                        r"(?:\s+final)?\s*(?::[^;{()]*)?\{")


def drop_angles(s):
    """Template arguments removed (a std::function<void(int)> member is no function)."""
    prev = None
    while prev != s:
        prev = s
        s = re.sub(r"<[^<>;{}]*>", "", s)
    return s


def is_member_function(stmt):
    s = ANNOTATIONS.sub("", stmt).strip()
    if not s or re.match(r"(using|friend|typedef|static_assert|public|private|protected)\b", s):
        return False
    if re.match(r"(enum|class|struct|union)\b", s):
        return False
    s = drop_angles(s)
    paren = s.find("(")
    if paren < 0:
        return False
    eq = s.find("=")
    brace = s.find("{")
    if eq >= 0 and eq < paren and not re.search(r"\boperator\s*[=!<>+\-*/%&|^]*=", s[:paren + 1]):
        return False  # a data member initialised with a call
    if 0 <= brace < paren:
        return False  # a data member with a braced initialiser
    return re.search(r"[\w~>\]]\s*\($", s[:paren + 1]) is not None


def class_sizes(path, text):
    """(class name, member function count) for every class/struct body in `text`."""
    code = strip_code(text)
    results = []
    for m in CLASS_HEAD.finditer(code):
        start = m.end()
        depth, i, stmt_start, count = 1, start, start, 0
        while i < len(code) and depth > 0:
            c = code[i]
            if c == "{":
                if depth == 1:
                    head = code[stmt_start:i]
                    if CLASS_HEAD.search(head + "{") is None and is_member_function(head):
                        count += 1  # an inline definition
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 1:
                    stmt_start = i + 1
                    # `};` after a nested body, or `} ` then the next member
            elif c == ";" and depth == 1:
                stmt = code[stmt_start:i]
                if is_member_function(stmt):
                    count += 1
                stmt_start = i + 1
            elif c == ":" and depth == 1 and re.search(r"\b(public|private|protected)\s*$",
                                                       code[stmt_start:i]):
                stmt_start = i + 1
            i += 1
        results.append((m.group(2), count))
    return results


def load_allowances(root):
    allow = {}
    path = os.path.join(root, ALLOW_FILE)
    if not os.path.exists(path):
        return allow
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 3 or parts[0] not in ("file", "class") or not parts[2].isdigit():
                sys.exit(f"{ALLOW_FILE}:{n}: expected 'file PATH LINES' or 'class PATH:NAME N'")
            allow[(parts[0], parts[1])] = int(parts[2])
    return allow


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-lines", type=int, default=800)
    ap.add_argument("--max-methods", type=int, default=40)
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args()
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True,
                          capture_output=True, text=True).stdout.strip()
    allow = load_allowances(root)
    used = set()
    failures = []

    def judge(kind, key, size, budget, unit):
        allowed = allow.get((kind, key))
        if allowed is not None:
            used.add((kind, key))
            if size > allowed:
                failures.append(f"{key}: {size} {unit}, over its allowance of {allowed} "
                                f"({ALLOW_FILE}): split it at a seam, do not grow it")
            elif size <= budget:
                failures.append(f"{key}: {size} {unit} fits the budget of {budget} now: remove its "
                                f"line from {ALLOW_FILE}")
        elif size > budget:
            failures.append(f"{key}: {size} {unit}, over the budget of {budget}: split it where "
                            f"it has a seam (docs/design.md §7)")
        if args.report and size > budget // 2:
            print(f"{size:6d} {unit:16s} {key}")

    for path in tracked_sources(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        judge("file", path, text.count("\n"), args.max_lines, "lines")
        if path.endswith(".js"):
            continue  # lines only: a module's functions are not a class's members
        seen = {}
        for name, count in class_sizes(path, text):
            key = f"{path}:{name}"
            seen[key] = max(seen.get(key, 0), count)
        for key, count in seen.items():
            judge("class", key, count, args.max_methods, "member functions")
    for kind, key in sorted(set(allow) - used):
        failures.append(f"{ALLOW_FILE}: '{kind} {key}' names nothing measured: remove the line")
    for f in failures:
        print(f"size budget: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

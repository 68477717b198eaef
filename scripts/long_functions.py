#!/usr/bin/env python3
"""Lists C++ function bodies (and lambdas) longer than a bound.

Usage: scripts/long_functions.py [--max N] [--min N] [PATH...]

Scans the .cc/.h files under PATH (default: src), skipping tests (*_test.cc, test_support/) and
generated tables (files whose first lines say they are generated). A function's length is the
number of lines from the line of its opening brace's declaration to its closing brace. Lambdas
are reported too, as "Enclosing::<lambda>", with their own length (they also count in the
function that holds them).

Prints "path:line name length" for every body of at least --min lines (default: --max + 1),
longest first, and exits 1 when any body is over --max (default 150).

The scanner matches braces after removing comments, string and character literals (raw strings
included); it does not run the preprocessor, so code split across #if branches with unbalanced
braces can confuse it.
"""

import argparse
import os
import re
import sys

GENERATED = re.compile(r"generated|do not edit", re.IGNORECASE)


def strip_code(text):
    """Returns `text` with comments and literals blanked out, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^ ()\\\t\n]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2 : j]))
            i = j
        elif c in "\"'":
            # A digit separator (1'000'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                if text[i - 1].isdigit() or re.match(r"[0-9a-fA-F]", text[i - 1]):
                    out.append(" ")
                    i += 1
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * max(0, j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blank_preprocessor(code):
    """Blanks preprocessor lines (with continuations)."""
    lines = code.split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[k] = ""
    return "\n".join(lines)


NAME_BEFORE_PAREN = re.compile(r"(~?[A-Za-z_][\w:]*(?:<[^<>()]*>)?|operator\s*\S+?)\s*\($")


def header_kind(header):
    """Classifies the text before a '{': namespace, class, function, lambda or other."""
    h = " ".join(header.split())
    h = re.sub(r"^((public|private|protected)\s*:\s*)+", "", h)
    if re.search(r"\bnamespace\b", h) and "(" not in h:
        return "namespace", re.sub(r".*\bnamespace\b", "", h).strip() or "<anon>"
    if re.search(r'\bextern\s+"', h):
        return "namespace", "extern"
    m = re.match(r"(?:template\s*<.*>\s*)?(?:class|struct|union)\s+(?:\[\[[^]]*\]\]\s*)?(\w+)", h)
    if m and "(" not in h.split(":")[0]:
        return "class", m.group(1)
    if re.search(r"\benum\b", h):
        return "other", ""
    # A lambda: "...](args) mutable -> T {" or "...] {".
    if re.search(r"\]\s*(\([^()]*(\([^()]*\)[^()]*)*\))?\s*(mutable|constexpr|noexcept|"
                 r"->\s*[\w:<>,\s*&]+|\s)*$", h):
        return "lambda", "<lambda>"
    return "function", h


def function_name(header):
    """The declarator name of a function header such as "int Foo::Bar(int x) const"; None when
    the header has no parameter list (a brace initialiser, an array)."""
    h = " ".join(header.split())
    p = h.find("(")
    if p < 0 or ")" not in h[p:]:
        return None
    m = NAME_BEFORE_PAREN.search(h[: p + 1])
    return m.group(1) if m else None


def scan(path, text):
    """Yields (line, name, length) for each function and lambda body in `text`."""
    code = blank_preprocessor(strip_code(text))
    # Scope stack entries: (kind, name, start_line).
    stack = []
    header_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";":
            if not stack or stack[-1][0] in ("namespace", "class"):
                header_start = i + 1
        elif c == "{":
            parent = stack[-1][0] if stack else "namespace"
            header = code[header_start:i]
            if parent in ("namespace", "class"):
                kind, raw = header_kind(header)
                if kind == "function":
                    name = function_name(raw)
                    if name is None:
                        kind, raw = "other", ""  # a brace initialiser, array, ...
                    else:
                        raw = name
                        if parent == "class" and "::" not in name:
                            raw = stack[-1][1] + "::" + name
                elif kind == "lambda":
                    kind = "other"  # a lambda at namespace scope: rare; count as data
                # The body starts at the first line of its declaration.
                skipped = header[: len(header) - len(header.lstrip())].count("\n")
                start = line - header.count("\n") + skipped
                stack.append((kind, raw, start))
            else:
                # Inside a function: look for a lambda opening.
                tail = code[max(0, i - 400) : i]
                kind, _ = header_kind(tail.split(";")[-1].split("{")[-1].split("}")[-1])
                if kind == "lambda":
                    owner = next((s[1] for s in reversed(stack) if s[0] == "function"), "")
                    stack.append(("lambda", owner + "::<lambda>", line))
                else:
                    stack.append(("block", "", line))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, name, start = stack.pop()
                if kind in ("function", "lambda"):
                    yield start, name, line - start + 1
            if not stack or stack[-1][0] in ("namespace", "class"):
                header_start = i + 1


def is_excluded(path, text):
    base = os.path.basename(path)
    if base.endswith("_test.cc") or "/test_support/" in path or "/testdata/" in path:
        return True
    return bool(GENERATED.search("\n".join(text.split("\n")[:5])))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max", type=int, default=150, help="longest allowed body, in lines")
    parser.add_argument("--min", type=int, help="list bodies of at least this many lines")
    parser.add_argument("paths", nargs="*", default=["src"])
    args = parser.parse_args()
    min_lines = args.min if args.min is not None else args.max + 1
    found = []
    for root in args.paths:
        files = [root] if os.path.isfile(root) else [
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
        for path in sorted(files):
            if not path.endswith((".cc", ".h")):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            if is_excluded(path, text):
                continue
            for start, name, length in scan(path, text):
                if length >= min_lines:
                    found.append((length, path, start, name))
    found.sort(key=lambda t: (-t[0], t[1], t[2]))
    for length, path, start, name in found:
        print(f"{path}:{start} {name} {length}")
    return 1 if any(length > args.max for length, *_ in found) else 0


if __name__ == "__main__":
    sys.exit(main())

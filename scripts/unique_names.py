#!/usr/bin/env python3
"""One basename per concept: no two source files under src/ share a name in different folders.

Usage: scripts/unique_names.py

Two `status.cc` (the Status type and a project's status) or two `object_cache.h` (the informer's
store and the embedded cluster's controllers' cache) make a reader open the wrong one; each gets
a name that says which it is. What counts: the .cc and .h files under src/ that git tracks (and
new ones not yet added), by name without the extension, except tests (*_test.cc, *_test.h,
*_test_support.h, *_test_util.h, test_util.h and the test_support/ folders: helpers named after
what they help). Exits 1 naming each shared basename and its folders.
"""
import collections
import os
import subprocess
import sys


def sources():
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "src"],
        capture_output=True, text=True, check=True).stdout
    return [p for p in out.split() if p.endswith((".cc", ".h")) and os.path.exists(p)]


def is_test(path):
    base = os.path.basename(path)
    return ("/test_support/" in path or base == "test_util.h" or
            base.endswith(("_test.cc", "_test.h", "_test_support.h", "_test_util.h")))


def main():
    folders = collections.defaultdict(set)
    for path in sources():
        if is_test(path):
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        folders[name].add(os.path.dirname(path))
    shared = {name: sorted(dirs) for name, dirs in folders.items() if len(dirs) > 1}
    for name, dirs in sorted(shared.items()):
        print(f"{name}: in {', '.join(dirs)} — give each a name that says which it is")
    return 1 if shared else 0


if __name__ == "__main__":
    sys.exit(main())

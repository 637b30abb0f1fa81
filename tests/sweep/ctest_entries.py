#!/usr/bin/env python3
"""The ctest entries of the sweep's test modules (run by tests/CMakeLists.txt at configure time).

usage: ctest_entries.py MODULE.py...
Prints one line per entry, "NAME UNITTEST-NAME [UNITTEST-NAME...]": a module's in-process classes (those
derived from unittest.TestCase directly: arithmetic on hand-made records, no process started) together as
the module's own entry, and every other class that has tests (SweepTestCase, AppTestCase and the like: each
test runs the sweep against fakes and mostly waits on them) as an entry of its own. Entries of their own let
ctest overlap the waiting of one class with another's; the in-process ones together cost one interpreter.
Standard library only (ast): nothing is imported or run.
"""
import ast
import os
import sys


def test_methods(node):
    return [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name.startswith("test")]


def base_names(node):
    return [ast.unparse(b) for b in node.bases]


def entries(path):
    module = os.path.splitext(os.path.basename(path))[0]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def has_tests(name, seen=()):
        # A class runs the tests it defines and those of its bases defined in the same module.
        node = classes.get(name)
        if node is None or name in seen:
            return False
        return bool(test_methods(node)) or any(has_tests(b, seen + (name,)) for b in base_names(node))

    in_process, own = [], []
    for name, node in classes.items():
        if not has_tests(name):
            continue
        (in_process if base_names(node) == ["unittest.TestCase"] else own).append(name)
    stem = module.replace("test_", "sweep_", 1)
    found = []
    if in_process:
        found.append((stem, [f"{module}.{c}" for c in in_process]))
    for c in own:
        found.append((f"{stem}.{c}", [f"{module}.{c}"]))
    return found


def main(paths):
    for path in paths:
        for name, names in entries(path):
            print(" ".join([name] + names))


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""The longest hand-written files and functions of tokenmill's product code (lib/, trainer/).

Usage: scripts/longest.py [TOP] [ROOT]   (default: 10, the repository)
A function is a top-level or member definition: a line ending in '{' that opens a brace block
at namespace or class depth, whose header contains '('; its length counts the lines from its
first header line to its closing brace. Generated files (lib/pretokenize/unicode_tables.cc)
are left out. A heuristic, not a parser: good enough to find long functions.
"""
import os
import re
import sys

GENERATED = {"lib/pretokenize/unicode_tables.cc"}


def files(root):
    for top in ("lib", "trainer"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".cc", ".h")):
                    path = os.path.relpath(os.path.join(dirpath, name), root)
                    if path not in GENERATED:
                        yield path


def functions(text):
    """(name, first line, length) of each function-like block."""
    lines = text.split("\n")
    depth = 0
    stack = []  # (depth at open, kind, start line, name)
    header_start = None
    in_block_comment = False
    for i, raw in enumerate(lines):
        line = raw
        if in_block_comment:
            if "*/" in line:
                line = line.split("*/", 1)[1]
                in_block_comment = False
            else:
                continue
        line = re.sub(r'R"\((.*?)\)"', '""', line)  # raw strings (on one line)
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        line = re.sub(r"'(\\.|[^'\\])'", "''", line)
        line = line.split("//", 1)[0]
        line = re.sub(r"/\*.*?\*/", "", line)  # comments within a line
        if "/*" in line:
            line = line.split("/*", 1)[0]
            in_block_comment = True
        stripped = line.strip()
        if stripped and header_start is None and not stripped.startswith("#"):
            header_start = i
        for ch in line:
            if ch == "{":
                outer = not stack or stack[-1][1] in ("namespace", "class")
                header = " ".join(l.strip() for l in lines[header_start:i + 1]) if header_start is not None else ""
                if re.search(r"\b(namespace)\b", header) and "(" not in header:
                    kind = "namespace"
                elif re.search(r"\b(class|struct|union|enum)\b", header) and "(" not in header.split("{")[0]:
                    kind = "class"
                elif outer and "(" in header and not re.search(r"=\s*\{?$", header.split("{")[0].strip()):
                    kind = "function"
                else:
                    kind = "block"
                name = ""
                if kind == "function":
                    m = re.search(r"([\w:~<>]+)\s*\(", header)
                    name = m.group(1) if m else "?"
                stack.append((depth, kind, header_start if header_start is not None else i, name))
                depth += 1
            elif ch == "}":
                depth -= 1
                if stack:
                    _, kind, start, name = stack.pop()
                    if kind == "function":
                        yield name, start + 1, i - start + 1
        if stripped.endswith((";", "{", "}")) or stripped.startswith("#") or not stripped:
            header_start = None


def main():
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..")
    sizes, funcs = [], []
    for path in files(root):
        text = open(os.path.join(root, path), encoding="utf-8").read()
        sizes.append((text.count("\n"), path))
        for name, line, length in functions(text):
            funcs.append((length, f"{path}:{line}", name))
    print("longest files (lines):")
    for n, path in sorted(sizes, reverse=True)[:top]:
        print(f"  {n:5d}  {path}")
    print("longest functions (lines):")
    for n, where, name in sorted(funcs, reverse=True)[:top]:
        print(f"  {n:5d}  {name}  ({where})")


if __name__ == "__main__":
    main()

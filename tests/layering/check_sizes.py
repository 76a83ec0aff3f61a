#!/usr/bin/env python3
"""Checks that host sources stay small enough to read: no file of core/,
sdk/, cli/ or plugins/ over 600 lines, no function over 120.

Host sources are the C and C++ files (.cpp .hpp .inc .c .h); GPU kernel
sources (.cl .comp .glsl) are not checked.

Functions are found by a brace-matching scan, good enough for this tree:
comments, string and character literals (raw strings included) and
preprocessor lines are blanked first; then every '{' opened where a
declaration may stand (file, namespace, class or extern "C" scope) starts
a function body when the text before it since the last ';', '{' or '}'
holds a '(' and is no class, struct, union, enum or namespace head nor an
initializer ('= {'). A function's length runs from the line of its opening
brace to that of its closing one. Its limits:
  - both branches of an #if are read, so a function whose braces differ
    between branches (none here) would throw the count off;
  - a constructor whose member initializers use braces (a_{x}) is not seen
    as a function;
  - the name printed is the identifier before the first '(' of the head.
A lambda is measured as part of the function it is written in.

    check_sizes.py [--root DIR]    exit 0: sizes kept; 1: offenders listed
"""

import argparse
import os
import re
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120

TREES = ["core", "sdk", "cli", "plugins"]
EXTENSIONS = (".cpp", ".hpp", ".inc", ".c", ".h")

# Files allowed past the limits: generated sources and data tables only,
# each with the reason. None today.
EXEMPT = {
    # "path/from/root.cpp": "why",
}


def blank_literals(text):
    """Returns text with comments, literals and preprocessor lines turned into
    spaces (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (line_start and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n:
                k = text.find("\n", j)
                k = n if k < 0 else k
                if k > 0 and text[k - 1] == "\\":
                    j = k + 1
                    continue
                j = k
                break
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            out.append(c)
            i += 1
            line_start = True
            continue
        if c not in " \t":
            line_start = False
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
        elif c == '"' and i > 0 and text[i - 1] == "R" and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_")
                                                              or text[i - 3:i - 1] in ("u8",) or text[i - 2] in "uUL"):
            m = re.match(r'"([^()\\ \n]{0,16})\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum() and text[i - 2:i] not in ("u8",)
                                             and text[i - 1] not in "uUL")):
            # A string or character literal; a ' after a digit is a digit separator.
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_template_prefix(head):
    head = head.strip()
    while True:
        head = re.sub(r"^\[\[.*?\]\]\s*", "", head)
        if not head.startswith("template"):
            return head
        depth, i = 0, len("template")
        while i < len(head):
            if head[i] == "<":
                depth += 1
            elif head[i] == ">":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        head = head[i + 1:].strip()


def classify(head):
    """What a '{' opened at declaration level starts: 'scope' (namespace,
    class, extern "C"), 'function' or 'other' (an initializer)."""
    h = strip_template_prefix(head)
    # Searched at the end of the head: a macro call without a ';' may stand before.
    if re.search(r"\bnamespace\s*[\w:]*\s*$", h) or re.search(r'\bextern\s*("\s*")?\s*$', h):
        return "scope"
    if re.search(r"\b(class|struct|union|enum)\b[^()]*$", h):
        return "scope"
    if h.endswith("=") or "(" not in h:
        return "other"
    return "function"


def function_name(head):
    h = strip_template_prefix(head)
    m = re.search(r"([~\w:]+(?:\s*operator\s*[^\s(]+)?)\s*\(", h)
    return m.group(1) if m else h[:40]


def long_functions(text, limit):
    """(line, name, length) of each function body longer than limit lines."""
    code = blank_literals(text)
    found = []
    stack = []  # (kind, start line, head)
    head_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            at_declaration_level = all(k == "scope" for k, _, _ in stack)
            kind = classify(code[head_start:i]) if at_declaration_level else "inner"
            stack.append((kind, line, code[head_start:i]))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, start, head = stack.pop()
                if kind == "function" and line - start + 1 > limit:
                    found.append((start, function_name(head), line - start + 1))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return found


def source_files(root):
    for tree in TREES:
        top = os.path.join(root, tree)
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    args = parser.parse_args()
    errors = []
    checked = 0
    for rel, path in source_files(args.root):
        if rel in EXEMPT:
            continue
        checked += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            errors.append(f"{rel}: {lines} lines (the limit is {MAX_FILE_LINES}): split it by topic")
        for start, name, length in long_functions(text, MAX_FUNCTION_LINES):
            errors.append(f"{rel}:{start}: function {name} is {length} lines (the limit is {MAX_FUNCTION_LINES})")
    for e in errors:
        print(e)
    if errors:
        print(f"check_sizes: {len(errors)} error(s) in {checked} files")
        return 1
    print(f"check_sizes: {checked} files, none over {MAX_FILE_LINES} lines, no function over {MAX_FUNCTION_LINES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

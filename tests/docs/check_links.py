#!/usr/bin/env python3
"""Every relative link in the project's Markdown files resolves: the file (or
folder) exists in the tree and, for a link with #anchor into a Markdown file,
a heading of that file gives that anchor (GitHub's rule: lower case, spaces to
hyphens, punctuation dropped). Links to http(s), mailto and inside code are
not checked.

usage: check_links.py [REPO_ROOT]
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
SKIP_DIRS = {".git", "node_modules"}
LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_files():
    """The project's Markdown files: those git tracks or would track, else a
    walk of the tree that leaves out build directories and test data."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "*.md"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        files = [root / f for f in out if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for p in sorted(root.rglob("*.md")):
            rel = p.relative_to(root).parts
            dirs = [root.joinpath(*rel[:i + 1]) for i in range(len(rel) - 1)]
            if any(part in SKIP_DIRS or part.startswith("build") for part in rel[:-1]) or \
               any((d / "CMakeCache.txt").exists() for d in dirs):
                continue
            files.append(p)
    for p in sorted(files):
        rel = p.relative_to(root).parts
        if rel[:2] == ("tests", "data") or not p.is_file():
            continue
        yield p


def prose(text):
    """The text outside fenced code blocks and inline code spans."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found, fenced = set(), False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
            elif not fenced and line.startswith("#"):
                found.add(slug(line.lstrip("#")))
        cache[path] = found
    return cache[path]


bad = 0
checked = 0
for md in markdown_files():
    for n, line in enumerate(prose(md.read_text(encoding="utf-8")), 1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            checked += 1
            path_part, _, anchor = target.partition("#")
            dest = (md.parent / path_part).resolve() if path_part else md
            if not dest.exists():
                print(f"{md.relative_to(root)}: link to {target}: no such file")
                bad += 1
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                print(f"{md.relative_to(root)}: link to {target}: no heading gives #{anchor}")
                bad += 1
print(f"{checked} relative links checked, {bad} broken")
sys.exit(1 if bad else 0)

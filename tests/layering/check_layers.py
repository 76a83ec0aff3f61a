#!/usr/bin/env python3
"""Checks that the source tree keeps its layers: every #include goes down.

The tree is cut into rooms (a folder, or a few headers) that stand on
floors. A file may include files of its own room and of rooms on lower
floors; an include that goes up a floor, or sideways into another room of
the same floor, is an error, and so is any cycle between rooms. The same
rule holds twice: between the top-level parts of the project, and between
the rooms inside core/.

Both include forms are read: "..." (resolved next to the including file
first, then on the include paths) and <...> (on the include paths only).
Includes that resolve to no file of the tree (the standard library,
system packages) are not checked, except <hetero/...>: one of those that
resolves to nothing is an error too, since it names a header of ours that
does not exist.

    check_layers.py [--root DIR]    exit 0: layers kept; 1: errors listed

Add a new folder to the tables below; a source file in no room is an error.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

# Top-level parts of the project, lowest floor first. A room holds the files
# under its folders (or the files named); a longer prefix wins.
TOP_FLOORS = [
    # floor, room,         paths
    (0, "plugin_api", ["plugin_api/"]),            # the C ABI: includes nothing of ours
    (1, "sdk",        ["sdk/"]),                   # header-only helpers over the ABI, conformance kit
    (2, "core",       ["core/"]),                  # libhetero
    (2, "plugins",    ["plugins/"]),               # providers: the ABI and the SDK only, never core
    (3, "cli",        ["cli/"]),
    (3, "bench",      ["bench/"]),
    (3, "tests",      ["tests/"]),
    (3, "examples",   ["examples/"]),
    # hetero-conformance --model reads the model with libhetero: the one file
    # of the kit above the core (built only where the core is).
    (3, "conformance_model", ["sdk/conformance/model_needs.cpp"]),
]

# Rooms inside core/ (each with its sources and its public headers).
CORE_FLOORS = [
    (0, "util",      ["core/util/", "core/include/hetero/error.hpp", "core/include/hetero/log.hpp",
                      "core/include/hetero/progress.hpp", "core/include/hetero/crash_report.hpp"]),
    (1, "model",     ["core/model/", "core/include/hetero/model/"]),       # files: GGUF, llama2c, ModelFile
    (1, "registry",  ["core/registry/", "core/probe/", "core/include/hetero/registry.hpp"]),  # plugins, devices
    (2, "tokenizer", ["core/tokenizer/", "core/include/hetero/tokenizer/"]),  # reads vocabularies from model files
    (3, "runtime",   ["core/runtime/", "core/include/hetero/runtime/"]),   # graph, plan, session, cost-model interface
    (4, "solver",    ["core/solver/", "core/include/hetero/solver/"]),     # partition solver, planner, prior costs
    (4, "schedule",  ["core/schedule/", "core/include/hetero/schedule/"]), # a plan cut into tasks, hand-overs, waits
    # The session's implementation compiles and runs a schedule; its header
    # (hetero/runtime/session.hpp) stays with the runtime, below the solver.
    (5, "session",   ["core/runtime/session.cpp", "core/runtime/session_compile.cpp", "core/runtime/session_run.cpp",
                      "core/runtime/session_device.cpp", "core/runtime/session_hidden.cpp", "core/runtime/session_parts.hpp"]),
    (5, "profile",   ["core/profile/", "core/include/hetero/profile/"]),   # profiler, profile store, measured costs
    (5, "config",    ["core/config/", "core/include/hetero/config.hpp"]),  # JSON config (its plan rules are the solver's)
    (6, "sim",       ["core/sim/", "core/include/hetero/sim/"]),           # SoC simulator
    (6, "chat",      ["core/chat/", "core/include/hetero/chat/"]),         # templates, completion, prefix cache
    (7, "engine",    ["core/engine/", "core/include/hetero/engine/"]),     # run-time policy: runtimes, loaded models
    (8, "api",       ["core/api/", "core/include/hetero/hetero.h", "core/include/hetero/hetero.hpp"]),  # C API
]

# Where <...> and "..." includes are looked up after the including file's own
# folder (the include directories the CMake targets declare).
INCLUDE_DIRS = ["core/include", "plugin_api", "sdk/include", "sdk/conformance", "plugins/*/src"]

SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cpp", ".cc", ".inc")
SKIP_DIRS = {".git", "node_modules"}
SKIP_PATHS = {"tests/data"}  # test data (vocabularies, reference outputs), not our sources

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Rooms:
    """Maps a repository path to its room by the longest matching prefix."""

    def __init__(self, floors):
        self.floor = {room: floor for floor, room, _ in floors}
        self.prefixes = sorted(((p, room) for _, room, paths in floors for p in paths), key=lambda x: -len(x[0]))

    def room_of(self, path):
        for prefix, room in self.prefixes:
            if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
                return room
        return None


def source_files(root):
    tops = [p.rstrip("/") for _, _, paths in TOP_FLOORS for p in paths]
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and f"{rel}/{d}" not in SKIP_PATHS)
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def include_dirs(root):
    dirs = []
    for pattern in INCLUDE_DIRS:
        if "*" in pattern:
            head, tail = pattern.split("*", 1)
            base = os.path.join(root, head)
            if os.path.isdir(base):
                dirs += [head + d + tail for d in sorted(os.listdir(base)) if os.path.isdir(os.path.join(base, d + tail))]
        else:
            dirs.append(pattern)
    return dirs


def resolve(root, dirs, including, quote, name):
    """The repository path an include names, or None when it is not ours."""
    candidates = [os.path.join(os.path.dirname(including), name)] if quote == '"' else []
    candidates += [os.path.join(d, name) for d in dirs]
    for c in candidates:
        path = os.path.normpath(c).replace(os.sep, "/")
        if not path.startswith("../") and os.path.isfile(os.path.join(root, path)):
            return path
    return None


def read_includes(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE_RE.match(line)
            if m:
                yield lineno, m.group(1), m.group(2)


def find_cycles(edges):
    """Strongly connected components of more than one room (Tarjan)."""
    graph = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(list(graph)):
        if v not in index:
            visit(v)
    return out


def check(root):
    top, core = Rooms(TOP_FLOORS), Rooms(CORE_FLOORS)
    dirs = include_dirs(root)
    errors = []
    # (level, from room, to room) -> first include that makes the edge
    edges = {}
    for path in source_files(root):
        src_top = top.room_of(path)
        src_core = core.room_of(path) if src_top == "core" else None
        if src_top is None or (src_top == "core" and src_core is None):
            errors.append(f"{path}: in no room; add its folder to the tables in {os.path.basename(__file__)}")
            continue
        for lineno, quote, name in read_includes(root, path):
            spelled = f"{quote}{name}{'>' if quote == '<' else quote}"
            target = resolve(root, dirs, path, quote, name)
            if target is None:
                if name.startswith("hetero/"):
                    errors.append(f"{path}:{lineno}: #include {spelled} names no header of the tree")
                continue
            dst_top = top.room_of(target)
            if dst_top is None:
                continue  # e.g. a file of tests/data
            where = f"{path}:{lineno}: #include {spelled}"
            if dst_top != src_top:
                edges.setdefault(("top", src_top, dst_top), where)
                if top.floor[dst_top] >= top.floor[src_top]:
                    errors.append(f"{where}: {src_top} (floor {top.floor[src_top]}) may not include "
                                  f"{dst_top} (floor {top.floor[dst_top]}): {target}")
                continue
            if src_top != "core":
                continue
            dst_core = core.room_of(target)
            if dst_core is None or dst_core == src_core:
                continue
            edges.setdefault(("core", src_core, dst_core), where)
            if core.floor[dst_core] >= core.floor[src_core]:
                errors.append(f"{where}: core/{src_core} (floor {core.floor[src_core]}) may not include "
                              f"core/{dst_core} (floor {core.floor[dst_core]}): {target}")

    for level in ("top", "core"):
        level_edges = [(a, b) for (lv, a, b) in edges if lv == level]
        for comp in find_cycles(level_edges):
            members = set(comp)
            lines = [f"  {a} -> {b}: {edges[(level, a, b)]}" for (a, b) in sorted(level_edges)
                     if a in members and b in members]
            errors.append(f"cycle between {'core ' if level == 'core' else ''}rooms {', '.join(comp)}:\n" + "\n".join(lines))
    return errors


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")), help="repository root")
    args = parser.parse_args()
    errors = check(args.root)
    for e in errors:
        print(e)
    if errors:
        print(f"layering: {len(errors)} error(s); the floors are the tables at the top of {os.path.abspath(__file__)}")
        return 1
    print("layering: every include goes down a floor, no cycles between rooms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

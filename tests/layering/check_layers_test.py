#!/usr/bin/env python3
"""The layering check against small trees with planted faults.

Each test writes a tree of a few files into a temporary folder, runs
check_layers.py on it as CI does (a child process, --root), and looks at
the exit status and the messages: a clean tree passes; an include up a
floor, sideways, into a plugin from core, a cycle, an unknown folder or a
missing hetero header each fail, naming the file, the line and the edge.
"""

import os
import subprocess
import sys
import textwrap
import unittest

from tree_fixture import run_on_tree

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")

# A tree that keeps the layers: one file per room it touches, each including
# something lower.
CLEAN = {
    "plugin_api/hetero/ep_api.h": "#pragma once\n",
    "sdk/include/hetero/sdk/quant.hpp": "#pragma once\n#include <hetero/ep_api.h>\n",
    "core/include/hetero/error.hpp": "#pragma once\n#include <hetero/ep_api.h>\n",
    "core/include/hetero/model/model.hpp": "#pragma once\n#include <hetero/error.hpp>\n#include <hetero/sdk/quant.hpp>\n",
    "core/model/mapped_file.hpp": "#pragma once\n",
    "core/model/model_loader.cpp": '#include <hetero/model/model.hpp>\n#include "mapped_file.hpp"\n#include <vector>\n',
    "core/include/hetero/runtime/plan.hpp": "#pragma once\n#include <hetero/model/model.hpp>\n",
    "core/include/hetero/solver/solver.hpp": "#pragma once\n#include <hetero/runtime/plan.hpp>\n",
    "core/config/config.cpp": '#include "../model/mapped_file.hpp"\n#include <hetero/solver/solver.hpp>\n',
    "plugins/cpu/src/kernels.hpp": "#pragma once\n#include <hetero/ep_api.h>\n",
    "plugins/cpu/src/ops.cpp": '#include "kernels.hpp"\n#include <hetero/sdk/quant.hpp>\n',
    "tests/cpu/kernels_test.cpp": '#include "kernels.hpp"\n#include <hetero/solver/solver.hpp>\n',
    "tests/data/models/vocab/notes.h": '#include <hetero/solver/nothing.hpp>\n',  # test data: not read
}


class LayerCheck(unittest.TestCase):
    def run_checker(self, files):
        return run_on_tree(CHECKER, {path: textwrap.dedent(text) for path, text in files.items()})

    def planted(self, path, text):
        files = dict(CLEAN)
        files[path] = text
        return self.run_checker(files)

    def assert_planted_fails(self, path, text, *expected):
        """The clean tree with `path` holding `text` fails, saying each of
        `expected`; returns what the check printed."""
        rc, out = self.planted(path, text)
        self.assertEqual(rc, 1, out)
        for message in expected:
            self.assertIn(message, out)
        return out

    def test_clean_tree_passes(self):
        rc, out = self.run_checker(CLEAN)
        self.assertEqual(rc, 0, out)
        self.assertIn("no cycles", out)

    def test_include_up_a_core_floor_fails_naming_file_line_and_edge(self):
        self.assert_planted_fails("core/include/hetero/runtime/plan.hpp",
                                  "#pragma once\n#include <hetero/model/model.hpp>\n#include <hetero/solver/solver.hpp>\n",
                                  "core/include/hetero/runtime/plan.hpp:3: #include <hetero/solver/solver.hpp>: "
                                  "core/runtime (floor 3) may not include core/solver (floor 4)",
                                  # ...and the two includes make a cycle, reported with both edges.
                                  "cycle between core rooms runtime, solver",
                                  "runtime -> solver: core/include/hetero/runtime/plan.hpp:3",
                                  "solver -> runtime: core/include/hetero/solver/solver.hpp:2")

    def test_quoted_relative_include_up_a_floor_fails(self):
        self.assert_planted_fails("core/model/model_loader.cpp", '#include "../config/config.cpp"\n',
                                  'core/model/model_loader.cpp:1: #include "../config/config.cpp": core/model (floor 1) '
                                  "may not include core/config")

    def test_sideways_include_between_rooms_of_one_floor_fails(self):
        files = dict(CLEAN)
        files["core/include/hetero/registry.hpp"] = "#pragma once\n"
        files["core/include/hetero/model/model.hpp"] = "#pragma once\n#include <hetero/registry.hpp>\n"
        rc, out = self.run_checker(files)
        self.assertEqual(rc, 1, out)
        self.assertIn("core/model (floor 1) may not include core/registry (floor 1)", out)

    def test_plugin_including_core_fails(self):
        self.assert_planted_fails("plugins/cpu/src/ops.cpp", '#include "kernels.hpp"\n#include <hetero/model/model.hpp>\n',
                                  "plugins/cpu/src/ops.cpp:2: #include <hetero/model/model.hpp>: plugins (floor 2) "
                                  "may not include core (floor 2)")

    def test_abi_including_sdk_fails(self):
        self.assert_planted_fails("plugin_api/hetero/ep_api.h", "#pragma once\n#include <hetero/sdk/quant.hpp>\n",
                                  "plugin_api (floor 0) may not include sdk (floor 1)", "cycle between rooms plugin_api, sdk")

    def test_file_in_no_room_fails(self):
        self.assert_planted_fails("core/newroom/thing.cpp", "#include <hetero/error.hpp>\n", "core/newroom/thing.cpp: in no room")

    def test_missing_hetero_header_fails_and_system_headers_pass(self):
        out = self.assert_planted_fails("core/model/model_loader.cpp",
                                        "#include <vector>\n#include <fmt/format.h>\n#include <hetero/model/gone.hpp>\n",
                                        "core/model/model_loader.cpp:3: #include <hetero/model/gone.hpp> names no header of the tree")
        self.assertNotIn("vector", out)

    def test_the_real_tree_passes(self):
        root = os.path.normpath(os.path.join(os.path.dirname(CHECKER), "..", ".."))
        r = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()

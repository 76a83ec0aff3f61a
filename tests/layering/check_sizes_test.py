#!/usr/bin/env python3
"""The size check against small trees: a clean tree passes; a file over the
line limit and a function over the function limit each fail, naming the
file (and the function); braces in comments, strings and the preprocessor
are not counted."""

import os
import unittest

from tree_fixture import run_on_tree

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_sizes.py")


def function(name, body_lines):
    return f"int {name}(int x) {{\n" + "    x += 1;\n" * body_lines + "    return x;\n}\n"


class SizeCheck(unittest.TestCase):
    def run_checker(self, files):
        return run_on_tree(CHECKER, files)

    def test_clean_tree_passes(self):
        code, out = self.run_checker({
            "core/a.cpp": "namespace n {\nstruct S {\n" + function("f", 100) + "};\n}\n",
            "plugins/p/src/k.inc": "const int kTable[] = {\n" + "1,\n" * 200 + "};\n",
            "tests/big.cpp": function("g", 300),  # not a checked tree
        })
        self.assertEqual(code, 0, out)

    def test_long_file_fails(self):
        code, out = self.run_checker({"sdk/include/x.hpp": "// line\n" * 601})
        self.assertEqual(code, 1, out)
        self.assertIn("sdk/include/x.hpp: 601 lines", out)

    def test_long_function_fails(self):
        code, out = self.run_checker({"cli/cmd.cpp": "namespace n {\n" + function("too_long", 120) + "}\n"})
        self.assertEqual(code, 1, out)
        self.assertIn("cli/cmd.cpp:2: function too_long is 123 lines", out)

    def test_long_member_function_fails(self):
        code, out = self.run_checker({"core/c.cpp": "class C {\n  public:\n" + function("member", 130) + "};\n"})
        self.assertEqual(code, 1, out)
        self.assertIn("function member", out)

    def test_braces_in_literals_and_comments_ignored(self):
        # Unbalanced braces in literals, comments and macros would end f early
        # or never; counted right, f runs from line 1 to line 128.
        noise = '    const char* s = "}}}"; char c = \'}\'; // }}\n    /* } */ int big = 1\'000;\n#define X }\n'
        code, out = self.run_checker({"core/d.cpp": "int f() {\n" + noise + "    x += 1;\n" * 123 + "}\nint g() { return 0; }\n"})
        self.assertEqual(code, 1, out)
        self.assertIn("core/d.cpp:1: function f is 128 lines", out)
        self.assertNotIn("function g", out)

if __name__ == "__main__":
    unittest.main()

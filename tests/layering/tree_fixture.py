"""What the layering self-tests share: a checker script run as CI runs it (a
child process, --root) on a small tree written into a temporary folder."""

import os
import subprocess
import sys
import tempfile


def run_on_tree(checker, files):
    """Writes {path: text} under a fresh folder, runs `checker --root` on it;
    returns (exit status, stdout + stderr)."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        r = subprocess.run([sys.executable, checker, "--root", root], capture_output=True, text=True)
        return r.returncode, r.stdout + r.stderr

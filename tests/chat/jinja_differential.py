#!/usr/bin/env python3
"""Differential test of hetero's Jinja engine against Python's Jinja2.

Renders every template in templates/ with every context in templates/contexts/
twice: with Jinja2 configured as Hugging Face transformers configures it (the
oracle), and with hetero_jinja_render. The outputs must be byte-identical, and
where Jinja2 fails hetero must fail too.

usage: jinja_differential.py HETERO_JINJA_RENDER [TEMPLATES_DIR]
Exits 77 (skipped) when python3-jinja2 is missing.
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

try:
    import jinja2
    import jinja2.ext
    import jinja2.sandbox
except ImportError as e:
    print(f"SKIP: the differential test needs Jinja2 (Debian: python3-jinja2): {e}")
    sys.exit(77)


class TemplateRaised(Exception):
    pass


def _raise_exception(message):
    raise TemplateRaised(str(message))


def _strftime_now(fmt):
    return datetime.datetime.now().strftime(fmt)


def _tojson(value, indent=None, ensure_ascii=False, sort_keys=False, separators=None):
    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators)


def oracle_environment():
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def oracle_render(env, source, context):
    try:
        template = env.from_string(source)
    except Exception as e:  # noqa: BLE001 - any failure counts as "fails"
        return False, f"{type(e).__name__}: {e}"
    variables = {"tools": None}
    variables.update(context)
    try:
        return True, template.render(**variables)
    except Exception as e:  # noqa: BLE001
        return False, f"{type(e).__name__}: {e}"


def first_difference(expected, got):
    at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    lo = max(0, at - 60)
    return (f"  first difference at character {at} (lengths {len(expected)} / {len(got)})\n"
            f"  jinja2: ...{expected[lo:at + 60]!r}\n  hetero: ...{got[lo:at + 60]!r}")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    renderer = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
    templates = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".jinja"))
    contexts_dir = os.path.join(root, "contexts")
    contexts = sorted(os.path.join(contexts_dir, f) for f in os.listdir(contexts_dir) if f.endswith(".json"))
    if not templates or not contexts:
        print(f"FAIL: no templates or contexts under {root}")
        return 1

    jobs = [{"template": t, "context": c} for t in templates for c in contexts]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(jobs, f)
        jobs_file = f.name
    try:
        proc = subprocess.run([renderer, "--batch", jobs_file], capture_output=True, timeout=600)
    finally:
        os.unlink(jobs_file)
    if proc.returncode != 0:
        print(f"FAIL: {renderer} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
        return 1
    results = json.loads(proc.stdout)

    env = oracle_environment()
    sources = {t: open(t, encoding="utf-8").read() for t in templates}
    loaded = {c: json.load(open(c, encoding="utf-8")) for c in contexts}
    identical = both_failed = 0
    mismatches = []
    for job, ours in zip(jobs, results):
        ok, text = oracle_render(env, sources[job["template"]], loaded[job["context"]])
        name = f"{os.path.basename(job['template'])} x {os.path.basename(job['context'])}"
        if ok and ours["ok"] and ours["output"] == text:
            identical += 1
        elif not ok and not ours["ok"]:
            both_failed += 1
        elif ok and ours["ok"]:
            mismatches.append(f"{name}: outputs differ\n{first_difference(text, ours['output'])}")
        elif ok:
            mismatches.append(f"{name}: jinja2 renders, hetero fails: {ours['error']}\n  jinja2: {text!r}")
        else:
            mismatches.append(f"{name}: jinja2 fails ({text}), hetero renders {ours['output']!r}")

    print(f"{len(templates)} templates x {len(contexts)} contexts = {len(jobs)} renders: "
          f"{identical} identical, {both_failed} failing in both, {len(mismatches)} mismatches")
    for m in mismatches:
        print("MISMATCH " + m)
    if identical == 0:
        print("FAIL: nothing rendered")
        return 1
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The sampling flags of `hetero run` and `hetero chat` on the shipped model:
without --seed two runs at a temperature draw different text (a seed of
their own each, printed on stderr), the printed seed repeats a run exactly,
a given seed reproduces; --logit-bias, --min-p and the penalties reach the
sampler, and bad values are refused naming the flag.
Usage: sampling_cli_test.py HETERO_BINARY"""
import re
import subprocess
import sys

import serve_lib
from serve_lib import check

hetero = sys.argv[1]
PROMPT = "Once upon a time"


def run(*args):
    p = subprocess.run([hetero, "run", "--providers", "cpu", "-p", PROMPT, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def chat(*args, stdin="Hello\nTell me a story\n"):
    p = subprocess.run([hetero, "chat", "--providers", "cpu", *args], input=stdin, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def seed_in(stderr):
    m = re.search(r"^seed: (\d+) \(--seed \1 repeats this", stderr, re.M)
    return m.group(1) if m else None


# ---- run ----
# 64 tokens at temperature 1 over a 512-token vocabulary: two different seeds
# giving the same story is as good as impossible.
(rc1, out1, err1), (rc2, out2, err2) = run("--temp", "1", "-n", "64"), run("--temp", "1", "-n", "64")
s1, s2 = seed_in(err1), seed_in(err2)
check("run without --seed: each prints a seed of its own", rc1 == rc2 == 0 and s1 and s2 and s1 != s2, err1[-300:] + err2[-300:])
check("run without --seed: two runs draw different stories", out1 != out2, out1)
rc, out, _ = run("--temp", "1", "-n", "64", "--seed", s1 or "0")
check("run --seed with the printed seed repeats the run exactly", rc == 0 and out == out1, f"{out!r} vs {out1!r}")
(_, a, _), (_, b, _) = run("--temp", "0.9", "-n", "48", "-s", "7", "-q"), run("--temp", "0.9", "-n", "48", "-s", "7", "-q")
check("run -s 7 twice: the same text", a == b and len(a) > len(PROMPT), a)
rc, _, err = run("--temp", "0", "-n", "4")
check("run --temp 0 prints no seed (greedy draws nothing)", rc == 0 and seed_in(err) is None, err[-300:])

# The flags reach the sampler: the greedy story changes under each.
_, greedy, _ = run("--temp", "0", "-n", "48", "-q")
for flags in (["--repeat-penalty", "3", "--repeat-last-n", "-1"], ["--presence-penalty", "2"], ["--frequency-penalty", "2"]):
    rc, out, err = run("--temp", "0", "-n", "48", "-q", *flags)
    check(f"run {' '.join(flags)} changes the greedy story", rc == 0 and out != greedy, err[-300:])
rc, out, err = run("--temp", "0", "-n", "48", "-q", "--repeat-penalty", "3", "--repeat-last-n", "0")
check("run --repeat-last-n 0 turns the repetition penalty off", rc == 0 and out == greedy, err[-300:])
rc, out, err = run("--temp", "1", "--min-p", "1", "-n", "48", "-q", "-s", "3")
check("run --min-p 1 at temperature 1 keeps only the likeliest token: the greedy story", rc == 0 and out == greedy, out)
for bias in ("2+100", "2=100", "2=+100"):
    rc, out, err = run("--temp", "0", "-n", "16", "-q", "--logit-bias", bias)
    check(f"run --logit-bias {bias} (the end token): the story ends at once", rc == 0 and out.strip() == PROMPT, out + err[-200:])
for flags, says in ((["--logit-bias", "abc"], "--logit-bias"), (["--logit-bias", "5=200"], "[-100, 100]"),
                    (["--logit-bias", "512=1"], "token 512"), (["--min-p", "1.5"], "--min-p"),
                    (["--repeat-penalty", "0"], "--repeat-penalty"), (["--presence-penalty", "3"], "--presence-penalty"),
                    (["--repeat-last-n", "-2"], "--repeat-last-n")):
    rc, out, err = run("-n", "4", "-q", *flags)
    check(f"run {' '.join(flags)}: refused, naming {says}", rc != 0 and says in err, err[-300:])

# ---- chat ----
(rc1, out1, err1), (rc2, out2, err2) = chat("--temp", "1", "-n", "48"), chat("--temp", "1", "-n", "48")
s1, s2 = seed_in(err1), seed_in(err2)
check("chat without --seed: each prints a seed of its own", rc1 == rc2 == 0 and s1 and s2 and s1 != s2, err1[-300:])
check("chat without --seed: two chats differ", out1 != out2, out1)
rc, out, _ = chat("--temp", "1", "-n", "48", "--seed", s1 or "0")
check("chat --seed with the printed seed repeats the whole chat", rc == 0 and out == out1, f"{out!r} vs {out1!r}")
rc, out, err = chat("--temp", "1", "-n", "48", "-q", "--seed", s1 or "0")
check("chat -q prints no seed; the same replies", rc == 0 and out == out1 and seed_in(err) is None, err[-300:])
# The same message twice from a fresh conversation: each turn draws afresh.
_, first, _ = chat("--temp", "1", "-n", "24", "-q", "--seed", "5", stdin="Hello\n")
rc, both, _ = chat("--temp", "1", "-n", "24", "-q", "--seed", "5", stdin="Hello\n/reset\nHello\n")
check("chat: the same message again after /reset draws a different reply", rc == 0 and both.startswith(first) and both[len(first):] != first,
      f"{first!r} / {both!r}")
rc, out, err = chat("--temp", "0", "-n", "8", "--logit-bias", "512=1")
check("chat --logit-bias outside the vocabulary: refused naming the token", rc != 0 and "token 512" in err, err[-300:])

sys.exit(serve_lib.exit_status())

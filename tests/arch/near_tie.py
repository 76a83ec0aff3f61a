#!/usr/bin/env python3
"""Compares a greedy generation of hetero with llama.cpp's, token id for token id.

Usage: near_tie.py LOGPROBS THEIRS TIE
LOGPROBS: hetero run --logprobs of the generation (one JSON line per sampled
token, end-of-generation included); THEIRS: the ids peer-greedy printed, one
per line. Where the two part, it is a near-tie when the token llama.cpp took
is among hetero's alternatives at that step with a log-probability at most TIE
below hetero's pick; only the tokens before it are compared.
Prints what it found. Exit 0: the same tokens; 3: parted at a near-tie;
1: parted otherwise.
"""
import json
import sys

SAME, NEAR_TIE, PARTED = 0, 3, 1


def spell(steps):
    return " ".join(f"{s['token']}:{s['piece']!r}" for s in steps)


def main():
    logprobs, theirs_path, tie = sys.argv[1], sys.argv[2], float(sys.argv[3])
    steps = [json.loads(line) for line in open(logprobs, encoding="utf-8")]
    theirs = [int(line) for line in open(theirs_path, encoding="utf-8") if line.strip()]
    ours = [s["token"] for s in steps]
    if ours == theirs:
        print(f"{len(ours)} tokens equal")
        return SAME
    i = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    where = f"step {i}"
    detail = f"\n  hetero:    {spell(steps)}\n  llama.cpp: {' '.join(map(str, theirs))}"
    if i == len(ours) or i == len(theirs):
        shorter = "hetero" if i == len(ours) else "llama.cpp"
        print(f"{where}: {shorter} ended its generation after the same {i} tokens, the other went on{detail}")
        return PARTED
    step = steps[i]
    ours_desc = f"hetero took {step['token']} {step['piece']!r} (log-prob {step['logprob']:.5f})"
    taken = [t for t in step["top"] if t["token"] == theirs[i]]
    if not taken:
        print(f"{where}: {ours_desc}; llama.cpp's {theirs[i]} is not among hetero's {len(step['top'])} most likely{detail}")
        return PARTED
    gap = step["logprob"] - taken[0]["logprob"]
    verdict = f"gap {gap:.5f} <= {tie}" if gap <= tie else f"gap {gap:.5f} > {tie}"
    print(f"{where}, after {i} equal tokens: {ours_desc}, llama.cpp {theirs[i]} {taken[0]['piece']!r} "
          f"(log-prob {taken[0]['logprob']:.5f}): {verdict}{detail}")
    return NEAR_TIE if gap <= tie else PARTED


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Whether a greedy generation parted from llama.cpp's at a near-tie.

Usage: near_tie.py LOGPROBS THEIRS TIE
LOGPROBS: hetero run --logprobs of the generation (one JSON line per sampled
token, end-of-generation included); THEIRS: the text llama-completion
generated, as raw bytes. Walks hetero's pieces along THEIRS to the step where
they part. It is a near-tie when the token llama.cpp took there (the
end-of-generation token where its text ends, else a token whose piece starts
its remaining text) is among hetero's alternatives with a log-probability at
most TIE below hetero's pick. Prints what it found; exit 0 for a near-tie,
1 otherwise.
"""
import json
import sys


def main():
    logprobs, theirs_path, tie = sys.argv[1], sys.argv[2], float(sys.argv[3])
    steps = [json.loads(line) for line in open(logprobs, encoding="utf-8")]
    theirs = open(theirs_path, "rb").read()
    pos = 0
    for step in steps:
        piece = bytes(step["bytes"])
        rest = theirs[pos:]
        if step["end"] and not rest:
            break
        if not step["end"] and rest.startswith(piece):
            pos += len(piece)
            continue
        # Parted here: which of hetero's alternatives did llama.cpp take?
        taken = [t for t in step["top"] if t["token"] != step["token"] and
                 (t["end"] if not rest else (not t["end"] and t["bytes"] and rest.startswith(bytes(t["bytes"]))))]
        where = f"step {step['step']} (after {pos} bytes)"
        ours = f"hetero took {step['piece']!r} (log-prob {step['logprob']:.5f})"
        if not taken:
            print(f"{where}: {ours}; llama.cpp's token, before {rest[:16]!r}, is not among hetero's {len(step['top'])} most likely")
            return 1
        best = max(taken, key=lambda t: t["logprob"])
        gap = step["logprob"] - best["logprob"]
        theirs_piece = "end of generation" if best["end"] else repr(best["piece"])
        print(f"{where}: {ours}, llama.cpp {theirs_piece} (log-prob {best['logprob']:.5f}): gap {gap:.5f}"
              + (f" <= {tie}" if gap <= tie else f" > {tie}"))
        return 0 if gap <= tie else 1
    print(f"no parting: hetero's {len(steps)} tokens spell llama.cpp's text" +
          ("" if pos == len(theirs) else f" up to byte {pos} of {len(theirs)}"))
    return 1


if __name__ == "__main__":
    sys.exit(main())

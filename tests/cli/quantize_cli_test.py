#!/usr/bin/env python3
"""hetero quantize from the command line, on F16 files hetero convert hf
wrote from tiny Hugging Face folders (tests/cli/hf; rows of 256 that hold
K-quant super-blocks and 8 layers so the mixes' layer rules show, and rows
of 64 that make them fall back):

- every file type loads and generates greedily on the cpu provider;
- with the llama.cpp peer (PEER_DIR/cpu: peer-greedy, llama-quantize):
  llama.cpp generates the same tokens as hetero on each file hetero wrote,
  and llama-quantize, given the same input and type, picks the same type for
  every tensor (differences are listed). Where the two generations part,
  llama.cpp's token must be a near-tie in hetero's log-probabilities: within
  0.01 on F32/F16 files, within 0.15 on the others, whose products the two
  engines round and sum differently (on BF16 files llama.cpp's CPU backend
  also rounds the activations to BF16). They part by as much on
  llama-quantize's own files; the blocks themselves decode bit for bit as
  ggml's (ctest peer_ggml_quants);
- a second rounding is refused without --allow-requantize, an unknown type
  names the known ones.

Usage: quantize_cli_test.py HETERO [PEER_DIR]   (exit 0 pass, 1 fail)
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from hf import gguf_read, models  # noqa: E402

TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "IQ4_NL", "Q8_0", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M",
         "Q5_K_S", "Q5_K_M", "Q6_K", "F16", "BF16", "F32"]
TIE_FLOAT = 0.01   # F32 and F16 files
TIE_BLOCKS = 0.15  # BF16 and block-quantized files
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg, flush=True)


def ok(msg):
    print("ok   " + msg, flush=True)


def run(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)


def generate(hetero, gguf, tmp):
    lp = os.path.join(tmp, "lp.jsonl")
    r = run([hetero, "run", "-m", gguf, "-p", "Once upon a time", "-n", "16", "--temp", "0", "-c", "256", "-q",
             "--providers", "cpu", "--logprobs", lp, "--top-logprobs", "8"])
    if r.returncode != 0:
        fail(f"hetero run {os.path.basename(gguf)}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
        return None
    return lp


def same_tokens(peer_dir, gguf, lp, tmp, tie):
    r = run([os.path.join(peer_dir, "cpu", "peer-greedy"), gguf, "Once upon a time", "16", "--threads", "2", "--ctx", "256",
             "--kv", "f32", "--flash-attn", "off"])
    if r.returncode != 0:
        return False, f"llama.cpp cannot run it: {r.stderr.strip()[-300:]}"
    theirs = os.path.join(tmp, "theirs.txt")
    open(theirs, "w").write(r.stdout)
    cmp = run([sys.executable, os.path.join(HERE, "..", "arch", "near_tie.py"), lp, theirs, str(tie)])
    return cmp.returncode in (0, 3), cmp.stdout.strip().splitlines()[0] if cmp.returncode in (0, 3) else cmp.stdout.strip()


def types_of(path):
    return {name: t for name, (t, _, _) in gguf_read.Gguf(path).tensors.items()}


def main():
    hetero = sys.argv[1]
    peer_dir = sys.argv[2] if len(sys.argv) > 2 else ""
    if peer_dir and not os.access(os.path.join(peer_dir, "cpu", "llama-quantize"), os.X_OK):
        print(f"note: no llama.cpp peer in {peer_dir}: the comparisons with llama.cpp are skipped")
        peer_dir = ""
    with tempfile.TemporaryDirectory() as tmp:
        sources = []
        wide = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 8}
        for arch, dims in (("qwen2", wide), ("llama3", dict(wide, num_key_value_heads=1)), ("llama", {"num_hidden_layers": 3})):
            folder, src = os.path.join(tmp, arch), os.path.join(tmp, f"{arch}-f16.gguf")
            models.write_model(arch, folder, seed=3, dims=dims)
            r = run([hetero, "convert", "hf", folder, src, "--type", "f16"])
            if r.returncode != 0:
                fail(f"convert hf {arch}: {r.stderr.strip()}")
                continue
            sources.append((arch, src))
        for arch, src in sources:
            for t in TYPES:
                out = os.path.join(tmp, f"{arch}-{t}.gguf")
                r = run([hetero, "quantize", src, out, t, "--threads", "2"])
                if r.returncode != 0:
                    fail(f"{arch} {t}: quantize: {r.stderr.strip()}")
                    continue
                lp = generate(hetero, out, tmp)
                if lp is None:
                    continue
                label = f"{arch} {t}: {r.stderr.strip().splitlines()[-1]}"
                if peer_dir:
                    same, how = same_tokens(peer_dir, out, lp, tmp, TIE_FLOAT if t in ("F32", "F16") else TIE_BLOCKS)
                    if not same:
                        fail(f"{arch} {t}: llama.cpp and hetero part on hetero's file: {how}")
                        continue
                    label += f"; llama.cpp: {how}"
                    theirs = os.path.join(tmp, "theirs.gguf")
                    q = run([os.path.join(peer_dir, "cpu", "llama-quantize"), src, theirs, t, "2"])
                    if q.returncode != 0:
                        fail(f"{arch} {t}: llama-quantize failed: {q.stderr.strip()[-300:]}")
                        continue
                    a, b = types_of(out), types_of(theirs)
                    diff = [f"{n}: hetero {a.get(n)}, llama-quantize {b.get(n)}" for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n)]
                    if diff:
                        fail(f"{arch} {t}: tensor types differ from llama-quantize's: " + "; ".join(diff[:8]))
                        continue
                    label += f"; the {len(a)} tensor types are llama-quantize's"
                ok(label)
        # Refusals.
        if sources:
            src = sources[0][1]
            q8 = os.path.join(tmp, "q8.gguf")
            run([hetero, "quantize", src, q8, "Q8_0"])
            out = os.path.join(tmp, "again.gguf")
            r = run([hetero, "quantize", q8, out, "Q4_K_M"])
            if r.returncode != 1 or "already quantized" not in r.stderr or "--allow-requantize" not in r.stderr or os.path.exists(out):
                fail(f"requantize without permission: exit {r.returncode}: {r.stderr.strip()}")
            else:
                ok("requantizing is refused without --allow-requantize: " + r.stderr.strip().splitlines()[-1][:140])
            r = run([hetero, "quantize", q8, out, "Q4_K_M", "--allow-requantize"])
            if r.returncode != 0 or generate(hetero, out, tmp) is None:
                fail(f"requantize with --allow-requantize: {r.stderr.strip()}")
            else:
                ok("--allow-requantize re-encodes a Q8_0 file as Q4_K_M, which generates")
            r = run([hetero, "quantize", src, out, "IQ2_XXS"])
            if r.returncode != 1 or "Q4_K_M" not in r.stderr:
                fail(f"unknown type: exit {r.returncode}: {r.stderr.strip()}")
            else:
                ok("an unknown type is refused with the known ones listed")
    print(f"{len(failures)} failures" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

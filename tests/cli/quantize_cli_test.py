#!/usr/bin/env python3
"""hetero quantize from the command line, on F16 files hetero convert hf
wrote from tiny Hugging Face folders (tests/cli/hf; rows of 256 that hold
K-quant super-blocks and 8 layers so the mixes' layer rules show, and rows
of 64 that make them fall back), and on the real stories260K (F32, rows of 64
and 172: fallbacks down to F16):

- every file type loads and generates greedily on the cpu provider;
- with the llama.cpp peer (PEER_DIR/cpu: peer-greedy, llama-quantize):
  llama.cpp generates the same tokens as hetero on each file hetero wrote,
  and llama-quantize, given the same input and type, picks the same type for
  every tensor (differences are listed). Where the two generations part,
  llama.cpp's token must be a near-tie in hetero's log-probabilities: within
  0.01 on F32/F16 files and on the trained stories260K in every type; on the
  random-weight models' BF16 and block-quantized files (8 tokens) within
  0.5: the two engines round and sum those products differently (on BF16
  files llama.cpp also rounds the activations to BF16), and random weights
  amplify the difference step by step (up to 0.3 seen, as much as on
  llama-quantize's own files of the same model); the blocks themselves
  decode bit for bit as ggml's (ctest peer_ggml_quants);
- each K-quant and IQ4_NL matrix is as close to the source as
  llama-quantize's (relative RMS error at most 3 % above it);
- a second rounding is refused without --allow-requantize, an unknown type
  names the known ones.

Usage: quantize_cli_test.py HETERO [PEER_DIR]   (exit 0 pass, 1 fail)
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import serve_lib  # noqa: E402
from serve_lib import fail, failures, ok  # noqa: E402
from hf import gguf_read, models  # noqa: E402

TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "IQ4_NL", "Q8_0", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M",
         "Q5_K_S", "Q5_K_M", "Q6_K", "F16", "BF16", "F32"]
TIE_EXACT = 0.01   # F32/F16 files, and every file of the trained model
TIE_RANDOM = 0.5   # BF16 and block-quantized files of the random-weight models


def run(cmd, timeout=600):
    return serve_lib.run(cmd, timeout)


def generate(hetero, gguf, tmp, n=16):
    lp = os.path.join(tmp, "lp.jsonl")
    r = run([hetero, "run", "-m", gguf, "-p", "Once upon a time", "-n", str(n), "--temp", "0", "-c", "256", "-q",
             "--providers", "cpu", "--logprobs", lp, "--top-logprobs", "8"])
    if r.returncode != 0:
        fail(f"hetero run {os.path.basename(gguf)}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
        return None
    return lp


def same_tokens(peer_dir, gguf, lp, tmp, n, tie):
    r = run([os.path.join(peer_dir, "cpu", "peer-greedy"), gguf, "Once upon a time", str(n), "--threads", "2", "--ctx", "256",
             "--kv", "f32", "--flash-attn", "off"])
    if r.returncode != 0:
        return False, f"llama.cpp cannot run it: {r.stderr.strip()[-300:]}"
    theirs = os.path.join(tmp, "theirs.txt")
    open(theirs, "w").write(r.stdout)
    cmp = run([sys.executable, os.path.join(HERE, "..", "arch", "near_tie.py"), lp, theirs, str(tie)])
    return cmp.returncode in (0, 3), cmp.stdout.strip().splitlines()[0] if cmp.returncode in (0, 3) else cmp.stdout.strip()


def matrices_f32(hetero, gguf, names, tmp):
    """Tensors `names` of `gguf` decoded to f32 (hetero quantize ... F32)."""
    deq = os.path.join(tmp, "deq.gguf")
    r = run([hetero, "quantize", gguf, deq, "F32", "--allow-requantize"])
    if r.returncode != 0:
        raise RuntimeError(f"decoding {gguf}: {r.stderr.strip()}")
    g = gguf_read.Gguf(deq)
    data, out = g.data(), {}
    for n in names:
        _, dims, offset = g.tensors[n]
        out[n] = struct.unpack_from(f"<{dims[0] * dims[1]}f", data, offset)
    return out


def relative_error(ref, got):
    return math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(ref, got)) / math.fsum(b * b for b in ref))


ERROR_TYPES = ["Q2_K", "Q3_K_S", "Q4_K_M", "Q5_K_M", "Q6_K", "IQ4_NL"]
ERROR_TENSORS = ["blk.0.attn_q.weight", "blk.0.attn_v.weight", "blk.5.ffn_down.weight"]


def types_of(path):
    return {name: t for name, (t, _, _) in gguf_read.Gguf(path).tensors.items()}


def main():
    hetero = sys.argv[1]
    peer_dir = serve_lib.peer_dir_arg("llama-quantize")
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
        sources.append(("stories260K", os.path.join(HERE, "..", "data", "models", "stories260K-llamacpp.gguf")))
        reference = matrices_f32(hetero, sources[0][1], ERROR_TENSORS, tmp) if sources and sources[0][0] == "qwen2" else None
        for arch, src in sources:
            for t in TYPES:
                out = os.path.join(tmp, f"{arch}-{t}.gguf")
                r = run([hetero, "quantize", src, out, t, "--threads", "2"])
                if r.returncode != 0:
                    fail(f"{arch} {t}: quantize: {r.stderr.strip()}")
                    continue
                exact = arch == "stories260K" or t in ("F32", "F16")
                n = 16 if exact else 8
                lp = generate(hetero, out, tmp, n)
                if lp is None:
                    continue
                label = f"{arch} {t}: {r.stderr.strip().splitlines()[-1]}"
                if peer_dir:
                    same, how = same_tokens(peer_dir, out, lp, tmp, n, TIE_EXACT if exact else TIE_RANDOM)
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
                    if reference and arch == "qwen2" and t in ERROR_TYPES:
                        ours, theirs_m = matrices_f32(hetero, out, ERROR_TENSORS, tmp), matrices_f32(hetero, theirs, ERROR_TENSORS, tmp)
                        ratios = {n: relative_error(reference[n], ours[n]) / relative_error(reference[n], theirs_m[n]) for n in ERROR_TENSORS}
                        worst = max(ratios, key=ratios.get)
                        if ratios[worst] > 1.03:
                            fail(f"{arch} {t}: {worst} is {ratios[worst]:.3f} times as far from the source as llama-quantize's")
                            continue
                        label += f"; error at most {ratios[worst]:.3f} x llama-quantize's"
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

#!/usr/bin/env python3
"""hetero convert hf on tiny Hugging Face model folders written here
(tests/cli/hf: random weights, BPE tokenizer.json or SentencePiece
tokenizer.model, configs), one per architecture:

- the GGUF has llama.cpp's metadata keys and tensor names for it;
- hetero's greedy generation on it (f32) matches a reference forward pass
  with Hugging Face's semantics on the original weights, log-probability for
  log-probability (this checks the Q/K regrouping, Gemma's norm offset, the
  fused Phi-3 tensors, the tokenizer ids of the prompt);
- with the llama.cpp peer (PEER_DIR/cpu/peer-greedy), llama.cpp generates the
  same tokens as hetero on the f32, f16 and q8_0 files;
- sharded weights convert to the same tensors as one file;
- real vocabularies (llama.cpp's ggml-vocab-*.gguf: Llama 2's SentencePiece,
  Llama 3's, Qwen2's and GPT-2's BPE), rebuilt as tokenizer.model /
  tokenizer.json, convert back to the same tokens, types, scores and merges
  (when $HETERO_VOCAB_DIR, .peer/vocab or PEER_DIR/vocab holds them);
- hostile folders (truncated shard, offsets past the end, unknown dtype,
  missing tensor, out-of-range config values, ...) fail with an error that
  names the file and the problem, and leave no output file.

Usage: hf_convert_test.py HETERO [PEER_DIR]   (exit 0 pass, 1 fail)
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import serve_lib  # noqa: E402
from serve_lib import fail, failures, ok  # noqa: E402
from hf import gguf_read, models, reference, vocab_roundtrip  # noqa: E402
from hf import safetensors_io as st  # noqa: E402

PROMPT = "Once upon a time"
N_PREDICT = 12
LOGPROB_TOL = 2e-3   # hetero (f32) against the double-precision reference
TIE = 0.01           # a different pick is a near-tie when this close



def run(cmd, timeout=300):
    return serve_lib.run(cmd, timeout)


def convert(hetero, folder, out, *extra):
    return run([hetero, "convert", "hf", folder, out, "--threads", "2", *extra])


def generate(hetero, gguf, workdir, prompt=PROMPT):
    """hetero's greedy steps (its --logprobs lines), or None after a failure."""
    lp = os.path.join(workdir, "lp.jsonl")
    r = run([hetero, "run", "-m", gguf, "-p", prompt, "-n", str(N_PREDICT), "--temp", "0", "-c", "256", "-q",
             "--providers", "cpu", "--logprobs", lp, "--top-logprobs", "8"])
    if r.returncode != 0:
        fail(f"hetero run {gguf}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        return None
    return [json.loads(line) for line in open(lp, encoding="utf-8")]


def check_reference(arch, config, encode, weights, steps):
    """hetero's picks and log-probabilities against the reference."""
    prompt_ids = encode(PROMPT)
    tokens = prompt_ids + [s["token"] for s in steps]
    logits = reference.Reference(arch, config, weights).logits(tokens[:-1])
    worst = 0.0
    for i, s in enumerate(steps):
        ref = reference.log_softmax(logits[len(prompt_ids) - 1 + i])
        best = max(range(len(ref)), key=lambda t: ref[t])
        if s["token"] != best and ref[best] - ref[s["token"]] > TIE:
            fail(f"{arch}: step {i}: hetero took {s['token']} (reference log-prob {ref[s['token']]:.4f}), the reference's "
                 f"pick is {best} ({ref[best]:.4f}); prompt ids {prompt_ids}")
            return
        for alt in [s] + s["top"]:
            worst = max(worst, abs(alt["logprob"] - ref[alt["token"]]))
        if worst > LOGPROB_TOL:
            fail(f"{arch}: step {i}: hetero's log-probabilities differ from the reference's by {worst:.5f} "
                 f"(token {s['token']}: {s['logprob']:.5f} vs {ref[s['token']]:.5f})")
            return
        if s.get("end"):
            break
    ok(f"{arch}: {len(steps)} greedy steps as the Hugging Face reference (log-probs within {worst:.1e})")


def check_peer(arch, label, peer_dir, gguf, steps, workdir):
    peer = os.path.join(peer_dir, "cpu", "peer-greedy")
    r = run([peer, gguf, PROMPT, str(N_PREDICT), "--threads", "2", "--ctx", "256", "--kv", "f32", "--flash-attn", "off"])
    if r.returncode != 0:
        fail(f"{arch} {label}: llama.cpp cannot run the converted file: {r.stderr.strip()[-400:]}")
        return
    theirs, ours = os.path.join(workdir, "theirs.txt"), os.path.join(workdir, "ours.jsonl")
    open(theirs, "w").write(r.stdout)
    with open(ours, "w") as f:
        f.writelines(json.dumps(s) + "\n" for s in steps)
    cmp = run([sys.executable, os.path.join(HERE, "..", "arch", "near_tie.py"), ours, theirs, str(TIE)])
    if cmp.returncode in (0, 3):
        ok(f"{arch} {label}: llama.cpp generates the same tokens ({cmp.stdout.strip().splitlines()[0]})")
    else:
        fail(f"{arch} {label}: llama.cpp and hetero part: {cmp.stdout.strip()}")


# What llama.cpp's converter writes for each architecture (a selection).
EXPECTED_KEYS = {
    "llama": {"tokenizer.ggml.model": "llama", "tokenizer.ggml.pre": "default", "llama.vocab_size": None,
              "llama.rope.dimension_count": 16, "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2,
              "tokenizer.ggml.add_bos_token": True, "tokenizer.ggml.add_eos_token": False},
    "llama3": {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "llama-bpe", "tokenizer.ggml.add_bos_token": True,
               "tokenizer.ggml.add_sep_token": False, "llama.rope.dimension_count": 16},
    "qwen2": {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "qwen2", "tokenizer.ggml.add_bos_token": False,
              "qwen2.rope.freq_base": 1000000.0},
    "qwen3": {"tokenizer.ggml.pre": "qwen2", "qwen3.attention.key_length": 32, "qwen3.attention.value_length": 32},
    "phi3": {"tokenizer.ggml.model": "llama", "phi3.rope.scaling.original_context_length": 256,
             "phi3.attention.sliding_window": 0, "phi3.rope.dimension_count": 16},
    "gemma2": {"tokenizer.ggml.add_space_prefix": False, "gemma2.attn_logit_softcapping": 2.0,
               "gemma2.final_logit_softcapping": 4.0, "gemma2.attention.sliding_window": 4096,
               "gemma2.attention.key_length": 16},
    "gemma3": {"tokenizer.ggml.add_space_prefix": False, "gemma3.rope.freq_base": 1000000.0,
               "gemma3.rope.freq_base_swa": 10000.0, "gemma3.rope.scaling.type": "linear",
               "gemma3.rope.scaling.factor": 8.0, "gemma3.attention.sliding_window": 4096},
}


def check_metadata(arch, config, gguf_path):
    g = gguf_read.Gguf(gguf_path)
    a = "llama" if arch == "llama3" else arch
    want = {"general.architecture": a, "general.type": "model", "general.file_type": 0, "general.quantization_version": 2,
            f"{a}.block_count": config["num_hidden_layers"], f"{a}.embedding_length": 64,
            f"{a}.attention.head_count": 4, f"{a}.attention.head_count_kv": 2,
            "general.sampling.temp": 0.6000000238418579, "tokenizer.chat_template": models.CHAT_TEMPLATE}
    want.update(EXPECTED_KEYS[arch])
    if f"{a}.vocab_size" in want:
        want[f"{a}.vocab_size"] = config["vocab_size"]
    bad = [f"{k} = {g.kv.get(k, '(missing)')!r}, expected {v!r}" for k, v in want.items()
           if g.kv.get(k) != v and not (isinstance(v, float) and abs(g.kv.get(k, 1e30) - v) < 1e-6)]
    types = g.kv.get("tokenizer.ggml.token_type", [])
    tokens = g.kv.get("tokenizer.ggml.tokens", [])
    if len(tokens) != config["vocab_size"]:
        bad.append(f"{len(tokens)} tokens, config.json's vocab_size is {config['vocab_size']}")
    if tokens and tokens[-1] != f"[PAD{len(tokens) - 1}]" or types and types[-1] != 5:
        bad.append(f"the last id {tokens[-1:]} (type {types[-1:]}) is not an unused [PAD] token")
    names = set(g.tensors)
    if arch == "llama3" and "rope_freqs.weight" not in names:
        bad.append("no rope_freqs.weight for Llama 3 RoPE scaling")
    if ("output.weight" in names) == config["tie_word_embeddings"]:
        bad.append("output.weight present for tied embeddings, or missing for untied ones")
    for name, (typ, dims, _) in g.tensors.items():
        if (len(dims) == 1 or name.endswith("_norm.weight")) and typ != "f32":
            bad.append(f"{name} is {typ}, norms and biases must be f32")
    if bad:
        fail(f"{arch}: metadata: " + "; ".join(bad))
    else:
        ok(f"{arch}: metadata and tensor table as llama.cpp writes them ({len(g.kv)} keys, {len(g.tensors)} tensors)")
    return g


def check_arch(hetero, peer_dir, arch, tmp):
    folder = os.path.join(tmp, arch)
    config, encode, weights = models.write_model(arch, folder)
    out = os.path.join(tmp, arch + "-f32.gguf")
    r = convert(hetero, folder, out, "--type", "f32")
    if r.returncode != 0:
        fail(f"{arch}: convert: {r.stderr.strip()}")
        return
    check_metadata(arch, config, out)
    steps = generate(hetero, out, tmp)
    if steps is None:
        return
    check_reference(arch, config, encode, weights, steps)
    if peer_dir:
        check_peer(arch, "f32", peer_dir, out, steps, tmp)
    for typ in ("f16", "q8_0"):
        q = os.path.join(tmp, f"{arch}-{typ}.gguf")
        r = convert(hetero, folder, q, "--type", typ)
        if r.returncode != 0:
            fail(f"{arch} {typ}: convert: {r.stderr.strip()}")
            continue
        steps = generate(hetero, q, tmp)
        if steps is not None and peer_dir:
            check_peer(arch, typ, peer_dir, q, steps, tmp)
        elif steps is not None:
            ok(f"{arch} {typ}: converts and generates {len(steps)} tokens")


def check_shards(hetero, tmp):
    one, two = os.path.join(tmp, "one"), os.path.join(tmp, "two")
    models.write_model("qwen2", one, seed=5)
    models.write_model("qwen2", two, seed=5, shards=3)
    a, b = os.path.join(tmp, "one.gguf"), os.path.join(tmp, "two.gguf")
    for folder, out in ((one, a), (two, b)):
        r = convert(hetero, folder, out)
        if r.returncode != 0:
            return fail(f"shards: convert {folder}: {r.stderr.strip()}")
    ga, gb = gguf_read.Gguf(a), gguf_read.Gguf(b)
    if ga.tensors != gb.tensors or ga.data() != gb.data():
        return fail("shards: three shards and their index convert to other tensors than one model.safetensors")
    ok("shards: model.safetensors.index.json and 3 shards give the same tensors as one file")


def check_direct_mix(hetero, tmp):
    """--type Q4_K_M picks each tensor's type as hetero quantize does on the f16 file."""
    folder = os.path.join(tmp, "mix")
    models.write_model("qwen2", folder, seed=9, dims={"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 8})
    direct, f16, quantized = (os.path.join(tmp, n) for n in ("mix-direct.gguf", "mix-f16.gguf", "mix-q.gguf"))
    for cmd in ([hetero, "convert", "hf", folder, direct, "--type", "Q4_K_M"], [hetero, "convert", "hf", folder, f16],
                [hetero, "quantize", f16, quantized, "Q4_K_M"]):
        r = run(cmd)
        if r.returncode != 0:
            return fail(f"direct mix: {' '.join(cmd[1:3])}: {r.stderr.strip()}")
    a, b = gguf_read.Gguf(direct), gguf_read.Gguf(quantized)
    types_a = {n: t for n, (t, _, _) in a.tensors.items()}
    types_b = {n: t for n, (t, _, _) in b.tensors.items()}
    if types_a != types_b or a.kv.get("general.file_type") != 15:
        return fail(f"direct mix: --type Q4_K_M gives other types than quantize on the f16 file: "
                    f"{sorted((n, types_a.get(n), types_b.get(n)) for n in set(types_a) | set(types_b) if types_a.get(n) != types_b.get(n))[:5]}")
    ok(f"direct mix: --type Q4_K_M gives the {len(types_a)} tensor types hetero quantize gives the f16 file")


def check_gemma3_multimodal(hetero, tmp):
    """Gemma 3 as Gemma3ForConditionalGeneration: the text model, the same
    tensors as Gemma3ForCausalLM gives, the vision tower left out."""
    text, mm = os.path.join(tmp, "g3-text"), os.path.join(tmp, "g3-mm")
    models.write_model("gemma3", text, seed=7)
    models.write_model("gemma3", mm, seed=7, multimodal=True)
    a, b = os.path.join(tmp, "g3-text.gguf"), os.path.join(tmp, "g3-mm.gguf")
    for folder, out in ((text, a), (mm, b)):
        r = convert(hetero, folder, out, "--type", "f32")
        if r.returncode != 0:
            return fail(f"gemma3 multimodal: convert {folder}: {r.stderr.strip()}")
    ga, gb = gguf_read.Gguf(a), gguf_read.Gguf(b)
    same_keys = all(gb.kv.get(k) == v for k, v in ga.kv.items() if k != "general.name")
    if ga.tensors != gb.tensors or ga.data() != gb.data() or not same_keys:
        return fail("gemma3 multimodal: Gemma3ForConditionalGeneration converts to other tensors or keys than Gemma3ForCausalLM")
    ok("gemma3 multimodal: the image-text class converts to the text model's tensors and keys, vision tower left out")


# ----------------------------------------------------------------- hostile inputs

def shard_path(folder):
    return os.path.join(folder, "model.safetensors")


def rewrite_header(folder, edit):
    """Rewrites model.safetensors with edit(header) applied, data unchanged."""
    raw = open(shard_path(folder), "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    edit(header)
    open(shard_path(folder), "wb").write(st.file_bytes(header, raw[8 + n:]))


def drop_tensor(folder, name):
    tensors = st.read(shard_path(folder))
    del tensors[name]
    st.write(shard_path(folder), [(k, d, s, v) for k, (d, s, v) in tensors.items()])


def add_tensor(folder, name, shape):
    tensors = st.read(shard_path(folder))
    n = 1
    for d in shape:
        n *= d
    tensors[name] = ("BF16", shape, [0.5] * n)
    st.write(shard_path(folder), [(k, d, s, v) for k, (d, s, v) in tensors.items()])


def set_value(folder, name, index, value, dtype="F32"):
    """Rewrites tensor `name` as `dtype` with element `index` set to `value`."""
    tensors = st.read(shard_path(folder))
    d, shape, v = tensors[name]
    v = list(v)
    v[index] = value
    tensors[name] = (dtype, shape, v)
    st.write(shard_path(folder), [(k, d_, s_, v_) for k, (d_, s_, v_) in tensors.items()])


def edit_json(folder, file, edit):
    p = os.path.join(folder, file)
    j = json.load(open(p))
    edit(j)
    json.dump(j, open(p, "w"))


def write_text(folder, file, text):
    open(os.path.join(folder, file), "w").write(text)


def truncate(folder, file, keep):
    p = os.path.join(folder, file)
    raw = open(p, "rb").read()
    open(p, "wb").write(raw[:keep if keep >= 0 else len(raw) + keep])


Q = "model.layers.0.self_attn.q_proj.weight"
HOSTILE = [
    ("truncated shard", lambda f: truncate(f, "model.safetensors", -1000), ["model.safetensors", "past the end", "truncated"]),
    ("header only", lambda f: truncate(f, "model.safetensors", 6), ["model.safetensors", "too short"]),
    ("header length past the end", lambda f: truncate(f, "model.safetensors", 200), ["header length", "past the end"]),
    ("offsets past the end", lambda f: rewrite_header(f, lambda h: h[Q].update(data_offsets=[10 ** 9, 10 ** 9 + 8192])),
     [Q, "past the end"]),
    ("offsets not matching the shape", lambda f: rewrite_header(f, lambda h: h[Q].update(shape=[64, 65])), [Q, "need"]),
    ("overlapping tensors", lambda f: rewrite_header(f, lambda h: h[Q].update(
        data_offsets=[h[Q]["data_offsets"][0] - 2, h[Q]["data_offsets"][1] - 2])), ["overlaps"]),
    ("unknown dtype", lambda f: rewrite_header(f, lambda h: h[Q].update(dtype="Q4")), [Q, "'Q4' is not a safetensors dtype"]),
    ("integer weights", lambda f: rewrite_header(f, lambda h: h[Q].update(dtype="I16")), [Q, "I16", "F32, F16 and BF16"]),
    ("header not JSON", lambda f: rewrite_header(f, lambda h: h.update({"x": float("nan")})), ["model.safetensors"]),
    ("missing tensor", lambda f: drop_tensor(f, "model.layers.1.mlp.down_proj.weight"),
     ["no safetensors file holds", "model.layers.1.mlp.down_proj.weight"]),
    ("unexpected tensor", lambda f: add_tensor(f, "model.layers.0.self_attn.o_proj.bias", [64]),
     ["model.safetensors", "o_proj.bias", "not one hetero's llama uses"]),
    ("unknown tensor name", lambda f: add_tensor(f, "model.layers.0.self_attn.rotary_scale", [64]),
     ["model.safetensors", "rotary_scale", "no GGUF name"]),
    ("a NaN weight", lambda f: set_value(f, Q, 70, float("nan")), [Q, "nan", "row 1, column 6", "damaged"]),
    ("a weight beyond F16", lambda f: set_value(f, Q, 5, 1e6), [Q, "1000000 (row 0, column 5)", "beyond F16's range", "--type bf16 or f32"]),
    ("layer out of range", lambda f: edit_json(f, "config.json", lambda c: c.update(num_hidden_layers=1)),
     ["layer 1", "1 layers"]),
    ("no layers", lambda f: edit_json(f, "config.json", lambda c: c.update(num_hidden_layers=0)),
     ["config.json", "num_hidden_layers", "out of range"]),
    ("negative width", lambda f: edit_json(f, "config.json", lambda c: c.update(hidden_size=-64)), ["hidden_size", "out of range"]),
    ("huge vocabulary", lambda f: edit_json(f, "config.json", lambda c: c.update(vocab_size=10 ** 12)), ["vocab_size", "out of range"]),
    ("heads not dividing", lambda f: edit_json(f, "config.json", lambda c: c.update(num_key_value_heads=3)),
     ["num_key_value_heads"]),
    ("wrong shape", lambda f: edit_json(f, "config.json", lambda c: c.update(intermediate_size=97)),
     ["mlp", "shape", "[97, 64]"]),
    ("string where a number goes", lambda f: edit_json(f, "config.json", lambda c: c.update(rms_norm_eps="tiny")),
     ["rms_norm_eps", "number"]),
    ("unsupported class", lambda f: edit_json(f, "config.json", lambda c: c.update(architectures=["BertModel"])),
     ["BertModel", "LlamaForCausalLM"]),
    ("unsupported RoPE", lambda f: edit_json(f, "config.json", lambda c: c.update(rope_scaling={"rope_type": "yarn", "factor": 4})),
     ["yarn"]),
    ("quantized weights", lambda f: edit_json(f, "config.json", lambda c: c.update(quantization_config={"quant_method": "gptq"})),
     ["gptq"]),
    ("repeated config key", lambda f: write_text(f, "config.json", open(os.path.join(f, "config.json")).read()
                                                 .replace('"vocab_size"', '"vocab_size": 5, "vocab_size"', 1)), ["vocab_size", "duplicate"]),
    ("config not JSON", lambda f: truncate(f, "config.json", 40), ["config.json", "JSON"]),
    ("truncated tokenizer.model", lambda f: truncate(f, "tokenizer.model", 3001), ["tokenizer.model", "past the end"]),
    ("no tokenizer", lambda f: os.remove(os.path.join(f, "tokenizer.model")), ["tokenizer"]),
    ("tokenizer_config not JSON", lambda f: write_text(f, "tokenizer_config.json", "{\"bos_token\": "), ["tokenizer_config.json"]),
    ("bad generation config", lambda f: write_text(f, "generation_config.json", "{\"top_k\": \"many\"}"),
     ["generation_config.json", "top_k"]),
]
HOSTILE_BPE = [
    ("truncated tokenizer.json", lambda f: truncate(f, "tokenizer.json", 500), ["tokenizer.json"]),
    ("unknown pre-tokenizer", lambda f: edit_json(f, "tokenizer.json", lambda t: t["pre_tokenizer"]["pretokenizers"][0]
                                                  ["pattern"].update(Regex="\\w+")), ["pre-tokenizer", "\\w+"]),
    ("token id beyond the vocabulary", lambda f: edit_json(f, "tokenizer.json", lambda t: t["model"]["vocab"].update(
        {"zzz": 99999})), ["zzz", "99999", "vocab_size"]),
    ("unigram model", lambda f: edit_json(f, "tokenizer.json", lambda t: t["model"].update(type="Unigram")), ["Unigram"]),
    ("no merges", lambda f: edit_json(f, "tokenizer.json", lambda t: t["model"].update(merges=[])), ["merges"]),
    ("index outside the folder", lambda f: write_text(f, "model.safetensors.index.json", json.dumps(
        {"weight_map": {Q: "../model.safetensors"}})), ["../model.safetensors", "not the name"]),
    ("index lists a missing tensor", lambda f: write_text(f, "model.safetensors.index.json", json.dumps(
        {"weight_map": dict({k: "model.safetensors" for k in st.read(shard_path(f))}, extra="model.safetensors")})),
     ["'extra'", "missing"]),
]


def check_hostile(hetero, tmp):
    for base_arch, cases in (("llama", HOSTILE), ("qwen2", HOSTILE_BPE)):
        base = os.path.join(tmp, "base-" + base_arch)
        models.write_model(base_arch, base, seed=3)
        for label, damage, words in cases:
            folder = os.path.join(tmp, "hostile")
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(base, folder)
            damage(folder)
            out = os.path.join(tmp, "hostile.gguf")
            r = convert(hetero, folder, out)
            err = r.stderr.strip()
            missing = [w for w in words if w not in err]
            if r.returncode != 1 or missing or "error" not in err:
                fail(f"hostile {label}: exit {r.returncode}, message {err[-300:]!r} lacks {missing}")
            elif os.path.exists(out) or any(n.startswith("hostile.gguf") for n in os.listdir(tmp)):
                fail(f"hostile {label}: refused, but left {out} (or its temporary file) behind")
            else:
                ok(f"hostile {label}: {err.splitlines()[-1][:160]}")


def check_real_vocabularies(hetero, vocab_dir, tmp):
    for name, arch in (("llama-spm", "llama"), ("llama-bpe", "llama"), ("qwen2", "qwen2"), ("gpt-2", "qwen2")):
        path = os.path.join(vocab_dir, f"ggml-vocab-{name}.gguf")
        if not os.path.exists(path):
            print(f"note: no {path}: that vocabulary is not checked")
            continue
        original = gguf_read.Gguf(path).kv
        folder, out = os.path.join(tmp, "vocab-" + name), os.path.join(tmp, "vocab.gguf")
        vocab_roundtrip.write_folder(original, folder, arch)
        r = convert(hetero, folder, out)
        if r.returncode != 0:
            fail(f"vocabulary {name}: convert: {r.stderr.strip()[-300:]}")
            continue
        got = gguf_read.Gguf(out).kv
        diff = [k for k in vocab_roundtrip.COMPARED if k in original and got.get(k) != original[k]]
        if diff:
            k = diff[0]
            first = next((i for i, (a, b) in enumerate(zip(original[k], got.get(k, []))) if a != b), None) \
                if isinstance(original[k], list) else None
            where = f" (first at index {first}: {original[k][first]!r} became {got[k][first]!r})" if first is not None else ""
            fail(f"vocabulary {name}: {', '.join(diff)} differ from llama.cpp's{where}")
        else:
            ok(f"vocabulary {name}: {len(got['tokenizer.ggml.tokens'])} tokens, their types, scores and merges as llama.cpp wrote them")


def check_truncations(hetero, tmp):
    """Files cut at many points: an error naming the file, or (for a cut
    between whole pieces of tokenizer.model) a file that converts; never a
    crash or a hang."""
    base = os.path.join(tmp, "base-llama")
    for file in ("model.safetensors", "tokenizer.model", "config.json"):
        size = os.path.getsize(os.path.join(base, file))
        cuts = sorted({0, 1, 7, 8, 9, size - 1} | {size * k // 23 for k in range(1, 23)})
        bad = []
        for cut in cuts:
            folder = os.path.join(tmp, "cut")
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(base, folder)
            truncate(folder, file, cut)
            out = os.path.join(tmp, "cut.gguf")
            r = convert(hetero, folder, out)
            if r.returncode == 0 and file == "tokenizer.model":
                os.remove(out)
            elif r.returncode != 1 or file not in r.stderr:
                bad.append(f"cut at {cut}: exit {r.returncode}: {r.stderr.strip()[-200:]}")
        if bad:
            fail(f"truncated {file}: " + "; ".join(bad[:3]))
        else:
            ok(f"truncated {file} at {len(cuts)} points: each refused by name")


def main():
    hetero = sys.argv[1]
    peer_dir = serve_lib.peer_dir_arg("peer-greedy", " (tests/arch/build_peer.sh builds one)")
    archs = os.environ.get("ARCHS", " ".join(models.ARCHS)).split()
    # llama.cpp's vocabulary files: as the unit tests find them (tests/fetch_vocab.sh), else the peer's.
    vocab_dir = os.environ.get("HETERO_VOCAB_DIR") or os.path.join(HERE, "..", "..", ".peer", "vocab")
    if not os.path.isdir(vocab_dir):
        vocab_dir = os.path.join(peer_dir, "vocab") if peer_dir else ""
    with tempfile.TemporaryDirectory() as tmp:
        for arch in archs:
            check_arch(hetero, peer_dir, arch, tmp)
        check_shards(hetero, tmp)
        check_gemma3_multimodal(hetero, tmp)
        check_direct_mix(hetero, tmp)
        check_hostile(hetero, tmp)
        check_truncations(hetero, tmp)
        if vocab_dir:
            check_real_vocabularies(hetero, vocab_dir, tmp)
    print(f"{len(failures)} failures" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

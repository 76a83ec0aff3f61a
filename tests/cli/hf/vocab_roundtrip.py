"""Hugging Face tokenizer files rebuilt from llama.cpp's vocabulary GGUFs
(ggml-vocab-*.gguf, which llama.cpp's converter wrote from the real models),
for checking that hetero convert hf turns them back into the same tokens,
types, scores and merges at full size (Llama 3's 128k tokens, Qwen2's 152k,
Llama 2's SentencePiece 32k)."""
import json
import os
import struct

from . import tokenizers as tk

SPLITS = {"llama-bpe": tk.LLAMA3_SPLIT, "qwen2": tk.QWEN2_SPLIT}
CONTROL, USER_DEFINED, UNUSED = 3, 4, 5


def _bpe_files(kv):
    tokens, types = kv["tokenizer.ggml.tokens"], kv["tokenizer.ggml.token_type"]
    vocab, added = {}, []
    for i, (t, typ) in enumerate(zip(tokens, types)):
        if typ == UNUSED and t == f"[PAD{i}]":
            continue  # ids the tokenizer leaves free
        if typ in (CONTROL, USER_DEFINED):
            added.append({"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": typ == USER_DEFINED, "special": typ == CONTROL})
        else:
            vocab[t] = i
    pre = kv.get("tokenizer.ggml.pre", "gpt-2")
    if pre in SPLITS:
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": SPLITS[pre]}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    else:
        pre_tokenizer = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    tok = {"version": "1.0", "added_tokens": added, "normalizer": None, "pre_tokenizer": pre_tokenizer,
           "post_processor": None, "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "byte_fallback": False, "vocab": vocab, "merges": kv["tokenizer.ggml.merges"]}}
    return {"tokenizer.json": json.dumps(tok).encode()}


def _spm_files(kv):
    sp = tk.SentencePiece(words=[])
    sp.pieces = list(zip(kv["tokenizer.ggml.tokens"], kv["tokenizer.ggml.scores"], kv["tokenizer.ggml.token_type"]))
    return {"tokenizer.model": sp.model_bytes()}


def write_folder(kv, folder, arch):
    """A model folder of `arch` whose tokenizer is the GGUF's, with a
    one-layer model of zeros (vocab_size = the GGUF's token count)."""
    os.makedirs(folder, exist_ok=True)
    spm = kv["tokenizer.ggml.model"] == "llama"
    files = _spm_files(kv) if spm else _bpe_files(kv)
    tokens = kv["tokenizer.ggml.tokens"]
    tc = {"add_bos_token": kv.get("tokenizer.ggml.add_bos_token", spm), "add_eos_token": False}
    for key, name in (("bos", "bos_token_id"), ("eos", "eos_token_id"), ("unk", "unknown_token_id")):
        if f"tokenizer.ggml.{name}" in kv:
            tc[f"{key}_token"] = tokens[kv[f"tokenizer.ggml.{name}"]]
    files["tokenizer_config.json"] = json.dumps(tc).encode()
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    D, V = 64, len(tokens)
    config = {"architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[arch]], "hidden_size": D,
              "intermediate_size": 64, "num_attention_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 1,
              "vocab_size": V, "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "tie_word_embeddings": True}
    for key, name in (("bos_token_id", "bos_token_id"), ("eos_token_id", "eos_token_id")):
        if f"tokenizer.ggml.{name}" in kv:
            config[key] = kv[f"tokenizer.ggml.{name}"]
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    shapes = [("model.embed_tokens.weight", [V, D]), ("model.norm.weight", [D]),
              ("model.layers.0.input_layernorm.weight", [D]), ("model.layers.0.post_attention_layernorm.weight", [D])]
    for m in ("q", "k", "v", "o"):
        shapes.append((f"model.layers.0.self_attn.{m}_proj.weight", [D, D]))
    if arch == "qwen2":
        shapes += [(f"model.layers.0.self_attn.{m}_proj.bias", [D]) for m in "qkv"]
    shapes += [(f"model.layers.0.mlp.{m}_proj.weight", [64, D] if m != "down" else [D, 64]) for m in ("gate", "up", "down")]
    header, offset = {}, 0
    for name, shape in shapes:
        n = 2 * shape[0] * (shape[1] if len(shape) > 1 else 1)
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + bytes(offset))


# The tokenizer keys whose values must come back unchanged.
COMPARED = ["tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
            "tokenizer.ggml.scores", "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"]

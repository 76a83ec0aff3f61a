"""Tiny Hugging Face model folders with random weights, one per architecture
hetero converts: config.json, model.safetensors (or shards and their index),
the tokenizer files, tokenizer_config.json and generation_config.json."""
import json
import math
import os
import random

from . import safetensors_io as st
from . import tokenizers as tk

ARCHS = ["llama", "llama3", "qwen2", "qwen3", "phi3", "gemma2", "gemma3"]
CHAT_TEMPLATE = ("{% for m in messages %}{{ '<' + m['role'] + '>' + m['content'] }}{% endfor %}"
                 "{% if add_generation_prompt %}{{ '<assistant>' }}{% endif %}")


def _config(arch, n_vocab, bos, eos, dims):
    c = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
         "num_hidden_layers": 2, "vocab_size": n_vocab, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
         "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "hidden_act": "silu",
         "bos_token_id": bos, "eos_token_id": eos}
    if arch in ("llama", "llama3"):
        c.update(architectures=["LlamaForCausalLM"], model_type="llama")
    if arch == "llama3":
        c.update(tie_word_embeddings=True, torch_dtype="float16",
                 rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                               "original_max_position_embeddings": 64})
    if arch == "qwen2":
        c.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2", tie_word_embeddings=True, torch_dtype="float32",
                 rms_norm_eps=1e-6, rope_theta=1000000.0)
    if arch == "qwen3":
        c.update(architectures=["Qwen3ForCausalLM"], model_type="qwen3", tie_word_embeddings=True, head_dim=32,
                 rms_norm_eps=1e-6)
    if arch == "phi3":
        c.update(architectures=["Phi3ForCausalLM"], model_type="phi3", original_max_position_embeddings=256,
                 rope_scaling=None, sliding_window=None)
    if arch == "gemma2":
        c.update(architectures=["Gemma2ForCausalLM"], model_type="gemma2", head_dim=16, query_pre_attn_scalar=16,
                 attn_logit_softcapping=2.0, final_logit_softcapping=4.0, sliding_window=4096, rms_norm_eps=1e-6,
                 hidden_act=None, hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True)
    if arch == "gemma3":
        c.update(architectures=["Gemma3ForCausalLM"], model_type="gemma3_text", head_dim=16, query_pre_attn_scalar=16,
                 num_hidden_layers=6, rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window=4096,
                 sliding_window_pattern=6, final_logit_softcapping=None, attn_logit_softcapping=None, rms_norm_eps=1e-6,
                 rope_scaling={"rope_type": "linear", "factor": 8.0}, hidden_activation="gelu_pytorch_tanh",
                 tie_word_embeddings=True)
    c.update(dims)
    return c


def _tokenizer(arch):
    """(files to write: name -> bytes or JSON, vocabulary size, bos id, eos id, encoder, add_bos)."""
    if arch in ("llama3", "qwen2", "qwen3"):
        bpe = tk.Bpe(tk.LLAMA3_SPLIT if arch == "llama3" else tk.QWEN2_SPLIT)
        n = len(bpe.vocab)
        if arch == "llama3":
            added = [(n, "<|begin_of_text|>", True), (n + 1, "<|end_of_text|>", True), (n + 2, "<|eot_id|>", True)]
            bos, eos = n, n + 1
            tc = {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "chat_template": CHAT_TEMPLATE,
                  "tokenizer_class": "PreTrainedTokenizerFast"}
            tok = tk.bpe_tokenizer_json(bpe, added, bos="<|begin_of_text|>")
        else:
            added = [(n, "<|endoftext|>", True), (n + 1, "<|im_start|>", True), (n + 2, "<|im_end|>", True),
                     (n + 3, "<think>", False)]
            bos, eos = None, n + 2
            tc = {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "add_bos_token": False,
                  "chat_template": CHAT_TEMPLATE, "tokenizer_class": "Qwen2Tokenizer", "errors": "replace"}
            tok = tk.bpe_tokenizer_json(bpe, added, merges_as_pairs=arch == "qwen3")
        tc["added_tokens_decoder"] = {str(i): {"content": t, "special": s, "normalized": False, "lstrip": False,
                                               "rstrip": False, "single_word": False} for i, t, s in added}
        files = {"tokenizer.json": tok, "tokenizer_config.json": tc}
        prefix = [bos] if arch == "llama3" else []
        return files, n + len(added) + 5, bos, eos, lambda text: prefix + bpe.encode(text)
    # SentencePiece: Gemma's without a space prefix.
    spm = tk.SentencePiece(add_space_prefix=not arch.startswith("gemma"))
    n = len(spm.pieces)
    tc = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": True, "add_eos_token": False,
          "chat_template": CHAT_TEMPLATE, "tokenizer_class": "LlamaTokenizer",
          "added_tokens_decoder": {"0": {"content": "<unk>", "special": True}, "1": {"content": "<s>", "special": True},
                                   "2": {"content": "</s>", "special": True},
                                   str(n): {"content": "<user>", "special": False},
                                   str(n + 1): {"content": "<end_of_turn>", "special": True},
                                   # llama.cpp looks this one up in every model named phi3
                                   str(n + 2): {"content": "<|endoftext|>", "special": True}}}
    files = {"tokenizer.model": spm.model_bytes(), "tokenizer_config.json": tc}
    return files, n + 4, 1, 2, lambda text: [1] + spm.encode(text)


def _weights(arch, c, rng):
    """[(name, shape, values)] in Hugging Face's names (before dtype rounding)."""
    D, F, H, KV = c["hidden_size"], c["intermediate_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or D // H
    V = c["vocab_size"]
    gemma = arch.startswith("gemma")

    def matrix(rows, cols, scale=1.0):
        a = scale * math.sqrt(3.0 / cols)  # standard deviation scale / sqrt(cols)
        return [rng.uniform(-a, a) for _ in range(rows * cols)]

    def norm(n):
        # Gemma stores weight - 1; either way the effective weight is in 0.5 .. 1.5.
        return [rng.uniform(-0.5, 0.5) + (0.0 if gemma else 1.0) for _ in range(n)]

    def vector(n, a):
        return [rng.uniform(-a, a) for _ in range(n)]

    # Embeddings large enough that the (often tied) classifier is decisive.
    w = [("model.embed_tokens.weight", [V, D], matrix(V, D, 3.0 / math.sqrt(D) if gemma else 3.0))]
    for layer in range(c["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        w.append((p + "input_layernorm.weight", [D], norm(D)))
        if arch == "phi3":
            w.append((p + "self_attn.qkv_proj.weight", [(H + 2 * KV) * hd, D], matrix((H + 2 * KV) * hd, D)))
        else:
            w.append((p + "self_attn.q_proj.weight", [H * hd, D], matrix(H * hd, D)))
            w.append((p + "self_attn.k_proj.weight", [KV * hd, D], matrix(KV * hd, D)))
            w.append((p + "self_attn.v_proj.weight", [KV * hd, D], matrix(KV * hd, D)))
        if arch == "qwen2":
            w += [(p + "self_attn.q_proj.bias", [H * hd], vector(H * hd, 0.3)),
                  (p + "self_attn.k_proj.bias", [KV * hd], vector(KV * hd, 0.3)),
                  (p + "self_attn.v_proj.bias", [KV * hd], vector(KV * hd, 0.3))]
        if arch in ("qwen3", "gemma3"):
            w += [(p + "self_attn.q_norm.weight", [hd], norm(hd)), (p + "self_attn.k_norm.weight", [hd], norm(hd))]
        w.append((p + "self_attn.o_proj.weight", [D, H * hd], matrix(D, H * hd)))
        w.append((p + "post_attention_layernorm.weight", [D], norm(D)))
        if gemma:
            w += [(p + "pre_feedforward_layernorm.weight", [D], norm(D)),
                  (p + "post_feedforward_layernorm.weight", [D], norm(D))]
        if arch == "phi3":
            w.append((p + "mlp.gate_up_proj.weight", [2 * F, D], matrix(2 * F, D)))
        else:
            w += [(p + "mlp.gate_proj.weight", [F, D], matrix(F, D)), (p + "mlp.up_proj.weight", [F, D], matrix(F, D))]
        w.append((p + "mlp.down_proj.weight", [D, F], matrix(D, F)))
    w.append(("model.norm.weight", [D], norm(D)))
    if not c["tie_word_embeddings"]:
        w.append(("lm_head.weight", [V, D], matrix(V, D, 4.0)))
    return w


def write_model(arch, folder, seed=1, dtype=None, shards=1, dims=None, multimodal=False):
    """Writes the folder (`dims` overrides config.json's sizes, e.g.
    {"hidden_size": 256}; `multimodal`: Gemma 3 as its image-text class, the
    text model under text_config and language_model., beside a vision
    tower and projector); returns (config, encoder of prompts to token ids,
    weights as stored: name -> (shape, flat values))."""
    rng = random.Random(seed * 100 + ARCHS.index(arch))
    files, n_vocab, bos, eos, encode = _tokenizer(arch)
    c = _config(arch, n_vocab, bos, eos, dims or {})
    dtype = dtype or {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}[c["torch_dtype"]]
    os.makedirs(folder, exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(content if isinstance(content, bytes) else json.dumps(content, indent=1).encode())
    written = c
    if multimodal:
        text = {k: v for k, v in c.items() if k not in ("architectures", "bos_token_id", "eos_token_id")}
        written = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "text_config": text,
                   "vision_config": {"hidden_size": 32, "image_size": 28, "patch_size": 14}, "mm_tokens_per_image": 4,
                   "bos_token_id": bos, "eos_token_id": eos}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(written, f, indent=1)
    with open(os.path.join(folder, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": bos, "eos_token_id": eos, "temperature": 0.6, "top_p": 0.9, "do_sample": True}, f)
    tensors = [(name, dtype, shape, values) for name, shape, values in _weights(arch, c, rng)]
    if multimodal:
        tensors = [(n.replace("model.", "language_model.model.", 1), d, shape, v) for n, d, shape, v in tensors]
        tensors += [("vision_tower.vision_model.embeddings.patch_embedding.weight", dtype, [32, 3, 14, 14], [0.01] * (32 * 588)),
                    ("multi_modal_projector.mm_input_projection_weight", dtype, [32, 64], [0.02] * (32 * 64))]
    if shards == 1:
        st.write(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
    else:
        per = (len(tensors) + shards - 1) // shards
        weight_map = {}
        for i in range(shards):
            part = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
            chunk = tensors[i * per:(i + 1) * per]
            st.write(os.path.join(folder, part), chunk, {"format": "pt"})
            weight_map.update({t[0]: part for t in chunk})
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=1)
    weights = {name: (shape, st.stored(dtype, values)) for name, _, shape, values in tensors}
    return c, encode, weights

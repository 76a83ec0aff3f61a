"""A forward pass of each architecture as Hugging Face's transformers
defines it (rotate-half RoPE on the checkpoint's own Q/K layout, Gemma's
1 + weight norms, ...), in double precision on the stored weights. It is
independent of any GGUF convention, so hetero's logits on the converted
file check the conversion itself."""
import math


def _rows(values, rows, cols):
    return [values[r * cols:(r + 1) * cols] for r in range(rows)]


def _matvec(rows, x):
    return [math.fsum(a * b for a, b in zip(row, x)) for row in rows]


class Reference:
    def __init__(self, arch, config, weights):
        c = config
        self.arch, self.c = arch, c
        self.gemma = arch.startswith("gemma")
        self.D, self.H, self.KV = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = c.get("head_dim") or self.D // self.H
        self.F, self.L, self.V = c["intermediate_size"], c["num_hidden_layers"], c["vocab_size"]
        self.eps = c["rms_norm_eps"]
        self.w, self.m = {}, {}  # vectors; matrices as lists of rows
        for name, (shape, values) in weights.items():
            if len(shape) == 2:
                self.m[name] = _rows(values, shape[0], shape[1])
            else:
                self.w[name] = values
        self.out = self.m.get("lm_head.weight", self.m["model.embed_tokens.weight"])

    # -- pieces
    def norm(self, x, w):
        scale = 1.0 / math.sqrt(math.fsum(v * v for v in x) / len(x) + self.eps)
        if self.gemma:
            return [v * scale * (1.0 + g) for v, g in zip(x, w)]
        return [v * scale * g for v, g in zip(x, w)]

    def act(self, x):
        if self.gemma:  # GELU, tanh approximation
            return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        return x / (1.0 + math.exp(-x))

    def inv_freq(self, layer):
        c, hd = self.c, self.hd
        theta, scale = c.get("rope_theta", 10000.0), 1.0
        rs = c.get("rope_scaling") or {}
        if self.arch == "gemma3":
            if (layer + 1) % c["sliding_window_pattern"]:
                return [1.0 / c["rope_local_base_freq"] ** (2 * i / hd) for i in range(hd // 2)]
            scale = rs.get("factor", 1.0) if rs.get("rope_type") == "linear" else 1.0
        freqs = [1.0 / theta ** (2 * i / hd) / scale for i in range(hd // 2)]
        if rs.get("rope_type") == "llama3":
            factor, low, high, old = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"]
            out = []
            for f in freqs:
                wavelen = 2 * math.pi / f
                if wavelen < old / high:
                    out.append(f)
                elif wavelen > old / low:
                    out.append(f / factor)
                else:
                    s = (old / wavelen - low) / (high - low)
                    out.append((1 - s) * f / factor + s * f)
            freqs = out
        return freqs

    def rope(self, x, pos, freqs):
        half = self.hd // 2
        out = list(x)
        for i, f in enumerate(freqs):
            cs, sn = math.cos(pos * f), math.sin(pos * f)
            a, b = x[i], x[i + half]
            out[i], out[i + half] = a * cs - b * sn, b * cs + a * sn
        return out

    # -- the model
    def logits(self, tokens):
        """Logits after each token of `tokens` (one list per position)."""
        c, w, m = self.c, self.w, self.m
        D, H, KV, hd, F = self.D, self.H, self.KV, self.hd, self.F
        cache = [([], []) for _ in range(self.L)]
        freqs = [self.inv_freq(layer) for layer in range(self.L)]
        scale = (c["query_pre_attn_scalar"] if self.gemma else hd) ** -0.5
        out = []
        for pos, t in enumerate(tokens):
            x = list(m["model.embed_tokens.weight"][t])
            if self.gemma:
                x = [v * math.sqrt(D) for v in x]
            for layer in range(self.L):
                p = f"model.layers.{layer}."
                h = self.norm(x, w[p + "input_layernorm.weight"])
                if self.arch == "phi3":
                    qkv = _matvec(m[p + "self_attn.qkv_proj.weight"], h)
                    q, k, v = qkv[:H * hd], qkv[H * hd:(H + KV) * hd], qkv[(H + KV) * hd:]
                else:
                    q = _matvec(m[p + "self_attn.q_proj.weight"], h)
                    k = _matvec(m[p + "self_attn.k_proj.weight"], h)
                    v = _matvec(m[p + "self_attn.v_proj.weight"], h)
                if self.arch == "qwen2":
                    q = [a + b for a, b in zip(q, w[p + "self_attn.q_proj.bias"])]
                    k = [a + b for a, b in zip(k, w[p + "self_attn.k_proj.bias"])]
                    v = [a + b for a, b in zip(v, w[p + "self_attn.v_proj.bias"])]
                qh = [q[i * hd:(i + 1) * hd] for i in range(H)]
                kh = [k[i * hd:(i + 1) * hd] for i in range(KV)]
                vh = [v[i * hd:(i + 1) * hd] for i in range(KV)]
                if self.arch in ("qwen3", "gemma3"):
                    qh = [self.norm(x_, w[p + "self_attn.q_norm.weight"]) for x_ in qh]
                    kh = [self.norm(x_, w[p + "self_attn.k_norm.weight"]) for x_ in kh]
                qh = [self.rope(x_, pos, freqs[layer]) for x_ in qh]
                kh = [self.rope(x_, pos, freqs[layer]) for x_ in kh]
                keys, values = cache[layer]
                keys.append(kh)
                values.append(vh)
                attn = []
                for i in range(H):
                    g = i // (H // KV)
                    s = [math.fsum(a * b for a, b in zip(qh[i], keys[j][g])) * scale for j in range(pos + 1)]
                    if c.get("attn_logit_softcapping"):
                        cap = c["attn_logit_softcapping"]
                        s = [cap * math.tanh(v_ / cap) for v_ in s]
                    top = max(s)
                    e = [math.exp(v_ - top) for v_ in s]
                    z = math.fsum(e)
                    attn += [math.fsum(e[j] / z * values[j][g][d] for j in range(pos + 1)) for d in range(hd)]
                o = _matvec(m[p + "self_attn.o_proj.weight"], attn)
                if self.gemma:
                    o = self.norm(o, w[p + "post_attention_layernorm.weight"])
                x = [a + b for a, b in zip(x, o)]
                h = self.norm(x, w[p + ("pre_feedforward_layernorm.weight" if self.gemma else "post_attention_layernorm.weight")])
                if self.arch == "phi3":
                    gu = _matvec(m[p + "mlp.gate_up_proj.weight"], h)
                    gate, up = gu[:F], gu[F:]
                else:
                    gate, up = _matvec(m[p + "mlp.gate_proj.weight"], h), _matvec(m[p + "mlp.up_proj.weight"], h)
                f = _matvec(m[p + "mlp.down_proj.weight"], [self.act(a) * b for a, b in zip(gate, up)])
                if self.gemma:
                    f = self.norm(f, w[p + "post_feedforward_layernorm.weight"])
                x = [a + b for a, b in zip(x, f)]
            logits = _matvec(self.out, self.norm(x, w["model.norm.weight"]))
            if c.get("final_logit_softcapping"):
                cap = c["final_logit_softcapping"]
                logits = [cap * math.tanh(v_ / cap) for v_ in logits]
            out.append(logits)
        return out


def log_softmax(logits):
    top = max(logits)
    z = math.log(math.fsum(math.exp(v - top) for v in logits))
    return [v - top - z for v in logits]

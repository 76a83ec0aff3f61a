"""Small tokenizers in Hugging Face's files, and encoders that tokenize
ASCII prompts as llama.cpp's (and hetero's) tokenizers do for them.

bpe_tokenizer(): a byte-level BPE tokenizer.json (Llama 3's or Qwen2's
split expression), its merges built from a word list.
sentencepiece_model(): a SentencePiece tokenizer.model (protobuf), with
byte fallback, whose pieces are the word list's prefixes.
"""
import re
import struct

WORDS = ["Once", "upon", "a", "time", "there", "was", "little", "girl", "named", "Lily", "she", "liked", "to", "play",
         "the", "park", "and", "sun", "hello", "world", "one", "two"]

LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")


def ascii_split(split):
    """The split expression for ASCII text in Python's re (no \\p{..} classes)."""
    s = split.replace(r"[^\r\n\p{L}\p{N}]", r"[^\r\nA-Za-z0-9]").replace(r"[^\s\p{L}\p{N}]", r"[^\sA-Za-z0-9]")
    return s.replace(r"\p{L}", "[A-Za-z]").replace(r"\p{N}", "[0-9]")


def bytes_to_unicode():
    """GPT-2's map of the 256 bytes to printable characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE_CHARS = bytes_to_unicode()


class Bpe:
    """A byte-level BPE vocabulary: 256 byte tokens, then one token per merge."""

    def __init__(self, split, words=WORDS):
        self.split = split
        self.vocab = {BYTE_CHARS[b]: b for b in range(256)}
        self.merges = []
        self.rank = {}
        # Each word (alone and after a space) becomes one token: merge the
        # first two of its symbols as BPE leaves them, until one is left.
        for word in words:
            for text in (word, " " + word):
                while len(syms := self.word_symbols(text)) > 1:
                    self.rank[(syms[0], syms[1])] = len(self.merges)
                    self.merges.append((syms[0], syms[1]))
                    self.vocab[syms[0] + syms[1]] = len(self.vocab)

    def word_symbols(self, word):
        syms = [BYTE_CHARS[b] for b in word.encode()]
        while len(syms) > 1:
            best = min(range(len(syms) - 1), key=lambda i: self.rank.get((syms[i], syms[i + 1]), 1 << 30))
            if (syms[best], syms[best + 1]) not in self.rank:
                break
            syms[best:best + 2] = [syms[best] + syms[best + 1]]
        return syms

    def pieces(self, text):
        """The pre-tokenizer's words of an ASCII text."""
        return re.findall(ascii_split(self.split), text)

    def encode(self, text):
        return [self.vocab[s] for word in self.pieces(text) for s in self.word_symbols(word)]


def bpe_tokenizer_json(bpe, added, bos=None, merges_as_pairs=False):
    """tokenizer.json for `bpe` with `added` = [(id, text, special)]; `bos`
    names a token a TemplateProcessing post-processor puts first."""
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": bpe.split}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    post = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    if bos is not None:
        post = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {bos: {"id": bos, "ids": [i for i, t, s in added if t == bos], "tokens": [bos]}}}]}
    merges = [[a, b] for a, b in bpe.merges] if merges_as_pairs else [f"{a} {b}" for a, b in bpe.merges]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": s} for i, t, s in added],
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": bpe.vocab, "merges": merges},
    }


# ---------------------------------------------------------------- SentencePiece

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPACE = "\u2581"


class SentencePiece:
    """<unk>, <s>, </s>, the 256 byte pieces, then every prefix of each
    "▁word" (and the word's characters), scored so longer pieces merge last."""

    def __init__(self, words=WORDS, add_space_prefix=True):
        self.add_space_prefix = add_space_prefix
        self.pieces = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL)]
        self.pieces += [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
        seen = {p[0] for p in self.pieces}
        texts = [SPACE] + [c for w in words for c in w] + [(SPACE + w)[:n] for w in words for n in range(2, len(w) + 2)]
        for t in texts:
            if t not in seen:
                seen.add(t)
                self.pieces.append((t, -float(len(self.pieces)), NORMAL))
        self.ids = {p[0]: i for i, p in enumerate(self.pieces)}

    def encode(self, text):
        """llama.cpp's SentencePiece BPE: merge the best-scored adjacent pair
        whose text is a piece until none is; unknown symbols as bytes."""
        if self.add_space_prefix:
            text = " " + text
        syms = list(text.replace(" ", SPACE))
        while True:
            best = None
            for i in range(len(syms) - 1):
                t = syms[i] + syms[i + 1]
                if t in self.ids and self.pieces[self.ids[t]][2] == NORMAL:
                    score = self.pieces[self.ids[t]][1]
                    if best is None or score > best[0]:
                        best = (score, i)
            if best is None:
                break
            i = best[1]
            syms[i:i + 2] = [syms[i] + syms[i + 1]]
        ids = []
        for s in syms:
            if s in self.ids:
                ids.append(self.ids[s])
            else:
                ids += [self.ids[f"<0x{b:02X}>"] for b in s.encode()]
        return ids

    def model_bytes(self):
        """The ModelProto: pieces (field 1), a BPE TrainerSpec (2) with byte
        fallback and the special ids, a NormalizerSpec (3)."""
        def varint(n):
            out = bytearray()
            while True:
                b = n & 0x7F
                n >>= 7
                out.append(b | (0x80 if n else 0))
                if not n:
                    return bytes(out)

        def field(num, wire, payload):
            return varint(num << 3 | wire) + payload

        def delimited(num, data):
            return field(num, 2, varint(len(data)) + data)

        out = b""
        for text, score, typ in self.pieces:
            piece = delimited(1, text.encode()) + field(2, 5, struct.pack("<f", score))
            if typ != NORMAL:
                piece += field(3, 0, varint(typ))
            out += delimited(1, piece)
        trainer = (field(3, 0, varint(2)) + field(35, 0, varint(1)) + field(40, 0, varint(0)) + field(41, 0, varint(1)) +
                   field(42, 0, varint(2)) + field(43, 0, varint((1 << 64) - 1)))  # pad_id -1, as a 64-bit varint
        normalizer = delimited(1, b"identity") + field(3, 0, varint(1 if self.add_space_prefix else 0))
        return out + delimited(2, trainer) + delimited(3, normalizer)

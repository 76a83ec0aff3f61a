"""A GGUF file's metadata and tensor table (names, types, shapes), read
with struct for the checks of the converted files."""
import struct

GGML_TYPES = {0: "f32", 1: "f16", 2: "q4_0", 3: "q4_1", 6: "q5_0", 7: "q5_1", 8: "q8_0", 10: "q2_K", 11: "q3_K",
              12: "q4_K", 13: "q5_K", 14: "q6_K", 20: "iq4_nl", 30: "bf16"}
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


class Gguf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.raw = f.read()
        self.at = 0
        assert self._take(4) == b"GGUF", f"{path}: not a GGUF file"
        self.version = self._u("<I")
        n_tensors, n_kv = self._u("<Q"), self._u("<Q")
        self.kv = {}
        for _ in range(n_kv):
            key = self._str()
            self.kv[key] = self._value(self._u("<I"))
        self.tensors = {}
        for _ in range(n_tensors):
            name = self._str()
            dims = [self._u("<Q") for _ in range(self._u("<I"))]
            self.tensors[name] = (GGML_TYPES.get(self._u("<I"), "?"), dims, self._u("<Q"))

    def data(self):
        """The tensor data section (after the header, at the file's alignment)."""
        align = self.kv.get("general.alignment", 32)
        return self.raw[(self.at + align - 1) // align * align:]

    def _take(self, n):
        b = self.raw[self.at:self.at + n]
        self.at += n
        return b

    def _u(self, fmt):
        return struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]

    def _str(self):
        return self._take(self._u("<Q")).decode("utf-8", "replace")

    def _value(self, t):
        if t == 8:
            return self._str()
        if t == 9:
            et, n = self._u("<I"), self._u("<Q")
            return [self._value(et) for _ in range(n)]
        return self._u(_SCALARS[t])

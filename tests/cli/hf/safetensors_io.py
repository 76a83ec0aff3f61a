"""safetensors files written and read with struct: an 8-byte little-endian
header length, the JSON header, then the tensors' bytes."""
import json
import struct


def bf16_bits(x):
    """float -> bfloat16 bits, rounded to nearest even (as torch rounds)."""
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    b += 0x7FFF + ((b >> 16) & 1)
    return (b >> 16) & 0xFFFF


def encode(dtype, values):
    n = len(values)
    if dtype == "F32":
        return struct.pack(f"<{n}f", *values)
    if dtype == "F16":
        return struct.pack(f"<{n}e", *values)
    if dtype == "BF16":
        return struct.pack(f"<{n}H", *[bf16_bits(v) for v in values])
    raise ValueError(dtype)


def decode(dtype, data):
    if dtype == "F32":
        return list(struct.unpack(f"<{len(data) // 4}f", data))
    if dtype == "F16":
        return list(struct.unpack(f"<{len(data) // 2}e", data))
    if dtype == "BF16":
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in struct.unpack(f"<{len(data) // 2}H", data)]
    raise ValueError(dtype)


def stored(dtype, values):
    """The values as the file will hold them (rounded to the dtype)."""
    return decode(dtype, encode(dtype, values))


def header_and_data(tensors, metadata=None):
    """tensors: [(name, dtype, shape, flat values)] -> (header dict, data bytes)."""
    header, blobs, offset = {}, [], 0
    for name, dtype, shape, values in tensors:
        data = encode(dtype, values)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    if metadata is not None:
        header["__metadata__"] = metadata
    return header, b"".join(blobs)


def file_bytes(header, data):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the format pads the header with spaces
    return struct.pack("<Q", len(h)) + h + data


def write(path, tensors, metadata=None):
    header, data = header_and_data(tensors, metadata)
    with open(path, "wb") as f:
        f.write(file_bytes(header, data))


def read(path):
    """name -> (dtype, shape, flat values)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = (e["dtype"], e["shape"], decode(e["dtype"], raw[base + b:base + end]))
    return out

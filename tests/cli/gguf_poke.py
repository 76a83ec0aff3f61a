#!/usr/bin/env python3
"""Damages a GGUF file the way a bad disk or a careless tool would: writes a
little-endian u16 into tensor NAME's data, at BLOCK * BLOCK_BYTES + FIELD.
Usage: gguf_poke.py SRC DST NAME BLOCK BLOCK_BYTES FIELD HEX_BITS
The tensor infos are found by name (a length-prefixed string), so the file
must come from the GGUF writer with 'output.weight' as its last tensor."""
import struct,sys
def tensor_offset(d, name, last='output.weight'):
    def info(n):
        needle = struct.pack('<Q', len(n)) + n.encode()
        i = d.find(needle) + len(needle)
        nd = struct.unpack_from('<I', d, i)[0]
        i += 4 + 8 * nd
        return struct.unpack_from('<Q', d, i + 4)[0], i + 12
    return (info(last)[1] + 31) // 32 * 32 + info(name)[0]
src, dst, name, block, block_bytes, field, bits = sys.argv[1:8]
d = bytearray(open(src, 'rb').read())
at = tensor_offset(d, name) + int(block) * int(block_bytes) + int(field)
d[at:at + 2] = struct.pack('<H', int(bits, 16))
open(dst, 'wb').write(d)

#!/usr/bin/env python3
"""tests/tools/png_check.py FILE WIDTH HEIGHT R G B BYTES: decode a PNG with Python's own
zlib and struct (independent of flood's generator) and check its size, its chunks' CRCs,
its dimensions, its colour depth, that every pixel is (R, G, B) and that the zlib stream's
Adler-32 holds. Prints "ok" or a reason, exit 0 or 1."""
import struct
import sys
import zlib


def check(path, w, h, rgb, size):
    data = open(path, "rb").read()
    if len(data) != size:
        return "size %d, want %d" % (len(data), size)
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return "bad signature"
    pos, idat, chunks = 8, b"", []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            return "bad CRC in %r" % kind
        chunks.append(kind)
        if kind == b"IHDR":
            iw, ih, depth, ctype, comp, filt, inter = struct.unpack(">IIBBBBB", body)
            if (iw, ih, depth, ctype, comp, filt, inter) != (w, h, 8, 2, 0, 0, 0):
                return "IHDR %r" % ((iw, ih, depth, ctype, comp, filt, inter),)
        elif kind == b"IDAT":
            idat += body
        elif kind[0:1].isupper() and kind not in (b"IEND",):
            return "unknown critical chunk %r" % kind
        pos += 12 + n
    if chunks[0] != b"IHDR" or chunks[-1] != b"IEND" or pos != len(data):
        return "chunk order %r" % chunks
    raw = zlib.decompress(idat)  # checks the Adler-32 too
    row = 1 + 3 * w
    if len(raw) != row * h:
        return "raw %d bytes, want %d" % (len(raw), row * h)
    want = b"\x00" + bytes(rgb) * w
    for y in range(h):
        if raw[y * row:(y + 1) * row] != want:
            return "row %d differs" % y
    return "ok"


if __name__ == "__main__":
    a = sys.argv[1:]
    r = check(a[0], int(a[1]), int(a[2]), [int(a[3]), int(a[4]), int(a[5])], int(a[6]))
    print(r)
    sys.exit(0 if r == "ok" else 1)

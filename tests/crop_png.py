#!/usr/bin/python3
"""crop_png.py IN OUT - copies the PNG screenshot IN to OUT without the
rows of background colour at its bottom (plus a margin), so that a page
rendered in a tall window is shown whole but no taller than it is
(tests/e2e_report.sh, for the pictures README shows: WEFT_REPORT_KEEP).
8-bit RGB or RGBA, non-interlaced: what Chromium writes."""
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", head)
    assert depth == 8 and ctype in (2, 6) and not interlace, head
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], None
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        up = prev or bytearray(stride)
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            ul = up[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + left) & 255
            elif f == 2:
                line[i] = (line[i] + up[i]) & 255
            elif f == 3:
                line[i] = (line[i] + (left + up[i]) // 2) & 255
            elif f == 4:
                line[i] = (line[i] + paeth(left, up[i], ul)) & 255
        rows.append(bytes(line))
        prev = line
    return head, rows


def chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body +
            struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))


def main():
    head, rows = read(sys.argv[1])
    bg = rows[-1]
    last = len(rows) - 1
    while last > 0 and rows[last] == bg:
        last -= 1
    keep = rows[:min(len(rows), last + 24)]
    head = struct.pack(">I", struct.unpack(">I", head[:4])[0]) + \
        struct.pack(">I", len(keep)) + head[8:]
    body = zlib.compress(b"".join(b"\0" + r for r in keep), 9)
    with open(sys.argv[2], "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) +
                  chunk(b"IDAT", body) + chunk(b"IEND", b""))


main()

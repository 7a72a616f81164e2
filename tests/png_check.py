#!/usr/bin/python3
"""png_check.py PNG [MIN_WIDTH MIN_HEIGHT] - fails unless PNG is a
screenshot with something drawn on it: at least MIN_WIDTH x MIN_HEIGHT
pixels (1000 x 800 unless given) and many distinct byte values in a
sample of its rows (a blank page has a few). 8-bit RGB or RGBA, as
Chromium writes them. Shared by tests/e2e_report.sh and
tests/view_cdp.py (which imports check)."""
import struct
import sys
import zlib


def check(path, min_w=1000, min_h=800):
    """Raises AssertionError unless the PNG at path is drawn on."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w, h, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp + 1
    # Distinct values of the filtered bytes of a sample of rows: a blank
    # page is a few; a drawn one is many.
    seen = set()
    for y in range(0, h, 7):
        seen.update(raw[y * stride + 1:(y + 1) * stride:5])
    assert w >= min_w and h >= min_h, (w, h)
    assert len(seen) > 40, "only %d distinct values" % len(seen)


if __name__ == "__main__":
    try:
        check(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
    except AssertionError as e:
        sys.exit("%s: %s" % (sys.argv[1], e))

"""weftproto.py - the little of weft's wire protocol that the tests'
Python programs (ask_status.py, unread_answers.py, relay.py,
fakeweftd.py) speak: protobuf varints and fields (proto/weft.proto), and
frames, a 4-byte big-endian length then an Envelope (proto/frame.h)."""

PROTOCOL_VERSION = 6  # proto/frame.h WEFT_PROTOCOL_VERSION


def enc_varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n])


def read_varint(b, i):
    """The varint at b[i:] and the index after it."""
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, i


def fields(b):
    """(number, wire type, value) of each field of message bytes b."""
    i = 0
    while i < len(b):
        key, i = read_varint(b, i)
        kind = key & 7
        if kind == 0:
            v, i = read_varint(b, i)
        elif kind == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("unexpected wire type %d" % kind)
        yield key >> 3, kind, v


def field(b, want):
    """Bytes of length-delimited field `want` of message bytes b (b""
    when it has none)."""
    for num, kind, v in fields(b):
        if num == want and kind == 2:
            return v
    return b""


def enc_len(num, data):
    """Length-delimited field num holding data (bytes, or str as UTF-8)."""
    if isinstance(data, str):
        data = data.encode()
    return enc_varint(num << 3 | 2) + enc_varint(len(data)) + data


def enc_uint(num, n):
    return enc_varint(num << 3) + enc_varint(n)


def frame(env):
    """Envelope bytes env as a frame."""
    return len(env).to_bytes(4, "big") + env


def recv_full(s, n):
    """n bytes from socket s, or None when it closes first."""
    out = b""
    while len(out) < n:
        got = s.recv(n - len(out))
        if not got:
            return None
        out += got
    return out

#!/usr/bin/env python3
"""ask_status.py SOCKET - asks weftd on its Unix socket for its status
(Query STATUS, as a user's `weft status` does when it cannot read the
status file; root's would read it) and prints the answer's JSON. Exit 0
when the whole answer came, 1 when weftd answered an Error (printed)
or closed the connection first."""
import socket
import struct
import sys

PROTOCOL_VERSION = 6  # proto/frame.h WEFT_PROTOCOL_VERSION


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def read_varint(b, i):
    n = shift = 0
    while True:
        n |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return n, i


def fields(b):
    """(number, wire type, value) of each field of message bytes b."""
    i = 0
    while i < len(b):
        key, i = read_varint(b, i)
        if key & 7 == 0:
            v, i = read_varint(b, i)
        elif key & 7 == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("unexpected wire type %d" % (key & 7))
        yield key >> 3, key & 7, v


def recv_full(s, n):
    out = b""
    while len(out) < n:
        got = s.recv(n - len(out))
        if not got:
            return None
        out += got
    return out


def main():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    query = b"\x08" + varint(PROTOCOL_VERSION) + b"\x10\x01"  # STATUS
    env = bytes([12 << 3 | 2]) + varint(len(query)) + query
    s.sendall(struct.pack(">I", len(env)) + env)
    data = b""
    while True:
        head = recv_full(s, 4)
        if head is None:
            print("weftd closed the connection before answering")
            return 1
        frame = recv_full(s, struct.unpack(">I", head)[0])
        if frame is None:
            print("weftd closed the connection in a frame")
            return 1
        for num, _, v in fields(frame):
            if num == 7:  # Error
                msg = [x for n, _, x in fields(v) if n == 2]
                print("Error: %s" % (msg[0].decode(errors="replace")
                                     if msg else v))
                return 1
            if num == 13:  # Answer
                last = False
                for n, _, x in fields(v):
                    if n == 1:
                        data += x
                    elif n == 2:
                        last = bool(x)
                if last:
                    print(data.decode(errors="replace"))
                    return 0


if __name__ == "__main__":
    sys.exit(main())

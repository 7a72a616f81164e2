#!/usr/bin/python3
"""fakeweftd.py - a program of another user holding weftd's address.

  fakeweftd.py PORTFILE LOG MUNGE_SOCKET CLIENT_UID

Listens on a free loopback port (written to PORTFILE), takes one
connection and answers its Auth as well as a user who is not weftd can:
it decodes the client's credential with unmunge (learning its nonce) and
answers with a credential of its own uid that the client's uid may
decode, carrying that nonce. Everything the client sends is appended to
LOG (raw bytes). Exits after the client closed, or after 30 s.
"""
import os
import socket
import subprocess
import sys


def varint(b, i):
    n = s = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return n, i


def field(buf, want):
    """Bytes of length-delimited field `want` of a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        kind = key & 7
        if kind == 0:
            _, i = varint(buf, i)
        elif kind == 2:
            n, i = varint(buf, i)
            if key >> 3 == want:
                return buf[i:i + n]
            i += n
        else:
            raise ValueError("unexpected wire type %d" % kind)
    return b""


def enc_len(tag, data):
    out = bytes([tag])
    n = len(data)
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n]) + data


def main():
    portfile, log, sock_path, client_uid = sys.argv[1:5]
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(30)
    with open(portfile + ".tmp", "w") as f:
        f.write("127.0.0.1:%d\n" % srv.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    conn, _ = srv.accept()
    conn.settimeout(30)
    got = b""
    while len(got) < 4 or len(got) < 4 + int.from_bytes(got[:4], "big"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        got += chunk
    with open(log, "ab") as f:
        f.write(got)
    env = got[4:4 + int.from_bytes(got[:4], "big")]
    cred = field(field(env, 9), 2)  # Envelope.auth.credential
    nonce = subprocess.run(["unmunge", "-S", sock_path, "-m", "/dev/null"],
                           input=cred, capture_output=True).stdout
    mine = subprocess.run(["munge", "-S", sock_path, "-u", client_uid],
                          input=nonce, capture_output=True).stdout.strip()
    ack = enc_len(0x52, enc_len(0x0A, mine))  # Envelope.auth_ack.credential
    conn.sendall(len(ack).to_bytes(4, "big") + ack)
    while True:
        try:
            chunk = conn.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        with open(log, "ab") as f:
            f.write(chunk)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""fakeweftd.py - a program of another user holding weftd's address.

  fakeweftd.py PORTFILE LOG MUNGE_SOCKET CLAIM_UID [PORT [HOST]]

Listens on HOST (default loopback) PORT (weftd's while weftd is down;
default a free one), its address written to PORTFILE, takes one
connection and plays weftd as well as a user who is not weftd can: it
speaks first with a Challenge saying it runs as CLAIM_UID (its own uid,
or weftd's to lure the client on), tries to decode the client's
credential with unmunge (what unmunge says goes to LOG.unmunge) and
answers with an AuthAck whose proof is random bytes, as it cannot know
the session key. Everything the client sends is appended to LOG (raw
bytes). Exits after the client closed, or after 30 s.
"""
import os
import socket
import subprocess
import sys

from weftproto import PROTOCOL_VERSION, enc_len, enc_uint, field, frame


def main():
    portfile, log, sock_path, claim_uid = sys.argv[1:5]
    port = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    host = sys.argv[6] if len(sys.argv) > 6 else "127.0.0.1"
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, port))
    srv.listen(1)
    srv.settimeout(30)
    with open(portfile + ".tmp", "w") as f:
        f.write("%s:%d\n" % (host, srv.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    conn, _ = srv.accept()
    conn.settimeout(30)
    challenge = (enc_uint(1, PROTOCOL_VERSION) + enc_len(2, os.urandom(16)) +
                 enc_uint(3, int(claim_uid)))
    conn.sendall(frame(enc_len(15, challenge)))  # Envelope.challenge
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
    out = subprocess.run(["unmunge", "-S", sock_path], input=cred,
                         capture_output=True)
    with open(log + ".unmunge", "wb") as f:
        f.write(out.stdout + out.stderr)
    ack = enc_len(10, enc_len(2, os.urandom(16)))  # Envelope.auth_ack.proof
    conn.sendall(frame(ack))
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

#!/usr/bin/python3
"""relay.py - a user's program that relays a client's connection to weftd.

  relay.py MODE PORTFILE LOG WEFTD [--uid UID] [--trace NAME] [--run RUN]
           [--rank R] [--size N] [--later S]

Listens on a free loopback port (written to PORTFILE), which the
client was pointed at (a mistyped WEFT_SERVER), and for each connection
opens one to WEFTD (HOST:PORT) and relays every byte both ways, as
another user may do to act as the client. What the client sends is
appended to LOG (raw bytes); what weftd answers is described, one line a
frame, in LOG.weftd (an Error's message in full). MODEs:

  read     relays only (a passive reader of the client's frames);
  plant    after relaying the client's Auth, sends weftd a Hello of its
           own claiming the client's uid (UID), trace NAME, command
           "rm -rf ~ # typed by bob", and a Goodbye;
  join     the same with a Hello of rank R of N of trace NAME in launch
           RUN, and a Goodbye saying "killed by bob";
  capture  keeps the client's Auth (relays nothing), and S seconds later
           (--later, default 3) presents it to weftd on a connection of
           its own, which weftd answers in LOG.weftd.

Exits 30 s after the last connection closed, or when killed.
"""
import argparse
import os
import socket
import sys
import threading
import time

from weftproto import PROTOCOL_VERSION, enc_len, enc_uint, fields, frame

KINDS = {1: "Hello", 2: "HelloAck", 3: "Definitions", 4: "EventBatch",
         5: "Ack", 6: "Goodbye", 7: "Error", 8: "ClockSync", 9: "Auth",
         10: "AuthAck", 11: "Heartbeat", 15: "Challenge"}
lock = threading.Lock()


def describe(payload):
    """One line about a frame weftd sent (its Envelope may be followed by
    a MAC the relay cannot check)."""
    try:
        for num, kind, v in fields(payload):
            name = KINDS.get(num, "field %d" % num)
            if num == 7 and kind == 2:
                msg = b"".join(x for n, k, x in fields(v) if n == 2)
                return "Error: " + msg.decode(errors="replace")
            return name
    except (ValueError, IndexError):
        pass
    return "%d bytes (sealed?)" % len(payload)


def frames(sock):
    """Yields the frames (payloads) arriving on sock until it closes."""
    buf = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            return
        if not chunk:
            return
        buf += chunk
        while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:4], "big"):
            n = int.from_bytes(buf[:4], "big")
            yield buf[4:4 + n]
            buf = buf[4 + n:]


def note(path, line):
    with lock, open(path, "a") as f:
        f.write(line + "\n")


def own_frames(args):
    """What bob sends weftd as the client, once her Auth went through."""
    if args.mode == "plant":
        rank, size, trace, cmd, ended = (0, 1, args.trace,
                                         "rm -rf ~ # typed by bob", "")
    else:
        rank, size, trace, cmd, ended = (args.rank, args.size, args.trace,
                                         "weft-demo", "killed by bob")
    hello = (enc_uint(1, PROTOCOL_VERSION) + enc_len(2, trace) +
             enc_uint(3, rank) + enc_uint(4, size) + enc_len(5, "bob") +
             enc_uint(6, os.getpid()) + enc_uint(7, args.uid) +
             enc_len(8, cmd) + enc_uint(10, 1000000000) +
             enc_len(14, args.run))
    goodbye = enc_len(2, ended) if ended else b""
    return frame(enc_len(1, hello)) + frame(enc_len(6, goodbye))


def to_weftd(client, server, args):
    first = True
    for payload in frames(client):
        with lock, open(args.log, "ab") as f:
            f.write(frame(payload))
        if args.mode == "capture":
            with open(args.log + ".auth", "wb") as f:
                f.write(frame(payload))
            client.close()
            server.close()
            threading.Thread(target=replay_later, args=(args,)).start()
            return
        try:
            server.sendall(frame(payload))
            if first and args.mode in ("plant", "join"):
                server.sendall(own_frames(args))
                note(args.log + ".weftd", "sent: %s's Hello as uid %d" %
                     (args.mode, args.uid))
        except OSError:
            return
        first = False
    try:
        server.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def to_client(server, client, args):
    for payload in frames(server):
        note(args.log + ".weftd", "weftd: " + describe(payload))
        try:
            client.sendall(frame(payload))
        except OSError:
            pass
    try:
        client.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def connect(addr):
    host, port = addr.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=30)


def replay_later(args):
    """The captured Auth, on a connection of bob's own, later."""
    time.sleep(args.later)
    with open(args.log + ".auth", "rb") as f:
        auth = f.read()
    s = connect(args.weftd)
    s.settimeout(10)
    got = frames(s)
    note(args.log + ".weftd", "own connection: " + describe(next(got)))
    s.sendall(auth)
    for payload in got:
        note(args.log + ".weftd", "replayed Auth: " + describe(payload))
        break
    s.close()
    note(args.log + ".weftd", "replay done")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["read", "plant", "join", "capture"])
    p.add_argument("portfile")
    p.add_argument("log")
    p.add_argument("weftd")
    p.add_argument("--uid", type=int, default=0)
    p.add_argument("--trace", default="planted")
    p.add_argument("--run", default="")
    p.add_argument("--rank", type=int, default=1)
    p.add_argument("--size", type=int, default=2)
    p.add_argument("--later", type=float, default=3)
    args = p.parse_args()
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(30)
    with open(args.portfile + ".tmp", "w") as f:
        f.write("127.0.0.1:%d\n" % srv.getsockname()[1])
    os.rename(args.portfile + ".tmp", args.portfile)
    while True:
        try:
            client, _ = srv.accept()
        except socket.timeout:
            break
        server = connect(args.weftd)
        server.settimeout(None)
        client.settimeout(None)
        threading.Thread(target=to_weftd, args=(client, server, args),
                         daemon=True).start()
        threading.Thread(target=to_client, args=(server, client, args),
                         daemon=True).start()
    time.sleep(args.later + 2 if args.mode == "capture" else 0)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""ask_status.py SOCKET - asks weftd on its Unix socket for its status
(Query STATUS, as a user's `weft status` does when it cannot read the
status file; root's would read it) and prints the answer's JSON. Exit 0
when the whole answer came, 1 when weftd answered an Error (printed)
or closed the connection first."""
import socket
import sys

from weftproto import PROTOCOL_VERSION, enc_len, enc_uint, fields, frame, \
    recv_full


def main():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    query = enc_uint(1, PROTOCOL_VERSION) + enc_uint(2, 1)  # STATUS
    s.sendall(frame(enc_len(12, query)))  # Envelope.query
    data = b""
    while True:
        head = recv_full(s, 4)
        if head is None:
            print("weftd closed the connection before answering")
            return 1
        payload = recv_full(s, int.from_bytes(head, "big"))
        if payload is None:
            print("weftd closed the connection in a frame")
            return 1
        for num, _, v in fields(payload):
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

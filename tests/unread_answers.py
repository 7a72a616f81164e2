#!/usr/bin/env python3
"""unread_answers.py SOCKET N SECONDS [--flood] - issue 30, findings 3
and 5: opens N connections to weftd's Unix socket, asks each for the
catalog (Query CATALOG, as `weft list` does) and never reads the answer,
for SECONDS; prints how many were refused at once (an Error came, or the
connection closed) and how many stayed open. With --flood, N threads
ask again and again for SECONDS, each as soon as its answer (or refusal)
was read, and it prints how many were asked and refused."""
import socket
import sys
import threading
import time

from weftproto import PROTOCOL_VERSION, enc_len, enc_uint, frame


def query_frame():
    # Query { protocol_version = 1; kind = 2 (CATALOG = 0: left out) }
    # in Envelope { query = 12 }
    return frame(enc_len(12, enc_uint(1, PROTOCOL_VERSION)))


def flood(path, n, seconds):
    """n threads, each asking again as soon as its answer (or refusal)
    is read in full, for seconds."""
    end = time.time() + seconds
    counts = [0, 0]  # questions asked, answers that were refusals

    def loop():
        while time.time() < end:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                s.sendall(query_frame())
                first = s.recv(5)
                counts[0] += 1
                if len(first) == 5 and first[4] == (7 << 3 | 2):
                    counts[1] += 1
                while s.recv(65536):
                    pass
            except OSError:
                pass
            finally:
                s.close()

    threads = [threading.Thread(target=loop) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("%d questions asked by %d threads in %g s, %d refused"
          % (counts[0], n, seconds, counts[1]))


def main():
    path, n, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    if "--flood" in sys.argv[4:]:
        flood(path, n, seconds)
        return
    conns = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Hold as little as the kernel lets us: what weftd cannot write
        # stays with weftd.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(path)
        s.sendall(query_frame())
        conns.append(s)
        time.sleep(0.01)
    time.sleep(seconds)
    refused = 0
    for s in conns:
        s.setblocking(False)
        try:
            head = s.recv(64, socket.MSG_PEEK)
            # An Error is field 7 of the Envelope, an Answer field 13.
            if not head or (len(head) > 4 and head[4] == (7 << 3 | 2)):
                refused += 1
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
    print("%d questions asked, %d refused, %d answers left unread"
          % (n, refused, n - refused))
    for s in conns:
        s.close()


if __name__ == "__main__":
    main()

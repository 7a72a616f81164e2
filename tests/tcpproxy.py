#!/usr/bin/python3
"""A loopback TCP proxy that breaks or slows connections, for reconnection
and slow-server tests.

usage: tcpproxy.py [--delay MS [--on-signal]] PORT_FILE UPSTREAM_HOST:PORT
                   CUTS SPARE [SEED]

Listens on 127.0.0.1 (a port the kernel picks, written to PORT_FILE once
listening) and forwards every connection to UPSTREAM. The first CUTS
connections are each cut at a random point - after a random number of
bytes forwarded in either direction, sometimes within the first few
hundred (during Hello) - by resetting both sides (RST, so neither side
mistakes the cut for an orderly close); later connections are forwarded
untouched. The first SPARE connections (the clients' first, whose Hello
failing would turn tracing off rather than make them reconnect) are not
cut during Hello. Prints one line per cut on stderr. Runs until killed.

With --delay MS, every byte the upstream sends (weftd's answers: HelloAck,
Ack, ClockSync, Error, its hang-up) reaches the client MS milliseconds
after the proxy read it, in order; what the client sends is not delayed.
With --on-signal too, nothing is delayed until the proxy gets SIGUSR1
(what came before, e.g. the clock offset's first answers, goes at once).

TCPPROXY_PORT in the environment picks the port instead of the kernel (a
test that kills the proxy and starts it again on the same port).
"""
import collections
import os
import random
import selectors
import signal
import socket
import struct
import sys
import time

BUFFER_LIMIT = 256 * 1024   # bytes queued towards one side before we stop reading
READ = selectors.EVENT_READ
WRITE = selectors.EVENT_WRITE


class Pair:
    """One client connection and its upstream connection."""

    def __init__(self, number, client, upstream, cut_at):
        self.number = number
        self.client = client
        self.upstream = upstream
        self.cut_at = cut_at        # bytes forwarded before the cut, or None
        self.moved = 0
        self.peer = {client: upstream, upstream: client}
        self.out = {client: bytearray(), upstream: bytearray()}  # to send
        self.events = {client: 0, upstream: 0}
        self.draining = False       # one side ended: flush, then close
        self.closed = False
        self.delayed = collections.deque()  # (due, bytes) towards client
        self.delayed_bytes = 0

    def queued_towards(self, s):
        """Bytes waiting to be sent to s, delayed ones included."""
        return len(self.out[s]) + (self.delayed_bytes if s is self.client
                                   else 0)


class Proxy:
    def __init__(self, upstream, cuts, spare, rng, delay):
        self.upstream = upstream
        self.cuts_left = cuts
        self.spare = spare
        self.rng = rng
        self.delay = delay          # seconds added to upstream -> client
        self.delaying = True        # --on-signal: False until SIGUSR1
        self.sel = selectors.DefaultSelector()
        self.count = 0
        self.pairs = set()

    def cut_point(self):
        if self.cuts_left <= 0:
            return None
        self.cuts_left -= 1
        if self.count > self.spare and self.rng.random() < 0.25:
            return self.rng.randint(1, 400)
        return self.rng.randint(20000, 300000)

    def accept(self, listener):
        try:
            client, _ = listener.accept()
        except BlockingIOError:
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=2)
        except OSError as e:
            print("tcpproxy: upstream %s:%d: %s" % (self.upstream + (e,)),
                  file=sys.stderr, flush=True)
            reset(client)
            return
        for s in (client, upstream):
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.count += 1
        pair = Pair(self.count, client, upstream, self.cut_point())
        self.pairs.add(pair)
        self.update(pair)

    def update(self, pair):
        if pair.closed:
            return
        for s in (pair.client, pair.upstream):
            ev = 0
            if not pair.draining and \
                    pair.queued_towards(pair.peer[s]) < BUFFER_LIMIT:
                ev |= READ
            if pair.out[s]:
                ev |= WRITE
            if ev == pair.events[s]:
                continue
            if pair.events[s] == 0:
                self.sel.register(s, ev, pair)
            elif ev == 0:
                self.sel.unregister(s)
            else:
                self.sel.modify(s, ev, pair)
            pair.events[s] = ev
        if pair.draining and not pair.queued_towards(pair.client) and \
                not pair.out[pair.upstream]:
            self.close(pair, cut=False)

    def close(self, pair, cut):
        if pair.closed:
            return
        pair.closed = True
        self.pairs.discard(pair)
        for s in (pair.client, pair.upstream):
            if pair.events[s]:
                self.sel.unregister(s)
            if cut:
                reset(s)
            else:
                s.close()

    def readable(self, pair, s):
        try:
            data = s.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.close(pair, cut=True)
            return
        if not data:
            pair.draining = True
            return
        if pair.cut_at is not None and pair.moved + len(data) >= pair.cut_at:
            # Whatever is still queued here or in the kernel is lost.
            print("tcpproxy: cut connection %d after %d bytes"
                  % (pair.number, pair.cut_at), file=sys.stderr, flush=True)
            self.close(pair, cut=True)
            return
        pair.moved += len(data)
        if self.delay and self.delaying and s is pair.upstream:
            pair.delayed.append((time.monotonic() + self.delay, data))
            pair.delayed_bytes += len(data)
        else:
            pair.out[pair.peer[s]] += data

    def release_due(self):
        """Moves delayed bytes whose time has come to their client's
        queue; returns the seconds until the next is due (None: none)."""
        now, wait = time.monotonic(), None
        for pair in list(self.pairs):
            moved = False
            while pair.delayed and pair.delayed[0][0] <= now:
                _, data = pair.delayed.popleft()
                pair.delayed_bytes -= len(data)
                pair.out[pair.client] += data
                moved = True
            if pair.delayed:
                due = pair.delayed[0][0] - now
                wait = due if wait is None else min(wait, due)
            if moved:
                self.update(pair)
        return wait

    def writable(self, pair, s):
        try:
            n = s.send(pair.out[s])
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.close(pair, cut=True)
            return
        del pair.out[s][:n]

    def run(self, listener):
        self.sel.register(listener, READ, None)
        while True:
            for key, ev in self.sel.select(self.release_due()):
                if key.data is None:
                    self.accept(listener)
                    continue
                pair, s = key.data, key.fileobj
                if pair.closed:
                    continue
                if ev & WRITE:
                    self.writable(pair, s)
                if ev & READ and not pair.closed:
                    self.readable(pair, s)
                self.update(pair)


def reset(s):
    """Closes s with a RST rather than a FIN."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    s.close()


def main():
    args, delay, on_signal = sys.argv[1:], 0.0, False
    if args[:1] == ["--delay"] and len(args) > 1:
        delay = int(args[1]) / 1000.0
        args = args[2:]
        if args[:1] == ["--on-signal"]:
            on_signal = True
            args = args[1:]
    if len(args) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    port_file, upstream = args[0], args[1]
    cuts, spare = int(args[2]), int(args[3])
    seed = int(args[4]) if len(args) == 5 else random.randrange(1 << 30)
    host, port = upstream.rsplit(":", 1)
    print("tcpproxy: seed %d" % seed, file=sys.stderr, flush=True)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # TCPPROXY_PORT: listen on that port again (a proxy restarted).
    listener.bind(("127.0.0.1", int(os.environ.get("TCPPROXY_PORT", "0"))))
    listener.listen(64)
    listener.setblocking(False)
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    proxy = Proxy((host, int(port)), cuts, spare, random.Random(seed), delay)
    if on_signal:
        proxy.delaying = False
        signal.signal(signal.SIGUSR1,
                      lambda *_: setattr(proxy, "delaying", True))
    proxy.run(listener)
    return 0


if __name__ == "__main__":
    sys.exit(main())

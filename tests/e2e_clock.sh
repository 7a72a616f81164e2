#!/bin/bash
# e2e_clock.sh - clock offsets across hosts: two processes of one trace,
# the second with its clock 5 s behind (WEFT_TEST_CLOCK_SHIFT_NS, the
# test-only stand-in for another host). Each prints CLOCK_MONOTONIC just
# before its "mark" regions; weftd shares that clock, so in the archive
# (read with the otf2 Python module, which applies the ClockOffset
# definitions) every mark must sit at its printed time, within the
# measurement error, and ClockProperties must span the run, not the 5 s.
# Also: a client sending more ClockSync requests than weftd answers per
# connection is cut off, and a bad WEFT_CLOCK is refused by name.
. "$(dirname "$0")/lib.sh"
CLOCKTEST="$WEFT_BUILDDIR/tests/weft-clocktest"
# Tolerance of a mark's position (ns): the offset error is half the best
# of 8 loopback round trips, far below this even on a loaded machine.
TOL=50000000

start_weftd
export WEFT_TRACE="e2e clock shift" WEFT_SIZE=2
WEFT_RANK=0 timeout 60 "$CLOCKTEST" 200 300 >"$TMP/r0.out" 2>"$TMP/r0.err" &
p0=$!
WEFT_RANK=1 WEFT_TEST_CLOCK_SHIFT_NS=-5000000000 \
    timeout 60 "$CLOCKTEST" 200 300 >"$TMP/r1.out" 2>"$TMP/r1.err" &
p1=$!
wait $p0 || { cat "$TMP/r0.err" >&2; fail "rank 0 failed"; }
wait $p1 || { cat "$TMP/r1.err" >&2; fail "rank 1 failed"; }
wait_state "$WEFT_TRACE" complete 60
archive=$(json_get "$TMP/show.json" 'j["archive"]')
otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
    { cat "$TMP/print.out" >&2; fail "otf2-print -Werror rejects $archive"; }
echo '{"0.0": {"Enter": 402, "Leave": 402}, "1.0": {"Enter": 402, "Leave": 402}}' \
    >"$TMP/report.json"
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" >/dev/null ||
    fail "check_archive.py: the archive differs from what was recorded"

"$PY" - "$archive" "$TMP/r0.out" "$TMP/r1.out" "$TOL" <<'PYEOF' ||
import sys
import otf2
archive, outs, tol = sys.argv[1], sys.argv[2:4], int(sys.argv[4])
printed = [[int(l.split()[1]) for l in open(f) if l.startswith("mark ")]
           for f in outs]
marks = {0: [], 1: []}
first, last = None, None
with otf2.reader.open(archive) as r:
    cp = r.definitions.clock_properties
    for loc, ev in r.events:
        first = ev.time if first is None else min(first, ev.time)
        last = ev.time if last is None else max(last, ev.time)
        if isinstance(ev, otf2.events.Enter) and ev.region.name == "mark":
            marks[loc._ref >> 32].append(ev.time)
bad = []
for rank in (0, 1):
    if len(marks[rank]) != 2 or len(printed[rank]) != 2:
        bad.append("rank %d: %d marks in the archive, %d printed" % (
            rank, len(marks[rank]), len(printed[rank])))
        continue
    for got, want in zip(marks[rank], printed[rank]):
        print("rank %d mark: archive %d, printed %d, %+d ns" % (
            rank, got, want, got - want))
        if abs(got - want) > tol:
            bad.append("rank %d: mark at %d, printed %d (%+d ns)" % (
                rank, got, want, got - want))
if cp.timer_resolution != 1000000000:
    bad.append("timer resolution %d" % cp.timer_resolution)
if cp.global_offset > first or cp.global_offset + cp.trace_length <= last:
    bad.append("ClockProperties %d + %d do not cover the events %d..%d" % (
        cp.global_offset, cp.trace_length, first, last))
if not 300000000 <= cp.trace_length < 3000000000:
    bad.append("trace length %d ns for a run of about 0.3 s" %
               cp.trace_length)
for b in bad:
    print("e2e_clock: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
    fail "the shifted process's events are not aligned"
grep -q "ClockSync" "$TMP/weftd.log" && fail "weftd complained about ClockSync"

# A flood of ClockSync requests: answered up to the limit, then an Error.
"$PY" - "$WEFT_SERVER" <<'PYEOF' >"$TMP/flood.out" || fail "ClockSync flood: $(cat "$TMP/flood.out")"
import os, socket, struct, subprocess, sys
def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out
def field(no, value):
    if isinstance(value, int):
        return varint(no << 3) + varint(value)
    return varint(no << 3 | 2) + varint(len(value)) + value
def frame(kind, msg):
    env = field(kind, msg)
    return struct.pack(">I", len(env)) + env
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=10)
hello = (field(1, 5) + field(2, b"e2e clock flood") + field(3, 0) +
         field(4, 1) + field(5, b"h") + field(6, 1) +
         field(7, os.getuid()) + field(10, 10**9))
# Auth first (a MUNGE credential from the test's munged) unless the test
# runs weftd with auth = none.
auth = b""
if os.environ.get("WEFT_AUTH") != "none":
    cred = subprocess.run(["munge", "-n", "-S", os.environ["WEFT_MUNGE_SOCKET"]],
                          capture_output=True, check=True).stdout.strip()
    auth = frame(9, field(1, 5) + field(2, cred))
# One more than the limit, all in one write: weftd hangs up after the
# 65th, and nothing of ours is left unsent to make that a reset.
s.sendall(auth + frame(1, hello) + b"".join(
    frame(8, field(1, i) + field(2, 1000 + i)) for i in range(1, 66)))
data = b""
while True:
    try:
        chunk = s.recv(65536)
    except (ConnectionResetError, socket.timeout):
        break
    if not chunk:
        break
    data += chunk
answers, error = 0, None
while len(data) >= 4:
    n = struct.unpack(">I", data[:4])[0]
    env, data = data[4:4 + n], data[4 + n:]
    if env[0] == (8 << 3 | 2):
        answers += 1
    elif env[0] == (7 << 3 | 2):
        error = env
print("answers %d, error %r" % (answers, error))
sys.exit(0 if answers == 64 and error and b"more than 64 ClockSync" in error
         else 1)
PYEOF
cat "$TMP/flood.out"

# WEFT_CLOCK takes monotonic or tsc.
out=$(WEFT_CLOCK=hpet WEFT_REQUIRED=1 WEFT_TRACE=bad WEFT_SIZE=1 WEFT_RANK=0 \
      timeout 20 "$CLOCKTEST" 1 0 2>&1) && fail "WEFT_CLOCK=hpet was accepted"
echo "$out" | grep -q "WEFT_CLOCK='hpet' must be monotonic or tsc" ||
    fail "no message naming WEFT_CLOCK: $out"
stop_weftd
echo "ok: clock offsets line up two clocks 5 s apart"

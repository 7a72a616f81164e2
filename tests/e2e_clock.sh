#!/bin/bash
# e2e_clock.sh - clock offsets across hosts: two processes of one trace,
# the second with its clock 5 s behind (WEFT_TEST_CLOCK_SHIFT_NS, the
# test-only stand-in for another host), both on CLOCK_MONOTONIC, both on
# the TSC, and one on each. Each prints CLOCK_MONOTONIC just
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
export WEFT_SIZE=2

# shifted NAME CLOCK0 CLOCK1: ranks 0 and 1 with these WEFT_CLOCKs, rank 1
# 5 s behind; their marks where CLOCK_MONOTONIC says. The archive counts
# the processes' common rate (the TSC's kHz when both read it; the
# default where the kernel trusts the TSC), or ns when they differ.
shifted() {
    local name=$1 c0=$2 c1=$3 p0 p1 archive
    export WEFT_TRACE="e2e clock $name"
    WEFT_CLOCK=$c0 WEFT_RANK=0 timeout 60 "$CLOCKTEST" 200 300 \
        >"$TMP/r0.out" 2>"$TMP/r0.err" &
    p0=$!
    WEFT_CLOCK=$c1 WEFT_RANK=1 WEFT_TEST_CLOCK_SHIFT_NS=-5000000000 \
        timeout 60 "$CLOCKTEST" 200 300 >"$TMP/r1.out" 2>"$TMP/r1.err" &
    p1=$!
    wait $p0 || { cat "$TMP/r0.err" >&2; fail "$name: rank 0 failed"; }
    wait $p1 || { cat "$TMP/r1.err" >&2; fail "$name: rank 1 failed"; }
    wait_state "$WEFT_TRACE" complete 60
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
        { cat "$TMP/print.out" >&2; fail "otf2-print -Werror rejects $archive"; }
    echo '{"0.0": {"Enter": 402, "Leave": 402}, "1.0": {"Enter": 402, "Leave": 402}}' \
        >"$TMP/report.json"
    "$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" >/dev/null ||
        fail "$name: check_archive.py: the archive differs from what was recorded"
    "$PY" - "$archive" "$TMP/r0.out" "$TMP/r1.out" "$TOL" "$c0" "$c1" \
        "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" <<'PYEOF' ||
import sys
import otf2
archive, outs, tol = sys.argv[1], sys.argv[2:4], int(sys.argv[4])
clocks = sys.argv[5:7]
source = sys.argv[7]
printed = [[int(l.split()[1]) for l in open(f) if l.startswith("mark ")]
           for f in outs]
marks = {0: [], 1: []}
first, last = None, None
with otf2.reader.open(archive) as r:
    cp = r.definitions.clock_properties
    res = cp.timer_resolution
    for loc, ev in r.events:
        first = ev.time if first is None else min(first, ev.time)
        last = ev.time if last is None else max(last, ev.time)
        if isinstance(ev, otf2.events.Enter) and ev.region.name == "mark":
            marks[loc._ref >> 32].append(ev.time * 10**9 // res)
bad = []
print("%s: timer resolution %d" % (clocks, res))
for rank in (0, 1):
    if len(marks[rank]) != 2 or len(printed[rank]) != 2:
        bad.append("rank %d: %d marks in the archive, %d printed" % (
            rank, len(marks[rank]), len(printed[rank])))
        continue
    for got, want in zip(marks[rank], printed[rank]):
        print("rank %d mark: archive %d ns, printed %d, %+d ns" % (
            rank, got, want, got - want))
        if abs(got - want) > tol:
            bad.append("rank %d: mark at %d ns, printed %d (%+d ns)" % (
                rank, got, want, got - want))
# One rate for both, or ns: TSC processes of one host share the kernel's
# kHz; a CLOCK_MONOTONIC one with a TSC one gives ns.
if clocks[0] != clocks[1] and res != 10**9:
    bad.append("timer resolution %d with clocks %s, expected ns" % (res, clocks))
if clocks == ["monotonic", "monotonic"] and res != 10**9:
    bad.append("timer resolution %d for CLOCK_MONOTONIC" % res)
if clocks == ["tsc", "tsc"] and res == 10**9:
    bad.append("timer resolution %d for two TSC processes of one host" % res)
if clocks == ["tsc", "tsc"] and source == "tsc" and res % 1000:
    bad.append("timer resolution %d for the TSC: not the kernel's kHz" % res)
if cp.global_offset > first or cp.global_offset + cp.trace_length <= last:
    bad.append("ClockProperties %d + %d do not cover the events %d..%d" % (
        cp.global_offset, cp.trace_length, first, last))
length_ns = cp.trace_length * 10**9 // res
if not 300000000 <= length_ns < 3000000000:
    bad.append("trace length %d ns for a run of about 0.3 s" % length_ns)
for b in bad:
    print("e2e_clock: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
        fail "$name: the shifted process's events are not aligned"
    want=$(printf '%s\n' "$c0" "$c1" | sort -u | paste -sd,)
    got=$(json_get "$TMP/show.json" 'j["clock"]')
    [ "$got" = "$want" ] || fail "$name: catalog clock '$got', expected '$want'"
}

shifted monotonic monotonic monotonic

# Where this CPU has an invariant TSC, the other clocks (WEFT_CLOCK=tsc
# falls back to CLOCK_MONOTONIC with a warning elsewhere).
if grep -qw nonstop_tsc /proc/cpuinfo && [ "$(uname -m)" = x86_64 ]; then
    shifted tsc tsc tsc
    shifted mixed tsc monotonic
else
    echo "SKIP: tsc and mixed clocks: no invariant TSC on this CPU"
fi
grep -q "ClockSync" "$TMP/weftd.log" && fail "weftd complained about ClockSync"

# A flood of ClockSync requests: answered up to the limit, then an Error.
# On weftd's Unix socket, where the kernel says who speaks (over TCP the
# frames would need a bound credential and the session MAC: e2e_auth).
"$PY" - "$SPOOL/weftd.sock" <<'PYEOF' >"$TMP/flood.out" || fail "ClockSync flood: $(cat "$TMP/flood.out")"
import os, socket, struct, sys
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
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
hello = (field(1, 6) + field(2, b"e2e clock flood") + field(3, 0) +
         field(4, 1) + field(5, b"h") + field(6, 1) +
         field(7, os.getuid()) + field(10, 10**9))
# One more than the limit, all in one write: weftd hangs up after the
# 65th, and nothing of ours is left unsent to make that a reset.
s.sendall(frame(1, hello) + b"".join(
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

# WEFT_CLOCK takes auto, monotonic or tsc.
out=$(WEFT_CLOCK=hpet WEFT_REQUIRED=1 WEFT_TRACE=bad WEFT_SIZE=1 WEFT_RANK=0 \
      timeout 20 "$CLOCKTEST" 1 0 2>&1) && fail "WEFT_CLOCK=hpet was accepted"
echo "$out" | grep -q "WEFT_CLOCK='hpet' must be auto, monotonic or tsc" ||
    fail "no message naming WEFT_CLOCK: $out"
stop_weftd
echo "ok: clock offsets line up two clocks 5 s apart"

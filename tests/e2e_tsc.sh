#!/bin/bash
# e2e_tsc.sh - WEFT_CLOCK=tsc: a process records with the invariant TSC
# (calibrated at start); the archive must pass otf2-print -Werror and
# check_archive.py with the recorded counts, count ns (the TSC ticks are
# scaled, offsets to weftd's clock applied), span about the program's
# run, and put the program's marks where CLOCK_MONOTONIC says they were.
# Skipped (77) where the CPU has no invariant TSC.
. "$(dirname "$0")/lib.sh"
CLOCKTEST="$WEFT_BUILDDIR/tests/weft-clocktest"

# Linux sets nonstop_tsc from cpuid 0x80000007 EDX bit 8.
if ! grep -qw nonstop_tsc /proc/cpuinfo || [ "$(uname -m)" != x86_64 ]; then
    echo "SKIP: no invariant TSC on this CPU"
    exit 77
fi

start_weftd
export WEFT_TRACE="e2e tsc" WEFT_CLOCK=tsc
t0=$(date +%s%N)
timeout 60 "$CLOCKTEST" 1000 300 >"$TMP/out" 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; fail "weft-clocktest failed"; }
t1=$(date +%s%N)
[ -s "$TMP/err" ] && { cat "$TMP/err" >&2; fail "libweft warned"; }
wait_state "$WEFT_TRACE" complete 60
archive=$(json_get "$TMP/show.json" 'j["archive"]')
otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
    { cat "$TMP/print.out" >&2; fail "otf2-print -Werror rejects $archive"; }
echo '{"0.0": {"Enter": 2002, "Leave": 2002}}' >"$TMP/report.json"
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" ||
    fail "check_archive.py: the archive differs from what was recorded"

"$PY" - "$archive" "$TMP/out" $((t1 - t0)) <<'PYEOF' || fail "the TSC trace's clock is wrong"
import sys
import otf2
archive, out, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
printed = [int(l.split()[1]) for l in open(out) if l.startswith("mark ")]
marks = []
with otf2.reader.open(archive) as r:
    cp = r.definitions.clock_properties
    for loc, ev in r.events:
        if isinstance(ev, otf2.events.Enter) and ev.region.name == "mark":
            marks.append(ev.time)
print("ClockProperties: resolution %d, length %d ns; run %d ns" % (
    cp.timer_resolution, cp.trace_length, wall))
bad = []
if cp.timer_resolution != 1000000000:
    bad.append("timer resolution %d, expected 1e9 (ns)" % cp.timer_resolution)
# The run sleeps 300 ms between the marks; the trace cannot be longer
# than the program's wall time.
if not 300000000 <= cp.trace_length <= wall:
    bad.append("trace length %d ns, expected 0.3 s to %d ns" % (
        cp.trace_length, wall))
if len(marks) != 2 or len(printed) != 2:
    bad.append("%d marks in the archive, %d printed" % (len(marks),
                                                         len(printed)))
else:
    for got, want in zip(marks, printed):
        print("mark: archive %d, printed %d, %+d ns" % (got, want, got - want))
        if abs(got - want) > 50000000:
            bad.append("mark at %d, CLOCK_MONOTONIC said %d" % (got, want))
    # The interval between marks, measured by the TSC, as measured by
    # CLOCK_MONOTONIC (calibration and offsets): within 1 %.
    d_got, d_want = marks[1] - marks[0], printed[1] - printed[0]
    if abs(d_got - d_want) > d_want / 100:
        bad.append("marks %d ns apart, CLOCK_MONOTONIC says %d" % (d_got,
                                                                  d_want))
for b in bad:
    print("e2e_tsc: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
stop_weftd
echo "ok: WEFT_CLOCK=tsc"

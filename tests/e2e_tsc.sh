#!/bin/bash
# e2e_tsc.sh - WEFT_CLOCK=tsc: a process records with the invariant TSC
# (calibrated at start); the archive must pass otf2-print -Werror and
# check_archive.py with the recorded counts, count the TSC's ticks (with
# the offsets to weftd's clock applied), span about the program's run,
# and put the program's marks where CLOCK_MONOTONIC says they were. The
# default (WEFT_CLOCK unset or auto) is the TSC exactly where the kernel's
# clocksource is tsc, said at debug level (WEFT_DEBUG=1) and in the
# catalog. Skipped (77) where the CPU has no invariant TSC.
. "$(dirname "$0")/lib.sh"
CLOCKTEST="$WEFT_BUILDDIR/tests/weft-clocktest"

# Linux sets nonstop_tsc from cpuid 0x80000007 EDX bit 8.
if ! grep -qw nonstop_tsc /proc/cpuinfo || [ "$(uname -m)" != x86_64 ]; then
    echo "SKIP: no invariant TSC on this CPU"
    exit 77
fi

start_weftd
source=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)

# The default: the TSC where the kernel trusts it, else CLOCK_MONOTONIC.
WEFT_DEBUG=1 WEFT_TRACE="e2e default clock" timeout 60 "$CLOCKTEST" 10 0 \
    >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "weft-clocktest failed"; }
if [ "$source" = tsc ]; then
    want=tsc
    grep -q "^weft: debug: clock: TSC at [0-9.]* MHz, measured over [0-9.]* ms (WEFT_CLOCK=auto; kernel clocksource 'tsc')$" "$TMP/err" ||
        fail "no debug line naming the TSC: $(cat "$TMP/err")"
else
    want=monotonic
    grep -q "^weft: debug: clock: CLOCK_MONOTONIC (the kernel's clocksource is '$source', not tsc)$" "$TMP/err" ||
        fail "no debug line naming CLOCK_MONOTONIC: $(cat "$TMP/err")"
fi
wait_state "e2e default clock" complete 60
[ "$(json_get "$TMP/show.json" 'j["clock"]')" = $want ] ||
    fail "the catalog's clock is not $want (kernel clocksource $source)"
WEFT_DEBUG=1 WEFT_CLOCK=monotonic WEFT_TRACE="e2e monotonic" \
    timeout 60 "$CLOCKTEST" 10 0 >/dev/null 2>"$TMP/err" || fail "weft-clocktest failed"
grep -q "^weft: debug: clock: CLOCK_MONOTONIC (WEFT_CLOCK=monotonic)$" "$TMP/err" ||
    fail "no debug line for WEFT_CLOCK=monotonic: $(cat "$TMP/err")"
# Without WEFT_DEBUG libweft says nothing about its clock.
WEFT_TRACE="e2e quiet" timeout 60 "$CLOCKTEST" 10 0 >/dev/null 2>"$TMP/err" ||
    fail "weft-clocktest failed"
[ -s "$TMP/err" ] && fail "libweft printed without WEFT_DEBUG: $(cat "$TMP/err")"

export WEFT_TRACE="e2e tsc" WEFT_CLOCK=tsc
t0=$(date +%s%N)
timeout 60 "$CLOCKTEST" 1000 300 >"$TMP/out" 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; fail "weft-clocktest failed"; }
t1=$(date +%s%N)
[ -s "$TMP/err" ] && { cat "$TMP/err" >&2; fail "libweft warned"; }
wait_state "$WEFT_TRACE" complete 60
[ "$(json_get "$TMP/show.json" 'j["clock"]')" = tsc ] ||
    fail "the catalog's clock is not tsc"
archive=$(json_get "$TMP/show.json" 'j["archive"]')
otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
    { cat "$TMP/print.out" >&2; fail "otf2-print -Werror rejects $archive"; }
echo '{"0.0": {"Enter": 2002, "Leave": 2002}}' >"$TMP/report.json"
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" ||
    fail "check_archive.py: the archive differs from what was recorded"

"$PY" - "$archive" "$TMP/out" $((t1 - t0)) "$source" <<'PYEOF' || fail "the TSC trace's clock is wrong"
import sys
import otf2
archive, out, wall = sys.argv[1], sys.argv[2], int(sys.argv[3])
source = sys.argv[4]
printed = [int(l.split()[1]) for l in open(out) if l.startswith("mark ")]
marks = []
with otf2.reader.open(archive) as r:
    cp = r.definitions.clock_properties
    res = cp.timer_resolution
    for loc, ev in r.events:
        if isinstance(ev, otf2.events.Enter) and ev.region.name == "mark":
            marks.append(ev.time * 10**9 // res)
length = cp.trace_length * 10**9 // res
print("ClockProperties: resolution %d, length %d ns; run %d ns" % (
    res, length, wall))
bad = []
# The archive counts the process's TSC ticks: the kernel's kHz where it
# trusts the TSC.
if res == 10**9 or (source == "tsc" and res % 1000):
    bad.append("timer resolution %d, expected the TSC's" % res)
# The run sleeps 300 ms between the marks; the trace cannot be longer
# than the program's wall time.
if not 300000000 <= length <= wall:
    bad.append("trace length %d ns, expected 0.3 s to %d ns" % (
        length, wall))
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

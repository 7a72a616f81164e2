#!/bin/bash
# e2e_instrument.sh - a program that knows nothing of weft (examples/fib.c),
# recompiled with -finstrument-functions and linked with libweft-instrument,
# streams a trace to a real weftd: per location the Enter/Leave pairs nest
# and match, the regions are the program's function names, WEFT_FILTER
# keeps excluded functions out, and every function was entered as often as
# the program called it. Also: longjmp and exit() from nested calls leave
# the trace balanced, a malformed WEFT_FILTER turns tracing off with one
# message, so does an unreachable weftd (WEFT_REQUIRED=1: exit status 1),
# the library exports only the two hooks, and the README's
# recipe (cc -finstrument-functions ... pkg-config weft-instrument) builds
# and traces a program.
. "$(dirname "$0")/lib.sh"

FIB="$WEFT_BUILDDIR/examples/fib"
LIB="$WEFT_BUILDDIR/.libs/libweft-instrument.so"

[ -f "$LIB" ] || fail "$LIB missing"
bad=$(nm -D --defined-only "$LIB" | awk '$2 ~ /[TDBRVW]/ {print $3}' |
      grep -vE '^__cyg_profile_func_(enter|exit)$' |
      grep -vE '^(_init|_fini|__bss_start|_edata|_end)$' || true)
[ -z "$bad" ] || fail "libweft-instrument.so exports more than the hooks: $bad"

# check_trace ARCHIVE SPEC: checks the archive with the otf2 module. SPEC
# is JSON: {"regions": [exact set of region names] or null,
# "present": [...], "absent": [...], "locations": N,
# "enters": {"LOCATION-INDEX": {"region": count}}} (only the regions named
# are counted; "*" applies to every location but index 0).
check_trace() {
    "$PY" - "$1" "$2" <<'PYEOF'
import collections, json, sys
import otf2

anchor, spec = sys.argv[1], json.loads(sys.argv[2])
problems = []
enters = collections.defaultdict(collections.Counter)
leaves = collections.defaultdict(collections.Counter)
stacks = collections.defaultdict(list)
with otf2.reader.open(anchor) as trace:
    names = sorted(r.name for r in trace.definitions.regions)
    nlocs = len(list(trace.definitions.locations))
    for loc, ev in trace.events:
        key = loc._ref & 0xFFFFFFFF
        kind = type(ev).__name__
        if kind == "Enter":
            stacks[key].append(ev.region.name)
            enters[key][ev.region.name] += 1
        elif kind == "Leave":
            leaves[key][ev.region.name] += 1
            if not stacks[key] or stacks[key][-1] != ev.region.name:
                problems.append("location %d: Leave %s while %s is open"
                                % (key, ev.region.name,
                                   stacks[key][-1] if stacks[key] else "nothing"))
            else:
                stacks[key].pop()
for key, stack in stacks.items():
    if stack:
        problems.append("location %d ends with open regions %s" % (key, stack))
    if enters[key] != leaves[key]:
        problems.append("location %d: Enters %s, Leaves %s"
                        % (key, dict(enters[key]), dict(leaves[key])))
if spec.get("regions") is not None and names != sorted(spec["regions"]):
    problems.append("regions are %s, expected %s" % (names, sorted(spec["regions"])))
for name in spec.get("present", []):
    if name not in names:
        problems.append("no region %r (have %s)" % (name, names))
for name in spec.get("absent", []):
    if name in names:
        problems.append("excluded function %r is a region" % name)
if nlocs != spec["locations"]:
    problems.append("%d locations, expected %d" % (nlocs, spec["locations"]))
for key in range(nlocs):
    want = spec["enters"].get(str(key), spec["enters"].get("*") if key else None)
    for region, count in (want or {}).items():
        if enters[key][region] != count:
            problems.append("location %d: %d Enters of %s, expected %d"
                            % (key, enters[key][region], region, count))
if problems:
    print("\n".join(problems[:20]), file=sys.stderr)
    sys.exit(1)
print(json.dumps({"locations": nlocs,
                  "events": sum(sum(c.values()) for c in enters.values()) * 2}))
PYEOF
}

# fib(n) calls fib 2*F(n+1)-1 times.
fib_calls() {
    "$PY" -c 'import sys
n = int(sys.argv[1]); a, b = 0, 1
for _ in range(n + 1): a, b = b, a + b
print(2 * a - 1)' "$1"
}

start_weftd
N=18 SQUARES=100 DEPTH=10

# 1. Two worker threads; helper_square excluded (its callee leaf_add stays).
export WEFT_TRACE="instrumented fib"
WEFT_FILTER="-helper_*" timeout 120 "$FIB" -t 2 -n $N -s $SQUARES -d $DEPTH \
    >"$TMP/fib.out" 2>"$TMP/fib.err" ||
    { cat "$TMP/fib.err" >&2; fail "fib failed"; }
[ "$(grep -c "fib($N) = 2584, sum of squares = 338350" "$TMP/fib.out")" -eq 2 ] ||
    fail "fib computed something else: $(cat "$TMP/fib.out")"
[ -s "$TMP/fib.err" ] && fail "fib printed on stderr: $(cat "$TMP/fib.err")"
archive=$(valid_archive "$WEFT_TRACE")
calls=$(fib_calls $N)
spec=$(printf '{"regions": ["main", "worker", "fib", "leaf_add", "catcher", "dive"],
  "absent": ["helper_square"], "locations": 3,
  "enters": {"0": {"main": 1, "fib": 0},
             "*": {"worker": 1, "fib": %d, "leaf_add": %d, "catcher": 1, "dive": %d}}}' \
  "$calls" "$SQUARES" $((DEPTH + 1)))
summary=$(check_trace "$archive" "$spec") || fail "trace 1 does not match the program"
events=$(echo "$summary" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["events"])')
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq "$events" ] ||
    fail "catalog events differ from the archive ($events)"
echo "trace 1: $summary"

# 2. Include-only rules, first match wins; exit() from 11 nested calls of
# dive on the main thread: its open frames are left at exit.
export WEFT_TRACE="instrumented exit"
WEFT_FILTER="+main, +dive*, -*" timeout 120 "$FIB" -t 1 -n 5 -s 3 -d $DEPTH -x \
    >"$TMP/fib2.out" 2>&1 || { cat "$TMP/fib2.out" >&2; fail "fib -x failed"; }
archive=$(valid_archive "$WEFT_TRACE")
spec=$(printf '{"regions": ["main", "dive"], "locations": 2,
  "enters": {"0": {"main": 1, "dive": %d}, "1": {"dive": %d}}}' \
  $((DEPTH + 1)) $((DEPTH + 1)))
summary=$(check_trace "$archive" "$spec") || fail "trace 2 does not match the program"
echo "trace 2: $summary"

# 3. A malformed WEFT_FILTER: one message naming the variable and the bad
# rule; the program runs untraced.
export WEFT_TRACE="instrumented bad filter"
WEFT_FILTER="-helper_*,,+x" timeout 60 "$FIB" -t 1 -n 5 >"$TMP/fib3.out" \
    2>"$TMP/fib3.err" || fail "fib with a bad WEFT_FILTER failed"
grep -q "fib(5) = 5" "$TMP/fib3.out" || fail "fib with a bad WEFT_FILTER computed nothing"
[ "$(wc -l <"$TMP/fib3.err")" -eq 1 ] || fail "expected one line on stderr: $(cat "$TMP/fib3.err")"
grep -q 'WEFT_FILTER="-helper_\*,,+x": rule 2 .* is empty.*tracing is off' "$TMP/fib3.err" ||
    fail "unclear message: $(cat "$TMP/fib3.err")"
"$WEFT" --catalog "$SPOOL/catalog.db" show "$WEFT_TRACE" >/dev/null 2>&1 &&
    fail "a trace was made despite the bad WEFT_FILTER"

# 4. The README's recipe, with the .pc files of the build tree.
mkdir -p "$TMP/pc"
for pc in client/weft recorders/instrument/weft-instrument; do
    sed -e "s|^libdir=.*|libdir=$WEFT_BUILDDIR/.libs|" \
        -e "s|^includedir=.*|includedir=$WEFT_SRCDIR/client|" \
        "$WEFT_BUILDDIR/$pc.pc" >"$TMP/pc/${pc##*/}.pc"
done
cat >"$TMP/app.c" <<'APP'
#include <stdio.h>
static int square(int x) { return x * x; }
int total(int n);
int total(int n) { int s = 0; for (int i = 0; i < n; i++) s += square(i); return s; }
int main(void) { printf("%d\n", total(4)); return 0; }
APP
san=
ldd "$LIB" | grep -q libasan && san="-fsanitize=address,undefined"
cc $san -finstrument-functions -o "$TMP/app" "$TMP/app.c" \
    $(PKG_CONFIG_PATH="$TMP/pc" pkg-config --cflags --libs weft-instrument) \
    -Wl,-rpath,"$WEFT_BUILDDIR/.libs" || fail "the README's recipe does not build"
export WEFT_TRACE="instrumented app"
out=$(timeout 60 "$TMP/app" 2>&1) || fail "the app failed: $out"
[ "$out" = 14 ] || fail "the app printed: $out"
archive=$(valid_archive "$WEFT_TRACE")
summary=$(check_trace "$archive" '{"regions": ["main", "total", "square"], "locations": 1,
  "enters": {"0": {"main": 1, "total": 1, "square": 4}}}') ||
    fail "the app's trace does not match"
echo "trace 4: $summary"
stop_weftd

# 5. Without weftd the program runs untraced after one warning; with
# WEFT_REQUIRED=1 it exits with status 1.
out=$(WEFT_SERVER=127.0.0.1:1 timeout 60 "$FIB" -t 1 -n 5 2>"$TMP/fib5.err") ||
    fail "fib without weftd failed: $(cat "$TMP/fib5.err")"
echo "$out" | grep -q "fib(5) = 5" || fail "fib without weftd printed: $out"
grep -q "tracing is off" "$TMP/fib5.err" || fail "no warning without weftd: $(cat "$TMP/fib5.err")"
rc=0
WEFT_REQUIRED=1 WEFT_SERVER=127.0.0.1:1 timeout 60 "$FIB" -t 1 -n 5 >"$TMP/fib6.out" \
    2>"$TMP/fib6.err" || rc=$?
[ "$rc" -eq 1 ] || fail "fib with WEFT_REQUIRED=1 and no weftd: status $rc"
[ -s "$TMP/fib6.out" ] && fail "fib ran despite WEFT_REQUIRED=1"
grep -q "weft-instrument: weftd is required" "$TMP/fib6.err" ||
    fail "no message for WEFT_REQUIRED=1: $(cat "$TMP/fib6.err")"
echo ok

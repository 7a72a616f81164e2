#!/bin/bash
# e2e_instrument_cxx.sh - what regions of libweft-instrument say about
# their functions. A C++ program (examples/solver.cpp: a namespace, a
# class's methods, an overloaded function, a template's instances),
# built with -g: each region's name is the demangled name, its canonical
# name the mangled symbol (c++filt agrees), its source file solver.cpp and
# its lines the function's first line (found by name in the source) and
# closing brace. A C function of examples/fib.c gets its file and lines
# too, and its symbol as both names. Built without -g, the C++ program
# still traces with demangled names, and lines unknown. WEFT_FILTER
# matches demangled names and symbols alike. otf2-print accepts every
# archive.
. "$(dirname "$0")/lib.sh"

SOLVER="$WEFT_BUILDDIR/examples/solver"
FIB="$WEFT_BUILDDIR/examples/fib"
LIB="$WEFT_BUILDDIR/.libs/libweft-instrument.so"
SRC="$WEFT_SRCDIR/examples/solver.cpp"
FIBSRC="$WEFT_SRCDIR/examples/fib.c"
STEPS=7

# first_line FILE ERE: the number of the first line of FILE matching ERE.
first_line() {
    local n
    n=$(grep -n -m1 -E "$2" "$1" | cut -d: -f1)
    [ -n "$n" ] || fail "no line matches '$2' in $1"
    echo "$n"
}

# closing_line FILE LINE: the line of the first "}" alone at the start of
# a line from LINE on (a function's closing brace); LINE itself if the
# whole function is on it.
closing_line() {
    if sed -n "$2p" "$1" | grep -qE '\{.*\}'; then
        echo "$2"
        return
    fi
    awk -v from="$2" 'NR >= from && /^}/ { print NR; exit }' "$1"
}

# region FILE ERE NAME CANONICAL: one region's expectations as JSON:
# NAME, CANONICAL (a regular expression), the file, the first line
# matching ERE and its closing brace.
region() {
    local b e
    b=$(first_line "$1" "$2")
    e=$(closing_line "$1" "$b")
    printf '{"name": "%s", "canonical": "%s", "file": "%s", "begin": %d, "end": %d}' \
        "$3" "$4" "$1" "$b" "$e"
}

# check_regions ARCHIVE SPEC: the regions of the archive against SPEC,
# JSON: {"regions": [region(...), ...] (each must be there as said),
# "absent": [names], "lines": true (regions listed must have their file
# and lines) or false (every region has none), "enters": {name: count}}.
# Every region's canonical name demangles (c++filt) to its name.
check_regions() {
    "$PY" - "$1" "$2" <<'PYEOF'
import collections, json, os, re, subprocess, sys
import otf2

anchor, spec = sys.argv[1], json.loads(sys.argv[2])
problems = []
enters = collections.Counter()
with otf2.reader.open(anchor) as trace:
    regions = {r.name: r for r in trace.definitions.regions}
    for _, ev in trace.events:
        if type(ev).__name__ == "Enter":
            enters[ev.region.name] += 1
names = sorted(regions)
canon = [regions[n].canonical_name for n in names]
filt = subprocess.run(["c++filt"], input="\n".join(canon) + "\n",
                      capture_output=True, text=True, check=True).stdout.split("\n")
for n, c, f in zip(names, canon, filt):
    # "name@module" names of a second function with one name keep the symbol.
    if f != n.split("@")[0]:
        problems.append("region %r: canonical name %r demangles to %r" % (n, c, f))
for want in spec.get("regions", []):
    r = regions.get(want["name"])
    if r is None:
        problems.append("no region %r (have %s)" % (want["name"], names))
        continue
    if not re.fullmatch(want["canonical"], r.canonical_name):
        problems.append("%s: canonical name %r, expected %r"
                        % (want["name"], r.canonical_name, want["canonical"]))
    if spec["lines"]:
        got = (os.path.realpath(r.source_file) if r.source_file else "",
               r.begin_line_number, r.end_line_number)
        exp = (os.path.realpath(want["file"]), want["begin"], want["end"])
        if got != exp:
            problems.append("%s: file and lines %s, expected %s" % (want["name"], got, exp))
if not spec["lines"]:
    for n in names:
        r = regions[n]
        if (r.source_file, r.begin_line_number, r.end_line_number) != ("", 0, 0):
            problems.append("%s: built without -g, yet at %r %d-%d"
                            % (n, r.source_file, r.begin_line_number, r.end_line_number))
for n in spec.get("absent", []):
    if n in regions:
        problems.append("excluded function %r is a region" % n)
for n, count in spec.get("enters", {}).items():
    if enters[n] != count:
        problems.append("%d Enters of %s, expected %d" % (enters[n], n, count))
if problems:
    print("\n".join(problems[:20]), file=sys.stderr)
    sys.exit(1)
print(len(names), "regions")
PYEOF
}

[ -x "$SOLVER" ] || fail "$SOLVER missing"
start_weftd

cxx_regions() {
    printf '[%s, %s, %s, %s, %s, %s, %s, %s]' \
        "$(region "$1" '^int main\(' main '^main$')" \
        "$(region "$1" '^double Solver::step\(int' 'ns::Solver::step(int)' '_ZN2ns6Solver4stepEi')" \
        "$(region "$1" '^long scale\(long' 'ns::scale(long)' '_ZN2ns5scaleEl')" \
        "$(region "$1" '^double scale\(double' 'ns::scale(double)' '_ZN2ns5scaleEd')" \
        "$(region "$1" '^T twice\(T' 'int ns::twice<int>(int)' '_ZN2ns5twiceIiEET_S1_')" \
        "$(region "$1" '^T twice\(T' 'double ns::twice<double>(double)' '_ZN2ns5twiceIdEET_S1_')" \
        "$(region "$1" 'explicit Solver\(double' 'ns::Solver::Solver(double)' '_ZN2ns6SolverC[12]Ed')" \
        "$(region "$1" 'double value\(\) const' 'ns::Solver::value() const' '_ZNK2ns6Solver5valueEv')"
}
ENTERS=$(printf '{"ns::Solver::step(int)": %d, "ns::scale(long)": 1, "ns::scale(double)": 1,
  "int ns::twice<int>(int)": 1, "double ns::twice<double>(double)": 1}' $STEPS)

# 1. The C++ program as make check built it (-g).
export WEFT_TRACE="instrumented c++"
out=$(timeout 60 "$SOLVER" $STEPS 2>&1) || fail "solver failed: $out"
[ "$out" = "21 15.059 14 30.117" ] || fail "solver printed: $out"
archive=$(valid_archive "$WEFT_TRACE")
summary=$(check_regions "$archive" "$(printf '{"regions": %s, "lines": true, "enters": %s}' \
    "$(cxx_regions "$SRC")" "$ENTERS")") || fail "the C++ regions are not what the source says"
echo "c++ with -g: $summary"

# 2. WEFT_FILTER sees both names: one overload excluded by its demangled
# name (blanks and commas of C++ names are ? or * in a pattern), the
# template's instances by their symbol.
export WEFT_TRACE="instrumented c++ filtered"
out=$(WEFT_FILTER='-ns::scale(long), -_ZN2ns5twice*' timeout 60 "$SOLVER" $STEPS 2>&1) ||
    fail "solver with WEFT_FILTER failed: $out"
archive=$(valid_archive "$WEFT_TRACE")
summary=$(check_regions "$archive" '{"lines": true, "absent": ["ns::scale(long)",
  "int ns::twice<int>(int)", "double ns::twice<double>(double)"],
  "enters": {"ns::scale(double)": 1}}') || fail "WEFT_FILTER did not match C++ names"
echo "c++ filtered: $summary"

# 3. A C function: file and lines, its symbol as both names.
export WEFT_TRACE="instrumented c lines"
timeout 60 "$FIB" -t 1 -n 5 -s 3 -d 2 >"$TMP/fib.out" 2>&1 ||
    { cat "$TMP/fib.out" >&2; fail "fib failed"; }
archive=$(valid_archive "$WEFT_TRACE")
spec=$(printf '{"regions": [%s, %s], "lines": true}' \
    "$(region "$FIBSRC" '^unsigned long fib\(unsigned n\)$' fib '^fib$')" \
    "$(region "$FIBSRC" '^__attribute__\(\(noinline\)\) long leaf_add\(' leaf_add '^leaf_add$')")
summary=$(check_regions "$archive" "$spec") || fail "fib's regions lack their lines"
echo "c with -g: $summary"

# 4. Without -g: demangled names, no lines.
san=
ldd "$LIB" | grep -q libasan && san="-fsanitize=address,undefined"
g++ $san -O2 -finstrument-functions -I"$WEFT_SRCDIR/client" -o "$TMP/solver-nog" "$SRC" \
    -L"$WEFT_BUILDDIR/.libs" -lweft-instrument -Wl,-rpath,"$WEFT_BUILDDIR/.libs" ||
    fail "cannot build the C++ program without -g"
# (With the sanitizers, their runtime's start files bring DWARF of their
# own: only solver.cpp's must be missing.)
readelf --debug-dump=info "$TMP/solver-nog" 2>/dev/null | grep -q 'solver\.cpp' &&
    fail "solver-nog has DWARF of solver.cpp"
export WEFT_TRACE="instrumented c++ without -g"
out=$(timeout 60 "$TMP/solver-nog" $STEPS 2>&1) || fail "solver without -g failed: $out"
[ "$out" = "21 15.059 14 30.117" ] || fail "solver without -g printed: $out"
archive=$(valid_archive "$WEFT_TRACE")
summary=$(check_regions "$archive" "$(printf '{"regions": %s, "lines": false, "enters": %s}' \
    "$(cxx_regions "$SRC")" "$ENTERS")") || fail "the C++ regions without -g are wrong"
echo "c++ without -g: $summary"
stop_weftd
echo ok

#!/bin/bash
# e2e_openmp.sh - an unmodified OpenMP program (GCC's libgomp) traced by
# libweft-openmp through `weft run`, streaming to a real weftd:
#   - tests/openmp/omptest (teams of 2 to 4 threads meeting every
#     construct the recorder records, the combined constructs, a nested
#     part, omp locks, explicit tasks) under weft run's default recorders,
#     which add openmp to pthread and io for a program that links
#     libgomp: its exit status and output are those of an untraced run,
#     and its trace is complete, accepted by otf2-print -Werror, read
#     alike by the python reader (check_archive.py, given otf2-print's
#     events per location and kind), and holds what
#     tests/check_openmp.py wants: the recorder's model (teams, regions
#     and their nesting, locks, tasks) and exactly what the program
#     counted;
#   - the same with OMP_NUM_THREADS=3 OMP_PROC_BIND=true
#     OMP_WAIT_POLICY=active: the program's teams have explicit sizes,
#     nothing changes;
#   - the same under -t openmp alone.
. "$(dirname "$0")/lib.sh"
unset LD_PRELOAD WEFT_TRACE OMP_NUM_THREADS OMP_PROC_BIND OMP_WAIT_POLICY \
    OMP_DYNAMIC OMP_THREAD_LIMIT OMP_MAX_ACTIVE_LEVELS OMP_NESTED OMP_SCHEDULE

LIBDIR="$WEFT_BUILDDIR/.libs"
LIB="$LIBDIR/libweft-openmp.so"
OMPTEST="$WEFT_BUILDDIR/tests/openmp/omptest"
CHECK="$WEFT_SRCDIR/tests/check_openmp.py"
[ -f "$LIB" ] || fail "$LIB missing"
[ -x "$OMPTEST" ] || fail "$OMPTEST missing"
# (a compiler other than GCC, clang say, gives its own OpenMP runtime)
if ! readelf -d "$OMPTEST" | grep -q "NEEDED.*libgomp"; then
    echo "SKIP: $OMPTEST does not use GCC's libgomp"
    exit 77
fi

# traced NAME [WEFT RUN OPTIONS...]: omptest under weft run (recorders
# from this build) as trace NAME, at most 120 s, its report in
# $TMP/NAME.json, its output in $TMP/NAME.out and .err.
traced() {
    local name=$1
    shift
    with_recorders "$LIBDIR" timeout 120 "$WEFT" run "$@" --trace "$name" -- "$OMPTEST" \
        --report "$TMP/$name.json" >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# check_run NAME: the run of trace NAME (traced) succeeded with the
# untraced run's output; its trace is complete, otf2-print -Werror
# accepts it, both readers read the same events, and check_openmp.py
# finds in it what the program reports.
check_run() {
    local name=$1 anchor
    cmp -s "$TMP/plain.out" "$TMP/$name.out" ||
        fail "$name: omptest's output differs traced: $(diff "$TMP/plain.out" "$TMP/$name.out" | head -10)"
    wait_state "$name" complete 60
    anchor=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$anchor" >"$TMP/$name.print" 2>&1 ||
        fail "$name: otf2-print -Werror rejects $anchor: $(head -5 "$TMP/$name.print")"
    event_counts "$anchor" >"$TMP/$name.counts" ||
        fail "$name: otf2-print cannot print $anchor"
    "$PY" "$CHECK_ARCHIVE" "$anchor" "$TMP/$name.counts" >"$TMP/$name.archive" 2>&1 ||
        fail "$name: the python reader reads other events than otf2-print: $(head -20 "$TMP/$name.archive")"
    "$PY" "$CHECK" "$anchor" "$TMP/$name.json" >"$TMP/$name.check" ||
        fail "$name: the archive is not what omptest did: $(head -40 "$TMP/$name.check")"
    echo "ok: $name: $(cat "$TMP/$name.check")"
}

# ---- untraced: the output every traced run must give ------------------------
timeout 60 "$OMPTEST" --report "$TMP/plain.json" >"$TMP/plain.out" \
    2>"$TMP/plain.err" || fail "omptest failed untraced: $(cat "$TMP/plain.err")"
[ ! -s "$TMP/plain.err" ] || fail "omptest said: $(cat "$TMP/plain.err")"

start_weftd

# ---- weft run's default recorders: openmp with pthread and io -------------
traced omp -v || fail "omptest failed traced: $(cat "$TMP/omp.err")"
for lib in openmp pthread io; do
    grep -q "preloading .*libweft-$lib\.so" "$TMP/omp.err" ||
        fail "weft run did not preload libweft-$lib by default: $(cat "$TMP/omp.err")"
done
grep -v "^weft run: " "$TMP/omp.err" >"$TMP/omp.said"
[ ! -s "$TMP/omp.said" ] || fail "omptest said, traced: $(cat "$TMP/omp.said")"
check_run omp

# ---- the OpenMP environment: explicit team sizes, the same run ------------
OMP_NUM_THREADS=3 OMP_PROC_BIND=true OMP_WAIT_POLICY=active traced omp-env ||
    fail "omptest failed traced with OMP_* set: $(cat "$TMP/omp-env.err")"
[ ! -s "$TMP/omp-env.err" ] || fail "omptest said, with OMP_* set: $(cat "$TMP/omp-env.err")"
check_run omp-env

# ---- -t openmp alone ------------------------------------------------------------
traced omp-only -v -t openmp ||
    fail "omptest failed under -t openmp: $(cat "$TMP/omp-only.err")"
grep "preloading " "$TMP/omp-only.err" | grep "libweft-openmp\.so" |
    grep -qv "libweft-pthread\|libweft-io" ||
    fail "-t openmp preloaded more or less than libweft-openmp: $(cat "$TMP/omp-only.err")"
grep -v "^weft run: " "$TMP/omp-only.err" >"$TMP/omp-only.said"
[ ! -s "$TMP/omp-only.said" ] || fail "omptest said, traced: $(cat "$TMP/omp-only.said")"
check_run omp-only

stop_weftd
echo ok

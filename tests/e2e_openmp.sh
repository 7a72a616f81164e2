#!/bin/bash
# e2e_openmp.sh - an unmodified OpenMP program traced by libweft-openmp
# through `weft run`, streaming to a real weftd, on both runtimes it
# records:
#   - tests/openmp/omptest built by GCC (GCC's libgomp, whose entry points
#     libweft-openmp wraps): teams of 2 to 4 threads meeting every
#     construct the recorder records, the combined constructs, a nested
#     part, omp locks, explicit tasks; under weft run's default
#     recorders, which add openmp to pthread and io for a program that
#     links libgomp: its exit status and output are those of an untraced
#     run, and its trace is complete, accepted by otf2-print -Werror, read
#     alike by the python reader (check_archive.py, given otf2-print's
#     events per location and kind), and holds what
#     tests/check_openmp.py wants: the recorder's model (teams, regions
#     and their nesting, locks, tasks) and exactly what the program
#     counted;
#   - the same with OMP_NUM_THREADS=3 OMP_PROC_BIND=true
#     OMP_WAIT_POLICY=active: the program's teams have explicit sizes,
#     nothing changes;
#   - the same under -t openmp alone;
#   - the same program built by clang -fopenmp=libomp (LLVM's libomp,
#     whose OMPT tool libweft-openmp is), under the default recorders
#     (weft run -v says it uses libomp.so.5 and preloads libweft-openmp)
#     and under -t openmp, checked alike with check_openmp.py --runtime
#     llvm (what libomp tells of the same program).
# Each part prints a SKIP line when what it needs is missing (a build of
# omptest that does not use libgomp; clang or libomp; a libweft-openmp
# built without omp-tools.h); 77 when no part runs.
. "$(dirname "$0")/lib.sh"
unset LD_PRELOAD WEFT_TRACE OMP_NUM_THREADS OMP_PROC_BIND OMP_WAIT_POLICY \
    OMP_DYNAMIC OMP_THREAD_LIMIT OMP_MAX_ACTIVE_LEVELS OMP_NESTED OMP_SCHEDULE

LIBDIR="$WEFT_BUILDDIR/.libs"
LIB="$LIBDIR/libweft-openmp.so"
OMPTEST="$WEFT_BUILDDIR/tests/openmp/omptest"
OMPTEST_SRC="$WEFT_SRCDIR/tests/openmp/omptest.c"
CHECK="$WEFT_SRCDIR/tests/check_openmp.py"
# clang's OpenMP build of omptest (its long double atomic needs libatomic)
CLANG_OMP=(-fopenmp=libomp -g -std=gnu11 -Wall -Wextra -Werror)
[ -f "$LIB" ] || fail "$LIB missing"
[ -x "$OMPTEST" ] || fail "$OMPTEST missing"

# traced NAME PROGRAM [WEFT RUN OPTIONS...]: PROGRAM (an omptest) under
# weft run (recorders from this build) as trace NAME, at most 120 s, its
# report in $TMP/NAME.json, its output in $TMP/NAME.out and .err.
traced() {
    local name=$1 prog=$2
    shift 2
    with_recorders "$LIBDIR" timeout 120 "$WEFT" run "$@" --trace "$name" -- "$prog" \
        --report "$TMP/$name.json" >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# untraced NAME PROGRAM: PROGRAM's run without weft, whose output every
# traced run must give, in $TMP/NAME.out.
untraced() {
    timeout 60 "$2" --report "$TMP/$1.json" >"$TMP/$1.out" 2>"$TMP/$1.err" ||
        fail "$1: omptest failed untraced: $(cat "$TMP/$1.err")"
    [ ! -s "$TMP/$1.err" ] || fail "$1: omptest said: $(cat "$TMP/$1.err")"
}

# check_run NAME PLAIN RUNTIME: the run of trace NAME (traced) succeeded
# with the output of the untraced run PLAIN; its trace is complete,
# otf2-print -Werror accepts it, both readers read the same events, and
# check_openmp.py --runtime RUNTIME finds in it what the program reports.
check_run() {
    local name=$1 plain=$2 runtime=$3 anchor
    cmp -s "$TMP/$plain.out" "$TMP/$name.out" ||
        fail "$name: omptest's output differs traced: $(diff "$TMP/$plain.out" "$TMP/$name.out" | head -10)"
    wait_state "$name" complete 60
    anchor=$(json_get "$TMP/show.json" 'j["archive"]')
    readers_agree "$name" "$anchor"
    "$PY" "$CHECK" --runtime "$runtime" "$anchor" "$TMP/$name.json" >"$TMP/$name.check" ||
        fail "$name: the archive is not what omptest did: $(head -40 "$TMP/$name.check")"
    echo "ok: $name: $(cat "$TMP/$name.check")"
}

# said NAME: the traced run NAME said nothing but weft run's lines.
said() {
    grep -v "^weft run: " "$TMP/$1.err" >"$TMP/$1.said"
    [ ! -s "$TMP/$1.said" ] || fail "$1: omptest said, traced: $(cat "$TMP/$1.said")"
}

# only_openmp NAME: weft run -v -t openmp preloaded libweft-openmp alone.
only_openmp() {
    grep "preloading " "$TMP/$1.err" | grep "libweft-openmp\.so" |
        grep -qv "libweft-pthread\|libweft-io" ||
        fail "$1: -t openmp preloaded more or less than libweft-openmp: $(cat "$TMP/$1.err")"
}

# ---- what runs: GCC's build, clang's ---------------------------------------
gnu=1 llvm=1
# (a compiler other than GCC, clang say, gives its own OpenMP runtime)
if ! readelf -d "$OMPTEST" | grep -q "NEEDED.*libgomp"; then
    echo "SKIP: $OMPTEST does not use GCC's libgomp"
    gnu=
fi
OMPTEST_LLVM="$TMP/omptest-llvm"
if ! command -v clang >/dev/null; then
    echo "SKIP: no clang: omptest is not traced on LLVM's libomp"
    llvm=
elif ! nm -D "$LIB" | grep -q " T ompt_start_tool$"; then
    echo "SKIP: $LIB is no OMPT tool (built without omp-tools.h): omptest is not traced on LLVM's libomp"
    llvm=
else
    # clang and libomp (its omp.h and library) build and run an OpenMP
    # program
    printf '#include <omp.h>\nint main(void) { int n = 0;\n#pragma omp parallel\n#pragma omp atomic\nn++;\nreturn n == omp_get_max_threads() ? 0 : 1; }\n' \
        >"$TMP/probe.c"
    if ! { clang "${CLANG_OMP[@]}" -o "$TMP/probe" "$TMP/probe.c" &&
           "$TMP/probe"; } >"$TMP/probe.log" 2>&1; then
        echo "SKIP: clang -fopenmp=libomp builds or runs no OpenMP program (LLVM's libomp missing?): $(head -3 "$TMP/probe.log")"
        llvm=
    else
        clang "${CLANG_OMP[@]}" -o "$OMPTEST_LLVM" "$OMPTEST_SRC" -latomic \
            >"$TMP/omptest-llvm.log" 2>&1 ||
            fail "clang does not build omptest: $(head -20 "$TMP/omptest-llvm.log")"
        readelf -d "$OMPTEST_LLVM" | grep -q "NEEDED.*libomp\.so\.5" ||
            fail "clang's omptest does not use libomp.so.5: $(readelf -d "$OMPTEST_LLVM" | grep NEEDED)"
    fi
fi
[ -n "$gnu$llvm" ] || exit 77

[ -z "$gnu" ] || untraced plain "$OMPTEST"
[ -z "$llvm" ] || untraced plain-llvm "$OMPTEST_LLVM"

start_weftd

if [ -n "$gnu" ]; then
    # ---- weft run's default recorders: openmp with pthread and io ---------
    traced omp "$OMPTEST" -v || fail "omptest failed traced: $(cat "$TMP/omp.err")"
    for lib in openmp pthread io; do
        grep -q "preloading .*libweft-$lib\.so" "$TMP/omp.err" ||
            fail "weft run did not preload libweft-$lib by default: $(cat "$TMP/omp.err")"
    done
    said omp
    check_run omp plain gnu

    # ---- the OpenMP environment: explicit team sizes, the same run --------
    OMP_NUM_THREADS=3 OMP_PROC_BIND=true OMP_WAIT_POLICY=active traced omp-env "$OMPTEST" ||
        fail "omptest failed traced with OMP_* set: $(cat "$TMP/omp-env.err")"
    [ ! -s "$TMP/omp-env.err" ] || fail "omptest said, with OMP_* set: $(cat "$TMP/omp-env.err")"
    check_run omp-env plain gnu

    # ---- -t openmp alone ----------------------------------------------------
    traced omp-only "$OMPTEST" -v -t openmp ||
        fail "omptest failed under -t openmp: $(cat "$TMP/omp-only.err")"
    only_openmp omp-only
    said omp-only
    check_run omp-only plain gnu
fi

if [ -n "$llvm" ]; then
    # ---- LLVM's libomp: the default recorders -------------------------------
    traced llvm "$OMPTEST_LLVM" -v ||
        fail "clang's omptest failed traced: $(cat "$TMP/llvm.err")"
    grep -q "^weft run: .*OpenMP (libomp\.so\.5)" "$TMP/llvm.err" ||
        fail "weft run -v does not say clang's omptest uses libomp.so.5: $(cat "$TMP/llvm.err")"
    for lib in openmp pthread io; do
        grep -q "preloading .*libweft-$lib\.so" "$TMP/llvm.err" ||
            fail "weft run did not preload libweft-$lib for libomp by default: $(cat "$TMP/llvm.err")"
    done
    said llvm
    check_run llvm plain-llvm llvm

    # ---- LLVM's libomp: -t openmp alone ---------------------------------------
    traced llvm-only "$OMPTEST_LLVM" -v -t openmp ||
        fail "clang's omptest failed under -t openmp: $(cat "$TMP/llvm-only.err")"
    only_openmp llvm-only
    said llvm-only
    check_run llvm-only plain-llvm llvm
fi

stop_weftd
echo ok

#!/bin/bash
# e2e_openmp_constructs.sh - the OpenMP constructs beyond omptest's that
# libweft-openmp records (cancel and cancellation point, taskyield,
# doacross loops' ordered depend(sink)/depend(source) of one and two
# loops, scope with a task reduction, host teams), in
# tests/openmp/constructs run with OMP_CANCELLATION=true under weft run's
# default recorders, streaming to a real weftd, on both runtimes:
#   - built by GCC (libgomp, whose entry points libweft-openmp wraps:
#     GOMP_cancel, GOMP_cancellation_point, GOMP_taskyield, the variadic
#     GOMP_doacross_wait and GOMP_doacross_ull_wait, GOMP_scope_start,
#     GOMP_teams_reg, ...);
#   - built by clang -fopenmp=libomp (LLVM's libomp, whose OMPT tool it
#     is: cancel, dependences and the teams league's callbacks);
# each run's exit status and output are those of an untraced run, its
# trace is complete, accepted by otf2-print -Werror and read alike by the
# python reader (readers_agree), holds the recorder's model
# (check_openmp.py --model: nesting on every location, teams, tasks) and
# exactly what the program counted per thread (check_constructs.py).
# Each part prints a SKIP line when what it needs is missing; 77 when no
# part runs.
. "$(dirname "$0")/lib.sh"
unset LD_PRELOAD WEFT_TRACE OMP_NUM_THREADS OMP_PROC_BIND OMP_WAIT_POLICY \
    OMP_DYNAMIC OMP_THREAD_LIMIT OMP_MAX_ACTIVE_LEVELS OMP_NESTED \
    OMP_SCHEDULE OMP_NUM_TEAMS OMP_TEAMS_THREAD_LIMIT
export OMP_CANCELLATION=true

LIBDIR="$WEFT_BUILDDIR/.libs"
LIB="$LIBDIR/libweft-openmp.so"
PROG="$WEFT_BUILDDIR/tests/openmp/constructs"
PROG_SRC="$WEFT_SRCDIR/tests/openmp/constructs.c"
CHECK="$WEFT_SRCDIR/tests/check_openmp.py"
CHECK_CONSTRUCTS="$WEFT_SRCDIR/tests/check_constructs.py"
[ -f "$LIB" ] || fail "$LIB missing"
[ -x "$PROG" ] || fail "$PROG missing"

# run NAME PROGRAM [weft run]: PROGRAM, at most 120 s, traced as trace
# NAME under weft run (recorders from this build) when the third word is
# given, its report in $TMP/NAME.json, its output in $TMP/NAME.out and
# .err, its exit status in $TMP/NAME.rc.
run() {
    local name=$1 prog=$2 rc=0
    if [ -n "${3:-}" ]; then
        with_recorders "$LIBDIR" timeout 120 "$WEFT" run -v --trace "$name" -- \
            "$prog" "$TMP/$name.json" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
    else
        timeout 60 "$prog" "$TMP/$name.json" >"$TMP/$name.out" \
            2>"$TMP/$name.err" || rc=$?
    fi
    echo "$rc" >"$TMP/$name.rc"
}

# check_run NAME PLAIN RUNTIME: trace NAME's run ended as the untraced run
# PLAIN did, with its output, said nothing but weft run's lines, preloaded
# libweft-openmp; its trace is complete, both readers read it alike, and
# check_openmp.py --model and check_constructs.py accept it.
check_run() {
    local name=$1 plain=$2 runtime=$3 anchor
    [ "$(cat "$TMP/$name.rc")" = "$(cat "$TMP/$plain.rc")" ] ||
        fail "$name: exit status $(cat "$TMP/$name.rc") traced, $(cat "$TMP/$plain.rc") untraced: $(cat "$TMP/$name.err")"
    cmp -s "$TMP/$plain.out" "$TMP/$name.out" ||
        fail "$name: output differs traced: $(diff "$TMP/$plain.out" "$TMP/$name.out" | head -10)"
    grep -v "^weft run: " "$TMP/$name.err" >"$TMP/$name.said"
    [ ! -s "$TMP/$name.said" ] || fail "$name: the program said, traced: $(cat "$TMP/$name.said")"
    grep -q "preloading .*libweft-openmp\.so" "$TMP/$name.err" ||
        fail "$name: weft run did not preload libweft-openmp: $(cat "$TMP/$name.err")"
    wait_state "$name" complete 60
    anchor=$(json_get "$TMP/show.json" 'j["archive"]')
    readers_agree "$name" "$anchor"
    "$PY" "$CHECK" --runtime "$runtime" --model "$anchor" >"$TMP/$name.model" ||
        fail "$name: the archive is not the recorder's model: $(head -40 "$TMP/$name.model")"
    "$PY" "$CHECK_CONSTRUCTS" --runtime "$runtime" "$anchor" "$TMP/$name.json" \
        >"$TMP/$name.check" ||
        fail "$name: the archive is not what the program did: $(head -40 "$TMP/$name.check")"
    echo "ok: $name: $(cat "$TMP/$name.check")"
}

# ---- what runs: GCC's build, clang's ----------------------------------------
gnu=1 llvm=1
if ! readelf -d "$PROG" | grep -q "NEEDED.*libgomp"; then
    echo "SKIP: $PROG does not use GCC's libgomp"
    gnu=
fi
PROG_LLVM="$TMP/constructs-llvm"
if ! command -v clang >/dev/null; then
    echo "SKIP: no clang: not traced on LLVM's libomp"
    llvm=
elif ! nm -D "$LIB" | grep -q " T ompt_start_tool$"; then
    echo "SKIP: $LIB is no OMPT tool (built without omp-tools.h): not traced on LLVM's libomp"
    llvm=
elif ! clang -fopenmp=libomp -g -std=gnu11 -Wall -Wextra -Werror \
        -o "$PROG_LLVM" "$PROG_SRC" >"$TMP/llvm-build.log" 2>&1 ||
     ! readelf -d "$PROG_LLVM" | grep -q "NEEDED.*libomp\.so"; then
    echo "SKIP: clang -fopenmp=libomp builds no program on libomp (LLVM's libomp missing?): $(head -3 "$TMP/llvm-build.log")"
    llvm=
fi
[ -n "$gnu$llvm" ] || exit 77

for rt in ${gnu:+gnu} ${llvm:+llvm}; do
    prog=$PROG
    [ "$rt" = gnu ] || prog=$PROG_LLVM
    run "plain-$rt" "$prog"
    [ "$(cat "$TMP/plain-$rt.rc")" = 0 ] && [ ! -s "$TMP/plain-$rt.err" ] ||
        fail "plain-$rt: the program failed untraced: $(cat "$TMP/plain-$rt.err")"
done

start_weftd
for rt in ${gnu:+gnu} ${llvm:+llvm}; do
    prog=$PROG
    [ "$rt" = gnu ] || prog=$PROG_LLVM
    run "constructs-$rt" "$prog" traced
    check_run "constructs-$rt" "plain-$rt" "$rt"
done
stop_weftd
echo ok

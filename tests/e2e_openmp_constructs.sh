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
# exactly what the program counted per thread (check_constructs.py). A
# doacross nest deeper than libweft-openmp forwards (17 loops) aborts
# under libgomp with the reason, its trace partial; runs under libomp.
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

# A doacross nest of 17 loops (ordered(17)): libgomp's variadic
# GOMP_doacross_wait gets 17 iteration numbers, one more than
# libweft-openmp forwards; it says so and aborts rather than let the
# iterations wait for the wrong ones (untraced the program runs), and
# the trace ends partial at once, SIGABRT named. On libomp (OMPT, no
# wrapper) the same program runs traced as untraced.
"$PY" - "$TMP/deep.c" <<'PY'
import sys
n = 17
loops = "".join("for (int i%d = 0; i%d < %d; i%d++)\n" % (k, k, 3 if k == 0 else 2, k)
                for k in range(n))
sink = ", ".join(["i0 - 1"] + ["i%d" % k for k in range(1, n)])
open(sys.argv[1], "w").write("""#include <stdio.h>
int main(void)
{
    long sum = 0;
#pragma omp parallel for ordered(%d) reduction(+: sum)
%s    {
#pragma omp ordered depend(sink: %s)
        sum += i0;
#pragma omp ordered depend(source)
    }
    printf("%%ld\\n", sum);
    return 0;
}
""" % (n, loops, sink))
PY
if [ -n "$gnu" ]; then
    gcc -fopenmp -O1 -o "$TMP/deep" "$TMP/deep.c" || fail "gcc cannot build deep.c"
    out=$(OMP_NUM_THREADS=2 timeout 60 "$TMP/deep") && [ "$out" = 196608 ] ||
        fail "deep.c untraced: $out"
    rc=0
    OMP_NUM_THREADS=2 with_recorders "$LIBDIR" timeout 60 "$WEFT" run --trace deep -- \
        "$TMP/deep" >"$TMP/deep.out" 2>"$TMP/deep.err" || rc=$?
    [ "$rc" = 134 ] || fail "deep: exit status $rc traced, not 134 (SIGABRT): $(cat "$TMP/deep.err")"
    grep -q "^libweft-openmp: GOMP_doacross_wait in a doacross loop of 17 loops (ordered(n)): it forwards the arguments of 1 to 16 only; aborting" "$TMP/deep.err" ||
        fail "deep: libweft-openmp did not say why: $(cat "$TMP/deep.err")"
    wait_state deep partial 30
    grep -q "signal 6 (SIGABRT)" "$TMP/show.json" ||
        fail "deep: the trace does not name the abort: $(cat "$TMP/show.json")"
    otf2-print -Werror --silent "$(json_get "$TMP/show.json" 'j["archive"]')" ||
        fail "deep: otf2-print -Werror refuses the partial archive"
    echo "ok: a doacross nest of 17 loops under libgomp: aborted with the reason, trace partial"
fi
if [ -n "$llvm" ]; then
    clang -fopenmp=libomp -O1 -o "$TMP/deep-llvm" "$TMP/deep.c" || fail "clang cannot build deep.c"
    out=$(OMP_NUM_THREADS=2 with_recorders "$LIBDIR" timeout 60 "$WEFT" run --trace deep-llvm -- \
        "$TMP/deep-llvm" 2>"$TMP/deep-llvm.err") && [ "$out" = 196608 ] ||
        fail "deep.c traced on libomp: $out $(cat "$TMP/deep-llvm.err")"
    wait_state deep-llvm complete 60
    echo "ok: the same nest under libomp: traced, complete"
fi
stop_weftd
echo ok

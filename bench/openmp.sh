#!/bin/bash
# bench/openmp.sh - what recording OpenMP adds to each construct (issue
# #35): bench/openmp.c's empty parallel region, barrier, dynamic loop
# chunk and critical section, each timed alone by the program, in the
# same run
#   gcc    built with gcc -fopenmp (libgomp): untraced, and under
#          `weft run -t openmp` (libweft-openmp wrapping libgomp's entry
#          points, from BUILD_DIR)
#   clang  built with clang -fopenmp=libomp (LLVM's runtime): untraced,
#          under `weft run -t openmp` (libweft-openmp as libomp's OMPT
#          tool) and under EZTrace's OMPT module (`eztrace -t ompt`)
# EZTrace's `openmp` module records nothing of a program not rebuilt
# with OPARI2, so EZTrace is measured on libomp, next to weft on the
# same runtime; each tracer's figure is the time it adds per construct
# to its runtime's untraced run.
#
#   make -C BUILD_DIR && bash bench/openmp.sh BUILD_DIR [ROUNDS [THREADS [N]]]
#   (or make -C BUILD_DIR bench/openmp; BENCH_OPENMP_FLAGS="ROUNDS ...")
# WEFTD_NICE=N runs weftd at nice N (its `nice`; default 19): with as
# many threads as cores, what weftd's own work costs the program.
# (3 rounds, 2 threads, 20000 constructs each by default.) Figures are
# medians of the rounds, ns per construct; "+" columns are added time.
set -u
BENCH=bench/openmp
USAGE="usage: bash bench/openmp.sh BUILD_DIR [ROUNDS [THREADS [N]]]"
B=$(cd "${1:?$USAGE}" && pwd)
ROUNDS=${2:-3}
THREADS=${3:-2}
N=${4:-20000}
RUN_TIMEOUT=600
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")" && pwd)/openmp.c
[ -x "$B/weft" ] && [ -f "$B/.libs/libweft-openmp.so" ] ||
    die "build $B first (make -C $B)"
gcc -O2 -fopenmp -o "$TMP/omp-gcc" "$SRC" || die "gcc -fopenmp failed"
HAVE_CLANG=1
clang -O2 -fopenmp=libomp -o "$TMP/omp-clang" "$SRC" 2>"$TMP/clang.err" || {
    echo "SKIP clang: clang -fopenmp=libomp failed (Debian packages clang, libomp-dev): $(head -n 2 "$TMP/clang.err")"
    HAVE_CLANG=
}
HAVE_EZ=1
command -v eztrace >/dev/null || {
    echo "SKIP EZTrace: eztrace not found (Debian package eztrace; scripts/deps.sh --bench)"
    HAVE_EZ=
}

start_weftd ${WEFTD_NICE:+--set "nice=$WEFTD_NICE"}
export WEFT_CATALOG="$TMP/spool/catalog.db"

# run MODE: one run of the program, its "NAME NS" lines into
# $TMP/MODE.out; MODE gcc, weft, clang or eztrace.
run() {
    local mode=$1
    case $mode in
    gcc) timeout "$RUN_TIMEOUT" "$TMP/omp-gcc" "$THREADS" "$N" ;;
    weft|weftc)
        local prog=$TMP/omp-gcc
        [ "$mode" = weftc ] && prog=$TMP/omp-clang
        env WEFT_LIBDIR="$B/.libs" \
            LD_LIBRARY_PATH="$B/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            timeout "$RUN_TIMEOUT" "$B/weft" run -t openmp \
            --trace "$mode-$round" -- "$prog" "$THREADS" "$N" ;;
    clang) timeout "$RUN_TIMEOUT" "$TMP/omp-clang" "$THREADS" "$N" ;;
    eztrace) rm -rf "$TMP/ez" && mkdir -p "$TMP/ez" &&
        timeout "$RUN_TIMEOUT" eztrace -t ompt -o "$TMP/ez" \
            "$TMP/omp-clang" "$THREADS" "$N" 2>"$TMP/ez.err" |
        grep -E '^(region|barrier|chunk|critical) ' ;;
    esac >"$TMP/$mode.out" || die "$mode run failed: $(tail -n 3 "$TMP/$mode.out" "$TMP/ez.err" 2>/dev/null)"
}

MODES="gcc weft"
[ -n "$HAVE_CLANG" ] && MODES="$MODES clang weftc"
[ -n "$HAVE_CLANG" ] && [ -n "$HAVE_EZ" ] && MODES="$MODES eztrace"
declare -A fig
for round in $(seq "$ROUNDS"); do
    for mode in $MODES; do
        run "$mode"
        while read -r name ns; do
            fig[$mode.$name]="${fig[$mode.$name]:-} $ns"
        done <"$TMP/$mode.out"
    done
    weft_archive "weft-$round" >/dev/null || exit 1
    [ -n "$HAVE_CLANG" ] && { weft_archive "weftc-$round" >/dev/null || exit 1; }
done

echo "$BENCH: $THREADS threads, $N constructs each, $ROUNDS rounds (ns per construct, medians)"
printf '%-9s %8s %8s %8s %8s | %8s %8s %8s %8s %8s %6s\n' construct gcc weft + \
    spread clang weft + eztrace + ratio
for name in region barrier chunk critical; do
    # shellcheck disable=SC2086 # lists of numbers
    g=$(median ${fig[gcc.$name]}) w=$(median ${fig[weft.$name]})
    # shellcheck disable=SC2086
    gs=$(spread ${fig[gcc.$name]})
    c=- wc=- wca=- e=- ea=- ratio=-
    wa=$(awk -v a="$w" -v b="$g" 'BEGIN { printf "%.1f", a - b }')
    if [ -n "${fig[clang.$name]:-}" ]; then
        # shellcheck disable=SC2086
        c=$(median ${fig[clang.$name]}) wc=$(median ${fig[weftc.$name]})
        wca=$(awk -v a="$wc" -v b="$c" 'BEGIN { printf "%.1f", a - b }')
    fi
    if [ -n "${fig[eztrace.$name]:-}" ]; then
        # shellcheck disable=SC2086
        e=$(median ${fig[eztrace.$name]})
        ea=$(awk -v a="$e" -v b="$c" 'BEGIN { printf "%.1f", a - b }')
        ratio=$(awk -v a="$wca" -v b="$ea" \
            'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    fi
    printf '%-9s %8s %8s %8s %8s | %8s %8s %8s %8s %8s %6s\n' "$name" "$g" \
        "$w" "$wa" "+-$gs" "$c" "$wc" "$wca" "$e" "$ea" "$ratio"
done
echo "(left: GCC's libgomp; right: LLVM's libomp; ratio: weft's added time"
echo " over EZTrace's on libomp, below 1 weft adds less)"

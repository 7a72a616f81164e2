#!/bin/bash
# bench/mpi.sh - what libweft-mpi adds to each MPI call, next to EZTrace.
#
#   make -C BUILD_DIR && bash bench/mpi.sh [OPTIONS] BUILD_DIR
#
#   -r ROUNDS      rounds (default 5); figures are medians over them
#   -n PINGPONGS   ping-pong iterations per run (default 200000: a batch
#                  then fills a dozen libweft buffers per rank, so
#                  every batch pays for shipping them)
#   -a ALLREDUCES  MPI_Allreduce calls per run (default 20000 with Open
#                  MPI, 500 with MPICH, whose 4 spinning ranks on 2 cores
#                  take milliseconds per call)
#   -s SOLOS       MPI_Allreduce calls on 1 rank per run (default 1000000)
#   -m MPI         only this MPI: openmpi or mpich (default: every one
#                  found)
#
# For each MPI found (Debian's Open MPI: mpirun.openmpi, ompi-c; MPICH:
# mpirun.mpich, mpich) it runs BUILD_DIR/bench/mpi_kernel_<mpi> (see
# bench/mpi_kernel.c) on this host, shared memory only (Open MPI: --mca
# btl self,vader; MPICH: UCX_TLS=self,sm), oversubscribed:
#   pingpong   2 ranks, 8 bytes, MPI_Send / MPI_Recv
#   allreduce  4 ranks, MPI_Allreduce of one double
#   allreduce1 the same on 1 rank: what recording costs the calling
#              thread, weftd and libweft's sender thread having the other
#              core (on 2 cores, the kernels above share theirs with them)
# three ways, in a rotating order every round:
#   untraced   the program alone
#   weft       LD_PRELOAD=BUILD_DIR/.libs/libweft-mpi-<mpi>.so, streaming
#              to a weftd started here on a free loopback port (temporary
#              spool, bench/lib.sh); the run counts only once the
#              catalog says complete and the archive has rank 0's
#              MpiSend / MpiCollectiveEnd
#   eztrace    eztrace -t openmpi|mpich -o TMPDIR (Debian's EZTrace 2.0),
#              checked the same way on its archive
# The kernel times its iterations in 20 batches; a run's figure is
# rank 0's ns per call in its median batch (a batch during which another
# process of this shared machine took a core is slow, and left out), and
# in its fastest batch (what a quiet machine would give), and the CPU
# time of rank 0's thread per call (what recording costs the program's
# thread, whatever weftd and the sender thread take; the same as the
# wall time where MPI busy-waits). The tables give the median over the
# rounds of each, added = traced - untraced, and, per kernel, the ratio
# weft added / EZTrace added (target: <= 0.5, and weft added < 150 ns),
# next to half the range of the untraced rounds (an added cost below
# that is noise). The tail tables give each run's 99th percentile and
# slowest iteration of rank 0 per call (median over the rounds, the worst
# round in parentheses), traced / untraced (target at the 99th
# percentile: <= 2).
# Every mpirun runs under timeout(1); weftd and the temporary directory
# are removed however the script ends. Needs otf2-print.
set -u

ROUNDS=5 PINGPONGS=200000 ALLREDUCES="" SOLOS=1000000 ONLY=""
usage() {
    echo "usage: bash bench/mpi.sh [-r ROUNDS] [-n PINGPONGS] [-a ALLREDUCES] [-s SOLOS] [-m openmpi|mpich] BUILD_DIR" >&2
    exit 2
}
while getopts 'r:n:a:s:m:h' opt; do
    case $opt in
    r) ROUNDS=$OPTARG ;;
    n) PINGPONGS=$OPTARG ;;
    a) ALLREDUCES=$OPTARG ;;
    s) SOLOS=$OPTARG ;;
    m) ONLY=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
B=$(cd "$1" && pwd) || exit 2
for v in "$ROUNDS" "$PINGPONGS" "$SOLOS" ${ALLREDUCES:+"$ALLREDUCES"}; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || usage
done
if [ ! -x "$B/weftd" ] || [ ! -x "$B/weft" ]; then
    echo "bench/mpi: no weftd/weft in $B: build it first" >&2
    exit 1
fi
command -v otf2-print >/dev/null ||
    { echo "bench/mpi: otf2-print not found (Debian package otf2-tools)" >&2; exit 1; }
HAVE_EZ=1
command -v eztrace >/dev/null || {
    echo "bench/mpi: eztrace not found (Debian package eztrace): no EZTrace column" >&2
    HAVE_EZ=0
}

RUN_TIMEOUT=${WEFT_BENCH_TIMEOUT:-300}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BENCH=bench/mpi
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# launch MPI NP CMD...: mpirun of this MPI on shared memory, oversubscribed.
launch() {
    local mpi=$1 np=$2
    shift 2
    case $mpi in
    openmpi) timeout "$RUN_TIMEOUT" mpirun.openmpi --oversubscribe \
                 --mca btl self,vader -np "$np" "$@" ;;
    mpich) UCX_TLS=self,sm timeout "$RUN_TIMEOUT" mpirun.mpich \
               -np "$np" "$@" ;;
    esac
}

# run_one MPI KERNEL N MODE TAG: one run; prints "MEDIAN FASTEST CPU P99
# MAX SLOW" (ns per call of the median and the fastest batch, rank 0's thread
# CPU per call, the 99th percentile and the slowest of its iterations per
# call, how many iterations took over 100 us), or fails with what went wrong. The traced runs are checked to have traced.
run_one() {
    local mpi=$1 kernel=$2 n=$3 mode=$4 tag=$5 np=2 kind=MPI_SEND
    local kbin="$B/bench/mpi_kernel_$mpi" out="$TMP/$tag.out" ns got
    local anchor="" state="" ez="$TMP/ez-$tag" prog=$2
    case $kernel in
    allreduce) np=4 kind=MPI_COLLECTIVE_END ;;
    allreduce1) np=1 kind=MPI_COLLECTIVE_END prog=allreduce ;;
    esac
    case $mode in
    untraced) launch "$mpi" $np "$kbin" "$prog" "$n" >"$out" 2>&1 ;;
    weft) launch "$mpi" $np env LD_LIBRARY_PATH="$B/.libs" \
              LD_PRELOAD="$B/.libs/libweft-mpi-$mpi.so" WEFT_TRACE="$tag" \
              "$kbin" "$prog" "$n" >"$out" 2>&1 ;;
    eztrace) mkdir -p "$ez" &&
             launch "$mpi" $np eztrace -t "$mpi" -o "$ez" \
                 "$kbin" "$prog" "$n" >"$out" 2>&1 ;;
    esac || die "$tag: mpirun failed (status $?): $(tail -n 20 "$out")"
    ns=$(awk '$1 == "ns_per_call" { print $4, $6, $8, $12, $14, $16 }' "$out")
    [ -n "$ns" ] || die "$tag: no ns_per_call in the output: $(tail -n 20 "$out")"
    case $mode in
    weft)
        anchor=$(weft_archive "$tag") || exit 1
        ;;
    eztrace)
        anchor=$(find "$ez" -name eztrace_log.otf2 | head -n 1)
        [ -n "$anchor" ] || die "$tag: EZTrace wrote no archive in $ez"
        ;;
    esac
    if [ -n "$anchor" ]; then
        got=$(count_events "$anchor" $kind 0)
        [ "$got" -ge "$n" ] ||
            die "$tag: $mode's archive has $got $kind on rank 0, expected at least $n"
        if [ "$mode" = weft ]; then
            weft_forget "$tag"
        else
            rm -rf "$ez"
        fi
    fi
    echo "$ns"
}

MPIS=()
for mpi in openmpi mpich; do
    [ -n "$ONLY" ] && [ "$ONLY" != "$mpi" ] && continue
    if ! command -v "mpirun.$mpi" >/dev/null; then
        echo "bench/mpi: mpirun.$mpi not found: $mpi skipped" >&2
    elif [ ! -x "$B/bench/mpi_kernel_$mpi" ] ||
         [ ! -e "$B/.libs/libweft-mpi-$mpi.so" ]; then
        echo "bench/mpi: $B has no bench/mpi_kernel_$mpi or libweft-mpi-$mpi.so (configure found no $mpi?): skipped" >&2
    else
        MPIS+=("$mpi")
    fi
done
[ ${#MPIS[@]} -gt 0 ] || die "no MPI to benchmark"
KERNELS=(pingpong allreduce allreduce1)
MODES=(untraced weft)
[ "$HAVE_EZ" = 1 ] && MODES+=(eztrace)

start_weftd
echo "bench/mpi: $ROUNDS rounds; load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "each run: ns per call in its median batch / its fastest batch / rank 0's thread CPU; p99 and max: of its iterations, per call; >100us: iterations over 100 us"
declare -A T
for mpi in "${MPIS[@]}"; do
    for kernel in "${KERNELS[@]}"; do
        case $kernel in
        pingpong) n=$PINGPONGS ;;
        allreduce)
            n=${ALLREDUCES:-$([ "$mpi" = mpich ] && echo 500 || echo 20000)} ;;
        allreduce1) n=$SOLOS ;;
        esac
        for r in $(seq "$ROUNDS"); do
            line="$mpi $kernel n=$n round $r:"
            # rotate the order of the modes from round to round
            for i in "${!MODES[@]}"; do
                mode=${MODES[$(((i + r - 1) % ${#MODES[@]}))]}
                ns=$(run_one "$mpi" "$kernel" "$n" "$mode" \
                         "$mpi-$kernel-$mode-$r") || exit 1
                read -r med fast cpu p99 max slow <<<"$ns"
                T[$mpi,$kernel,$mode,med]+="$med "
                T[$mpi,$kernel,$mode,fast]+="$fast "
                T[$mpi,$kernel,$mode,cpu]+="$cpu "
                T[$mpi,$kernel,$mode,p99]+="$p99 "
                T[$mpi,$kernel,$mode,max]+="$max "
                line+=" $mode $med/$fast/$cpu p99 $p99 max $max >100us $slow"
            done
            echo "$line (load $(cut -d' ' -f1 /proc/loadavg))"
        done
    done
done

# table WHICH TITLE: medians over the rounds of figure WHICH (med, fast,
# cpu).
table() {
    local mpi kernel u w e wa ea ratio noise
    echo
    echo "bench/mpi: $2, ns per call, median of $ROUNDS rounds"
    printf '%-8s %-10s %10s %10s %10s %11s %11s %6s %10s\n' MPI kernel \
        untraced weft eztrace "weft added" "ez added" ratio "+-noise"
    for mpi in "${MPIS[@]}"; do
        for kernel in "${KERNELS[@]}"; do
            # shellcheck disable=SC2086 # space-separated numbers
            u=$(median ${T[$mpi,$kernel,untraced,$1]})
            # shellcheck disable=SC2086
            noise=$(spread ${T[$mpi,$kernel,untraced,$1]})
            # shellcheck disable=SC2086
            w=$(median ${T[$mpi,$kernel,weft,$1]})
            e=- ea=- ratio=-
            wa=$(awk -v a="$w" -v b="$u" 'BEGIN { printf "%.1f", a - b }')
            if [ "$HAVE_EZ" = 1 ]; then
                # shellcheck disable=SC2086
                e=$(median ${T[$mpi,$kernel,eztrace,$1]})
                ea=$(awk -v a="$e" -v b="$u" 'BEGIN { printf "%.1f", a - b }')
                ratio=$(awk -v w="$wa" -v e="$ea" -v n="$noise" \
                    'BEGIN { if (w > n && e > n) printf "%.2f", w / e
                             else print "noise" }')
            fi
            printf '%-8s %-10s %10s %10s %10s %11s %11s %6s %10s\n' "$mpi" \
                "$kernel" "$u" "$w" "$e" "$wa" "$ea" "$ratio" "$noise"
        done
    done
}
# tails TITLE WHICH: medians over the rounds of each run's figure WHICH
# (p99, max) and the worst run's, untraced and traced, with traced /
# untraced (target for p99: <= 2).
tails() {
    local mpi kernel m
    local -A C
    echo
    echo "bench/mpi: $1, ns per call, median of $ROUNDS rounds (worst round)"
    printf '%-8s %-10s %23s %23s %23s %9s\n' MPI kernel untraced weft eztrace \
        weft/untr
    for mpi in "${MPIS[@]}"; do
        for kernel in "${KERNELS[@]}"; do
            for m in untraced weft eztrace; do
                C[$m]=-
                [ -n "${T[$mpi,$kernel,$m,$2]:-}" ] || continue
                # shellcheck disable=SC2086 # space-separated numbers
                C[$m]="$(median ${T[$mpi,$kernel,$m,$2]}) ($(printf '%s\n' ${T[$mpi,$kernel,$m,$2]} | sort -g | tail -n 1))"
            done
            printf '%-8s %-10s %23s %23s %23s %9s\n' "$mpi" "$kernel" \
                "${C[untraced]}" "${C[weft]}" "${C[eztrace]}" \
                "$(awk -v a="${C[weft]%% *}" -v b="${C[untraced]%% *}" \
                    'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
        done
    done
}
table med "typical: each run's median batch"
table fast "quiet: each run's fastest batch"
table cpu "CPU: rank 0's thread over all batches"
tails "tail: each run's 99th percentile iteration" p99
tails "tail: each run's slowest iteration" max
echo
echo "ratio = weft added / EZTrace added; target: ratio <= 0.50 and weft added < 150 ns"
echo "weft/untr = weft / untraced at the 99th percentile; target: <= 2"
echo "+-noise = half the range of the untraced rounds: an added cost below it is not measured (ratio: noise)"
echo "bench/mpi: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

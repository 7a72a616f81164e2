#!/bin/bash
# bench/interpose.sh - what weft run's pthread and I/O recorders add to
# one call, and to pigz, next to EZTrace.
#
#   make -C BUILD_DIR && make -C BUILD_DIR bench/interpose &&
#   bash bench/interpose.sh [OPTIONS] BUILD_DIR
#
#   -r ROUNDS   rounds (default 5); figures are medians over them
#   -m MUTEXES  lock/unlock pairs per run (default 1000000)
#   -p PREADS   4 KiB preads per run (default 200000)
#   -z MIB      size of pigz's input in MiB (default 50)
#
# It runs BUILD_DIR/bench/interpose (see bench/interpose.c):
#   mutex   an uncontended pthread_mutex_lock + pthread_mutex_unlock pair
#   pread   a 4 KiB pread of a file in the page cache (written and read
#           once before the timing). pread, not lseek+read: one call, and
#           it is wrapped by both weft's I/O recorder
#           (recorders/io/calls.def) and EZTrace's posixio module, so both
#           record the same calls
# and pigz -p 2 -k compressing a file of MIB MiB (half random, half
# text: 1 MiB pieces in turn), three ways, in a rotating order every
# round:
#   untraced   the program alone
#   weft       weft run -t pthread (mutex, pigz) or -t io (pread), with
#              this build's recorders (WEFT_LIBDIR, LD_LIBRARY_PATH),
#              streaming to a weftd started here on a free loopback port
#              (temporary spool, bench/lib.sh); a run counts only once
#              the catalog says its trace is complete and the archive
#              holds the events expected (a ThreadAcquireLock per lock,
#              an IoOperationBegin per pread; for pigz at least one
#              ThreadCreate and one ThreadAcquireLock)
#   eztrace    eztrace -t pthread / -t posixio -o TMPDIR (Debian's
#              EZTrace 2.0), its archive checked the same way (EZTrace
#              records a lock as an Enter/Leave, no lock events)
# A call's figure of one run is its ns per operation in the run's median
# batch (a batch during which another process of this shared machine
# took the core is slow, and left out); pigz's is the wall time of the
# run. The table gives the median over the rounds, added = traced -
# untraced, and the ratio weft added / EZTrace added next to its target
# (<= 0.50) and to half the range of the untraced rounds (an added cost
# below that is noise: the ratio is then marked ~). Without eztrace or
# pigz a line starting with SKIP says so, and the EZTrace columns read -
# or the pigz table is left out.
# Every run is under timeout(1); weftd and the temporary directory are
# removed however the script ends. Needs otf2-print and pigz.
set -u

ROUNDS=5 MUTEXES=1000000 PREADS=200000 MIB=50
usage() {
    echo "usage: bash bench/interpose.sh [-r ROUNDS] [-m MUTEXES] [-p PREADS] [-z MIB] BUILD_DIR" >&2
    exit 2
}
while getopts 'r:m:p:z:h' opt; do
    case $opt in
    r) ROUNDS=$OPTARG ;;
    m) MUTEXES=$OPTARG ;;
    p) PREADS=$OPTARG ;;
    z) MIB=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
B=$(cd "$1" && pwd) || exit 2
for v in "$ROUNDS" "$MUTEXES" "$PREADS" "$MIB"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || usage
done
PROG="$B/bench/interpose"
for f in weftd weft bench/interpose .libs/libweft-pthread.so .libs/libweft-io.so; do
    [ -e "$B/$f" ] ||
        { echo "bench/interpose: no $f in $B: make && make bench/interpose first" >&2; exit 1; }
done
command -v otf2-print >/dev/null ||
    { echo "bench/interpose: otf2-print not found (Debian package otf2-tools)" >&2; exit 1; }
HAVE_PIGZ=1
command -v pigz >/dev/null || {
    echo "SKIP pigz: pigz not found (Debian package pigz): no pigz table"
    HAVE_PIGZ=0
}
HAVE_EZ=1
command -v eztrace >/dev/null || {
    echo "SKIP EZTrace: eztrace not found (Debian package eztrace): no EZTrace column"
    HAVE_EZ=0
}

RUN_TIMEOUT=${WEFT_BENCH_TIMEOUT:-300}
BENCH=bench/interpose
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# weft_run RECORDER TAG COMMAND...: COMMAND under weft run -t RECORDER as
# trace TAG, with this build's recorders.
weft_run() {
    local rec=$1 tag=$2
    shift 2
    env WEFT_LIBDIR="$B/.libs" \
        LD_LIBRARY_PATH="$B/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout "$RUN_TIMEOUT" "$B/weft" run -t "$rec" --trace "$tag" -- "$@"
}

# check_archive TAG ANCHOR KIND MIN: the archive has at least MIN events
# KIND (otf2-print's name), or the run is not reported.
check_archive() {
    local got
    got=$(count_events "$2" "$3")
    [ "$got" -ge "$4" ] ||
        die "$1: the archive $2 has $got $3, expected at least $4"
}

# traced_check MODE TAG KIND MIN: after a traced run, its archive (weft's
# in the catalog, complete; EZTrace's in $TMP/ez-TAG) has MIN events KIND
# at least; the archive is then removed.
traced_check() {
    local mode=$1 tag=$2 anchor
    case $mode in
    weft)
        anchor=$(weft_archive "$tag") || exit 1
        check_archive "$tag" "$anchor" "$3" "$4"
        weft_forget "$tag"
        ;;
    eztrace)
        anchor=$(find "$TMP/ez-$tag" -name eztrace_log.otf2 | head -n 1)
        [ -n "$anchor" ] || die "$tag: EZTrace wrote no archive in $TMP/ez-$tag"
        check_archive "$tag" "$anchor" "$3" "$4"
        rm -rf "$TMP/ez-$tag"
        ;;
    esac
}

# run_call CALL MODE TAG: one run of bench/interpose; prints the ns per
# operation of its median batch, or dies saying what went wrong.
run_call() {
    local call=$1 mode=$2 tag=$3 n rec ezmod kind min out="$TMP/$3.out"
    local args
    case $call in
    mutex) n=$MUTEXES rec=pthread ezmod=pthread args=(mutex "$n")
           kind=THREAD_ACQUIRE_LOCK min=$n ;;
    pread) n=$PREADS rec=io ezmod=posixio args=(pread "$n" "$TMP")
           kind=IO_OPERATION_BEGIN min=$n ;;
    esac
    case $mode in
    untraced) timeout "$RUN_TIMEOUT" "$PROG" "${args[@]}" ;;
    weft) weft_run "$rec" "$tag" "$PROG" "${args[@]}" ;;
    eztrace) mkdir -p "$TMP/ez-$tag" &&
             timeout "$RUN_TIMEOUT" eztrace -t "$ezmod" -o "$TMP/ez-$tag" \
                 "$PROG" "${args[@]}" ;;
    esac >"$out" 2>&1 || die "$tag: the run failed (status $?): $(tail -n 20 "$out")"
    # EZTrace: an Enter and a Leave per lock and per unlock, no lock events
    [ "$mode/$call" = eztrace/mutex ] && kind=ENTER min=$((2 * n))
    traced_check "$mode" "$tag" "$kind" "$min"
    awk '$1 == "ns_per_call" { print $4 }' "$out" | grep . ||
        die "$tag: no ns_per_call in the output: $(tail -n 20 "$out")"
}

# run_pigz MODE TAG: pigz -p 2 on $TMP/data; prints its wall time in
# seconds, or dies saying what went wrong.
run_pigz() {
    local mode=$1 tag=$2 out="$TMP/$2.out" t0 t1 anchor
    rm -f "$TMP/data.gz"
    mkdir -p "$TMP/ez-$tag"
    t0=$(date +%s%N)
    case $mode in
    untraced) timeout "$RUN_TIMEOUT" pigz -p 2 -k -f "$TMP/data" ;;
    weft) weft_run pthread "$tag" pigz -p 2 -k -f "$TMP/data" ;;
    eztrace) timeout "$RUN_TIMEOUT" eztrace -t pthread -o "$TMP/ez-$tag" \
                 pigz -p 2 -k -f "$TMP/data" ;;
    esac >"$out" 2>&1 || die "$tag: pigz failed (status $?): $(tail -n 20 "$out")"
    t1=$(date +%s%N)
    [ -s "$TMP/data.gz" ] || die "$tag: pigz wrote no $TMP/data.gz"
    case $mode in
    weft) anchor=$(weft_archive "$tag") || exit 1
          check_archive "$tag" "$anchor" THREAD_CREATE 1
          check_archive "$tag" "$anchor" THREAD_ACQUIRE_LOCK 1
          weft_forget "$tag" ;;
    eztrace) traced_check eztrace "$tag" ENTER 1 ;;
    esac
    rm -rf "$TMP/ez-$tag"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }'
}

MODES=(untraced weft)
[ "$HAVE_EZ" = 1 ] && MODES+=(eztrace)
CALLS=(mutex pread)
declare -A T

start_weftd
echo "bench/interpose: $ROUNDS rounds; load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "each run: ns per operation in its median batch (mutex: a lock/unlock pair)"
for call in "${CALLS[@]}"; do
    for r in $(seq "$ROUNDS"); do
        line="$call round $r:"
        # rotate the order of the modes from round to round
        for i in "${!MODES[@]}"; do
            mode=${MODES[$(((i + r - 1) % ${#MODES[@]}))]}
            ns=$(run_call "$call" "$mode" "$call-$mode-$r") || exit 1
            T[$call,$mode]+="$ns "
            line+=" $mode $ns"
        done
        echo "$line (load $(cut -d' ' -f1 /proc/loadavg))"
    done
done

if [ "$HAVE_PIGZ" = 1 ]; then
    # MIB MiB: 1 MiB of random bytes and 1 MiB of text in turn
    seq 1 200000 | head -c 1048576 >"$TMP/text"
    for i in $(seq "$MIB"); do
        if [ $((i % 2)) = 1 ]; then
            head -c 1048576 /dev/urandom
        else
            cat "$TMP/text"
        fi
    done >"$TMP/data"
    for r in $(seq "$ROUNDS"); do
        line="pigz round $r:"
        for i in "${!MODES[@]}"; do
            mode=${MODES[$(((i + r - 1) % ${#MODES[@]}))]}
            s=$(run_pigz "$mode" "pigz-$mode-$r") || exit 1
            T[pigz,$mode]+="$s "
            line+=" $mode ${s}s"
        done
        echo "$line (load $(cut -d' ' -f1 /proc/loadavg))"
    done
fi

# row NAME FORMAT: the medians of row NAME, the added costs and the ratio.
row() {
    local u w e=- ea=- wa ratio=- noise
    # shellcheck disable=SC2086 # space-separated numbers
    u=$(median ${T[$1,untraced]})
    # shellcheck disable=SC2086
    noise=$(SPREAD_FORMAT=$2 spread ${T[$1,untraced]})
    # shellcheck disable=SC2086
    w=$(median ${T[$1,weft]})
    wa=$(awk -v a="$w" -v b="$u" "BEGIN { printf \"$2\", a - b }")
    if [ "$HAVE_EZ" = 1 ]; then
        # shellcheck disable=SC2086
        e=$(median ${T[$1,eztrace]})
        ea=$(awk -v a="$e" -v b="$u" "BEGIN { printf \"$2\", a - b }")
        ratio=$(awk -v w="$wa" -v e="$ea" -v n="$noise" \
            'BEGIN { if (e <= 0) { print "-"; exit }
                     printf "%.2f%s", w / e, (w > n && e > n) ? "" : "~" }')
    fi
    printf '%-8s %10s %10s %10s %11s %11s %7s %7s %9s\n' "$1" "$u" "$w" \
        "$e" "$wa" "$ea" "$ratio" "<=0.50" "$noise"
}

echo
echo "bench/interpose: ns per operation, median of $ROUNDS rounds"
printf '%-8s %10s %10s %10s %11s %11s %7s %7s %9s\n' call untraced weft \
    eztrace "weft added" "ez added" ratio target "+-noise"
row mutex "%.1f"
row pread "%.1f"
if [ "$HAVE_PIGZ" = 1 ]; then
    echo
    echo "bench/interpose: pigz -p 2 -k on $MIB MiB (half random), wall seconds, median of $ROUNDS rounds"
    printf '%-8s %10s %10s %10s %11s %11s %7s %7s %9s\n' run untraced weft \
        eztrace "weft added" "ez added" ratio target "+-noise"
    row pigz "%.3f"
fi
echo
echo "mutex = one pthread_mutex_lock + pthread_mutex_unlock pair (weft run -t pthread, eztrace -t pthread)"
echo "pread = one 4 KiB pread from the page cache (weft run -t io, eztrace -t posixio)"
echo "ratio = weft added / EZTrace added (target <= 0.50); +-noise = half the range of the untraced rounds;"
echo "  ratio~ = an added cost is within the noise: the ratio is not measured"
echo "bench/interpose: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

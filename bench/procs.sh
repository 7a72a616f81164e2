#!/bin/bash
# bench/procs.sh - what tracing adds to starting and ending a process:
# N runs of a short program, untraced, under weft run and under EZTrace,
# and where weft's time goes.
#
#   make -C BUILD_DIR && bash bench/procs.sh [-n RUNS] [-r ROUNDS] BUILD_DIR
#
#   -n RUNS     runs of each program per round (default 50)
#   -r ROUNDS   rounds (default 3); figures are medians over them
#
# Two programs: /bin/true (no call any recorder records: no session is
# opened) and `head -c1 FILE` (reads and writes: libweft-io opens a
# session, says Hello, ships its records and says goodbye). Each is run
# RUNS times one after the other, timed as a whole; and each as RUNS
# children of one shell (tree-true, tree-head), the shell run as a whole:
# what a child of a traced build pays, which does not go through the weft
# binary but inherits LD_PRELOAD. The ways:
#   untraced      the program alone
#   preload       LD_PRELOAD of libweft-pthread and libweft-io, weftd
#                 unreachable: loading the libraries, their constructors,
#                 and (head) one refused connection
#   run, no weftd weft run (default recorders), weftd unreachable: adds
#                 weft run's own start (its exec: weft links libc alone,
#                 the rest of the CLI is weft-cli; the ld.so --list that
#                 finds a program's MPI, skipped for one that needs only
#                 glibc's libraries, as /bin/true and head do)
#   run, tcp      weft run with weftd over TCP on loopback (auth = none:
#                 no MUNGE credential, see bench/lib.sh)
#   run, unix     weft run with weftd over its Unix socket (SO_PEERCRED)
#   eztrace       eztrace -t posixio (Debian's EZTrace 2.0), if installed
# The table gives ms per run (a tree's: per child; median over the
# rounds), ms added over untraced of the same program in the same rounds
# and the ratio to it; the CPU time per run of the traced processes
# (user and system time of everything the run waited for: the weft
# binary, the shell of a tree, the programs; bench/runs.py); and
# weftd's CPU time per run (its threads', from the first run until it
# has settled after the last: receiving, journaling, converting,
# cataloging; the programs share the 2 cores with it); the rows of weft
# that differ in one step say where the time goes.
# With TMPDIR on a tmpfs (the spool is under it) the weftd column leaves
# out what the file system costs. weft's traces are checked at the end: at least RUNS x
# ROUNDS x 2 complete traces (the runs of head), none partial or failed.
#
# Where a traced child's time goes (head with LD_PRELOAD, weftd on its
# Unix socket; 2-core VM shared with two builds, kvm-clock, so
# CLOCK_MONOTONIC; 2026-11-29), measured with
#  - LD_DEBUG=statistics (ld.so's own cycle counts, medians of 25):
#    /bin/true 0.34 ms in ld.so, with the two recorders and what they
#    need (libweft, protobuf-c, munge, nettle) 0.86 ms: loading costs
#    ~0.5 ms, ~0.08 ms of it per system library;
#  - strace -f (counts): 119 system calls untraced, 321 traced: ~100 are
#    ld.so's opening 6 more libraries (22 of them the glibc-hwcaps search
#    of LD_LIBRARY_PATH, which only this script and the tests set), 25
#    the fatal signal handlers, ~30 the session;
#  - clock_gettime marks in libweft (a scratch build; medians of 40
#    runs, Unix socket / TCP): config and clock 0.35 ms; connect, Hello
#    and HelloAck 6.8 / 7.2 ms (p25 2.9 / 4.5): weftd's loop hands a new
#    member to its journal open thread (a new trace's directory, the
#    journal and its header) and back, while it converts and catalogs the
#    traces before it; the starting ClockSync and the sender thread
#    0.4 / 0.6 ms (one round trip; 3.0 ms under strace with the 8 before
#    0cf175c); at exit the last records to their Acks 2.3 / 3.0 ms
#    (weftd's writer thread), the Goodbye to weftd's hang-up 0.4 / 0.2 ms
#    (its journal write), joining the sender 0.3 ms; the 8 closing
#    ClockSync round trips are gone;
#  - weftd's CPU time (/proc/PID/stat): 11 ms per traced head, each its
#    own trace (ingest, conversion, catalog), taken from the 2 cores the
#    traced programs run on;
#  - WEFT_CLOCK=tsc instead of CLOCK_MONOTONIC: +2.5 ms per process (the
#    TSC calibration at open, up to 2 ms, and 8 ClockSync round trips at
#    each end): what WEFT_CLOCK=auto costs where the kernel's clocksource
#    is tsc.
# On a busy host each wake-up of weftd's loop or of one of its threads
# costs a scheduling delay, so the round trips and hand-offs, not the
# CPU time, make most of the per-process cost.
set -u
BENCH=procs
RUNS=50
ROUNDS=3
while getopts n:r: o; do
    case $o in
        n) RUNS=$OPTARG ;;
        r) ROUNDS=$OPTARG ;;
        *) echo "usage: bench/procs.sh [-n RUNS] [-r ROUNDS] BUILD_DIR" >&2
           exit 2 ;;
    esac
done
shift $((OPTIND - 1))
B=$(cd "${1:?usage: bench/procs.sh [-n RUNS] [-r ROUNDS] BUILD_DIR}" && pwd)
RUN_TIMEOUT=600
. "$(dirname "$0")/lib.sh"

LIBS="$B/.libs"
[ -f "$LIBS/libweft-io.so" ] && [ -f "$LIBS/libweft-pthread.so" ] ||
    die "no recorders in $LIBS: build first"
start_weftd --set "socket=$TMP/weftd.sock"
TCP=$WEFT_SERVER
head -c 4096 /dev/urandom >"$TMP/in"

# weftd_settle: waits (at most 60 s) until weftd's CPU time stops growing
# (less than 1 ms in 300 ms: what the runs gave it is ingested, converted
# and cataloged); prints its CPU time then.
weftd_settle() {
    local a b
    a=$(weftd_cpu)
    for _ in $(seq 200); do
        sleep 0.3
        b=$(weftd_cpu)
        [ $((b - a)) -lt 1000000 ] && break
        a=$b
    done
    echo "$b"
}

# loop PROGRAM-KIND WAY: runs the program RUNS times the way WAY; prints
# the wall time in ms per run and weftd's CPU time in ms per run (until
# it has settled: ingest, conversion, catalog). tree-true and tree-head:
# one shell, run the way WAY, that runs the program RUNS times as its
# children.
loop() {
    local prog=(/bin/true) pre=() t0 t1 c0 c1 n=$RUNS
    case $1 in
        head) prog=(head -c1 "$TMP/in") ;;
        tree-true) prog=(sh -c 'for _ in $(seq "$1"); do /bin/true; done' \
                         sh "$RUNS") n=1 ;;
        tree-head) prog=(sh -c 'for _ in $(seq "$1"); do head -c1 "$2"; done' \
                         sh "$RUNS" "$TMP/in") n=1 ;;
    esac
    case $2 in
        untraced) pre=() ;;
        preload) pre=("LD_PRELOAD=$LIBS/libweft-pthread.so $LIBS/libweft-io.so"
                      "LD_LIBRARY_PATH=$LIBS" WEFT_SERVER=127.0.0.1:1) ;;
        run-none) pre=("WEFT_LIBDIR=$LIBS" "LD_LIBRARY_PATH=$LIBS"
                       WEFT_SERVER=127.0.0.1:1 "$B/weft" run --) ;;
        run-tcp) pre=("WEFT_LIBDIR=$LIBS" "LD_LIBRARY_PATH=$LIBS"
                      "WEFT_SERVER=$TCP" "$B/weft" run --) ;;
        run-unix) pre=("WEFT_LIBDIR=$LIBS" "LD_LIBRARY_PATH=$LIBS"
                       "WEFT_SERVER=unix:$TMP/weftd.sock" "$B/weft" run --) ;;
        eztrace) pre=(eztrace -t posixio -o "$TMP/ez") ;;
    esac
    c0=$(weftd_settle)
    read -r ms cpu < <(/usr/bin/python3 "$(dirname "$0")/runs.py" "$n" "$RUNS" \
        "$TMP/err.log" "${pre[@]}" "${prog[@]}") ||
        die "$2 $1 failed: $(tail -n 3 "$TMP/err.log")"
    [ -n "$cpu" ] || die "$2 $1 failed: $(tail -n 3 "$TMP/err.log")"
    c1=$(weftd_settle)
    awk -v m="$ms" -v p="$cpu" -v c="$c0" -v d="$c1" -v n="$RUNS" \
        'BEGIN { printf "%.3f %.3f %.3f\n", m, p, (d - c) / n / 1e6 }'
}

WAYS=(untraced preload run-none run-tcp run-unix)
command -v eztrace >/dev/null && WAYS+=(eztrace) ||
    echo "SKIP EZTrace: eztrace not found (Debian package eztrace; scripts/deps.sh --bench)"
PROGS=(true head tree-true tree-head)
# ways (of PROGS[i]): EZTrace only runs programs of their own
ways_of() {
    case $1 in
        tree-*) printf '%s\n' "${WAYS[@]}" | grep -vx eztrace ;;
        *) printf '%s\n' "${WAYS[@]}" ;;
    esac
}
declare -A fig pcpu dcpu
for r in $(seq "$ROUNDS"); do
    for prog in "${PROGS[@]}"; do
        mapfile -t ways < <(ways_of "$prog")
        # a rotating order: no way always runs first
        for k in $(seq 0 $((${#ways[@]} - 1))); do
            way=${ways[$(((k + r) % ${#ways[@]}))]}
            read -r ms pcpu wcpu < <(loop "$prog" "$way")
            [ -n "$wcpu" ] || exit 1
            fig[$prog.$way]="${fig[$prog.$way]:-} $ms"
            pcpu[$prog.$way]="${pcpu[$prog.$way]:-} $pcpu"
            dcpu[$prog.$way]="${dcpu[$prog.$way]:-} $wcpu"
        done
    done
done

# Figures against untraced of the same program in the same rounds: ms
# added per process, and the traced time over the untraced one. A tree's
# rows are per child (the shell's own cost spread over RUNS children).
printf '%-10s %-14s %9s %9s %6s %9s %9s\n' program way "ms/run" "added" ratio \
    "cpu ms" "weftd ms"
for prog in "${PROGS[@]}"; do
    # shellcheck disable=SC2086 # the figures are a list
    base=$(MEDIAN_FORMAT=%.3f median ${fig[$prog.untraced]})
    for way in $(ways_of "$prog"); do
        # shellcheck disable=SC2086
        m=$(MEDIAN_FORMAT=%.3f median ${fig[$prog.$way]})
        printf '%-10s %-14s %9s %9s %6s %9s %9s\n' "$prog" "$way" "$m" \
            "$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.3f", a - b }')" \
            "$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
            "$(# shellcheck disable=SC2086
               MEDIAN_FORMAT=%.3f median ${pcpu[$prog.$way]})" \
            "$(# shellcheck disable=SC2086
               MEDIAN_FORMAT=%.3f median ${dcpu[$prog.$way]})"
    done
done

# Every traced head run is a complete trace (none partial, none lost);
# the trees' children make traces of their own too (or join their run's).
want=$((RUNS * ROUNDS * 2))
for _ in $(seq 600); do
    read -r n bad < <("$B/weft" --catalog "$TMP/spool/catalog.db" list --json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(sum(1 for t in j if t["state"] == "complete"), sum(1 for t in j if t["state"] in ("partial", "failed")))' 2>/dev/null)
    [ "${n:-0}" -ge "$want" ] && break
    sleep 0.2
done
echo "weft: ${n:-0} traces complete (at least $want: the traced runs of head), ${bad:-0} partial or failed"
[ "${n:-0}" -ge "$want" ] && [ "${bad:-0}" = 0 ] ||
    die "traces missing or not complete: $(tail -n 3 "$TMP/weftd.log")"

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
# RUNS times one after the other, timed as a whole, in these ways:
#   untraced      the program alone
#   preload       LD_PRELOAD of libweft-pthread and libweft-io, weftd
#                 unreachable: loading the libraries, their constructors,
#                 and (head) one refused connection
#   run, no weftd weft run (default recorders), weftd unreachable: adds
#                 weft run's own start (its exec, the ld.so --list of the
#                 program that finds its MPI)
#   run, tcp      weft run with weftd over TCP on loopback (auth = none:
#                 no MUNGE credential, see bench/lib.sh)
#   run, unix     weft run with weftd over its Unix socket (SO_PEERCRED)
#   eztrace       eztrace -t posixio (Debian's EZTrace 2.0), if installed
# The table gives ms per run (median over the rounds) and ms added over
# untraced; the rows of weft that differ in one step say where the time
# goes. weft's traces are checked at the end: RUNS x ROUNDS complete
# traces of head, none partial.
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
start_weftd_unix() {
    "$B/weftd" --listen 127.0.0.1:0 --spool "$TMP/spool" \
        --address-file "$TMP/addr" --log-level warning --set auth=none \
        --set "socket=$TMP/weftd.sock" >"$TMP/weftd.log" 2>&1 &
    WEFTD_PID=$!
    for _ in $(seq 100); do
        [ -s "$TMP/addr" ] && [ -S "$TMP/weftd.sock" ] && break
        kill -0 "$WEFTD_PID" 2>/dev/null ||
            die "weftd exited at start: $(cat "$TMP/weftd.log")"
        sleep 0.1
    done
    [ -s "$TMP/addr" ] || die "weftd did not listen within 10 s"
    export WEFT_AUTH=none
    TCP=$(cat "$TMP/addr")
}
start_weftd_unix
head -c 4096 /dev/urandom >"$TMP/in"

# loop PROGRAM-KIND WAY: runs the program RUNS times the way WAY; prints
# the wall time in ms per run.
loop() {
    local prog=(/bin/true) pre=() t0 t1
    [ "$1" = head ] && prog=(head -c1 "$TMP/in")
    case $2 in
        untraced) pre=() ;;
        preload) pre=(env "LD_PRELOAD=$LIBS/libweft-pthread.so $LIBS/libweft-io.so"
                      "LD_LIBRARY_PATH=$LIBS" WEFT_SERVER=127.0.0.1:1) ;;
        run-none) pre=(env "WEFT_LIBDIR=$LIBS" "LD_LIBRARY_PATH=$LIBS"
                       WEFT_SERVER=127.0.0.1:1 "$B/weft" run --) ;;
        run-tcp) pre=(env "WEFT_LIBDIR=$LIBS" "LD_LIBRARY_PATH=$LIBS"
                      "WEFT_SERVER=$TCP" "$B/weft" run --) ;;
        run-unix) pre=(env "WEFT_LIBDIR=$LIBS" "LD_LIBRARY_PATH=$LIBS"
                       "WEFT_SERVER=unix:$TMP/weftd.sock" "$B/weft" run --) ;;
        eztrace) pre=(eztrace -t posixio -o "$TMP/ez") ;;
    esac
    t0=$(date +%s%N)
    for _ in $(seq "$RUNS"); do
        "${pre[@]}" "${prog[@]}" >/dev/null 2>>"$TMP/err.log" ||
            die "$2 $1 failed: $(tail -n 3 "$TMP/err.log")"
    done
    t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" -v n="$RUNS" 'BEGIN { printf "%.3f\n", (b - a) / n / 1e6 }'
}

WAYS=(untraced preload run-none run-tcp run-unix)
command -v eztrace >/dev/null && WAYS+=(eztrace) ||
    echo "SKIP EZTrace: eztrace not found (Debian package eztrace; scripts/deps.sh --bench)"
declare -A fig
for r in $(seq "$ROUNDS"); do
    for prog in true head; do
        # a rotating order: no way always runs first
        for k in $(seq 0 $((${#WAYS[@]} - 1))); do
            way=${WAYS[$(((k + r) % ${#WAYS[@]}))]}
            fig[$prog.$way]="${fig[$prog.$way]:-} $(loop "$prog" "$way")"
        done
    done
done

printf '%-10s %-14s %12s %12s\n' program way "ms/run" "added ms"
for prog in true head; do
    # shellcheck disable=SC2086 # the figures are a list
    base=$(MEDIAN_FORMAT=%.3f median ${fig[$prog.untraced]})
    for way in "${WAYS[@]}"; do
        # shellcheck disable=SC2086
        m=$(MEDIAN_FORMAT=%.3f median ${fig[$prog.$way]})
        printf '%-10s %-14s %12s %12s\n' "$prog" "$way" "$m" \
            "$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.3f", a - b }')"
    done
done

# Every traced head run is a complete trace (none partial, none lost).
want=$((RUNS * ROUNDS * 2))
for _ in $(seq 600); do
    n=$("$B/weft" --catalog "$TMP/spool/catalog.db" list --json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; j=json.load(sys.stdin); print(sum(1 for t in j if t["state"] == "complete"))' 2>/dev/null)
    [ "${n:-0}" -ge "$want" ] && break
    sleep 0.2
done
echo "weft: ${n:-0} of $want traced runs of head complete"
[ "${n:-0}" -ge "$want" ] || die "traces missing or not complete: $(tail -n 3 "$TMP/weftd.log")"

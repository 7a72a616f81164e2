#!/bin/bash
# bench/peers.sh - one program of a few million small calls, compiled
# with -finstrument-functions, untraced and traced by weft, LTTng-UST and
# uftrace in the same run: time, CPU (program and daemons), events and
# bytes on disk, with ratios to weft.
#
#   make -C BUILD_DIR && bash bench/peers.sh [OPTIONS] BUILD_DIR
#   (or make -C BUILD_DIR bench/peers, options in BENCH_PEERS_FLAGS)
#
#   -r ROUNDS   rounds (default 3); figures are medians over them
#   -n CALLS    calls of instrumented functions per run (default 4000000:
#               8 M Enter/Leave events)
#
# The program is BUILD_DIR/bench/peers_prog (bench/peers_prog.c: a tiny
# expression interpreter walking a tree of 2047 nodes with small
# functions: eval, apply, leaf, op_add...; it prints how many
# instrumented calls it made, C, so a complete trace has 2 C events).
# Four ways, in a rotating order every round:
#   untraced   bench/peers_prog alone: compiled with -finstrument-functions,
#              its hooks are glibc's __cyg_profile_func_enter/exit, which
#              do nothing (so the calls of the hooks are in the baseline)
#   weft       bench/peers_prog_weft: the same source linked with
#              libweft-instrument (README "Tracing a program without
#              changing it"), streaming to a weftd started here on a free
#              loopback port (temporary spool, bench/lib.sh); the run
#              counts once the catalog says complete with 2 C events
#   lttng      bench/peers_prog with
#              LD_PRELOAD=liblttng-ust-cyg-profile-fast.so, recording to
#              an lttng-sessiond started here (--daemonize --no-kernel,
#              LTTNG_HOME under the temporary directory, so it is not the
#              system's; when run as root, the session daemon, the lttng
#              commands and the traced program run as nobody, as root's
#              session daemon would be the system-wide one in
#              /var/run/lttng); one session per run, writing to the
#              temporary directory, channel of 8 sub-buffers of 1 MiB per
#              user (LTTng's default is 4 of 512 KiB) in discard mode,
#              events lttng_ust_cyg_profile_fast:*; start, run, stop,
#              destroy. Events are counted by babeltrace2's
#              sink.utils.counter (without babeltrace2 the count reads ?
#              and only a non-empty trace is checked); the events LTTng
#              says it discarded (lttng list, after stop) are printed
#              per run
#   uftrace    uftrace record --no-libcall --no-event --no-sched -d DIR
#              bench/peers_prog (uftrace finds the -finstrument-functions
#              hooks itself; no library calls, no scheduler or other
#              events: it records the functions weft and LTTng record);
#              events = 2 x the calls of functions in uftrace report
# Columns (medians over the rounds):
#   wall       seconds from the program's start to its exit (what a user
#              waits: the tracer's start and its flush at exit included;
#              the daemons' work after the exit is in their CPU instead)
#   prog CPU   user + system seconds of the traced process, all its
#              threads (libweft's sender thread, LTTng-UST's listener
#              threads); uftrace's process's are taken from uftrace info
#   daemon CPU weftd's user + system seconds from the run's start until
#              its trace is complete in the catalog (OTF2 conversion
#              included); lttng-sessiond's and lttng-consumerd's from
#              the run's start until the session is destroyed; uftrace
#              has no daemon: the uftrace process's own (its writer
#              threads), its CPU less the program's
#   total CPU  prog CPU + daemon CPU
#   events     events in the trace (weft: the catalog's count, checked
#              against C; LTTng: babeltrace2's; uftrace: its report's)
#   lost       2 C - events: events the program made that are not in
#              the trace
#   bytes      bytes on disk of the trace (du -sb: weft's archive
#              directory once complete, journals gone; LTTng's session
#              output; uftrace's data directory)
#   B/event    bytes / events
# and the ratios peer / weft of wall, total CPU and B/event. A run
# whose tracer recorded nothing, or weft's trace not complete with 2 C
# events, stops the benchmark with what went wrong; a peer that is
# missing is left out with a line starting with SKIP.
# Every command that waits is under timeout(1); weftd, the LTTng daemons
# (and the /dev/shm/lttng-ust-wait-* files that were not there before)
# and the temporary directory are removed however the script ends.
# Needs /usr/bin/time (Debian package time).
set -u

ROUNDS=3 CALLS=4000000
usage() {
    echo "usage: bash bench/peers.sh [-r ROUNDS] [-n CALLS] BUILD_DIR" >&2
    exit 2
}
while getopts 'r:n:h' opt; do
    case $opt in
    r) ROUNDS=$OPTARG ;;
    n) CALLS=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
B=$(cd "$1" && pwd) || exit 2
for v in "$ROUNDS" "$CALLS"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || usage
done
PROG="$B/bench/peers_prog"
# the program itself, not libtool's wrapper script (which would be timed)
WPROG="$B/bench/.libs/peers_prog_weft"
[ -x "$WPROG" ] || WPROG="$B/bench/peers_prog_weft"
for f in weftd weft bench/peers_prog bench/peers_prog_weft; do
    [ -x "$B/$f" ] ||
        { echo "bench/peers: no $f in $B: make first" >&2; exit 1; }
done
[ -x /usr/bin/time ] ||
    { echo "bench/peers: no /usr/bin/time (Debian package time)" >&2; exit 1; }

MODES=(untraced weft)
CYG=$(ldconfig -p | awk '$1 == "liblttng-ust-cyg-profile-fast.so" { print $NF; exit }')
if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null; then
    echo "SKIP LTTng: lttng/lttng-sessiond not found (Debian package lttng-tools)"
elif [ -z "$CYG" ]; then
    echo "SKIP LTTng: no liblttng-ust-cyg-profile-fast.so (Debian package liblttng-ust-dev)"
else
    MODES+=(lttng)
    command -v babeltrace2 >/dev/null ||
        echo "SKIP LTTng event count: babeltrace2 not found (Debian package babeltrace2): events read ?"
fi
if command -v uftrace >/dev/null; then
    MODES+=(uftrace)
else
    echo "SKIP uftrace: uftrace not found (Debian package uftrace)"
fi

RUN_TIMEOUT=${WEFT_BENCH_TIMEOUT:-300}
BENCH=bench/peers
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

# ---- LTTng: a session daemon of our own ----
LT="$TMP/lttng"   # its LTTNG_HOME and the sessions' output
LT_AS=()          # how its commands and the traced program are run
SHM_BEFORE=" $(cd /dev/shm 2>/dev/null && echo lttng-ust-wait-*) "

# lt ARGS...: lttng ARGS for our session daemon.
lt() {
    timeout 60 "${LT_AS[@]}" env LTTNG_HOME="$LT" HOME="$LT" lttng "$@"
}

# lttng_pids: the session daemon and its descendants (consumer daemons,
# run-as helpers).
lttng_pids() {
    local pid
    pid=$(cat "$LT/.lttng/lttng-sessiond.pid" 2>/dev/null) || return 0
    [[ $pid =~ ^[0-9]+$ ]] || return 0
    descendants "$pid"
}
descendants() {
    local p
    for p in "$@"; do
        echo "$p"
        # shellcheck disable=SC2046 # one pid a word
        descendants $(pgrep -P "$p")
    done
}

start_lttng() {
    mkdir -p "$LT"
    if [ "$(id -u)" = 0 ]; then
        LT_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        chmod 711 "$TMP"
        chown 65534:65534 "$LT"
    fi
    timeout 60 "${LT_AS[@]}" env LTTNG_HOME="$LT" HOME="$LT" \
        lttng-sessiond --daemonize --no-kernel >"$TMP/sessiond.log" 2>&1 ||
        die "lttng-sessiond did not start: $(tail -n 5 "$TMP/sessiond.log")"
    [ -n "$(lttng_pids)" ] || die "lttng-sessiond started but wrote no pid file in $LT/.lttng"
}

bench_cleanup_more() {
    local pids f
    pids=$(lttng_pids)
    if [ -n "$pids" ]; then
        lt destroy --all >/dev/null 2>&1
        # shellcheck disable=SC2086 # one pid a word
        kill -TERM $pids 2>/dev/null
        for _ in $(seq 50); do
            # shellcheck disable=SC2086
            kill -0 $pids 2>/dev/null || break
            sleep 0.1
        done
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
    fi
    for f in /dev/shm/lttng-ust-wait-*; do
        [ -e "$f" ] && [[ $SHM_BEFORE != *" ${f#/dev/shm/} "* ]] && rm -f "$f"
    done
}

# ---- one run ----

# timed FILE CMD...: CMD under /usr/bin/time and timeout; FILE gets
# "WALL USER SYS" (seconds; the CPU of CMD and what it waited for; the
# wall from date(1), /usr/bin/time's has 10 ms steps).
timed() {
    local f=$1 t0 t1 rc=0
    shift
    t0=$(date +%s%N)
    /usr/bin/time -f '%U %S' -o "$f.cpu" timeout "$RUN_TIMEOUT" "$@" || rc=$?
    t1=$(date +%s%N)
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $(cat "$f.cpu")" >"$f"
    return $rc
}

# expected TAG: 2 C from the program's output $TMP/TAG.out.
expected() {
    local c
    c=$(awk '$1 == "calls" { print $2 }' "$TMP/$1.out")
    [ -n "$c" ] || die "$1: the program printed no calls: $(tail -n 20 "$TMP/$1.out")"
    echo $((2 * c))
}

# run_one MODE TAG: one run; prints "WALL PROGCPU DAEMONCPU EVENTS LOST
# BYTES EXTRA" (- where it does not apply), or dies saying what went
# wrong.
run_one() {
    local mode=$1 tag=$2 out="$TMP/$2.out" tf="$TMP/$2.time"
    local c0 c1 want events=- bytes=- dcpu=- pcpu wall u s dir extra=-
    case $mode in
    untraced)
        timed "$tf" "$PROG" -n "$CALLS" >"$out" 2>&1 ||
            die "$tag: the program failed (status $?): $(tail -n 20 "$out")"
        ;;
    weft)
        c0=$(cpu_seconds "$WEFTD_PID")
        timed "$tf" env LD_LIBRARY_PATH="$B/.libs" WEFT_TRACE="$tag" \
            WEFT_REQUIRED=1 "$WPROG" -n "$CALLS" >"$out" 2>&1 ||
            die "$tag: the program failed (status $?): $(tail -n 20 "$out")"
        weft_archive "$tag" >/dev/null || exit 1
        c1=$(cpu_seconds "$WEFTD_PID")
        dcpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }')
        events=$(/usr/bin/python3 -c 'import json,sys
j = json.load(open(sys.argv[1])); print(j["events"], j["dropped"], j["path"])' \
                     "$TMP/show.json") || die "$tag: unreadable weft show output"
        read -r events extra dir <<<"$events"
        extra="dropped=$extra"
        bytes=$(du -sb "$dir" | cut -f1)
        weft_forget "$tag"
        ;;
    lttng)
        dir="$LT/trace-$tag"
        { lt create "$tag" --output="$dir" &&
          lt enable-channel -u --subbuf-size=1M --num-subbuf=8 peers &&
          lt enable-event -u -c peers 'lttng_ust_cyg_profile_fast:*' &&
          lt start; } >"$TMP/lttng-$tag.log" 2>&1 ||
            die "$tag: setting up the LTTng session failed: $(tail -n 5 "$TMP/lttng-$tag.log")"
        # shellcheck disable=SC2046 # one pid a word
        c0=$(cpu_seconds $(lttng_pids))
        timed "$tf" "${LT_AS[@]}" env LTTNG_HOME="$LT" HOME="$LT" \
            LD_PRELOAD="$CYG" "$PROG" -n "$CALLS" >"$out" 2>&1 ||
            die "$tag: the program failed (status $?): $(tail -n 20 "$out")"
        lt stop "$tag" >>"$TMP/lttng-$tag.log" 2>&1 ||
            die "$tag: lttng stop failed: $(tail -n 5 "$TMP/lttng-$tag.log")"
        extra=$(lt list "$tag" 2>&1 |
                    awk '/Discarded events:/ { n += $3; f = 1 }
                         END { print f ? "discarded=" n : "discarded=?" }')
        lt destroy "$tag" >>"$TMP/lttng-$tag.log" 2>&1 ||
            die "$tag: lttng destroy failed: $(tail -n 5 "$TMP/lttng-$tag.log")"
        # shellcheck disable=SC2046
        c1=$(cpu_seconds $(lttng_pids))
        dcpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }')
        [ -d "$dir" ] || die "$tag: LTTng wrote no trace in $dir"
        bytes=$(du -sb "$dir" | cut -f1)
        if command -v babeltrace2 >/dev/null; then
            events=$(timeout "$RUN_TIMEOUT" babeltrace2 "$dir" \
                         -c sink.utils.counter 2>"$TMP/bt-$tag.err" |
                         awk '$2 == "Event" && $3 == "messages" { n = $1 } END { print n + 0 }')
            [ "$events" -gt 0 ] ||
                die "$tag: babeltrace2 counts no events in LTTng's trace: $(tail -n 5 "$TMP/bt-$tag.err")"
        else
            events="?"
            find "$dir" -type f -size +4k | grep -q . ||
                die "$tag: LTTng's trace $dir holds no data"
        fi
        rm -rf "$dir"
        ;;
    uftrace)
        dir="$TMP/uftrace-$tag"
        timed "$tf" uftrace record --no-libcall --no-event --no-sched -d "$dir" \
            "$PROG" -n "$CALLS" >"$out" 2>&1 ||
            die "$tag: uftrace record failed (status $?): $(tail -n 20 "$out")"
        # the program's CPU, as uftrace saw it: "cpu time : SYS / USER sec"
        pcpu=$(timeout "$RUN_TIMEOUT" uftrace info -d "$dir" 2>/dev/null |
                   awk '/# cpu time/ { print $5 + $7 }')
        [ -n "$pcpu" ] || die "$tag: no cpu time in uftrace info -d $dir"
        # report lines: TOTAL UNIT SELF UNIT CALLS FUNCTION (events such
        # as linux:schedule are not functions)
        events=$(timeout "$RUN_TIMEOUT" uftrace report -d "$dir" --no-pager \
                     2>"$TMP/ufr-$tag.err" |
                     awk '/====/ { t = 1; next }
                          t && NF >= 6 && $5 ~ /^[0-9]+$/ && $6 !~ /:/ { n += $5 }
                          END { print 2 * n }')
        [ "$events" -gt 0 ] ||
            die "$tag: uftrace report shows no calls: $(tail -n 5 "$TMP/ufr-$tag.err")"
        bytes=$(du -sb "$dir" | cut -f1)
        rm -rf "$dir"
        ;;
    esac
    want=$(expected "$tag") || exit 1
    if [ "$mode" = weft ] && [ "$events" != "$want" ]; then
        die "$tag: weft's trace has $events events, the program made $want"
    fi
    read -r wall u s <"$tf" || die "$tag: no times in $tf"
    if [ "$mode" = uftrace ]; then
        dcpu=$(awk -v u="$u" -v s="$s" -v p="$pcpu" 'BEGIN { printf "%.3f", u + s - p }')
    else
        pcpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.3f", u + s }')
    fi
    local lost=-
    [ "$events" != - ] && [ "$events" != "?" ] && lost=$((want - events))
    echo "$wall $pcpu $dcpu $events $lost $bytes $extra"
}

[[ " ${MODES[*]} " = *" lttng "* ]] && start_lttng
start_weftd
echo "bench/peers: $ROUNDS rounds of $CALLS calls; load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
echo "each run: wall s / program CPU s / daemon CPU s / events / lost / bytes"
declare -A T
FIGS=(wall pcpu dcpu events lost bytes)
for r in $(seq "$ROUNDS"); do
    echo "round $r (load $(cut -d' ' -f1 /proc/loadavg)):"
    # rotate the order of the modes from round to round
    for i in "${!MODES[@]}"; do
        mode=${MODES[$(((i + r - 1) % ${#MODES[@]}))]}
        res=$(run_one "$mode" "$mode-$r") || exit 1
        read -r -a v <<<"$res"
        for j in "${!FIGS[@]}"; do
            T[$mode,${FIGS[$j]}]+="${v[$j]} "
        done
        printf '  %-8s %s\n' "$mode" "$(echo "$res" | tr ' ' /)"
    done
done

# med MODE FIG: the median of figure FIG of MODE over the rounds, or -
# (or ?) when it does not apply.
med() {
    local vals=${T[$1,$2]}
    # shellcheck disable=SC2086 # space-separated numbers
    case $vals in
    "- "*) echo - ;;
    "? "*) echo "?" ;;
    *) case $2 in
       events|lost|bytes) MEDIAN_FORMAT=%.0f median $vals ;;
       *) MEDIAN_FORMAT=%.3f median $vals ;;
       esac ;;
    esac
}
declare -A M
for mode in "${MODES[@]}"; do
    for f in "${FIGS[@]}"; do
        M[$mode,$f]=$(med "$mode" "$f")
    done
    M[$mode,total]=$(awk -v p="${M[$mode,pcpu]}" -v d="${M[$mode,dcpu]}" \
                         'BEGIN { printf "%.3f", p + (d == "-" ? 0 : d) }')
    M[$mode,bpe]=$(awk -v b="${M[$mode,bytes]}" -v e="${M[$mode,events]}" \
                       'BEGIN { if (b == "-" || e == "-" || e == "?" || e == 0) print "-"
                                else printf "%.2f", b / e }')
done

# ratio MODE FIG: MODE's FIG / weft's.
ratio() {
    awk -v a="${M[$1,$2]}" -v b="${M[weft,$2]}" \
        'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'
}

echo
echo "bench/peers: $CALLS calls of small -finstrument-functions functions, median of $ROUNDS rounds"
printf '%-9s %7s %9s %10s %9s %10s %9s %11s %8s\n' tracer wall "prog CPU" \
    "daemon CPU" "total CPU" events lost bytes B/event
for mode in "${MODES[@]}"; do
    printf '%-9s %7s %9s %10s %9s %10s %9s %11s %8s\n' "$mode" \
        "${M[$mode,wall]}" "${M[$mode,pcpu]}" "${M[$mode,dcpu]}" \
        "${M[$mode,total]}" "${M[$mode,events]}" "${M[$mode,lost]}" \
        "${M[$mode,bytes]}" "${M[$mode,bpe]}"
done
echo
echo "ratios to weft (peer / weft; above 1: weft is faster / smaller)"
printf '%-9s %7s %10s %8s\n' tracer wall "total CPU" B/event
for mode in "${MODES[@]}"; do
    case $mode in untraced|weft) continue ;; esac
    printf '%-9s %7s %10s %8s\n' "$mode" "$(ratio "$mode" wall)" \
        "$(ratio "$mode" total)" "$(ratio "$mode" bpe)"
done
echo
echo "wall, CPU in seconds; prog CPU = the traced process (all threads); daemon CPU = weftd until"
echo "  the trace is complete / lttng-sessiond + consumerd until destroy / uftrace's own process;"
echo "  lost = the program's events missing from the trace; bytes = the trace on disk"
echo "bench/peers: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# bench/lib.sh - what the benchmark drivers (bench/mpi.sh,
# shellcheck shell=bash
# bench/interpose.sh) share: a temporary directory and a real weftd on a
# free loopback port with its spool there, both removed however the
# script ends; medians and spreads of round figures; waiting for a weft
# trace to be complete in the catalog; counting events of an archive;
# the CPU time of running processes. A driver sets BENCH (its name, for
# messages), B (the build directory) and RUN_TIMEOUT, then sources this
# file; a driver that starts more daemons defines bench_cleanup_more,
# which runs first when the script ends.
# Benchmarks are not tests: unlike tests/lib.sh, weftd logs warnings only
# (debug logging would be part of what is timed).

TMP=$(mktemp -d "${TMPDIR:-/tmp}/weft-${BENCH//\//-}.XXXXXX") || exit 1
export WEFT_CONFIG="$TMP/none.conf"  # no system configuration
WEFTD_PID=
bench_cleanup() {
    trap '' INT TERM  # a second ^C must not cut the cleanup short
    declare -F bench_cleanup_more >/dev/null && bench_cleanup_more
    if [ -n "$WEFTD_PID" ]; then
        kill -TERM "$WEFTD_PID" 2>/dev/null
        for _ in $(seq 50); do
            kill -0 "$WEFTD_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$WEFTD_PID" 2>/dev/null
        wait "$WEFTD_PID" 2>/dev/null
    fi
    # (BENCH_KEEP=1: kept, for a look at the weftds' logs)
    [ -n "${BENCH_KEEP:-}" ] && echo "$BENCH: kept $TMP" >&2 || rm -rf "$TMP"
}
trap bench_cleanup EXIT
trap 'exit 1' INT TERM

die() {
    echo "$BENCH: $*" >&2
    exit 1
}

# median NUMBERS...: the median of the numbers; the mean of the middle
# two of an even count is printed with the printf format $MEDIAN_FORMAT
# (default %.1f).
median() {
    printf '%s\n' "$@" | sort -g | awk -v f="${MEDIAN_FORMAT:-%.1f}" '{ v[NR] = $1 }
        END { if (NR % 2) print v[(NR + 1) / 2];
              else printf f "\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# spread NUMBERS...: half the range of the numbers (how far the
# untraced rounds are apart: an added cost below it is not measured),
# printed with the printf format $SPREAD_FORMAT (default %.1f).
spread() {
    printf '%s\n' "$@" | sort -g |
        awk -v f="${SPREAD_FORMAT:-%.1f}" \
            'NR == 1 { lo = $1 } { hi = $1 } END { printf f, (hi - lo) / 2 }'
}

# weftd_cpu: the CPU time of the weftd start_weftd started, ns so far,
# all its threads (those that ended too): the clock of its process
# (clock_getcpuclockid's encoding of a pid, CPUCLOCK_SCHED).
weftd_cpu() {
    /usr/bin/python3 -c 'import sys, time
print(time.clock_gettime_ns(((~int(sys.argv[1])) << 3) | 2))' "$WEFTD_PID"
}

# start_weftd [WEFTD-OPTION...]: weftd on a free loopback port, spool in
# $TMP/spool, with the options given too; exports WEFT_SERVER. auth =
# none (and WEFT_AUTH=none): the benchmarks measure recording and ingest,
# not MUNGE's one round trip per process. With --set socket=PATH it also
# waits for that Unix socket.
start_weftd() {
    local sock="" o
    for o in "$@"; do
        case $o in socket=*) sock=${o#socket=} ;; esac
    done
    export WEFT_AUTH=none
    "$B/weftd" --listen 127.0.0.1:0 --spool "$TMP/spool" \
        --address-file "$TMP/addr" --log-level warning --set auth=none \
        "$@" >"$TMP/weftd.log" 2>&1 &
    WEFTD_PID=$!
    for _ in $(seq 100); do
        [ -s "$TMP/addr" ] && { [ -z "$sock" ] || [ -S "$sock" ]; } && break
        kill -0 "$WEFTD_PID" 2>/dev/null ||
            die "weftd exited at start: $(cat "$TMP/weftd.log")"
        sleep 0.1
    done
    [ -s "$TMP/addr" ] || die "weftd did not listen within 10 s"
    WEFT_SERVER=$(cat "$TMP/addr")
    export WEFT_SERVER
}

# weft_archive TAG: waits (2 min at most) until trace TAG is complete in
# the catalog and prints its archive's anchor file, or dies saying what
# state it is in. weft show's JSON of the trace is left in $TMP/show.json.
weft_archive() {
    local state="" show
    for _ in $(seq 1200); do
        show=$("$B/weft" --catalog "$TMP/spool/catalog.db" show "$1" \
                   --json 2>/dev/null)
        state=$(echo "$show" | /usr/bin/python3 -c \
                    'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
        case $state in complete|partial|failed) break ;; esac
        sleep 0.1
    done
    [ "$state" = complete ] ||
        die "$1: weft's trace is '${state:-not in the catalog}', not complete: $(tail -n 5 "$TMP/weftd.log")"
    echo "$show" >"$TMP/show.json"
    echo "$show" | /usr/bin/python3 -c \
        'import json,sys; print(json.load(sys.stdin)["archive"])'
}

# weft_forget TAG: removes trace TAG from the catalog and the spool.
weft_forget() {
    "$B/weft" --catalog "$TMP/spool/catalog.db" rm "$1" \
        --spool "$TMP/spool" --force >/dev/null 2>&1
}

# count_events ANCHOR KIND [LOCATION]: events KIND (otf2-print's name) of
# the archive, of location LOCATION only when given.
count_events() {
    timeout "$RUN_TIMEOUT" otf2-print ${3:+-L "$3"} "$1" 2>/dev/null |
        awk -v k="$2" -v l="${3:-}" \
            '$1 == k && (l == "" || $2 == l) { n++ } END { print n + 0 }'
}

# cpu_seconds PID...: user + system CPU seconds the running processes PID
# (all their threads) have used so far; a PID that is gone counts 0.
cpu_seconds() {
    local p ticks=0 t
    for p in "$@"; do
        # the fields after the command name: utime and stime are 12 and 13
        t=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null |
                awk '{ print $12 + $13 }') || t=0
        ticks=$((ticks + ${t:-0}))
    done
    awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f\n", t / hz }'
}

#!/bin/bash
# bench/report.sh - how long `weft report` and `weft export` take for a
# big trace, next to otf2-print reading the same archive in the same run.
#
#   make -C BUILD_DIR && bash bench/report.sh [OPTIONS] BUILD_DIR
#   (or make -C BUILD_DIR bench/report, options in BENCH_REPORT_FLAGS)
#
#   -r ROUNDS   rounds (default 3); figures are medians over them
#   -n ROUNDS_PER_THREAD  weft-demo's rounds per thread (default 600000:
#               4 processes x 2 threads x 7 events a round = 33.6 M
#               events, the size issue #17 asks a report in under 2 s for)
#
# One trace is recorded by weft-demo (-p 4 -t 2) into a weftd started
# here (bench/lib.sh: free loopback port, temporary spool). Then, each
# round:
#   report     weft report TRACE -o FILE: made from the catalog alone
#              (what weftd stored while converting), never the events;
#              its time and the page's size
#   export     weft export --format chrome-json to a pipe (counted, not
#              kept): every event; its time, bytes and bytes per event
#   export.gz  the same to FILE.json.gz (zlib)
#   window     the same cut to a tenth of the trace's duration of rank 0
#              (--from, --to, --ranks): what a user looking at one phase
#              exports
#   otf2-print otf2-print ARCHIVE to a pipe: libotf2's own reader going
#              through every event and printing it, the peer the export
#              times are divided by (both read the whole archive through
#              libotf2; the export also sorts, matches and writes JSON)
set -u
BENCH=bench/report
ROUNDS=3
ITER=600000
while getopts r:n: opt; do
    case $opt in
    r) ROUNDS=$OPTARG ;;
    n) ITER=$OPTARG ;;
    *) echo "usage: bash bench/report.sh [-r ROUNDS] [-n ROUNDS_PER_THREAD] BUILD_DIR" >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
B=$(cd "${1:?usage: bash bench/report.sh [-r ROUNDS] [-n ROUNDS_PER_THREAD] BUILD_DIR}" && pwd)
RUN_TIMEOUT=600
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$B/weft-demo" ] && [ -x "$B/weft" ] || die "build $B first (make -C $B)"
command -v otf2-print >/dev/null || die "no otf2-print (Debian package otf2-tools)"

# ms COMMAND...: runs COMMAND (its output to $TMP/out), prints the
# milliseconds it took; dies if it fails.
ms() {
    local t0 t1
    t0=$(date +%s%N)
    timeout "$RUN_TIMEOUT" "$@" >"$TMP/out" 2>"$TMP/err" ||
        die "$* failed: $(tail -n 3 "$TMP/err")"
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
}

start_weftd
export WEFT_CATALOG="$TMP/spool/catalog.db"
WEFT_TRACE=big timeout "$RUN_TIMEOUT" "$B/weft-demo" -p 4 -t 2 -n "$ITER" \
    >"$TMP/demo.out" 2>&1 || die "weft-demo failed: $(tail -n 3 "$TMP/demo.out")"
ARCHIVE=$(weft_archive big) || exit 1
EVENTS=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$TMP/show.json")
DUR=$(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print((j["time_last"]-j["time_first"])/j["timer_resolution"])' "$TMP/show.json")
FROM=$(awk -v d="$DUR" 'BEGIN { printf "%.6f", d * 0.45 }')
TO=$(awk -v d="$DUR" 'BEGIN { printf "%.6f", d * 0.55 }')
echo "trace: $EVENTS events, $(awk -v d="$DUR" 'BEGIN { printf "%.2f", d }') s, archive $(du -sh "$(dirname "$ARCHIVE")" | cut -f1)"

export_to() {  # export_to FILE [FILTERS...]: bytes written to FILE or a pipe
    local f=$1
    shift
    if [ "$f" = - ]; then
        "$B/weft" export big --format chrome-json -o - "$@" | wc -c
    else
        "$B/weft" export big --format chrome-json -o "$f" "$@" && stat -c %s "$f"
    fi
}

rep=() exp=() gz=() win=() prt=()
for r in $(seq "$ROUNDS"); do
    rep+=("$(ms "$B/weft" report big -o "$TMP/report.html")")
    rep_bytes=$(stat -c %s "$TMP/report.html")
    exp+=("$(ms bash -c "$(declare -f export_to); B='$B' export_to -")")
    exp_bytes=$(cat "$TMP/out")
    gz+=("$(ms bash -c "$(declare -f export_to); B='$B' export_to '$TMP/big.json.gz'")")
    gz_bytes=$(cat "$TMP/out")
    rm -f "$TMP/big.json.gz"
    win+=("$(ms bash -c "$(declare -f export_to); B='$B' export_to - --from $FROM --to $TO --ranks 0")")
    win_bytes=$(cat "$TMP/out")
    prt+=("$(ms bash -c "otf2-print '$ARCHIVE' | wc -c")")
    prt_bytes=$(cat "$TMP/out")
    echo "round $r: report ${rep[-1]} ms, export ${exp[-1]} ms, export.gz ${gz[-1]} ms, window ${win[-1]} ms, otf2-print ${prt[-1]} ms"
done

MEDIAN_FORMAT=%.0f
m_rep=$(median "${rep[@]}") m_exp=$(median "${exp[@]}") m_gz=$(median "${gz[@]}")
m_win=$(median "${win[@]}") m_prt=$(median "${prt[@]}")
printf '\n%-11s %9s %14s %11s %s\n' "" "ms" "bytes" "B/event" "ratio to otf2-print"
printf '%-11s %9s %14s %11s %s\n' report "$m_rep" "$rep_bytes" - "- (target: under 2000 ms, a few MB)"
for w in export export.gz window otf2-print; do
    case $w in
    export) t=$m_exp b=$exp_bytes ;;
    export.gz) t=$m_gz b=$gz_bytes ;;
    window) t=$m_win b=$win_bytes ;;
    otf2-print) t=$m_prt b=$prt_bytes ;;
    esac
    printf '%-11s %9s %14s %11s %s\n' "$w" "$t" "$b" \
        "$([ "$w" = window ] && echo - ||
           awk -v b="$b" -v e="$EVENTS" 'BEGIN { printf "%.1f", b / e }')" \
        "$(awk -v t="$t" -v p="$m_prt" 'BEGIN { printf "%.2f", t / p }')"
done

#!/bin/bash
# bench/view.sh - how fast `weft view` answers on a big trace (issue #36:
# first picture under 1 s, every zoom or pan step under 200 ms, the
# server under 256 MiB).
#
#   make -C BUILD_DIR && bash bench/view.sh [OPTIONS] BUILD_DIR
#   (or make -C BUILD_DIR bench/view, options in BENCH_VIEW_FLAGS)
#
#   -r ROUNDS   rounds (default 3); figures are medians over them
#   -n ROUNDS_PER_THREAD  weft-demo's rounds per thread (default 1800000:
#               4 processes x 2 threads x 7 events a round = 100.8 M
#               events, the size issue #36 names; the index takes 1.6 GB
#               in the cache of the benchmark's own)
#
# One trace is recorded by weft-demo (-p 4 -t 2) into a weftd started
# here (bench/lib.sh). Then:
#   index      the first `weft view` of the trace reads its events once
#              into the index file (in a cache of the benchmark's own):
#              the time until it prints its address, the file's bytes
#              per event
# and each round:
#   start      `weft view` again, the index mapped: time to its address
#   first      api/traces and the whole trace's window at 1600 columns,
#              as the page asks them first (time of both, answer bytes)
#   steps      40 zoom steps, each to half of the window around a random
#              time, down to a few hundred ticks, then 40 pans by half a
#              window: the slowest and the median answer
#   summary    api/summary of the whole trace, and of each step's window:
#              the whole trace's time, the slowest and the median step
#   find       api/find of a region's name (count, then the next and the
#              previous visit) likewise
#   memory     the server's resident memory: its peak (VmHWM), after the
#              steps (VmRSS), and what is not the mapped index (RssAnon)
set -u
BENCH=bench/view
ROUNDS=3
ITER=1800000
while getopts r:n: opt; do
    case $opt in
    r) ROUNDS=$OPTARG ;;
    n) ITER=$OPTARG ;;
    *) echo "usage: bash bench/view.sh [-r ROUNDS] [-n ROUNDS_PER_THREAD] BUILD_DIR" >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
B=$(cd "${1:?usage: bash bench/view.sh [-r ROUNDS] [-n ROUNDS_PER_THREAD] BUILD_DIR}" && pwd)
RUN_TIMEOUT=900
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$B/weft-demo" ] && [ -x "$B/weft" ] || die "build $B first (make -C $B)"

start_weftd
export WEFT_CATALOG="$TMP/spool/catalog.db"
export XDG_CACHE_HOME="$TMP/cache"
WEFT_TRACE=big timeout "$RUN_TIMEOUT" "$B/weft-demo" -p 4 -t 2 -n "$ITER" \
    >"$TMP/demo.out" 2>&1 || die "weft-demo failed: $(tail -n 3 "$TMP/demo.out")"
weft_archive big >/dev/null || exit 1
EVENTS=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$TMP/show.json")

VIEW_PID=
stop_view() {
    [ -n "$VIEW_PID" ] && kill "$VIEW_PID" 2>/dev/null && wait "$VIEW_PID" 2>/dev/null
    VIEW_PID=
}
bench_cleanup_more() { stop_view; }

# start_view: starts weft view of the trace ($VIEW_PID), waits for its
# address ($URL); $MS: the milliseconds that took.
start_view() {
    local t0 t1
    rm -f "$TMP/view.out"
    t0=$(date +%s%N)
    # not under timeout: $VIEW_PID is the server itself (stop_view ends it)
    "$B/weft" view big >"$TMP/view.out" 2>"$TMP/view.err" &
    VIEW_PID=$!
    while ! grep -q '^weft view: http' "$TMP/view.out" 2>/dev/null; do
        kill -0 "$VIEW_PID" 2>/dev/null || die "weft view failed: $(tail -n 3 "$TMP/view.err")"
        sleep 0.01
    done
    t1=$(date +%s%N)
    URL=$(sed -n 's/^weft view: //p' "$TMP/view.out")
    MS=$(((t1 - t0) / 1000000))
}

start_view
index_ms=$MS
IDX=$(ls "$XDG_CACHE_HOME"/weft/view/*.idx) || die "no index file made"
idx_bytes=$(stat -c %s "$IDX")
stop_view
echo "trace: $EVENTS events; index made in $index_ms ms, $idx_bytes bytes ($(awk -v b="$idx_bytes" -v e="$EVENTS" 'BEGIN { printf "%.1f", b / e }') B/event)"

starts=() firsts=() maxes=() meds=() rss=() anon=() peak=()
sums_all=() sums_max=() sums_med=() finds_all=() finds_max=() finds_med=()
for r in $(seq "$ROUNDS"); do
    start_view
    starts+=("$MS")
    /usr/bin/python3 - "$URL" "$r" >"$TMP/steps.out" <<'PY' || die "the steps failed: $(tail -n 3 "$TMP/steps.out")"
import json, random, statistics, sys, time, urllib.parse, urllib.request
url, seed = sys.argv[1], int(sys.argv[2])
def get(path):
    t = time.perf_counter()
    with urllib.request.urlopen(url + path, timeout=60) as r:
        body = r.read()
    return (time.perf_counter() - t) * 1000, body
t_tr, body = get("api/traces")
tr = json.loads(body)["traces"][0]
t_win, win = get("api/window?trace=0&t0=0&t1=%d&px=1600" % (tr["t1"] + 1))
# a text that finds one of the regions (not all): part of the last name
q = urllib.parse.quote(tr["regions"][-1]["name"][:6] or "x")
def find(t0, t1):
    c = get("api/find?trace=0&q=%s&t0=%d&t1=%d" % (q, t0, t1))[0]
    c += get("api/find?trace=0&q=%s&after=%d" % (q, (t0 + t1) // 2))[0]
    return c + get("api/find?trace=0&q=%s&before=%d" % (q, (t0 + t1) // 2))[0]
t_sum = get("api/summary?trace=0")[0]
t_find = find(0, tr["t1"] + 1)
steps, sums, finds = [], [], []
rng = random.Random(seed)
t0, t1 = 0, tr["t1"] + 1
for _ in range(40):                      # zoom in
    w = (t1 - t0) // 2
    if w < 200:
        break
    c = rng.randrange(t0 + w // 2, t1 - w // 2)
    t0, t1 = c - w // 2, c + w // 2
    steps.append(get("api/window?trace=0&t0=%d&t1=%d&px=1600" % (t0, t1))[0])
    sums.append(get("api/summary?trace=0&t0=%d&t1=%d" % (t0, t1))[0])
    finds.append(find(t0, t1))
for _ in range(40):                      # pan
    w = t1 - t0
    d = rng.choice((-1, 1)) * (w // 2)
    if t0 + d < 0 or t1 + d > tr["t1"]:
        d = -d
    t0, t1 = t0 + d, t1 + d
    steps.append(get("api/window?trace=0&t0=%d&t1=%d&px=1600" % (t0, t1))[0])
    sums.append(get("api/summary?trace=0&t0=%d&t1=%d" % (t0, t1))[0])
    finds.append(find(t0, t1))
print("%.1f %d %.1f %.1f %d %.1f %.1f %.1f %.1f %.1f %.1f" % (
    t_tr + t_win, len(win), max(steps), statistics.median(steps), len(steps),
    t_sum, max(sums), statistics.median(sums),
    t_find, max(finds), statistics.median(finds)))
PY
    read -r first first_bytes smax smed nsteps sum_all sum_max sum_med \
        find_all find_max find_med <"$TMP/steps.out"
    firsts+=("$first") maxes+=("$smax") meds+=("$smed")
    sums_all+=("$sum_all") sums_max+=("$sum_max") sums_med+=("$sum_med")
    finds_all+=("$find_all") finds_max+=("$find_max") finds_med+=("$find_med")
    rss+=("$(awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$VIEW_PID/status")")
    peak+=("$(awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/$VIEW_PID/status")")
    anon+=("$(awk '/^RssAnon/ { print int($2 / 1024) }' "/proc/$VIEW_PID/status")")
    stop_view
    echo "round $r: start ${starts[-1]} ms, first picture $first ms ($first_bytes bytes), $nsteps steps: slowest $smax ms, median $smed ms; memory peak ${peak[-1]} MiB, after ${rss[-1]} MiB (${anon[-1]} MiB not the index)"
    echo "round $r: summary: whole trace $sum_all ms, steps slowest $sum_max ms, median $sum_med ms; find (count, next, previous): whole trace $find_all ms, steps slowest $find_max ms, median $find_med ms"
done

MEDIAN_FORMAT=%.1f
printf '\n%-16s %10s %s\n' "" "median" "target"
printf '%-16s %10s %s\n' "index (once)" "$index_ms ms" "-"
printf '%-16s %10s %s\n' "index size" "$(awk -v b="$idx_bytes" -v e="$EVENTS" 'BEGIN { printf "%.1f", b / e }') B/event" "-"
printf '%-16s %10s %s\n' "start" "$(median "${starts[@]}") ms" "-"
printf '%-16s %10s %s\n' "first picture" "$(median "${firsts[@]}") ms" "start + first < 1000 ms"
printf '%-16s %10s %s\n' "slowest step" "$(median "${maxes[@]}") ms" "< 200 ms"
printf '%-16s %10s %s\n' "median step" "$(median "${meds[@]}") ms" "-"
printf '%-16s %10s %s\n' "summary, whole" "$(median "${sums_all[@]}") ms" "< 1000 ms"
printf '%-16s %10s %s\n' "summary, slowest" "$(median "${sums_max[@]}") ms" "< 1000 ms"
printf '%-16s %10s %s\n' "summary, median" "$(median "${sums_med[@]}") ms" "a few ms"
printf '%-16s %10s %s\n' "find, whole" "$(median "${finds_all[@]}") ms" "< 1000 ms (3 answers)"
printf '%-16s %10s %s\n' "find, slowest" "$(median "${finds_max[@]}") ms" "< 1000 ms (3 answers)"
printf '%-16s %10s %s\n' "find, median" "$(median "${finds_med[@]}") ms" "a few ms"
printf '%-16s %10s %s\n' "memory peak" "$(median "${peak[@]}") MiB" "< 256 MiB"
printf '%-16s %10s %s\n' "memory after" "$(median "${rss[@]}") MiB" "-"
printf '%-16s %10s %s\n' "not the index" "$(median "${anon[@]}") MiB" "-"

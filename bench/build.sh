#!/bin/bash
# bench/build.sh - what `weft run` adds to a real build: `make -j JOBS`
# of a real C project, untraced and under weft run (every process of the
# build a member of one trace), the same tree built from clean each time.
#
#   make -C BUILD_DIR && bash bench/build.sh [-j JOBS] [-r ROUNDS]
#                                           [-s SOURCE] BUILD_DIR
#
#   -j JOBS     make's jobs (default 2)
#   -r ROUNDS   rounds (default 1), each one untraced build and one traced,
#               alternating; figures are medians over them
#   -s SOURCE   an autotools project's source tree (a Debian source
#               package unpacked: `apt-get source zlib`); default: weft's
#               own, from this checkout (about 250 C files, libtool)
#   -t LIST     weft run's recorders (its -t; default: weft run's own),
#               to tell what each costs
#
# The project is configured once (untraced) in a scratch directory; each
# build is `make clean` then `make -j JOBS`, timed. The traced build runs
# under `weft run` with weftd on loopback TCP (auth = none, see
# bench/lib.sh). Printed: the seconds of each and their CPU time (the
# build's processes: make, the compilers, and weft run with what it
# starts), weftd's CPU time while the traced build ran and after it
# (converting the trace; on the same cores), the ratio traced /
# untraced, and the traced build's trace: members (processes), events,
# state. The issue's target: at most 1.10.
set -u
BENCH=build
JOBS=2
ROUNDS=1
SRC=
RECORDERS=()
while getopts j:r:s:t: o; do
    case $o in
        j) JOBS=$OPTARG ;;
        r) ROUNDS=$OPTARG ;;
        s) SRC=$OPTARG ;;
        t) RECORDERS=(-t "$OPTARG") ;;
        *) echo "usage: bench/build.sh [-j JOBS] [-r ROUNDS] [-s SOURCE] [-t LIST] BUILD_DIR" >&2
           exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: bench/build.sh [-j JOBS] [-r ROUNDS] [-s SOURCE] [-t LIST] BUILD_DIR" >&2; exit 2; }
B=$(cd "$1" && pwd) || exit 2
RUN_TIMEOUT=3600
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$B/weft" ] && [ -x "$B/weftd" ] || die "build $B first (make -C $B)"
export WEFT_LIBDIR="$B/.libs"

if [ -z "$SRC" ]; then
    SRC="$TMP/src"
    git -C "$(dirname "$0")/.." archive --prefix=src/ HEAD | tar -x -C "$TMP" ||
        die "cannot export this checkout"
    (cd "$SRC" && ./autogen.sh >/dev/null 2>&1) || die "autogen.sh failed"
fi
SRC=$(cd "$SRC" && pwd) || exit 2
mkdir -p "$TMP/obj"
(cd "$TMP/obj" && "$SRC/configure" >"$TMP/configure.out" 2>&1) ||
    die "configure failed: $(tail -n 5 "$TMP/configure.out")"
# One build first, untimed: the page cache and ccache-like effects even.
make -C "$TMP/obj" -s -j "$JOBS" >/dev/null 2>&1 || die "the project does not build"

# timed ERRLOG COMMAND...: runs COMMAND once (bench/runs.py); prints its
# wall time and the CPU time of it and its processes, in s.
timed() {
    local ms cpu
    read -r ms cpu < <(/usr/bin/python3 "$(dirname "$0")/runs.py" 1 1 "$@") &&
        [ -n "$cpu" ] || return 1
    awk -v m="$ms" -v c="$cpu" 'BEGIN { printf "%.2f %.1f\n", m / 1e3, c / 1e3 }'
}

start_weftd
plain=() traced=()
for r in $(seq "$ROUNDS"); do
    make -C "$TMP/obj" -s clean >/dev/null 2>&1
    read -r s cpu < <(timed "$TMP/plain.err" make -C "$TMP/obj" -s -j "$JOBS")
    [ -n "${cpu:-}" ] || die "untraced build failed: $(tail -n 5 "$TMP/plain.err")"
    plain+=("$s")
    line="round $r: untraced $s s (CPU $cpu s)"
    make -C "$TMP/obj" -s clean >/dev/null 2>&1
    w0=$(weftd_cpu)
    cpu=
    read -r s cpu < <(timed "$TMP/traced.err" timeout "$RUN_TIMEOUT" "$B/weft" run \
        ${RECORDERS[@]+"${RECORDERS[@]}"} --trace "build-$r" -- \
        make -C "$TMP/obj" -s -j "$JOBS")
    [ -n "${cpu:-}" ] || die "traced build failed: $(tail -n 5 "$TMP/traced.err")"
    w1=$(weftd_cpu)
    traced+=("$s")
    weft_archive "build-$r" >/dev/null
    w2=$(weftd_cpu)
    echo "$line, traced $s s (CPU $cpu s; weftd's" \
        "$(awk -v a="$w0" -v b="$w1" -v c="$w2" 'BEGIN { printf "%.1f s while it ran, %.1f s after", (b - a) / 1e9, (c - b) / 1e9 }')" \
        "converting), $(/usr/bin/python3 -c 'import json; j = json.load(open("'"$TMP/show.json"'")); print("%d processes, %d events, %s" % (j["members"], j["events"], j["state"]))')"
done
p=$(median "${plain[@]}")
t=$(median "${traced[@]}")
echo "make -j $JOBS of $SRC: untraced $p s, weft run${RECORDERS[1]:+ -t ${RECORDERS[1]}} $t s, ratio $(awk -v p="$p" -v t="$t" 'BEGIN { printf "%.3f", t / p }') (target <= 1.10)"

#!/bin/bash
# e2e_bench.sh - the benchmarks in bench/ still run: each at a small size,
# against the weftd of this build, must end well and print its figures.
# No time is asserted (performance is measured by running the benchmarks
# themselves, see README's Performance section): this only keeps a
# benchmark from breaking unnoticed, as bench/ingest did when #30's
# per-address limit refused most of its connections.
. "$(dirname "$0")/lib.sh"

export WEFT_BENCH_WEFTD="$WEFT_BUILDDIR/weftd" TMPDIR="$TMP"
cd "$WEFT_BUILDDIR" || fail "no build directory"

# bench NAME PATTERN ARGS...: runs bench/NAME ARGS; its output must have a
# line matching PATTERN.
bench() {
    local name=$1 pattern=$2 out="$TMP/$1.out"
    shift 2
    timeout 300 "./bench/$name" "$@" >"$out" 2>&1 ||
        fail "bench/$name $* failed: $(tail -n 20 "$out")"
    grep -qE "$pattern" "$out" ||
        fail "bench/$name $* printed no '$pattern': $(tail -n 20 "$out")"
    echo "bench/$name $*: $(grep -E "$pattern" "$out" | tail -n 1)"
}

bench record '^wire bytes per Enter/Leave' -n 20000 -r 1
bench ingest '^weftd CPU per event' -c 100 -b 4 -e 500 -n 200000 -r 1
bench ingest '^idle: weftd RSS' -i 200
bench instrument '^traced ' -n 20000 -r 1
bench list 'weft sql --csv' -n 200 -r 1
if [ "$(id -u)" -eq 0 ]; then
    # a head and two nodes in network namespaces, 20 ranks each
    timeout 300 bash "$WEFT_SRCDIR/bench/cluster.sh" -n 2 -p 20 -b 2 -e 500 \
        "$WEFT_BUILDDIR" >"$TMP/cluster.out" 2>&1 ||
        fail "bench/cluster.sh failed: $(tail -n 20 "$TMP/cluster.out")"
    grep -q "^round 1, one weftd: acked" "$TMP/cluster.out" ||
        fail "bench/cluster.sh printed no figures: $(tail -n 20 "$TMP/cluster.out")"
    echo "bench/cluster.sh: $(grep "^round 1, cluster" "$TMP/cluster.out")"
else
    echo "SKIP: bench/cluster.sh needs root (ip netns)"
fi
echo ok

#!/bin/bash
# coverage.sh BUILDDIR [SECONDS] - which lines the fuzzers reach, per
# file (llvm-cov). Runs each fuzzer of BUILDDIR (`make fuzz`) for SECONDS
# (default 60) on a copy of its seed corpus, rebuilds the fuzzers with
# clang's source coverage instead of the sanitizers, replays the corpora
# they grew, prints llvm-cov's report of the files under daemon/, proto/,
# client/ and recorders/ they reach, and rebuilds the usual fuzzers.
# A measurement for the closing notes, not a test.
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft-cov.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$build"
fuzzers=$( (make -qp 2>/dev/null || true) | sed -n 's/^FUZZERS = //p' | head -n 1)
make -s fuzz >/dev/null
for f in $fuzzers; do
    name=$(basename "$f")
    mkdir -p "$tmp/corpus/$name"
    cp "$src/fuzz/corpus/$name"/* "$tmp/corpus/$name/" 2>/dev/null || true
    echo "coverage: fuzzing $name for ${seconds}s" >&2
    "./$f" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 "$tmp/corpus/$name" >"$tmp/$name.log" 2>&1 || true
done
# shellcheck disable=SC2086 # a list of paths
rm -f $fuzzers
make -s fuzz FUZZ_CFLAGS="-std=gnu11 -g -O0 -fsanitize=fuzzer \
    -fprofile-instr-generate -fcoverage-mapping" >/dev/null
objects=()
for f in $fuzzers; do
    name=$(basename "$f")
    LLVM_PROFILE_FILE="$tmp/$name.profraw" "./$f" -runs=0 \
        "$tmp/corpus/$name" >/dev/null 2>&1 || true
    objects+=(-object "$build/$f")
done
llvm-profdata merge -sparse "$tmp"/*.profraw -o "$tmp/all.profdata"
llvm-cov report -instr-profile="$tmp/all.profdata" "${objects[@]:1}" \
    "$src/daemon" "$src/proto" "$src/client" "$src/recorders"
# shellcheck disable=SC2086
rm -f $fuzzers
make -s fuzz >/dev/null

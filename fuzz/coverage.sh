#!/bin/bash
# coverage.sh BUILDDIR [SECONDS [FILE...]] - which lines the fuzzers
# reach, per file (llvm-cov). Runs each fuzzer of BUILDDIR (`make fuzz`)
# for SECONDS (default 60) on a copy of its seed corpus, rebuilds the
# fuzzers with clang's source coverage instead of the sanitizers, replays
# the corpora they grew, prints llvm-cov's report of the files under
# daemon/, config/, spool/, summary/, import/, proto/, client/ and
# recorders/ they reach, then for each FILE (a path under the source
# tree, e.g. daemon/convert/unify.c) the lines no fuzzer ran, as
# FILE:LINE: text, and rebuilds the usual fuzzers.
# A measurement for the closing notes, not a test.
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=${2:-60}
shift $(($# < 2 ? $# : 2))
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
    "$src/daemon" "$src/config" "$src/spool" "$src/summary" "$src/import" "$src/proto" "$src/client" "$src/recorders"
for file in "$@"; do
    echo
    echo "lines of $file no fuzzer ran:"
    # llvm-cov show's file arguments do not match here: take the file's
    # section of the whole listing ("PATH:" then "LINE|COUNT|TEXT").
    llvm-cov show -instr-profile="$tmp/all.profdata" "${objects[@]:1}" |
        awk -v head="$src/$file:" -v f="$file" '
            /^[^ |].*:$/ { on = ($0 == head); next }
            on && /^ *[0-9]+\|/ {
                split($0, a, "|")
                if (a[2] !~ /^ *0$/)
                    next
                t = $0
                sub(/^[^|]*\|[^|]*\|/, "", t)
                sub(/^ */, "", a[1])
                print f ":" a[1] ":" t
            }'
done
# shellcheck disable=SC2086
rm -f $fuzzers
make -s fuzz >/dev/null

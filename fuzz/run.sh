#!/bin/sh
# run.sh FUZZER SRCDIR SECONDS - runs one libFuzzer target for SECONDS on a
# temporary copy of its seed corpus (SRCDIR/fuzz/corpus/NAME/), then
# replays every input that once crashed it (SRCDIR/fuzz/regress/NAME/*).
# Prints "PASS: fuzz/NAME" or "FAIL: fuzz/NAME" last and exits non-zero on
# a failure. A crashing input is kept as fuzz/artifacts/NAME-* in the
# current (build) directory: fix the bug, then move it to
# SRCDIR/fuzz/regress/NAME/.
set -u
fuzzer=$1 srcdir=$2 seconds=$3
name=$(basename "$fuzzer")
seeds=$srcdir/fuzz/corpus/$name
regress=$srcdir/fuzz/regress/$name
dict=$srcdir/fuzz/$name.dict
status=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/weft-$name.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/corpus" fuzz/artifacts
[ -d "$seeds" ] && cp "$seeds"/* "$tmp/corpus/" 2>/dev/null

# Sanitizer reports must end the run: libFuzzer then saves the input.
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export UBSAN_OPTIONS

set -- -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="fuzz/artifacts/$name-"
[ -f "$dict" ] && set -- "$@" -dict="$dict"
echo "fuzz: $name for ${seconds}s"
if ! "$fuzzer" "$@" "$tmp/corpus" >"$tmp/log" 2>&1; then
    tail -n 60 "$tmp/log"
    echo "fuzz: $name crashed; input kept in fuzz/artifacts/" >&2
    status=1
else
    stat() { sed -n "s/^stat::$1: *//p" "$tmp/log"; }
    echo "fuzz: $name: $(stat number_of_executed_units) runs," \
        "$(stat average_exec_per_sec) exec/s," \
        "$(grep -o 'cov: [0-9]*' "$tmp/log" | tail -n 1)," \
        "corpus $(ls "$tmp/corpus" | wc -l) inputs, peak rss" \
        "$(stat peak_rss_mb) MB"
fi

if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
    echo "fuzz: $name replays $(ls -A "$regress" | wc -l) regression inputs"
    if ! "$fuzzer" -timeout=10 "$regress"/* >"$tmp/replay" 2>&1; then
        tail -n 60 "$tmp/replay"
        echo "fuzz: $name fails on a regression input" >&2
        status=1
    fi
fi

if [ "$status" -eq 0 ]; then
    echo "PASS: fuzz/$name"
else
    echo "FAIL: fuzz/$name"
fi
exit "$status"

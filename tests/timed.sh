#!/bin/sh
# timed.sh - runs one test of `make check` (LOG_COMPILER): fails it after
# 20 minutes instead of holding the suite (and CI) until its own limit,
# and says how long it took, as the last line of its log and, when
# WEFT_TEST_TIMES names a file, as a line "SECONDS TEST" appended to it
# (scripts/check lists the slowest tests of each suite from it).
# At nice 19, weftd's default (weftd.conf's `nice`): the programs a test
# runs and the weftd it starts compete as equals, as they do with the
# test next to it (make check -j), and its bounded waits hold.
start=$(date +%s)
timeout -k 10 1200 nice -n 19 "$@"
rc=$?
took=$(($(date +%s) - start))
echo "# $1: $took s (exit $rc)"
if [ -n "${WEFT_TEST_TIMES:-}" ]; then
    printf '%s %s\n' "$took" "$1" >>"$WEFT_TEST_TIMES"
fi
exit $rc

#!/bin/bash
# e2e_fork.sh - fork() in a traced process: the child runs untraced (its
# records never reach weftd), neither process hangs, and the parent's trace
# completes with exactly what the parent recorded.
. "$(dirname "$0")/lib.sh"

start_weftd
WEFT_TRACE=forked timeout 60 "$WEFT_BUILDDIR/tests/weft-forktest" \
    >"$TMP/report.json" 2>"$TMP/fork.err" ||
    { cat "$TMP/fork.err" >&2; fail "weft-forktest failed or hung"; }
wait_state forked complete 30
archive=$(json_get "$TMP/show.json" 'j["archive"]')
otf2-print -Werror --silent "$archive" >/dev/null || fail "otf2-print rejects $archive"
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" --regions "before fork" >/dev/null ||
    fail "the parent's trace does not hold exactly what it recorded"
[ "$(json_get "$TMP/show.json" 'j["members"]')" -eq 1 ] || fail "the child joined the trace"
otf2-print "$archive" 2>/dev/null | grep -q '"child"' && fail "the child's records reached the trace"
stop_weftd
echo ok

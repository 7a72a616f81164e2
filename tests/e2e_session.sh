#!/bin/bash
# e2e_session.sh - a session that said Hello and then sends nothing is
# closed after session_timeout; libweft's Heartbeat keeps a quiet program
# (one that records nothing for a while) from being closed (#15).
. "$(dirname "$0")/lib.sh"
CLOCKTEST="$WEFT_BUILDDIR/tests/weft-clocktest"

start_weftd --set session_timeout=2

# Quiet for 5 s with a Heartbeat every 0.5 s: never closed.
WEFT_TRACE=beating WEFT_HEARTBEAT_MS=500 timeout 60 "$CLOCKTEST" 10 5000 \
    >"$TMP/beating.out" 2>"$TMP/beating.err" ||
    fail "the program failed: $(cat "$TMP/beating.err")"
wait_state beating complete
grep -q "session_timeout" "$TMP/weftd.log" &&
    fail "a session sending Heartbeats was closed"

# Quiet for 5 s without Heartbeats: weftd closes the session after 2 s,
# naming the timeout; the process reconnects when it has something to
# say, and nothing is lost.
WEFT_TRACE=silent WEFT_HEARTBEAT_MS=0 timeout 60 "$CLOCKTEST" 10 5000 \
    >"$TMP/silent.out" 2>"$TMP/silent.err" ||
    fail "the program failed: $(cat "$TMP/silent.err")"
wait_state silent complete
grep -q "refused: session_timeout: nothing received for 2 s" \
    "$TMP/weftd.log" || fail "weftd did not close the silent session"
grep -q "reconnected to weftd" "$TMP/silent.err" ||
    fail "the silent process did not come back: $(cat "$TMP/silent.err")"
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq 44 ] ||
    fail "events lost: $(json_get "$TMP/show.json" 'j["events"]') of 44"
echo "PASS: e2e_session"

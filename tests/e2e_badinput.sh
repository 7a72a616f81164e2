#!/bin/bash
# e2e_badinput.sh - malformed and malicious clients get an Error naming the
# problem and are disconnected, while a valid trace sent at the same time
# completes and weftd keeps serving.
. "$(dirname "$0")/lib.sh"

start_weftd --log-level info
start_demo "good run" -- -p 2 -t 2 -n 2000

expect_error() { # MODE PATTERN
    out=$(timeout 20 "$RAWPEER" "$WEFT_SERVER" "$1" "bad $1") ||
        fail "mode $1: no Error frame from weftd"
    echo "$1 -> $out"
    echo "$out" | grep -q -- "$2" || fail "mode $1: error '$out' does not say '$2'"
}
expect_error garbage "not a weft protocol message"
expect_error too-long "before authentication: max_preauth_frame is 16384"
expect_error empty-frame "not a weft protocol message"
expect_error bad-version "protocol version 99"
expect_error before-hello "before Hello"
expect_error unknown-record "unknown record type"
expect_error undefined-ref "REGION 5 is not defined"
expect_error time-backwards "smaller than the last time"
expect_error daemon-def "derived by weftd"
expect_error seq-gap "a batch is missing"

finish_demo "good run"
wait_state "good run" complete 120
check_archive "good run" "$TMP/good run.json"

# weftd still serves after all that.
timeout 20 "$RAWPEER" "$WEFT_SERVER" valid "after bad input" ||
    fail "weftd no longer accepts a valid client"
wait_state "after bad input" complete 60
kill -0 "$WEFTD_PID" || fail "weftd died"
stop_weftd
echo "ok"

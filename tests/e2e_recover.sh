#!/bin/bash
# e2e_recover.sh - weftd killed with SIGKILL loses nothing it acknowledged:
# on restart it cuts torn journal tails, resumes traces in progress (a
# client coming back learns from HelloAck what is held and sends the
# rest), and converts traces whose processes do not come back as partial
# (saying how a process that had said goodbye ended, if abnormally).
. "$(dirname "$0")/lib.sh"

start_weftd
timeout 20 "$RAWPEER" "$WEFT_SERVER" first-half "resumed run" || fail "first half not acked"
timeout 20 "$RAWPEER" "$WEFT_SERVER" vanish "abandoned run" || fail "vanish not acked"
timeout 20 "$RAWPEER" "$WEFT_SERVER" aborted "aborted run" || fail "aborted: Goodbye not taken"
kill -KILL "$WEFTD_PID"
wait "$WEFTD_PID" 2>/dev/null
WEFTD_PID=
# A torn tail: half an entry written when weftd died.
journal=$(ls "$SPOOL"/traces/resumed_run-*/rank-0.wj)
printf 'torn-tail-bytes' >>"$journal"

start_weftd --grace-period 3
grep -q "cut 15 bytes of a torn tail" "$TMP/weftd.log" || fail "torn tail not cut"
out=$(timeout 20 "$RAWPEER" "$WEFT_SERVER" second-half "resumed run") ||
    fail "second half failed: $out"
[ "$out" = "definitions_seq=1 thread0_seq=1" ] ||
    fail "HelloAck after restart says '$out', expected definitions 1 and batch 1 held"
wait_state "resumed run" complete 30
archive=$(json_get "$TMP/show.json" 'j["archive"]')
otf2-print -Werror --silent "$archive" >/dev/null || fail "otf2-print rejects $archive"
echo '{"0.0": {"Enter": 1, "Leave": 1}}' >"$TMP/report.json"
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" >/dev/null ||
    fail "the resumed trace lost or duplicated events"

wait_state "abandoned run" partial 30
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq 2 ] ||
    fail "the abandoned run lost acknowledged events"
otf2-print -Werror --silent "$(json_get "$TMP/show.json" 'j["archive"]')" >/dev/null ||
    fail "otf2-print rejects the partial archive"

# Its Goodbye, read back from the journal, still says how rank 0 ended.
wait_state "aborted run" partial 30
why=$(json_get "$TMP/show.json" 'j["error"]')
[ "$why" = "1 of 2 members never came (rank 1); ended abnormally: rank 0: MPI_Abort (error code 3)" ] ||
    fail "aborted run: reason '$why'"
[ "$(json_get "$TMP/show.json" 'j["ranks"][0]["state"]')" = aborted ] ||
    fail "aborted run: rank 0 is not 'aborted'"
stop_weftd
echo ok

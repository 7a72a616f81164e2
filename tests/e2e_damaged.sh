#!/bin/bash
# e2e_damaged.sh - damaged state is reported, not forgotten (issue #11).
# weftd is killed with three traces recording; then one journal's Hello
# entry is overwritten with garbage and another trace's journals are
# removed. The restarted weftd makes the first trace failed, naming the
# file and the offset of the bad entry (the journal is kept as it was),
# and the second failed (no journal left), and resumes the third: `weft
# list --state recording` shows only the trace really recording.
. "$(dirname "$0")/lib.sh"

W() { "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }

start_weftd
for t in "bad hello" "gone run" "fine run"; do
    timeout 20 "$RAWPEER" "$WEFT_SERVER" first-half "$t" ||
        fail "$t: first half not acked"
    wait_state "$t" recording
done
kill -KILL "$WEFTD_PID"
wait "$WEFTD_PID" 2>/dev/null
WEFTD_PID=

# The Hello is the first entry: magic (8 bytes), header (36), payload.
bad=$(ls "$SPOOL"/traces/bad_hello-*/rank-0.wj)
printf 'GARBAGE!' | dd of="$bad" bs=1 seek=50 conv=notrunc status=none
sum=$(md5sum <"$bad")
rm "$SPOOL"/traces/gone_run-*/rank-*.wj

start_weftd --grace-period 600
# Recovery is over once weftd listens: the catalog says it all now.
W show "bad hello" --json >"$TMP/bad.json" || fail "show bad hello"
[ "$(json_get "$TMP/bad.json" 'j["state"]')" = failed ] ||
    fail "a trace with a corrupt Hello is $(json_get "$TMP/bad.json" 'j["state"]'), not failed"
json_get "$TMP/bad.json" 'j["error"]' | grep -qF "$bad: offset 8: the Hello entry is corrupt" ||
    fail "the error does not name the file and offset: $(json_get "$TMP/bad.json" 'j["error"]')"
[ -f "$bad" ] && [ "$(md5sum <"$bad")" = "$sum" ] ||
    fail "the damaged journal was not kept as it was"
W show "gone run" --json >"$TMP/gone.json" || fail "show gone run"
[ "$(json_get "$TMP/gone.json" 'j["state"]')" = failed ] ||
    fail "a trace whose journals are gone is $(json_get "$TMP/gone.json" 'j["state"]')"
json_get "$TMP/gone.json" 'j["error"]' | grep -q "no journal of it is left" ||
    fail "gone run: error $(json_get "$TMP/gone.json" 'j["error"]')"
W list --state recording --json >"$TMP/rec.json" || fail "list --state recording"
[ "$(json_get "$TMP/rec.json" '[t["name"] for t in j]')" = "['fine run']" ] ||
    fail "recording traces: $(json_get "$TMP/rec.json" '[t["name"] for t in j]')"

# The good trace was resumed and ends exact.
out=$(timeout 20 "$RAWPEER" "$WEFT_SERVER" second-half "fine run") ||
    fail "second half failed: $out"
[ "$out" = "definitions_seq=1 thread0_seq=1" ] || fail "HelloAck says '$out'"
wait_state "fine run" complete 30
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq 2 ] || fail "fine run lost events"

# A later start leaves the failed traces and their journal alone.
stop_weftd
start_weftd
[ "$(W show "bad hello" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])')" = failed ] ||
    fail "bad hello changed state at the next start"
[ "$(md5sum <"$bad")" = "$sum" ] || fail "the damaged journal changed"
stop_weftd
echo ok

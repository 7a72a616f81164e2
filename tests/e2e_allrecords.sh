#!/bin/bash
# e2e_allrecords.sh - every definition and event kind of OTF2 3.0.2 once
# through the whole path: weft-demo --all-records (3 processes x 2
# threads, boundary values, every attribute type) streams to a real weftd;
# the archive must pass `otf2-print -Werror` and equal, record by record
# and field by field after id unification, what the demo says it sent
# (tests/check_allrecords.py, libotf2's Python binding); the checker names
# any kind missing from the archive.
. "$(dirname "$0")/lib.sh"

start_weftd
# Every record as sent, ClockOffsets too: on CLOCK_MONOTONIC on weftd's
# host libweft measures none of its own and the archive counts ns as
# sent (the TSC's ticks and offsets: e2e_clock.sh, e2e_tsc.sh).
export WEFT_TRACE="e2e all records" WEFT_CLOCK=monotonic
timeout 120 "$DEMO" -p 3 -t 2 --all-records --sent "$TMP/sent.jsonl" \
    --report "$TMP/report.json" >"$TMP/demo.out" 2>&1 ||
    { cat "$TMP/demo.out" >&2; fail "weft-demo --all-records failed"; }
cat "$TMP/demo.out"
wait_state "$WEFT_TRACE" complete 120

archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
[ -f "$archive" ] || fail "archive $archive missing"
otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
    { cat "$TMP/print.out" >&2; fail "otf2-print -Werror rejects $archive"; }
summary=$("$PY" "$WEFT_SRCDIR/tests/check_allrecords.py" "$archive" \
          "$TMP/sent.jsonl" "$TMP/report.json") ||
    fail "the archive differs from what weft-demo sent"
echo "archive: $summary"

# Every definition and event kind of the record table (the schema line
# weft-demo writes from it).
kinds=$(echo "$summary" | "$PY" -c 'import json,sys; j=json.load(sys.stdin); print(j["definition_kinds"], j["event_kinds"])')
table=$(echo "$summary" | "$PY" -c 'import json,sys; j=json.load(sys.stdin); print(j["table_definition_kinds"], j["table_event_kinds"])')
case $table in 0\ *|*\ 0) fail "the schema has no definition or no event kinds: $table";; esac
[ "$kinds" = "$table" ] || fail "expected $table definition and event kinds (the record table's), found $kinds"
# 3 x 2 threads, and per process one location that only a definition
# names (weft-demo-all.c: the "idle" LocationProperty).
locs=$(echo "$summary" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["locations"])')
[ "$locs" -eq 9 ] || fail "expected 9 locations, archive has $locs"
events=$(echo "$summary" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["events"])')
expected=$(json_get "$TMP/report.json" 'sum(sum(v.values()) for k, v in j.items() if not k.endswith(".definitions"))')
[ "$events" -eq "$expected" ] || fail "archive has $events events, demo recorded $expected"
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq "$events" ] ||
    fail "catalog events differ from the archive"
stop_weftd
echo "ok: $kinds kinds, $events events"

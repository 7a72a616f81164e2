#!/bin/bash
# e2e_basic.sh - the whole path once: weft-demo with 4 processes x 2
# threads streams one trace to a real weftd; the archive is validated with
# otf2-print and the otf2 Python module against what the demo recorded,
# and the catalog row must agree.
. "$(dirname "$0")/lib.sh"

start_weftd
export WEFT_TRACE="e2e basic 'quoted'"
timeout 120 "$DEMO" -p 4 -t 2 -n 300 --report "$TMP/report.json" \
    >"$TMP/demo.out" 2>&1 || { cat "$TMP/demo.out" >&2; fail "weft-demo failed"; }
wait_state "$WEFT_TRACE" complete 120

archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
[ -f "$archive" ] || fail "archive $archive missing"
otf2-print -Werror --silent "$archive" || fail "otf2-print rejects $archive"
summary=$("$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" \
          --regions main,iteration,compute,exchange) ||
    fail "archive does not match what weft-demo recorded"
echo "archive: $summary"

locs=$(echo "$summary" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["locations"])')
events=$(echo "$summary" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["events"])')
[ "$locs" -eq 8 ] || fail "expected 8 locations, archive has $locs"
expected=$(json_get "$TMP/report.json" 'sum(sum(k.values()) for k in j.values())')
[ "$events" -eq "$expected" ] || fail "archive has $events events, demo recorded $expected"
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq "$events" ] ||
    fail "catalog events differ from the archive"
[ "$(json_get "$TMP/show.json" 'j["location_count"]')" -eq 8 ] ||
    fail "catalog locations differ from the archive"
[ "$(json_get "$TMP/show.json" 'j["members"]')" -eq 4 ] ||
    fail "catalog members is not 4"
[ "$(json_get "$TMP/show.json" 'sum(l["events"] for l in j["locations"])')" -eq "$events" ] ||
    fail "catalog per-location events differ from the archive"
"$WEFT" --catalog "$SPOOL/catalog.db" list | grep -q "e2e basic" ||
    fail "weft list does not show the trace"
ls "$SPOOL"/traces/*/rank-*.wj 2>/dev/null && fail "journals left after conversion"
stop_weftd

# The same over a Unix socket with acks after fdatasync, the owner taken
# from the peer's credentials, and `weft` finding the catalog through the
# configuration file (no --catalog).
printf '[weftd]\nspool = %s\nsocket = %s\ndurability = fsync\n' "$SPOOL" "$TMP/weftd.sock" >"$TMP/weftd.conf"
export WEFT_CONFIG="$TMP/weftd.conf"
start_weftd
WEFT_SERVER="unix:$TMP/weftd.sock" WEFT_TRACE="over unix" timeout 120 "$DEMO" -p 2 -t 1 -n 50 \
    --report "$TMP/report2.json" >"$TMP/demo2.out" 2>&1 ||
    { cat "$TMP/demo2.out" >&2; fail "weft-demo over the Unix socket failed"; }
wait_state "over unix" complete 60
"$WEFT" show "over unix" --json >"$TMP/show2.json" ||
    fail "weft does not find the catalog of the configuration file"
[ "$(json_get "$TMP/show2.json" 'j["uid"]')" -eq "$(id -u)" ] || fail "owner is not $(id -u)"
"$PY" "$CHECK_ARCHIVE" "$(json_get "$TMP/show2.json" 'j["archive"]')" "$TMP/report2.json" >/dev/null ||
    fail "the trace sent over the Unix socket does not match"
"$WEFT" list | grep -q "over unix" || fail "weft list (default catalog) does not show the trace"
stop_weftd
echo "ok: $events events in 8 locations"

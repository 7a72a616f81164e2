#!/bin/bash
# e2e_partial.sh - a trace whose processes vanish (one recorded and died
# without goodbye, the other never came) is converted after the grace
# period with what arrived, marked partial, and its archive is readable.
. "$(dirname "$0")/lib.sh"

start_weftd --grace-period 1
timeout 20 "$RAWPEER" "$WEFT_SERVER" vanish "half a run" ||
    fail "the vanishing client got an error"
wait_state "half a run" partial 30
archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
otf2-print -Werror --silent "$archive" >/dev/null || fail "otf2-print rejects $archive"
echo '{"0.0": {"Enter": 1, "Leave": 1}}' >"$TMP/report.json"
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" >/dev/null ||
    fail "partial archive does not hold what was acknowledged"
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq 2 ] || fail "catalog events != 2"
grep -q "0 of 2 said goodbye" "$TMP/weftd.log" || fail "no log line about the vanished members"
stop_weftd
echo ok

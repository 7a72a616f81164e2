#!/bin/bash
# e2e_partial.sh - a trace whose processes vanish (one recorded and died
# without goodbye, the other never came) is converted after the grace
# period with what arrived, marked partial, and its archive is readable.
# A Hello announcing 2^24 members costs what came: two processes of such
# a trace are converted at once as partial, with two member rows, and
# weft show names the missing ranks as ranges.
. "$(dirname "$0")/lib.sh"

start_weftd --grace-period 3 --set max_members=16777216
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

for rank in 3 16777215; do
    timeout 20 "$RAWPEER" "$WEFT_SERVER" member huge --size 16777216 \
        --rank "$rank" --scenario compute || fail "member $rank of huge"
done
wait_state huge partial 30
W() { timeout 20 "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }
[ "$(json_get "$TMP/show.json" '(j["members"], [(m["rank"], m["state"]) for m in j["ranks"]], j["missing_ranks"])')" = \
  "(16777216, [(3, 'complete'), (16777215, 'complete')], [[0, 2], [4, 16777214]])" ] ||
    fail "show --json of the 2^24-member trace: $(head -c 2000 "$TMP/show.json")"
W show huge | grep -q "^missing: *ranks 0-2, 4-16777214$" ||
    fail "show does not give the missing ranks as ranges: $(W show huge | head -30)"
W show huge | grep -q "^reason: *16777214 of 16777216 members never came (rank 0...)$" ||
    fail "the reason does not count the ranks that never came"
[ "$(W sql "SELECT count(*) FROM members m JOIN traces t ON t.id = m.trace_id WHERE t.name = 'huge'" | tail -n 1 | tr -d ' ')" = 2 ] ||
    fail "the catalog holds member rows for ranks that never came"
stop_weftd
echo ok

#!/bin/bash
# e2e_complete.sh - `complete` means complete (issue #11): a trace is
# catalogued complete only when every member said goodbye and each thread
# holds the events its Goodbye reported sending; otherwise it is partial,
# with the reason in the catalog, and `weft show` prints it.
. "$(dirname "$0")/lib.sh"

start_weftd --grace-period 1
W() { "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }

# The Goodbye reports what arrived: complete, no reason.
timeout 20 "$RAWPEER" "$WEFT_SERVER" counted "all there" ||
    fail "the counted client got an error"
wait_state "all there" complete 30
[ "$(json_get "$TMP/show.json" 'j["error"]')" = None ] ||
    fail "a complete trace has a reason: $(json_get "$TMP/show.json" 'j["error"]')"

# The Goodbye reports three events sent, two arrived: partial, and why.
timeout 20 "$RAWPEER" "$WEFT_SERVER" short "one short" ||
    fail "the short client got an error"
wait_state "one short" partial 30
reason=$(json_get "$TMP/show.json" 'j["error"]')
case "$reason" in
*"rank 0 thread 0: 2 events arrived, its Goodbye reported 3 sent (1 dropped)"*) ;;
*) fail "partial without the reason: '$reason'" ;;
esac
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq 2 ] || fail "catalog events != 2"
W show "one short" >"$TMP/show.txt" || fail "weft show failed"
grep -q "^reason: .*its Goodbye reported 3 sent" "$TMP/show.txt" ||
    fail "weft show does not print the reason: $(cat "$TMP/show.txt")"
archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
otf2-print -Werror --silent "$archive" >/dev/null || fail "otf2-print rejects $archive"

# A member that never says goodbye: partial, and the reason names it.
timeout 20 "$RAWPEER" "$WEFT_SERVER" vanish "half a run" ||
    fail "the vanishing client got an error"
wait_state "half a run" partial 30
reason=$(json_get "$TMP/show.json" 'j["error"]')
case "$reason" in
*"1 of 2 members never came (rank 1)"*"1 of 2 members did not say goodbye (rank 0)"*) ;;
*) fail "partial without the missing members: '$reason'" ;;
esac
stop_weftd
echo ok

#!/bin/bash
# e2e_nesting.sh - Enter and Leave nest on every location of an archive
# (issue #11), gaps or not: with WEFT_OVERFLOW=discard and a pool of 4
# buffers the clients drop records (MeasurementOnOff marks the gaps), and
# a process killed with SIGKILL leaves regions open. A nesting checker on
# the archive (the otf2 Python module) must find nothing, and `weft
# profile` must equal a recomputation from the archive.
. "$(dirname "$0")/lib.sh"

CHECK_NESTING="$WEFT_SRCDIR/tests/check_nesting.py"
start_weftd --grace-period 1
W() { "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }

# check NAME: the archive of trace NAME (show.json) nests and its profile
# is the archive's.
check() {
    local archive
    archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
    otf2-print -Werror --silent "$archive" >/dev/null ||
        fail "$1: otf2-print rejects $archive"
    W profile "$1" --json --limit 0 >"$TMP/$1.profile.json" ||
        fail "$1: no profile"
    "$PY" "$CHECK_NESTING" "$archive" "$TMP/$1.profile.json" \
        >"$TMP/$1.nesting" || fail "$1: the archive does not nest or the profile differs"
    echo "$1: $(cat "$TMP/$1.nesting")"
}

# ---- discard: gaps -----------------------------------------------------------
WEFT_OVERFLOW=discard WEFT_POOL_SIZE=4 WEFT_TRACE=discard timeout 60 "$DEMO" \
    -p 2 -t 4 -n 30000 --report "$TMP/discard.json" >"$TMP/discard.out" 2>&1 ||
    fail "discard: weft-demo failed: $(cat "$TMP/discard.out")"
dropped=$("$PY" -c 'import json,sys; print(sum(v.get("dropped", 0) for v in json.load(open(sys.argv[1])).values()))' "$TMP/discard.json")
[ "$dropped" -gt 0 ] || fail "discard: no record was dropped, no gap to test"
wait_state discard complete 60
check discard
"$PY" "$CHECK_ARCHIVE" "$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2" \
    "$TMP/discard.json" --expect-gaps >/dev/null ||
    fail "discard: the archive does not hold what was recorded"
grep -q "\"gaps\": 0," "$TMP/discard.nesting" && fail "discard: no gap in the archive"

# ---- SIGKILL mid-run: regions left open ----------------------------------
# weft-demo forks its ranks: a session of its own, killed as a group.
WEFT_TRACE=killed setsid "$DEMO" -p 1 -t 2 -n 100000000 -s 200 \
    >"$TMP/killed.out" 2>&1 &
pid=$!
wait_journal killed 64k # its events are under way: regions are open
kill -KILL -- "-$pid" || fail "killed: cannot kill weft-demo"
wait "$pid" 2>/dev/null
wait_state killed partial 30
case "$(json_get "$TMP/show.json" 'j["error"]')" in
*"ended without goodbye"*) ;; # weftd saw its processes gone (procwatch.h)
*) fail "killed: the reason does not say: $(json_get "$TMP/show.json" 'j["error"]')" ;;
esac
check killed
# main is open for a thread's whole life: weftd left it at the end.
grep -q "trace 'killed': [1-9][0-9]* Leave and Enter events added" \
    "$TMP/weftd.log" || fail "killed: no region was left open"
stop_weftd
echo ok

#!/bin/bash
# e2e_quota.sh - max_user_spool_bytes (issue #30, finding 5):
#   (a) it is on by default (weftd --check-config);
#   (b) a trace that grows past a small quota goes on (its program ends
#       normally): the batches past it are acknowledged but not stored,
#       and counted: the trace ends partial saying why, and `weft show`
#       (text and --json) and its location rows count as dropped exactly
#       the events the program recorded that the archive does not hold;
#   (c) a new trace of the user is refused while they are over, saying so;
#   (d) once `weft rm` freed the space, a trace completes exactly.
. "$(dirname "$0")/lib.sh"

W() { "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }
DEMO_TIMEOUT=90

# ---- (a) on by default ----------------------------------------------------
"$WEFTD" --check-config --spool "$SPOOL" >"$TMP/config.txt" 2>&1 ||
    fail "weftd --check-config failed: $(cat "$TMP/config.txt")"
grep -qx 'max_user_spool_bytes = 10737418240' "$TMP/config.txt" ||
    fail "max_user_spool_bytes is not 10G by default: $(grep max_user_spool "$TMP/config.txt")"

# ---- (b) past the quota: refused, counted -----------------------------------
start_weftd --grace-period 1 --set max_user_spool_bytes=1M
# About 5.6 MiB of journals: most of it past 1 MiB.
run_demo big -- -p 1 -t 2 -n 100000
wait_state big partial 60
sent=$("$PY" -c 'import json,sys; print(sum(n for v in json.load(open(sys.argv[1])).values() for k, n in v.items() if k != "dropped"))' "$TMP/big.json")
events=$(json_get "$TMP/show.json" 'j["events"]')
dropped=$(json_get "$TMP/show.json" 'j["dropped"]')
reason=$(json_get "$TMP/show.json" 'j.get("error")')
[ "$events" -gt 0 ] || fail "big: nothing stored before the quota"
[ "$dropped" -gt 0 ] || fail "big: nothing counted dropped ($events of $sent events held)"
# Conversion closes the regions open where a thread's events stop (the
# Leaves it adds are in `events`; weftd's log says how many).
added=$(sed -n "s/.*trace 'big': \([0-9]*\) Leave and Enter events added.*/\1/p" \
    "$TMP/weftd.log")
[ $((events - ${added:-0} + dropped)) -eq "$sent" ] ||
    fail "big: $events held (${added:-0} added) + $dropped dropped != $sent the program recorded"
case "$reason" in
*"events refused (dropped): the owner was over max_user_spool_bytes"*) ;;
*) fail "big: partial without saying the quota: '$reason'" ;;
esac
locdropped=$(json_get "$TMP/show.json" 'sum(l["dropped"] for l in j["locations"])')
[ "$locdropped" -eq "$dropped" ] ||
    fail "big: its locations count $locdropped dropped, the trace $dropped"
W show big >"$TMP/show.txt" || fail "weft show big failed"
grep -Eq "^ *dropped: +$dropped \(0 by the clients, their buffers full; $dropped refused by weftd" "$TMP/show.txt" ||
    fail "weft show does not say dropped: $dropped: $(grep dropped "$TMP/show.txt")"
grep -q "trace 'big'.*batch .* refused .*max_user_spool_bytes is 1048576" \
    "$TMP/weftd.log" || fail "weftd did not log the refusal once"
[ "$(grep -c "refused (.* events), and its next ones" "$TMP/weftd.log")" -eq 1 ] ||
    fail "the refusal is logged per batch, not once per process"
otf2-print -Werror --silent "$(json_get "$TMP/show.json" 'j["archive"]')" \
    >/dev/null || fail "big: otf2-print rejects the archive"

# ---- (c) a new trace is refused while the user is over ----------------------
# big's archive (what its journals, charged 4 bytes each, became) is
# over 64K: a weftd started with that quota counts it from the catalog
# (at start) and refuses the user's next trace.
stop_weftd
start_weftd --grace-period 1 --set max_user_spool_bytes=64K
sleep 1
run_demo next -- -p 1 -t 1 -n 10
grep -q "max_user_spool_bytes" "$TMP/next.out" ||
    fail "next: the program was not told of the quota: $(cat "$TMP/next.out")"
W show next >/dev/null 2>&1 && fail "next: a trace was made over the quota"

# ---- (d) freed: complete ----------------------------------------------------
W rm big >/dev/null || fail "weft rm big failed"
# weftd counts the catalog again at start (and every minute).
stop_weftd
start_weftd --grace-period 1 --set max_user_spool_bytes=1M
run_demo small -- -p 1 -t 2 -n 1000
wait_state small complete 60
check_archive small "$TMP/small.json"
[ "$(json_get "$TMP/show.json" 'j["dropped"]')" -eq 0 ] ||
    fail "small: dropped records counted under the quota"
stop_weftd
echo "PASS"

#!/bin/bash
# e2e_diskfree.sh - records lost to the disk are counted (issue #30,
# finding 5, "Honest figures"); the spool's file system keeps a reserve:
#   (a) min_free_spool_bytes is on by default (1G, weftd --check-config);
#   (b) the spool's file system (a tmpfs) fills while a trace records,
#       without a reserve: the batches whose journal writes fail are
#       acknowledged, not stored, and counted: the trace ends partial
#       naming the journals' directory and ENOSPC, `weft show` (text and
#       --json) counts them as dropped, refused by weftd, the program's
#       events are exactly held + dropped, and weftd serves the next
#       trace;
#   (c) with a reserve just below what is free, a trace past it goes on:
#       its batches are refused and counted, also in the live figures
#       while it records, its locations' rows sum to the trace's dropped,
#       the refusal is logged naming the limit; a new trace is refused
#       while the file system is below the reserve.
# Needs root (mount); prints SKIP and exits 77 otherwise.
. "$(dirname "$0")/lib.sh"

# ---- (a) on by default --------------------------------------------------
"$WEFTD" --check-config --spool "$SPOOL" >"$TMP/config.txt" 2>&1 ||
    fail "weftd --check-config failed: $(cat "$TMP/config.txt")"
grep -qx 'min_free_spool_bytes = 1073741824' "$TMP/config.txt" ||
    fail "min_free_spool_bytes is not 1G by default: $(grep min_free "$TMP/config.txt")"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: mounting a tmpfs needs root"
    exit 77
fi
MNT="$TMP/small"
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=16m tmpfs "$MNT" 2>/dev/null; then
    echo "SKIP: mount -t tmpfs is not permitted here"
    exit 77
fi
cleanup_small() {
    kill_weftd
    umount -l "$MNT" 2>/dev/null
    cleanup
}
trap cleanup_small EXIT
SPOOL="$MNT/spool"
W() { "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }
DEMO_TIMEOUT=90

# sent NAME: the events weft-demo recorded (its report).
sent() {
    "$PY" -c 'import json,sys; print(sum(n for v in json.load(open(sys.argv[1])).values() for k, n in v.items() if k != "dropped"))' "$TMP/$1.json"
}

# exact NAME: the trace's events (less the Leaves and Enters conversion
# added, plus the Leaves of regions not open it left out: a gap of
# refused batches) and
# dropped are what the program recorded, all of dropped refused by weftd;
# leaves show.json and show.txt.
exact() {
    local sent events dropped refused clients added left
    sent=$(sent "$1")
    events=$(json_get "$TMP/show.json" 'j["events"]')
    dropped=$(json_get "$TMP/show.json" 'j["dropped"]')
    refused=$(json_get "$TMP/show.json" 'j["refused"]')
    clients=$(json_get "$TMP/show.json" 'j["dropped_by_clients"]')
    added=$(sed -n "s/.*trace '$1': \([0-9]*\) Leave and Enter events added.*/\1/p" \
        "$TMP/weftd.log" | tail -1)
    left=$(sed -n "s/.*trace '$1': .* and \([0-9]*\) Leaves of regions not open left out.*/\1/p" \
        "$TMP/weftd.log" | tail -1)
    added=$((${added:-0} - ${left:-0}))
    [ "$refused" -gt 0 ] || fail "$1: nothing counted refused ($events of $sent held)"
    [ "$((clients + refused))" -eq "$dropped" ] ||
        fail "$1: $clients dropped by the clients + $refused refused != $dropped dropped"
    [ $((events - added + dropped)) -eq "$sent" ] ||
        fail "$1: $events held ($added added) + $dropped dropped != $sent the program recorded"
    W show "$1" >"$TMP/show.txt" || fail "weft show $1 failed"
    grep -Eq "^ *dropped: +$dropped \($clients by the clients, their buffers full; $refused refused by weftd" \
        "$TMP/show.txt" ||
        fail "$1: weft show does not tell the drops apart: $(grep dropped "$TMP/show.txt")"
    echo "$1: $sent sent, $((events - added)) stored, $refused refused by weftd"
}

# ---- (b) full while recording, no reserve --------------------------------
start_weftd --grace-period 1 --set min_free_spool_bytes=0
start_demo full -- -p 1 -t 2 -n 3000 -s 1000
wait_journal full 1k
dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null
sync
# Full until weftd could not journal a batch (at least 1.5 s, at most
# 20): a batch may still fit in a journal's last page, and under load
# the demo ships few batches a second (once none failed in 1.5 s).
for i in $(seq 200); do
    [ "$i" -gt 15 ] && grep -q "trace 'full'.*not stored, counted as dropped"         "$TMP/weftd.log" && break
    sleep 0.1
done
kill -0 "$WEFTD_PID" || fail "full: weftd died"
rm -f "$MNT/filler"
finish_demo full
wait_state full partial 60
reason=$(json_get "$TMP/show.json" 'j.get("error")')
case "$reason" in
*"events not stored (dropped)"*"$SPOOL/traces/"*"No space left on device"*) ;;
*) fail "full: partial without saying the disk: '$reason'" ;;
esac
exact full
grep -q "trace 'full'.*not stored, counted as dropped: cannot write its journal in .*No space left on device" \
    "$TMP/weftd.log" || fail "full: weftd did not log the lost batches"
run_demo after -- -p 1 -t 2 -n 1000
wait_state after complete 60
check_archive after "$TMP/after.json"
stop_weftd
echo "(b) full while recording: partial, counted, the next trace complete"

# ---- (c) the reserve ------------------------------------------------------
W rm full after >/dev/null || fail "weft rm failed"
free=$("$PY" -c 'import os,sys; s=os.statvfs(sys.argv[1]); print(s.f_bavail*s.f_frsize)' "$MNT")
reserve=$((free - 3 * 512 * 1024))
start_weftd --grace-period 1 --set min_free_spool_bytes=$reserve \
    --set live_interval=1
# About 5.6 MiB of journals: most past the 1.5 MiB left above the
# reserve.
start_demo over -- -p 1 -t 2 -n 100000 -s 20
live=
for _ in $(seq 300); do
    if W show over --json >"$TMP/live.json" 2>/dev/null &&
        [ "$(json_get "$TMP/live.json" 'j["state"]')" = recording ] &&
        [ "$(json_get "$TMP/live.json" 'j["refused"]')" -gt 0 ]; then
        live=$(json_get "$TMP/live.json" 'j["refused"]')
        break
    fi
    kill -0 "$DEMO_PID" 2>/dev/null || break
    sleep 0.1
done
[ -n "$live" ] || fail "over: the live figures never counted refusals"
[ "$(json_get "$TMP/live.json" 'j["dropped"]')" -ge "$live" ] ||
    fail "over: live dropped below live refused"
finish_demo over
wait_state over partial 60
reason=$(json_get "$TMP/show.json" 'j.get("error")')
case "$reason" in
*"events refused (dropped): the spool's file system was short of room (min_free_spool_bytes)"*) ;;
*) fail "over: partial without saying the reserve: '$reason'" ;;
esac
exact over
locdropped=$(json_get "$TMP/show.json" 'sum(l["dropped"] for l in j["locations"])')
[ "$locdropped" -eq "$(json_get "$TMP/show.json" 'j["dropped"]')" ] ||
    fail "over: its locations count $locdropped dropped, the trace $(json_get "$TMP/show.json" 'j["dropped"]')"
grep -q "trace 'over'.*batch .* refused .*its next ones while over min_free_spool_bytes: .*the spool's file system.* has [0-9]* bytes free.*min_free_spool_bytes.*$reserve" \
    "$TMP/weftd.log" || fail "over: weftd did not log the refusal naming the limit"
stop_weftd
echo "(c) past the reserve: $live refused while recording, partial, counted"

# A reserve above what is free: a new trace is refused naming it.
start_weftd --grace-period 1 --set min_free_spool_bytes=64M
run_demo next -- -p 1 -t 1 -n 10
grep -q "min_free_spool_bytes" "$TMP/next.out" ||
    fail "next: the program was not told of the reserve: $(cat "$TMP/next.out")"
W show next >/dev/null 2>&1 && fail "next: a trace was made below the reserve"
stop_weftd
echo "(c) below the reserve: a new trace refused"
echo PASS

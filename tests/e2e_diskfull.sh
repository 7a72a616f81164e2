#!/bin/bash
# e2e_diskfull.sh - a full disk never takes weftd down (issue #11). The
# spool is an 8 MiB tmpfs:
#   (a) it fills during a conversion: the conversion fails cleanly (the
#       trace failed with the reason, journals kept, no partial archive),
#       weftd stays up, retries, and succeeds once there is room; the
#       catalog says when it retries, and weft wait waits through it;
#   (b) the archive directory is not writable (a read-only mount): the
#       conversion fails and is retried after the cause is gone, without
#       a restart;
#   (c) it fills while a trace is recorded: what was acknowledged is
#       converted once there is room, without a restart, or counted as
#       refused by weftd (batches whose journal writes failed, #30);
#   (d) weftd starts on a full disk and serves once there is room.
# Needs root (mount); prints SKIP and exits 77 otherwise.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: mounting a tmpfs needs root"
    exit 77
fi
MNT="$TMP/full"
RO=
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=8m tmpfs "$MNT" 2>/dev/null; then
    echo "SKIP: mount -t tmpfs is not permitted here"
    exit 77
fi
cleanup_full() {
    kill_weftd
    [ -n "$RO" ] && umount -l "$RO" 2>/dev/null
    umount -l "$MNT" 2>/dev/null
    cleanup
}
trap cleanup_full EXIT
SPOOL="$MNT/spool"
W() { "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }
DEMO_TIMEOUT=60

# state_of TRACE: its state in the catalog ("" if not there); leaves
# `weft show --json` in $TMP/show.json.
state_of() {
    W show "$1" --json >"$TMP/show.json" 2>/dev/null &&
        json_get "$TMP/show.json" 'j["state"]'
}

# await TRACE STATE SECONDS: waits for STATE whatever the states between.
await() {
    for _ in $(seq $(($3 * 10))); do
        [ "$(state_of "$1")" = "$2" ] && return 0
        kill -0 "$WEFTD_PID" 2>/dev/null || fail "$1: weftd died"
        sleep 0.1
    done
    fail "$1: not $2 after $3 s (state: $(state_of "$1"))"
}

# fill: takes every free byte of the tmpfs.
fill() {
    dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null
    sync
}

# ---- (a) full during a conversion ---------------------------------------
start_weftd --grace-period 1 --set min_free_spool_bytes=0
# About 5.6 MiB of journals: they fit, the archive does not.
run_demo big -- -p 1 -t 2 -n 100000
await big failed 60
error=$(json_get "$TMP/show.json" 'j["error"]')
case "$error" in
*"No space left on device"*) ;;
*) fail "big: failed without saying why: '$error'" ;;
esac
sent=$("$PY" -c 'import json,sys; print(sum(n for v in json.load(open(sys.argv[1])).values() for k, n in v.items() if k != "dropped"))' "$TMP/big.json")
held=$(json_get "$TMP/show.json" 'j["events"]')
[ "$held" -eq "$sent" ] ||
    fail "big: failed with $held events catalogued, the journals hold $sent"
dir=$(dirname "$(json_get "$TMP/show.json" 'j["path"]')")
[ -s "$dir/rank-0.wj" ] || fail "big: the journal is gone"
[ -z "$(find "$dir/archive" -type f 2>/dev/null)" ] ||
    fail "big: a partial archive was left: $(find "$dir/archive" -type f | head -3)"
grep -q "trace 'big' .*conversion failed: .*No space left on device.*trying again in" \
    "$TMP/weftd.log" || fail "big: the log does not say it will retry"
kill -0 "$WEFTD_PID" || fail "big: weftd died"
# The catalog says when weftd tries again, and weft wait, started while
# the trace is failed, waits for that attempt rather than exiting 4.
W show big --json >"$TMP/show.json"
retry_at=$(json_get "$TMP/show.json" 'j["retry_at"]')
[ "$retry_at" != None ] && [ "$retry_at" -ge "$(($(date +%s) - 5))" ] ||
    fail "big: failed for a full disk without a retry time: $retry_at"
W wait big --timeout 120 2>"$TMP/wait.err" &
waiter=$!
sleep 1
kill -0 "$waiter" 2>/dev/null ||
    fail "big: weft wait returned at a failure weftd retries: $(cat "$TMP/wait.err")"
mount -o remount,size=64m "$MNT" || fail "cannot remount with room"
await big complete 60
wait_gone "$waiter" 30 || { kill "$waiter"; fail "big: weft wait still waits"; }
wait "$waiter" || fail "big: weft wait exited $? for a trace now complete: $(cat "$TMP/wait.err")"
[ "$(W show big --json | json_get /dev/stdin 'j["retry_at"]')" = None ] ||
    fail "big: complete, still with a retry time"
check_archive big "$TMP/big.json"
[ ! -e "$dir/rank-0.wj" ] || fail "big: the journal stayed after the archive"
echo "(a) full during conversion: failed cleanly, retried, complete"

# ---- (b) an archive directory that cannot be written --------------------
start_demo ro -- -p 1 -t 1 -n 40 -s 100000
for _ in $(seq 100); do
    dir=$(ls -d "$SPOOL"/traces/ro-* 2>/dev/null | head -1)
    [ -n "$dir" ] && break
    sleep 0.05
done
[ -n "$dir" ] || fail "ro: no trace directory"
mkdir -p "$dir/archive"
mount -t tmpfs -o ro,size=1m tmpfs "$dir/archive" || fail "ro: cannot mount"
RO="$dir/archive"
finish_demo ro
await ro failed 30
case "$(json_get "$TMP/show.json" 'j["error"]')" in
*"read only"*|*"Read-only"*) ;;
*) fail "ro: failed without saying why: $(json_get "$TMP/show.json" 'j["error"]')" ;;
esac
umount "$RO" || fail "ro: cannot unmount"
RO=
await ro complete 60
check_archive ro "$TMP/ro.json"
echo "(b) unwritable archive directory: failed, retried once writable, complete"

# ---- (c) full while recording ---------------------------------------------
start_demo ingest WEFT_STALL_MS=1000 -- -p 1 -t 2 -n 400 -s 5000
# Full once the stream is under way (on a loaded machine 0.5 s may pass
# before the first Hello: the trace then never joins, and has no row).
wait_journal ingest 1k
fill
wait "$DEMO_PID"
DEMO_PID=
kill -0 "$WEFTD_PID" || fail "ingest: weftd died"
# weftd refused every reconnection at once while the disk was full: libweft
# backed off (up to 2 s between attempts) instead of reconnecting, and
# warning, every 50 ms for the 30 s of WEFT_CLOSE_TIMEOUT_MS.
n=$(grep -c "reconnected to weftd" "$TMP/ingest.out")
[ "$n" -le 40 ] || fail "ingest: libweft reconnected $n times in 30 s"
sleep 2
kill -0 "$WEFTD_PID" || fail "ingest: weftd died"
rm -f "$MNT/filler"
for _ in $(seq 600); do
    state=$(state_of ingest)
    case "$state" in complete|partial) break ;; esac
    sleep 0.1
done
case "$state" in complete|partial) ;; *) fail "ingest: state '$state'" ;; esac
# Everything acknowledged is in the archive or counted as refused by
# weftd (its journal write failed: not stored, acknowledged, #30).
# libweft gave up on the batches weftd did not acknowledge (the clients'
# drops); weftd may have journaled some of them before the disk filled,
# their Ack lost with the connection: those may be in the archive too.
otf2-print -Werror --silent "$(json_get "$TMP/show.json" 'j["archive"]')" \
    >/dev/null || fail "ingest: otf2-print rejects the archive"
sent=$("$PY" -c 'import json,sys; print(sum(n for v in json.load(open(sys.argv[1])).values() for k, n in v.items() if k != "dropped"))' "$TMP/ingest.json")
events=$(json_get "$TMP/show.json" 'j["events"]')
refused=$(json_get "$TMP/show.json" 'j["refused"]')
clients=$(json_get "$TMP/show.json" 'j["dropped_by_clients"]')
added=$(sed -n "s/.*trace 'ingest': \([0-9]*\) Leave and Enter events added.*/\1/p" "$TMP/weftd.log" | tail -1)
left=$(sed -n "s/.*trace 'ingest': .* and \([0-9]*\) Leaves of regions not open left out.*/\1/p" "$TMP/weftd.log" | tail -1)
held=$((events - ${added:-0} + ${left:-0} + refused))
[ "$held" -ge "$sent" ] && [ "$held" -le $((sent + clients)) ] ||
    fail "ingest: $events held (${added:-0} added, ${left:-0} left out) + $refused refused is not the $sent acknowledged (+ up to $clients the client gave up on)"
echo "(c) full while recording: $state once there was room, what was acknowledged kept"

# ---- (d) start on a full disk ---------------------------------------------
stop_weftd
# SQLite makes the catalog's -shm file when the first connection opens it
# (its last one normally removes it); without room for it the catalog
# does not open. Nothing has the catalog open: the file is only an index.
rm -f "$SPOOL/catalog.db-shm"
fill
start_weftd --grace-period 1 --set min_free_spool_bytes=0
grep -q "its file system is full: starting anyway" "$TMP/weftd.log" ||
    fail "start: no warning about the full file system"
rm -f "$MNT/filler"
DEMO_TIMEOUT=30 run_demo later -- -p 1 -t 1 -n 100
await later complete 30
check_archive later "$TMP/later.json"
stop_weftd
echo "(d) started on a full disk, served once there was room"
echo ok

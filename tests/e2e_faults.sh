#!/bin/bash
# e2e_faults.sh - weftd under faults:
#  (a) SIGKILLed at 20 random points while 4 processes x 2 threads stream,
#      restarted each time on the same spool and port: libweft reconnects
#      and resends, and the archive holds exactly what weft-demo recorded
#      (nothing acknowledged lost, nothing duplicated);
#  (b) a journal with a byte flipped inside an early entry (see there for
#      the expected outcome);
#  (c) the spool's file system full (a 2 MiB tmpfs, min_free_spool_bytes
#      0; skipped if mount is not permitted): weftd names the journal and
#      ENOSPC, counts the batches it could not store as refused (#30;
#      e2e_diskfree.sh checks the figures exactly), keeps running, marks
#      nothing complete that is not, and serves a new trace once there is
#      room again;
#  (d) socket activation: weftd takes its listening sockets (TCP and the
#      Unix socket, as systemd/weftd.socket lists them) from
#      systemd-socket-activate (skipped if that is not installed).
. "$(dirname "$0")/lib.sh"

MNT=
SA_PID=
# weft-demo must not give up on weftd while weftd restarts: a long
# WEFT_STALL_MS (and a timeout above it).
DEMO_TIMEOUT=80
STALL=WEFT_STALL_MS=60000

cleanup_faults() {
    [ -n "$SA_PID" ] && kill -KILL "$SA_PID" 2>/dev/null
    kill_weftd
    [ -n "$MNT" ] && umount -l "$MNT" 2>/dev/null
    cleanup
}
trap cleanup_faults EXIT

# total_dropped NAME: what weft-demo says libweft dropped, summed.
total_dropped() {
    "$PY" -c 'import json,sys; print(sum(c["dropped"] for c in json.load(open(sys.argv[1])).values()))' \
        "$TMP/$1.json"
}

# check_exact NAME: the complete trace's archive passes otf2-print and
# holds exactly the demo's report.
check_exact() {
    wait_state "$1" complete 60
    check_archive "$1" "$TMP/$1.json"
    [ "$(total_dropped "$1")" -eq 0 ] || fail "$1: libweft dropped records"
}

T0=$(date +%s)

# ---- (a) 20 SIGKILLs at random points while 8 threads stream -------------
start_weftd
PORT=${WEFT_SERVER##*:}
start_demo kills "$STALL" -- -p 4 -t 2 -n 4000 -s 3000
wait_journal kills 4k
kills=0
while [ "$kills" -lt 20 ]; do
    sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
    kill -0 "$DEMO_PID" 2>/dev/null ||
        fail "kills: weft-demo ended after only $kills kills: $(cat "$TMP/kills.out")"
    kill_weftd
    kills=$((kills + 1))
    start_weftd_at "$PORT"
done
finish_demo kills
grep -q "reconnected to weftd" "$TMP/kills.out" ||
    fail "kills: no reconnection in $(cat "$TMP/kills.out")"
check_exact kills
echo "(a) weftd SIGKILLed $kills times mid-stream: exact ($(($(date +%s) - T0)) s)"

# ---- (b) a byte flipped inside an early journal entry ----------------------
# Damage with acknowledged entries after it is not a torn tail: weftd keeps
# the journal as it is, logs it, and converts the trace at once; the
# conversion stops at the bad entry and the catalog says failed, naming the
# journal and the offset. weftd keeps running.
start_demo corrupt "$STALL" -- -p 2 -t 1 -n 3000 -s 1500
wait_journal corrupt 24k rank-0.wj # the journal whose byte is flipped
kill_weftd
{ kill -KILL -- "-$DEMO_PID"; wait "$DEMO_PID"; } 2>/dev/null
DEMO_PID=
journal=$(ls "$SPOOL"/traces/corrupt-*/rank-0.wj)
flipped=$("$PY" - "$journal" <<'EOF2'
import struct, sys
# Entries after the 8-byte magic: u32 payload length, 32 more header
# bytes, payload. Flip a byte in the middle of the 4th entry's payload.
with open(sys.argv[1], "r+b") as f:
    data = f.read()
    off = 8
    for _ in range(3):
        off += 36 + struct.unpack_from("<I", data, off)[0]
    length = struct.unpack_from("<I", data, off)[0]
    at = off + 36 + length // 2
    assert at + 36 < len(data), "journal too short"
    f.seek(at)
    f.write(bytes([data[at] ^ 0xFF]))
    print(at)
EOF2
) || fail "corrupt: cannot flip a byte in $journal"
start_weftd_at "$PORT" --grace-period 1
state=
for _ in $(seq 300); do
    if "$WEFT" --catalog "$SPOOL/catalog.db" show corrupt --json \
            >"$TMP/show.json" 2>/dev/null; then
        state=$(json_get "$TMP/show.json" 'j["state"]')
        case "$state" in partial|failed|complete) break;; esac
    fi
    sleep 0.1
done
kill -0 "$WEFTD_PID" 2>/dev/null || fail "corrupt: weftd died"
case "$state" in
failed)
    err=$(json_get "$TMP/show.json" 'j.get("error")')
    case "$err" in *rank-0.wj*offset*) ;;
        *) fail "corrupt: the error does not name the journal and offset: $err";; esac
    grep -q "recovery: $journal: a corrupt entry" "$TMP/weftd.log" ||
        fail "corrupt: the log does not name $journal"
    [ -f "$journal" ] || fail "corrupt: the damaged journal was removed"
    echo "(b) byte flipped at offset $flipped of rank-0.wj: trace failed: $err"
    ;;
*)  fail "corrupt: trace is '${state:-not in catalog}', expected failed";;
esac
stop_weftd

# ---- (c) the spool's file system full ----------------------------------------
MNT="$TMP/full"
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null; then
    MNT=
    echo "(c) skipped: mount -t tmpfs is not permitted here"
else
    SPOOL="$MNT/spool"
    start_weftd --grace-period 2 --set min_free_spool_bytes=0
    DEMO_TIMEOUT=60 run_demo full WEFT_STALL_MS=1000 -- -p 2 -t 2 -n 20000
    grep -q "trace 'full'.* not stored, counted as dropped: cannot write its journal in $SPOOL/traces/full-.*: No space left on device" \
        "$TMP/weftd.log" || fail "full: the log does not name the journal and ENOSPC"
    sleep 3
    kill -0 "$WEFTD_PID" 2>/dev/null || fail "full: weftd died"
    if "$WEFT" --catalog "$SPOOL/catalog.db" show full --json >"$TMP/show.json" 2>/dev/null; then
        [ "$(json_get "$TMP/show.json" 'j["state"]')" != complete ] ||
            fail "full: an incomplete trace is marked complete"
    fi
    mount -o remount,size=64m "$MNT" || fail "full: cannot remount with room"
    DEMO_TIMEOUT=20 run_demo after -- -p 1 -t 1 -n 100
    check_exact after
    # What weftd acknowledged is in the journals: a restart converts it.
    # A conversion tried on the full disk left it failed (and retried,
    # e2e_diskfull.sh): until the restarted weftd converts it again.
    stop_weftd
    start_weftd --grace-period 1 --set min_free_spool_bytes=0
    WAIT_THROUGH=failed wait_state full partial 30
    dropped=$(json_get "$TMP/show.json" 'j["refused"]')
    [ "$dropped" -gt 0 ] || fail "full: 2 MiB held the whole run (nothing refused)"
    otf2-print -Werror --silent "$(json_get "$TMP/show.json" 'j["archive"]')" >/dev/null ||
        fail "full: otf2-print rejects the archive"
    stop_weftd
    umount "$MNT" || fail "cannot unmount $MNT"
    MNT=
    SPOOL="$TMP/spool"
    echo "(c) spool full: $dropped records refused and counted, acknowledged ones kept; weftd served a new trace after remount"
fi

# ---- (d) socket activation ---------------------------------------------------
if ! command -v systemd-socket-activate >/dev/null; then
    echo "(d) skipped: systemd-socket-activate not found"
else
    sa_port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    rm -f "$TMP/addr"
    auth_args
    # both sockets of systemd/weftd.socket: TCP, and the Unix socket in
    # the spool that traced processes of the host use by default
    systemd-socket-activate -l "127.0.0.1:$sa_port" -l "$TMP/sa.sock" \
        "$WEFTD" --spool "$SPOOL" --listen 127.0.0.1:1 \
        --socket "$TMP/bound.sock" --address-file "$TMP/addr" \
        "${AUTH_ARGS[@]}" >>"$TMP/weftd.log" 2>&1 &
    SA_PID=$!
    # The socket listens before weftd runs: the first client starts it.
    for _ in $(seq 50); do
        "$PY" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' \
            "$sa_port" 2>/dev/null && break
        sleep 0.1
    done
    DEMO_TIMEOUT=20 run_demo activated WEFT_SERVER="127.0.0.1:$sa_port" -- \
        -p 2 -t 1 -n 200
    check_exact activated
    grep -q "listening on 127.0.0.1:$sa_port (fd 3 from systemd socket activation)" \
        "$TMP/weftd.log" || fail "activated: weftd did not take the socket from systemd"
    grep -q "cannot listen on 127.0.0.1:1" "$TMP/weftd.log" &&
        fail "activated: weftd bound --listen too"
    [ "$(cat "$TMP/addr")" = "127.0.0.1:$sa_port" ] ||
        fail "activated: address file says $(cat "$TMP/addr")"
    DEMO_TIMEOUT=20 run_demo activated-unix WEFT_SERVER="unix:$TMP/sa.sock" \
        -- -p 2 -t 1 -n 200
    check_exact activated-unix
    grep -q "listening on unix:$TMP/sa.sock (fd 4 from systemd socket activation)" \
        "$TMP/weftd.log" || fail "activated: weftd did not take the Unix socket from systemd"
    grep -q "peer unix:pid [0-9]* uid 0 trace 'activated-unix'" "$TMP/weftd.log" ||
        fail "activated: the Unix socket's clients are not known by SO_PEERCRED"
    [ -e "$TMP/bound.sock" ] && fail "activated: weftd bound --socket too"
    # systemd-socket-activate execs weftd: same pid.
    WEFTD_PID=$SA_PID
    SA_PID=
    stop_weftd
    [ -S "$TMP/sa.sock" ] || fail "weftd removed systemd's socket at its stop"
    echo "(d) socket activation: weftd took 127.0.0.1:$sa_port and $TMP/sa.sock from systemd-socket-activate"
fi

echo "ok ($(($(date +%s) - T0)) s)"

#!/bin/bash
# e2e_limits.sh - the global limits of weftd with real clients:
# max_buffered at its smallest (64k) while 4 processes x 2 threads stream
# big batches: weftd pauses connections (counted in the status file) and
# the archive is still exact; idle_timeout closes a connection that never
# says Hello, naming the limit, while a client that is connected but quiet
# for longer than the timeout keeps its connection and finishes; a
# max_frame below libweft's largest batch caps the batches (HelloAck);
# listen_backlog bounds the connections the kernel queues for weftd.
. "$(dirname "$0")/lib.sh"

start_weftd --set max_buffered=64k --set idle_timeout=1
# 256k buffers: each batch frame is bigger than max_buffered, so every
# frame in flight beyond the first waits. 40000 rounds make about 1 MB
# per thread (4 frames each), so frames of the 4 connections overlap
# however fast weftd journals them (with 3000 rounds each thread sent
# one frame, and a fast weftd could take them one after the other).
WEFT_TRACE=buffered WEFT_BUFFER_SIZE=256k timeout 120 "$DEMO" -p 4 -t 2 -n 40000 \
    --report "$TMP/report.json" >"$TMP/demo.out" 2>&1 ||
    { cat "$TMP/demo.out" >&2; fail "weft-demo failed under max_buffered"; }
wait_state buffered complete 120
archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
otf2-print -Werror --silent "$archive" || fail "otf2-print rejects $archive"
summary=$("$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json") ||
    fail "archive does not match what weft-demo recorded under max_buffered"
expected=$(json_get "$TMP/report.json" 'sum(sum(k.values()) for k in j.values())')
[ "$(echo "$summary" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["events"])')" -eq "$expected" ] ||
    fail "archive event count differs from the demo's ($expected)"
grep -q "max_buffered is 65536: reading paused" "$TMP/weftd.log" ||
    fail "max_buffered was never reached (the test does not test it)"

# idle_timeout: a connection that says nothing; the quiet client is a
# weft-demo that sleeps 1 s after each of its 3 rounds and ships nothing
# before it closes (no periodic flush): about 3 s of silence after Hello.
exec 3<>"/dev/tcp/${WEFT_SERVER%:*}/${WEFT_SERVER##*:}" || fail "cannot connect"
WEFT_TRACE=quiet WEFT_FLUSH_MS=0 timeout 60 "$DEMO" -p 1 -t 1 -n 3 -s 1000000 \
    --report "$TMP/quiet.json" >"$TMP/quiet.out" 2>&1 ||
    { cat "$TMP/quiet.out" >&2; fail "a quiet client failed with idle_timeout = 1"; }
grep -q "lost the connection" "$TMP/quiet.out" &&
    fail "idle_timeout closed a connected, quiet client: $(cat "$TMP/quiet.out")"
wait_state quiet complete 60
grep -q "refused: idle_timeout: no Hello within 1 s" "$TMP/weftd.log" ||
    fail "the silent connection was not closed for idle_timeout"
# weftd's Error frame reached the silent peer before the close.
timeout 5 cat <&3 >"$TMP/silent.bin" || true
grep -q "idle_timeout" "$TMP/silent.bin" || fail "the silent peer got no Error frame"
exec 3>&-

sleep 1.5 # the status file is rewritten once a second
status=$(ls "$SPOOL"/weftd.status) || fail "no status file"
[ "$(json_get "$status" 'j["limits_reached"]["max_buffered"]')" -ge 1 ] ||
    fail "status does not count max_buffered: $(cat "$status")"
[ "$(json_get "$status" 'j["limits_reached"]["idle_timeout"]')" -eq 1 ] ||
    fail "status does not count idle_timeout: $(cat "$status")"
out=$("$WEFT" --catalog "$SPOOL/catalog.db" status) || fail "weft status failed"
echo "$out"
echo "$out" | grep -q "limits reached: .*max_buffered [1-9].*idle_timeout 1" ||
    fail "weft status does not show the limits reached"
echo "$out" | grep -q "buffered: .*max_buffered 65536" ||
    fail "weft status does not show max_buffered"
stop_weftd

# max_frame below libweft's largest batch (WEFT_BUFFER_SIZE, 4092k by
# default): the HelloAck says it, and threads that fill their buffers fast
# (which grow them) ship batches of at most max_frame less 4 KiB; none is
# refused and the archive is exact. (30000 rounds are about 1 MB a
# thread: its buffers reach the cap after 192 KiB.)
start_weftd --set max_frame=200k
WEFT_TRACE=framed timeout 120 "$DEMO" -p 2 -t 2 -n 30000 \
    --report "$TMP/framed.json" >"$TMP/framed.out" 2>&1 ||
    { cat "$TMP/framed.out" >&2; fail "weft-demo failed under max_frame = 200k"; }
wait_state framed complete 120
grep -q "exceeds max_frame" "$TMP/weftd.log" &&
    fail "a batch exceeded max_frame: $(grep "exceeds max_frame" "$TMP/weftd.log" | head -n 1)"
archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/framed.json" >/dev/null ||
    fail "archive does not match what weft-demo recorded under max_frame = 200k"
stop_weftd

# listen_backlog: while weftd is stopped (SIGSTOP) 40 processes connect
# at once. With listen_backlog = 4 the kernel completes about 5 of them
# and drops the others' requests (they are retried a second later); with
# the default (4096) all 40 complete at once. A listen_backlog above
# net.core.somaxconn is said at start.
# burst N: connects N sockets without blocking while weftd is stopped,
# prints how many were established within 0.5 s, closes them.
burst() {
    kill -STOP "$WEFTD_PID"
    "$PY" - "$WEFT_SERVER" "$1" <<'PY'
import select, socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
socks = []
for _ in range(int(sys.argv[2])):
    s = socket.socket()
    s.setblocking(False)
    s.connect_ex((host, int(port)))
    socks.append(s)
time.sleep(0.5)
_, w, _ = select.select([], socks, [], 0)
print(sum(1 for s in w if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0))
for s in socks:
    s.close()
PY
    kill -CONT "$WEFTD_PID"
}
start_weftd --set listen_backlog=4
done4=$(burst 40) || fail "the connection burst failed"
stop_weftd
start_weftd
done_default=$(burst 40) || fail "the connection burst failed"
echo "listen_backlog: 40 connections at once: $done4 established at 4, $done_default at the default"
[ "$done4" -ge 1 ] && [ "$done4" -le 8 ] ||
    fail "listen_backlog = 4 let $done4 of 40 connections complete"
[ "$done_default" -eq 40 ] ||
    fail "the default listen_backlog let $done_default of 40 connections complete"
stop_weftd
somax=$(cat /proc/sys/net/core/somaxconn)
if [ "$somax" -lt 65535 ]; then
    start_weftd --set listen_backlog=65535
    grep -q "listen_backlog = 65535, but the kernel queues at most net.core.somaxconn = $somax" \
        "$TMP/weftd.log" || fail "weftd did not say somaxconn caps listen_backlog"
    stop_weftd
fi
echo ok

#!/bin/bash
# e2e_shutdown.sh - SIGTERM while 4 processes x 2 threads stream and one
# peer is stuck in the middle of a frame: weftd stops accepting, lets the
# clients' frames in progress finish (journaled and acked), says so, and
# exits 0 within shutdown_timeout although the stuck peer never finishes.
# Restarted on the same spool and port, it takes the clients back and the
# archive holds exactly what they recorded: nothing acknowledged was lost.
# Then SIGTERM during a long conversion: exit 0 at shutdown_timeout, and
# the conversion is done again at the next start.
. "$(dirname "$0")/lib.sh"

start_weftd --set shutdown_timeout=3
port=${WEFT_SERVER##*:}
# Stuck: a frame header announcing 100 bytes, then 1 byte of it.
exec 3<>"/dev/tcp/${WEFT_SERVER%:*}/$port" || fail "cannot connect"
printf '\0\0\0\144\012' >&3
start_demo stopped -- -p 4 -t 2 -n 4000 -s 500
for _ in $(seq 100); do
    grep -q "4 of 4 members" "$TMP/weftd.log" && break
    sleep 0.1
done
grep -q "4 of 4 members" "$TMP/weftd.log" || fail "the clients did not join"
sleep 0.5 # streaming

kill -TERM "$WEFTD_PID"
start=$(date +%s)
wait_gone "$WEFTD_PID" 10 || fail "weftd still runs 10 s after SIGTERM (shutdown_timeout = 3)"
wait "$WEFTD_PID"
rc=$?
took=$(( $(date +%s) - start ))
WEFTD_PID=
[ "$rc" -eq 0 ] || fail "weftd exited with status $rc after SIGTERM"
echo "weftd exited 0 ${took} s after SIGTERM"
grep -q "SIGTERM: stopping: no new connections" "$TMP/weftd.log" ||
    fail "weftd did not say it was stopping"
grep -q "shutdown_timeout (3 s) reached: closing 1 connections" "$TMP/weftd.log" ||
    fail "the stuck peer was not closed at shutdown_timeout"
grep -q "stopped" "$TMP/weftd.log" || fail "no 'stopped' in the log"
exec 3>&-
kill -0 "$DEMO_PID" 2>/dev/null || fail "the demo ended while weftd was down (too short to test)"

start_weftd_at "$port"
finish_demo stopped
grep -q "reconnected to weftd" "$TMP/stopped.out" || fail "the clients did not reconnect: $(cat "$TMP/stopped.out")"
wait_state stopped complete 120
[ "$(json_get "$TMP/stopped.json" 'sum(k["dropped"] for k in j.values())')" -eq 0 ] ||
    fail "clients dropped records: $(cat "$TMP/stopped.json")"
check_archive stopped "$TMP/stopped.json"
[ "$(json_get "$TMP/show.json" 'j["members"]')" -eq 4 ] || fail "members is not 4"
stop_weftd

# SIGTERM during a long conversion (2000 locations): weftd still exits 0
# at shutdown_timeout, and the next start converts the trace again.
start_weftd_at "$port" --set shutdown_timeout=1
run_demo converting -- -p 2 -t 1000 -n 50
for _ in $(seq 100); do
    grep -q "trace 'converting': all 2 members done, converting" "$TMP/weftd.log" && break
    sleep 0.1
done
kill -TERM "$WEFTD_PID"
wait_gone "$WEFTD_PID" 5 || fail "weftd still converts 5 s after SIGTERM (shutdown_timeout = 1)"
wait "$WEFTD_PID" || fail "weftd exited with status $? during a conversion"
WEFTD_PID=
if grep -q "exiting with 1 jobs unfinished" "$TMP/weftd.log"; then
    echo "the conversion was interrupted; converting again"
    start_weftd_at "$port"
fi
wait_state converting complete 120
check_archive converting "$TMP/converting.json"
[ -n "$WEFTD_PID" ] && stop_weftd
echo ok

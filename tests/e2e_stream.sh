#!/bin/bash
# e2e_stream.sh - weftd writes a trace's archive while it records (issue
# #33):
#  (a) while weft-demo's 2 processes x 2 threads still run, event files
#      are already in the trace's archive directory; once it ends,
#      weftd says both processes were written while it recorded, and the
#      archive holds exactly what weft-demo recorded;
#  (b) weftd SIGKILLed 10 times at random points around a trace's end
#      (while its last batches are streamed, during the conversion that
#      finishes the archive, during the catalog commit), restarted on the
#      same spool and port each time: every trace is complete and exact;
#  (c) with write_while_recording = no, nothing is written before the end
#      (weftd says 0 processes), and the archive is exact all the same.
. "$(dirname "$0")/lib.sh"

DEMO_TIMEOUT=80
STALL=WEFT_STALL_MS=60000
trap 'kill_weftd; cleanup' EXIT

# check_exact NAME: complete, passes otf2-print, exactly the demo's report.
check_exact() {
    wait_state "$1" complete 60
    check_archive "$1" "$TMP/$1.json"
}

# ---- (a) event files while it records ------------------------------------
start_weftd
start_demo live -- -p 2 -t 2 -n 30000 -s 100
seen=
for _ in $(seq 400); do
    kill -0 "$DEMO_PID" 2>/dev/null || break
    # (libotf2 makes a location's file at its first flush and writes to
    # it 4 MiB at a time: it may still be empty)
    evt=$(find "$SPOOL/traces" -path "*/live-*/archive/traces/*.evt" \
          2>/dev/null | wc -l)
    if [ "$evt" -ge 1 ] && kill -0 "$DEMO_PID" 2>/dev/null; then
        seen=$evt
        break
    fi
    sleep 0.05
done
[ -n "$seen" ] || fail "live: no event file written while weft-demo ran"
finish_demo live
check_exact live
grep -q "trace 'live' complete: .*(2 of 2 processes written while it recorded)" \
    "$TMP/weftd.log" ||
    fail "live: weftd does not say it wrote both processes while recording: $(grep "trace 'live'" "$TMP/weftd.log" | tail -3)"
echo "(a) $seen event files while weft-demo ran; exact"

# ---- (b) SIGKILLs around the end ------------------------------------------
PORT=${WEFT_SERVER##*:}
for i in $(seq 10); do
    start_demo "end$i" "$STALL" -- -p 2 -t 2 -n 3000 -s 200
    # both processes past their first connection (one that fails runs
    # untraced), then while it streams, or after: in the conversion,
    # the commit
    for _ in $(seq 200); do
        [ "$(find "$SPOOL/traces" -path "*/end$i-*" -name "rank-*.wj" \
              -size +2k 2>/dev/null | wc -l)" -ge 2 ] && break
        sleep 0.05
    done
    sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
    kill_weftd
    start_weftd_at "$PORT"
    finish_demo "end$i"
    check_exact "end$i"
done
echo "(b) 10 SIGKILLs around a trace's end: every trace exact"

# ---- (c) write_while_recording = no ---------------------------------------
kill_weftd
start_weftd_at "$PORT" --set write_while_recording=no
start_demo atend -- -p 2 -t 2 -n 20000 -s 100
wait_journal atend 64k
[ -z "$(find "$SPOOL/traces" -path "*/atend-*/archive/*" 2>/dev/null)" ] ||
    fail "atend: an archive while recording with write_while_recording = no"
finish_demo atend
check_exact atend
grep -q "trace 'atend' complete: .*(0 of 2 processes written while it recorded)" \
    "$TMP/weftd.log" || fail "atend: weftd does not say it wrote nothing while recording"
echo "(c) write_while_recording = no: written at the end, exact"

#!/bin/bash
# e2e_manylocs.sh - file descriptors: weftd raises its soft RLIMIT_NOFILE
# to the hard limit and says so; near the limit it refuses connections
# with an Error naming it (rather than failing accept in a loop) and goes
# on serving; and a trace of 3000 locations is converted with only 128
# descriptors (libotf2 does not keep one open per location) and within
# convert_memory = 32M: 32 locations written at once, in groups, one pass
# over a process's journal each; its weft report has a timeline row per
# location and stays small.
. "$(dirname "$0")/lib.sh"

real_weftd=$WEFTD
WEFTD="$TMP/weftd-ulimit"
printf '#!/bin/bash\nulimit -Sn 100 && ulimit -Hn 128 && exec "%s" "$@"\n' \
    "$real_weftd" >"$WEFTD"
chmod +x "$WEFTD"
start_weftd --set idle_timeout=1 --set convert_memory=32M
grep -q "file descriptors: limit 128, raised from the soft limit" "$TMP/weftd.log" ||
    fail "weftd did not raise its soft descriptor limit to the hard one"
grep -q "max_connections = 4096 needs about 8288 file descriptors, the limit is 128" \
    "$TMP/weftd.log" || fail "weftd did not warn that max_connections exceeds the fd limit"

# 80 idle connections: each would need 2 descriptors, 96 are kept free
# (64, and 2 for each of the 16 reserved_connections).
# Those refused get an Error at once, the others one for idle_timeout.
host=${WEFT_SERVER%:*} port=${WEFT_SERVER##*:}
fds=()
for i in $(seq 80); do
    exec {fd}<>"/dev/tcp/$host/$port" || fail "connect $i failed"
    fds+=("$fd")
done
refused=0
for fd in "${fds[@]}"; do
    if timeout 10 head -c 300 <&"$fd" 2>/dev/null | grep -q "near its file descriptor limit"; then
        refused=$((refused + 1))
    fi
done
echo "$refused of 80 connections refused near the descriptor limit"
[ "$refused" -gt 0 ] || fail "no connection was refused near the descriptor limit"
[ "$refused" -lt 80 ] || fail "every connection was refused"
for fd in "${fds[@]}"; do exec {fd}>&-; done
kill -0 "$WEFTD_PID" || fail "weftd died near its descriptor limit"

# 3 processes x 1000 threads: 3000 locations, one archive.
for _ in $(seq 50); do # the idle connections' slots free asynchronously
    grep -q "connections: 0" <("$WEFT" --catalog "$SPOOL/catalog.db" status 2>/dev/null) && break
    sleep 0.1
done
SECONDS=0
WEFT_TRACE=many timeout 300 "$DEMO" -p 3 -t 1000 -n 5 --report "$TMP/report.json" \
    >"$TMP/demo.out" 2>&1 || { cat "$TMP/demo.out" >&2; fail "weft-demo failed"; }
wait_state many complete 300
echo "3000 locations recorded and converted in $SECONDS s"
[ "$(json_get "$TMP/show.json" 'j["location_count"]')" -eq 3000 ] ||
    fail "expected 3000 locations in the catalog"
archive=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
otf2-print -Werror --silent "$archive" || fail "otf2-print rejects $archive"
"$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" >/dev/null ||
    fail "the 3000-location archive does not match what weft-demo recorded"
# weft report of 3000 locations: a timeline row each, a page of a few MB
# at most (its time is bench/report's to measure, not a test's).
SECONDS=0
"$WEFT" --catalog "$SPOOL/catalog.db" report many -o "$TMP/many.html" >/dev/null ||
    fail "weft report of 3000 locations failed"
size=$(stat -c %s "$TMP/many.html")
rows=$(grep -o '"runs": *\[' "$TMP/many.html" | wc -l)
echo "report of 3000 locations: $size bytes, $rows timeline rows, $SECONDS s"
[ "$rows" -eq 3000 ] || fail "the report has $rows timeline rows, not 3000"
[ "$size" -lt $((4 << 20)) ] || fail "the report of 3000 locations is $size bytes"
line=$(grep "trace 'many': convert_memory allows 32 locations written at once" \
    "$TMP/weftd.log") || fail "weftd did not say the conversion went in groups"
echo "$line"
passes=$(sed -n 's/.*: \([0-9]*\) passes over 3 journals.*/\1/p' <<<"$line")
peak=$(sed -n 's/.*at most \([0-9]*\) event writers open.*/\1/p' <<<"$line")
[ "$passes" -ge 94 ] || fail "3000 locations 32 at a time need 94 passes, not '$passes'"
[ "$peak" -ge 1 ] && [ "$peak" -le 32 ] ||
    fail "convert_memory = 32M allows 32 event writers open, $peak were"
sleep 1.2 # the status file is rewritten once a second
[ "$(json_get "$SPOOL/weftd.status" 'j["limits_reached"]["fd_limit"]')" -eq "$refused" ] ||
    fail "status does not count the refusals: $(cat "$SPOOL/weftd.status")"
stop_weftd
echo ok

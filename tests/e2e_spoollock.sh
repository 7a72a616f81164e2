#!/bin/bash
# e2e_spoollock.sh - one weftd per spool (issue #11): a second weftd on a
# spool that a running weftd uses refuses to start, names the spool and
# the pid holding it, and touches nothing: the first's trace ends exact.
# The lock dies with its holder: after SIGKILL a new weftd starts at once.
. "$(dirname "$0")/lib.sh"

start_weftd
first=$WEFTD_PID
timeout 20 "$RAWPEER" "$WEFT_SERVER" first-half "held run" ||
    fail "first half not acked"
wait_state "held run" recording

# The second weftd either exits or starts listening; it must exit.
"$WEFTD" --listen 127.0.0.1:0 --spool "$SPOOL" --address-file "$TMP/addr2" \
    --log-level debug >"$TMP/second.log" 2>&1 &
second=$!
for _ in $(seq 1000); do
    kill -0 "$second" 2>/dev/null || break
    [ -s "$TMP/addr2" ] && break
    sleep 0.1
done
if [ -s "$TMP/addr2" ] || kill -0 "$second" 2>/dev/null; then
    kill -KILL "$second" 2>/dev/null
    cat "$TMP/second.log" >&2
    fail "a second weftd started on a spool in use"
fi
wait "$second"
rc=$?
[ "$rc" -ne 0 ] || fail "the refused weftd exited 0"
grep -q "spool $SPOOL is in use by weftd pid $first" "$TMP/second.log" ||
    fail "the refusal does not name the spool and pid $first: $(cat "$TMP/second.log")"
grep -q "recovery" "$TMP/second.log" && fail "the refused weftd ran recovery"

# The first weftd's trace is exact: resumed, completed, every event there.
out=$(timeout 20 "$RAWPEER" "$WEFT_SERVER" second-half "held run") ||
    fail "second half failed: $out"
[ "$out" = "definitions_seq=1 thread0_seq=1" ] ||
    fail "HelloAck says '$out', expected definitions 1 and batch 1 held"
wait_state "held run" complete 30
[ "$(json_get "$TMP/show.json" '(j["events"], len(j["locations"]))')" = "(2, 1)" ] ||
    fail "trace figures: $(cat "$TMP/show.json")"
echo '{"0.0": {"Enter": 1, "Leave": 1}}' >"$TMP/report.json"
"$PY" "$CHECK_ARCHIVE" "$(json_get "$TMP/show.json" 'j["archive"]')" \
    "$TMP/report.json" >/dev/null || fail "the archive lost or duplicated events"

# The lock file names the holder, and children do not inherit the lock.
[ "$(cut -d' ' -f1 "$SPOOL/weftd.lock")" = "$first" ] ||
    fail "lock file says '$(cat "$SPOOL/weftd.lock")', not pid $first"
for fd in /proc/"$first"/fd/*; do
    [ "$(readlink "$fd")" = "$SPOOL/weftd.lock" ] || continue
    flags=$(awk '/^flags:/ { print $2 }' /proc/"$first"/fdinfo/"${fd##*/}")
    [ $((8#$flags & 8#2000000)) -ne 0 ] || fail "the lock fd is not O_CLOEXEC"
done

# SIGKILL: the kernel drops the lock; no stale lock stops the next weftd.
kill -KILL "$first"
wait "$first" 2>/dev/null
WEFTD_PID=
start_weftd
stop_weftd
echo ok

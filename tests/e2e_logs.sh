#!/bin/bash
# e2e_logs.sh - logs a person can read (issue #11): in the foreground
# every line of weftd starts with a timestamp and its level; normal
# backpressure (a client slower than its data) is debug, not info; a
# trace name with a newline cannot forge a log line. (The journal's
# structured fields: tests/test_log and tests/e2e_journal.sh.)
. "$(dirname "$0")/lib.sh"

printf '[limits]\nmax_conn_pending = 4k\n' >"$TMP/bp.conf"
start_weftd --config "$TMP/bp.conf" --grace-period 1 --log-level info
out=$(timeout 60 "$RAWPEER" "$WEFT_SERVER" flood "flood") ||
    fail "weftd did not stop reading from a client that ignores its acks: $out"
wait_state "flood" partial 60
evil=$'evil\nweftd: error: forged line'
timeout 20 "$RAWPEER" "$WEFT_SERVER" valid "$evil" || fail "valid trace"
wait_state "$evil" complete 30
stop_weftd

n=$(grep -c "reading paused" "$TMP/weftd.log")
[ "$n" -eq 0 ] || fail "$n 'reading paused' lines at log level info"
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{4} weftd: (error|warning|info|debug): '
bad=$(grep -vcE "$stamp" "$TMP/weftd.log")
[ "$bad" -eq 0 ] || fail "$bad log lines without a timestamp and level: $(grep -vE "$stamp" "$TMP/weftd.log" | head -3)"
grep -q "^weftd: error: forged line" "$TMP/weftd.log" && fail "a trace name forged a log line"
grep -qF "trace 'evil\\nweftd: error: forged line'" "$TMP/weftd.log" ||
    fail "the trace name is not logged escaped"
echo ok

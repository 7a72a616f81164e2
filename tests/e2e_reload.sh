#!/bin/bash
# e2e_reload.sh - SIGHUP re-reads the configuration: a raised limit takes
# effect without a restart, command-line settings keep winning over the
# file, and a broken file is reported and leaves weftd running as it was;
# a lowered max_frame still takes the batches a process filled for the
# one announced to it.
# Then which file is read: --check-config names it, a missing default file
# is fine, a missing --config file is an error, --set sets any key.
# weftd runs at its `nice` value.
. "$(dirname "$0")/lib.sh"

conf="$TMP/weftd.conf"
# (preauth_timeout: the idle connection on fd 3, which never says who it
# is, stays until weft status counts it, on a slow machine too; the key
# takes effect at start only, so the later files leave it at 3600)
printf '[limits]\nmax_connections = 1\npreauth_timeout = 3600\n' >"$conf"
start_weftd --config "$conf" --grace-period 7
# weftd runs at nice 19 (the default `nice`), every thread of it (the
# suite runs at 19 too, tests/timed.sh).
want=19
for st in /proc/"$WEFTD_PID"/task/*/stat; do
    got=$(sed 's/.*) //' "$st" 2>/dev/null | cut -d' ' -f17) || continue
    [ -z "$got" ] || [ "$got" = "$want" ] ||
        fail "weftd thread $st runs at nice $got, not $want"
done
grep -q "ready: .*, nice $want" "$TMP/weftd.log" ||
    fail "weftd's log does not say it runs at nice $want: $(grep ready "$TMP/weftd.log")"
exec 3<>"/dev/tcp/${WEFT_SERVER%:*}/${WEFT_SERVER##*:}" || fail "cannot connect"
"$RAWPEER" "$WEFT_SERVER" garbage | grep -q "too many connections" ||
    fail "max_connections = 1 is not enforced"

printf '[weftd]\ngrace_period = 99\n[limits]\nmax_connections = 5\n' >"$conf"
kill -HUP "$WEFTD_PID"
for _ in $(seq 50); do grep -q "configuration reloaded" "$TMP/weftd.log" && break; sleep 0.1; done
grep -q "configuration reloaded" "$TMP/weftd.log" || fail "no reload after SIGHUP"
out=$("$RAWPEER" "$WEFT_SERVER" garbage) || fail "no answer after reload"
echo "$out" | grep -q "not a weft protocol message" ||
    fail "the raised max_connections is not in effect: $out"

printf '[limits]\nmax_connections = many\n' >"$conf"
kill -HUP "$WEFTD_PID"
for _ in $(seq 50); do grep -q "not reloaded" "$TMP/weftd.log" && break; sleep 0.1; done
grep -q "configuration not reloaded: .*weftd.conf:2: max_connections = 'many'" "$TMP/weftd.log" ||
    fail "a broken file on SIGHUP is not reported with file and line"
timeout 20 "$RAWPEER" "$WEFT_SERVER" valid "still serving" || fail "weftd stopped serving"
wait_state "still serving" complete 30

# weft status shows the live daemon (the idle connection on fd 3 among it).
sleep 1.5
out=$("$WEFT" --catalog "$SPOOL/catalog.db" status) || fail "weft status failed: $out"
echo "$out" | grep -q "pid $WEFTD_PID" || fail "weft status: $out"
echo "$out" | grep -q "connections: 1 (max_connections 5)" || fail "weft status: $out"
[ "$("$WEFT" --catalog "$SPOOL/catalog.db" status --json | "$PY" -c \
    'import json,sys; print(json.load(sys.stdin)["events"])')" -ge 2 ] ||
    fail "weft status --json does not count the events"
# The global limits reload too (max_buffered shows in the status file).
printf '[limits]\nmax_connections = 5\nmax_buffered = 1M\n' >"$conf"
kill -HUP "$WEFTD_PID"
for _ in $(seq 30); do
    [ "$(json_get "$SPOOL/weftd.status" 'j["max_buffered"]')" = 1048576 ] && break
    sleep 0.1
done
[ "$(json_get "$SPOOL/weftd.status" 'j["max_buffered"]')" = 1048576 ] ||
    fail "max_buffered was not reloaded on SIGHUP"
# Keys that take effect only at a restart: the reload says which changed.
# #30's keys counted from accept or Hello on are such keys too.
printf '[weftd]\ndurability = fsync\n[limits]\nmax_connections = 5\nmax_buffered = 1M\nlisten_backlog = 8\npreauth_timeout = 3\nmax_open_journals = 20\n' >"$conf"
kill -HUP "$WEFTD_PID"
for _ in $(seq 50); do grep -q "SIGHUP: durability" "$TMP/weftd.log" && break; sleep 0.1; done
grep -q "SIGHUP: durability, listen_backlog, max_open_journals, preauth_timeout changed in the configuration but take effect only when weftd restarts (the running values are kept)" \
    "$TMP/weftd.log" || fail "a changed durability, listen_backlog, max_open_journals and preauth_timeout are not reported on SIGHUP"
exec 3>&-

# A SIGHUP that lowers max_frame while a process streams: its threads,
# recording fast, fill batches far larger than 64 KiB (their buffers
# grow to 1 MiB and more) for the 4 MiB its HelloAck announced; weftd
# still takes those (and new connections get the lower limit): nothing
# is refused, the archive is exact. (The SIGHUP comes as the process
# joins: its 1.4 M events all come after it, and python's reader takes
# seconds, not minutes, to check them.)
WEFT_TRACE=lowered timeout 120 "$DEMO" -p 1 -t 2 -n 100000 \
    --report "$TMP/lowered.json" >"$TMP/lowered.out" 2>&1 &
demo=$!
for _ in $(seq 100); do
    grep -q "trace 'lowered' rank 0: joined" "$TMP/weftd.log" && break
    sleep 0.05
done
printf '[limits]\nmax_connections = 5\nmax_frame = 64k\n' >"$conf"
kill -HUP "$WEFTD_PID"
wait "$demo" || { cat "$TMP/lowered.out" >&2; fail "weft-demo failed across a lower max_frame"; }
wait_state lowered complete 60
grep -q "exceeds max_frame" "$TMP/weftd.log" &&
    fail "a batch filled for the announced max_frame was refused: $(grep "exceeds max_frame" "$TMP/weftd.log" | head -n 1)"
"$PY" "$CHECK_ARCHIVE" "$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2" \
    "$TMP/lowered.json" >/dev/null ||
    fail "the archive does not hold what weft-demo recorded across a lower max_frame"
WEFT_TRACE=after-lower timeout 60 "$DEMO" -p 1 -t 2 -n 100000 \
    --report "$TMP/after-lower.json" >"$TMP/after-lower.out" 2>&1 ||
    fail "weft-demo failed under max_frame = 64k: $(cat "$TMP/after-lower.out")"
wait_state after-lower complete 60
grep -q "exceeds max_frame" "$TMP/weftd.log" &&
    fail "a new connection's batch exceeded the lower max_frame"
stop_weftd
out=$("$WEFT" --catalog "$SPOOL/catalog.db" status 2>&1) && fail "weft status succeeds with weftd stopped"
echo "$out" | grep -q "not running" || fail "weft status with weftd stopped says: $out"

# The configuration file: --check-config says which one it read; the
# default one may be missing, a file named with --config may not; --set
# sets any key and names a bad one.
out=$(WEFT_CONFIG="$TMP/absent.conf" "$WEFTD" --check-config --set max_buffered=2M) ||
    fail "--check-config without a configuration file failed"
echo "$out" | grep -q "^# weftd .*: built-in defaults, then no file ($TMP/absent.conf does not exist), then command-line flags" ||
    fail "--check-config does not say no file was read: $out"
echo "$out" | grep -qx "max_buffered = 2097152" || fail "--set max_buffered=2M not applied: $out"
printf '[limits]\nidle_timeout = 0\n' >"$conf"
out=$("$WEFTD" --config "$conf" --check-config) || fail "--check-config --config failed"
echo "$out" | grep -q "then $conf, then command-line flags" || fail "--check-config does not name $conf: $out"
echo "$out" | grep -qx "idle_timeout = 0" || fail "idle_timeout = 0 from the file not applied"
out=$("$WEFTD" --config "$TMP/absent.conf" --check-config 2>&1) && fail "a missing --config file is accepted"
echo "$out" | grep -q "cannot open configuration $TMP/absent.conf" || fail "missing --config: $out"
out=$("$WEFTD" --set max_bufered=1M --check-config 2>&1) && fail "--set with an unknown key is accepted"
echo "$out" | grep -q "unknown key 'max_bufered'" || fail "--set unknown key: $out"
out=$("$WEFTD" --set nice=20 --check-config 2>&1) && fail "nice = 20 is accepted"
echo "$out" | grep -q "nice = 20: must be between 0 and 19" || fail "nice = 20 is refused without naming the key: $out"
echo ok

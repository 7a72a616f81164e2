#!/bin/bash
# e2e_reload.sh - SIGHUP re-reads the configuration: a raised limit takes
# effect without a restart, command-line settings keep winning over the
# file, and a broken file is reported and leaves weftd running as it was.
. "$(dirname "$0")/lib.sh"

conf="$TMP/weftd.conf"
printf '[limits]\nmax_connections = 1\n' >"$conf"
start_weftd --config "$conf" --grace-period 7
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
exec 3>&-
stop_weftd
echo ok

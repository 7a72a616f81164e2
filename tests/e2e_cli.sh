#!/bin/bash
# e2e_cli.sh - bad command lines, configuration files and environments get
# a clear message and the documented exit code; limits on connections are
# enforced with an Error frame.
. "$(dirname "$0")/lib.sh"

EXPECT_GREP=-G          # expect's patterns are regular expressions

# weftd
expect 0 "weftd 0" "$WEFTD" --version
expect 0 "Usage: weftd" "$WEFTD" --help
expect 2 "unrecognized option '--bogus'" "$WEFTD" --bogus
expect 2 "unexpected argument 'extra'" "$WEFTD" extra
expect 2 "cannot open configuration /nonexistent.conf" "$WEFTD" --config /nonexistent.conf
expect 2 "expected HOST:PORT" "$WEFTD" --listen nonsense --spool "$TMP/s1"
expect 2 "max_frame = 'huge'" env WEFT_CONFIG=/dev/null "$WEFTD" --check-config --config <(printf '[limits]\nmax_frame = huge\n')
printf '[weftd]\nspool = %s\n\n[limits]\nmax_framez = 1\n' "$TMP/s2" >"$TMP/bad.conf"
expect 2 "bad.conf:5: unknown key 'max_framez'" "$WEFTD" --config "$TMP/bad.conf"
printf '[weftd]\nspool = %s\n[limits]\nmax_connections = 0\n' "$TMP/s2" >"$TMP/bad2.conf"
expect 2 "max_connections = 0: must be between 1" "$WEFTD" --config "$TMP/bad2.conf"
expect 0 "max_frame = 65536" "$WEFTD" --check-config --spool "$TMP/s3" --listen 127.0.0.1:1 \
    --config <(printf '[limits]\nmax_frame = 64k\n')
expect 1 "not an IPv4 or IPv6 address" "$WEFTD" --listen 256.1.1.1:80 --spool "$TMP/s4"
expect 1 "cannot create spool directory" "$WEFTD" --spool /proc/weft-spool
expect 1 "cannot listen on" "$WEFTD" --listen 127.0.0.1:1 --spool "$TMP/s5" --socket /proc/nope/sock

# weft
expect 0 "list" "$WEFT" --help
expect 2 "bogus" "$WEFT" --bogus
expect 2 "frobnicate" "$WEFT" frobnicate
expect 1 "no catalog at $TMP/none.db" "$WEFT" --catalog "$TMP/none.db" list

# the client library's environment
out=$(WEFT_SERVER=127.0.0.1:1 WEFT_TRACE=t timeout 60 "$DEMO" -p 2 -t 2 -n 10 2>&1) ||
    fail "weft-demo must run untraced when weftd is unreachable: $out"
[ "$(echo "$out" | grep -c "cannot reach weftd")" -eq 2 ] ||
    fail "expected one warning per process, got: $out"
expect 1 "cannot reach weftd" env WEFT_SERVER=127.0.0.1:1 WEFT_REQUIRED=1 WEFT_TRACE=t "$DEMO" -p 1 -t 1 -n 1
expect 1 "WEFT_BUFFER_SIZE" env WEFT_BUFFER_SIZE=lots WEFT_TRACE=t WEFT_SERVER=127.0.0.1:1 "$DEMO" -p 1 -t 1 -n 1
expect 2 "bogus" "$DEMO" --bogus

# max_connections: a second client is refused with an Error frame.
printf '[limits]\nmax_connections = 1\n' >"$TMP/limits.conf"
start_weftd --config "$TMP/limits.conf"
exec 3<>"/dev/tcp/${WEFT_SERVER%:*}/${WEFT_SERVER##*:}" || fail "cannot connect"
expect 0 "too many connections: max_connections is 1" "$RAWPEER" "$WEFT_SERVER" garbage
exec 3>&-
stop_weftd
echo ok

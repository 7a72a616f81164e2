#!/bin/bash
# e2e_backpressure.sh - a client that sends but never reads its acks hits
# max_conn_pending: weftd stops reading from it (its sends block), stays
# small, and keeps serving others; when the client goes, weftd recovers.
. "$(dirname "$0")/lib.sh"

printf '[limits]\nmax_conn_pending = 4k\n' >"$TMP/bp.conf"
start_weftd --config "$TMP/bp.conf" --grace-period 1
out=$(timeout 60 "$RAWPEER" "$WEFT_SERVER" flood "flood") ||
    fail "weftd did not stop reading from a client that ignores its acks: $out"
echo "$out"
grep -q "over max_conn_pending (4096): reading paused" "$TMP/weftd.log" ||
    fail "no log line naming the limit"
rss=$(ps -o rss= -p "$WEFTD_PID"); echo "weftd RSS: $rss KiB"
# Under AddressSanitizer freed memory stays in its quarantine (256 MiB), so
# the bound is checked on the plain build only.
if ldd "$WEFTD" | grep -q libasan; then
    echo "ASan build: RSS bound not checked"
else
    [ "$rss" -lt 65536 ] || fail "weftd grew to $rss KiB behind a stuck client"
fi
timeout 20 "$RAWPEER" "$WEFT_SERVER" valid "next client" || fail "weftd stopped serving others"
wait_state "next client" complete 30
wait_state "flood" partial 60
otf2-print -Werror --silent "$(json_get "$TMP/show.json" 'j["archive"]')" >/dev/null ||
    fail "otf2-print rejects the flood archive"
stop_weftd
echo ok

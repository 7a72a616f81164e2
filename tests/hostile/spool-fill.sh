# spool-fill - #30 finding 5: with no default quota bob filled the spool
# in 1.9 s; alice's running trace ended partial with 533 404 records
# dropped while the catalog said dropped: 0. Now max_user_spool_bytes is
# on by default (checked below) and charged as the journals' bytes
# arrive: bob, writing as fast as four processes can, holds at most his
# quota (16M here, so that it runs in seconds) and 1/16 more of refused
# batches' records; his batches past it are acknowledged, not stored, and
# his trace ends partial with them counted as dropped; alice's trace is
# exact.
CASE_WEFTD_CONF="
grace_period = 3
max_user_spool_bytes = 16M
"
CASE_ATTACK_SECONDS=40

case_attack() {
    bob_fill 20
}

case_check() {
    local state bytes dropped
    state=$(bob_fill_ended)
    # What bob holds in the spool: his trace's archive, once converted
    # (the journals are gone then).
    bytes=$(du -sb "$SPOOL"/traces/fill-* | awk '{s += $1} END {print s}')
    dropped=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("dropped"))' "$CASE_TMP/fill-show.json" 2>/dev/null)
    echo "bob's fill: ${state:-missing}, $bytes bytes in the spool, $dropped events counted dropped"
    [ "$state" = partial ] || fail "bob's trace fill is ${state:-missing}, not partial"
    [ "$dropped" -gt 0 ] || fail "bob's trace fill counts nothing dropped"
    [ "$bytes" -le $(((16 << 20) + (1 << 20) + (4 << 20))) ] ||
        fail "bob holds $bytes bytes of spool, his quota is 16M"
    grep -q "trace 'fill' .*refused (.* events), and its next ones .*max_user_spool_bytes is 16777216" \
        "$TMP/weftd.log" || fail "weftd did not log bob's refusal"
    # On by default.
    "$PUB/weftd" --check-config --spool "$CASE_TMP" 2>&1 |
        grep -qx 'max_user_spool_bytes = 10737418240' ||
        fail "max_user_spool_bytes is not on (10G) by default"
}

# disk-fill - #30 finding 5, the disk: bob filled the spool's file system
# in 1.9 s; alice's running trace ended partial with 533 404 records
# dropped while the catalog said dropped: 0. Here the spool is a 96 MiB
# file system and bob's quota (1G) does not stop him: min_free_spool_bytes
# does. Bob writes as fast as four processes can; within twice the
# reserve his recording traces may take half of what is left above it,
# so he is refused there, his batches acknowledged, not stored and
# counted (refused by weftd, his trace partial saying why), while alice's
# small trace still fits and is exact; the file system never fills (the
# catalog commits: alice's weft list answers, bob's trace is catalogued).
CASE_SPOOL_MB=96
CASE_WEFTD_CONF="
grace_period = 3
max_user_spool_bytes = 1G
min_free_spool_bytes = 24M
"
CASE_ATTACK_SECONDS=40

case_attack() {
    bob_fill 15
}

case_check() {
    local state refused dropped reason free
    state=$(bob_fill_ended)
    get() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$CASE_TMP/fill-show.json" "$1"; }
    refused=$(get refused) dropped=$(get dropped) reason=$(get error)
    free=$("$PY" -c 'import os,sys; s=os.statvfs(sys.argv[1]); print(s.f_bavail*s.f_frsize)' "$SPOOL")
    echo "bob's fill: ${state:-missing}, $refused of $dropped dropped events refused by weftd; $free bytes free on the spool's file system"
    [ "$state" = partial ] || fail "bob's trace fill is ${state:-missing}, not partial: $reason"
    [ "$refused" -gt 0 ] || fail "bob's trace fill counts nothing refused"
    [ "$dropped" -ge "$refused" ] || fail "bob's fill: dropped $dropped < refused $refused"
    case "$reason" in
    *"min_free_spool_bytes"*) ;;
    *) fail "bob's fill is partial without naming min_free_spool_bytes: $reason" ;;
    esac
    [ "$free" -ge $((16 << 20)) ] ||
        fail "the spool's file system went down to $free bytes free (reserve 24M)"
    grep -q "trace 'fill' .*refused (.* events), and its next ones while over min_free_spool_bytes" \
        "$TMP/weftd.log" || fail "weftd did not log bob's refusal"
}

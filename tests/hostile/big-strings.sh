# big-strings - issue 30, finding 3: 88 MB of string definitions raised
# weftd's RSS by 1.53 GB while converting (convert_memory did not count
# definitions). Now a trace's definitions are bounded by
# max_definition_bytes as they arrive: BOB sends 64 MB of distinct
# strings in one trace and is refused at the limit, then a trace just
# under it, which converts within the RSS bound.
CASE_WEFTD_CONF="
max_definition_bytes = 16M
"
CASE_RSS_MB=200
case_attack() {
    local out rc
    out=$(RAWPEER_BYTES=67108864 asbob ./weft-rawpeer "unix:$SOCK" big-strings bigstr 2>&1)
    rc=$?
    echo "64 MB: rawpeer exit $rc: $out"
    [ "$rc" -eq 0 ] && echo "$out" >"$CASE_TMP/refused"
    out=$(RAWPEER_BYTES=12000000 asbob ./weft-rawpeer "unix:$SOCK" big-strings bigstr-ok 2>&1)
    echo "12 MB: rawpeer exit $?: $out"
}
case_check() {
    local state
    grep -q "max_definition_bytes" "$CASE_TMP/refused" 2>/dev/null ||
        fail "64 MB of definitions were not refused at max_definition_bytes: $(cat "$CASE_TMP/attack.out")"
    for _ in $(seq 600); do
        state=$(asbob ./weft show bigstr-ok --json 2>/dev/null | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
        case "$state" in complete|partial|failed) break;; esac
        sleep 0.1
    done
    [ "$state" = complete ] || fail "bob's 12 MB of strings are ${state:-nowhere}, not complete"
    echo "64 MB refused at max_definition_bytes; 12 MB converted; weftd RSS now $(weftd_rss_mb) MB"
}

# import-flood - #30 finding 5: imports bypassed max_user_spool_bytes
# (each was charged 1 byte: the archive's size as its importer claims
# it), so bob grew the catalog without bound (~14 MB). Now an import
# through weftd is charged what it adds (its catalog rows, about twice
# their packed size, and its directory: 4 KiB at least) plus its
# archive's bytes, and refused past the quota (8M here, alice's run
# needs about 2M): bob's imports of his archive stop once they add up to
# it. (With a 1M quota and a 10-event archive of 3 KB, 142 imports were
# taken, 7.3 KB charged for each.)
CASE_WEFTD_CONF="
max_user_spool_bytes = 8M
"
CASE_ATTACK_SECONDS=120

case_attack() {
    local arc i end=$((SECONDS + 30)) state=
    WEFT_TRACE=seed asbob ./weft-demo -p 1 -t 2 -n 2000 >"$CASE_TMP/seed.out" 2>&1
    while [ "$SECONDS" -lt "$end" ]; do
        state=$(asbob ./weft show seed --json 2>/dev/null |
                "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
        [ "$state" = complete ] && break
        sleep 0.2
    done
    arc=$(asbob ./weft path seed) || { echo "bob has no seed trace ($state)"; return; }
    asbob mkdir "$CASE_TMP/bobarc"
    asbob cp -r "$(dirname "$arc")/." "$CASE_TMP/bobarc/"
    for i in $(seq 1 400); do
        if ! asbob ./weft import "$CASE_TMP/bobarc/traces.otf2" --name "imp$i" \
                >"$CASE_TMP/import.out" 2>&1; then
            echo "import $i refused: $(cat "$CASE_TMP/import.out")"
            return
        fi
    done
    echo "all 400 imports taken"
}

case_check() {
    local n size
    grep -q "import .* refused: .*max_user_spool_bytes" "$CASE_TMP/attack.out" ||
        fail "bob's imports were not refused at his quota: $(tail -n 2 "$CASE_TMP/attack.out")"
    n=$(asbob ./weft list --name 'imp*' | grep -c imp)
    echo "bob imported $n copies of $(du -sb "$CASE_TMP/bobarc" | cut -f1) bytes before the quota refused the next"
    [ "$n" -ge 1 ] || fail "no import of bob's was taken"
    size=$(du -sb "$CASE_TMP/bobarc" | cut -f1)
    [ $((n * (size + 4096))) -le $(((8 << 20) + size + 4096)) ] ||
        fail "bob imported $n copies of $size bytes: more than his 8M quota"
}

# unread-answers - issue 30, finding 3: a catalog answer that its asker
# never read held the whole image in weftd (~14.6 MB each, 124
# connections 2.1 GB; bounded only by max_connections x 256 MiB). BOB
# gives his catalog rows some size (120 traces with long command lines
# and tags: an image of ~1.5 MB), then opens 64 connections that each ask
# for the catalog and never read (before: 64 images held, and ALICE's
# weft list refused). weftd must send an answer a piece (64 KiB) at a
# time as it is read and count BOB's questions as his, so its RSS stays
# bounded and ALICE's weft list answers meanwhile.
# (its 120 traces' archives are written when they end: streams' memory,
# bounded by convert_memory, is not what this case bounds)
CASE_WEFTD_CONF="
max_traces_per_user = 400
max_questions_per_user = 48
write_while_recording = no
"
CASE_RSS_MB=50
CASE_ATTACK_SECONDS=150
case_attack() {
    local i j tags=() cmd
    cmd=$(head -c 4000 /dev/zero | tr '\0' c)
    for j in $(seq 30); do tags+=(--tag "k$j=$(head -c 120 /dev/zero | tr '\0' x)"); done
    for i in $(seq 120); do
        asbob ./weft-rawpeer "unix:$SOCK" member "rows$i" --scenario many \
            --command "$cmd" "${tags[@]}" >/dev/null 2>&1 &
        [ $((i % 20)) -eq 0 ] && wait
    done
    wait
    # Their rows are in the catalog once converted.
    for _ in $(seq 600); do
        [ "$(asbob ./weft list 2>/dev/null | grep -c rows)" -ge 120 ] && break
        sleep 0.2
    done
    asbob ./weft list --json >"$CASE_TMP/bob.json" 2>/dev/null
    echo "bob's catalog answer: $(stat -c %s "$CASE_TMP/bob.json") bytes of JSON, $(asbob ./weft list | grep -c rows) traces"
    asbob "$PY" unread_answers.py "$SOCK" 64 20 &
    sleep 10
    asalice ./weft list >"$CASE_TMP/during.out" 2>&1 ||
        echo "ALICE-LIST-FAILED: $(cat "$CASE_TMP/during.out")"
    echo "weftd RSS with 64 answers unread: $(weftd_rss_mb) MB"
    wait
}
case_check() {
    local unread
    ! grep -q ALICE-LIST-FAILED "$CASE_TMP/attack.out" ||
        fail "alice's weft list failed while bob's answers went unread: $(cat "$CASE_TMP/attack.out")"
    # The attack happened: weftd took bob's questions and he left their
    # answers unread (not all refused, e.g. for a protocol version).
    unread=$(sed -n 's/.* refused, \([0-9]*\) answers left unread.*/\1/p' "$CASE_TMP/attack.out")
    [ "${unread:-0}" -gt 0 ] ||
        fail "no answer of bob's went unread: $(cat "$CASE_TMP/attack.out")"
}

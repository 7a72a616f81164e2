# question-flood - issue 30, finding 5: 80 floods of catalog questions by
# one user kept all of weftd's 64 question slots busy, so every `weft
# list` of alice failed ("weftd is answering 64 questions already"), and
# the refusals wrote 75 MB of warnings in 40 s. Now each user has
# max_questions_per_user and refusals are logged a few lines a second.
# BOB gives his catalog some rows (40 traces: each answer costs weftd an
# image), then asks from 80 threads, each again as soon as it has its
# answer, while ALICE traces her program and then lists her traces 15
# times: each list must answer, and weftd's log must stay small.
CASE_ATTACK_SECONDS=60
case_attack() {
    local i pids=()
    for i in $(seq 40); do
        asbob ./weft-rawpeer "unix:$SOCK" member "rows$i" --scenario many \
            --command "$(head -c 4000 /dev/zero | tr '\0' c)" >/dev/null 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
    sleep 2
    flood 12
}
# flood SECONDS: BOB's 80 flooding threads.
flood() {
    asbob "$PY" unread_answers.py "$SOCK" 80 "$1" --flood
}
case_check() {
    local i fails=0 bytes fpid
    # The first flood is over by now: list while a second one runs.
    (flood 8) &
    fpid=$!
    sleep 2
    for i in $(seq 15); do
        asalice ./weft list >"$CASE_TMP/alist.out" 2>&1 || {
            fails=$((fails + 1))
            echo "alice's weft list $i failed: $(cat "$CASE_TMP/alist.out")"
        }
        sleep 0.3
    done
    wait "$fpid"
    # The flood happened: weftd answered some of bob's questions (not all
    # refused, e.g. for a protocol version).
    grep -Eq "questions asked by 80 threads in [0-9.]+ s, [0-9]+ refused" \
        "$CASE_TMP/attack.out" &&
        ! grep -Eq "([0-9]+) questions asked by 80 threads in [0-9.]+ s, \1 refused" \
            "$CASE_TMP/attack.out" ||
        fail "weftd answered none of bob's questions: $(cat "$CASE_TMP/attack.out")"
    [ "$fails" -eq 0 ] || fail "$fails of alice's 15 weft list failed under bob's flood"
    bytes=$(stat -c %s "$TMP/weftd.log")
    echo "alice's 15 weft list answered under the flood; weftd's log is $bytes bytes, $(grep -c 'refused: uid' "$TMP/weftd.log") refusal lines"
    [ "$bytes" -lt 2000000 ] || fail "weftd's log grew to $bytes bytes under the question flood"
}

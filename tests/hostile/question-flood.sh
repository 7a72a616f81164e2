# question-flood - issue 30, finding 5: 80 loops of catalog questions by
# one user took all of weftd's 64 question slots, so every `weft list` of
# alice failed ("weftd is answering 64 questions already"), and the
# refusals wrote 75 MB of warnings in 40 s. Now each user has
# max_questions_per_user, refusals are logged a few lines a second: BOB
# floods with 80 loops for 20 s while ALICE traces her program, then
# with 40 for 10 s while she lists her traces 15 times,
# each of which must answer (and again under a second flood); weftd's
# log must stay small.
CASE_ATTACK_SECONDS=30
case_attack() {
    local i
    for i in $(seq 80); do
        asbob bash -c 'end=$((SECONDS + 20)); while [ $SECONDS -lt $end ]; do ./weft list >/dev/null 2>&1; done' &
    done
    wait
}
case_check() {
    local i fails=0 bytes pids=()
    # The first flood is over by now: list while a second one runs.
    for i in $(seq 40); do
        asbob bash -c 'end=$((SECONDS + 10)); while [ $SECONDS -lt $end ]; do ./weft list >/dev/null 2>&1; done' &
        pids+=($!)
    done
    sleep 1
    for i in $(seq 15); do
        asalice ./weft list >"$CASE_TMP/alist.out" 2>&1 || {
            fails=$((fails + 1))
            echo "alice's weft list $i failed: $(cat "$CASE_TMP/alist.out")"
        }
        sleep 0.3
    done
    pkill -KILL -u "$BOB" 2>/dev/null
    wait "${pids[@]}" 2>/dev/null
    [ "$fails" -eq 0 ] || fail "$fails of alice's 15 weft list failed under bob's flood"
    bytes=$(stat -c %s "$TMP/weftd.log")
    echo "alice's 15 weft list answered under the flood; weftd's log is $bytes bytes, $(grep -c 'refused: uid' "$TMP/weftd.log") refusal lines"
    [ "$bytes" -lt 2000000 ] || fail "weftd's log grew to $bytes bytes under the question flood"
}

# convert-order - #30 finding 5: bob's eight cheap traces delayed alice's
# conversion 18 s: conversions waited first come first served. Now they
# are taken round robin by owner: with one conversion at a time, alice's
# trace, finished after bob's eight, is converted after at most one of
# his (the one running when hers came). Bob's traces are large enough
# (4.2 M events each) that several still wait when hers comes, on an idle
# machine too (with 2.1 M, on an idle machine, 5 of 8 were converted
# while alice recorded).
# Conversions that do all their work after the last goodbye (archives
# written while recording would leave the queue nothing to hold).
CASE_WEFTD_CONF="
max_conversions = 1
convert_threads = 1
write_while_recording = no
"
CASE_ATTACK_SECONDS=120

case_attack() {
    local i
    for i in $(seq 0 7); do
        WEFT_TRACE=bob$i asbob ./weft-demo -p 1 -t 2 -n 300000 \
            >"$CASE_TMP/bob$i.out" 2>&1 &
    done
    wait
    echo "bob's 8 traces recorded"
}

# Alice's run starts once bob's eight wait for their conversion.
case_alice() {
    local end=$((SECONDS + 60 * TIME_SCALE))
    while [ "$SECONDS" -lt "$end" ]; do
        [ "$(grep -c "trace 'bob[0-7]': all 1 members done" "$TMP/weftd.log")" -ge 8 ] &&
            break
        sleep 0.1
    done
    alice_demo alice
}

case_check() {
    local order before after end
    end=$((SECONDS + 120))
    while [ "$SECONDS" -lt "$end" ]; do
        [ "$(grep -Ec "trace 'bob[0-7]' (complete|partial|failed)" "$TMP/weftd.log")" -ge 8 ] &&
            break
        sleep 0.2
    done
    # From alice's trace queued for conversion to its end.
    order=$(sed -n -e "s/.*trace 'alice': all 2 members done, converting.*/alice-queued/p" \
            -e "s/.*trace '\(bob[0-7]\|alice\)' \(complete\|partial\|failed\).*/\1/p" \
            "$TMP/weftd.log" | tr '\n' ' ')
    echo "conversions ended, in order: $order"
    before=$(echo "$order" | sed -e 's/.*alice-queued//' -e 's/alice .*//' | wc -w)
    after=$(echo "$order" | sed 's/.* alice //' | wc -w)
    # One of his still waiting when hers came is enough to tell: first
    # come, first served would have converted it before hers.
    [ "$after" -ge 1 ] ||
        fail "none of bob's conversions came after alice's: the case did not queue hers behind his"
    [ "$before" -le 1 ] ||
        fail "alice's conversion, queued, waited for $before of bob's (at most 1: the one running)"
}

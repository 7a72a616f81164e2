# baseline - no attack: the control case. BOB traces a program of his own
# while ALICE traces hers; both complete exactly and neither sees the
# other's trace. If this case fails, the harness is wrong, not weftd.
case_attack() {
    WEFT_TRACE=bob asbob ./weft-demo -p 2 -t 2 -n 1000 \
        --report "$CASE_TMP/bob.json" >"$CASE_TMP/bob.out" 2>&1 ||
        echo "bob's own run failed: $(cat "$CASE_TMP/bob.out")"
}
case_check() {
    local out
    out=$(asalice ./weft list --name bob 2>&1)
    [ -z "$out" ] || fail "alice lists bob's trace: $out"
    out=$(asbob ./weft show alice 2>&1) && fail "bob shows alice's trace: $out"
    case "$out" in *"no trace 'alice'"*) ;; *) fail "bob's weft show alice: $out";; esac
}

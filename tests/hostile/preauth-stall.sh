# preauth-stall - #30 finding 4: BOB opens 1100 TCP connections that
# each send a frame header announcing 64 KiB and one byte of it, and
# opens a new one whenever weftd closes one. On b28adc0 they filled
# max_buffered before anyone authenticated: ALICE got "no answer to Auth
# within 30000 ms", her running trace slowed 2.5x, for the 300 s
# idle_timeout, renewable. Now a frame before authentication is at most
# max_preauth_frame (refused at its header), pre-authentication bytes
# never count in max_buffered, and connections not authenticated within
# preauth_timeout are closed; ALICE's run is as fast as without BOB.
CASE_WEFTD_CONF="
preauth_timeout = 5
max_connections = 200
"
CASE_ATTACK_SECONDS=60

case_attack() {
    RAWPEER_COUNT=1100 RAWPEER_SECONDS=15 asbob prlimit --nofile=4096 \
        ./weft-rawpeer "$WEFT_SERVER" stall-header
}

case_alice() {
    local t0 s
    t0=$(date +%s%N)
    alice_demo alice || return 1
    s=$((($(date +%s%N) - t0) / 1000000))
    echo "alice's run took $s ms while bob stalled" | tee "$CASE_TMP/alice-time.out"
    [ "$s" -le 20000 ] || { echo "alice's run took $s ms (more than 20 s)"; return 1; }
}

case_check() {
    grep -Eq "refused: frame of 65536 bytes before authentication|max_preauth" \
        "$TMP/weftd.log" ||
        fail "weftd did not refuse bob's frames before authentication"
    local lines
    lines=$(grep -c "refused" "$TMP/weftd.log")
    echo "weftd logged $lines refusal lines (max_log_refusals)"
}

# idle-slots - #30 finding 5 (slots): BOB holds 600 TCP connections that
# never send a byte (max_connections is 200 here), opening a new one
# whenever weftd closes one. On b28adc0 idle connections before Hello
# counted for nobody and took every slot until idle_timeout (300 s):
# ALICE's clients were refused. Now connections whose user is not known
# yet are bounded in all (max_preauth_connections) and per address
# (max_preauth_per_address: the oldest is closed for a newcomer) and
# live preauth_timeout at most, so ALICE's connections are served.
# max_connections below the fd bound (300): weftd's descriptors for
# connections stay within max_connections + 32 (refused ones closing).
CASE_WEFTD_CONF="
max_connections = 200
"
CASE_ATTACK_SECONDS=60

case_attack() {
    RAWPEER_COUNT=600 RAWPEER_SECONDS=15 asbob prlimit --nofile=4096 \
        ./weft-rawpeer "$WEFT_SERVER" hold-open
}

case_check() {
    grep -Eq "max_preauth_per_address|max_preauth_connections|preauth_timeout" \
        "$TMP/weftd.log" ||
        fail "weftd did not close bob's idle connections before authentication"
}

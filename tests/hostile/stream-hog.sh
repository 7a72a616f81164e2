# stream-hog - BOB holds the event writers of the archives weftd writes
# while traces record (#33: all recording traces share one
# convert_memory) with processes whose threads record a little, slowly,
# for long: 10 processes x 4 threads, 40 writers of 256 KiB, more than
# the 8 MiB (32 writers) that convert_memory = 32M leaves them. Until
# one user's streams were held to half of it, BOB's took it all and
# ALICE's trace was written only when it ended ("0 of 2 processes
# written while it recorded"); now BOB's hold at most half, the
# processes of his that would take more are written at the end, and
# ALICE's are written while hers records.
CASE_WEFTD_CONF="
convert_memory = 32M
"
CASE_ATTACK_SECONDS=90

case_attack() {
    WEFT_TRACE=hog asbob ./weft-demo -p 10 -t 4 -n 40 -s 1000000 \
        >"$CASE_TMP/hog.out" 2>&1 ||
        echo "bob's run failed: $(cat "$CASE_TMP/hog.out")"
}

# ALICE starts once BOB's threads have each shipped a batch (every
# 500 ms, WEFT_FLUSH_MS) and his streams hold what they may.
case_alice() {
    sleep $((3 * TIME_SCALE))
    alice_demo alice
}

case_check() {
    local line
    line=$(grep "trace 'alice' complete:" "$TMP/weftd.log")
    echo "$line" | grep -q "(2 of 2 processes written while it recorded)" ||
        fail "alice's processes were not written while her trace recorded: $line"
    grep -q "the streams' event writers hold their owner's share of convert_memory" \
        "$TMP/weftd.log" ||
        fail "bob's streams were not held to their share"
    echo "alice: 2 of 2 processes written while she recorded, beside bob's 40 threads"
}

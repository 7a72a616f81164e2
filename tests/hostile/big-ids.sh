# big-ids - issue 30, finding 3: processes that each define the largest
# allowed id (max_definitions - 1) in six id spaces (~100 bytes sent)
# made weftd hold ~8.8 MB per process (bitmaps and arrays sized by the
# id), 4.19 GB for 474 of them, and ~11 GB to convert. BOB starts 24
# traces of 16 such processes (384 members): weftd's memory must follow
# what was sent, recording and converting.
CASE_WEFTD_CONF="
max_definitions = 16777216
max_members = 64
"
CASE_RSS_MB=150
# A sanitized weft-rawpeer takes a second to start and end: 8 traces
# (128 members) there, so that the attack ends within its time.
BIG_TRACES=$((24 / TIME_SCALE))
case_attack() {
    local t r
    for t in $(seq "$BIG_TRACES"); do
        for r in $(seq 0 15); do
            RAWPEER_ID=16777215 RAWPEER_RANK=$r RAWPEER_SIZE=16 \
                asbob ./weft-rawpeer "unix:$SOCK" big-ids "bigids$t" \
                >>"$CASE_TMP/bigids.out" 2>&1 &
        done
        wait
    done
    # weft-rawpeer prints only weftd's Errors.
    echo "$(grep -c . "$CASE_TMP/bigids.out") of $((BIG_TRACES * 16)) processes refused"
    sort "$CASE_TMP/bigids.out" | uniq -c | head -5
}
case_check() {
    local n state end=$((SECONDS + 60 * TIME_SCALE))
    # BOB's traces convert too (the conversion's memory was the other
    # half of the finding): wait for them, then look at their state.
    while [ "$SECONDS" -lt "$end" ]; do
        n=$(asbob ./weft list --json 2>/dev/null | "$PY" -c '
import json, sys
print(sum(1 for t in json.load(sys.stdin) if t["state"] in ("complete", "partial", "failed")))' 2>/dev/null)
        [ "${n:-0}" -ge "$BIG_TRACES" ] && break
        sleep 0.1
    done
    [ "${n:-0}" -ge "$BIG_TRACES" ] ||
        fail "only ${n:-0} of bob's $BIG_TRACES big-id traces finished converting"
    state=$(asbob ./weft show bigids1 --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    [ "$state" = complete ] || fail "bob's bigids1 is $state, not complete (weftd took its ids)"
    echo "bob's $BIG_TRACES traces of 16 processes with ids 2^24-1 converted; weftd RSS now $(weftd_rss_mb) MB"
}

# goodbye-locations - #30 finding 5: a Goodbye naming 4 096 threads that
# never sent anything, from each of 20 members (735 KB sent), made an
# 81 920-location, 642 MB archive. Now threads that report nothing are
# no locations, and those that claim events without sending any are
# charged 8 KiB each to their owner's max_user_spool_bytes before the
# conversion makes them: past it the Goodbye is refused.
#   bye0: 20 members x 4 096 threads reporting 0 events: 20 locations;
#   bye1: the same claiming 1 event each: what the quota (64M) allows,
#         about 8 000 locations, and the archive within it.
CASE_WEFTD_CONF="
grace_period = 2
max_user_spool_bytes = 64M
"
CASE_ATTACK_SECONDS=90

bob_members() {
    local trace=$1 events=$2 r
    for r in $(seq 0 19); do
        RAWPEER_RANK=$r RAWPEER_SIZE=20 RAWPEER_THREADS=4096 \
            RAWPEER_EVENTS=$events asbob ./weft-rawpeer "unix:$SOCK" \
            goodbye-threads "$trace" >>"$CASE_TMP/rawpeer.out" 2>&1 &
    done
    wait
}

case_attack() {
    bob_members bye0 0
    bob_members bye1 1
    echo "bob's 40 Goodbyes sent"
}

# bob_show TRACE: bob's `weft show TRACE --json` once it is no longer
# recording or converting (60 s at most, x TIME_SCALE), in
# $CASE_TMP/TRACE.json.
bob_show() {
    local state= end=$((SECONDS + 60 * TIME_SCALE))
    while [ "$SECONDS" -lt "$end" ]; do
        asbob ./weft show "$1" --json >"$CASE_TMP/$1.json" 2>/dev/null &&
            state=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' \
                    "$CASE_TMP/$1.json")
        case "$state" in complete|partial|failed) return 0 ;; esac
        sleep 0.2
    done
    fail "bob's $1 is ${state:-not in the catalog} after $((60 * TIME_SCALE)) s"
}

case_check() {
    local locs bytes
    bob_show bye0
    locs=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["locations"]))' "$CASE_TMP/bye0.json")
    bytes=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$CASE_TMP/bye0.json")
    echo "bye0 (threads reporting nothing): $locs locations, $bytes bytes"
    [ "$locs" -le 20 ] || fail "bob's bye0 has $locs locations for 20 threads that sent"
    [ "$bytes" -le $((10 << 20)) ] || fail "bob's bye0 archive takes $bytes bytes"
    bob_show bye1
    locs=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["locations"]))' "$CASE_TMP/bye1.json")
    bytes=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$CASE_TMP/bye1.json")
    echo "bye1 (threads claiming events): $locs locations, $bytes bytes"
    [ "$locs" -le $((20 + (64 << 20) / 8192)) ] ||
        fail "bob's bye1 has $locs locations, more than 64M of quota pays for"
    [ "$bytes" -le $((128 << 20)) ] || fail "bob's bye1 archive takes $bytes bytes"
}

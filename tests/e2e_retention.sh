#!/bin/bash
# e2e_retention.sh - what the spool keeps (#15): retention_days removes
# finished traces older than that, max_spool_bytes the oldest ones beyond
# it, each logged and kept in the catalog as "removed" with the reason;
# max_user_spool_bytes refuses a user's new traces once theirs hold that
# much. A real weftd, restarted over one spool.
. "$(dirname "$0")/lib.sh"

W() { "$WEFT" --catalog "$SPOOL/catalog.db" "$@"; }
state_of() { W show "$1" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])'; }
archive_dir() { W show "$1" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["path"])'; }
wait_removed() { # TRACE: until the catalog says removed (10 s)
    for _ in $(seq 100); do
        [ "$(state_of "$1")" = removed ] && return 0
        sleep 0.1
    done
    fail "trace '$1' was not removed (state $(state_of "$1"))"
}

start_weftd
for t in old1 old2 kept; do
    run_demo "$t" -- -p 1 -t 1 -n 50
    wait_state "$t" complete
done
old_dir=$(archive_dir old1)
stop_weftd
# old1 and old2 finished 40 days ago.
"$PY" - "$SPOOL/catalog.db" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE traces SET finished = ? WHERE name IN ('old1', 'old2')",
           (int(time.time()) - 40 * 86400,))
db.commit()
PY
start_weftd --set retention_days=30
wait_removed old1
wait_removed old2
[ "$(state_of kept)" = complete ] || fail "a recent trace was removed"
[ -e "$old_dir" ] && fail "old1's archive is still there: $old_dir"
W show old1 | grep -q "finished more than retention_days (30) ago" ||
    fail "weft show does not say why old1 was removed"
W list --state removed | grep -q old2 || fail "weft list does not show old2 removed"
grep -q "trace 'old1' (.*) of uid 0 removed: finished more than retention_days (30) ago" \
    "$TMP/weftd.log" || fail "the removal of old1 is not logged"
kept_archive=$(W show kept --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["archive"])')
otf2-print -Werror --silent "$kept_archive" >/dev/null ||
    fail "the kept trace's archive does not read"
stop_weftd

# max_spool_bytes: three more traces; a bound that only the newest fits
# under removes the others, oldest first.
start_weftd
for t in a b c; do
    run_demo "$t" -- -p 1 -t 1 -n 50
    wait_state "$t" complete
done
stop_weftd
cbytes=$(W show c --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')
start_weftd --set "max_spool_bytes=$((cbytes + cbytes / 2))"
wait_removed kept
wait_removed a
wait_removed b
[ "$(state_of c)" = complete ] || fail "the newest trace was removed"
W show a | grep -q "over max_spool_bytes" || fail "weft show does not say why a was removed"
stop_weftd

# max_user_spool_bytes: c's bytes are root's; a new trace of root is
# refused with the reason, and runs untraced.
start_weftd --set max_user_spool_bytes=1
out=$(WEFT_TRACE=over timeout 60 "$DEMO" -p 1 -t 1 -n 10 2>&1) ||
    fail "the untraced demo failed: $out"
case "$out" in
    *"uid 0 has $cbytes bytes of traces in the spool: max_user_spool_bytes is 1"*) ;;
    *) fail "max_user_spool_bytes: '$out'";;
esac
W show over >/dev/null 2>&1 && fail "a trace over the quota was recorded"
echo "PASS: e2e_retention"

#!/bin/bash
# e2e_reindex.sh - a damaged catalog (issue #11): weftd refuses to start
# on it, naming the file and what to do; `weft reindex` rebuilds the
# catalog from the spool with weftd stopped, keeps the damaged file beside
# it, catalogues the converted trace with the figures of its archive and
# the unconverted one as recording, which the next weftd then finishes.
# reindex refuses to run while weftd uses the spool.
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
W() { "$WEFT" --catalog "$CAT" "$@"; }

start_weftd
timeout 20 "$RAWPEER" "$WEFT_SERVER" member "kept run" --host node-a \
    --pid 100 --tag app=kept --scenario profile || fail "member kept run"
wait_state "kept run" complete
cp "$TMP/show.json" "$TMP/before.json"
timeout 20 "$RAWPEER" "$WEFT_SERVER" first-half "half run" ||
    fail "first half not acked"
wait_state "half run" recording
kill -KILL "$WEFTD_PID"
wait "$WEFTD_PID" 2>/dev/null
WEFTD_PID=

# Damage: the database header is gone.
printf 'this is no longer an SQLite database header, sorry...' |
    dd of="$CAT" bs=1 conv=notrunc status=none
sum=$(md5sum <"$CAT")
"$WEFTD" --listen 127.0.0.1:0 --spool "$SPOOL" --log-level debug \
    >"$TMP/refused.log" 2>&1
rc=$?
[ "$rc" -ne 0 ] || fail "weftd started on a damaged catalog"
grep -qF "catalog $CAT is damaged" "$TMP/refused.log" ||
    fail "the refusal does not name the catalog: $(cat "$TMP/refused.log")"
grep -qF "weft --catalog $CAT reindex $SPOOL" "$TMP/refused.log" ||
    fail "the refusal does not say what to do: $(cat "$TMP/refused.log")"

out=$(W reindex 2>&1) || fail "weft reindex failed: $out"
echo "$out"
old=$(ls "$CAT".old-* | grep -v -e '-wal$' -e '-shm$') ||
    fail "the damaged catalog was not kept"
[ "$(md5sum <"$old")" = "$sum" ] || fail "the kept catalog changed"
W show "kept run" --json >"$TMP/after.json" || fail "kept run not catalogued"
for f in state events locations time_first time_last timer_resolution archive; do
    [ "$(json_get "$TMP/after.json" "j['$f'] if not isinstance(j['$f'], list) else len(j['$f'])")" = \
      "$(json_get "$TMP/before.json" "j['$f'] if not isinstance(j['$f'], list) else len(j['$f'])")" ] ||
        fail "kept run: $f differs after reindex: $(json_get "$TMP/after.json" "j['$f']")"
done
W verify "kept run" || fail "the reindexed catalog does not match the archive"
[ "$(W show "half run" --json | "$PY" -c 'import json,sys; j=json.load(sys.stdin); print(j["state"], j["members"])')" = "recording 1" ] ||
    fail "half run is not catalogued as recording"

# weftd starts on the new catalog and finishes the unconverted trace.
start_weftd --grace-period 600
out=$(timeout 20 "$RAWPEER" "$WEFT_SERVER" second-half "half run") ||
    fail "second half failed: $out"
[ "$out" = "definitions_seq=1 thread0_seq=1" ] || fail "HelloAck says '$out'"
wait_state "half run" complete 30
[ "$(json_get "$TMP/show.json" 'j["events"]')" -eq 2 ] || fail "half run lost events"
cp "$TMP/show.json" "$TMP/half.json"

# Not while weftd uses the spool.
out=$(W reindex 2>&1) && fail "reindex ran beside weftd"
echo "$out" | grep -qF "spool $SPOOL is in use by weftd pid $WEFTD_PID" ||
    fail "reindex beside weftd says: $out"
echo "$out" | grep -q "stop weftd first" || fail "reindex does not say what to do: $out"
stop_weftd

# On a sound catalog, what the archive does not hold comes from it.
W reindex >/dev/null || fail "reindex of a sound catalog"
[ "$(W show "half run" --json | "$PY" -c 'import json,sys; j=json.load(sys.stdin); print(j["state"], j["events"])')" = "complete 2" ] ||
    fail "half run after the second reindex: $(W show "half run" --json)"
W show "half run" --json >"$TMP/again.json" || fail "show half run"
keep='(j["hosts"], j["command"], j["tags"], j["ranks"], j["created"], j["finished"], [j[k] for k in j if k in ("uid", "owner")])'
[ "$(json_get "$TMP/again.json" "$keep")" = "$(json_get "$TMP/half.json" "$keep")" ] ||
    fail "half run lost what only the catalog held: $(json_get "$TMP/again.json" "$keep")"
echo ok

#!/bin/bash
# e2e_cli_archive.sh - weft verify, export and rm on traces sent through a
# real weftd: verify passes on a good archive and names each damage
# (truncated .evt, missing .evt, catalog count changed); export writes
# Trace Event JSON with one X slice per Enter/Leave the demo recorded
# (pid rank + 1; tests/e2e_export.sh checks the rest of export), and
# takes --from/--to as wall clock times (UTC, local time);
# rm removes archive and rows, refuses a recording trace without --force
# and an archive path outside the spool.
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
W() { "$WEFT" --catalog "$CAT" "$@"; }
EXPECT_GREP=-G          # expect's patterns are regular expressions

sql() { # SQL...: runs statements on the catalog
    "$PY" -c 'import sqlite3,sys
c = sqlite3.connect(sys.argv[1])
for s in sys.argv[2:]:
    c.execute(s)
c.commit()' "$CAT" "$@" || fail "sql $*"
}

start_weftd --grace-period 600
for t in good damaged; do
    WEFT_TRACE="$t" timeout 120 "$DEMO" -p 2 -t 2 -n 200 --report "$TMP/$t.json" \
        >"$TMP/demo.out" 2>&1 || { cat "$TMP/demo.out" >&2; fail "weft-demo failed"; }
    wait_state "$t" complete 120
done
W show good --json >"$TMP/good.show" || fail "show good"
good_dir=$(json_get "$TMP/good.show" 'j["path"]')
W show damaged --json >"$TMP/damaged.show" || fail "show damaged"
dam_dir=$(json_get "$TMP/damaged.show" 'j["path"]')
dam_id=$(json_get "$TMP/damaged.show" 'j["id"]')

# ---- help and usage ----
for c in verify export rm; do
    expect 0 "Usage: weft .*$c" "$WEFT" "$c" --help
done
expect 2 "missing argument" "$WEFT" --catalog "$CAT" verify
expect 2 "unknown format 'xml'" "$WEFT" --catalog "$CAT" export good --format xml -o "$TMP/x"
expect 2 "unknown option '--format'" "$WEFT" --catalog "$CAT" verify good --format chrome-json
expect 1 "no trace 'nosuch'" "$WEFT" --catalog "$CAT" verify nosuch
expect 1 "no trace 'nosuch'" "$WEFT" --catalog "$CAT" export nosuch --format chrome-json -o "$TMP/x"
expect 1 "no trace 'nosuch'" "$WEFT" --catalog "$CAT" rm nosuch

# ---- verify ----
expect 0 "^OK good: 4 locations" "$WEFT" --catalog "$CAT" verify good
expect 0 "^OK damaged: 4 locations" "$WEFT" --catalog "$CAT" verify damaged

# A catalog count that differs.
sql "UPDATE locations SET events = events + 1 WHERE trace_id = $dam_id AND thread = 1 AND rank = 0"
expect 1 "location 1 (rank 0 thread 1): numberOfEvents [0-9]* in the archive, [0-9]* in the catalog" "$WEFT" --catalog "$CAT" verify damaged
sql "UPDATE locations SET events = events - 1 WHERE trace_id = $dam_id AND thread = 1 AND rank = 0" \
    "UPDATE traces SET events = events + 5 WHERE id = $dam_id"
expect 1 "events in the archive, the catalog says" "$WEFT" --catalog "$CAT" verify damaged
sql "UPDATE traces SET events = events - 5 WHERE id = $dam_id"
expect 0 "^OK damaged" "$WEFT" --catalog "$CAT" verify damaged

# A truncated .evt file (loc 4294967296 = rank 1 thread 0).
evt="$dam_dir/traces/4294967296.evt"
[ -f "$evt" ] || fail "no $evt: $(ls "$dam_dir/traces")"
cp "$evt" "$TMP/evt.save"
size=$(stat -c %s "$evt")
truncate -s $((size / 2)) "$evt"
expect 1 "location 4294967296 (rank 1 thread 0)" "$WEFT" --catalog "$CAT" verify damaged
out=$(W verify damaged 2>&1)
echo "truncated: $out"
echo "$out" | grep -q "events file .*/4294967296.evt ([0-9]* bytes): reading events failed after [0-9]* events" ||
    fail "verify does not name the truncated file: $out"

# A missing .evt file.
rm -f "$evt"
out=$(W verify damaged 2>&1) && fail "verify passes with $evt missing"
echo "missing: $out"
echo "$out" | grep -q "location 4294967296 (rank 1 thread 0): events file .*/4294967296.evt is missing" ||
    fail "verify does not name the missing location: $out"
cp "$TMP/evt.save" "$evt"
expect 0 "^OK damaged" "$WEFT" --catalog "$CAT" verify damaged

# ---- export ----
W export good --format chrome-json -o "$TMP/good.trace.json" 2>"$TMP/export.err" ||
    fail "export failed: $(cat "$TMP/export.err")"
[ -s "$TMP/export.err" ] && fail "export wrote to a non-terminal stderr: $(cat "$TMP/export.err")"
"$PY" -m json.tool "$TMP/good.trace.json" >/dev/null || fail "export output is not JSON"
"$PY" -c '
import json, sys, collections
ev = json.load(open(sys.argv[1]))["traceEvents"]
rep = json.load(open(sys.argv[2]))
cnt = collections.Counter((e["pid"], e["tid"], e["ph"]) for e in ev)
procs = {e["pid"]: e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
           if e["ph"] == "M" and e["name"] == "thread_name"}
host = procs[1].split(" ", 2)[2]
assert procs == {1: "rank 0 " + host, 2: "rank 1 " + host}, procs
assert len(threads) == 4 and threads[(1, 0)] == "Master thread", threads
assert len(rep) == 4, rep
for key, k in rep.items():
    r, t = map(int, key.split("."))
    assert (r + 1, t) in threads, (key, threads)
    assert k["Enter"] > 0 and k["Enter"] == k["Leave"], k
    for ph, what in (("X", "Enter"), ("C", "Metric")):
        assert cnt[(r + 1, t, ph)] == k[what], (key, ph, cnt[(r + 1, t, ph)], k)
    ts = [e["ts"] for e in ev if e["ph"] == "X" and (e["pid"], e["tid"]) == (r + 1, t)]
    assert min(ts) >= 0, key
print("export ok:", len(ev), "trace events")
' "$TMP/good.trace.json" "$TMP/good.json" || fail "export does not match the demo's report"

# Wall clock times: the archive's start (otf2-print's ClockProperties
# date) plus seconds is the same window as those seconds, in UTC and in
# the local time of another zone; a time that does not exist is refused.
# The window is the middle half of the demo's events (its run takes a few
# milliseconds, more or less on a busy machine), in whole microseconds.
read -r lo hi <<<"$("$PY" -c '
import json, sys
ts = sorted(e["ts"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X")
lo, hi = int(ts[len(ts) // 4]), int(ts[3 * len(ts) // 4]) + 1
print(lo, max(hi, lo + 1))
' "$TMP/good.trace.json")"
[ -n "$hi" ] || fail "no window from the export's events"
date=$(otf2-print -G "$(W path good)" | sed -n 's/^CLOCK_PROPERTIES.* Date: \([0-9-]* [0-9:.]*\) +0000$/\1/p')
[ -n "$date" ] || fail "otf2-print -G shows no ClockProperties date"
read -r from_utc to_utc from_tokyo <<<"$("$PY" - "$date" "$lo" "$hi" <<'PY'
import datetime, sys
d, frac = sys.argv[1].split(".")
t0 = datetime.datetime.strptime(d, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
ns = int(frac.ljust(9, "0")[:9])
def wall(add_ns, tz):
    t = t0.astimezone(tz)
    total = ns + add_ns
    t += datetime.timedelta(seconds=total // 10**9)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%09d" % (total % 10**9)
jst = datetime.timezone(datetime.timedelta(hours=9))
lo, hi = int(sys.argv[2]) * 1000, int(sys.argv[3]) * 1000
print(wall(lo, datetime.timezone.utc) + "Z", wall(hi, datetime.timezone.utc) + "Z",
      wall(lo, jst))
PY
)"
W export good --format chrome-json -o "$TMP/win-secs.json" --from "${lo}us" --to "${hi}us" ||
    fail "export --from ${lo}us --to ${hi}us failed"
W export good --format chrome-json -o "$TMP/win-utc.json" --from "$from_utc" --to "$to_utc" ||
    fail "export --from $from_utc --to $to_utc failed"
TZ=Asia/Tokyo W export good --format chrome-json -o "$TMP/win-tokyo.json" \
    --from "${from_tokyo/T/ }" --to "${hi}us" ||
    fail "export --from '${from_tokyo/T/ }' (Tokyo time) failed"
cmp -s "$TMP/win-secs.json" "$TMP/win-utc.json" ||
    fail "--from/--to as UTC wall clock times kept other events than as seconds"
cmp -s "$TMP/win-secs.json" "$TMP/win-tokyo.json" ||
    fail "--from as Tokyo local time kept other events than as seconds"
[ "$(grep -c '"ph":"X"' "$TMP/win-secs.json")" -gt 0 ] &&
    [ "$(grep -c '"ph":"X"' "$TMP/win-secs.json")" -lt "$(grep -c '"ph":"X"' "$TMP/good.trace.json")" ] ||
    fail "the window of ${lo}us to ${hi}us is empty or everything: the test proves nothing"
expect 2 "--from: 2026-02-30 10:00:00 is not a time that exists" \
    "$WEFT" --catalog "$CAT" export good --format chrome-json -o "$TMP/x" --from '2026-02-30 10:00:00'
expect 2 "--to: '10:61:00' is not a time" \
    "$WEFT" --catalog "$CAT" export good --format chrome-json -o "$TMP/x" --to '10:61:00'

# ---- rm ----
# A trace that stays recording: its client vanished, the grace period is long.
timeout 20 "$RAWPEER" "$WEFT_SERVER" vanish "stuck" || fail "rawpeer vanish failed"
wait_state stuck recording 30
expect 1 "trace 'stuck' is recording; not removed (--force" "$WEFT" --catalog "$CAT" rm stuck
W show stuck >/dev/null || fail "rm without --force removed the recording trace"

# A catalog row whose archive path points outside the spool.
mkdir -p "$TMP/outside/archive"
touch "$TMP/outside/archive/precious"
sql "UPDATE traces SET path = '$TMP/outside/archive' WHERE key = (SELECT key FROM traces WHERE name = 'damaged')"
expect 1 "not removing anything outside the spool" "$WEFT" --catalog "$CAT" rm damaged
[ -f "$TMP/outside/archive/precious" ] || fail "rm removed a file outside the spool"
W show damaged >/dev/null || fail "refused rm still removed the row"
# Also through a symlink in the spool that leads outside.
sql "UPDATE traces SET path = '$dam_dir' WHERE name = 'damaged'"
mv "$dam_dir" "$TMP/outside/moved"
ln -s "$TMP/outside/moved" "$dam_dir"
expect 1 "not removing anything outside the spool" "$WEFT" --catalog "$CAT" rm damaged
[ -d "$TMP/outside/moved/traces" ] || fail "rm followed a symlink out of the spool"
rm "$dam_dir"
mv "$TMP/outside/moved" "$dam_dir"

# A good trace: archive directory and rows go.
expect 0 "removed trace 'good'" "$WEFT" --catalog "$CAT" rm good
[ -e "$good_dir" ] && fail "rm left $good_dir"
expect 1 "no trace 'good'" "$WEFT" --catalog "$CAT" show good
n=$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from locations where trace_id not in (select id from traces)").fetchone()[0])' "$CAT")
[ "$n" -eq 0 ] || fail "rm left $n location rows"
expect 0 "removed trace 'damaged'" "$WEFT" --catalog "$CAT" rm damaged
expect 1 "no trace" "$WEFT" --catalog "$CAT" verify damaged
stop_weftd
echo ok

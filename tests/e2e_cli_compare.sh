#!/bin/bash
# e2e_cli_compare.sh - find and compare (#17): weft compare A B puts two
# traces' region profiles side by side, the biggest change of exclusive
# time first, new and gone regions marked, text and --json; weft path
# prints the archive otf2-print opens; weft wait blocks until a trace is
# converted and says how it ended in its exit status (a trace that does
# not exist yet is waited for); weft help CMD is weft CMD --help for
# every command of cli/commands.c's table, which weft --help lists; every
# bad command line is a usage error (exit 2) naming what is wrong.
. "$(dirname "$0")/lib.sh"

EXPECT_TIMEOUT=30
CAT="$SPOOL/catalog.db"
export WEFT_CATALOG="$CAT"
W() { timeout 30 "$WEFT" "$@"; }
member() { timeout 20 "$RAWPEER" "$WEFT_SERVER" member "$@"; }

start_weftd

# Two weft-demo runs, the second with 10 times the iterations; two traces
# of exactly known profiles (weft-rawpeer: 1000 ticks per second) that
# share one region of three; one without regions; one that stays
# recording (rank 1 of 2 never comes).
WEFT_TRACE=a timeout 60 "$DEMO" -p 1 -t 1 -n 100 >/dev/null || fail "weft-demo a"
WEFT_TRACE=b timeout 60 "$DEMO" -p 1 -t 1 -n 1000 >/dev/null || fail "weft-demo b"
member exact-a --scenario profile || fail "member exact-a"
member exact-b --scenario compute || fail "member exact-b"
member empty --scenario none || fail "member empty"
member held --size 2 --rank 0 || fail "member held"

# Catalog ids come in the order weftd's catalog writer takes the traces.
id_of() { W show "$1" --json | json_get /dev/stdin 'j["id"]'; }
wait_state held recording
for t in a b exact-a exact-b empty held; do
    printf -v "ID_${t//-/_}" '%s' "$(id_of "$t")"
done

# ---- weft wait ----
# A complete trace: exit 0, nothing printed.
out=$(W wait a --timeout 60 2>&1) || fail "weft wait a: exit $?: $out"
[ -z "$out" ] || fail "weft wait of a complete trace printed: $out"
for t in b exact-a exact-b empty; do
    W wait "$t" --timeout 60 || fail "weft wait $t: exit $?"
done
# --verbose says what it saw on stderr, not stdout.
W wait a -v >"$TMP/out" 2>"$TMP/err" || fail "weft wait -v a"
[ -s "$TMP/out" ] && fail "weft wait -v printed on stdout: $(cat "$TMP/out")"
grep -q "^weft wait: trace 'a' (#$ID_a) is complete$" "$TMP/err" ||
    fail "weft wait -v: $(cat "$TMP/err")"
# A trace that stays recording: the timeout exit, the state named.
expect 5 "weft wait: trace 'held' (#$ID_held) is still recording after 1 s" W wait held --timeout 1
expect 5 "is still recording after 0.3 s" W wait held --timeout 0.3
expect 5 "is still recording after 0 s" W wait held --timeout 0
start=$(date +%s%N)
W wait held --timeout 2 2>/dev/null
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 5 ] || fail "weft wait held --timeout 2: exit $rc"
[ "$ms" -ge 1900 ] && [ "$ms" -lt 6000 ] || fail "weft wait --timeout 2 took $ms ms"
W wait held --timeout 0.5 -v 2>"$TMP/err"
grep -q "^weft wait: trace 'held' (#$ID_held) is recording$" "$TMP/err" ||
    fail "weft wait -v of a recording trace: $(cat "$TMP/err")"
# No such trace (yet): waited for until the timeout, then exit 6.
expect 6 "weft wait: no trace 'nosuch' in $CAT after 1 s" W wait nosuch --timeout 1
W wait nosuch --timeout 0.2 -v 2>"$TMP/err"
grep -q "no trace 'nosuch' yet; waiting for it to appear" "$TMP/err" ||
    fail "weft wait -v of a missing trace: $(cat "$TMP/err")"
# A trace that appears while waited for: weft wait finds it and returns
# when it is complete.
W wait later --timeout 30 2>"$TMP/later.err" &
waiter=$!
sleep 0.5
kill -0 "$waiter" 2>/dev/null || fail "weft wait later returned before the trace came: $(cat "$TMP/later.err")"
WEFT_TRACE=later timeout 60 "$DEMO" -p 2 -t 2 -n 50 -s 1000 >/dev/null || fail "weft-demo later"
wait_gone "$waiter" 30 || { kill "$waiter"; fail "weft wait later still waits"; }
wait "$waiter" || fail "weft wait later: exit $?: $(cat "$TMP/later.err")"
# Partial and failed: their own exits, the reason on stderr. The states
# are set in the catalog by hand (weftd is not asked).
"$PY" - "$CAT" <<'PY' || fail "cannot set the states"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO traces (key, name, uid, state, created, path, error)"
          " VALUES ('part-1', 'part', 0, 'partial', 1, '/nonexistent',"
          " 'rank 1 vanished'), ('bad-1', 'bad', 0, 'failed', 1, '/x',"
          " 'disk full'), ('gone-1', 'gone', 0, 'removed', 1, '/x',"
          " 'retention: older than 7d')")
c.commit()
PY
for t in part bad gone; do printf -v "ID_$t" '%s' "$(id_of "$t")"; done
expect 3 "weft wait: trace 'part' (#$ID_part) is partial: rank 1 vanished" W wait part
W wait part --json 2>/dev/null >"$TMP/wp.json"
[ $? -eq 3 ] || fail "weft wait part --json: not exit 3"
[ "$(json_get "$TMP/wp.json" '(j["outcome"], j["error"], j["exit_status"])')" = "('partial', 'rank 1 vanished', 3)" ] ||
    fail "weft wait part --json: $(cat "$TMP/wp.json")"
expect 4 "weft wait: trace 'bad' (#$ID_bad) failed: disk full" W wait bad
expect 4 "trace 'gone' (#$ID_gone) was removed by weftd's retention: retention: older than 7d" W wait gone
# A failure weftd converts again (retry_at): waited through until a
# minute after that time, then taken as final.
now=$(date +%s)
"$PY" - "$CAT" "$now" <<'PY' || fail "cannot set the retries"
import sqlite3, sys
c, now = sqlite3.connect(sys.argv[1]), int(sys.argv[2])
c.execute("INSERT INTO traces (key, name, uid, state, created, path, error,"
          " retry_at) VALUES ('again-1', 'again', 0, 'failed', 1, '/x',"
          " 'disk full', ?), ('stale-1', 'stale', 0, 'failed', 1, '/x',"
          " 'disk full', ?)", (now + 1000, now - 61))
c.commit()
PY
for t in again stale; do printf -v "ID_$t" '%s' "$(id_of "$t")"; done
expect 5 "weft wait: trace 'again' (#$ID_again) failed, and weftd has not converted it again after 1 s" \
    W wait again --timeout 1
W wait again --timeout 0.3 -v 2>"$TMP/err"
grep -q "^weft wait: trace 'again' (#$ID_again) failed: disk full; weftd converts it again in [0-9]* s$" "$TMP/err" ||
    fail "weft wait -v of a failure to be retried: $(cat "$TMP/err")"
W show again >"$TMP/out" || fail "weft show again"
grep -q "^retry: *weftd converts it again at " "$TMP/out" || fail "weft show: no retry line: $(cat "$TMP/out")"
[ "$(W show again --json | json_get /dev/stdin 'j["retry_at"]')" -eq $((now + 1000)) ] ||
    fail "weft show --json: retry_at is not the catalog's"
[ "$(W show bad --json | json_get /dev/stdin 'j["retry_at"]')" = None ] ||
    fail "weft show --json: a failure without a retry has a retry_at"
expect 4 "weft wait: trace 'stale' (#$ID_stale) failed: disk full (weftd was to convert it again and did not)" \
    W wait stale --timeout 10
# bad command lines
expect 2 "weft wait: missing argument (usage: weft wait TRACE" W wait
expect 2 "weft wait: unexpected argument 'b'" W wait a b
expect 2 "weft wait: --timeout needs a value" W wait a --timeout
for v in '' abc -1 1x 1.5.2 1e3 . 5mm inf nan 99999999999 ' 1'; do
    expect 2 "weft wait: --timeout '$v': not a number of seconds" W wait a --timeout "$v"
done
expect 2 "Try 'weft wait --help'." W wait a --timeout abc
expect 2 "weft wait: unknown option '--top'" W wait a --top 3
for v in 1 0.5 2s 1m 1h 1d .5 3. never; do
    W wait a --timeout "$v" || fail "weft wait a --timeout $v: exit $?"
done
# The default timeout is documented (10 minutes; never waits for ever).
W help wait | grep -q "default 10m" || fail "weft help wait: no default timeout"
# --json: one object on stdout when the wait ends, the messages still on
# stderr, the exit status unchanged.
W wait a --json >"$TMP/w.json" 2>"$TMP/err" || fail "weft wait a --json: exit $?"
[ -s "$TMP/err" ] && fail "weft wait a --json said: $(cat "$TMP/err")"
W wait held --timeout 0.3 --json >"$TMP/wh.json" 2>"$TMP/err"
[ $? -eq 5 ] || fail "weft wait held --json: not the timeout exit"
grep -q "is still recording after 0.3 s" "$TMP/err" || fail "weft wait held --json: $(cat "$TMP/err")"
W wait nosuch --timeout 0.2 --json >"$TMP/wn.json" 2>/dev/null
[ $? -eq 6 ] || fail "weft wait nosuch --json: not exit 6"
"$PY" - "$TMP/w.json" "$TMP/wh.json" "$TMP/wn.json" "$ID_a" "$ID_held" <<'PY' || fail "weft wait --json"
import json, sys
a, h, n = (json.load(open(f)) for f in sys.argv[1:4])
assert (a["trace"], a["id"], a["name"], a["state"], a["outcome"], a["exit_status"]) == \
    ("a", int(sys.argv[4]), "a", "complete", "complete", 0), a
assert a["timeout_s"] == 600 and a["waited_s"] < 30 and a["error"] is None, a
assert (h["id"], h["state"], h["outcome"], h["exit_status"], h["timeout_s"]) == \
    (int(sys.argv[5]), "recording", "timeout", 5, 0.3), h
assert h["waited_s"] >= 0.29, h
assert (n["trace"], n["id"], n["name"], n["state"], n["outcome"], n["exit_status"]) == \
    ("nosuch", None, None, None, "not found", 6), n
PY

# ---- weft path ----
W path a >"$TMP/path" || fail "weft path a"
[ "$(cat "$TMP/path")" = "$SPOOL/traces/$(W show a --json | json_get /dev/stdin 'j["key"]')/archive/traces.otf2" ] ||
    fail "weft path a: $(cat "$TMP/path")"
otf2-print -Werror --silent "$(W path a)" >/dev/null || fail "otf2-print rejects \$(weft path a)"
[ "$(W path b --dir)" = "$(dirname "$(W path b)")" ] || fail "weft path --dir: $(W path b --dir)"
[ -d "$(W path b --dir)" ] || fail "weft path --dir is not a directory"
[ "$(W path "#$ID_a")" = "$(cat "$TMP/path")" ] || fail "weft path '#1' differs from weft path a"
expect 1 "weft: trace 'held' (#$ID_held) is still recording: its archive is written when it is converted" W path held
expect 1 "weft: trace 'bad' (#$ID_bad) failed, it has no archive: disk full" W path bad
expect 1 "trace 'gone' (#$ID_gone) was removed, it has no archive: retention: older than 7d" W path gone
expect 1 "the archive of trace 'part' (#$ID_part) is not there: /nonexistent/traces.otf2" W path part
expect 1 "no trace 'nosuch' in $CAT" W path nosuch
[ -z "$(W path held 2>/dev/null)" ] || fail "weft path of a recording trace printed a path"
expect 2 "weft path: missing argument (usage: weft path TRACE" W path
expect 2 "weft path: unexpected argument 'b'" W path a b
# --json: the anchor and the directory, with the trace they are of;
# nothing on stdout when there is no archive.
W path a --json >"$TMP/path.json" || fail "weft path a --json"
[ "$(json_get "$TMP/path.json" '(j["archive"], j["id"], j["name"], j["state"])')" = \
  "('$(cat "$TMP/path")', $ID_a, 'a', 'complete')" ] || fail "weft path --json: $(cat "$TMP/path.json")"
[ "$(json_get "$TMP/path.json" 'j["dir"]')" = "$(W path a --dir)" ] || fail "weft path --json: dir"
[ -z "$(W path held --json 2>/dev/null)" ] || fail "weft path --json of a recording trace printed"
expect 1 "is still recording" W path held -j
expect 2 "weft path: unknown option '--top'" W path a --top 3

# ---- weft verify --json ----
W verify a --json >"$TMP/v.json" 2>"$TMP/err" || fail "weft verify a --json: $(cat "$TMP/err")"
"$PY" - "$TMP/v.json" "$ID_a" "$(W show a --json | json_get /dev/stdin 'j["events"]')" <<'PY' || fail "weft verify --json: $(cat "$TMP/v.json")"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["ok"] is True and v["problems"] == [], v
assert (v["id"], v["name"], v["events"]) == (int(sys.argv[2]), "a", int(sys.argv[3])), v
assert v["archive"].endswith("/archive/traces.otf2") and v["locations"] >= 1, v
PY
W verify part --json >"$TMP/vp.json" 2>"$TMP/err"
[ $? -eq 1 ] || fail "weft verify part --json: not exit 1"
grep -q "difference" "$TMP/err" || fail "weft verify part --json: stderr $(cat "$TMP/err")"
[ "$(json_get "$TMP/vp.json" '(j["ok"], len(j["problems"]) >= 1, "/nonexistent" in j["problems"][0])')" = "(False, True, True)" ] ||
    fail "weft verify part --json: $(cat "$TMP/vp.json")"

# ---- weft show of traces not converted yet ----
# Recording (held) and converting (set by hand): the time range,
# duration and clock are not known yet, never zeros that look like data.
"$PY" - "$CAT" <<'PY' || fail "cannot add a converting trace"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO traces (key, name, uid, state, created, path, events)"
          " VALUES ('conv-1', 'conv', 0, 'converting', 1, '/x', 12)")
c.commit()
PY
for t in held conv; do
    W show "$t" >"$TMP/show.txt" || fail "weft show $t"
    for f in "time range" duration "wall time" clock; do
        grep -q "^$f: *not known until the conversion ends$" "$TMP/show.txt" ||
            fail "weft show $t: no '$f: not known': $(cat "$TMP/show.txt")"
    done
    grep -q "0 \.\. 0" "$TMP/show.txt" && fail "weft show $t: zeros: $(cat "$TMP/show.txt")"
    [ "$(W show "$t" --json | json_get /dev/stdin '(j["duration_s"], j["wall_time_s"])')" = "(None, None)" ] ||
        fail "weft show $t --json: durations before the conversion"
done
# A converted trace: the time range in seconds, both durations named.
W show exact-a >"$TMP/show.txt" || fail "weft show exact-a"
W show exact-a --json >"$TMP/show.json" || fail "weft show exact-a --json"
"$PY" - "$TMP/show.txt" "$TMP/show.json" <<'PY' || fail "weft show exact-a: $(cat "$TMP/show.txt")"
import json, re, sys
text = open(sys.argv[1]).read()
j = json.load(open(sys.argv[2]))
res, first, last = j["timer_resolution"], j["time_first"], j["time_last"]
assert res == 1000, j
line = re.search(r"^time range: +(\S+) \.\. (\S+) s \(the clock's seconds; 1000 ticks/s\)$", text, re.M)
assert line, text
assert line.group(1) == "%d.%03d" % divmod(first, 1000), (line.group(1), first)
assert line.group(2) == "%d.%03d" % divmod(last, 1000), (line.group(2), last)
span = (last - first) / res
assert abs(j["duration_s"] - span) < 1e-12, (j["duration_s"], span)
assert re.search(r"^duration: +%.3f ms \(first to last event\)$" % (span * 1e3), text, re.M), text
assert re.search(r"^wall time: +(under 1 s|[0-9]+s) \(created to finished, in whole seconds\)$", text, re.M), text
assert j["wall_time_s"] == j["finished"] - j["created"], j
PY

# ---- weft compare ----
# The exact profiles: exact-a (scenario profile) has main 0.060 s
# exclusive, f, g, rec, a, b and ODD, and 0.020 s outside traced calls
# (thread 1 from 50 to 60 ms, thread 2 from 20 to 30 ms); exact-b
# (compute) main 0.040 s and compute 0.060 s (new), no time outside.
# Sorted by |change|, ties by name.
W compare exact-a exact-b --json >"$TMP/cmp.json" || fail "weft compare --json"
"$PY" - "$TMP/cmp.json" "$ID_exact_a" "$ID_exact_b" <<'PY' || fail "compare --json: $(cat "$TMP/cmp.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert (j["a"]["name"], j["a"]["id"], j["a"]["state"]) == ("exact-a", int(sys.argv[2]), "complete"), j["a"]
assert (j["b"]["name"], j["b"]["id"]) == ("exact-b", int(sys.argv[3])), j["b"]
assert {"id", "key", "name", "state", "created", "run", "archive"} <= set(j["a"]), j["a"]
rows = j["regions"]
changes = [abs(r["change_s"]) for r in rows]
assert changes == sorted(changes, reverse=True), changes
first = rows[0]
assert first["region"] == "compute" and first["status"] == "new", first
assert first["visits_a"] is None and first["excl_s_a"] is None, first
assert first["visits_b"] == 1 and abs(first["excl_s_b"] - 0.060) < 1e-9, first
assert first["change_pct"] is None, first
main = [r for r in rows if r["region"] == "main"][0]
assert main["status"] == "both" and main["visits_a"] == 1 and main["visits_b"] == 1, main
assert abs(main["excl_s_a"] - 0.060) < 1e-9 and abs(main["excl_s_b"] - 0.040) < 1e-9, main
assert abs(main["change_s"] + 0.020) < 1e-9 and main["change_pct"] == -33.3333, main
gone = [r for r in rows if r["status"] == "gone"]
assert sorted(r["region"] for r in gone) == sorted(["f", "g", "rec", "a", "b", "it's \"odd\"\n'); DROP TABLE regions;--", "outside traced calls"]), gone
for r in gone:
    assert r["visits_b"] is None and r["excl_s_b"] is None and r["change_pct"] == -100.0, r
    assert abs(r["change_s"] + r["excl_s_a"]) < 1e-12, r
# ties by name
for x, y in zip(rows, rows[1:]):
    if abs(x["change_s"]) == abs(y["change_s"]):
        assert x["region"] < y["region"], (x, y)
t = j["total"]
assert (t["regions"], t["new"], t["gone"]) == (len(rows), 1, 7), t
out = [r for r in rows if r["region"] == "outside traced calls"][0]
assert out["visits_a"] == 0 and abs(out["excl_s_a"] - 0.020) < 1e-9, out
assert j["noise"] is None, j
assert t["visits_a"] == sum(r["visits_a"] or 0 for r in rows), t
assert abs(t["excl_s_b"] - 0.100) < 1e-9, t
PY
W profile exact-a --limit 0 --json >"$TMP/prof.json" || fail "weft profile exact-a"
"$PY" - "$TMP/cmp.json" "$TMP/prof.json" <<'PY' || fail "compare's A side differs from weft profile"
import json, sys
c = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
a = {r["region"]: (r["visits_a"], r["excl_s_a"]) for r in c["regions"] if r["status"] != "new"}
assert a == {r["region"]: (r["visits"], r["excl_s"]) for r in p["regions"]}, (a, p)
PY
# The text: the traces, the count, aligned columns, new/gone, the total.
W compare exact-a exact-b >"$TMP/cmp.txt" || fail "weft compare"
has() { # FILE ERE WHAT: a line of FILE matches ERE
    grep -qE -- "$2" "$1" || fail "compare: $3: $(cat "$1")"
}
has "$TMP/cmp.txt" "^A: #$ID_exact_a 'exact-a' complete, .* \\(exact-a-" "the A line"
has "$TMP/cmp.txt" "^B: #$ID_exact_b 'exact-b' complete, " "the B line"
has "$TMP/cmp.txt" '^regions: 9 \(1 new in B, 7 gone from A\)$' "the regions line"
has "$TMP/cmp.txt" '^noise: unknown \(one run of each side' "the noise line"
sed -n '6,7p' "$TMP/cmp.txt" >"$TMP/head2"
has "$TMP/head2" '^REGION +VISITS A +VISITS B +EXCL S A +EXCL S B +CHANGE S +CHANGE %$' "the header"
has "$TMP/head2" '^compute +- +1 +- +0\.060000 +\+0\.060000 +new$' "the first row"
has "$TMP/cmp.txt" '^main +1 +1 +0\.060000 +0\.040000 +-0\.020000 +-33\.3$' "the main row"
has "$TMP/cmp.txt" "^it's \"odd\"\\\\n'\\); DROP TABLE regions;-- +1 +- +0\\.010000 +- +-0\\.010000 +gone$" \
    "the odd name escaped in one row"
tail -n 1 "$TMP/cmp.txt" | grep -qE '^\(total\) +[0-9]+ +2 +0\.[0-9]{6} +0\.100000 +[-+]0\.[0-9]{6} +[-+][0-9.]+$' ||
    fail "compare: total line: $(cat "$TMP/cmp.txt")"
# Columns line up: each header's right edge is each number's.
"$PY" - "$TMP/cmp.txt" <<'PY' || fail "compare: columns not aligned: $(cat "$TMP/cmp.txt")"
import sys
lines = open(sys.argv[1]).read().split("\n")[5:-1]
widths = {len(l) for l in lines}
assert len(widths) == 1, widths
PY
# --top: the rows that changed most, the total of all, a note.
W compare exact-a exact-b --top 2 >"$TMP/top.txt" || fail "compare --top 2"
[ "$(sed -n '7,8p' "$TMP/top.txt" | cut -d' ' -f1)" = "$(printf 'compute\nrec')" ] ||
    fail "compare --top 2: $(cat "$TMP/top.txt")"
grep -q "^(total) " "$TMP/top.txt" || fail "compare --top 2: no total: $(cat "$TMP/top.txt")"
grep -q "(the 2 regions that changed most of 9; --top 0 shows all)" "$TMP/top.txt" ||
    fail "compare --top 2: no note: $(cat "$TMP/top.txt")"
[ "$(W compare exact-a exact-b --top 0 --json | json_get /dev/stdin 'len(j["regions"])')" = 9 ] ||
    fail "compare --top 0 does not show all 9 regions"
[ "$(W compare exact-a exact-b --top=1 -j | json_get /dev/stdin '[r["region"] for r in j["regions"]]')" = "['compute']" ] ||
    fail "compare --top=1 -j"
[ "$(W compare exact-a exact-b --top 1 --json | json_get /dev/stdin 'j["total"]["regions"]')" = 9 ] ||
    fail "compare --top 1: the total does not count all regions"
# The weft-demo runs: b did 10 times a's iterations; sorted by |change|.
W compare a b --json >"$TMP/ab.json" || fail "weft compare a b --json"
"$PY" - "$TMP/ab.json" <<'PY' || fail "compare a b: $(cat "$TMP/ab.json")"
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["regions"]
assert rows and all(r["status"] == "both" for r in rows), rows
changes = [abs(r["change_s"]) for r in rows]
assert changes == sorted(changes, reverse=True), changes
v = {r["region"]: (r["visits_a"], r["visits_b"]) for r in rows}
tenfold = [k for k, (x, y) in v.items() if x and y == 10 * x]
assert tenfold, v
for r in rows:
    if r["excl_s_a"] > 0:
        assert abs(r["change_pct"] - round(100 * (r["excl_s_b"] - r["excl_s_a"]) / r["excl_s_a"], 4)) < 1e-3, r
PY
W compare a b >/dev/null || fail "weft compare a b"
# The same trace twice: a note, no change.
W compare a "$ID_a" >"$TMP/same.txt" 2>"$TMP/same.err" || fail "weft compare a 1"
grep -q "weft compare: A and B are the same trace (#$ID_a)" "$TMP/same.err" || fail "compare a a: $(cat "$TMP/same.err")"
tail -n 1 "$TMP/same.txt" | grep -qE ' 0\.000000 +0\.0$' || fail "compare a a: $(cat "$TMP/same.txt")"
# Traces without a profile, unknown traces: exit 1, naming the trace.
expect 1 "weft: trace 'empty' (#$ID_empty) has no region profile (no Enter and Leave events)" W compare a empty
expect 1 "weft: trace 'empty' (#$ID_empty) has no region profile" W compare empty a
expect 1 "weft: trace 'held' (#$ID_held) is still recording: its profile is made when it is converted" W compare held a
expect 1 "weft: no trace 'nosuch' in $CAT" W compare a nosuch
expect 1 "weft: no trace 'nosuch' in $CAT" W compare nosuch a
[ -z "$(W compare a empty 2>/dev/null)" ] || fail "compare printed rows for a trace without a profile"
# bad command lines
expect 2 "weft compare: missing argument (usage: weft compare A B" W compare
expect 2 "weft compare: missing argument (usage: weft compare A B" W compare a
expect 2 "weft compare: unexpected argument 'c'" W compare a b c
expect 2 "weft compare: --top needs a value" W compare a b --top
for v in '' x -1 1.5 ' 2' 99999999999999999999; do
    expect 2 "weft compare: --top '$v': not a number (0: all regions)" W compare a b --top "$v"
done
expect 2 "weft compare: unknown option '--limit'" W compare a b --limit 3
expect 2 "weft compare: unknown option '-v'" W compare a b -v

# ---- weft help ----
# Every command of cli/commands.c's table, which weft --help must list,
# no more, no fewer: a command added to the table is checked here too.
cmds=$(sed -n 's/^    { "\([a-z][a-z0-9-]*\)", \(weft__cmd_\|weft__cli_cmd_\)[a-z_]*,.*/\1/p' \
    "$WEFT_SRCDIR/cli/commands.c")
listed=$(W --help | sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z0-9-]*\)\( .*\)\{0,1\}$/\1/p')
case " $(echo $cmds) " in *" export "*" help "*) ;;
    *) fail "no command table found in cli/commands.c: '$cmds'";; esac
[ "$(echo $cmds)" = "$(echo $listed)" ] ||
    fail "weft --help lists '$(echo $listed)', cli/commands.c's table has '$(echo $cmds)'"
for c in $cmds; do
    W "$c" --help >"$TMP/h1" || fail "weft $c --help"
    W help "$c" >"$TMP/h2" || fail "weft help $c"
    cmp -s "$TMP/h1" "$TMP/h2" || { diff -u "$TMP/h1" "$TMP/h2" >&2; fail "weft help $c differs from weft $c --help"; }
done
W --help >"$TMP/h1" || fail "weft --help"
W help >"$TMP/h2" || fail "weft help"
cmp -s "$TMP/h1" "$TMP/h2" || fail "weft help differs from weft --help"
for c in compare path wait help; do
    grep -q "^  $c " "$TMP/h1" || fail "weft --help lacks $c"
done
grep -q "^  6  no such trace" <(W help wait) || fail "weft help wait does not document the exit 6"
expect 2 "weft help: unknown command 'nosuch'" W help nosuch
# A near miss names the command meant; a far one does not guess.
expect 2 "weft: unknown command 'lsit'; did you mean 'list'?" W lsit
expect 2 "weft: unknown command 'wiat'; did you mean 'wait'?" W wiat a
expect 2 "weft: unknown command 'reprot'; did you mean 'report'?" W reprot
expect 2 "weft help: unknown command 'shwo'; did you mean 'show'?" W help shwo
expect 2 "Try 'weft --help'." W lsit
W nosuch 2>&1 | grep -q "did you mean" && fail "weft nosuch: a guess"
W l 2>&1 | grep -q "did you mean" && fail "weft l: a guess from one letter"
# export names what opens its JSON today, not chrome://tracing alone.
W help export >"$TMP/h1" || fail "weft help export"
grep -q "https://ui.perfetto.dev" "$TMP/h1" || fail "weft help export: no Perfetto UI"
grep -q "for Perfetto UI and" "$TMP/h1" && fail "weft help export: still advertises chrome://tracing"
expect 2 "Try 'weft help --help'." W help nosuch
expect 2 "weft help: unexpected argument 'show'" W help list show
expect 2 "weft help: unknown option '--json'" W help --json
expect 2 "weft: unknown command 'nosuch'" W nosuch

stop_weftd
# weftd need not run: wait and path read the catalog.
W wait a --timeout 1 || fail "weft wait without weftd"
expect 5 "still recording" W wait held --timeout 0.2
# A trace that is not there while no weftd runs will never come: said at
# once (no --timeout: the default's 10 minutes are not waited).
start=$(date +%s%N)
expect 6 "weft wait: no trace 'nosuch' in the catalog, and weftd is not running to add it" W wait nosuch
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -lt 5000 ] || fail "weft wait nosuch without weftd took $ms ms"
expect 1 "weftd is not running" W status
# What tells that weftd is not running is its status file (next to the
# catalog): absent, or stale with its pid gone. Stale alone (a full disk)
# or a pid alone is not enough: then the wait goes on to its timeout.
printf '{"pid": %d, "updated": 1}\n' $$ >"$SPOOL/weftd.status"
expect 6 "weft wait: no trace 'nosuch' in $CAT after 0.5 s" W wait nosuch --timeout 0.5
sleep 0 & gone=$!
wait "$gone"
printf '{"pid": %d, "updated": %d}\n' "$gone" "$(date +%s)" >"$SPOOL/weftd.status"
expect 6 "weft wait: no trace 'nosuch' in $CAT after 0.5 s" W wait nosuch --timeout 0.5
printf '{"pid": %d, "updated": 1}\n' "$gone" >"$SPOOL/weftd.status"
expect 6 "and weftd is not running to add it" W wait nosuch --timeout 30
rm -f "$SPOOL/weftd.status"
W path a >/dev/null || fail "weft path without weftd"
echo ok

#!/bin/bash
# e2e_cli_tree.sh - what the weft command shows of a process tree's trace
# (issue #32): catalog rows as weftd writes them for one (schema 13: each
# location's process and program) make `weft profile --by-program` sum
# the processes that ran the same program, `weft show` name each
# location's process and each member's program, and `weft report` give the timeline its process.
# (The rows are written here: weftd's joining of a tree is
# tests/e2e_tree.sh's.)
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
W() { timeout 20 "$WEFT" --catalog "$CAT" "$@"; }

start_weftd
stop_weftd              # it made the catalog
"$PY" - "$CAT" "$(id -u)" <<'PYEOF' || fail "cannot add the tree trace"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t = c.execute("INSERT INTO traces (key, name, uid, state, members,"
              " locations, timer_resolution, time_first, time_last)"
              " VALUES ('tree-key', 'build', ?, 'complete', 3, 4, 1000,"
              " 0, 9000)", (int(sys.argv[2]),)).lastrowid
locs = [(0, 0, 0, "make (pid 100)", "make"), (1 << 32, 1, 0, "cc1 (pid 101)",
        "cc1"), (2 << 32, 2, 0, "cc1 (pid 103)", "cc1"),
        ((2 << 32) | 1, 2, 1, "cc1 (pid 103)", "cc1")]
for i, r, th, proc, prog in locs:
    c.execute("INSERT INTO locations (trace_id, id, rank, thread, name,"
              " events, process, program) VALUES (?, ?, ?, ?, ?, 2, ?, ?)",
              (t, i, r, th, "Master thread" if th == 0 else "Thread 1",
               proc, prog))
    c.execute("INSERT INTO members (trace_id, rank, host, pid, state)"
              " VALUES (?, ?, 'node-a', ?, 'complete')"
              " ON CONFLICT DO NOTHING", (t, r, int(proc.split()[2][:-1])))
regions = [(0, "main", 1.0), (1 << 32, "parse", 3.0), (1 << 32, "main", 2.0),
           (2 << 32, "parse", 1.0), ((2 << 32) | 1, "parse", 0.5),
           (None, "main", 3.0), (None, "parse", 4.5)]
for loc, reg, s in regions:
    c.execute("INSERT INTO regions (trace_id, location_id, region, visits,"
              " incl_s, excl_s, paradigm) VALUES (?, ?, ?, 1, ?, ?,"
              " 'compiler')", (t, loc, reg, s, s))
# each location one bin of region 0 (a uvarint: region id + 1)
c.execute("INSERT INTO timeline_regions VALUES (?, 0, 'main')", (t,))
for i, *_ in locs:
    c.execute("INSERT INTO timelines VALUES (?, ?, 0, 0.001, 1, x'01')",
              (t, i))
c.commit()
PYEOF

# profile --by-program: cc1's two processes (three locations) summed
W profile build --by-program >"$TMP/prog.txt" || fail "profile --by-program"
grep -Eq '^PROGRAM +REGION +PARADIGM +VISITS' "$TMP/prog.txt" ||
    fail "profile --by-program: no PROGRAM column: $(cat "$TMP/prog.txt")"
grep -Eq '^cc1 +parse +compiler +3 +4\.5' "$TMP/prog.txt" ||
    fail "profile --by-program: cc1 parse must be 3 visits, 4.5 s: $(cat "$TMP/prog.txt")"
grep -Eq '^cc1 +main +compiler +1 +2\.0' "$TMP/prog.txt" &&
    grep -Eq '^make +main +compiler +1 +1\.0' "$TMP/prog.txt" ||
    fail "profile --by-program: cc1 main / make main: $(cat "$TMP/prog.txt")"
[ "$(wc -l <"$TMP/prog.txt")" -eq 4 ] ||
    fail "profile --by-program: expected a header and 3 rows: $(cat "$TMP/prog.txt")"
W profile build --by-program --json >"$TMP/prog.json" || fail "profile --json"
[ "$(json_get "$TMP/prog.json" '(j["by_program"], [(r["program"], r["region"], r["paradigm"], r["visits"]) for r in j["regions"]])')" = \
  "(True, [('cc1', 'parse', 'compiler', 3), ('cc1', 'main', 'compiler', 1), ('make', 'main', 'compiler', 1)])" ] ||
    fail "profile --by-program --json: $(cat "$TMP/prog.json")"
expect 2 "one or the other" W profile build --by-program --by-location
expect 0 "by-program" "$WEFT" help profile

# show: each location says its process
W show build >"$TMP/show.txt" || fail "show"
grep -q "cc1 (pid 103) Thread 1" "$TMP/show.txt" ||
    fail "show: locations must name their process: $(cat "$TMP/show.txt")"
grep -Eq '^RANK +HOST +PID +PARENT +PROGRAM +STATE' "$TMP/show.txt" &&
    grep -Eq '^ +2 +node-a +103 +- +cc1 +complete' "$TMP/show.txt" ||
    fail "show: members must name their parent (none known: -) and program: $(cat "$TMP/show.txt")"
W show build --json >"$TMP/show.json" || fail "show --json"
[ "$(json_get "$TMP/show.json" '[(l["process"], l["program"]) for l in j["locations"]][1]')" = \
  "('cc1 (pid 101)', 'cc1')" ] || fail "show --json: $(cat "$TMP/show.json")"
[ "$(json_get "$TMP/show.json" '[m.get("program") for m in j["ranks"]]')" = \
  "['make', 'cc1', 'cc1']" ] || fail "show --json: members' programs: $(cat "$TMP/show.json")"

# report: the timeline's locations carry their process
W report build -o "$TMP/report.html" || fail "report"
grep -q '"process": *"cc1 (pid 103)"' "$TMP/report.html" ||
    fail "report: the locations must carry their process"
# rendered (headless Chromium when there is one): one row per location
# labelled by its process, a thread other than the first after it
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
    export HOME="$TMP/home"
    mkdir -p "$HOME"
    timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
        --no-first-run --disable-extensions --user-data-dir="$TMP/chromium" \
        --dump-dom "file://$TMP/report.html" >"$TMP/report.dom" \
        2>"$TMP/chromium.log" || fail "chromium: $(tail -3 "$TMP/chromium.log")"
    "$PY" - "$TMP/report.dom" <<'PYEOF' || fail "report: timeline labels"
import re, sys
dom = open(sys.argv[1]).read()
labels = re.findall(r'<div class="tl-row"[^>]*>([^<]*)<', dom)
want = ["make (pid 100)", "cc1 (pid 101)", "cc1 (pid 103)",
        "cc1 (pid 103) Thread 1"]
assert labels == want, labels
PYEOF
else
    echo "no chromium: the rendered labels are not checked"
fi
echo ok

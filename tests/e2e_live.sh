#!/bin/bash
# e2e_live.sh - the catalog and the CLI agree while a trace records (issue
# #11): weftd writes the figures received so far (members joined,
# locations, events, bytes) every live_interval seconds, `weft show` and
# `weft list` print them marked live, and the conversion's final figures
# replace them exactly.
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
W() { timeout 20 "$WEFT" --catalog "$CAT" "$@"; }
member() { timeout 20 "$RAWPEER" "$WEFT_SERVER" member "$@"; }

# wait_live TRACE EXPR: polls `weft show TRACE --json` (in $TMP/live.json)
# up to 15 s until the Python expression EXPR on it (j) is true.
wait_live() {
    for _ in $(seq 150); do
        if W show "$1" --json >"$TMP/live.json" 2>/dev/null &&
            [ "$(json_get "$TMP/live.json" "$2")" = True ]; then
            return 0
        fi
        sleep 0.1
    done
    fail "weft show '$1' never had $2: $(cat "$TMP/live.json" 2>/dev/null)"
}

start_weftd --set live_interval=1

# 1: rank 0 of 2 sends the profile scenario (3 threads, 23 events) and
# says goodbye; rank 1 has not come: the trace records on.
member "live one" --size 2 --rank 0 --host node-a --pid 100 ||
    fail "rank 0 of 'live one'"
wait_live "live one" 'j.get("live") is True and j["events"] == 23 and j["location_count"] == 3 and j["joined"] == 1 and j["bytes"] > 0'
[ "$(json_get "$TMP/live.json" '(j["state"], j["members"], [(m["rank"], m["host"], m["pid"], m["state"], m["locations"], m["events"]) for m in j["ranks"]], [(l["rank"], l["thread"], l["events"]) for l in j["locations"]], j["missing_ranks"])')" = \
  "('recording', 2, [(0, 'node-a', 100, 'complete', 3, 23)], [(0, 0, 8), (0, 1, 8), (0, 2, 7)], [])" ] ||
    fail "live show --json: $(cat "$TMP/live.json")"
W show "live one" >"$TMP/show.txt" || fail "weft show of a recording trace"
grep -q '^events: *23 (live, received so far)$' "$TMP/show.txt" ||
    fail "weft show does not say the events are live: $(cat "$TMP/show.txt")"
grep -q '^members: *2 (1 joined so far, live)$' "$TMP/show.txt" ||
    fail "weft show does not say how many members joined: $(cat "$TMP/show.txt")"
grep -q '^locations: *3 (live, received so far)$' "$TMP/show.txt" ||
    fail "weft show does not say the locations are live: $(cat "$TMP/show.txt")"
grep -q 'no locations recorded' "$TMP/show.txt" &&
    fail "weft show says no locations recorded while they are: $(cat "$TMP/show.txt")"
W list --json >"$TMP/list.json" || fail "weft list --json"
[ "$(json_get "$TMP/list.json" '[(t["name"], t["live"], t["joined"], t["locations"], t["events"]) for t in j]')" = \
  "[('live one', True, 1, 3, 23)]" ] || fail "live list --json: $(cat "$TMP/list.json")"
W list >"$TMP/list.txt" || fail "weft list"
sed -n 2p "$TMP/list.txt" | grep -q 'live one  recording (live) .* 1/2  *3  *23 ' ||
    fail "weft list does not show the live figures: $(cat "$TMP/list.txt")"

# Rank 1 comes: the trace converts and the final figures are exact, no
# longer marked live. Thread 2 of rank 0 ended with a region open: the
# archive holds its 7 events and the Leave weftd adds so that it nests.
member "live one" --size 2 --rank 1 --host node-b --pid 101 --scenario compute ||
    fail "rank 1 of 'live one'"
wait_state "live one" complete
[ "$(json_get "$TMP/show.json" '("live" in j, "joined" in j, j["events"], j["location_count"], j["members"], [(m["rank"], m["state"], m["locations"], m["events"]) for m in j["ranks"]], [(l["rank"], l["thread"], l["events"], l["name"]) for l in j["locations"]])')" = \
  "(False, False, 28, 4, 2, [(0, 'complete', 3, 24), (1, 'complete', 1, 4)], [(0, 0, 8, 'Master thread'), (0, 1, 8, 'Thread 1'), (0, 2, 8, 'Thread 2'), (1, 0, 4, 'Master thread')])" ] ||
    fail "final figures after the live ones: $(cat "$TMP/show.json")"
W show "live one" | grep -q '(live' && fail "a complete trace is shown live"

# 2: a real program that keeps recording: while weft-demo runs, the live
# figures grow; at the end they are the archive's.
start_demo "live demo" WEFT_FLUSH_MS=200 -- -p 2 -t 2 -n 200 -s 30000
wait_live "live demo" 'j.get("live") is True and j["events"] > 0 and j["location_count"] > 0 and j["joined"] > 0'
kill -0 "$DEMO_PID" 2>/dev/null || fail "weft-demo ended before live figures showed (make it longer)"
first=$(json_get "$TMP/live.json" 'j["events"]')
W list --state recording --json >"$TMP/list.json" || fail "weft list --json"
[ "$(json_get "$TMP/list.json" '[(t["name"], t["live"], t["events"] > 0) for t in j]')" = \
  "[('live demo', True, True)]" ] || fail "recording demo in list: $(cat "$TMP/list.json")"
wait_live "live demo" "j.get(\"live\") is True and j[\"events\"] > $first"
finish_demo "live demo"
wait_state "live demo" complete 60
expected=$(json_get "$TMP/live demo.json" 'sum(sum(k.values()) for k in j.values())')
[ "$(json_get "$TMP/show.json" '(j["events"], j["location_count"], sum(l["events"] for l in j["locations"]), "live" in j)')" = \
  "($expected, 4, $expected, False)" ] || fail "final figures of live demo: $(cat "$TMP/show.json")"
stop_weftd

# 3: the Goodbyes that come after the last live update show while the
# trace converts (weftd stores them as the conversion starts): no update
# comes in an hour, the members say goodbye, and while the row says
# converting its ranks are complete, not still recording.
start_weftd --set live_interval=3600
start_demo "converting" -- -p 2 -t 2 -n 200000
"$PY" - "$CAT" converting <<'EOF2' || fail "members while converting"
import sqlite3, sys, time
seen = None
deadline = time.time() + 120
while time.time() < deadline:
    try:
        c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=5)
        row = c.execute("SELECT id, state FROM traces WHERE name = ?",
                        (sys.argv[2],)).fetchone()
        if row and row[1] == "converting":
            seen = c.execute("SELECT rank, state FROM members WHERE trace_id = ?"
                             " ORDER BY rank", (row[0],)).fetchall()
            break
        if row and row[1] != "recording":
            sys.exit("never saw it converting: %s" % (row,))
        c.close()
    except sqlite3.OperationalError:
        pass
    time.sleep(0.005)
assert seen == [(0, "complete"), (1, "complete")], seen
EOF2
finish_demo "converting"
wait_state "converting" complete 120
stop_weftd

# live_interval = 0: no live figures (the row keeps those of its Hello).
start_weftd --set live_interval=0
member "not live" --size 2 --rank 0 || fail "rank 0 of 'not live'"
wait_state "not live" recording
sleep 2
W show "not live" --json >"$TMP/nl.json" || fail "show 'not live'"
[ "$(json_get "$TMP/nl.json" '(j["live"], j["events"])')" = "(False, 0)" ] ||
    fail "live_interval = 0 still writes live figures: $(cat "$TMP/nl.json")"
stop_weftd

# A trace being converted: its archive's size is not known yet.
"$PY" - "$CAT" <<'EOF2' || fail "cannot add a converting trace"
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO traces (key, name, state, created, members, joined,"
          " locations, events, bytes, live_updated) VALUES"
          " ('conv-key', 'being converted', 'converting', ?, 4, 4, 8, 1000,"
          " 5000, ?)", (int(time.time()), int(time.time())))
c.commit()
EOF2
W list --state converting >"$TMP/conv.txt" || fail "list of a converting trace"
sed -n 2p "$TMP/conv.txt" | grep -q 'being converted  converting .* 4/4  *8  *1000  converting$' ||
    fail "weft list of a converting trace: $(cat "$TMP/conv.txt")"
W show "being converted" | grep -q '^events: *1000 (live, received so far)$' ||
    fail "weft show of a converting trace: $(W show "being converted")"
echo ok

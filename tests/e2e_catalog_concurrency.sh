#!/bin/bash
# e2e_catalog_concurrency.sh - reading the catalog never fails while weftd
# writes it hard (issue #6): 40 short traces from parallel weft-demo runs
# make weftd commit catalog rows continuously while a loop runs weft list,
# list --json, show, show --json, sql and sql --json as fast as it can.
# Every read must exit 0 and its output must parse; the reads are counted
# and checked afterwards against what the catalog holds at the end.
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
TRACES=40
PARALLEL=4
mkdir -p "$TMP/reads"

start_weftd
WEFT_TRACE=warm timeout 60 "$DEMO" -p 1 -t 1 -n 10 >/dev/null || fail "weft-demo warm"
wait_state warm complete

# reader: runs until $TMP/stop exists; each read's output is kept as
# reads/N.KIND, a failing read is logged in $TMP/read-errors.
reader() {
    local n=0 kind rc
    while [ ! -e "$TMP/stop" ]; do
        for kind in list list.json show show.json sql sql.json; do
            n=$((n + 1))
            case $kind in
            list) timeout 30 "$WEFT" --catalog "$CAT" list ;;
            list.json) timeout 30 "$WEFT" --catalog "$CAT" list --json ;;
            show) timeout 30 "$WEFT" --catalog "$CAT" show warm ;;
            show.json) timeout 30 "$WEFT" --catalog "$CAT" show warm --json ;;
            sql) timeout 30 "$WEFT" --catalog "$CAT" sql \
                "SELECT t.name, t.state, count(l.id) AS locs FROM traces t LEFT JOIN locations l ON l.trace_id = t.id GROUP BY t.id" ;;
            sql.json) timeout 30 "$WEFT" --catalog "$CAT" sql --json \
                "SELECT state, count(*) AS n, sum(events) AS events FROM traces GROUP BY state" ;;
            esac >"$TMP/reads/$n.$kind" 2>"$TMP/reads/$n.err"
            rc=$?
            [ "$rc" -eq 0 ] ||
                echo "read $n ($kind) exited $rc: $(cat "$TMP/reads/$n.err")" >>"$TMP/read-errors"
        done
    done
}
reader &
READER=$!

# writers: TRACES traces, PARALLEL at a time, 2 processes x 2 threads each.
writers=()
for i in $(seq 1 "$TRACES"); do
    WEFT_TRACE="busy-$i" timeout 120 "$DEMO" -p 2 -t 2 -n 20 >/dev/null 2>>"$TMP/demo.err" &
    writers+=($!)
    if [ "${#writers[@]}" -eq "$PARALLEL" ] || [ "$i" -eq "$TRACES" ]; then
        for w in "${writers[@]}"; do
            wait "$w" || fail "a weft-demo failed: $(cat "$TMP/demo.err")"
        done
        writers=()
    fi
done
for i in $(seq 1 "$TRACES"); do
    wait_state "busy-$i" complete
done
touch "$TMP/stop"
wait_gone "$READER" 30 || fail "the reader loop did not stop within 30 s"
wait "$READER"

[ -e "$TMP/read-errors" ] && fail "catalog reads failed during ingest:
$(head -n 20 "$TMP/read-errors")"
"$PY" - "$TMP/reads" "$TRACES" <<'EOF' || fail "a read's output does not parse"
import collections, json, os, sys
d, traces = sys.argv[1], int(sys.argv[2])
count = collections.Counter()
for f in os.listdir(d):
    n, kind = f.split(".", 1)
    if kind == "err":
        continue
    text = open(os.path.join(d, f), encoding="utf-8").read()
    count[kind] += 1
    if kind == "list":
        assert text.lstrip().startswith("ID") and "warm" in text, (f, text)
    elif kind == "list.json":
        rows = json.loads(text)
        assert any(r["name"] == "warm" for r in rows), f
        assert all(r["state"] in ("recording", "converting", "complete")
                   for r in rows), (f, rows)
    elif kind == "show":
        assert "warm" in text and "complete" in text, (f, text)
    elif kind == "show.json":
        assert json.loads(text)["state"] == "complete", f
    elif kind == "sql":
        lines = text.splitlines()
        assert lines[0].split() == ["name", "state", "locs"], (f, text)
        assert any(l.split()[0] == "warm" for l in lines[1:]), (f, text)
    elif kind == "sql.json":
        rows = json.loads(text)
        assert sum(r["n"] for r in rows) >= 1, (f, rows)
    else:
        raise AssertionError("unexpected file " + f)
total = sum(count.values())
print("reads during ingest:", total, dict(count))
# At least one full round of every kind: the loop really ran alongside.
assert min(count[k] for k in ("list", "list.json", "show", "show.json",
                              "sql", "sql.json")) >= 1, count
EOF
# The reads overlapped the writes: some read saw a trace not yet complete
# or not all of the traces, else the test proved nothing.
"$PY" - "$TMP/reads" "$TRACES" <<'EOF' || fail "no read overlapped the ingest"
import json, os, sys
d, traces = sys.argv[1], int(sys.argv[2])
seen = []
for f in os.listdir(d):
    if f.endswith(".list.json"):
        rows = json.load(open(os.path.join(d, f)))
        seen.append(sum(r["state"] == "complete" for r in rows))
assert seen and min(seen) < traces + 1, seen
EOF
n=$(timeout 30 "$WEFT" --catalog "$CAT" sql --csv "SELECT count(*) AS n FROM traces WHERE state = 'complete'" | tail -n 1)
[ "$n" -eq $((TRACES + 1)) ] || fail "expected $((TRACES + 1)) complete traces, the catalog has $n"
stop_weftd
echo ok

#!/bin/bash
# e2e_sql.sh - weft sql on a catalog filled by real traces through a real
# weftd: each output format exactly (CSV and JSON parsed back and compared
# with what Python's sqlite3 reads), every kind of write refused with the
# catalog file byte-identical afterwards, SQLite errors and usage errors
# with their exit codes.
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
sql() { timeout 30 "$WEFT" --catalog "$CAT" sql "$@"; }

start_weftd
WEFT_TRACE=plain timeout 60 "$DEMO" -p 2 -t 2 -n 50 >/dev/null || fail "weft-demo plain"
wait_state plain complete
WEFT_TRACE='a "b", c' timeout 60 "$DEMO" -p 1 -t 3 -n 50 >/dev/null || fail "weft-demo quoted"
wait_state 'a "b", c' complete
WEFT_TRACE="it's-€" timeout 60 "$DEMO" -p 1 -t 1 -n 50 >/dev/null || fail "weft-demo utf-8"
wait_state "it's-€" complete

# ---- table (the default) ----
# (by name: ids are drawn at random, not in the order traces came)
sql "SELECT name, members, locations FROM traces ORDER BY name" >"$TMP/t.out" ||
    fail "table query failed"
printf '%s\n' \
    'name      members  locations' \
    'a "b", c        1          3' \
    "it's-€          1          1" \
    'plain           2          4' >"$TMP/t.want"
diff -u "$TMP/t.want" "$TMP/t.out" || fail "table output differs"
sql --table "SELECT NULL AS n, 1.5 AS r, x'00ff' AS b, 'x' || char(10) || 'y' AS nl, -7 AS i" \
    >"$TMP/t2.out" || fail "table of values failed"
printf '%s\n' 'n    r  b     nl     i' '   1.5  00ff  x\ny  -7' >"$TMP/t2.want"
diff -u "$TMP/t2.want" "$TMP/t2.out" || fail "table of values differs"
sql "SELECT name FROM traces WHERE 0" >"$TMP/t3.out" || fail "empty result failed"
[ "$(cat "$TMP/t3.out")" = "name" ] || fail "an empty result prints the header only: $(cat "$TMP/t3.out")"

# ---- CSV: exact text, then parsed back against sqlite3 ----
sql --csv "SELECT NULL AS n, '' AS e, 1.5 AS r, x'00ff' AS b, 'q\"c,' || char(10) || 'l' AS s, 3 AS i" \
    >"$TMP/c1.out" || fail "csv of values failed"
printf 'n,e,r,b,s,i\n,"",1.5,00ff,"q""c,\nl",3\n' >"$TMP/c1.want"
cmp "$TMP/c1.want" "$TMP/c1.out" || fail "csv of values differs: $(cat -A "$TMP/c1.out")"
# Control characters others chose (a name, a command line) never reach
# the terminal raw (#30): ESC, BEL, CR and C1 as in the table, a
# backslash doubled, LF quoted as CSV does; a column name too.
sql --csv "SELECT 'a' || char(27) || '[31m' || char(7) || 'b' || char(13) || 'c\\d' || char(10) || 'e' || char(155) AS s, 1 AS \"x$(printf '\033')y\"" \
    >"$TMP/c3.out" || fail "csv of control characters failed"
printf 's,x\\x1by\n"a\\x1b[31m\\x07b\\rc\\\\d\ne\\xc2\\x9b",1\n' >"$TMP/c3.want"
cmp "$TMP/c3.want" "$TMP/c3.out" ||
    fail "csv of control characters differs: $(cat -A "$TMP/c3.out")"
Q="SELECT t.id, t.name, t.state, t.events, t.name || char(10) || t.key AS two_lines, count(l.id) AS locs FROM traces t JOIN locations l ON l.trace_id = t.id GROUP BY t.id ORDER BY t.id"
sql --csv "$Q" >"$TMP/c2.out" || fail "csv query failed"
"$PY" - "$CAT" "$TMP/c2.out" "$Q" <<'EOF' || fail "csv does not read back as the query's rows"
import csv, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
cur = db.execute(sys.argv[3])
want = [[d[0] for d in cur.description]] + [[str(v) for v in r] for r in cur]
with open(sys.argv[2], newline="") as f:
    got = list(csv.reader(f))
assert got == want, (got, want)
assert len(got) == 4 and any(r[1] == 'a "b", c' and "\n" in r[4]
                             for r in got[1:]), got
EOF

# ---- JSON: exact text, then parsed back with types ----
sql --json "SELECT NULL AS n, 1.5 AS r, x'00ff' AS b, 'é\"' AS s, 9007199254740993 AS big, 1 AS s" \
    >"$TMP/j1.out" || fail "json of values failed"
printf '[\n{"n":null,"r":1.5,"b":"00ff","s":"é\\"","big":9007199254740993,"s:2":1}\n]\n' >"$TMP/j1.want"
cmp "$TMP/j1.want" "$TMP/j1.out" || fail "json of values differs: $(cat "$TMP/j1.out")"
sql --json "SELECT 1 WHERE 0" >"$TMP/j2.out" || fail "empty json failed"
[ "$(cat "$TMP/j2.out")" = "[]" ] || fail "an empty result is []: $(cat "$TMP/j2.out")"
sql --json "$Q" >"$TMP/j3.out" || fail "json query failed"
"$PY" - "$CAT" "$TMP/j3.out" "$Q" <<'EOF' || fail "json does not read back as the query's rows"
import json, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
cur = db.execute(sys.argv[3])
names = [d[0] for d in cur.description]
want = [dict(zip(names, r)) for r in cur]
got = json.load(open(sys.argv[2]))
assert got == want, (got, want)
assert all(isinstance(r["events"], int) and r["events"] > 0 for r in got), got
EOF

# What SELECT needs besides tables: functions, recursive CTEs, the schema.
expect 0 "3" "$WEFT" --catalog "$CAT" sql \
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT max(x) FROM c"
expect 0 "CREATE TABLE traces" "$WEFT" --catalog "$CAT" sql "SELECT sql FROM sqlite_schema WHERE name = 'traces'"
expect 0 "3" "$WEFT" --catalog "$CAT" sql "SELECT count(*) FROM traces; -- a trailing comment"
expect 0 "3" "$WEFT" --catalog "$CAT" sql "SELECT count(*) FROM traces;; /* done */ ;"
# The catalog is found like the other commands find it.
expect 0 "plain" env WEFT_CATALOG="$CAT" "$WEFT" sql "SELECT name FROM traces"
stop_weftd

# ---- refusals: exit 1, the catalog unchanged ----
# weftd closed the catalog last, removing its -wal and -shm files; the
# first reader makes them again (SQLite's WAL mode), and a read-only
# connection leaves them. They are not what the refusals must not change.
expect 0 "3" "$WEFT" --catalog "$CAT" sql "SELECT count(*) FROM traces"
sum_before=$(cat "$CAT"* | md5sum)
ls "$CAT"* >"$TMP/files.before"
refused() { # WHAT-PATTERN QUERY
    expect 1 "weft sql: only read-only queries are allowed: $1" "$WEFT" --catalog "$CAT" sql "$2"
}
refused "INSERT into traces" "INSERT INTO traces (key, state) VALUES ('x', 'complete')"
refused "UPDATE of traces" "UPDATE traces SET name = 'x'"
refused "DELETE from locations" "DELETE FROM locations"
refused "changing the schema" "DROP TABLE traces"
refused "changing the schema" "CREATE TABLE x (a)"
refused "changing the schema" "CREATE TEMP VIEW v AS SELECT 1"
refused "changing the schema" "CREATE INDEX i ON traces (uid)"
refused "ALTER TABLE traces" "ALTER TABLE traces ADD COLUMN z"
refused "ATTACH $TMP/other.db" "ATTACH '$TMP/other.db' AS o"
refused "PRAGMA writable_schema = 1" "PRAGMA writable_schema = 1"
refused "PRAGMA journal_mode" "PRAGMA journal_mode"
refused "PRAGMA user_version = 7" "PRAGMA user_version = 7"
refused "function load_extension()" "SELECT load_extension('x')"
refused "DELETE from traces" "WITH old AS (SELECT id FROM traces) DELETE FROM traces WHERE id IN old"
refused "INSERT into traces" "WITH n(x) AS (SELECT 1) INSERT INTO traces (key, state) SELECT 'k', 's' FROM n"
refused "transaction BEGIN" "BEGIN IMMEDIATE"
refused "SAVEPOINT" "SAVEPOINT s"
refused "REINDEX" "REINDEX"
refused "ANALYZE" "ANALYZE"
refused "the statement writes" "VACUUM"
refused "the pragma_*() table-valued functions (read the schema with SELECT sql FROM sqlite_schema)" \
    "SELECT name FROM pragma_table_info('traces')"
refused "the pragma_*() table-valued functions" "SELECT * FROM pragma_user_version"
expect 1 "weft sql: only one statement is allowed" "$WEFT" --catalog "$CAT" sql "SELECT 1; SELECT 2"
expect 1 "weft sql: only one statement is allowed" "$WEFT" --catalog "$CAT" sql "SELECT 1; DELETE FROM traces"
expect 1 "weft sql: only one statement is allowed" "$WEFT" --catalog "$CAT" sql "SELECT 1; PRAGMA writable_schema = 1"
expect 1 "weft sql: only one statement is allowed" "$WEFT" --catalog "$CAT" sql "SELECT 1;; ; DELETE FROM traces"
expect 1 "weft sql: only one statement is allowed" "$WEFT" --catalog "$CAT" sql "SELECT 1; /* c */ ; -- c
SELECT 2"
expect 1 "no such function: readfile" "$WEFT" --catalog "$CAT" sql "SELECT readfile('/etc/passwd')"
[ -e "$TMP/other.db" ] && fail "ATTACH created $TMP/other.db"
[ "$(cat "$CAT"* | md5sum)" = "$sum_before" ] || fail "the catalog changed after refused queries"
ls "$CAT"* | cmp -s - "$TMP/files.before" || fail "files next to the catalog changed: $(ls "$CAT"*)"
expect 0 "3" "$WEFT" --catalog "$CAT" sql "SELECT count(*) FROM traces"

# ---- SQLite errors (exit 1) and usage errors (exit 2) ----
expect 1 'weft sql: near "SELEC": syntax error' "$WEFT" --catalog "$CAT" sql "SELEC 1"
expect 1 "weft sql: no such table: nope" "$WEFT" --catalog "$CAT" sql "SELECT * FROM nope"
expect 1 "weft sql: no such column: nope" "$WEFT" --catalog "$CAT" sql "SELECT nope FROM traces"
expect 1 "weft sql: the query is empty" "$WEFT" --catalog "$CAT" sql ""
expect 1 "weft sql: the query is empty" "$WEFT" --catalog "$CAT" sql -- "-- nothing"
expect 1 "no catalog at $TMP/none.db" "$WEFT" --catalog "$TMP/none.db" sql "SELECT 1"
echo "not a database, just text that is long enough to have a header" >"$TMP/text.db"
expect 1 "weft sql: catalog $TMP/text.db: file is not a database" "$WEFT" --catalog "$TMP/text.db" sql "SELECT count(*) FROM traces"
expect 2 "missing argument" "$WEFT" --catalog "$CAT" sql
expect 2 "unexpected argument 'SELECT 2'" "$WEFT" --catalog "$CAT" sql "SELECT 1" "SELECT 2"
expect 2 "--csv and --json exclude each other" "$WEFT" --catalog "$CAT" sql --csv --json "SELECT 1"
expect 2 "--table and --csv exclude each other" "$WEFT" --catalog "$CAT" sql --table --csv "SELECT 1"
expect 2 "unknown option '--xml'" "$WEFT" --catalog "$CAT" sql --xml "SELECT 1"
expect 2 "unknown option '--csv'" "$WEFT" --catalog "$CAT" list --csv
expect 0 "Usage: weft [--catalog FILE] sql" "$WEFT" sql --help
expect 0 "sql [--table|--csv|--json] QUERY" "$WEFT" --help
[ "$(cat "$CAT"* | md5sum)" = "$sum_before" ] || fail "the catalog changed after failed queries"
echo ok

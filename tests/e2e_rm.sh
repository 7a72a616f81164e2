#!/bin/bash
# e2e_rm.sh - weft rm wherever the catalog is (issue #11): with the
# catalog outside the spool, weft learns the spool from weftd's
# configuration (or --spool DIR) and removes exactly SPOOL/traces/KEY and
# the trace's rows; a --spool that is not the trace's spool, and a row
# whose path leads outside the spool, are refused with nothing removed.
. "$(dirname "$0")/lib.sh"

CATDIR="$TMP/catalogs"
CAT="$CATDIR/weft.db"
member() { timeout 20 "$RAWPEER" "$WEFT_SERVER" member "$@"; }
# snapshot: every file and directory under $TMP except the catalog's.
snapshot() { (cd "$TMP" && find . -path ./catalogs -prune -o -print | sort); }
key_of() { "$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT key FROM traces WHERE name = ?", (sys.argv[2],)).fetchone()[0])' "$CAT" "$1"; }
id_of() { "$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT id FROM traces WHERE name = ?", (sys.argv[2],)).fetchone()[0])' "$CAT" "$1"; }
# rows_of ID: the rows of trace ID in every table.
rows_of() { "$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("SELECT count(*) FROM traces WHERE id = ?", (sys.argv[2],)).fetchone()[0] + sum(c.execute("SELECT count(*) FROM " + t + " WHERE trace_id = ?", (sys.argv[2],)).fetchone()[0] for t in ("members", "tags", "regions", "locations")))' "$CAT" "$1"; }

mkdir -p "$CATDIR"
printf '[weftd]\nspool = %s\ncatalog = %s\n' "$SPOOL" "$CAT" >"$TMP/weftd.conf"
start_weftd --config "$TMP/weftd.conf"
for t in one two three four five; do
    member "$t" --tag app=x || fail "member $t"
done
for t in one two three four five; do
    for _ in $(seq 100); do
        [ "$(timeout 20 "$WEFT" --catalog "$CAT" show "$t" --json 2>/dev/null |
             "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)" = complete ] && break
        sleep 0.1
    done
done
stop_weftd
for t in one two three four five; do
    [ -d "$SPOOL/traces/$(key_of "$t")/archive" ] || fail "no archive of $t"
done
touch "$SPOOL/traces/keep-me" "$SPOOL/keep-me-too"

# 1: the spool from weftd's configuration, catalog given with --catalog.
before=$(snapshot)
k=$(key_of one)
id=$(id_of one)
[ "$(rows_of "$id")" -gt 4 ] || fail "trace one has too few rows to check"
expect 0 "removed trace 'one'" env WEFT_CONFIG="$TMP/weftd.conf" \
    "$WEFT" --catalog "$CAT" rm one
[ -e "$SPOOL/traces/$k" ] && fail "rm left $SPOOL/traces/$k"
[ "$(rows_of "$id")" -eq 0 ] || fail "rm left rows of 'one'"
diff <(echo "$before" | grep -v "^./spool/traces/$k\(/\|$\)") <(snapshot) >&2 ||
    fail "rm one removed more than traces/$k"

# 2: the catalog and the spool both from the configuration.
before=$(snapshot)
k=$(key_of two)
id=$(id_of two)
expect 0 "removed trace 'two'" env WEFT_CONFIG="$TMP/weftd.conf" "$WEFT" rm two
diff <(echo "$before" | grep -v "^./spool/traces/$k\(/\|$\)") <(snapshot) >&2 ||
    fail "rm two removed more than traces/$k"
[ "$(rows_of "$id")" -eq 0 ] || fail "rm left rows of 'two'"

# 3: --spool DIR, without any configuration.
before=$(snapshot)
k=$(key_of three)
id=$(id_of three)
expect 0 "removed trace 'three'" "$WEFT" --catalog "$CAT" --spool "$SPOOL" rm three
diff <(echo "$before" | grep -v "^./spool/traces/$k\(/\|$\)") <(snapshot) >&2 ||
    fail "rm three removed more than traces/$k"
[ "$(rows_of "$id")" -eq 0 ] || fail "rm left rows of 'three'"
# --spool after the command name, --spool=DIR
k=$(key_of four)
expect 0 "removed trace 'four'" "$WEFT" --catalog "$CAT" rm four --spool="$SPOOL"
[ -e "$SPOOL/traces/$k" ] && fail "rm left $SPOOL/traces/$k"

# 4: refusals; nothing is removed, the row stays.
id=$(id_of five)
rows=$(rows_of "$id")
mkdir -p "$TMP/unrelated" "$TMP/other/traces"
before=$(snapshot)
expect 1 "--spool $TMP/unrelated: not a weftd spool (it has no traces/ directory)" \
    "$WEFT" --catalog "$CAT" --spool "$TMP/unrelated" rm five
expect 1 "--spool $TMP/nowhere: No such file or directory" \
    "$WEFT" --catalog "$CAT" --spool "$TMP/nowhere" rm five
expect 1 "is not in the spool $TMP/other" \
    "$WEFT" --catalog "$CAT" --spool "$TMP/other" rm five
# without configuration or --spool, the catalog's directory is no spool
expect 1 "with --spool DIR" "$WEFT" --catalog "$CAT" rm five
expect 2 "--spool needs a DIR" "$WEFT" --catalog "$CAT" rm five --spool
[ "$(snapshot)" = "$before" ] || fail "a refused rm changed the files"
[ "$(rows_of "$id")" -eq "$rows" ] || fail "a refused rm removed rows of five"

# A row whose path leads outside the given spool (a trace directory of
# the same key elsewhere, or through ..) is refused.
k=$(key_of five)
mkdir -p "$TMP/other/traces/$k/archive"
before=$(snapshot)
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE traces SET path = ? WHERE name = ?", (sys.argv[2], "five")); c.commit()' \
    "$CAT" "$TMP/other/traces/$k/archive"
expect 1 "is not in the spool $SPOOL" "$WEFT" --catalog "$CAT" --spool "$SPOOL" rm five
"$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE traces SET path = ? WHERE name = ?", (sys.argv[2], "five")); c.commit()' \
    "$CAT" "$SPOOL/traces/../../other/traces/$k/archive"
expect 1 "is not in the spool $SPOOL" "$WEFT" --catalog "$CAT" --spool "$SPOOL" rm five
[ "$(snapshot)" = "$before" ] || fail "rm of a row outside the spool changed the files"
[ "$(rows_of "$id")" -eq "$rows" ] || fail "rm of a row outside the spool removed its rows"
echo ok

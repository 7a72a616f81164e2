#!/bin/bash
# bench/locks.sh - what recording locks costs a program that takes free
# locks millions of times (issue #32): sqlite3 inserting N rows in one
# transaction, untraced, under `weft run` recording every lock call
# (WEFT_LOCKS=all, as before the counting) and under `weft run`'s default
# (WEFT_LOCKS=contended: free locks counted, not recorded).
#
#   make -C BUILD_DIR && bash bench/locks.sh BUILD_DIR [ROUNDS [ROWS]]
#   (or make -C BUILD_DIR bench/locks; BENCH_LOCKS_FLAGS="ROUNDS ROWS")
# (3 rounds of 200000 rows by default.)
#
# Each round runs the three (weft run's default recorders, pthread and
# io, from BUILD_DIR/.libs) on a fresh database; figures are medians:
#   wall      seconds the run took (weft run included)
#   events    events of the trace (weft show)
#   archive   the archive's size
#   lock      pthread_mutex_lock's visits and seconds in `weft profile`
#   unlock    pthread_mutex_unlock's, the same
set -u
BENCH=bench/locks
USAGE="usage: bash bench/locks.sh BUILD_DIR [ROUNDS [ROWS]]"
B=$(cd "${1:?$USAGE}" && pwd)
ROUNDS=${2:-3}
ROWS=${3:-200000}
RUN_TIMEOUT=600
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
[ -x "$B/weft" ] && [ -f "$B/.libs/libweft-pthread.so" ] ||
    die "build $B first (make -C $B)"
command -v sqlite3 >/dev/null || die "no sqlite3 (scripts/deps.sh installs it)"

awk -v n="$ROWS" 'BEGIN {
    print "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"
    print "BEGIN;"
    for (i = 0; i < n; i++)
        printf "INSERT INTO t(b, c) VALUES(%c%d-row%c, %d.5);\n", 39, i, 39, i
    print "COMMIT;"
}' >"$TMP/insert.sql"

start_weftd
export WEFT_CATALOG="$TMP/spool/catalog.db"

# run NAME [VAR=VALUE...]: sqlite3 on a new database, traced as trace
# NAME (untraced when NAME is "-"); prints the seconds it took.
run() {
    local name=$1 t0 t1
    shift
    rm -f "$TMP/x.db"
    t0=$(date +%s%N)
    if [ "$name" = - ]; then
        timeout "$RUN_TIMEOUT" sqlite3 "$TMP/x.db" <"$TMP/insert.sql" \
            >"$TMP/out" 2>&1
    else
        env "$@" WEFT_LIBDIR="$B/.libs" \
            LD_LIBRARY_PATH="$B/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            timeout "$RUN_TIMEOUT" "$B/weft" run --trace "$name" -- \
            sqlite3 "$TMP/x.db" <"$TMP/insert.sql" >"$TMP/out" 2>&1
    fi || die "sqlite3 failed ($name): $(tail -n 3 "$TMP/out")"
    t1=$(date +%s%N)
    awk -v d=$((t1 - t0)) 'BEGIN { printf "%.2f\n", d / 1e9 }'
}

# figures NAME: "events archive_bytes lock_visits lock_s unlock_visits
# unlock_s" of trace NAME.
figures() {
    local archive
    archive=$(weft_archive "$1") || exit 1
    "$B/weft" profile "$1" --json >"$TMP/profile.json" ||
        die "weft profile $1 failed"
    /usr/bin/python3 - "$TMP/show.json" "$TMP/profile.json" \
        "$(du -sb "$(dirname "$archive")" | cut -f1)" <<'PYEOF'
import json, sys
show = json.load(open(sys.argv[1]))
rows = {r["region"]: r for r in json.load(open(sys.argv[2]))["regions"]}
out = [show["events"], int(sys.argv[3])]
for name in ("pthread_mutex_lock", "pthread_mutex_unlock"):
    r = rows.get(name, {"visits": 0, "excl_s": 0.0})
    out += [r["visits"], "%.4f" % r["excl_s"]]
print(*out)
PYEOF
}

declare -A wall ev size lv ls uv us
for r in $(seq "$ROUNDS"); do
    wall[untraced]+="$(run -) "
    for mode in all contended; do
        wall[$mode]+="$(run "$mode-$r" WEFT_LOCKS="$mode") "
        read -r e s a b c d < <(figures "$mode-$r")
        ev[$mode]+="$e "; size[$mode]+="$s "
        lv[$mode]+="$a "; ls[$mode]+="$b "; uv[$mode]+="$c "; us[$mode]+="$d "
        weft_forget "$mode-$r"
    done
done
MEDIAN_FORMAT=%.0f
echo "sqlite3, $ROWS inserts in one transaction, $ROUNDS rounds (medians)"
printf '%-22s %8s %11s %10s %9s %9s %9s %9s\n' "" wall events archive \
    lock lock_s unlock unlock_s
# shellcheck disable=SC2086 # the lists are numbers
printf '%-22s %7ss\n' untraced "$(MEDIAN_FORMAT=%.2f median ${wall[untraced]})"
for mode in all contended; do
    # shellcheck disable=SC2086
    printf '%-22s %7ss %11s %9sM %9s %9s %9s %9s\n' "WEFT_LOCKS=$mode" \
        "$(MEDIAN_FORMAT=%.2f median ${wall[$mode]})" \
        "$(median ${ev[$mode]})" \
        "$(awk -v b="$(median ${size[$mode]})" 'BEGIN { printf "%.1f", b / 1048576 }')" \
        "$(median ${lv[$mode]})" "$(MEDIAN_FORMAT=%.4f median ${ls[$mode]})" \
        "$(median ${uv[$mode]})" "$(MEDIAN_FORMAT=%.4f median ${us[$mode]})"
done

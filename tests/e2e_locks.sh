#!/bin/bash
# e2e_locks.sh - lock recording that scales (issue #32): tests/pthread/
# lockcount (contended and uncontended locks in known numbers) under
# `weft run -t pthread`, to a real weftd:
#   - by default (WEFT_LOCKS=contended; here with a threshold of 1 s) only the busy lock calls, the
#     condition wait and what pairs with them are events in the archive
#     (exact counts: tests/check_pthread.py against the program's report,
#     the archive accepted by otf2-print -Werror and the python reader);
#     every other call is counted, per call and thread, in Metric events
#     whose counts add up to the calls made; `weft profile` shows every
#     call (visits) and time in the uncontended ones, and so does the
#     profile `weft import` makes of the archive;
#   - WEFT_LOCKS=all records every call, as before the counting; so does
#     WEFT_LOCK_THRESHOLD_NS=0 (every try takes longer than 0 ns);
#     `weft profile` shows the same visits in all three;
#   - WEFT_FILTER='-pthread_mutex_*' leaves the mutex calls out (neither
#     recorded nor counted), WEFT_FILTER='-fread*' md5sum's freads under -t io; a
#     malformed filter is said and filters nothing;
#   - a bad WEFT_LOCKS or WEFT_LOCK_THRESHOLD_NS: tracing off, said.
. "$(dirname "$0")/lib.sh"

LIBDIR="$WEFT_BUILDDIR/.libs"
PROG="$WEFT_BUILDDIR/tests/pthread/lockcount"
CHECK="$WEFT_SRCDIR/tests/check_pthread.py"
CALLS="$WEFT_SRCDIR/recorders/pthread/calls.def"
[ -x "$PROG" ] || fail "$PROG missing"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})

# traced NAME MODE [VAR=VALUE...]: lockcount under weft run -t pthread as
# trace NAME with the variables given, at most 120 s; its report in
# $TMP/NAME.report.
traced() {
    local name=$1 mode=$2
    shift 2
    env WEFT_LIBDIR="$LIBDIR" "$@" \
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        timeout 120 "$WEFT" run -t pthread --trace "$name" -- \
        "$PROG" "$TMP/$name.report" "$mode" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# check NAME: the archive of trace NAME against its report, and its
# profile's visits against the calls made; prints the checker's summary.
check() {
    local name=$1 anchor
    wait_state "$name" complete 60
    anchor=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$anchor" >"$TMP/$name.print" 2>&1 ||
        fail "$name: otf2-print -Werror rejects it: $(head -5 "$TMP/$name.print")"
    "$PY" "$CHECK" "$anchor" "$CALLS" "$TMP/$name.report" \
        >"$TMP/$name.check" ||
        fail "$name's archive: $(cat "$TMP/$name.check")"
    profile_ok "$name" "$name"
    cat "$TMP/$name.check"
}

# profile_ok NAME REPORT: weft profile NAME shows every call of
# $TMP/REPORT.report ("total" lines) with its time.
profile_ok() {
    "$WEFT" --catalog "$SPOOL/catalog.db" profile "$1" --json \
        >"$TMP/$1.profile" || fail "weft profile $1 failed"
    "$PY" - "$TMP/$1.profile" "$TMP/$2.report" <<'PYEOF' ||
import json, sys
rows = {r["region"]: r for r in json.load(open(sys.argv[1]))["regions"]}
bad = []
for line in open(sys.argv[2]):
    w = line.split()
    if w[0] == "total":
        got = rows.get(w[1], {}).get("visits", 0)
        if got != int(w[2]):
            bad.append("%s: %d visits in the profile, %s calls made"
                       % (w[1], got, w[2]))
        elif rows[w[1]]["excl_s"] <= 0:
            bad.append("%s: no time in the profile" % w[1])
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF
        fail "$1's profile: $(head -c 2000 "$TMP/$1.profile")"
}

start_weftd

# ---- the default: busy locks recorded, the rest counted --------------------
# (A threshold of 1 s: under load a try may take longer than the default
# 10 us - preempted, or its first call's page faults - and be recorded.)
traced counted counted WEFT_LOCK_THRESHOLD_NS=1000000000 || fail "lockcount failed: $(cat "$TMP/counted.err")"
check counted >"$TMP/counted.sum"
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))
c = j["counted"]
assert c["pthread_mutex_lock"] == 1000 + 3 + 1 + 1, c
assert c["pthread_rwlock_unlock"] == 200 and c["pthread_spin_lock"] == 100, c
assert j["events"]["ThreadAcquireLock"] == 4, j
assert j["events"]["Metric"] == 1, j  # main at exit (the contender counted none)
' "$TMP/counted.sum" || fail "counted: $(cat "$TMP/counted.sum")"
echo "default: $(cat "$TMP/counted.sum")"
# The same ended by _exit: the counts are shipped before the session
# closes (weft__recorder_before_exec), not only at exit.
traced counted-exit counted LOCKCOUNT_EXIT=_exit WEFT_LOCK_THRESHOLD_NS=1000000000 ||
    fail "lockcount failed: $(cat "$TMP/counted-exit.err")"
check counted-exit >"$TMP/counted-exit.sum"
cmp -s <(sed 's/"counted-exit"/"counted"/' "$TMP/counted-exit.sum") "$TMP/counted.sum" ||
"$PY" -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
assert a["counted"] == b["counted"] and a["events"]["Metric"] == 1, (a, b)
' "$TMP/counted-exit.sum" "$TMP/counted.sum" || fail "counted, _exit: $(cat "$TMP/counted-exit.sum")"
echo "default, ended by _exit: the same counts"
# weft import of that archive: its profile counts the same calls.
"$WEFT" --catalog "$SPOOL/catalog.db" import \
    "$(json_get "$TMP/show.json" 'j["archive"]')" --name counted-import \
    >"$TMP/import.out" 2>&1 || fail "weft import failed: $(cat "$TMP/import.out")"
profile_ok counted-import counted

# ---- WEFT_LOCKS=all: every call recorded -----------------------------------
traced all recorded WEFT_LOCKS=all ||
    fail "lockcount failed: $(cat "$TMP/all.err")"
check all >"$TMP/all.sum"
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]))
assert j["counted"] == {} and "Metric" not in j["events"], j' \
    "$TMP/all.sum" || fail "all: $(cat "$TMP/all.sum")"
echo "WEFT_LOCKS=all: $(cat "$TMP/all.sum")"

# ---- a threshold of 0 ns: every try takes longer, so is recorded -----------
traced zero recorded WEFT_LOCK_THRESHOLD_NS=0 ||
    fail "lockcount failed: $(cat "$TMP/zero.err")"
check zero >"$TMP/zero.sum"
echo "WEFT_LOCK_THRESHOLD_NS=0: $(cat "$TMP/zero.sum")"

# ---- WEFT_FILTER names the recorders' calls too ------------------------------
# '-pthread_mutex_*': no mutex call recorded nor counted, the rest as ever.
traced filt recorded WEFT_LOCKS=all 'WEFT_FILTER=-pthread_mutex_*' ||
    fail "lockcount failed filtered: $(cat "$TMP/filt.err")"
wait_state filt complete 60
anchor=$(json_get "$TMP/show.json" 'j["archive"]')
"$PY" "$CHECK" "$anchor" "$CALLS" >"$TMP/filt.check" ||
    fail "filt's archive: $(cat "$TMP/filt.check")"
"$WEFT" --catalog "$SPOOL/catalog.db" profile filt --json >"$TMP/filt.profile" ||
    fail "weft profile filt failed"
"$PY" -c 'import json,sys; r={x["region"]: x["visits"] for x in json.load(open(sys.argv[1]))["regions"]}
assert not [n for n in r if n.startswith("pthread_mutex_")], r
assert r["pthread_rwlock_rdlock"] == 100 and r["pthread_spin_lock"] == 100, r
assert r["pthread_cond_timedwait"] == 1 and r["pthread_create"] == 1, r' \
    "$TMP/filt.profile" || fail "filt's profile: $(cat "$TMP/filt.profile")"
# The I/O recorder's calls: md5sum under -t io, its fread_unlocked left
# out by '-fread*' (and recorded without the filter); its fcloses: its
# file's, and stdout's and stderr's at exit (coreutils' close_stdout).
printf 'some text\n' >"$TMP/in.txt"
for f in '' '-fread*'; do
    env WEFT_LIBDIR="$LIBDIR" WEFT_FILTER="$f" \
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        timeout 120 "$WEFT" run -t io --trace "io${f:+-filtered}" -- \
        md5sum "$TMP/in.txt" \
        >"$TMP/io.out" 2>"$TMP/io.err" ||
        fail "md5sum failed (filter '$f'): $(cat "$TMP/io.err")"
    wait_state "io${f:+-filtered}" complete 60
    "$WEFT" --catalog "$SPOOL/catalog.db" profile "io${f:+-filtered}" \
        --json >"$TMP/io.profile" || fail "weft profile (filter '$f') failed"
    "$PY" -c 'import json,sys; r={x["region"]: x["visits"] for x in json.load(open(sys.argv[1]))["regions"]}
assert ("fread_unlocked" in r) == (sys.argv[2] == "") and r["fclose"] == 3, r' \
        "$TMP/io.profile" "$f" ||
        fail "md5sum's profile (filter '$f'): $(cat "$TMP/io.profile")"
done
# A malformed filter: said, nothing filtered.
traced badfilt recorded WEFT_LOCKS=all 'WEFT_FILTER=-x,,+y' ||
    fail "lockcount failed with a bad filter: $(cat "$TMP/badfilt.err")"
grep -q 'weft-pthread: WEFT_FILTER="-x,,+y": rule 2 .*not filtered' \
    "$TMP/badfilt.err" || fail "a bad WEFT_FILTER not said: $(cat "$TMP/badfilt.err")"
check badfilt >/dev/null
echo "WEFT_FILTER: pthread_mutex_* and fread* left out"

# ---- bad values: tracing off, the variable named ---------------------------
for bad in WEFT_LOCKS=some WEFT_LOCK_THRESHOLD_NS=1000000001; do
    traced bad recorded "$bad" ||
        fail "lockcount failed with $bad: $(cat "$TMP/bad.err")"
    grep -q "${bad%%=*}" "$TMP/bad.err" ||
        fail "$bad: not said: $(cat "$TMP/bad.err")"
done
echo ok

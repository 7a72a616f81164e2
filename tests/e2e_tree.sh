#!/bin/bash
# e2e_tree.sh - `weft run` of a program that starts others is one trace
# whose members are every process of the tree: a shell pipeline (the
# shell, ls, wc, cat), a #! script (its shell and commands), a shell's
# own descriptors (libweft's stay out of their way), an exec (the same process, two members), a
# background job the shell does not wait for (the trace waits for it),
# an exec of a program that cannot be traced (the trace does not wait
# for it), a weft run inside the tree (it joins the tree), make -j2 of a
# small C project (make, and gcc, cc1 and as of each file, gcc, collect2
# and ld of the link), a tree recording when weftd is killed and started
# again, and a tree above max_members (the processes
# beyond it run untraced; the trace has max_members). Each archive is
# read by otf2-print -Werror and python's otf2 module with its location
# groups counted.
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"

# wrun NAME COMMAND...: COMMAND under weft run as trace NAME, in $TMP/work;
# it must succeed, traced.
wrun() {
    local name=$1
    shift
    (cd "$TMP/work" && env ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        timeout -s KILL 120 "$WEFT" run --trace "$name" -- "$@" \
        2>"$TMP/$name.err")
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$TMP/$name.err" >&2; fail "$name: exit status $rc"; }
    grep -q untraced "$TMP/$name.err" && fail "$name: ran untraced: $(cat "$TMP/$name.err")"
    return 0
}

# members NAME N: trace NAME is complete with N members, N location
# groups in its archive, which both readers take.
members() {
    local name=$1 n=$2 archive got groups
    wait_state "$name" complete 30
    got=$(json_get "$TMP/show.json" 'j["members"]')
    [ "$got" = "$n" ] || fail "$name: $got members, expected $n"
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
        { cat "$TMP/print.out" >&2; fail "$name: otf2-print -Werror rejects $archive"; }
    groups=$($PY -c '
import sys, otf2
with otf2.reader.open(sys.argv[1]) as r:
    print(len(r.definitions.location_groups))' "$archive") ||
        fail "$name: python otf2 cannot read $archive"
    [ "$groups" = "$n" ] || fail "$name: $groups location groups, expected $n"
    echo "$name: complete, $n members"
}

start_weftd --grace-period 3600
mkdir -p "$TMP/work"

wrun pipe sh -c 'ls / | wc -l > n.txt; cat n.txt > /dev/null'
members pipe 4

# Where libweft records with the TSC (the kernel's clocksource is tsc),
# the processes of a tree measure its frequency from weft run's start
# (WEFT_TSC_FROM): none sleeps 2 ms to measure it, the first measures
# over at least 1 ms, the later ones over longer, and they agree (within
# 50 ppm here: a few ppm when quiet, up to 14 seen under load; beyond 10
# the archive scales their ticks to ns, convclock.c). Taken on another
# host (a launcher passed it on), it is not used: the process measures
# itself.
if [ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" = tsc ] &&
    grep -qw nonstop_tsc /proc/cpuinfo; then
    WEFT_DEBUG=1 wrun khz sh -c 'cat n.txt > /dev/null'
    [ "$(grep -c "clock: TSC at [0-9.]* MHz, measured over [0-9.]* ms from weft run's start (WEFT_TSC_FROM" "$TMP/khz.err")" = 2 ] ||
        fail "khz: the tree's processes did not measure the TSC from weft run's start: $(cat "$TMP/khz.err")"
    sed -n "s/.*clock: TSC at \([0-9.]*\) MHz, measured over \([0-9.]*\) ms from.*/\1 \2/p" \
        "$TMP/khz.err" >"$TMP/khz.mhz"
    awk 'NR == 1 { a = $1; sa = $2 } NR == 2 { b = $1; sb = $2 }
         END { d = (a - b) / a; if (d < 0) d = -d
               exit !(d <= 50e-6 && sb > sa && sa >= 1.0) }' "$TMP/khz.mhz" ||
        fail "khz: sh and cat measured $(tr '\n' ' ' <"$TMP/khz.mhz")(MHz, ms): not within 50 ppm, or cat not over longer"
    members khz 2
    WEFT_DEBUG=1 WEFT_TSC_FROM="1,1,not-$(hostname)" wrun khz2 sh -c 'cat n.txt > /dev/null'
    [ "$(grep -c "WEFT_TSC_FROM is of host not-" "$TMP/khz2.err")" = 2 ] &&
        [ "$(grep -c "clock: TSC at [0-9.]* MHz, measured over [0-9.]* ms (WEFT_CLOCK" "$TMP/khz2.err")" = 2 ] ||
        fail "khz2: another host's WEFT_TSC_FROM was not refused: $(cat "$TMP/khz2.err")"
    members khz2 2
    # A reading the clocks disagree with since (here one of 1 s ago with
    # a TSC of 1: as after a suspend, the TSC ran apart) is not used.
    raw=$($PY -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW) - 10**9)')
    WEFT_DEBUG=1 WEFT_TSC_FROM="1,$raw,$(hostname)" wrun khz3 sh -c 'cat n.txt > /dev/null'
    [ "$(grep -c "(WEFT_TSC_FROM, [0-9.]* ms ago) runs at [0-9.]* MHz, since this process was loaded ([0-9.]* ms) at [0-9.]*: not used" "$TMP/khz3.err")" = 2 ] &&
        [ "$(grep -c "clock: TSC at [0-9.]* MHz, measured over [0-9.]* ms (WEFT_CLOCK" "$TMP/khz3.err")" = 2 ] ||
        fail "khz3: a reading the clocks disagree with was used: $(cat "$TMP/khz3.err")"
    members khz3 2
    echo "khz: sh and cat measured the TSC from weft run's start ($(tr '\n' ' ' <"$TMP/khz.mhz")MHz, ms), not another host's"
else
    echo "SKIP: the kernel's clocksource is not the TSC: WEFT_TSC_FROM is not used"
fi

# A #! script: traced through its interpreter (sh, cat, wc).
printf '#!/bin/sh\ncat n.txt | wc -l > /dev/null\n' >"$TMP/work/count.sh"
chmod +x "$TMP/work/count.sh"
wrun script ./count.sh
members script 3

# libweft's descriptors stay out of the program's way: a shell's
# `exec 3>file` writes only what the script writes; a traced ls has the
# descriptors below 500 an untraced one has (libweft's are above).
FDCMD='exec 3>fd3.txt; echo three >&3; ls /proc/self/fd > fds.txt'
(cd "$TMP/work" && sh -c "$FDCMD" && mv fds.txt fds-untraced.txt)
wrun fds sh -c "$FDCMD"
[ "$(cat "$TMP/work/fd3.txt")" = three ] ||
    fail "fds: fd3.txt holds $(od -c "$TMP/work/fd3.txt" | head -3)"
[ "$(awk '$1 < 500' "$TMP/work/fds.txt" | sort | tr '\n' ' ')" = \
  "$(sort "$TMP/work/fds-untraced.txt" | tr '\n' ' ')" ] ||
    fail "fds: traced ls had $(tr '\n' ' ' <"$TMP/work/fds.txt"), untraced $(tr '\n' ' ' <"$TMP/work/fds-untraced.txt")"
members fds 2

wrun exec sh -c 'exec cat n.txt > /dev/null'
members exec 2
[ "$(json_get "$TMP/show.json" 'len(set(r["pid"] for r in j["ranks"]))')" = 1 ] ||
    fail "exec: its two members are not the same process"

# The shell ends at once; sleep joins after it and the trace waits.
wrun bg sh -c '/bin/sleep 1 & true'
members bg 2

# ldconfig is statically linked: nothing joins after the exec, and the
# trace ends when the process does, not after the grace period.
if file -L /sbin/ldconfig | grep -q 'static'; then
    wrun static sh -c 'exec /sbin/ldconfig -p > /dev/null'
    members static 1
else
    echo "SKIP: /sbin/ldconfig is not statically linked here"
fi

wrun nested sh -c "\"$WEFT\" run -- cat n.txt > /dev/null"
members nested 3   # sh, weft run and the cat it became
"$WEFT" --catalog "$SPOOL/catalog.db" list --json >"$TMP/list.json"
[ "$(json_get "$TMP/list.json" 'len([t for t in j if t["name"] != "nested" and t["name"].startswith("cat")])')" = 0 ] ||
    fail "nested: the weft run inside made a trace of its own"

mkdir -p "$TMP/work/proj"
for i in 1 2 3 4 5 6; do
    echo "int f$i(void) { return $i; }" >"$TMP/work/proj/f$i.c"
done
echo 'int main(void) { return 0; }' >"$TMP/work/proj/main.c"
printf 'OBJS = f1.o f2.o f3.o f4.o f5.o f6.o main.o\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n' \
    >"$TMP/work/proj/Makefile"
if [ ${#SAN[@]} -eq 0 ]; then
    wrun make make -s --no-print-directory -j2 -C proj CC=gcc
    members make 25   # make; gcc, cc1, as of 7 files; gcc, collect2, ld
else
    # gcc's cc1 does not run with the sanitizers' runtime preloaded (it
    # crashes): a compiler of sh and cp instead.
    printf '#!/bin/sh
case " $* " in *" -c "*) cp "$4" "$3";; *) shift 2; cat "$@" >/dev/null;; esac
' \
        >"$TMP/work/cc.sh"
    chmod +x "$TMP/work/cc.sh"
    wrun make make -s --no-print-directory -j2 -C proj CC="$TMP/work/cc.sh"
    members make 17   # make; sh and cp of 7 files; sh and cat
fi

# weftd killed while a tree records, and started again: the tree's
# processes come back with their ranks, the next one joins after them,
# and the trace is complete with all three.
port=${WEFT_SERVER##*:}
(cd "$TMP/work" && env ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} timeout -s KILL 120 \
    "$WEFT" run --trace crash -- sh -c 'sleep 4; cat n.txt > /dev/null' \
    2>"$TMP/crash.err") &
crash=$!
for _ in $(seq 100); do
    grep -q "trace 'crash' rank 1: joined" "$TMP/weftd.log" && break
    sleep 0.1
done
grep -q "trace 'crash' rank 1: joined" "$TMP/weftd.log" ||
    fail "crash: sleep did not join within 10 s"
kill_weftd
start_weftd_at "$port" --grace-period 3600
wait "$crash" || fail "crash: exit status $?: $(cat "$TMP/crash.err")"
members crash 3

# max_members 3: a fourth process runs untraced, saying why.
stop_weftd
start_weftd --grace-period 3600 --set max_members=3
(cd "$TMP/work" && env ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} timeout -s KILL 60 \
    "$WEFT" run --trace big -- sh -c '/bin/true; /bin/true; /bin/true' \
    2>"$TMP/big.err") || fail "big: exit status $?: $(cat "$TMP/big.err")"
grep -q "process tree 'big' has 3 members: max_members is 3" "$TMP/big.err" ||
    fail "big: the fourth process did not say why it is untraced: $(cat "$TMP/big.err")"
members big 3

# The catalog rebuilt from the archives (weft reindex), and an archive
# imported (weft import): a tree's locations still name their process
# and program as weftd catalogued them, and its members their parent.
procs() { # CATALOG TRACE: its locations' (process, program), sorted
    "$WEFT" --catalog "$1" show "$2" --json >"$TMP/procs.json" ||
        fail "show $2 in $1"
    json_get "$TMP/procs.json" 'sorted((l.get("process"), l.get("program")) for l in j["locations"])'
}
want=$(procs "$SPOOL/catalog.db" pipe)
case "$want" in
    *"('ls (pid "*", 'ls')"*"('wc (pid "*", 'wc')"*) ;;
    *) fail "pipe: weftd catalogued no processes: $want" ;;
esac
archive=$(json_get "$TMP/procs.json" 'j["archive"]')
# Each member's parent: the shell started ls, wc and cat; the shell's is
# the process that ran weft run.
parents() { # CATALOG TRACE: the members' (pid, parent pid), sorted
    "$WEFT" --catalog "$1" show "$2" --json >"$TMP/parents.json" ||
        fail "show $2 in $1"
    json_get "$TMP/parents.json" 'sorted((m["pid"], m.get("parent_pid", 0)) for m in j["ranks"])'
}
pwant=$(parents "$SPOOL/catalog.db" pipe)
# one_root ROOT_PARENT: the members in $TMP/parents.json are the shell
# (its parent: ROOT_PARENT, "any" for any but 0) and its children
one_root() {
    "$PY" -c '
import json, sys
j = json.load(open(sys.argv[1]))
pids = {m["pid"] for m in j["ranks"]}
roots = [m for m in j["ranks"] if m.get("parent_pid", 0) not in pids]
ok = len(roots) == 1 and all(m.get("parent_pid") == roots[0]["pid"]
                             for m in j["ranks"] if m is not roots[0])
p = roots[0].get("parent_pid", 0) if ok else -1
sys.exit(0 if ok and (p == int(sys.argv[2]) if sys.argv[2] != "any"
                      else p > 0) else 1)' "$TMP/parents.json" "$1"
}
one_root any || fail "pipe: members' parents are not the shell: $pwant"
"$WEFT" --catalog "$SPOOL/catalog.db" show pipe | grep -q "PARENT" ||
    fail "pipe: weft show has no PARENT column"
"$WEFT" --catalog "$SPOOL/catalog.db" import "$archive" --name pipe-again \
    >"$TMP/import.out" 2>&1 || fail "import: $(cat "$TMP/import.out")"
[ "$(procs "$SPOOL/catalog.db" pipe-again)" = "$want" ] ||
    fail "import: processes $(procs "$SPOOL/catalog.db" pipe-again), expected $want"
# the archive has the parents the tree's members named (not the root's:
# weft run's process is no member)
parents "$SPOOL/catalog.db" pipe-again >/dev/null
one_root 0 || fail "import: parents $(parents "$SPOOL/catalog.db" pipe-again), expected those of $pwant"
stop_weftd
"$WEFT" --catalog "$TMP/rebuilt.db" reindex "$SPOOL" >"$TMP/reindex.out" 2>&1 ||
    fail "reindex: $(cat "$TMP/reindex.out")"
[ "$(procs "$TMP/rebuilt.db" pipe)" = "$want" ] ||
    fail "reindex: processes $(procs "$TMP/rebuilt.db" pipe), expected $want"
parents "$TMP/rebuilt.db" pipe >/dev/null
one_root 0 || fail "reindex: parents $(parents "$TMP/rebuilt.db" pipe), expected those of $pwant"
[ "$(json_get "$TMP/parents.json" 'sum(m["events"] for m in j["ranks"])')" = \
  "$(json_get "$TMP/parents.json" 'j["events"]')" ] ||
    fail "reindex: the members' events do not add up to the trace's"
echo "reindex and import: the processes and programs of $want"

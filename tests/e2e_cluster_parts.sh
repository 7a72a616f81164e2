#!/bin/bash
# e2e_cluster_parts.sh - nodes that write their processes' event files
# (#34): a head whose archive_root is a directory every node sees (the
# shared file system), nodes n1 and n2 that see it and write events
# (write_events = yes, the default), n3 that looks for it elsewhere and
# forwards its processes' every frame. Each weftd in a network namespace
# of its own with its munged (tests/cluster_lib.sh).
#  - one launch over n1, n2 and n3 is one trace at the head, its archive
#    in archive_root exact (otf2-print, the python reader, the demos'
#    counts); n1 and n2 journaled their ranks and wrote their events, n3
#    forwarded its, and the nodes' parts are gone once the head has all;
#  - n2's streams hold little (convert_memory at its least): what they
#    cannot write while its processes record is written when its part
#    ends, exact all the same;
#  - the head receives what is small: the same launch of many events
#    written by n1 and n2 costs the head's network a fraction of the
#    bytes it costs through n3 (its interface's counters);
#  - n1's weftd SIGKILLed mid-run and started again: its part is
#    recovered from its journals, its processes reconnect and resume,
#    the archive is exact;
#  - the head SIGKILLed mid-run while n1 and n2 write: they go on, link
#    again, and the head's restored trace makes the archive anew around
#    the files they wrote: exact; while the head is down the nodes keep
#    their parts' journals (n1 SIGKILLed then writes its part again);
#  - the shared file system unwritable on n2 as its part ends: it says
#    so, keeps its journals and tries again; exact once it can write,
#    or once it starts again after a stop;
#  - n2 cut off for good while it writes (ip link down): the trace
#    partial after the head's grace period, naming n2 and its rank, the
#    rest readable;
#  - sums beyond the head's max_frame (a process of 32 threads, a head
#    taking frames of 64 KiB) cross in pieces: exact; a node sending
#    pieces beyond a journal entry's most (64 MiB) is refused that
#    member, saying so.
. "$(dirname "$0")/lib.sh"

P="wp$$"          # namespaces: $P-sw (the bridge), $P-head, $P-n1 ...
. "$(dirname "$0")/cluster_lib.sh"

mkdir -p "$TMP/pub"   # the munged sockets
bridge
host head 10.231.9.1
host n1 10.231.9.11
host n2 10.231.9.12
host n3 10.231.9.13
head -c 1024 /dev/urandom >"$TMP/key" && chmod 600 "$TMP/key"
for n in head n1 n2 n3; do
    munge "$n" "$TMP/key"
done
mkdir -m 0755 "$TMP/shared" "$TMP/n3-view" || fail "cannot make the archive roots"
HEAD="${ADDR[head]}:7411"
weftd_in head --set grace_period=20 --set "archive_root=$TMP/shared"
weftd_in n1 --set "head=$HEAD" --set node_name=n1
# n2's streams may hold little (convert_memory at its least): its
# processes' events are written when its part ends, one after the other
weftd_in n2 --set "head=$HEAD" --set node_name=n2 --set convert_memory=33554432
weftd_in n3 --set "head=$HEAD" --set node_name=n3 --set "archive_root=$TMP/n3-view"
until_ 20 "three nodes linked to the head" nodes_are \
    "n1=linked n2=linked n3=linked"
for n in n1 n2; do
    until_ 10 "$n finding the head's archive_root" archive_is "$n" ok
done
until_ 10 "n3 finding the head's archive_root not where it looks" archive_is n3 unusable
for n in n1 n2; do
    until_ 10 "$n measuring the head's clock" grep -q \
        "the head's clock is .* ns from this node's" "$TMP/$n.log"
done
echo "ok: three nodes linked; n1 and n2 see the head's archive_root and know its clock, n3 not"

# shared_exact NAME MEMBERS: exact (cluster_lib.sh), the archive in the
# head's archive_root.
shared_exact() {
    local name=$1
    exact "$@"
    case "$(json_get "$TMP/show.json" 'j["archive"]')" in
    "$TMP/shared/$name-"*/archive/traces.otf2) ;;
    *) fail "$name: its archive is not in the head's archive_root: $(json_get "$TMP/show.json" 'j["archive"]')" ;;
    esac
}
no_parts() { [ -z "$(ls "$TMP/n1/parts" "$TMP/n2/parts" 2>/dev/null | grep "^$1-")" ]; }

# One launch over the three nodes: ranks 0-1 on n1, 2-3 on n2, 4 on n3.
export WEFT_RUN="across-$$"
demo_on n1 across -p 2 --first-rank 0 --size 5 -t 2 -n 2000
demo_on n2 across -p 2 --first-rank 2 --size 5 -t 2 -n 2000
demo_on n3 across -p 1 --first-rank 4 --size 5 -t 2 -n 2000
demos_done
unset WEFT_RUN
shared_exact across 5
[ "$(node_ranks n1 across "journaled here")" = "0 1" ] ||
    fail "n1 journaled ranks '$(node_ranks n1 across "journaled here")', not 0 1"
[ "$(node_ranks n2 across "journaled here")" = "2 3" ] ||
    fail "n2 journaled ranks '$(node_ranks n2 across "journaled here")', not 2 3"
[ "$(node_ranks n3 across "forwarded to the head")" = "4" ] ||
    fail "n3 forwarded ranks '$(node_ranks n3 across "forwarded to the head")', not 4"
grep -q "trace 'across': this node writes its events into $TMP/shared/across-.*/archive" \
    "$TMP/n1.log" || fail "n1 does not say where it writes across's events"
until_ 10 "the nodes removing their parts of across" no_parts across
for n in n1 n2; do
    [ "$(head_of "$n" parts)" = 0 ] ||
        fail "$n's status: $(head_of "$n" parts) processes not all at the head"
done
"$WEFT" --catalog "$TMP/n1/catalog.db" status | grep -q "1 links made, 0 connections forwarded now, 0 processes journaled here not all at the head yet" ||
    fail "weft status on n1: $("$WEFT" --catalog "$TMP/n1/catalog.db" status | grep '^head:')"
echo "ok: one launch on three nodes is one trace, exact; n1 and n2 wrote their ranks' events, n3 forwarded its"

# What the head receives: the same launch of many events, written by n1
# and n2, then forwarded by n3 alone.
head_rx() {
    ip -n "$P-head" -s -j link show eth0 | "$PY" -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'
}
rx0=$(head_rx)
export WEFT_RUN="written-$$"
demo_on n1 written -p 2 --first-rank 0 --size 4 -t 2 -n 50000
demo_on n2 written -p 2 --first-rank 2 --size 4 -t 2 -n 50000
demos_done
unset WEFT_RUN
shared_exact written 4
rx1=$(head_rx)
export WEFT_RUN="forwarded-$$"
demo_on n3 forwarded -p 4 -t 2 -n 50000
demos_done
unset WEFT_RUN
shared_exact forwarded 4
rx2=$(head_rx)
grep -q "trace 'written' rank [23]: written when the node's part of the trace ends, not while it records" \
    "$TMP/n2.log" || fail "n2's streams wrote all of 'written' while it recorded (convert_memory did not bind)"
written=$((rx1 - rx0))
forwarded=$((rx2 - rx1))
echo "the head received $written bytes of the launch n1 and n2 wrote, $forwarded of the one n3 forwarded"
[ $((written * 10)) -lt "$forwarded" ] ||
    fail "the head received $written bytes of a launch its nodes wrote, not a tenth of the $forwarded it received when it wrote it"
echo "ok: the head receives less than a tenth of the bytes when its nodes write the events"

# A node (root, the cluster's MUNGE key) that sends a member's sums in
# pieces without end: the head joins at most a journal entry's most (64
# MiB) and refuses that member, saying so; the link's others go on.
out=$(ip netns exec "$P-n3" env WEFT_MUNGE_SOCKET="$TMP/pub/n3.munge" \
    RAWPEER_RELAY=7 RAWPEER_NODE=flooder RAWPEER_EVENTS_HERE=1 \
    timeout 60 "$RAWPEER" "$HEAD" sums-flood "flood$$")
case "$out" in
*"ETOOBIG: sums of more than 64 MiB (a journal entry's most)"*) ;;
*) fail "sums in pieces beyond 64 MiB: '$out'";;
esac
echo "ok: a node's sums in pieces beyond a journal entry's most: refused, saying so"

# n1's weftd SIGKILLed mid-run and started again: its part comes back
# from its journals, the processes reconnect and resume. The head is out
# of n1's reach as it starts (its bridge port down), so the processes
# are back before n1 could start a part: they rejoin the one recovered,
# their ClockSyncs answered once n1 knows the head's clock again.
demo_on n1 nodekill -p 2 -t 2 -n 1200 -s 5000
until_ 20 "n1 writing nodekill's events" grep -q \
    "trace 'nodekill': this node writes its events" "$TMP/n1.log"
sleep 1
kill -KILL "${PID[n1]}"
wait_gone "${PID[n1]}" 10 || fail "n1's weftd outlived SIGKILL"
[ -n "$(ls "$TMP/n1/parts" | grep '^nodekill-')" ] ||
    fail "n1 left no part of nodekill behind"
ip -n "$P-sw" link set n1 down
weftd_in n1 --set "head=$HEAD" --set node_name=n1
reconnected() { [ "$(grep -c "reconnected to weftd" "$TMP/nodekill.n1.out")" = 2 ]; }
until_ 20 "nodekill's processes reconnecting to n1" reconnected
sleep 1
ip -n "$P-sw" link set n1 up
demos_done
shared_exact nodekill 2
grep -q "recovery: trace 'nodekill' (nodekill-.*): 2 member journals" \
    "$TMP/n1.log" || fail "n1 did not recover its part of nodekill"
grep "nodekill" "$TMP/n1.log" | grep -q "forward" &&
    fail "n1 forwarded a process of its part of nodekill: $(grep nodekill "$TMP/n1.log" | grep forward)"
until_ 10 "n1 removing its part of nodekill" no_parts nodekill
echo "ok: a node SIGKILLed mid-run and back before its head is in reach: its part recovered, rejoined, the archive exact"

# Processes n1 forwarded (they started while it could not reach the
# head) come back to n1 restarted, now able to start a part: their
# Hello says they resume (Hello.resumes), so n1 forwards them again to
# the head, which holds what they sent; a part of theirs would hold
# nothing of it. (n1's socket appears only once n1 could take them into
# a part: linked, the head's clock known, the archive seen.)
ip -n "$P-sw" link set n1 down
stop_weftds n1
weftd_in n1 --set "head=$HEAD" --set node_name=n1
until_ 10 "n1's socket" test -S "$TMP/n1/weftd.sock"
demo_on n1 resumed -p 2 -t 2 -n 1200 -s 5000
sleep 1
ip -n "$P-sw" link set n1 up
until_ 20 "n1 forwarding resumed's processes" eval \
    '[ "$(node_ranks n1 resumed "forwarded to the head")" = "0 1" ]'
sleep 1
kill -KILL "${PID[n1]}"
wait_gone "${PID[n1]}" 10 || fail "n1's weftd outlived SIGKILL"
# (n1's log goes on: what n1 says from now is what follows its lines so far)
lines=$(wc -l <"$TMP/n1.log")
said() { tail -n +"$((lines + 1))" "$TMP/n1.log" | grep -q "$1"; }
weftd_in n1 --set "head=$HEAD" --set node_name=n1 \
    --set "socket=$TMP/n1/weftd.sock.new"
until_ 20 "n1 seeing the head's archive_root again" said \
    "the head's archive_root is shared here"
until_ 20 "n1 knowing the head's clock again" said "the head's clock is"
mv "$TMP/n1/weftd.sock.new" "$TMP/n1/weftd.sock"
demos_done
shared_exact resumed 2
[ "$(node_ranks n1 resumed "journaled here")" = "" ] ||
    fail "n1 took resumed's processes into a part: $(node_ranks n1 resumed "journaled here")"
grep -q "reconnected to weftd" "$TMP/resumed.n1.out" ||
    fail "resumed: the processes did not have to reconnect"
stop_weftds n1
weftd_in n1 --set "head=$HEAD" --set node_name=n1
until_ 20 "n1 finding the head's archive_root again" archive_is n1 ok
echo "ok: processes a node forwarded come back to it restarted: forwarded again (they resume), exact"

# The head SIGKILLed mid-run while n1 and n2 write: they go on with
# their parts and link again; the head's restored trace has no stream,
# and its conversion makes the archive anew around the nodes' files.
# Once while the processes run (back before they end: the nodes are
# told again where the archive is), once until after they ended: their
# parts keep their journals until the head holds them, and n1's weftd,
# SIGKILLed meanwhile, writes its part again at its start.
headkill() { # NAME ITERATIONS BACK (before|after)
    export WEFT_RUN="$1-$$"
    demo_on n1 "$1" -p 2 --first-rank 0 --size 4 -t 2 -n "$2" -s 5000
    demo_on n2 "$1" -p 2 --first-rank 2 --size 4 -t 2 -n "$2" -s 5000
    for n in n1 n2; do
        until_ 20 "$n writing $1's events" grep -q \
            "trace '$1': this node writes its events" "$TMP/$n.log"
    done
    sleep 1
    kill -KILL "${PID[head]}"
    wait_gone "${PID[head]}" 10 || fail "the head's weftd outlived SIGKILL"
    # (their nodes acknowledge the processes: the head is not needed)
    if [ "$3" = after ]; then
        demos_done
        for n in n1 n2; do
            until_ 10 "$n ending its part of $1" grep -q \
                "trace '$1': this node's part is done" "$TMP/$n.log"
            [ "$(ls "$TMP/$n/parts/$1-"*/rank-*.wj 2>/dev/null | wc -l)" = 2 ] ||
                fail "$n let its journals of $1 go while the head was down"
        done
        kill -KILL "${PID[n1]}"
        wait_gone "${PID[n1]}" 10 || fail "n1's weftd outlived SIGKILL"
        weftd_in n1 --set "head=$HEAD" --set node_name=n1
        until_ 20 "n1 recovering its part of $1" grep -q \
            "recovery: trace '$1' ($1-.*): 2 member journals" "$TMP/n1.log"
    fi
    weftd_in head --set grace_period=20 --set "archive_root=$TMP/shared"
    [ "$3" = before ] && demos_done
    unset WEFT_RUN
    shared_exact "$1" 4
    grep -q "recovery: trace '$1' ($1-.*): 4 member journals" \
        "$TMP/head.log" || fail "the head did not recover $1"
    ls -d "$TMP/shared/$1-"*/archive.nodes 2>/dev/null &&
        fail "the nodes' files of $1 are left aside"
    until_ 10 "n1 and n2 removing their parts of $1" no_parts "$1"
}
headkill headkill 2000 before
[ "$(ls "$TMP"/shared/headkill-*/archive/traces/*.evt | wc -l)" = 8 ] ||
    fail "headkill: not 8 event files: $(ls "$TMP"/shared/headkill-*/archive/traces)"
headkill headdown 600 after
echo "ok: the head SIGKILLed while its nodes write: they go on, the archive is made anew around their files, exact"

# The head restarted with frames of at most 64 KiB: a process of 32
# threads has sums larger than that; its node sends them in pieces cut
# between their fields, the head joins them: exact.
stop_weftds head
weftd_in head --set grace_period=20 --set "archive_root=$TMP/shared" \
    --set max_frame=65536
until_ 40 "the nodes linked to the restarted head" nodes_are \
    "n1=linked n2=linked n3=linked"
until_ 20 "n1 finding the head's archive_root again" archive_is n1 ok
export WEFT_RUN="big-$$"
demo_on n1 big -p 1 --first-rank 0 --size 2 -t 32 -n 2000
demo_on n2 big -p 1 --first-rank 1 --size 2 -t 1 -n 2000
demos_done
unset WEFT_RUN
shared_exact big 2
until_ 10 "n1 removing its part of big" no_parts big
grep -q "trace 'big'.*cannot be cut" "$TMP/n1.log" &&
    fail "n1 could not cut big's sums: $(grep "trace 'big'" "$TMP/n1.log")"
[ "$(nodes head)" = "n1=linked n2=linked n3=linked" ] ||
    fail "a node's link did not outlive the large sums: $(nodes head)"
echo "ok: sums beyond the head's max_frame cross in pieces: exact"

# The shared file system unwritable on n2 (its view of archive_root
# read-only, as a full or failing mount would be) as its part ends: n2
# says so, keeps the journals and tries again, the delay doubling; the
# head waits. Once it can write, the archive is exact. (n2 runs in a
# mount namespace of its own, archive_root a mount point there.)
stop_weftds n2
cat >"$TMP/own-mount" <<EOF
#!/bin/sh
mount --bind "$TMP/shared" "$TMP/shared" || exit 1
exec "\$@"
EOF
chmod 755 "$TMP/own-mount"
WRAP="$TMP/own-mount" weftd_in n2 --set "head=$HEAD" --set node_name=n2
until_ 20 "n2 linked again" nodes_are "n1=linked n2=linked n3=linked"
until_ 20 "n2 finding the head's archive_root" archive_is n2 ok
n2_mount() { nsenter -t "${PID[n2]}" -m mount -o "remount,bind,$1" "$TMP/shared"; }
# read_only NAME: a launch of NAME over n1 and n2, n2's view made
# read-only once it writes; n2 then says it cannot write its part.
read_only() {
    export WEFT_RUN="$1-$$"
    demo_on n1 "$1" -p 1 --first-rank 0 --size 2 -t 2 -n 600 -s 5000
    demo_on n2 "$1" -p 1 --first-rank 1 --size 2 -t 2 -n 600 -s 5000
    unset WEFT_RUN
    until_ 20 "n2 writing $1's events" grep -q \
        "trace '$1': this node writes its events" "$TMP/n2.log"
    n2_mount ro || fail "cannot make n2's view of archive_root read-only"
    demos_done
    until_ 30 "n2 saying it cannot write $1" grep -q \
        "trace '$1': 1 processes of this node's part cannot be written into $TMP/shared/$1-.*/archive: .*; their journals are kept, trying again in 2 s" \
        "$TMP/n2.log"
}
read_only rofs
until_ 30 "n2 trying again" grep -q "trying again in 4 s" "$TMP/n2.log"
[ -n "$(ls "$TMP/n2/parts" | grep '^rofs-')" ] || fail "n2 removed its journals of rofs"
state=$("$WEFT" --catalog "$TMP/head/catalog.db" show --json rofs |
    "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])')
[ "$state" = recording ] || fail "rofs is $state at the head while n2 cannot write it"
n2_mount rw || fail "cannot make n2's view of archive_root writable again"
shared_exact rofs 2
until_ 10 "n2 removing its part of rofs" no_parts rofs
until_ 20 "n2 finding the head's archive_root usable" archive_is n2 ok
echo "ok: the shared file system unwritable on one node: it says so, keeps its journals, tries again; exact once it can write"

# Again, and n2's weftd stopped (SIGTERM) while its part waits to try
# again: the journals stay; started again (its view writable), it writes
# them at its start, exact.
read_only rofs2
stop_weftds n2
[ -n "$(ls "$TMP/n2/parts" | grep '^rofs2-')" ] || fail "n2 removed its journals of rofs2 as it stopped"
WRAP="$TMP/own-mount" weftd_in n2 --set "head=$HEAD" --set node_name=n2
shared_exact rofs2 2
grep -q "recovery: trace 'rofs2' (rofs2-.*): 1 member journals" "$TMP/n2.log" ||
    fail "n2 did not recover its part of rofs2"
until_ 10 "n2 removing its part of rofs2" no_parts rofs2
until_ 20 "n2 finding the head's archive_root usable" archive_is n2 ok
echo "ok: a node stopped while its part waits to write: its journals kept, written at its next start, exact"

# A node cut off for good while it writes (its bridge port down, never
# up again; its processes go on): after the head's grace period the
# trace is partial, its reason naming the node and its ranks, whose
# events are lost (their node sent no sums: their files made empty);
# n1's ranks are whole, the archive read by both readers.
export WEFT_RUN="nodelost-$$"
demo_on n1 nodelost -p 1 --first-rank 0 --size 2 -t 2 -n 600 -s 5000
demo_on n2 nodelost -p 1 --first-rank 1 --size 2 -t 2 -n 100000 -s 1000
unset WEFT_RUN
for n in n1 n2; do
    until_ 20 "$n writing nodelost's events" grep -q \
        "trace 'nodelost': this node writes its events" "$TMP/$n.log"
done
sleep 0.5
ip -n "$P-sw" link set n2 down
SPOOL=$TMP/head wait_state nodelost partial 60
why=$(json_get "$TMP/show.json" 'j.get("error")')
case "$why" in
*"1 of 2 members did not say goodbye (rank 1 on node n2"*"rank 1: its events are lost (its node sent no sums)"*) ;;
*) fail "nodelost: reason '$why' does not name n2 and its lost rank";;
esac
# (rank 0 exactly what it recorded, both readers; rank 1 nothing)
check_archive nodelost "$TMP/nodelost.n1.json"
"$PY" - "$(json_get "$TMP/show.json" 'j["archive"]')" <<'PY' || fail "nodelost: rank 1's events are in the archive"
import sys
import otf2
with otf2.reader.open(sys.argv[1]) as r:
    n = sum(1 for loc, _ in r.events if loc._ref >> 32 == 1)
assert n == 0, n
PY
pkill -KILL -f -- "--report $TMP/nodelost.n2.json"
{ wait "${DEMOS[@]}"; } 2>/dev/null
DEMOS=()
echo "ok: a node cut off for good while it writes: the trace partial after the grace period, naming it, the rest readable"

stop_weftds n1 n3 head
echo "PASS"

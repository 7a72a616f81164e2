#!/bin/bash
# e2e_cluster.sh - weftds as the nodes of a cluster and its head (#34):
# a head and three nodes, each weftd in a network namespace of its own
# with its own munged (the cluster's key), on a bridge in a namespace of
# its own (veth pairs; addresses only inside the namespaces, nothing in
# the host's). A fourth namespace holds a node whose munged has another
# key.
#  - every node links to the head (MUNGE, as weftd's uid) and each side's
#    `weft status` says so, and whether the node sees the head's
#    archive_root (a directory all share; one node looks elsewhere); a
#    node forwards its processes (its Unix socket) to the head (n1 and
#    n2 are told to, write_events = no: tests/e2e_cluster_parts.sh has
#    the nodes that write their processes' events), which
#    makes their trace, owned by the user the node's kernel named (its
#    archive in the head's archive_root), and sees the node's
#    connections; a process tree (weft run) stays on its node;
#  - one launch whose ranks run on three nodes is one trace at the head,
#    its archive exact (otf2-print, the python reader); processes killed
#    on a node make their trace partial at once (the node says they are
#    gone); a node lost for good: partial after the grace period, its
#    reason naming the node;
#  - weft on a node asks the head's catalog (root: all of it, a user:
#    their traces, removed through the node), the node's own with
#    --catalog naming it; refused at once while the head is down;
#  - one user's flood through a node (its link slowed) holds back that
#    user's connections alone (a share of the link's queue);
#  - a node's weftd SIGKILLed mid-run and the head SIGKILLed mid-run:
#    the processes connect again, resume, and the archive is exact;
#  - a user's process posing as a node (a credential of its own uid), a
#    NodeHello without a credential, a member's Hello on a node's link,
#    a node of another MUNGE key: each refused with its reason;
#  - a user holding the head's address while it is down (a fake head
#    claiming that user's uid, or the head's, whose credential it cannot
#    read) is refused by a node before the node says anything of itself;
#  - the head SIGKILLed: its nodes notice at once (a question on its way
#    through a node is told the link ended), wait, and link again
#    when it is back; a node SIGKILLed and back: linked again; a node cut
#    off (its bridge port down): the head marks it gone and the node
#    stops believing in its link after three heartbeats, and it links
#    again once its port is up;
#  - bad [cluster] settings stop weftd at start with a message naming
#    the key.
. "$(dirname "$0")/lib.sh"

P="wc$$"          # namespaces: $P-sw (the bridge), $P-head, $P-n1 ...
. "$(dirname "$0")/cluster_lib.sh"

make_user EVE   # $TMP/pub: the munged sockets, reachable by EVE
bridge

host head 10.231.7.1
host n1 10.231.7.11
host n2 10.231.7.12
host n3 10.231.7.13
host bad 10.231.7.99
head -c 1024 /dev/urandom >"$TMP/key" && chmod 600 "$TMP/key"
head -c 1024 /dev/urandom >"$TMP/badkey" && chmod 600 "$TMP/badkey"
for n in head n1 n2 n3; do
    munge "$n" "$TMP/key"
done
munge bad "$TMP/badkey"

HEAD="${ADDR[head]}:7411"
weftd_in head --set grace_period=12 --set "archive_root=$TMP/shared"
# n3 looks for the head's archive_root where it is not (its own view);
# n1 and n2 see it, and forward their processes all the same
weftd_in n1 --set "head=$HEAD" --set node_name=n1 --set write_events=no
weftd_in n2 --set "head=$HEAD" --set node_name=n2 --set write_events=no
weftd_in n3 --set "head=$HEAD" --set node_name=n3 --set "archive_root=$TMP/n3-view"
until_ 20 "three nodes linked to the head" nodes_are \
    "n1=linked n2=linked n3=linked"
for n in n1 n2 n3; do
    until_ 5 "$n's status showing its link" head_is "$n" linked
    grep -q "linked to head .* at $HEAD (weftd .*) as node $n; heartbeat 1 s" \
        "$TMP/$n.log" || fail "$n does not log its link"
done
grep -q "node n1 linked (weftd .*, uid 0, MUNGE)" "$TMP/head.log" ||
    fail "the head does not log how n1 proved who it is"
"$WEFT" --catalog "$TMP/head/catalog.db" status >"$TMP/head.status" ||
    fail "weft status on the head failed"
grep -q "^nodes: *3 linked, 0 gone" "$TMP/head.status" ||
    fail "weft status on the head: $(cat "$TMP/head.status")"
"$WEFT" --catalog "$TMP/n2/catalog.db" status >"$TMP/n2.status"
grep -q "^head: *$HEAD, linked for [0-9]* s (host .*), 1 links made" \
    "$TMP/n2.status" || fail "weft status on n2: $(cat "$TMP/n2.status")"

# The head's archive_root, a shared directory: n1 and n2 see its mark,
# n3 looks elsewhere; both sides' status say so.
for n in n1 n2; do
    until_ 10 "$n finding the head's archive_root shared" archive_is "$n" ok
done
until_ 10 "n3 finding the head's archive_root not where it looks" archive_is n3 unusable
grep -q "^weft head .* [0-9a-f]\{32\}$" "$TMP/shared/.weft-head" ||
    fail "the head's mark: $(cat "$TMP/shared/.weft-head")"
"$WEFT" --catalog "$TMP/head/catalog.db" status >"$TMP/head.status"
grep -q "archive_root: ok ($TMP/shared)" "$TMP/head.status" ||
    fail "weft status on the head does not show n1's archive_root: $(cat "$TMP/head.status")"
grep -q "archive_root: unusable ($TMP/n3-view): $TMP/n3-view/.weft-head: No such file or directory: is the head's archive_root (a shared file system) mounted here?" \
    "$TMP/head.status" || fail "weft status on the head, n3's archive_root: $(cat "$TMP/head.status")"
"$WEFT" --catalog "$TMP/n3/catalog.db" status | grep -q "^  archive_root: unusable ($TMP/n3-view)" ||
    fail "weft status on n3 does not say its view of the archive_root is unusable"
grep -q "the head's archive_root cannot be used here: $TMP/n3-view/.weft-head" "$TMP/n3.log" ||
    fail "n3 does not log why it cannot use the head's archive_root"
echo "ok: three nodes linked, both sides' weft status say so; two see the head's archive_root, the third says why not"

# A node forwards its processes (over its Unix socket) to its head,
# which makes the trace; the head sees the node's connection meanwhile.
# Each figure counts connections open at the moment it is read (the
# node's come with its heartbeats), each read is a weft status of its
# own, so each is watched for on its own while the demo runs.
node_idle() {
    [ "$(node_field n1 connections)" = 0 ] && [ "$(node_field n1 recording)" = 0 ]
}
demo_on n1 onnode -p 1 -t 2 -n 800 -s 10000
conn=0 relayed=0 forwarded=0
for _ in $(seq 150); do
    [ "$conn" = 1 ] || { [ "$(node_field n1 connections)" -ge 1 ] 2>/dev/null && conn=1; }
    [ "$relayed" = 1 ] || { [ "$(node_field n1 relayed)" -ge 1 ] 2>/dev/null && relayed=1; }
    [ "$forwarded" = 1 ] || { [ "$(head_of n1 forwarded)" -ge 1 ] 2>/dev/null && forwarded=1; }
    [ "$conn$relayed$forwarded" = 111 ] && break
    sleep 0.2
done
[ "$conn$relayed$forwarded" = 111 ] ||
    fail "the head seeing n1's forwarded process, and n1 forwarding it within 30 s: seen: n1's connection $conn, relayed $relayed, n1 forwarding $forwarded (now: $(node_field n1 connections), $(node_field n1 relayed), $(head_of n1 forwarded)); the demo (running: $(kill -0 "${DEMOS[0]}" 2>/dev/null && echo yes || echo no)) said: $(tail -n 5 "$TMP/onnode.n1.out")"
demos_done
exact onnode 1
[ "$(json_get "$TMP/show.json" 'j["uid"]')" = 0 ] || fail "onnode is not root's"
case "$(json_get "$TMP/show.json" 'j["archive"]')" in
"$TMP/shared/onnode-"*/archive/traces.otf2) ;;
*) fail "onnode's archive is not in the head's archive_root: $(json_get "$TMP/show.json" 'j["archive"]')";;
esac
grep -q "forwarded to the head as member 1" "$TMP/n1.log" ||
    fail "n1 does not log the process it forwarded"
until_ 10 "the head seeing n1 idle again" node_idle
# A user's process on a node: the trace is that user's (the node's
# kernel said so), not root's.
ip netns exec "$P-n3" env RAWPEER_PID=$$ timeout 30 setpriv --reuid="$EVE" \
    --regid=nogroup --clear-groups -- "$RAWPEER" "unix:$TMP/n3/weftd.sock" \
    valid evetrace || fail "EVE's process on n3 was not traced"
SPOOL=$TMP/head wait_state evetrace complete 30
[ "$(json_get "$TMP/show.json" 'j["uid"]')" = "$EVE_UID" ] ||
    fail "EVE's trace is uid $(json_get "$TMP/show.json" 'j["uid"]')'s at the head"
# A process tree (weft run: shells, builds) runs on one machine: it stays
# with its node's weftd, which watches its processes.
ip netns exec "$P-n1" env RAWPEER_ROOT=1 RAWPEER_PID=$$ timeout 30 \
    "$RAWPEER" "unix:$TMP/n1/weftd.sock" tree-join treerun ||
    fail "the process tree's member on n1 was not traced"
SPOOL=$TMP/n1 wait_state treerun complete 30
"$WEFT" --catalog "$TMP/head/catalog.db" show treerun >/dev/null 2>&1 &&
    fail "a process tree was forwarded to the head"
echo "ok: a node forwards its processes; the head makes their traces, the user's; a process tree stays on its node"

# One launch across the nodes: ranks 0-1 on n1, 2-3 on n2, 4 on n3.
export WEFT_RUN="across-$$"
demo_on n1 across -p 2 --first-rank 0 --size 5 -t 2 -n 300
demo_on n2 across -p 2 --first-rank 2 --size 5 -t 2 -n 300
demo_on n3 across -p 1 --first-rank 4 --size 5 -t 2 -n 300
demos_done
unset WEFT_RUN
exact across 5
echo "ok: one launch on three nodes is one trace, exact"

# weft on a node asks the head, which keeps the catalog: the node relays
# the question for the user its kernel names (root too), and the answer
# back (a catalog image of more than one piece for root); --catalog
# naming the node's own catalog answers from the node (its process
# trees); a user removes their trace through the node.
printf '[weftd]\nspool = %s\nsocket = %s\n[cluster]\nhead = %s\nnode_name = n2\n' \
    "$TMP/n2" "$TMP/n2/weftd.sock" "$HEAD" >"$TMP/pub/n2.conf"
on_n2() { ip netns exec "$P-n2" env WEFT_CONFIG="$TMP/pub/n2.conf" timeout 30 "$@"; }
eve_on() { # NODE COMMAND...: COMMAND as EVE on NODE, with n2's configuration
    local n=$1
    shift
    ip netns exec "$P-$n" env WEFT_CONFIG="$TMP/pub/n2.conf" timeout 30 \
        setpriv --reuid="$EVE" --regid=nogroup --clear-groups -- "$@"
}
"$WEFT" --catalog "$TMP/head/catalog.db" list >"$TMP/list.head" ||
    fail "weft list on the head failed"
on_n2 "$WEFT" list >"$TMP/list.n2" 2>&1 || fail "weft list as root on n2 failed: $(cat "$TMP/list.n2")"
cmp -s "$TMP/list.head" "$TMP/list.n2" ||
    fail "weft list as root on n2 is not the head's: $(diff "$TMP/list.head" "$TMP/list.n2")"
grep -q "Query (kind 0) of uid 0 forwarded to the head" "$TMP/n2.log" ||
    fail "n2 does not log the question it relayed"
eve_on n2 "$WEFT" list >"$TMP/list.eve" 2>&1 || fail "weft list as EVE on n2 failed: $(cat "$TMP/list.eve")"
grep -q " evetrace " "$TMP/list.eve" || fail "EVE's weft list on n2 lacks her trace: $(cat "$TMP/list.eve")"
grep -qE " (onnode|across) " "$TMP/list.eve" && fail "EVE's weft list on n2 shows root's traces: $(cat "$TMP/list.eve")"
eve_on n2 "$WEFT" show --json evetrace >"$TMP/show.eve" 2>&1 || fail "weft show as EVE on n2: $(cat "$TMP/show.eve")"
[ "$(json_get "$TMP/show.eve" 'j["uid"]')" = "$EVE_UID" ] || fail "weft show on n2: $(cat "$TMP/show.eve")"
out=$(eve_on n2 "$WEFT" show onnode 2>&1) && fail "EVE sees root's trace through n2: $out"
case "$out" in *"no trace 'onnode'"*) ;; *) fail "EVE's show of root's trace on n2: '$out'";; esac
# the node's own catalog: the process tree traced on n1, not the head's
on_n1() { ip netns exec "$P-n1" env WEFT_CONFIG="$TMP/pub/n2.conf" WEFT_SOCKET="$TMP/n1/weftd.sock" timeout 30 "$@"; }
on_n1 setpriv --reuid="$EVE" --regid=nogroup --clear-groups -- "$WEFT" \
    --catalog "$TMP/n1/catalog.db" list >"$TMP/list.n1" 2>&1 ||
    fail "EVE's weft --catalog (n1's own) list failed: $(cat "$TMP/list.n1")"
grep -q "evetrace" "$TMP/list.n1" && fail "n1's own catalog answered with the head's: $(cat "$TMP/list.n1")"
on_n1 "$WEFT" --catalog "$TMP/n1/catalog.db" list | grep -q " treerun " ||
    fail "n1's own catalog lacks its process tree"
# the archive, in the head's archive_root (shared): EVE verifies it on n2
eve_on n2 "$WEFT" verify evetrace >"$TMP/verify.eve" 2>&1 ||
    fail "weft verify as EVE on n2: $(cat "$TMP/verify.eve")"
grep -q "^OK evetrace: " "$TMP/verify.eve" || fail "weft verify on n2: $(cat "$TMP/verify.eve")"
# EVE removes her trace through n2: it is gone from the head
dir=$("$WEFT" --catalog "$TMP/head/catalog.db" path evetrace)
eve_on n2 "$WEFT" rm evetrace >"$TMP/rm.eve" 2>&1 || fail "weft rm as EVE on n2: $(cat "$TMP/rm.eve")"
"$WEFT" --catalog "$TMP/head/catalog.db" show evetrace >/dev/null 2>&1 &&
    fail "EVE's weft rm on n2 left her trace in the head's catalog"
[ -e "$dir" ] && fail "EVE's weft rm on n2 left $dir"
[ -z "$(find "$TMP/shared" -maxdepth 1 -name 'evetrace-*')" ] ||
    fail "EVE's weft rm on n2 left her archive in the head's archive_root"
# A user's questions on their way through a node are bounded as on the
# head (max_questions_per_user, 4): four imports whose rows never come
# hold four, the fifth is refused at once.
cp "$WEFT_SRCDIR/tests/weftproto.py" "$TMP/pub/"
out=$(eve_on n2 "$PY" - "$TMP/n2/weftd.sock" "$TMP/pub" <<'PY'
import socket, sys, time
sys.path.insert(0, sys.argv[2])
from weftproto import PROTOCOL_VERSION, enc_len, enc_uint, frame
held = []
for i in range(5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    # Query { protocol_version, kind = IMPORT (3) }, no ImportTrace after
    s.sendall(frame(enc_len(12, enc_uint(1, PROTOCOL_VERSION) + enc_uint(2, 3))))
    held.append(s)
    time.sleep(0.3)
held[-1].settimeout(10)
print(held[-1].recv(4096).decode("utf-8", "replace"))
PY
) || fail "the held imports through n2 failed: $out"
case "$out" in
*"you have 4 questions on their way to the head already (max_questions_per_user 4)"*) ;;
*) fail "EVE's fifth question through n2: '$out'";;
esac
echo "ok: weft on a node asks the head: root sees the head's catalog, EVE her traces only, verifies one in the shared archive_root and removes it, four questions at once; --catalog names the node's own"

# One user's flood through a node does not stop another user's processes
# there: a user's share of the link's queue is an eighth of max_buffered
# (n2 restarted with 1 MiB, its link slowed to 2 Mbit/s so that frames
# wait): EVE's connections alone are paused, root's trace is exact.
kill -TERM "${PID[n2]}"
wait_gone "${PID[n2]}" 15 || fail "n2's weftd did not stop"
weftd_in n2 --set "head=$HEAD" --set node_name=n2 --set write_events=no --set max_buffered=1048576
until_ 20 "n2 linked again" head_is n2 linked
if ip netns exec "$P-n2" tc qdisc add dev eth0 root tbf rate 2mbit \
    burst 64kbit latency 5s 2>"$TMP/tc.err"; then
    ip netns exec "$P-n2" env RAWPEER_PID=$$ timeout 60 setpriv \
        --reuid="$EVE" --regid=nogroup --clear-groups -- "$RAWPEER" \
        "unix:$TMP/n2/weftd.sock" flood eveflood >"$TMP/flood.out" 2>&1 &
    flood=$!
    until_ 20 "n2 pausing EVE's flood for her share" grep -q \
        "uid $EVE_UID has [0-9]* bytes waiting to be written to the head (an eighth of max_buffered): its forwarded connections paused" \
        "$TMP/n2.log"
    demo_on n2 fair -p 1 -t 2 -n 1000
    demos_done
    exact fair 1
    wait "$flood" || fail "EVE's flood: $(cat "$TMP/flood.out")"
    grep -q "^blocked after" "$TMP/flood.out" ||
        fail "EVE's flood was not held back: $(cat "$TMP/flood.out")"
    grep -q "wait to be written to the head: forwarded connections paused" \
        "$TMP/n2.log" && fail "EVE's flood paused every user's connections on n2"
    ip netns exec "$P-n2" tc qdisc del dev eth0 root
    echo "ok: one user's flood through a node holds back only that user"
else
    echo "SKIP: no tbf queueing discipline to slow a link ($(cat "$TMP/tc.err")): a user's share of a node's link not checked"
fi
kill -TERM "${PID[n2]}"
wait_gone "${PID[n2]}" 15 || fail "n2's weftd did not stop"
weftd_in n2 --set "head=$HEAD" --set node_name=n2 --set write_events=no
until_ 20 "n2 linked again" head_is n2 linked

# Processes killed on a node: the node sees them gone and says so, and
# the head ends the trace as partial at once (not after its grace period
# of 300 s), as for processes of its own.
demo_on n2 killed -p 2 -t 1 -n 100000 -s 1000
until_ 20 "the head seeing killed recording" sh -c \
    "'$WEFT' --catalog '$TMP/head/catalog.db' show killed >/dev/null 2>&1"
sleep 0.5
pkill -KILL -f -- "--report $TMP/killed.n2.json"
{ wait "${DEMOS[@]}"; } 2>/dev/null
DEMOS=()
SPOOL=$TMP/head wait_state killed partial 20
grep -q "trace 'killed' rank [01]: its process [0-9]* is gone without goodbye" \
    "$TMP/head.log" || fail "the head does not say the killed processes are gone"
echo "ok: processes killed on a node: the trace is partial at once"

# A node lost for good (its weftd killed and not back; its processes try
# on): after the head's grace period (12 s here) the trace is partial,
# its reason naming the node.
demo_on n3 lost -p 2 -t 1 -n 100000 -s 1000
until_ 20 "the head seeing lost recording" sh -c \
    "'$WEFT' --catalog '$TMP/head/catalog.db' show lost >/dev/null 2>&1"
sleep 0.5
kill -KILL "${PID[n3]}"
wait_gone "${PID[n3]}" 10 || fail "n3's weftd outlived SIGKILL"
SPOOL=$TMP/head wait_state lost partial 40
why=$(json_get "$TMP/show.json" 'j.get("error")')
case "$why" in
*"2 of 2 members did not say goodbye (rank 0 on node n3..."*) ;;
*) fail "the trace of a node lost for good: reason '$why' does not name n3";;
esac
archive=$(json_get "$TMP/show.json" 'j["archive"]')
otf2-print -Werror --silent "$archive" >/dev/null ||
    fail "otf2-print rejects the partial archive of a node lost"
"$PY" - "$archive" <<'PY' || fail "the python reader rejects the partial archive of a node lost"
import sys
import otf2
with otf2.reader.open(sys.argv[1]) as r:
    n = sum(1 for _ in r.events)
assert n > 0, n
PY
pkill -KILL -f -- "--report $TMP/lost.n3.json"
{ wait "${DEMOS[@]}"; } 2>/dev/null
DEMOS=()
weftd_in n3 --set "head=$HEAD" --set node_name=n3 --set "archive_root=$TMP/n3-view"
until_ 20 "n3 linked again" nodes_are "n1=linked n2=linked n3=linked"
echo "ok: a node lost for good: its trace partial after the grace period, naming it"

# Posing as a node: refused, each with its reason.
refused() { # NAMESPACE WHO EXPECTED RAWPEER-ARGS...
    local ns=$1 who=$2 want=$3 out
    shift 3
    if [ "$who" = root ]; then
        out=$(ip netns exec "$P-$ns" env WEFT_MUNGE_SOCKET="$TMP/pub/$ns.munge" \
            timeout 30 "$RAWPEER" "$HEAD" "$@")
    else
        out=$(ip netns exec "$P-$ns" env WEFT_MUNGE_SOCKET="$TMP/pub/$ns.munge" \
            timeout 30 setpriv --reuid="$who" --regid=nogroup --clear-groups \
            -- "$RAWPEER" "$HEAD" "$@")
    fi
    case "$out" in *"$want"*) ;; *) fail "rawpeer $*: '$out' does not say '$want'";; esac
}
refused n1 "$EVE" "EAUTH: NodeHello from uid $EVE_UID: a node must be a weftd running as root or as this head's user (uid 0)" \
    node-hello evil
refused n1 root "EAUTH: NodeHello without a MUNGE credential" \
    node-no-auth evil2
refused n1 root "EPROTO: Hello on a node's link" node-then-hello rogue
refused n1 root "EINVAL: NodeHello: node name has byte 0x2f at 1" \
    node-hello "n/1"
# (rogue ran as root, whom the head trusts: linked, then closed for its
# Hello; the others never linked)
sleep 1.2  # the head's status file is rewritten every second
case "$(nodes head)" in
"n1=linked n2=linked n3=linked" | "n1=linked n2=linked n3=linked rogue=gone") ;;
*) fail "posing as nodes changed the head's nodes: $(nodes head)";;
esac
weftd_in bad --set "head=$HEAD" --set node_name=bad
until_ 20 "the node of another MUNGE key refused" grep -q \
    "the head refused this node: EAUTH: MUNGE credential refused" \
    "$TMP/bad.log"
until_ 5 "the refused node's status saying why" sh -c \
    "'$WEFT' --catalog '$TMP/bad/catalog.db' status | grep -q 'last link ended: the head refused this node: EAUTH: MUNGE credential refused'"
case "$(nodes head)" in *bad*) fail "the node of another key is listed";; esac
# A second weftd (in n1's namespace, the cluster's key) configured with
# n2's name: refused while n2's link is alive, n2 untouched.
mkdir -p "$TMP/dup"
ip netns exec "$P-n1" "$WEFTD" --listen 127.0.0.1:0 --spool "$TMP/dup" \
    --set "munge_socket=$TMP/pub/n1.munge" --set "head=$HEAD" \
    --set node_name=n2 --log-level debug >>"$TMP/dup.log" 2>&1 &
PID[dup]=$!
PIDS+=($!)
disown $!
until_ 20 "the second node named n2 refused" grep -q \
    "the head refused this node: EEXIST: node name n2 is linked from ${ADDR[n2]}:[0-9]*, heard from [0-9]* ms ago: do two nodes have this name? (\[cluster\] node_name)" \
    "$TMP/dup.log"
sleep 1.2
[ "$(head_of n2 links)" = 1 ] && [ "$(nodes head)" = "n1=linked n2=linked n3=linked" ] ||
    [ "$(nodes head)" = "n1=linked n2=linked n3=linked rogue=gone" ] ||
    fail "the second n2 disturbed the first: $(nodes head), n2 made $(head_of n2 links) links"
grep -q "node n2 linked again" "$TMP/head.log" && fail "the second n2 replaced the first"
kill -TERM "${PID[dup]}"
wait_gone "${PID[dup]}" 15 || fail "the second n2's weftd did not stop"
echo "ok: a user's process, no credential, a Hello on a link, a bad name, another key, a name taken: refused"

# The head SIGKILLed: the nodes notice, wait, and link again; a
# question on its way through n2 (an import whose rows are still to
# come) is told the link ended.
eve_on n2 "$PY" - "$TMP/n2/weftd.sock" "$TMP/pub" >"$TMP/asking.out" 2>&1 <<'PY' &
import socket, sys
sys.path.insert(0, sys.argv[2])
from weftproto import PROTOCOL_VERSION, enc_len, enc_uint, frame
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(frame(enc_len(12, enc_uint(1, PROTOCOL_VERSION) + enc_uint(2, 3))))
print("asked", flush=True)
s.settimeout(25)
print(s.recv(4096).decode("utf-8", "replace"))
PY
asking=$!
until_ 10 "EVE's question on its way through n2" grep -q asked "$TMP/asking.out"
sleep 0.5
kill -KILL "${PID[head]}"
wait "$asking" || fail "EVE's question through n2: $(cat "$TMP/asking.out")"
grep -q "the link to the head ended before it answered; try again" \
    "$TMP/asking.out" || fail "EVE's question through n2 when the head died: $(cat "$TMP/asking.out")"
head_not() { [ "$(head_of "$1" state)" != "$2" ]; }
for n in n1 n2 n3; do
    until_ 10 "$n noticing its head gone" head_not "$n" linked
done
# weft on a node while its head is down: refused at once, saying why
out=$(on_n2 "$WEFT" list 2>&1) && fail "weft list on n2 with its head down: '$out'"
case "$out" in
*"this weftd is a node: its head ($HEAD) keeps the catalog and answers the weft command, and it is not linked now"*) ;;
*) fail "weft list on n2 with its head down: '$out'";;
esac
# A user holds the head's address while it is down: a node refuses it
# before it says anything of itself, whether it claims to run as that
# user or as the head's uid (root here), whose credential it cannot read.
cp "$WEFT_SRCDIR/tests/fakeweftd.py" "$WEFT_SRCDIR/tests/weftproto.py" \
    "$TMP/pub/" && chmod 755 "$TMP/pub/fakeweftd.py"
fake_head() { # CLAIM_UID EXPECTED
    local fake=$TMP/pub/fake-$1 pid
    mkdir "$fake" && chown "$EVE" "$fake"
    (cd "$TMP/pub" && ip netns exec "$P-head" setpriv --reuid="$EVE" \
        --regid=nogroup --clear-groups -- /usr/bin/python3 ./fakeweftd.py \
        "$fake/port" "$fake/log" "$TMP/pub/head.munge" "$1" 7411 \
        "${ADDR[head]}") 2>"$fake.err" &
    pid=$!
    until_ 10 "the fake head listening" test -s "$fake/port"
    # n1 restarted: it connects at once, not after its back-off (and
    # takes frames of 8 MiB from now on, twice the head's max_frame)
    kill -KILL "${PID[n1]}"
    wait_gone "${PID[n1]}" 10 || fail "n1's weftd outlived SIGKILL"
    weftd_in n1 --set "head=$HEAD" --set node_name=n1 --set write_events=no --set max_frame=8388608
    # (whichever node connects first: n1, n2, n3 or bad retrying)
    refused_by_node() {
        grep -q "$1" "$TMP/n1.log" "$TMP/n2.log" "$TMP/n3.log" "$TMP/bad.log"
    }
    for _ in $(seq 100); do refused_by_node "$2" && break; sleep 0.2; done
    refused_by_node "$2" || fail "no node refused a fake head of uid $1: $(tail -n 4 "$TMP/n1.log"; cat "$fake.err")"
    wait "$pid" 2>/dev/null
    "$PY" - "$fake/log" <<'PY' || fail "a node told the fake head more than its Auth"
import sys
b = open(sys.argv[1], "rb").read()
assert len(b) <= 4 + int.from_bytes(b[:4], "big"), len(b)
PY
    FAKE=$fake
}
fake_head "$EVE_UID" "the head runs as uid $EVE_UID, neither root nor this weftd's uid 0: another user's program may hold the head's address"
fake_head 0 "the server at ${ADDR[head]}:7411 is not a weftd: it says it runs as uid 0 but could not read the credential only that uid can read"
[ -s "$FAKE/log" ] || fail "the fake head claiming uid 0 saw no Auth"
grep -q "STATUS: *Success" "$FAKE/log.unmunge" &&
    fail "a user decoded a node's credential made for the head's uid"
echo "ok: a user holding the head's address learns nothing of a node"

weftd_in head --set grace_period=12 --set "archive_root=$TMP/shared"
until_ 40 "the nodes linked to the restarted head" nodes_are \
    "n1=linked n2=linked n3=linked"
for n in n1 n2 n3; do
    until_ 5 "$n linked again" head_is "$n" linked
done
for n in n2 n3; do  # (n1 was restarted meanwhile)
    [ "$(head_of "$n" links)" = 2 ] || fail "$n made $(head_of "$n" links) links"
done
# (the head's end, a reset or a silence, as the kill fell on the link)
grep -qE "link to head $HEAD: .*; trying again in [0-9]+ s" \
    "$TMP/n1.log" || fail "n1 does not log the end of its link: $(grep "link to head" "$TMP/n1.log")"
echo "ok: the head SIGKILLed and back: every node linked again"

# A process's frame over the head's max_frame (4 MiB) but within n1's
# (8 MiB): refused on n1, alone; the link (all n1's processes) stays.
out=$(ip netns exec "$P-n1" env RAWPEER_PID=$$ timeout 30 "$RAWPEER" \
    "unix:$TMP/n1/weftd.sock" big-defs bigframe 5000000)
case "$out" in
*"ETOOBIG: frame of "*" bytes: the head takes at most 4194304 (its max_frame is below this node's)"*) ;;
*) fail "a frame too big for the head, on n1: '$out'";;
esac
sleep 1.2
head_is n1 linked || fail "a process's big frame ended n1's link"
[ "$(head_of n1 links)" = 1 ] || fail "n1's link was made again: $(head_of n1 links) links"
# So is a weft import's rows of 5 MB through n1 (the head's max_frame
# is 4 MiB), and n1 says why.
out=$(eve_on n1 "$PY" - "$TMP/n1/weftd.sock" "$TMP/pub" <<'PY'
import socket, sys
sys.path.insert(0, sys.argv[2])
from weftproto import PROTOCOL_VERSION, enc_len, enc_uint, frame
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(frame(enc_len(12, enc_uint(1, PROTOCOL_VERSION) + enc_uint(2, 3))))
# Envelope { import_trace = 14 } of 5 MB: what weftd checks first is its
# size (it may refuse before it has read all of it)
try:
    s.sendall(frame(enc_len(14, enc_len(1, b"x" * 5000000))))
except OSError:
    pass
s.settimeout(20)
out = b""
while True:
    try:
        b = s.recv(65536)
    except OSError:
        break
    if not b:
        break
    out += b
print(out.decode("utf-8", "replace"))
PY
)
case "$out" in
*"frame of "*" bytes: the head takes at most 4194304 (its max_frame is below this node's)"*) ;;
*) fail "an import too big for the head, through n1: '$out'";;
esac
head_is n1 linked || fail "an import too big for the head ended n1's link"
echo "ok: a frame the head would refuse is refused on its node (a process's, an import's), the link stays"

# A node SIGKILLed and back.
kill -KILL "${PID[n2]}"
until_ 10 "the head marking n2 gone" nodes_are "n1=linked n2=gone n3=linked"
grep -q "node n2 gone: its link closed" "$TMP/head.log" ||
    fail "the head does not log n2 gone"
weftd_in n2 --set "head=$HEAD" --set node_name=n2 --set write_events=no
until_ 20 "n2 linked again" nodes_are "n1=linked n2=linked n3=linked"
echo "ok: a node SIGKILLed and back: linked again"

# n3 cut off: its bridge port down.
ip -n "$P-sw" link set n3 down
until_ 15 "the head marking n3 gone (3 heartbeats)" nodes_are \
    "n1=linked n2=linked n3=gone"
grep -q "refused: node silent: nothing received for 3 s (3 heartbeats)" \
    "$TMP/head.log" || fail "the head does not say why n3 is gone"
until_ 15 "n3 giving up its link" sh -c \
    "grep -q 'nothing from the head for 3 s (3 heartbeats)' '$TMP/n3.log'"
ip -n "$P-sw" link set n3 up
until_ 60 "n3 linked again once its port is up" nodes_are \
    "n1=linked n2=linked n3=linked"
echo "ok: a node cut off: gone after three heartbeats, linked again after"

# Faults mid-run, nothing acknowledged lost: n2's weftd SIGKILLed and
# restarted while its processes record; then the head.
# still_recording NAME: the last demo started (trace NAME) still runs.
still_recording() {
    kill -0 "${DEMOS[-1]}" 2>/dev/null ||
        fail "$1: the demo ended before the fault (too slow a machine for its length)"
}
# (recording 10 s, and still recording when the kill comes: on a slow
# machine the head may see the trace seconds after the demo started)
demo_on n2 nodekill -p 2 -t 2 -n 2000 -s 5000
until_ 20 "the head seeing nodekill recording" sh -c \
    "'$WEFT' --catalog '$TMP/head/catalog.db' show nodekill >/dev/null 2>&1"
sleep 1
still_recording nodekill
kill -KILL "${PID[n2]}"
wait_gone "${PID[n2]}" 10 || fail "n2's weftd outlived SIGKILL"
weftd_in n2 --set "head=$HEAD" --set node_name=n2 --set write_events=no
demos_done
exact nodekill 2
grep -q "reconnected to weftd" "$TMP/nodekill.n2.out" ||
    fail "nodekill: the processes did not have to reconnect"
demo_on n3 headkill -p 2 -t 2 -n 2000 -s 5000
until_ 20 "the head seeing headkill recording" sh -c \
    "'$WEFT' --catalog '$TMP/head/catalog.db' show headkill >/dev/null 2>&1"
sleep 1
still_recording headkill
kill -KILL "${PID[head]}"
wait_gone "${PID[head]}" 10 || fail "the head outlived SIGKILL"
sleep 1
weftd_in head --set grace_period=12 --set "archive_root=$TMP/shared"
demos_done
exact headkill 2
grep -q "the link to the head ended: [0-9]* forwarded connections closed" \
    "$TMP/n3.log" || fail "n3 does not say it closed its forwarded connections"
echo "ok: a node and the head SIGKILLed mid-run: the archives are exact"

# Bad settings stop weftd at start, naming the key.
expect 2 "[cluster] head = 'nocolon': expected HOST:PORT" \
    "$WEFTD" --spool "$TMP/x" --set head=nocolon --check-config
expect 1 "[cluster] node_name: node name has byte 0x2f at 1" \
    "$WEFTD" --listen 127.0.0.1:0 --spool "$TMP/y" --set "head=$HEAD" \
    --set node_name=a/b
expect 1 "[cluster] head = 'h:0': expected HOST:PORT with a port of 1 to 65535" \
    "$WEFTD" --listen 127.0.0.1:0 --spool "$TMP/z" --set head=h:0
echo "ok: bad [cluster] settings named at start"

stop_weftds n1 n2 n3 bad head
echo "PASS"

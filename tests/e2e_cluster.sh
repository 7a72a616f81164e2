#!/bin/bash
# e2e_cluster.sh - weftds as the nodes of a cluster and its head (#34):
# a head and three nodes, each weftd in a network namespace of its own
# with its own munged (the cluster's key), on a bridge in a namespace of
# its own (veth pairs; addresses only inside the namespaces, nothing in
# the host's). A fourth namespace holds a node whose munged has another
# key.
#  - every node links to the head (MUNGE, as weftd's uid) and each side's
#    `weft status` says so; a node still traces its own processes, and
#    its head sees it do so (connections, traces, events, lag);
#  - a user's process posing as a node (a credential of its own uid), a
#    NodeHello without a credential, a member's Hello on a node's link,
#    a node of another MUNGE key: each refused with its reason;
#  - a user holding the head's address while it is down (a fake head
#    claiming that user's uid, or the head's, whose credential it cannot
#    read) is refused by a node before the node says anything of itself;
#  - the head SIGKILLed: its nodes notice at once, wait, and link again
#    when it is back; a node SIGKILLed and back: linked again; a node cut
#    off (its bridge port down): the head marks it gone and the node
#    stops believing in its link after three heartbeats, and it links
#    again once its port is up;
#  - bad [cluster] settings stop weftd at start with a message naming
#    the key.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root (ip netns, useradd)"
    exit 77
fi
command -v ip >/dev/null || PATH=$PATH:/usr/sbin:/sbin
command -v ip >/dev/null || fail "no ip command (iproute2)"
command -v munged >/dev/null || PATH=$PATH:/usr/sbin
command -v munged >/dev/null || fail "no munged (scripts/deps.sh installs munge)"

P="wc$$"          # namespaces: $P-sw (the bridge), $P-head, $P-n1 ...
NETS=()
PIDS=()           # weftds and munged of the namespaces
declare -A PID ADDR

net_cleanup() {
    for p in "${PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    for n in "${NETS[@]}"; do
        ip netns pids "$n" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$n" 2>/dev/null
    done
    cleanup
}
trap net_cleanup EXIT

make_user EVE   # $TMP/pub: the munged sockets, reachable by EVE
ip netns add "$P-sw" || fail "ip netns add failed"
NETS+=("$P-sw")
ip -n "$P-sw" link add br0 type bridge && ip -n "$P-sw" link set br0 up ||
    fail "cannot make a bridge in $P-sw"

# host NAME ADDRESS: a namespace on the bridge (its port in $P-sw is
# named NAME), with lo and eth0 at ADDRESS/24.
host() {
    local ns="$P-$1"
    ip netns add "$ns" || fail "ip netns add $ns failed"
    NETS+=("$ns")
    ip -n "$ns" link add eth0 type veth peer name "$1" netns "$P-sw" &&
        ip -n "$P-sw" link set "$1" master br0 up &&
        ip -n "$ns" addr add "$2/24" dev eth0 &&
        ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up ||
        fail "cannot wire namespace $ns"
    ADDR[$1]=$2
}

# munge NAME KEY: that namespace's munged with KEY, its socket
# $TMP/pub/NAME.munge.
munge() {
    local sock="$TMP/pub/$1.munge"
    ip netns exec "$P-$1" munged -F -f --key-file="$2" --socket="$sock" \
        --pid-file="$TMP/$1.munge.pid" --seed-file="$TMP/$1.munge.seed" \
        --log-file="$TMP/$1.munge.log" >>"$TMP/$1.munge.log" 2>&1 &
    PIDS+=($!)
    disown $!
    for _ in $(seq 100); do
        [ -S "$sock" ] && return 0
        sleep 0.05
    done
    fail "munged of $1 did not start: $(cat "$TMP/$1.munge.log")"
}

# weftd_in NAME [ARGS...]: NAME's weftd on ADDR[NAME]:7411 and its Unix
# socket, spool $TMP/NAME, log $TMP/NAME.log; heartbeats of 1 s.
weftd_in() {
    local name=$1
    shift
    ip netns exec "$P-$name" "$WEFTD" --listen "${ADDR[$name]}:7411" \
        --spool "$TMP/$name" --log-level debug \
        --set "munge_socket=$TMP/pub/$name.munge" --set heartbeat=1 "$@" \
        >>"$TMP/$name.log" 2>&1 &
    PID[$name]=$!
    PIDS+=($!)
    disown $!
}

# status NAME: NAME's `weft status --json` (as root: its status file).
status() {
    "$WEFT" --catalog "$TMP/$1/catalog.db" status --json 2>/dev/null
}

# nodes NAME: "n1=linked n2=gone ..." as the head NAME sees them, sorted.
nodes() {
    status "$1" | "$PY" -c '
import json, sys
try:
    st = json.load(sys.stdin)
except ValueError:
    sys.exit(0)  # no status yet (weftd starting or gone)
print(" ".join(sorted("%s=%s" % (n["name"], n["state"]) for n in st["nodes"])))'
}

# head_of NAME FIELD: a field of NAME's link to its head.
head_of() {
    status "$1" | "$PY" -c '
import json, sys
try:
    print(json.load(sys.stdin).get("head", {}).get(sys.argv[1], ""))
except ValueError:
    pass  # no status yet' "$2"
}

# until_ SECONDS WHAT COMMAND...: COMMAND succeeds within SECONDS, or
# the test fails saying WHAT did not happen.
until_() {
    local t=$1 what=$2
    shift 2
    for _ in $(seq $((t * 5))); do
        "$@" && return 0
        sleep 0.2
    done
    fail "$what within $t s"
}
nodes_are() { [ "$(nodes head)" = "$1" ]; }
head_is() { [ "$(head_of "$1" state)" = "$2" ]; }

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
weftd_in head
for n in n1 n2 n3; do
    weftd_in "$n" --set "head=$HEAD" --set "node_name=$n"
done
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
echo "ok: three nodes linked, both sides' weft status say so"

# A node still traces its own processes (over its Unix socket), and its
# head sees it do so (NodeStatus every heartbeat).
node_field() { # HEAD-VIEW OF NODE: FIELD of node NAME in the head's status
    status head | "$PY" -c '
import json, sys
try:
    st = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
for n in st["nodes"]:
    if n["name"] == sys.argv[1]:
        print(n.get(sys.argv[2], ""))' "$1" "$2"
}
node_records() {
    [ "$(node_field n1 recording)" = 1 ] && [ "$(node_field n1 connections)" -ge 1 ] &&
        [ "$(node_field n1 events)" -gt 0 ] && [ "$(node_field n1 written)" -gt 0 ]
}
node_idle() {
    [ "$(node_field n1 recording)" = 0 ] && [ "$(node_field n1 lag)" = 0 ]
}
ip netns exec "$P-n1" env WEFT_SERVER="unix:$TMP/n1/weftd.sock" \
    WEFT_TRACE=onnode timeout 60 "$DEMO" -p 1 -t 2 -n 400 -s 10000 \
    >/dev/null 2>&1 &
demo=$!
until_ 20 "the head seeing n1 record (connections, a trace, events, some in the archive)" \
    node_records
wait $demo || fail "weft-demo on n1 failed"
timeout 60 "$WEFT" --catalog "$TMP/n1/catalog.db" wait --timeout 50 onnode \
    >/dev/null || fail "n1's own trace did not complete"
until_ 10 "the head seeing n1 idle again, nothing left to write" node_idle
"$WEFT" --catalog "$TMP/head/catalog.db" status >"$TMP/head.status"
grep -q "^ *[0-9]* connections, 0 traces recording, [0-9]* events, 0 not in the archives yet" \
    "$TMP/head.status" || fail "weft status on the head: $(cat "$TMP/head.status")"
echo "ok: a node traces its own processes, its head sees its figures"

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

# The head SIGKILLed: the nodes notice, wait, and link again.
kill -KILL "${PID[head]}"
head_not() { [ "$(head_of "$1" state)" != "$2" ]; }
for n in n1 n2 n3; do
    until_ 10 "$n noticing its head gone" head_not "$n" linked
done
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
    # n1 restarted: it connects at once, not after its back-off
    kill -KILL "${PID[n1]}"
    wait_gone "${PID[n1]}" 10 || fail "n1's weftd outlived SIGKILL"
    weftd_in n1 --set "head=$HEAD" --set node_name=n1
    refused_by_node() { grep -q "$1" "$TMP/n1.log" "$TMP/n2.log" "$TMP/n3.log"; }
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

weftd_in head
until_ 40 "the nodes linked to the restarted head" nodes_are \
    "n1=linked n2=linked n3=linked"
for n in n1 n2 n3; do
    until_ 5 "$n linked again" head_is "$n" linked
done
for n in n2 n3; do  # (n1 was restarted meanwhile)
    [ "$(head_of "$n" links)" = 2 ] || fail "$n made $(head_of "$n" links) links"
done
grep -q "link to head $HEAD: the head closed the link; trying again in 1 s" \
    "$TMP/n1.log" || fail "n1 does not log the end of its link"
echo "ok: the head SIGKILLed and back: every node linked again"

# A node SIGKILLed and back.
kill -KILL "${PID[n2]}"
until_ 10 "the head marking n2 gone" nodes_are "n1=linked n2=gone n3=linked"
grep -q "node n2 gone: its link closed" "$TMP/head.log" ||
    fail "the head does not log n2 gone"
weftd_in n2 --set "head=$HEAD" --set node_name=n2
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

# Bad settings stop weftd at start, naming the key.
expect 2 "[cluster] head = 'nocolon': expected HOST:PORT" \
    "$WEFTD" --spool "$TMP/x" --set head=nocolon --check-config
expect 1 "[cluster] node_name: node name has byte 0x2f at 1" \
    "$WEFTD" --listen 127.0.0.1:0 --spool "$TMP/y" --set "head=$HEAD" \
    --set node_name=a/b
expect 1 "[cluster] head = 'h:0': expected HOST:PORT with a port of 1 to 65535" \
    "$WEFTD" --listen 127.0.0.1:0 --spool "$TMP/z" --set head=h:0
echo "ok: bad [cluster] settings named at start"

for n in n1 n2 n3 bad head; do
    kill -TERM "${PID[$n]}"
done
for n in n1 n2 n3 bad head; do
    wait_gone "${PID[$n]}" 15 || fail "$n's weftd did not stop on SIGTERM"
    grep -q "stopped$" "$TMP/$n.log" || fail "$n's weftd did not stop cleanly"
done
# (disowned, their exit statuses are not ours: under the sanitizers
# their reports are in their logs)
if grep -E "Sanitizer|runtime error" "$TMP"/*.log; then
    fail "a weftd's sanitizer report (above)"
fi
echo "PASS"

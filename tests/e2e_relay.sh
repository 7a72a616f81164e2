#!/bin/bash
# e2e_relay.sh - the members a node relays to its head on its link
# (NodeRelay, daemon/ingest/relay.h; issue #34): weft-rawpeer plays a
# node weftd (root, MUNGE over TCP) that relays its members' frames.
#  - a relayed member makes its trace as a client would, owned by the
#    user the node vouches for (not the node's); the archive passes both
#    readers with exactly what was sent;
#  - a member whose link ends without its Goodbye comes back on another
#    link and resumes from what the head holds (HelloAck);
#  - a refused member is the member's: the same link relays another,
#    which completes; a first frame that is not a Hello is refused;
#  - at most max_connections members per link;
#  - a user's process cannot relay: NodeRelay without a NodeHello is
#    refused, and a user's NodeHello already was (e2e_cluster).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: e2e_relay.sh needs root (test users, a node's credential)"
    exit 77
fi
make_user A
cp "$RAWPEER" "$TMP/pub/rawpeer" && chmod 755 "$TMP/pub/rawpeer"
start_weftd --set max_connections=6
[ -n "${MUNGED_PID:-}" ] || fail "no munged: a node proves itself with MUNGE"
chmod 755 "$TMP/munge"

# relay ID MODE TRACE [ARGS]: weft-rawpeer as node n1 relaying member ID
# for user A (then, with THEN_VALID=TRACE2, member ID+1 of TRACE2).
relay() {
    local id=$1
    shift
    env RAWPEER_RELAY="$id" RAWPEER_RELAY_UID="$A_UID" RAWPEER_NODE=n1 \
        ${THEN_VALID:+RAWPEER_THEN_VALID="$THEN_VALID"} \
        timeout 30 "$RAWPEER" "$WEFT_SERVER" "$@"
}

# events TRACE: the archive of complete trace TRACE holds one Enter and
# one Leave on rank 0's thread 0 (otf2-print and the python reader).
events() {
    local archive
    wait_state "$1" complete 30
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >/dev/null ||
        fail "$1: otf2-print rejects $archive"
    echo '{"0.0": {"Enter": 1, "Leave": 1}}' >"$TMP/report.json"
    "$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" >/dev/null ||
        fail "$1: the archive does not hold exactly what was relayed"
}

# 1. A relayed member: its trace is A's.
relay 7 valid "relayed one" || fail "the relayed member did not end well"
events "relayed one"
[ "$(json_get "$TMP/show.json" 'j["uid"]')" = "$A_UID" ] ||
    fail "the relayed trace is uid $(json_get "$TMP/show.json" 'j["uid"]')'s, not A's ($A_UID)"
grep -q "peer node n1 member 7 (pid [0-9]*) trace 'relayed one' rank 0: joined" \
    "$TMP/weftd.log" || fail "the head's log does not name the node and member"
echo "relayed: one member's trace complete, A's, both readers agree"

# 2. The link ends without the member's Goodbye; it comes back on
# another link (as after the node's weftd restarted) and resumes.
relay 11 first-half "relayed resumed" || fail "first half: not acknowledged"
out=$(relay 12 second-half "relayed resumed") || fail "second half: $out"
[ "$out" = "definitions_seq=1 thread0_seq=1" ] ||
    fail "the HelloAck relayed after the link ended says '$out', expected definitions 1 and batch 1 held"
events "relayed resumed"
echo "resumed: a member whose link ended came back on another"

# 3. A refused member does not end the link: undefined-ref is refused
# (its Error relayed, the member closed), then member 22 relays a whole
# member on the same link (RAWPEER_THEN_VALID), which completes.
THEN_VALID="relayed after" expect 0 "EREF: thread 0, batch 1: Enter.region: REGION 5 is not defined" \
    relay 21 undefined-ref "relayed refused"
events "relayed after"
expect 0 "ESTATE: Definitions relayed for member 23, which is not here: a member's first frame is its Hello" \
    relay 23 before-hello "relayed nothing"
out=$(relay 31 relay-many "relayed many" 8) || fail "relay-many: $out"
[ "$(echo "$out" | tail -n 1)" = "2 of 8 refused" ] ||
    fail "8 members on one link with max_connections=6: '$out', expected 2 of 8 refused"
echo "$out" | grep -q "^ELIMIT: node n1 relays 6 members already: max_connections is 6$" ||
    fail "the head does not say why it refused the 7th member: $out"
grep -q "node n1 member 37 refused: node n1 relays 6 members already" "$TMP/weftd.log" ||
    fail "the head does not log why it refused the 7th member"
echo "limits: a refused member leaves the link up; 6 members per link"

# 4. A user's process relaying without a NodeHello: refused.
expect 1 "NodeRelay before Hello" as "$A" env RAWPEER_UNLINKED=1 \
    RAWPEER_RELAY=41 RAWPEER_RELAY_UID=0 WEFT_MUNGE_SOCKET="$MUNGE_SOCKET" \
    timeout 30 "$TMP/pub/rawpeer" "$WEFT_SERVER" valid "posing"
"$WEFT" --catalog "$SPOOL/catalog.db" show posing >/dev/null 2>&1 &&
    fail "a user's process relayed a member"
echo "trust: a user's process cannot relay"
stop_weftd

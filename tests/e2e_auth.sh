#!/bin/bash
# e2e_auth.sh - over TCP a process proves its uid with MUNGE and checks
# that it talks to weftd; the uid a Hello claims is never believed (#15).
# A munged of the test's own (its own key), a real weftd (auth = munge,
# the default), two users made with useradd:
#  - a good credential is accepted (weft-demo: complete, owned by root);
#  - no credential, a Hello claiming another uid, a replayed, an expired
#    and a forged credential are refused with errors naming why;
#  - user B, with A's trace name and launch, gets a trace of B's own:
#    A's trace completes with A's processes only; B cannot claim A's uid;
#  - B holding weftd's address (tests/fakeweftd.py) learns no trace name
#    or command line: the client refuses a server of B's uid, and one
#    that claims weftd's uid but cannot read the credential, also on
#    weftd's own port while weftd is down (#30);
#  - B relaying the client's connection to weftd (tests/relay.py: read,
#    plant, join) is refused at the Auth, which was made for B's port:
#    B reads nothing of the client, plants no trace, takes no rank; a
#    credential B captured and presents later on a connection of its own
#    is refused; a frame injected after the Auth is refused by its MAC
#    (#30);
#  - no munged on the client's side, or on weftd's, is said clearly;
#  - libweft loads libmunge and nettle only for that: it does not link
#    them, and a process traced over the Unix socket never maps them.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root (useradd, setpriv)"
    exit 77
fi
start_munged || fail "munged cannot start (scripts/deps.sh installs munge)"
start_weftd
grep -q "auth = munge: TCP clients prove their uid with MUNGE" \
    "$TMP/weftd.log" || fail "weftd does not say how clients are identified"

# A good credential: the demo (libweft's Auth) is traced, owned by root.
run_demo good
wait_state good complete
"$PY" - "$TMP/show.json" <<'PY' || fail "trace 'good' is not root's"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["uid"] == 0, j
PY
grep -q "authenticated by MUNGE as uid 0" "$TMP/weftd.log" ||
    fail "weftd does not log the authenticated uid"

# Refusals, each with weftd's reason.
refused() { # MODE EXPECTED-MESSAGE
    out=$(timeout 30 "$RAWPEER" "$WEFT_SERVER" "$1" "r-$1") ||
        fail "rawpeer $1: no Error from weftd (exit $?): $out"
    case "$out" in *"$2"*) ;; *) fail "rawpeer $1: '$out' does not say '$2'";; esac
}
refused no-auth "EAUTH: Hello without a MUNGE credential"
refused claim "EAUTH: Hello claims uid 1 but its MUNGE credential is of uid 0"
refused replay "EAUTH: MUNGE credential refused: Replayed credential"
refused expired "EAUTH: MUNGE credential refused: Expired credential"
refused bad-cred "EAUTH: MUNGE credential refused: Invalid credential"
refused rebind "EAUTH: MUNGE credential refused: of uid 0, but it answers another connection's challenge (replayed or relayed)"
refused bad-mac "EAUTH: frame 1: bad MAC (altered or injected)"
refused unsealed "EAUTH: frame 1: bad MAC (altered or injected)"
"$WEFT" --catalog "$SPOOL/catalog.db" list --json >"$TMP/list0.json"
grep -q '"r-' "$TMP/list0.json" && fail "a refused peer left a trace"

# Two users. The rawpeer binary goes where they can run it.
make_user A
make_user B
cp "$RAWPEER" "$TMP/pub/rawpeer" && chmod 755 "$TMP/pub/rawpeer"
cp "$WEFT_SRCDIR/tests/fakeweftd.py" "$TMP/pub/" && chmod 755 "$TMP/pub/fakeweftd.py"
cp "$WEFT_SRCDIR/tests/weftproto.py" "$TMP/pub/" && chmod 644 "$TMP/pub/weftproto.py"
chmod 755 "$TMP/munge"
peer() { # USER ARGS...
    local u=$1
    shift
    (cd "$TMP/pub" && as "$u" ./rawpeer "$WEFT_SERVER" "$@")
}
# A starts rank 0 of 2 of job42 in launch r1; B comes as rank 1 of the
# same name and launch; then A's rank 1.
peer "$A" member job42 --rank 0 --size 2 --run r1 --scenario compute ||
    fail "A's rank 0 was refused"
peer "$B" member job42 --rank 1 --size 2 --run r1 --scenario compute ||
    fail "B's process was refused (it should get a trace of its own)"
peer "$A" member job42 --rank 1 --size 2 --run r1 --scenario compute ||
    fail "A's rank 1 was refused: B took its place"
check_job42() {
    "$WEFT" --catalog "$SPOOL/catalog.db" list --json >"$TMP/list.json" &&
        "$PY" - "$TMP/list.json" "$A_UID" "$B_UID" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
a, b = int(sys.argv[2]), int(sys.argv[3])
mine = [r for r in rows if r["name"] == "job42" and r["uid"] == a]
theirs = [r for r in rows if r["name"] == "job42" and r["uid"] == b]
assert len(mine) == 1 and len(theirs) == 1, rows
assert mine[0]["state"] == "complete", mine
assert mine[0]["members"] == 2 and mine[0]["events"] == 8, mine
assert theirs[0]["state"] == "recording", theirs
PY
}
for _ in $(seq 100); do
    check_job42 2>/dev/null && break
    sleep 0.1
done
check_job42 || fail "A's and B's job42"
out=$(RAWPEER_CLAIM_UID=$A_UID peer "$B" claim job42) ||
    fail "B claiming A's uid was not refused"
case "$out" in
    *"Hello claims uid $A_UID but its MUNGE credential is of uid $B_UID"*) ;;
    *) fail "B claiming A's uid: '$out'";;
esac

# B holds the address the client uses: the client refuses the server
# before it says anything about itself, whether it says it runs as B or
# as weftd's uid (root here), whose credential B cannot read.
cp "$WEFT_SRCDIR/tests/relay.py" "$TMP/pub/" && chmod 755 "$TMP/pub/relay.py"
hold() { # CLAIM_UID EXPECTED [PORT]
    local fake=$TMP/pub/fake-$1${3:+-$3} fake_pid out
    mkdir "$fake" && chown "$B" "$fake"
    (cd "$TMP/pub" && as "$B" /usr/bin/python3 ./fakeweftd.py "$fake/port" \
        "$fake/log" "$MUNGE_SOCKET" "$1" ${3:+"$3"}) 2>"$TMP/fake.err" &
    fake_pid=$!
    for _ in $(seq 100); do [ -s "$fake/port" ] && break; sleep 0.1; done
    [ -s "$fake/port" ] || fail "fakeweftd did not start: $(cat "$TMP/fake.err")"
    out=$(WEFT_SERVER=$(cat "$fake/port") WEFT_TRACE=secret-name WEFT_REQUIRED=1 \
        timeout 60 "$DEMO" -p 1 -t 1 -n 1 2>&1) && fail "traced to a fake weftd: $out"
    case "$out" in
        *"$2"*) ;;
        *) fail "the client did not refuse B's server (uid $1) clearly: $out";;
    esac
    wait "$fake_pid" 2>/dev/null
    grep -q -a -e secret-name -e weft-demo "$fake/log" &&
        fail "the fake weftd learned the trace name or the command line"
    FAKE=$fake
}
hold "$B_UID" "the server runs as uid $B_UID, which weftd never does"
hold 0 "is not weftd: it says it runs as uid 0 but could not read the credential"
[ -s "$FAKE/log" ] || fail "the fake weftd claiming uid 0 saw no Auth"
grep -q "STATUS: *Success" "$FAKE/log.unmunge" &&
    fail "B decoded a credential made for weftd's uid: $(cat "$FAKE/log.unmunge")"

# B relays the client's connection to weftd (the client was pointed at
# B's port): weftd refuses the Auth, made for a connection to B's port,
# so the client never says Hello; B's own Hello and Goodbye as the client
# go nowhere.
relay() { # MODE TRACE [RELAY ARGS...]
    local mode=$1 trace=$2 dir=$TMP/pub/relay-$1 pid out
    shift 2
    mkdir "$dir" && chown "$B" "$dir"
    (cd "$TMP/pub" && as "$B" /usr/bin/python3 ./relay.py "$mode" "$dir/port" \
        "$dir/log" "$WEFT_SERVER" "$@") 2>"$dir.err" &
    pid=$!
    for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
    [ -s "$dir/port" ] || fail "relay.py did not start: $(cat "$dir.err")"
    out=$(WEFT_SERVER=$(cat "$dir/port") WEFT_TRACE=$trace WEFT_REQUIRED=1 \
        timeout 60 "$DEMO" -p 1 -t 1 -n 1 2>&1) && fail "traced through B's relay ($mode): $out"
    RELAY_OUT=$out RELAY_DIR=$dir
    sleep "${RELAY_WAIT:-0.5}"
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    grep -q -a -e "$trace" -e weft-demo "$dir/log" &&
        fail "relay $mode read the trace name or the command line"
    return 0
}
relay read secret-read
case "$RELAY_OUT" in
    *"MUNGE credential refused: of uid 0, but it was made for a connection to $(cat "$RELAY_DIR/port"), not to weftd's $WEFT_SERVER (relayed by another program?)"*) ;;
    *) fail "the client through B's relay did not say why clearly: $RELAY_OUT";;
esac
grep -q "weftd: Error: MUNGE credential refused" "$RELAY_DIR/log.weftd" ||
    fail "weftd did not refuse the relayed Auth: $(cat "$RELAY_DIR/log.weftd")"
relay plant secret-plant --uid 0 --trace planted
grep -q "sent: plant's Hello" "$RELAY_DIR/log.weftd" || fail "the relay did not plant"
# The client's user (root here) starts rank 0 of 2 of "ajob" (launch
# r9); B, relaying the user's next process, tries to be its rank 1 and
# end it; the user's own rank 1 completes it.
timeout 30 "$RAWPEER" "$WEFT_SERVER" member ajob --rank 0 --size 2 --run r9 \
    --scenario compute || fail "rank 0 of ajob was refused"
relay join secret-join --uid 0 --trace ajob --run r9 --rank 1 --size 2
grep -q "sent: join's Hello" "$RELAY_DIR/log.weftd" || fail "the relay did not join"
timeout 30 "$RAWPEER" "$WEFT_SERVER" member ajob --rank 1 --size 2 --run r9 \
    --scenario compute || fail "rank 1 of ajob was refused: B took its place"
# B keeps the Auth of a client and presents it 3 s later on its own
# connection to weftd: another connection's challenge.
RELAY_WAIT=6 relay capture secret-capture --later 3
grep -q "replayed Auth: Error: MUNGE credential refused: of uid 0, but it answers another connection's challenge" \
    "$RELAY_DIR/log.weftd" || fail "a captured credential: $(cat "$RELAY_DIR/log.weftd")"
for _ in $(seq 100); do
    "$WEFT" --catalog "$SPOOL/catalog.db" list --json >"$TMP/list2.json"
    json_get "$TMP/list2.json" '[r["state"] for r in j if r["name"] == "ajob"]' |
        grep -q complete && break
    sleep 0.1
done
"$PY" - "$TMP/list2.json" <<'PY' || fail "B's relay left a mark"
import json, sys
rows = json.load(open(sys.argv[1]))
assert not [r for r in rows if r["name"] == "planted"], rows
assert not [r for r in rows if r["name"].startswith("secret-")], rows
aj = [r for r in rows if r["name"] == "ajob"]
assert len(aj) == 1 and aj[0]["uid"] == 0, aj
assert aj[0]["state"] == "complete" and aj[0]["members"] == 2, aj
assert aj[0]["events"] == 8, aj
PY

# No munged where the client runs: tracing off, saying why.
out=$(WEFT_MUNGE_SOCKET=$TMP/none.sock WEFT_TRACE=nomunge timeout 60 \
    "$DEMO" -p 1 -t 1 -n 1 2>&1) || fail "the demo failed without munged: $out"
case "$out" in
    *"cannot prove who this process is"*"is munged running here?"*) ;;
    *) fail "no munged: '$out'";;
esac

# libweft loads libmunge and nettle only to speak MUNGE over TCP (the
# cases above): a process traced over the Unix socket never maps them.
lib="$WEFT_BUILDDIR/.libs/libweft.so"
if readelf -d "$lib" | grep -E "NEEDED.*(libmunge|libnettle)"; then
    fail "libweft.so links libmunge or nettle: every traced process loads them"
fi
WEFT_SERVER="unix:$SPOOL/weftd.sock" WEFT_TRACE=lazy WEFT_REQUIRED=1 \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
    LD_PRELOAD="$WEFT_BUILDDIR/.libs/libweft-io.so" \
    cat /proc/self/maps >"$TMP/maps" 2>"$TMP/lazy.err" ||
    fail "cat traced over the Unix socket: $(cat "$TMP/lazy.err")"
grep -q "libweft.so" "$TMP/maps" || fail "the traced cat did not load libweft"
if grep -E "libmunge|libnettle" "$TMP/maps"; then
    fail "a process traced over the Unix socket mapped libmunge or nettle"
fi
wait_state lazy complete 30

# weftd is down and B holds its very address, claiming weftd's uid: the
# client, configured as ever, refuses it and says nothing about itself.
stop_weftd
hold 0 "is not weftd: it says it runs as uid 0 but could not read the credential" \
    "${WEFT_SERVER##*:}"
[ "$(cat "$FAKE/port")" = "$WEFT_SERVER" ] || fail "B did not hold weftd's address"

# No munged where weftd runs: it says so at start, and refuses.
SPOOL="$TMP/spool2" "$WEFTD" --listen 127.0.0.1:0 --spool "$TMP/spool2" \
    --address-file "$TMP/addr2" --set munge_socket="$TMP/none.sock" \
    >"$TMP/weftd2.log" 2>&1 &
w2=$!
for _ in $(seq 100); do [ -s "$TMP/addr2" ] && break; sleep 0.1; done
grep -q "auth = munge, but munged does not answer" "$TMP/weftd2.log" ||
    fail "weftd without munged says nothing: $(cat "$TMP/weftd2.log")"
out=$(timeout 30 "$RAWPEER" "$(cat "$TMP/addr2")" valid r2)
case "$out" in
    *"EAUTH: MUNGE credential refused"*) ;;
    *) fail "weftd without munged took a client: '$out'";;
esac
kill -TERM "$w2"
wait "$w2"

echo "PASS: e2e_auth"

# relay - #30 finding 1: BOB gets ALICE's client to connect to his port
# (a mistyped WEFT_SERVER) and relays it to weftd (tests/relay.py), or
# holds an address as if he were weftd (tests/fakeweftd.py). Variants:
#  read     a plain relay: weftd refuses the relayed Auth (made for BOB's
#           port), ALICE's client says so and never sends its Hello;
#  plant    BOB's own Hello as ALICE after her Auth: nothing planted;
#  join     BOB's Hello as rank 1 of ALICE's running 2-rank trace, and a
#           Goodbye "killed by bob": her trace completes exactly;
#  capture  BOB keeps her Auth and presents it 3 s later on a connection
#           of his own: refused (another connection's challenge);
#  hold     BOB's program says it is weftd (his uid, or weftd's): her
#           client refuses it; he cannot decode her credential.
# In no variant does BOB's log hold her trace names or command line.
CASE_ALICE_EXACT=1

relay_dir() { echo "$CASE_TMP/relay-$1"; }

case_attack() {
    local m
    for m in read plant join capture; do
        mkdir -p "$(relay_dir $m)" && chmod 777 "$(relay_dir $m)"
    done
    asbob /usr/bin/python3 ./relay.py read "$(relay_dir read)/port" \
        "$(relay_dir read)/log" "$WEFT_SERVER" &
    asbob /usr/bin/python3 ./relay.py plant "$(relay_dir plant)/port" \
        "$(relay_dir plant)/log" "$WEFT_SERVER" --uid "$ALICE_UID" \
        --trace planted &
    asbob /usr/bin/python3 ./relay.py join "$(relay_dir join)/port" \
        "$(relay_dir join)/log" "$WEFT_SERVER" --uid "$ALICE_UID" \
        --trace alice --run alice-run --rank 1 --size 2 &
    asbob /usr/bin/python3 ./relay.py capture "$(relay_dir capture)/port" \
        "$(relay_dir capture)/log" "$WEFT_SERVER" --later 3 &
    wait
}

# through ADDR NAME: ALICE's one-process weft-demo as trace NAME pointed
# at ADDR; must fail; its output in $CASE_TMP/NAME.out.
through() {
    WEFT_SERVER=$1 WEFT_TRACE=$2 WEFT_REQUIRED=1 WEFT_RUN=$2 timeout 60 \
        bash -c 'cd "$1" && shift && exec "$@"' _ "$PUB" \
        setpriv --reuid="$ALICE" --regid="$(id -g "$ALICE")" --init-groups -- \
        ./weft-demo -p 1 -t 1 -n 10 >"$CASE_TMP/$2.out" 2>&1 &&
        fail "alice traced $2 through $1: $(cat "$CASE_TMP/$2.out")"
    return 0
}

# expect_out NAME TEXT: ALICE's run NAME said TEXT.
expect_out() {
    grep -qF -- "$2" "$CASE_TMP/$1.out" ||
        fail "alice's run $1 did not say '$2': $(cat "$CASE_TMP/$1.out")"
}

case_alice() {
    local m port demo_pid fake
    for m in read plant join capture; do
        for _ in $(seq 100); do [ -s "$(relay_dir $m)/port" ] && break; sleep 0.1; done
        [ -s "$(relay_dir $m)/port" ] || fail "relay $m did not start"
    done
    # Her real run, as rank 0 and 1 of launch alice-run, meanwhile.
    WEFT_RUN=alice-run alice_demo alice &
    demo_pid=$!
    sleep 1
    through "$(cat "$(relay_dir read)/port")" secret-read
    port=$(cat "$(relay_dir read)/port")
    expect_out secret-read "it was made for a connection to $port, not to weftd's $WEFT_SERVER (relayed by another program?)"
    through "$(cat "$(relay_dir plant)/port")" secret-plant
    expect_out secret-plant "MUNGE credential refused"
    through "$(cat "$(relay_dir join)/port")" secret-join
    expect_out secret-join "MUNGE credential refused"
    through "$(cat "$(relay_dir capture)/port")" secret-capture
    # BOB holds an address and says he is weftd: as himself, then as
    # weftd's uid (whose credential he cannot read).
    for claim in "$BOB_UID" "$SVC_UID"; do
        fake=$CASE_TMP/fake-$claim
        mkdir -p "$fake" && chmod 777 "$fake"
        asbob /usr/bin/python3 ./fakeweftd.py "$fake/port" "$fake/log" \
            "$MUNGE_SOCKET" "$claim" &
        for _ in $(seq 100); do [ -s "$fake/port" ] && break; sleep 0.1; done
        through "$(cat "$fake/port")" "secret-hold-$claim"
        wait $!
    done
    expect_out "secret-hold-$BOB_UID" "the server runs as uid $BOB_UID, which weftd never does"
    expect_out "secret-hold-$SVC_UID" "is not weftd: it says it runs as uid $SVC_UID"
    wait "$demo_pid"
}

case_check() {
    local f out
    sleep 4 # the captured credential is presented 3 s after it was taken
    for f in "$CASE_TMP"/relay-*/log "$CASE_TMP"/fake-*/log; do
        [ -f "$f" ] || continue
        grep -q -a -e secret- -e weft-demo -e alice-run "$f" &&
            fail "bob read alice's trace name or command line ($f)"
    done
    grep -q "weftd: Error: MUNGE credential refused" "$(relay_dir read)/log.weftd" ||
        fail "weftd did not refuse the relayed Auth: $(cat "$(relay_dir read)/log.weftd")"
    grep -q "replayed Auth: Error: MUNGE credential refused: .*answers another connection's challenge" \
        "$(relay_dir capture)/log.weftd" ||
        fail "the captured credential: $(cat "$(relay_dir capture)/log.weftd")"
    grep -q "STATUS: *Success" "$CASE_TMP/fake-$SVC_UID/log.unmunge" &&
        fail "bob decoded alice's credential made for weftd's uid"
    out=$(asalice ./weft list 2>&1)
    case "$out" in *planted*|*secret-*) fail "a trace of bob's in alice's list: $out";; esac
    out=$(asalice ./weft show alice --json 2>&1)
    case "$out" in *"killed by bob"*|*partial*) fail "bob ended alice's trace: $out";; esac
    echo "relay: read, plant, join, capture refused at the Auth; hold refused by the client"
}

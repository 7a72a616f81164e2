# tree-join - a second user speaking the process tree protocol (#32):
# ALICE runs `weft run -- sh -c '...'` (a tree: sh and the programs it
# starts are members of one trace, weftd waiting for the children a
# member's Goodbye names). BOB learns her tree's id (here she leaves it
# in a file: the worst case) and sends, as 20 processes, Hellos of that
# tree and trace name, one claiming to be its root, with Goodbyes naming
# her shell and pid 1 as children still running, and an exec. weftd
# keys trees by their owner, so BOB's processes make a trace of his own:
# ALICE's is complete with exactly her 3 members as soon as her shell
# ends (not after abort_grace_period), and shows nothing of BOB's.
CASE_WEFTD_CONF="
abort_grace_period = 60
"
CASE_ATTACK_SECONDS=60

case_attack() {
    local run kids i
    for i in $(seq $((600 * TIME_SCALE))); do
        [ -s "$CASE_TMP/tree" ] && break
        sleep 0.1
    done
    run=$(cat "$CASE_TMP/tree") || { echo "no tree id from alice"; return; }
    kids="$(cat "$CASE_TMP/sh.pid"),1"
    for i in $(seq 0 19); do
        RAWPEER_RUN=$run RAWPEER_ROOT=$((i == 0)) RAWPEER_EXEC=$((i % 2)) \
            RAWPEER_CHILDREN=$kids RAWPEER_PID=$((100000 + i)) \
            asbob ./weft-rawpeer "unix:$SOCK" tree-join alicetree \
            >>"$CASE_TMP/rawpeer.out" 2>&1 &
    done
    wait
    echo "bob's 20 tree members sent (run $run, children $kids)"
}

case_alice() {
    local t0=$SECONDS
    alice_demo alice || return
    # Her tree of 3 members (sh, sleep, true): the shell publishes its
    # pid and tree id, gives BOB 3 s, ends with a program.
    WEFT_LIBDIR=$PUB/lib \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        timeout 120 bash -c 'cd "$1" && shift && exec "$@"' _ "$PUB" \
        setpriv --reuid="$ALICE" --regid="$(id -g "$ALICE")" --init-groups -- \
        ./weft run --trace alicetree -- sh -c "echo \$\$ >$CASE_TMP/sh.pid;
            echo \$WEFT_TREE >$CASE_TMP/tree; sleep 3; /bin/true" >"$CASE_TMP/alicetree.out" 2>&1 || return
    echo "alice's tree ran in $((SECONDS - t0)) s"
}

case_check() {
    local state members t0=$SECONDS
    state=$(trace_ended "$ALICE" alicetree)
    [ "$state" = complete ] ||
        fail "alice's tree trace is ${state:-not in her catalog}, not complete (bob named her shell as his child)"
    [ $((SECONDS - t0)) -le $((20 * TIME_SCALE)) ] ||
        fail "alice's tree trace took $((SECONDS - t0)) s to complete: it waited for bob's children"
    members=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["members"])' \
              "$CASE_TMP/$ALICE-alicetree.json")
    [ "$members" = 3 ] ||
        fail "alice's tree trace has $members members, not her 3 (sh, sleep, true): bob's joined it"
    grep -q rawpeer "$CASE_TMP/$ALICE-alicetree.json" &&
        fail "alice's tree trace names bob's host 'rawpeer'"
    state=$(asbob ./weft show alicetree --json 2>/dev/null |
            "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
    echo "alice's tree: complete, $members members; bob's own alicetree: ${state:-none}"
}

# admin-reserve - #30 findings 2 and 5 ("a reserve no user can take"):
# BOB holds every connection slot on weftd's Unix socket (max_connections
# = max_connections_per_user = 48: 200 connections that never send a
# byte, a new one for each refused), so that every other user's `weft`
# is refused. Root and admin_group's members still get answers, from
# reserved_connections (4): root's status question (ask_status.py: root's
# own `weft status` reads the status file) and the `weft list` of ADMIN,
# made a member of admin_group while weftd runs: refused until SIGHUP
# (weftd looks the group up at start and on SIGHUP only, never per
# connection), answered after. Once BOB's connections are gone ALICE
# traces her program.
ADMG="wt$$-admg"
ADMG=${ADMG:0:31}
CASE_WEFTD_CONF="
max_connections = 48
max_connections_per_user = 48
reserved_connections = 4
admin_group = $ADMG
"
CASE_ATTACK_SECONDS=60

case_attack() {
    RAWPEER_COUNT=200 RAWPEER_SECONDS=15 asbob prlimit --nofile=1024 \
        ./weft-rawpeer "unix:$SOCK" hold-open >/dev/null
}

# bob_lists: 0 if BOB's `weft list` answers.
bob_lists() { asbob ./weft list >"$CASE_TMP/bob.out" 2>&1; }

case_alice() {
    local i admin out=$CASE_TMP/admin.out
    for i in $(seq 100); do
        bob_lists || break
        sleep 0.1
    done
    # refused: an Error naming the limit, or, had weftd closed before
    # the query was written, a broken pipe
    ! bob_lists || fail "bob did not take every slot"
    "$PY" "$PUB/ask_status.py" "$SOCK" >"$CASE_TMP/root.out" ||
        fail "root's status was refused while bob holds every slot: $(cat "$CASE_TMP/root.out")"
    make_user ADMIN
    admin=$ADMIN
    groupadd "$ADMG" && usermod -a -G "$ADMG" "$admin" ||
        fail "cannot make group $ADMG"
    (cd "$PUB" && as "$admin" ./weft list) >"$out" 2>&1 &&
        fail "admin_group's new member was answered before SIGHUP (a group lookup per connection?)"
    kill -HUP "$WEFTD_PID"
    for i in $(seq 50); do
        grep -q "admin_group $ADMG (gid" "$TMP/weftd.log" && break
        sleep 0.1
    done
    (cd "$PUB" && as "$admin" ./weft list) >"$out" 2>&1 ||
        fail "admin_group's member was refused while bob holds every slot: $(cat "$out")"
    echo "root's status and an admin's weft list answered while bob held every slot"
    userdel "$admin"
    groupdel "$ADMG"
    for i in $(seq 400); do
        bob_lists && break
        sleep 0.1
    done
    bob_lists || fail "bob's slots were not freed: $(cat "$CASE_TMP/bob.out")"
    alice_demo
}

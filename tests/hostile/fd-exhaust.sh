# fd-exhaust - #30 finding 2: BOB says Hello as a new process of one big
# trace and hangs up, 3000 times, over the Unix socket. On b28adc0 every
# such member kept its journal open until its trace converted (19 500
# took all 20 000 fds in 7.4 s, ALICE's TCP clients were refused) and a
# restart reopened them all. Now BOB is refused at max_members_per_user,
# a journal whose process hung up is closed once written, weftd's fds
# stay few, and a restart recovers BOB's members without opening their
# journals for good.
CASE_WEFTD_CONF="
max_members_per_user = 400
max_open_journals = 16
"
CASE_FDS=120
CASE_ATTACK_SECONDS=120

case_attack() {
    RAWPEER_COUNT=3000 asbob prlimit --nofile=4096 \
        ./weft-rawpeer "unix:$SOCK" hello-hangup bobflood
}

case_check() {
    local t0 ms fds limit
    grep -q "accepted" "$CASE_TMP/attack.out" ||
        fail "bob's hello-hangup did not finish: $(cat "$CASE_TMP/attack.out")"
    grep -q "max_members_per_user is 400" "$CASE_TMP/attack.out" ||
        fail "bob was not refused at max_members_per_user: $(cat "$CASE_TMP/attack.out")"
    fds=$(weftd_fds)
    [ "$fds" -le 60 ] || fail "weftd holds $fds fds after bob's $((400)) members hung up"
    echo "after the attack weftd holds $fds fds"
    # A restart recovers bob's 400 members (their trace still records)
    # without keeping their journals open.
    limit=5
    kill -TERM "$WEFTD_PID"
    wait_gone "$WEFTD_PID" $((limit + 2)) || fail "weftd did not stop on SIGTERM"
    wait "$WEFTD_PID"
    t0=$(date +%s%N)
    start_case_weftd
    ms=$((($(date +%s%N) - t0) / 1000000))
    fds=$(weftd_fds)
    [ "$fds" -le 60 ] ||
        fail "after a restart weftd holds $fds fds (bob's recovered journals open?)"
    grep -q "bobflood" "$TMP/weftd.log" || true
    echo "restart: listening after $ms ms with $fds fds, bob's members recovered"
    timeout 10 bash -c 'cd "$1" && shift && exec "$@"' _ "$PUB" \
        setpriv --reuid="$BOB" --regid="$(id -g "$BOB")" --init-groups -- \
        ./weft list >"$CASE_TMP/boblist.out" 2>&1 ||
        fail "bob's weft list failed after the restart: $(cat "$CASE_TMP/boblist.out")"
    grep -q bobflood "$CASE_TMP/boblist.out" ||
        fail "bob's recovered trace is not listed: $(cat "$CASE_TMP/boblist.out")"
}

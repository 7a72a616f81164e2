# fd-spin - #30 finding 2's end: out of file descriptors, weftd's loop
# spun on a failing accept (96 661 in 2 s, 536 M log lines), ignored
# SIGTERM, and only SIGKILL ended it. Here weftd runs with 200 file
# descriptors (RLIMIT_NOFILE), BOB says Hello and hangs up as 600
# processes (on b28adc0 each kept its journal open: that alone is more
# than the limit), then holds 300 idle connections on the Unix socket.
# weftd must keep its descriptors (a journal is closed once its process
# hung up; Unix connections count for their uid from accept, at
# max_connections_per_user), not spin (its CPU time over 3 s of BOB
# holding stays low), serve ALICE meanwhile, and stop on SIGTERM within
# shutdown_timeout while BOB still holds. (EMFILE on accept itself, with
# libuv's spare descriptor gone, is test_fdguard's: the listener pauses.)
CASE_WEFTD_CONF="
max_members_per_user = 1000
max_connections_per_user = 50
max_open_journals = 16
"
CASE_FDS=200
CASE_ATTACK_SECONDS=90

# As the driver's, with RLIMIT_NOFILE 200 (soft and hard) for weftd.
start_case_weftd() {
    local flags=()
    mapfile -d '' flags < <(conf_flags "$BASE_CONF"; conf_flags "${CASE_WEFTD_CONF:-}")
    rm -f "$CASE_TMP/addr"
    (cd "$PUB" && exec prlimit --nofile=200:200 setpriv --reuid="$SVC" \
        --regid="$(id -g "$SVC")" --init-groups -- ./weftd \
        --address-file "$CASE_TMP/addr" "${flags[@]}") >>"$TMP/weftd.log" 2>&1 &
    WEFTD_PID=$!
    for _ in $(seq 100); do
        [ -s "$CASE_TMP/addr" ] && [ -S "$SOCK" ] && break
        kill -0 "$WEFTD_PID" 2>/dev/null || fail "weftd exited at start"
        sleep 0.1
    done
    [ -s "$CASE_TMP/addr" ] || fail "weftd did not start listening within 10 s"
    WEFT_SERVER=$(cat "$CASE_TMP/addr")
    export WEFT_SERVER
}

# cpu_ticks: weftd's user + system time, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$WEFTD_PID/stat"; }

# hold: BOB holds 300 idle Unix connections (opened once each), in the
# background, for 40 s.
hold() {
    (RAWPEER_COUNT=300 RAWPEER_ONCE=1 RAWPEER_SECONDS=40 asbob \
        prlimit --nofile=4096 ./weft-rawpeer "unix:$SOCK" hold-open \
        >>"$CASE_TMP/hold.out" 2>&1 &)
    sleep 2
}

case_attack() {
    RAWPEER_COUNT=600 asbob prlimit --nofile=4096 \
        ./weft-rawpeer "unix:$SOCK" hello-hangup bobfds
}

case_alice() {
    local c0 c1 hz
    sleep 8 # bob's 600 Hellos
    hold
    c0=$(cpu_ticks)
    sleep 3
    c1=$(cpu_ticks)
    hz=$(getconf CLK_TCK)
    echo "bob holding: weftd used $(((c1 - c0) * 1000 / hz)) ms of CPU in 3 s, $(weftd_fds) fds" |
        tee "$CASE_TMP/cpu.out"
    [ $((c1 - c0)) -le $((hz / 2)) ] ||
        { echo "weftd spun: $(((c1 - c0) * 1000 / hz)) ms of CPU in 3 s"; return 1; }
    alice_demo alice
}

case_check() {
    local t0
    grep -q "max_connections_per_user is 50" "$TMP/weftd.log" ||
        fail "bob's idle Unix connections were not bounded per uid"
    hold
    t0=$(date +%s)
    kill -TERM "$WEFTD_PID"
    wait_gone "$WEFTD_PID" 7 ||
        fail "weftd did not stop within shutdown_timeout (5 s) + 2 s of SIGTERM while bob held it"
    wait "$WEFTD_PID"
    echo "bob holding, weftd stopped $(($(date +%s) - t0)) s after SIGTERM"
    pkill -KILL -u "$BOB"
    start_case_weftd # for the driver's own stop
}

# fd-spin - #30 finding 2's end: out of file descriptors, weftd's loop
# spun on a failing accept (96 661 in 2 s, 536 M log lines), ignored
# SIGTERM, and only SIGKILL ended it. Here weftd's fd limit is lowered to
# 200 (prlimit) and BOB holds 400 connections on the Unix socket
# (max_connections_per_user raised so that only the fd limit stops him):
# accept fails with EMFILE. weftd must pause accepting instead of
# spinning (its CPU time over 3 s of EMFILE stays low), recover by itself
# once BOB is gone (ALICE's run then completes), and stop on SIGTERM
# within shutdown_timeout while out of descriptors.
CASE_WEFTD_CONF="
max_connections_per_user = 1000
"
CASE_ATTACK_SECONDS=60

# cpu_ticks: weftd's user + system time, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$WEFTD_PID/stat"; }

# emfile_attack: lowers weftd's fd limit, BOB holds 400 Unix connections
# in the background; returns once weftd says it stopped accepting.
emfile_attack() {
    local before
    before=$(grep -c "not accepting" "$TMP/weftd.log")
    prlimit --pid "$WEFTD_PID" --nofile=200:200 || fail "prlimit failed"
    (RAWPEER_COUNT=400 RAWPEER_SECONDS=40 asbob prlimit --nofile=4096 \
        ./weft-rawpeer "unix:$SOCK" hold-open >>"$CASE_TMP/hold.out" 2>&1 &)
    for _ in $(seq 100); do
        [ "$(grep -c "not accepting" "$TMP/weftd.log")" -gt "$before" ] &&
            return 0
        sleep 0.1
    done
    fail "weftd never ran out of descriptors (fds: $(weftd_fds))"
}

case_attack() { :; }

case_alice() {
    local c0 c1 hz
    emfile_attack
    c0=$(cpu_ticks)
    sleep 3
    c1=$(cpu_ticks)
    hz=$(getconf CLK_TCK)
    echo "weftd used $(((c1 - c0) * 1000 / hz)) ms of CPU in 3 s out of descriptors (fds $(weftd_fds))"
    [ $((c1 - c0)) -le $((hz / 2)) ] ||
        { echo "weftd spun: $(((c1 - c0) * 1000 / hz)) ms of CPU in 3 s"; return 1; }
    # BOB stops: weftd serves again by itself
    pkill -KILL -u "$BOB"
    sleep 1
    alice_demo alice
}

case_check() {
    local t0 lines
    lines=$(grep -c "accept" "$TMP/weftd.log")
    [ "$lines" -le 100 ] || fail "weftd logged $lines lines about accept"
    # SIGTERM while out of descriptors: stops within shutdown_timeout
    emfile_attack
    t0=$(date +%s)
    kill -TERM "$WEFTD_PID"
    wait_gone "$WEFTD_PID" 7 ||
        fail "weftd out of descriptors did not stop within shutdown_timeout (5 s) + 2 s of SIGTERM"
    wait "$WEFTD_PID"
    echo "out of descriptors, weftd stopped $(($(date +%s) - t0)) s after SIGTERM"
    pkill -KILL -u "$BOB"
    start_case_weftd # for the driver's own stop
}

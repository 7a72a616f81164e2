#!/bin/bash
# e2e_hostile.sh - the adversary suite (#30): every attack a hostile
# second user made on a shared weftd, replayed against a weftd with small
# limits, while an ordinary user traces a program as usual.
#
# As under the systemd unit, weftd runs as a service user of its own
# (SVC) with a munged of the test's own; ALICE and BOB are ordinary users
# (useradd). For each case file tests/hostile/NAME.sh (all of them, or
# those named in $HOSTILE_CASES), in a subshell of its own:
#  1. weftd starts as SVC on a free loopback port with a fresh spool, the
#     base limits below and the case's own (CASE_WEFTD_CONF: "key = value"
#     lines, given to weftd as --set key=value);
#  2. the case's attack runs as BOB (case_attack, in the background),
#     and a second later ALICE traces weft-demo over TCP (MUNGE) as any
#     user would (case_alice replaces that where the attack needs her
#     client elsewhere);
#  3. then: ALICE's trace is complete and holds exactly what she recorded
#     (otf2-print -Werror and the otf2 Python module), her `weft list`
#     answers, weftd's RSS and open fds stayed under CASE_RSS_MB and
#     CASE_FDS the whole time (sampled every 0.1 s), the case's own
#     checks hold (case_check), and after BOB's processes are gone weftd
#     stops on SIGTERM within shutdown_timeout (+ 2 s).
# A case prints what it measured; the driver prints one line per case.
#
# A case file defines (see tests/hostile/baseline.sh):
#   CASE_WEFTD_CONF  extra weftd.conf lines (key = value)
#   case_attack      the attack: run commands as BOB with `asbob CMD...`;
#                    bounded in time (CASE_ATTACK_SECONDS, default 60,
#                    then it is killed)
#   case_alice       optional: ALICE's run (it must exit 0); the default
#                    is alice_demo, whose trace the driver then checks
#                    with alice_exact unless the case sets CASE_ALICE_EXACT=0
#   case_check       optional: more assertions afterwards
#   CASE_RSS_MB, CASE_FDS  optional bounds (defaults 200 and 300)
#   CASE_SPOOL_MB    optional: the spool is a tmpfs of that many MiB
# and may use: $WEFT_SERVER (weftd's TCP address), $SOCK (its Unix
# socket), $PUB (weftd, weft, weft-demo, weft-rawpeer and tests/*.py,
# runnable by all; libweft and the pthread and I/O recorders in $PUB/lib), $SPOOL (weftd's), $CASE_TMP (a directory of the case,
# writable by all), $ALICE, $BOB, $SVC (user names, uids in ${ALICE}_UID
# style: $ALICE_UID, $BOB_UID, $SVC_UID), $WEFTD_PID; functions fail,
# asbob, asalice, weftd_rss_mb, weftd_fds, alice_demo, alice_exact,
# bob_fill, bob_fill_ended, trace_ended;
# $TIME_SCALE (3 when built with sanitizers, else 1) for waits.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root (useradd, setpriv)"
    exit 77
fi
start_munged || fail "munged cannot start (scripts/deps.sh installs munge)"
make_user SVC
make_user ALICE
make_user BOB
PUB=$TMP/pub
mkdir -p "$PUB/lib"
# A program libtool built against the shared libweft is a wrapper script
# of the build tree: the users run the program itself, with the library
# beside it.
for p in "$WEFTD" "$WEFT" "$WEFT_CLI" "$DEMO" "$RAWPEER"; do
    real="$(dirname "$p")/.libs/$(basename "$p")"
    [ -x "$real" ] && p=$real
    cp "$p" "$PUB/" || fail "cannot copy $p"
done
cp -P "$WEFT_BUILDDIR"/.libs/libweft.so* "$WEFT_BUILDDIR"/.libs/libweft-pthread.so* \
    "$WEFT_BUILDDIR"/.libs/libweft-io.so* "$PUB/lib/" 2>/dev/null
cp "$WEFT_SRCDIR"/tests/*.py "$PUB/"
chmod -R a+rX "$PUB" "$TMP/munge"
export LD_LIBRARY_PATH="$PUB/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset WEFT_TRACE WEFT_RUN PMIX_NAMESPACE OMPI_MCA_ess_base_jobid \
      SLURM_JOB_ID SLURM_STEP_ID SLURM_STEPID SLURM_PROCID SLURM_NTASKS \
      SLURM_RESTART_COUNT PBS_JOBID LSB_JOBID WEFT_AUTH
export WEFT_DAEMON_USER=$SVC
# Built with AddressSanitizer, every allocation has red zones and freed
# memory waits in a quarantine: the bounds on RSS are for weftd as
# released, so a sanitized weftd gets a small quarantine and three times
# the bound.
# It is also slower: waits for conversions are TIME_SCALE times longer.
RSS_SCALE=1 TIME_SCALE=1
if [ -n "${WEFT_SAN_PRELOAD:-}" ]; then
    RSS_SCALE=3 TIME_SCALE=3
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
fi

# The limits every case starts from: a small weftd, so that exhausting
# it takes seconds.
BASE_CONF="
log_level = info
grace_period = 60
shutdown_timeout = 5
max_connections = 512
max_connections_per_user = 256
max_buffered = 16777216
max_traces_per_user = 32
"

asbob() { (cd "$PUB" && as "$BOB" "$@"); }
asalice() { (cd "$PUB" && as "$ALICE" "$@"); }
weftd_rss_mb() { awk '/^VmRSS:/ {print int($2 / 1024)}' "/proc/$WEFTD_PID/status" 2>/dev/null; }
# weftd_fds: weftd's open descriptors below its soft RLIMIT_NOFILE (a
# descriptor numbered above it was inherited, not opened by weftd: a
# weftd at its limit under fd-spin counted 201 of 200 so, once).
weftd_fds() {
    local max
    max=$(awk '/^Max open files/ {print $4}' "/proc/$WEFTD_PID/limits" 2>/dev/null)
    ls "/proc/$WEFTD_PID/fd" 2>/dev/null |
        awk -v m="${max:-unlimited}" 'm == "unlimited" || $1 + 0 < m + 0' | wc -l
}

# conf_flags TEXT: "key = value" lines as --set key=value flags.
conf_flags() {
    local line
    while IFS= read -r line; do
        line=${line%%[#;]*}
        [[ "$line" =~ ^[[:space:]]*([A-Za-z0-9_]+)[[:space:]]*=[[:space:]]*(.*[^[:space:]])?[[:space:]]*$ ]] ||
            continue
        printf '%s\0' --set "${BASH_REMATCH[1]}=${BASH_REMATCH[2]}"
    done <<<"$1"
}

# start_case_weftd: weftd as SVC with the base and the case's settings.
start_case_weftd() {
    local flags=()
    mapfile -d '' flags < <(conf_flags "$BASE_CONF"; conf_flags "${CASE_WEFTD_CONF:-}")
    rm -f "$CASE_TMP/addr"
    (cd "$PUB" && exec setpriv --reuid="$SVC" --regid="$(id -g "$SVC")" \
        --init-groups -- ./weftd --address-file "$CASE_TMP/addr" "${flags[@]}") \
        >>"$TMP/weftd.log" 2>&1 &
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

# sample_weftd: until weftd ends, its highest RSS (MB) and open fds
# (counted as weftd_fds counts them) in $CASE_TMP/peak ("RSS FDS"),
# sampled every 0.1 s by one process (tests/peak_sampler.py).
sample_weftd() {
    exec "$PY" "$WEFT_SRCDIR/tests/peak_sampler.py" "$WEFTD_PID" "$CASE_TMP/peak"
}

# alice_demo [NAME]: ALICE traces weft-demo (2 processes x 2 threads) as
# trace NAME (default alice), its report in $CASE_TMP/NAME.json; exits
# with weft-demo's status (at most 120 s).
alice_demo() {
    local name=${1:-alice}
    WEFT_TRACE=$name timeout 120 bash -c 'cd "$1" && shift && exec "$@"' _ "$PUB" \
        setpriv --reuid="$ALICE" --regid="$(id -g "$ALICE")" --init-groups -- \
        ./weft-demo -p 2 -t 2 -n 3000 -s 100 --report "$CASE_TMP/$name.json" \
        >"$CASE_TMP/$name.out" 2>&1
}

# bob_fill SECONDS: BOB traces weft-demo writing as fast as four
# processes can (2 threads each) as trace fill, for at most SECONDS.
bob_fill() {
    WEFT_TRACE=fill timeout "$1" bash -c 'cd "$1" && shift && exec "$@"' _ "$PUB" \
        setpriv --reuid="$BOB" --regid="$(id -g "$BOB")" --init-groups -- \
        ./weft-demo -p 4 -t 2 -n 100000000 --report "$CASE_TMP/fill.json" \
        >"$CASE_TMP/fill.out" 2>&1
    echo "bob's weft-demo ended ($?)"
}

# bob_fill_ended: prints the state of BOB's trace fill once it ended
# (complete, partial or failed; what it was after 60 s at most), its
# `weft show --json` in $CASE_TMP/fill-show.json.
bob_fill_ended() {
    local state
    state=$(trace_ended "$BOB" fill)
    cp "$CASE_TMP/$BOB-fill.json" "$CASE_TMP/fill-show.json" 2>/dev/null
    echo "$state"
}

# trace_ended USER TRACE: prints the state of USER's trace TRACE once it
# is no longer recording or converting (what it was after 60 s at most,
# x TIME_SCALE), its `weft show --json` in $CASE_TMP/USER-TRACE.json.
trace_ended() {
    local state= end=$((SECONDS + 60 * TIME_SCALE))
    while [ "$SECONDS" -lt "$end" ]; do
        (cd "$PUB" && as "$1" ./weft show "$2" --json) \
            >"$CASE_TMP/$1-$2.json" 2>/dev/null &&
            state=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["state"])' \
                    "$CASE_TMP/$1-$2.json")
        case "$state" in complete|partial|failed) break ;; esac
        sleep 0.2
    done
    echo "$state"
}

# alice_exact [NAME]: ALICE's trace NAME becomes complete (60 s at most)
# and holds exactly what her weft-demo recorded.
alice_exact() {
    local name=${1:-alice} state= archive end=$((SECONDS + 60 * TIME_SCALE))
    while [ "$SECONDS" -lt "$end" ]; do
        state=$(asalice ./weft show "$name" --json 2>/dev/null |
                "$PY" -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
        [ "$state" = complete ] && break
        sleep 0.1
    done
    [ "$state" = complete ] ||
        fail "alice's trace $name is ${state:-not in her catalog}, not complete; her weft-demo said: $(cat "$CASE_TMP/$name.out")"
    archive=$(asalice ./weft path "$name") || fail "alice: weft path $name failed"
    otf2-print -Werror --silent "$archive" >/dev/null ||
        fail "otf2-print rejects alice's $archive"
    "$PY" "$CHECK_ARCHIVE" "$archive" "$CASE_TMP/$name.json" >/dev/null ||
        fail "alice's $name does not hold exactly what she recorded"
}

# stop_case: BOB's processes end, then weftd must stop on SIGTERM within
# shutdown_timeout (+ 2 s) and exit 0.
stop_case() {
    local rc t0 limit
    pkill -KILL -u "$BOB" 2>/dev/null
    limit=$(conf_flags "$BASE_CONF
${CASE_WEFTD_CONF:-}" | tr '\0' '\n' | sed -n 's/^shutdown_timeout=//p' | tail -n1)
    t0=$(date +%s)
    kill -TERM "$WEFTD_PID" || fail "weftd is not running"
    wait_gone "$WEFTD_PID" $((limit + 2)) ||
        fail "weftd did not stop within shutdown_timeout ($limit s) + 2 s of SIGTERM"
    wait "$WEFTD_PID"
    rc=$?
    WEFTD_PID=
    [ "$rc" -eq 0 ] || fail "weftd exited with status $rc after SIGTERM"
    echo "weftd stopped $(($(date +%s) - t0)) s after SIGTERM"
}

# run_case FILE: one case, in this subshell.
run_case() {
    local file=$1 name attack_pid sampler_pid rc peak rss fds
    name=$(basename "$file" .sh)
    CASE_TMP=$TMP/case-$name
    SPOOL=$CASE_TMP/spool
    SOCK=$SPOOL/weftd.sock
    mkdir -p "$SPOOL" && chmod 777 "$CASE_TMP" && chmod 755 "$SPOOL" &&
        chown "$SVC" "$SPOOL" || fail "cannot make $SPOOL"
    cat >"$CASE_TMP/weftd.conf" <<EOF
[weftd]
listen = 127.0.0.1:0
spool = $SPOOL
munge_socket = $MUNGE_SOCKET
EOF
    chmod 644 "$CASE_TMP/weftd.conf"
    export WEFT_CONFIG=$CASE_TMP/weftd.conf WEFT_SOCKET=$SOCK
    CASE_WEFTD_CONF= CASE_RSS_MB=200 CASE_FDS=300 CASE_ATTACK_SECONDS=60
    CASE_ALICE_EXACT=1 CASE_SPOOL_MB=
    unset -f case_attack case_alice case_check
    # shellcheck disable=SC1090
    . "$file"
    if [ -n "$CASE_SPOOL_MB" ]; then
        mount -t tmpfs -o "size=${CASE_SPOOL_MB}m,mode=755,uid=$(id -u "$SVC")" \
            tmpfs "$SPOOL" || fail "cannot mount a tmpfs on $SPOOL"
    fi
    declare -F case_attack >/dev/null || fail "$file defines no case_attack"
    declare -F case_alice >/dev/null || case_alice() { alice_demo alice; }
    declare -F case_check >/dev/null || case_check() { :; }
    start_case_weftd
    sample_weftd &
    sampler_pid=$!
    (case_attack) >"$CASE_TMP/attack.out" 2>&1 &
    attack_pid=$!
    sleep 1
    case_alice
    rc=$?
    [ "$rc" -eq 0 ] || {
        cat "$CASE_TMP"/*.out >&2
        fail "alice's run exited $rc while $name ran"
    }
    for _ in $(seq $((CASE_ATTACK_SECONDS * 10))); do
        kill -0 "$attack_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$attack_pid" 2>/dev/null && echo "$name: the attack ran its $CASE_ATTACK_SECONDS s"
    pkill -KILL -P "$attack_pid" 2>/dev/null
    kill -KILL "$attack_pid" 2>/dev/null
    wait "$attack_pid" 2>/dev/null
    sed "s/^/  [$name attack] /" "$CASE_TMP/attack.out"
    kill -0 "$WEFTD_PID" 2>/dev/null || fail "weftd died during $name"
    [ "$CASE_ALICE_EXACT" = 0 ] || alice_exact alice
    case_check
    timeout 10 bash -c 'cd "$1" && shift && exec "$@"' _ "$PUB" \
        setpriv --reuid="$ALICE" --regid="$(id -g "$ALICE")" --init-groups -- \
        ./weft list >"$CASE_TMP/list.out" 2>&1 ||
        fail "alice's weft list failed after $name: $(cat "$CASE_TMP/list.out")"
    peak=$(cat "$CASE_TMP/peak" 2>/dev/null)
    rss=${peak% *} fds=${peak#* }
    [ "${rss:-0}" -le $((CASE_RSS_MB * RSS_SCALE)) ] ||
        fail "weftd's RSS reached $rss MB during $name (bound $((CASE_RSS_MB * RSS_SCALE)))"
    [ "${fds:-0}" -le "$CASE_FDS" ] ||
        fail "weftd had $fds fds open during $name (bound $CASE_FDS)"
    stop_case
    kill "$sampler_pid" 2>/dev/null
    wait "$sampler_pid" 2>/dev/null
    echo "ok $name: alice's trace exact, weftd peak RSS ${rss:-?} MB, ${fds:-?} fds"
}

# `make check` runs the cases as five tests, tests/e2e_hostile_N.sh
# (HOSTILE_GROUP=N), so that the harness runs them beside each other and
# beside the other tests instead of as one test of 15 minutes (under
# AddressSanitizer) that ends the suite. The groups take about the same
# time; the last one runs every case the others do not name, so that a
# new case file runs without being listed. Without HOSTILE_GROUP (or
# with HOSTILE_GROUP=all) every case runs; HOSTILE_CASES, when set, names
# the cases to run instead.
HOSTILE_GROUPS=(
    [1]="goodbye-locations admin-reserve spool-fill"
    [2]="big-ids convert-order preauth-stall baseline idle-slots"
    [3]="unread-answers leaks fd-spin"
    [4]="relay question-flood"
)
HOSTILE_LAST_GROUP=5
# hostile_group N: the case files of group N, one a line.
hostile_group() {
    local f n listed
    if [ "$1" != "$HOSTILE_LAST_GROUP" ]; then
        for n in ${HOSTILE_GROUPS[$1]}; do echo "$WEFT_SRCDIR/tests/hostile/$n.sh"; done
        return
    fi
    listed=" ${HOSTILE_GROUPS[*]} "
    for f in "$WEFT_SRCDIR"/tests/hostile/*.sh; do
        n=$(basename "$f" .sh)
        [[ "$listed" == *" $n "* ]] || echo "$f"
    done
}

cases=()
if [ -n "${HOSTILE_CASES:-}" ]; then
    for n in $HOSTILE_CASES; do cases+=("$WEFT_SRCDIR/tests/hostile/$n.sh"); done
elif [ -n "${HOSTILE_GROUP:-}" ] && [ "$HOSTILE_GROUP" != all ]; then
    [[ "$HOSTILE_GROUP" =~ ^[1-9]$ ]] && [ "$HOSTILE_GROUP" -le "$HOSTILE_LAST_GROUP" ] ||
        fail "no hostile group $HOSTILE_GROUP (1 to $HOSTILE_LAST_GROUP, or all)"
    mapfile -t cases < <(hostile_group "$HOSTILE_GROUP")
    [ ${#cases[@]} -gt 0 ] || fail "hostile group $HOSTILE_GROUP has no case"
else
    cases=("$WEFT_SRCDIR"/tests/hostile/*.sh)
fi
# The groups of `make -j check` take turns (a lock in the build tree):
# each case computes as much as a core, and two at once on a busy
# machine made conversions miss their bounded waits; the other tests run
# beside them.
# (A directory, not flock(1), whose descriptor weftd would inherit and
# count; one whose owner is gone is taken over.)
if [ -n "${HOSTILE_GROUP:-}" ] && [ "$HOSTILE_GROUP" != all ]; then
    lock=$WEFT_BUILDDIR/tests/e2e_hostile.lock waited=$SECONDS
    until mkdir "$lock" 2>/dev/null; do
        owner=$(cat "$lock/pid" 2>/dev/null)
        if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then
            rm -rf "$lock"
            continue
        fi
        sleep 1
    done
    echo $$ >"$lock/pid"
    trap 'rm -rf "$lock"; cleanup' EXIT
    echo "group $HOSTILE_GROUP: waited $((SECONDS - waited)) s for the other groups"
fi
failed=()
for f in "${cases[@]}"; do
    [ -f "$f" ] || fail "no case $f"
    echo "=== $(basename "$f" .sh) ==="
    began=$SECONDS
    (
        trap - EXIT
        trap '[ -n "$WEFTD_PID" ] && kill -KILL "$WEFTD_PID" 2>/dev/null
              [ -n "$CASE_SPOOL_MB" ] && umount -l "$SPOOL" 2>/dev/null' EXIT
        run_case "$f"
    ) || failed+=("$(basename "$f" .sh)")
    echo "($(basename "$f" .sh): $((SECONDS - began)) s)"
    pkill -KILL -u "$BOB" 2>/dev/null
    pkill -KILL -u "$ALICE" 2>/dev/null
    pkill -KILL -u "$SVC" 2>/dev/null
    : >"$TMP/weftd.log.case"
    mv "$TMP/weftd.log" "$TMP/weftd.log.case" 2>/dev/null
done
[ ${#failed[@]} -eq 0 ] || fail "cases failed: ${failed[*]}"
echo "all ${#cases[@]} cases held"

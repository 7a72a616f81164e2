# lib.sh - helpers for end-to-end tests: a real weftd on a free loopback
# port with a temporary spool (in a directory under ${TMPDIR:-/tmp}), a
# proxy in front of it, weft-demo runs and their archives checked, and
# commands' exit status and messages, all cleaned up however the test
# ends. Tests source it; WEFT_BUILDDIR and WEFT_SRCDIR come from `make
# check`.

: "${WEFT_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${WEFT_SRCDIR:=$WEFT_BUILDDIR}"
PY=/usr/bin/python3
WEFTD="$WEFT_BUILDDIR/weftd"
WEFT="$WEFT_BUILDDIR/weft"
# weft runs weft-cli for every command but run: beside it, copies too
WEFT_CLI="$WEFT_BUILDDIR/weft-cli"
DEMO="$WEFT_BUILDDIR/weft-demo"
RAWPEER="$WEFT_BUILDDIR/tests/weft-rawpeer"
# The process rawpeer's Hellos name: this script, alive while the test
# runs (a member whose process is gone is not waited for).
export RAWPEER_PID=$$
CHECK_ARCHIVE="$WEFT_SRCDIR/tests/check_archive.py"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/weft-e2e.XXXXXX") || exit 99
SPOOL="$TMP/spool"
WEFTD_PID=
# Ignore any system configuration: tests use only their own settings.
export WEFT_CONFIG="$TMP/none.conf"

# Says why last, after weftd's log, so that a log's tail shows it.
fail() {
    if [ -f "$TMP/weftd.log" ]; then
        echo "--- weftd log (last 40 lines) ---" >&2
        tail -n 40 "$TMP/weftd.log" >&2
    fi
    echo "FAIL: $*" >&2
    exit 1
}

# Background processes a test may leave behind: a weft-demo under
# timeout(1), which leads its own process group (start_demo), and a
# tcpproxy.py (start_proxy).
DEMO_PID=
PROXY_PID=
MUNGED_PID=
TEST_USERS=()
TEST_GROUPS=()
declare -A TEST_GID=()  # user name -> gid, of make_user's users (for as)

cleanup() {
    [ -n "$DEMO_PID" ] && kill -KILL -- "-$DEMO_PID" 2>/dev/null
    [ -n "$PROXY_PID" ] && kill -KILL "$PROXY_PID" 2>/dev/null
    if [ -n "$WEFTD_PID" ] && kill -0 "$WEFTD_PID" 2>/dev/null; then
        kill -CONT "$WEFTD_PID" 2>/dev/null  # a test may have stopped it
        kill -TERM "$WEFTD_PID" 2>/dev/null
        for _ in $(seq 50); do
            kill -0 "$WEFTD_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$WEFTD_PID" 2>/dev/null
    fi
    if [ -n "$MUNGED_PID" ]; then
        kill -TERM "$MUNGED_PID" 2>/dev/null
        wait_gone "$MUNGED_PID" 5 || kill -KILL "$MUNGED_PID" 2>/dev/null
    fi
    for u in "${TEST_USERS[@]}"; do
        pkill -KILL -u "$u" 2>/dev/null
        userdel "$u" 2>/dev/null
    done
    for g in "${TEST_GROUPS[@]}"; do
        groupdel "$g" 2>/dev/null
    done
    # users and groups named like make_user's in a subshell (a case of
    # e2e_hostile.sh), which did not reach these lists
    for u in $(getent passwd | cut -d: -f1 | grep "^wt$$-"); do
        pkill -KILL -u "$u" 2>/dev/null
        userdel "$u" 2>/dev/null
    done
    for g in $(getent group | cut -d: -f1 | grep "^wt$$-"); do
        groupdel "$g" 2>/dev/null
    done
    # (WEFT_TEST_KEEP=1: the files stay, to read after a failure)
    if [ -n "${WEFT_TEST_KEEP:-}" ]; then
        echo "kept: $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# start_proxy CUTS SPARE [--delay MS]: tests/tcpproxy.py in front of
# $WEFT_SERVER (see its usage for CUTS, SPARE and --delay), its messages in
# $TMP/proxy.log; exports PROXY_SERVER, the address clients use.
start_proxy() {
    rm -f "$TMP/proxy.port"
    "$PY" "$WEFT_SRCDIR/tests/tcpproxy.py" "${@:3}" "$TMP/proxy.port" \
        "$WEFT_SERVER" "$1" "$2" >"$TMP/proxy.log" 2>&1 &
    PROXY_PID=$!
    for _ in $(seq 100); do
        [ -s "$TMP/proxy.port" ] && break
        sleep 0.05
    done
    [ -s "$TMP/proxy.port" ] || fail "tcpproxy.py did not start: $(cat "$TMP/proxy.log")"
    PROXY_SERVER="127.0.0.1:$(cat "$TMP/proxy.port")"
    export PROXY_SERVER
}

# stop_proxy: ends the proxy started by start_proxy.
stop_proxy() {
    { kill "$PROXY_PID"; wait "$PROXY_PID"; } 2>/dev/null
    PROXY_PID=
}

# start_weftd [extra weftd args...]: starts weftd on 127.0.0.1 with a port
# the kernel picks, waits until it listens, exports WEFT_SERVER.
# make_user VAR: a Unix user of the test's own (useradd, no home, removed
# with its processes at exit), its name in $VAR and its uid in ${VAR}_UID.
# Root only. $TMP becomes reachable (not listable) by others, so that the
# user can use the test's munged and what the test puts in $TMP/pub.
make_user() {
    local name="wt$$-$1"
    name=${name:0:31}
    useradd -M -N -g nogroup -s /usr/sbin/nologin "$name" ||
        fail "useradd $name failed"
    TEST_USERS+=("$name")
    printf -v "$1" '%s' "$name"
    printf -v "${1}_UID" '%s' "$(id -u "$name")"
    TEST_GID[$name]=$(id -g "$name")
    chmod 711 "$TMP"
    mkdir -p "$TMP/pub" && chmod 755 "$TMP/pub"
}

# make_group VAR USER...: a group of the test's own (groupadd, removed
# at exit) with USERs as members, its name in $VAR. Root only.
make_group() {
    local name="wt$$-$1" var=$1
    name=${name:0:31}
    shift
    groupadd "$name" || fail "groupadd $name failed"
    TEST_GROUPS+=("$name")
    printf -v "$var" '%s' "$name"
    for u in "$@"; do
        usermod -a -G "$name" "$u" || fail "usermod -G $name $u failed"
    done
}

# as USER CMD...: CMD as USER (uid, gid and groups; no shell, no login).
# (The gid of make_user's users is looked up once: tests run `as` in
# loops, and every id(1) is a process more.)
as() {
    local u=$1 g
    shift
    g=${TEST_GID[$u]:-}
    [ -n "$g" ] || g=$(id -g "$u")
    setpriv --reuid="$u" --regid="$g" --init-groups -- "$@"
}

# start_munged: a munged of the test's own (a key of its own; socket,
# pid, seed and log in $TMP/munge), as weftd's default auth (munge) needs
# over TCP; exports WEFT_MUNGE_SOCKET for the clients (start_weftd gives
# it to weftd). Nothing if it runs already; 1 if munged cannot start.
start_munged() {
    local dir="$TMP/munge"
    [ -n "$MUNGED_PID" ] && kill -0 "$MUNGED_PID" 2>/dev/null && return 0
    command -v munged >/dev/null || PATH=$PATH:/usr/sbin
    command -v munged >/dev/null || return 1
    mkdir -p "$dir" && chmod 755 "$dir"
    head -c 1024 /dev/urandom >"$dir/key" && chmod 600 "$dir/key"
    MUNGE_SOCKET="$dir/socket"
    munged -F -f --key-file="$dir/key" --socket="$MUNGE_SOCKET" \
        --pid-file="$dir/pid" --seed-file="$dir/seed" \
        --log-file="$dir/log" >>"$dir/log" 2>&1 &
    MUNGED_PID=$!
    for _ in $(seq 100); do
        if [ -S "$MUNGE_SOCKET" ]; then
            export WEFT_MUNGE_SOCKET="$MUNGE_SOCKET"
            return 0
        fi
        kill -0 "$MUNGED_PID" 2>/dev/null || break
        sleep 0.05
    done
    MUNGED_PID=
    return 1
}

# auth_args: weftd's flags for the test's munged (started if need be), or
# auth = none (and WEFT_AUTH=none for the clients) where there is no
# munged (deps.sh installs it: it is there in CI).
auth_args() {
    if [ "${WEFT_AUTH:-}" = none ] || ! start_munged; then
        export WEFT_AUTH=none
        AUTH_ARGS=(--set auth=none)
    else
        AUTH_ARGS=(--set "munge_socket=$MUNGE_SOCKET")
    fi
}

start_weftd() {
    rm -f "$TMP/addr"
    auth_args
    "$WEFTD" --listen 127.0.0.1:0 --spool "$SPOOL" --address-file "$TMP/addr" \
        --log-level debug "${AUTH_ARGS[@]}" "$@" >>"$TMP/weftd.log" 2>&1 &
    WEFTD_PID=$!
    for _ in $(seq 100); do
        [ -s "$TMP/addr" ] && break
        kill -0 "$WEFTD_PID" 2>/dev/null || fail "weftd exited at start"
        sleep 0.1
    done
    [ -s "$TMP/addr" ] || fail "weftd did not start listening within 10 s"
    WEFT_SERVER=$(cat "$TMP/addr")
    export WEFT_SERVER
}

# start_weftd_at PORT [ARGS...]: weftd on 127.0.0.1:PORT (a restart on
# the port of an earlier one) with $SPOOL, retrying while the killed
# weftd's socket still holds the port.
start_weftd_at() {
    local port=$1
    shift
    auth_args
    for _ in $(seq 30); do
        rm -f "$TMP/addr"
        "$WEFTD" --listen "127.0.0.1:$port" --spool "$SPOOL" \
            --address-file "$TMP/addr" --log-level debug "${AUTH_ARGS[@]}" "$@" \
            >>"$TMP/weftd.log" 2>&1 &
        WEFTD_PID=$!
        for _ in $(seq 100); do
            [ -s "$TMP/addr" ] && return 0
            kill -0 "$WEFTD_PID" 2>/dev/null || break
            sleep 0.05
        done
        { kill -KILL "$WEFTD_PID"; wait "$WEFTD_PID"; } 2>/dev/null
        WEFTD_PID=
        sleep 0.1
    done
    fail "weftd cannot listen on 127.0.0.1:$port again"
}

# wait_gone PID SECONDS: waits until process PID has ended (it may still
# need reaping with wait); returns 1 if it still runs after SECONDS.
wait_gone() {
    for _ in $(seq $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    ! kill -0 "$1" 2>/dev/null
}

# kill_weftd: SIGKILL to weftd, reaped; nothing if it is not running.
kill_weftd() {
    { kill -KILL "$WEFTD_PID"; wait "$WEFTD_PID"; } 2>/dev/null
    WEFTD_PID=
}

# stop_weftd: SIGTERM and wait (bounded); fails if weftd does not exit 0.
stop_weftd() {
    kill -TERM "$WEFTD_PID" || fail "weftd is not running"
    wait_gone "$WEFTD_PID" 10 || fail "weftd did not stop within 10 s"
    wait "$WEFTD_PID"
    rc=$?
    WEFTD_PID=
    [ "$rc" -eq 0 ] || fail "weftd exited with status $rc"
}

# event_counts ANCHOR: per location ("RANK.THREAD") and kind, the events
# otf2-print reads (the C reader), as JSON in check_archive.py's report
# form; events weftd added for nesting (weft::nesting, on the line after
# the event's own) are left out, as check_archive.py does.
event_counts() {
    otf2-print "$1" | "$PY" -c '
import collections, json, sys
counts = collections.defaultdict(collections.Counter)
last = None
for line in sys.stdin:
    w = line.split()
    if len(w) >= 3 and w[0].isupper() and w[1].isdigit():
        loc = int(w[1])
        last = ("%d.%d" % (loc >> 32, loc & 0xFFFFFFFF),
                "".join(p.capitalize() for p in w[0].split("_")))
        counts[last[0]][last[1]] += 1
    elif last and line[:1].isspace() and "weft::nesting" in line:
        counts[last[0]][last[1]] -= 1
json.dump(counts, sys.stdout)'
}

# readers_agree NAME ANCHOR: archive ANCHOR (of trace NAME, for
# messages) accepted by otf2-print -Werror and read alike by the python
# reader (tests/check_archive.py given otf2-print's events per location
# and kind): nesting, time order, the clock range, numberOfEvents. Its
# output goes to $TMP/NAME.print, .counts and .archive.
readers_agree() {
    local name=$1 anchor=$2
    otf2-print -Werror --silent "$anchor" >"$TMP/$name.print" 2>&1 ||
        fail "$name: otf2-print -Werror rejects $anchor: $(head -5 "$TMP/$name.print")"
    event_counts "$anchor" >"$TMP/$name.counts" ||
        fail "$name: otf2-print cannot print $anchor"
    "$PY" "$CHECK_ARCHIVE" "$anchor" "$TMP/$name.counts" \
        >"$TMP/$name.archive" 2>&1 ||
        fail "$name: the python reader reads other events than otf2-print: $(head -20 "$TMP/$name.archive")"
}

# with_recorders LIBDIR COMMAND...: COMMAND with the recorder libraries
# of LIBDIR (WEFT_LIBDIR, LD_LIBRARY_PATH) and, in a sanitized build,
# the sanitizer runtimes preloaded: the programs traced are not built
# with them (ASAN_OPTIONS then spares them the link order and leak
# checks).
with_recorders() {
    local libdir=$1
    shift
    # shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
    local san=(${WEFT_SAN_PRELOAD:-})
    env WEFT_LIBDIR="$libdir" \
        LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
        ${san[@]:+LD_PRELOAD="${san[*]}"} "$@"
}

# expect STATUS PATTERN COMMAND...: COMMAND exits with STATUS and its
# output (stdout and stderr) has a line that contains PATTERN: a fixed
# string, or a basic regular expression where the test set
# EXPECT_GREP=-G. A COMMAND that is not a shell function runs under
# timeout(1) for at most $EXPECT_TIMEOUT seconds (60 unless set).
expect() {
    local want=$1 pattern=$2 out rc
    shift 2
    if [ "$(type -t "$1")" = function ]; then
        out=$("$@" 2>&1)
    else
        out=$(timeout "${EXPECT_TIMEOUT:-60}" "$@" 2>&1)
    fi
    rc=$?
    [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want: $out"
    echo "$out" | grep -q "${EXPECT_GREP:--F}" -- "$pattern" ||
        fail "'$*' says '$out', expected '$pattern'"
}

# json_get FILE EXPR: evaluates a Python expression on the JSON in FILE (j).
json_get() {
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# wait_state TRACE STATE [SECONDS]: waits until the catalog shows TRACE in
# STATE, leaves its `weft show --json` in $TMP/show.json. Fails at once on
# failed or partial, unless WAIT_THROUGH names that state (a conversion
# weftd retries).
wait_state() {
    local state
    for _ in $(seq $((${3:-60} * 10))); do
        if "$WEFT" --catalog "$SPOOL/catalog.db" show "$1" --json \
                >"$TMP/show.json" 2>/dev/null; then
            state=$(json_get "$TMP/show.json" 'j["state"]')
            [ "$state" = "$2" ] && return 0
            case "$state" in failed|partial)
                [ "$2" != "$state" ] && [ "${WAIT_THROUGH:-}" != "$state" ] &&
                fail "trace '$1' is $state: $(json_get "$TMP/show.json" 'j.get("error")')";;
            esac
        fi
        sleep 0.1
    done
    fail "trace '$1' did not reach state $2 (last: ${state:-not in catalog})"
}

# valid_archive TRACE: waits until TRACE is complete, checks its archive
# with otf2-print -Werror and prints the path of its anchor file.
valid_archive() {
    wait_state "$1" complete 60
    local a
    a=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
    [ -f "$a" ] || fail "archive $a missing"
    otf2-print -Werror --silent "$a" >/dev/null || fail "otf2-print rejects $a"
    echo "$a"
}

# start_demo NAME [ENV=VALUE...] [-- DEMO ARGS...]: weft-demo as trace
# NAME in the background, with the environment ENV, reporting to
# $TMP/NAME.json, its output in $TMP/NAME.out. It runs under timeout(1)
# for at most $DEMO_TIMEOUT seconds (120 unless set); DEMO_PID is the pid
# of timeout, which leads the demo's process group.
start_demo() {
    local name=$1 envs=()
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    env WEFT_TRACE="$name" "${envs[@]}" timeout "${DEMO_TIMEOUT:-120}" \
        "$DEMO" "$@" --report "$TMP/$name.json" >"$TMP/$name.out" 2>&1 &
    DEMO_PID=$!
}

# finish_demo NAME: waits for the demo started by start_demo (bounded by
# its timeout), which must succeed.
finish_demo() {
    wait "$DEMO_PID"
    local rc=$?
    DEMO_PID=
    [ "$rc" -eq 0 ] || { cat "$TMP/$1.out" >&2; fail "$1: weft-demo exited with $rc"; }
}

# run_demo NAME [ENV=VALUE...] [-- DEMO ARGS...]: start_demo, then
# finish_demo.
run_demo() {
    start_demo "$@"
    finish_demo "$1"
}

# wait_journal NAME [SIZE [JOURNAL]]: waits (10 s at most) until a journal
# of trace NAME (the file JOURNAL, e.g. rank-0.wj, when given) is larger
# than SIZE (find -size syntax; 0 unless given): the stream is under way.
wait_journal() {
    for _ in $(seq 200); do
        [ -n "$(find "$SPOOL/traces" -path "*/$1-*" -name "${3:-rank-*.wj}" \
                -size "+${2:-0}" 2>/dev/null)" ] && return 0
        sleep 0.05
    done
    fail "$1: nothing journaled within 10 s"
}

# check_pairs NAME N: the archive of trace NAME ($TMP/show.json, see
# wait_state) passes otf2-print -Werror and holds exactly N Enter/Leave
# pairs on each of 2 locations (tests/pairs.h's main thread and worker).
check_pairs() {
    local archive
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
        { cat "$TMP/print.out" >&2; fail "$1: otf2-print -Werror rejects $archive"; }
    echo "{\"0.0\": {\"Enter\": $2, \"Leave\": $2}, \"0.1\": {\"Enter\": $2, \"Leave\": $2}}" \
        >"$TMP/report.json"
    "$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/report.json" >"$TMP/check.out" ||
        fail "$1: the archive does not hold exactly the recorded events"
}

# check_archive NAME REPORT [CHECK_ARCHIVE OPTIONS...]: the archive of
# trace NAME, whose catalog row is in $TMP/show.json (wait_state), passes
# otf2-print, and its events per location and kind are exactly those of
# weft-demo's REPORT (the options: see check_archive.py).
check_archive() {
    local archive
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >/dev/null ||
        fail "$1: otf2-print rejects $archive"
    "$PY" "$CHECK_ARCHIVE" "$archive" "$2" "${@:3}" >/dev/null ||
        fail "$1: the archive does not hold exactly what weft-demo recorded"
}

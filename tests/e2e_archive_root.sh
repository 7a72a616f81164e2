#!/bin/bash
# e2e_archive_root.sh - [cluster] archive_root = DIR: weftd writes the
# OTF2 archives of new traces in DIR/KEY/archive (a shared or parallel
# file system), their journals staying in the spool, where
# SPOOL/traces/KEY/archive is a symbolic link to DIR/KEY/archive:
#  - a relative archive_root, or one weftd cannot create, stops weftd at
#    start with a message naming the key; a missing one is created, 0711
#    (others pass, cannot list);
#  - root's trace, and one converted while it records (streaming): the
#    catalog's archive (weft show --json, weft path) is DIR/KEY/archive/
#    traces.otf2, its files are there, the journals in the spool (none in
#    DIR); the archive holds exactly what weft-demo recorded (otf2-print
#    -Werror and the python reader);
#  - a test user's trace over weftd's Unix socket is the user's: the user
#    reads it (otf2-print as the user), another user does not;
#  - weft rm removes SPOOL/traces/KEY and DIR/KEY, as root (the catalog
#    directly) and as the owner (weft asks weftd);
#  - weftd SIGKILLed while a trace records and restarted: the trace is
#    complete and exact in DIR; restarted again without archive_root, a
#    new trace's archive is in the spool as before, and the old trace's
#    path is unchanged and still readable, and weft rm removes both of
#    its directories.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root (useradd)"
    exit 77
fi
make_user A
make_user B

# What the users run goes where they can run it (the build tree may be in
# a directory only root reaches): the programs themselves, not libtool's
# wrapper scripts, with libweft beside them.
PUB=$TMP/pub
mkdir -p "$PUB/lib"
cp "$WEFT" "$WEFT_CLI" "$WEFT_BUILDDIR/.libs/weft-demo" "$PUB/" ||
    fail "cannot copy the programs to $PUB"
cp -P "$WEFT_BUILDDIR"/.libs/libweft.so* "$PUB/lib/" || fail "cannot copy libweft"
chmod -R a+rX "$PUB"
# ucmd USER CMD...: CMD as USER in $PUB.
ucmd() {
    local u=$1
    shift
    (cd "$PUB" && as "$u" env LD_LIBRARY_PATH="$PUB/lib" "$@")
}
# A's reports go where A may write them.
ADIR=$TMP/a-out
mkdir -m 700 "$ADIR" && chown "$A" "$ADIR"

# The shared file system: its parent exists, archive_root not yet.
mkdir -m 755 "$TMP/shared"
AROOT=$TMP/shared/archives
SOCK=$SPOOL/weftd.sock
# The users' weft reads the configuration to find the catalog (weftd's
# alone) and the socket to ask weftd on.
CONF=$PUB/weftd.conf
printf '[weftd]\nspool = %s\n[cluster]\narchive_root = %s\n' "$SPOOL" "$AROOT" >"$CONF"
CONF_PLAIN=$PUB/plain.conf
printf '[weftd]\nspool = %s\n' "$SPOOL" >"$CONF_PLAIN"
chmod 644 "$CONF" "$CONF_PLAIN"
export WEFT_CONFIG=$CONF
DEMO_TIMEOUT=60

# ---- refusals at start -------------------------------------------------
# refused VALUE TEXT...: weftd with archive_root = VALUE does not start,
# and says each TEXT (fixed strings).
refused() {
    local value=$1 out rc
    shift
    out=$(timeout 10 "$WEFTD" --listen 127.0.0.1:0 --socket '' --spool "$TMP/refused" \
        --set auth=none --set "archive_root=$value" 2>&1)
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] ||
        fail "weftd with archive_root = $value: exit $rc (started?): $out"
    for text in "$@"; do
        echo "$out" | grep -qF -- "$text" ||
            fail "weftd with archive_root = $value says '$out', expected '$text'"
    done
    echo "archive_root = $value: refused (exit $rc): $out"
}
refused rel/dir "[cluster] archive_root = 'rel/dir': expected an absolute path"
touch "$TMP/a-file"
refused "$TMP/a-file/x" archive_root "$TMP/a-file/x"
[ -e "$TMP/a-file/x" ] && fail "weftd made $TMP/a-file/x"
# a root another user owns, or may write in, or a link: refused (that
# user could have weftd write its archives elsewhere)
mkdir "$TMP/users-root" && chown "$A" "$TMP/users-root"
refused "$TMP/users-root" "[cluster] archive_root = $TMP/users-root: owned by uid $A_UID, mode 755: it must be weftd's own"
mkdir -m 777 "$TMP/open-root"
chmod 777 "$TMP/open-root"
refused "$TMP/open-root" "[cluster] archive_root = $TMP/open-root: owned by uid 0, mode 777"
ln -s "$TMP/open-root" "$TMP/link-root"
refused "$TMP/link-root" "[cluster] archive_root = $TMP/link-root: not a directory (a symbolic link?"

# ---- root's traces -------------------------------------------------------
start_weftd --config "$CONF"
PORT=${WEFT_SERVER##*:}
[ -d "$AROOT" ] || fail "weftd did not create archive_root $AROOT"
[ "$(stat -c %a "$AROOT")" = 711 ] ||
    fail "archive_root $AROOT has mode $(stat -c %a "$AROOT"), expected 711"

# in_root NAME: trace NAME, complete ($TMP/show.json, wait_state), has its
# archive in $AROOT/KEY/archive, as the catalog says, and the spool a
# symbolic link to it; no journal in $AROOT. Sets KEY.
in_root() {
    local dir got
    KEY=$(json_get "$TMP/show.json" 'j["key"]')
    dir=$AROOT/$KEY/archive
    got=$(json_get "$TMP/show.json" 'j["archive"]')
    [ "$got" = "$dir/traces.otf2" ] ||
        fail "$1: weft show's archive is $got, expected $dir/traces.otf2"
    got=$(json_get "$TMP/show.json" 'j["path"]')
    [ "$got" = "$dir" ] || fail "$1: weft show's path is $got, expected $dir"
    got=$("$WEFT" path "$1" 2>&1)
    [ "$got" = "$dir/traces.otf2" ] ||
        fail "$1: weft path says $got, expected $dir/traces.otf2"
    [ -L "$SPOOL/traces/$KEY/archive" ] ||
        fail "$1: $SPOOL/traces/$KEY/archive is no symbolic link: $(ls -la "$SPOOL/traces/$KEY" 2>&1)"
    got=$(readlink "$SPOOL/traces/$KEY/archive")
    [ "$got" = "$dir" ] || fail "$1: $SPOOL/traces/$KEY/archive links to $got, expected $dir"
    [ -f "$dir/traces.otf2" ] && [ -f "$dir/traces.def" ] && [ -d "$dir/traces" ] ||
        fail "$1: $dir lacks traces.otf2, traces.def or traces/: $(ls -la "$dir" 2>&1)"
    [ -n "$(find "$dir/traces" -name '*.evt')" ] && [ -n "$(find "$dir/traces" -name '*.def')" ] ||
        fail "$1: no *.evt or *.def in $dir/traces"
    got=$(find "$AROOT/$KEY" -name '*.wj')
    [ -z "$got" ] || fail "$1: journals in archive_root: $got"
}

# exact NAME REPORT: the archive of NAME ($TMP/show.json) passes both
# readers with exactly weft-demo's REPORT, and libweft dropped nothing.
exact() {
    check_archive "$1" "$2"
    [ "$(json_get "$2" 'sum(c["dropped"] for c in j.values())')" -eq 0 ] ||
        fail "$1: libweft dropped records"
}

run_demo root1 -- -p 2 -t 2 -n 500
wait_state root1 complete 30
in_root root1
ROOT1_KEY=$KEY
exact root1 "$TMP/root1.json"
echo "root1: archive in $AROOT/$KEY/archive, exact"

# Streaming: the processes' event files are written in $AROOT while the
# trace records; its journals are in the spool.
start_demo stream -- -p 2 -t 2 -n 20000 -s 100
wait_journal stream
seen=
for _ in $(seq 400); do
    kill -0 "$DEMO_PID" 2>/dev/null || break
    if [ -n "$(find "$AROOT" -path "*/stream-*/archive/traces/*.evt" 2>/dev/null)" ] &&
        kill -0 "$DEMO_PID" 2>/dev/null; then
        seen=1
        break
    fi
    sleep 0.05
done
[ -n "$seen" ] || fail "stream: no event file in $AROOT while weft-demo ran"
got=$(find "$AROOT" -name '*.wj')
[ -z "$got" ] || fail "stream: journals in archive_root while it records: $got"
finish_demo stream
wait_state stream complete 60
in_root stream
exact stream "$TMP/stream.json"
grep -q "trace 'stream' complete: .*(2 of 2 processes written while it recorded)" \
    "$TMP/weftd.log" ||
    fail "stream: weftd does not say it wrote both processes while recording: $(grep "trace 'stream'" "$TMP/weftd.log" | tail -3)"
echo "stream: event files in $AROOT while it recorded, exact"

# ---- a user's trace over the Unix socket ----------------------------------
ucmd "$A" env WEFT_SERVER="unix:$SOCK" WEFT_TRACE=mine timeout 60 ./weft-demo \
    -p 2 -t 2 -n 300 --report "$ADIR/mine.json" >"$TMP/mine.out" 2>&1 ||
    fail "A's weft-demo failed: $(cat "$TMP/mine.out")"
wait_state mine complete 30
[ "$(json_get "$TMP/show.json" 'j["uid"]')" = "$A_UID" ] ||
    fail "mine: owned by uid $(json_get "$TMP/show.json" 'j["uid"]'), expected $A_UID"
in_root mine
MINE_KEY=$KEY
arch=$AROOT/$KEY/archive/traces.otf2
exact mine "$ADIR/mine.json"
got=$(ucmd "$A" ./weft path mine 2>&1)
[ "$got" = "$arch" ] || fail "A's weft path mine: $got, expected $arch"
ucmd "$A" otf2-print -Werror --silent "$arch" >"$TMP/a-print.out" 2>&1 ||
    fail "otf2-print as A fails on A's archive: $(cat "$TMP/a-print.out")"
ucmd "$B" otf2-print --silent "$arch" >/dev/null 2>&1 && fail "B reads A's archive"
ucmd "$B" cat "$AROOT/$KEY/archive/traces.def" >/dev/null 2>&1 &&
    fail "B reads A's definitions file"
ucmd "$B" ls "$AROOT/$KEY" >/dev/null 2>&1 && fail "B lists A's directory in archive_root"
ucmd "$B" ls "$AROOT" >/dev/null 2>&1 && fail "B lists archive_root"
echo "mine: A's, in $AROOT; A reads it, B does not"

# ---- weft rm ----------------------------------------------------------------
out=$(ucmd "$B" ./weft rm mine 2>&1) && fail "B removed A's trace: $out"
case "$out" in *"no trace 'mine'"*) ;; *) fail "B's rm of A's trace said: $out";; esac
[ -d "$AROOT/$MINE_KEY/archive" ] && [ -d "$SPOOL/traces/$MINE_KEY" ] ||
    fail "B's refused weft rm removed A's files"
expect 0 "removed trace 'root1'" "$WEFT" rm root1
[ -e "$SPOOL/traces/$ROOT1_KEY" ] && fail "root's rm left $SPOOL/traces/$ROOT1_KEY"
[ -e "$AROOT/$ROOT1_KEY" ] && fail "root's rm left $AROOT/$ROOT1_KEY"
"$WEFT" show root1 >/dev/null 2>&1 && fail "root1 is still catalogued"
out=$(ucmd "$A" ./weft rm mine 2>&1) || fail "A cannot remove A's trace: $out"
case "$out" in *"removed trace 'mine'"*) ;; *) fail "A's rm said: $out";; esac
[ -e "$SPOOL/traces/$MINE_KEY" ] && fail "A's rm left $SPOOL/traces/$MINE_KEY"
[ -e "$AROOT/$MINE_KEY" ] && fail "A's rm left $AROOT/$MINE_KEY"
"$WEFT" show mine >/dev/null 2>&1 && fail "mine is still catalogued"
wait_state stream complete 5
in_root stream
echo "weft rm: root's and A's traces gone from the spool and $AROOT; stream's kept"

# ---- weftd SIGKILLed while a trace records ---------------------------------
start_demo killed WEFT_STALL_MS=60000 -- -p 2 -t 2 -n 4000 -s 1000
wait_journal killed 4k
kill_weftd
start_weftd_at "$PORT" --config "$CONF"
finish_demo killed
grep -q "reconnected to weftd" "$TMP/killed.out" ||
    fail "killed: weft-demo did not reconnect: $(cat "$TMP/killed.out")"
wait_state killed complete 60
in_root killed
KILLED_KEY=$KEY
exact killed "$TMP/killed.json"
echo "killed: weftd SIGKILLed while it recorded; complete in $AROOT, exact"

# ---- restarted without archive_root ----------------------------------------
stop_weftd
export WEFT_CONFIG=$CONF_PLAIN
start_weftd_at "$PORT" --config "$CONF_PLAIN"
run_demo plain -- -p 2 -t 1 -n 300
wait_state plain complete 30
KEY2=$(json_get "$TMP/show.json" 'j["key"]')
dir=$SPOOL/traces/$KEY2/archive
[ -d "$dir" ] && [ ! -L "$dir" ] || fail "plain: $dir is not a directory: $(ls -la "$SPOOL/traces/$KEY2" 2>&1)"
got=$(json_get "$TMP/show.json" 'j["archive"]')
[ "$got" = "$dir/traces.otf2" ] || fail "plain: weft show's archive is $got, expected $dir/traces.otf2"
[ -e "$AROOT/$KEY2" ] && fail "plain: $AROOT/$KEY2 made without archive_root"
exact plain "$TMP/plain.json"
wait_state killed complete 5
in_root killed
[ "$KEY" = "$KILLED_KEY" ] || fail "killed: its key changed to $KEY"
exact killed "$TMP/killed.json"
echo "without archive_root: a new trace in the spool; killed's archive still in $AROOT, exact"
# ... and weft rm still removes both of its directories.
expect 0 "removed trace 'killed'" "$WEFT" rm killed
[ -e "$SPOOL/traces/$KILLED_KEY" ] && fail "rm killed left $SPOOL/traces/$KILLED_KEY"
[ -e "$AROOT/$KILLED_KEY" ] && fail "rm killed left $AROOT/$KILLED_KEY"
[ -d "$SPOOL/traces/$KEY2/archive" ] || fail "rm killed removed plain's archive"
stop_weftd
echo "weft rm without archive_root: killed gone from the spool and $AROOT"
echo "PASS: e2e_archive_root"

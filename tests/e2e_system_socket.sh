#!/bin/bash
# e2e_system_socket.sh - with no WEFT_SERVER, a traced process reaches
# the system weftd of its host on its Unix socket
# (/var/lib/weft/weftd.sock, where the systemd unit's weftd listens):
# the kernel tells weftd who connects (SO_PEERCRED), so no MUNGE round
# trip and nothing on the network. In a private mount namespace, with a
# tmpfs over /var/lib (the machine's is untouched), a weftd whose spool
# is /var/lib/weft and which listens on TCP too: a tree traced by root and
# one by a second user (useradd) both arrive over the socket, each owned
# by its uid; with the socket gone, the default is 127.0.0.1:7411 (tried
# in a network namespace of its own, where nothing listens).
if [ -z "${WEFT_SYSSOCK_NS:-}" ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
        echo "SKIP: needs root and unshare(1) for a private /var/lib"
        exit 77
    fi
    exec unshare --mount --propagation private \
        env WEFT_SYSSOCK_NS=1 bash "$0" "$@"
fi
mount -t tmpfs -o mode=0755 tmpfs /var/lib ||
    { echo "cannot mount a private /var/lib" >&2; exit 1; }
mkdir -m 0755 /var/lib/weft
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"
SOCK=/var/lib/weft/weftd.sock

SPOOL=/var/lib/weft
start_weftd
[ -S "$SOCK" ] || fail "weftd with spool $SPOOL listens on no $SOCK"
TCP=$WEFT_SERVER
unset WEFT_SERVER

# traced NAME [AS-USER] COMMAND...: COMMAND under weft run as trace NAME
# with no WEFT_SERVER (as AS-USER when it is a test user); it must
# succeed, traced.
traced() {
    local name=$1 run=() rc
    shift
    case $1 in
        wt$$-*) run=(setpriv --reuid="$1" --regid="$(id -g "$1")" --init-groups --)
                shift ;;
    esac
    (cd /tmp && env -u WEFT_SERVER ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} WEFT_DEBUG=1 \
        timeout -s KILL 60 "${run[@]}" "$WEFT" run --trace "$name" -- "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err")
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$TMP/$name.err" >&2; fail "$name: exit status $rc"; }
    grep -q untraced "$TMP/$name.err" &&
        fail "$name: ran untraced: $(cat "$TMP/$name.err")"
    return 0
}

# over_socket NAME UID MEMBERS: trace NAME is complete with MEMBERS
# members, owned by UID, every one of which connected on the socket.
over_socket() {
    local name=$1 uid=$2 n=$3 got
    wait_state "$name" complete 30
    got=$(json_get "$TMP/show.json" 'j["members"]')
    [ "$got" = "$n" ] || fail "$name: $got members, expected $n"
    got=$(json_get "$TMP/show.json" 'j["uid"]')
    [ "$got" = "$uid" ] || fail "$name: owned by uid $got, expected $uid"
    got=$(grep -c "peer unix:pid [0-9]* uid $uid trace '$name' rank [0-9]*: joined" "$TMP/weftd.log")
    [ "$got" = "$n" ] ||
        fail "$name: $got of its $n members joined on the Unix socket"
    grep -q "trace '$name' rank [0-9]*: joined" <(grep -v "peer unix:" "$TMP/weftd.log") &&
        fail "$name: a member joined over TCP"
    valid_archive "$name" >/dev/null
    echo "$name: complete, $n members of uid $uid, all on $SOCK"
}

traced root sh -c 'cat /etc/hostname > /dev/null'
over_socket root 0 2

make_user user
if as "$user" test -x "$WEFT" -a -r "$WEFT_LIBDIR/libweft.so.0"; then
    traced mine "$user" sh -c 'cat /etc/hostname > /dev/null'
    over_socket mine "$user_UID" 2
else
    echo "SKIP (second user): $user cannot run $WEFT and its libraries (the build directory is not readable by others)"
fi

# WEFT_SERVER still wins: over TCP (auth none here).
(cd /tmp && env ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} WEFT_SERVER="$TCP" \
    timeout -s KILL 60 "$WEFT" run --trace tcp -- /bin/cat /etc/hostname \
    >/dev/null 2>"$TMP/tcp.err") || fail "tcp: $(cat "$TMP/tcp.err")"
wait_state tcp complete 30
grep -q "peer 127.0.0.1:[0-9]* trace 'tcp' rank 0: joined" "$TMP/weftd.log" ||
    fail "tcp: WEFT_SERVER=$TCP did not connect over TCP"
echo "tcp: WEFT_SERVER=$TCP is used over the socket"

# No system weftd on this host: the TCP default, said by name.
stop_weftd
rm -f "$SOCK"
out=$(env -u WEFT_SERVER ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
      WEFT_CLOSE_TIMEOUT_MS=100 WEFT_STALL_MS=100 \
      timeout -s KILL 60 unshare --net "$WEFT" run -- /bin/cat /etc/hostname 2>&1 >/dev/null)
echo "$out" | grep -q "cannot reach weftd at 127.0.0.1:7411" ||
    fail "with no socket the default is not 127.0.0.1:7411: $out"
echo "none: without the socket the default is 127.0.0.1:7411"
echo "PASS"

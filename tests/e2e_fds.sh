#!/bin/bash
# e2e_fds.sh - descriptor numbers are the program's: libweft's own (its
# socket to weftd and its sender's wake-up, kept at 1000 and up) move
# out of the way when a traced program names them, and close_range and
# closefrom close around them (client/fdclaim.c, recorders/io/
# closerange.c). Each program does what it does untraced, and its trace
# is complete with its events:
#  - bash's `exec 1000>f1 1001>f2` (bash asks fcntl(1000, F_GETFD) first
#    and, finding a close-on-exec descriptor, took it for its own and
#    undid the redirection: `echo >&1000` went into weftd's socket);
#  - python3: fcntl(F_GETFD) says EBADF for every number from 3 to 1099
#    it did not open, dup2 onto each of them works (and writes reach the
#    file), close says EBADF for numbers it never opened, os.closerange
#    (close_range) and os.closerange then a write, as a daemon does;
#  - the writes go on being recorded after it all: the I/O events of the
#    last file are in the archive.
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"
PY3=/usr/bin/python3

start_weftd --set "socket=$TMP/weftd.sock"
mkdir -p "$TMP/work"

# wrun NAME COMMAND...: COMMAND under weft run as trace NAME over the Unix
# socket (then a process's descriptors are one socket and one eventfd);
# it must succeed within 60 s (a session broken by the program would
# keep it 30 s at its exit), traced.
wrun() {
    local name=$1
    shift
    (cd "$TMP/work" && env ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        WEFT_SERVER="unix:$TMP/weftd.sock" WEFT_CLOSE_TIMEOUT_MS=60000 \
        timeout -s KILL 60 "$WEFT" run --trace "$name" -- "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err")
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$TMP/$name.err" >&2; fail "$name: exit status $rc"; }
    grep -q -e untraced -e "lost the connection" -e "dropped" "$TMP/$name.err" &&
        fail "$name: $(cat "$TMP/$name.err")"
    return 0
}

# complete NAME: trace NAME is complete, every member too, and both
# readers take its archive; its otf2-print output is $TMP/NAME.print.
complete() {
    local a
    wait_state "$1" complete 30
    a=$(json_get "$TMP/show.json" 'j["path"]')/traces.otf2
    readers_agree "$1" "$a"
    otf2-print "$a" >"$TMP/$1.print" 2>&1 || fail "$1: otf2-print"
}

# ---- bash: exec 1000>file -------------------------------------------------
wrun bash bash -c 'exec 1000>f1000 1001>f1001 2000>f2000
    echo one >&1000; echo two >&1001; echo three >&2000
    exec 1000>&- 1001>&- 2000>&-; cat f1000 f1001 f2000'
[ "$(cat "$TMP/work/f1000")" = one ] && [ "$(cat "$TMP/work/f1001")" = two ] &&
    [ "$(cat "$TMP/work/f2000")" = three ] ||
    fail "bash: the redirections to 1000, 1001, 2000 did not write their files: $(head -c 200 "$TMP/work/f1000" "$TMP/work/f1001" | od -c | head -5)"
[ "$(tr '\n' ' ' <"$TMP/bash.out")" = "one two three " ] ||
    fail "bash: cat printed '$(cat "$TMP/bash.out")'"
complete bash
grep -q 'IO_CREATE_HANDLE .*f1000' "$TMP/bash.print" ||
    fail "bash: no handle of f1000 in the archive"
echo "bash: exec 1000>f 1001>f 2000>f wrote its files; trace complete"

# ---- python3: every number from 3 to 1099 ---------------------------------
cat >"$TMP/work/fds.py" <<'EOF'
import errno, fcntl, os, sys
# what it inherited (make's jobserver, say); libweft keeps its own at
# 1000 and up, and those are to look free
mine = set(int(n) for n in os.listdir("/proc/self/fd") if int(n) < 1000)
free = [n for n in range(3, 1100) if n not in mine]
bad = []
for n in free:                      # untraced: closed, every one of them
    try:
        fcntl.fcntl(n, fcntl.F_GETFD)
        bad.append(n)
    except OSError as e:
        if e.errno != errno.EBADF:
            bad.append(n)
if bad:
    sys.exit("F_GETFD found open: %s" % bad[:10])
f = os.open("dup.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for n in free:                      # dup2 onto each, write through it
    if n == f:
        continue
    os.dup2(f, n)
    os.write(n, b"%d\n" % n)
    os.close(n)
os.close(f)
for n in free:                      # closing what is not open: EBADF
    try:
        os.close(n)
        sys.exit("close(%d) succeeded" % n)
    except OSError as e:
        if e.errno != errno.EBADF:
            sys.exit("close(%d): %s" % (n, e))
os.closerange(3, 1 << 20)           # close_range, as a daemon does
g = os.open("after.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(g, b"after\n")
os.close(g)
print(len(free))
EOF
wrun python "$PY3" fds.py
n=$(cat "$TMP/python.out")
[ "$(wc -l <"$TMP/work/dup.txt")" -eq "$n" ] ||
    fail "python: dup.txt has $(wc -l <"$TMP/work/dup.txt") lines, expected $n"
grep -qx 1000 "$TMP/work/dup.txt" && grep -qx 1001 "$TMP/work/dup.txt" ||
    fail "python: the writes through 1000 and 1001 are not in dup.txt"
[ "$(cat "$TMP/work/after.txt")" = after ] || fail "python: after.txt"
complete python
grep -q 'IO_CREATE_HANDLE .*after.txt' "$TMP/python.print" ||
    fail "python: the file opened after os.closerange is not in the archive"
echo "python: $n numbers free, dup2 onto each, close_range; trace complete"

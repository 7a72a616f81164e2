#!/bin/bash
# e2e_exits.sh - nothing recorded is lost at any way out of a process.
# weft-exittest records N pairs on its main thread and N on a worker that
# ended, then ends by returning from main, exit, _exit, _Exit, quick_exit
# or exec (status 7 each): the trace is complete with exactly those
# events. abort: partial ("signal 6"), with the same events (e2e_signal
# has the other signals). exit_group (the system call, which no library
# sees) and SIGKILL: the process cannot say goodbye, and weftd, which
# knows its pid, makes the trace partial within seconds, not after the
# grace period (set to an hour here), naming the rank that did not say
# goodbye. Under weft run: dash's `sh -c` (ends with _exit) and python's
# os._exit give complete traces with their writes.
. "$(dirname "$0")/lib.sh"
EXITTEST="$WEFT_BUILDDIR/tests/weft-exittest"
N=1000
ulimit -c 0
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=0"

# libweft.so exports its API and the wrappers of the calls that end the
# process image (and of posix_spawn, whose launchers go through weft
# run), nothing else; the wrappers without a version (so that they take
# glibc's place).
LIB="$WEFT_BUILDDIR/.libs/libweft.so"
nm -D --defined-only "$LIB" | awk '{print $3}' |
    grep -v -E '^(weft_[A-Za-z0-9_]+@@WEFT_0|weft__[a-z0-9_]+@@WEFT_RECORDER_0|WEFT_0|WEFT_RECORDER_0)$' |
    sort >"$TMP/exports" || true
printf '%s\n' _Exit _exit execl execle execlp execv execve execvp execvpe \
    fexecve posix_spawn posix_spawnp | sort >"$TMP/expected"
diff "$TMP/expected" "$TMP/exports" >&2 ||
    fail "libweft.so exports other than its API and exec.c's wrappers"

start_weftd --grace-period 3600 --set "socket=$TMP/weftd.sock"

for mode in return exit _exit _Exit quick_exit exec; do
    WEFT_TRACE="e2e exit $mode" timeout -s KILL 60 "$EXITTEST" "$mode" $N \
        2>"$TMP/$mode.err"
    rc=$?
    [ "$rc" -eq 7 ] || { cat "$TMP/$mode.err" >&2; fail "$mode: exit status $rc, expected 7"; }
    wait_state "e2e exit $mode" complete 30
    check_pairs "$mode" $N
    echo "$mode: complete, $N pairs on each of 2 locations"
done

WEFT_TRACE="e2e exit abort" timeout -s KILL 60 "$EXITTEST" abort $N 2>"$TMP/abort.err"
rc=$?
[ "$rc" -eq 134 ] || fail "abort: exit status $rc, expected 134"
wait_state "e2e exit abort" partial 30
check_pairs abort $N
echo "abort: partial (SIGABRT), $N pairs on each of 2 locations"

# gone MODE STATUS [SERVER]: the process ends without a goodbye; the
# trace is partial within 10 s of its end, for that reason.
gone() {
    local mode=$1 t0 t1 why
    WEFT_SERVER=${3:-$WEFT_SERVER} WEFT_TRACE="e2e exit $mode" \
        timeout -s KILL 60 "$EXITTEST" "$mode" $N 2>"$TMP/$mode.err"
    rc=$?
    [ "$rc" -eq "$2" ] || { cat "$TMP/$mode.err" >&2; fail "$mode: exit status $rc, expected $2"; }
    t0=$(date +%s.%N)
    wait_state "e2e exit $mode" partial 10
    t1=$(date +%s.%N)
    why=$(json_get "$TMP/show.json" 'j.get("error")')
    case "$why" in
    *"1 of 1 members ended without goodbye (rank 0, pid "*) ;;
    *) fail "$mode: reason '$why'";;
    esac
    grep -q "trace 'e2e exit $mode' rank 0: .*process [0-9]* is gone" \
        "$TMP/weftd.log" || fail "$mode: weftd did not log that the process is gone"
    echo "$mode${3:+ over $3}: partial $(awk "BEGIN { print $t1 - $t0 }") s after the process ended: $why"
}
# Three times: the process may end before weftd read its Hello (which
# waits for MUNGE's decoding), and is watched all the same.
for i in 1 2 3; do
    gone exit_group 7
    "$WEFT" --catalog "$SPOOL/catalog.db" rm "e2e exit exit_group" >/dev/null ||
        fail "weft rm 'e2e exit exit_group' ($i)"
done
gone kill 137
"$WEFT" --catalog "$SPOOL/catalog.db" rm "e2e exit kill" >/dev/null ||
    fail "weft rm 'e2e exit kill'"
gone kill 137 "unix:$TMP/weftd.sock"

# Under weft run (the default recorders, libweft-io among them): dash
# ends `sh -c` with _exit, python's os._exit is _exit. Each trace is
# complete with its one write.
# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})
# wrun NAME STATUS FILE BYTES COMMAND...: COMMAND under weft run as trace
# NAME exits with STATUS; its complete trace has exactly one write, of
# BYTES bytes, to FILE.
wrun() {
    local name=$1 status=$2 file=$3 bytes=$4 archive n
    shift 4
    (cd "$TMP" && env WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} timeout -s KILL 60 \
        "$WEFT" run --trace "$name" -- "$@" 2>"$TMP/$name.err")
    rc=$?
    [ "$rc" -eq "$status" ] || { cat "$TMP/$name.err" >&2; fail "$name: exit status $rc, expected $status"; }
    grep -q untraced "$TMP/$name.err" && fail "$name: ran untraced: $(cat "$TMP/$name.err")"
    wait_state "$name" complete 30
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
        { cat "$TMP/print.out" >&2; fail "$name: otf2-print -Werror rejects $archive"; }
    n=$(otf2-print "$archive" | grep -c "IO_OPERATION_COMPLETE .*$file (fd [0-9]*)\" <[0-9]*>, Bytes Result: $bytes,")
    [ "$n" -eq 1 ] || fail "$name: $n writes of $bytes bytes to $file in the trace, expected 1"
    echo "$name: complete, with its write of $bytes bytes to $file"
}
# WEFT_REQUIRED=1 and no weftd: the program fails at start (status 1,
# saying why), even one that makes no traced call (/bin/true); without it
# the program runs untraced.
for req in 1 0; do
    env WEFT_REQUIRED=$req WEFT_SERVER=127.0.0.1:1 WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} timeout -s KILL 60 \
        "$WEFT" run -- /bin/true 2>"$TMP/req.err"
    rc=$?
    if [ $req = 1 ]; then
        [ $rc -eq 1 ] && grep -q "WEFT_REQUIRED=1: exiting with status 1" "$TMP/req.err" ||
            fail "WEFT_REQUIRED=1 without weftd: status $rc: $(cat "$TMP/req.err")"
    else
        [ $rc -eq 0 ] || fail "WEFT_REQUIRED=0 without weftd: status $rc: $(cat "$TMP/req.err")"
    fi
done
echo "WEFT_REQUIRED=1 without weftd: the program fails at start"

wrun "e2e exit dash" 0 x.txt 3 /bin/dash -c 'echo hi > x.txt; true'
wrun "e2e exit python" 3 y.txt 5 /usr/bin/python3 -c \
    'import os; open("y.txt", "w").write("hello"); os._exit(3)'

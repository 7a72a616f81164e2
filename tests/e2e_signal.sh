#!/bin/bash
# e2e_signal.sh - fatal signals flush: weft-signaltest records N pairs on
# its main thread and N on a worker that ended, 3 on an idle thread that
# stays blocked, then dies of SIGSEGV (a write to a PROT_NONE page),
# SIGABRT (abort) or SIGTERM (sent twice by the test). The process must die of that signal
# (exit status 128 + signal), and the trace must be partial because of it
# alone (its reason: "ended abnormally: rank 0: signal N (SIGX)", the
# member "aborted"), with exactly
# the main thread's and the ended worker's events: the signalled thread's
# partly filled buffer is taken over, buffers handed over before are
# shipped, and a live thread's partly filled buffer (the idle thread's)
# is not taken (it may be in the middle of a record) and is missing.
# `yes | head -n 1` under weft run: yes dies of SIGPIPE, its trace has
# its writes, partial for that reason.
# WEFT_SIGNALS=0 leaves the signal alone (no Goodbye: the trace stays
# recording), an application's own handler is never replaced, and bad
# WEFT_SIGNALS / WEFT_SIGNAL_FLUSH_MS values are refused by name.
. "$(dirname "$0")/lib.sh"
SIGTEST="$WEFT_BUILDDIR/tests/weft-signaltest"
N=1000
# No core files; under ASan, let the program's signals reach libweft
# (ASan would install its own SIGSEGV handler, and libweft does not
# replace an installed handler).
ulimit -c 0
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0"

start_weftd

# check_trace NAME SIG: partial because the process died of SIG, 2
# locations with N pairs each.
check_trace() {
    wait_state "$1" partial 60
    local why
    why=$(json_get "$TMP/show.json" 'j.get("error")')
    [ "$why" = "ended abnormally: rank 0: signal $(kill -l "$2") (SIG$2)" ] ||
        fail "$1: reason '$why', expected only that rank 0 died of SIG$2"
    [ "$(json_get "$TMP/show.json" 'j["ranks"][0]["state"]')" = aborted ] ||
        fail "$1: the member is not 'aborted'"
    check_pairs "$1" $N
    echo "$1: $(cat "$TMP/check.out")"
}

# run MODE SIGNAL: runs the program to its death by SIGNAL.
run() {
    local mode=$1 sig=$2 rc pid
    export WEFT_TRACE="e2e signal $mode"
    if [ "$mode" = term ]; then
        coproc PROG { exec timeout -s TERM 60 "$SIGTEST" term $N 2>"$TMP/$mode.err"; }
        # bash unsets PROG_PID once it has reaped the coprocess, which
        # may be before `wait` runs: keep the pid.
        pid=$PROG_PID
        read -r -t 30 line <&"${PROG[0]}" || fail "term: no ready line"
        [ "$line" = ready ] || fail "term: said '$line'"
        # Twice, as a batch scheduler signalling the process and its
        # group does: the second one (on another thread, during the
        # flush) must wait for the flush too.
        child=$(pgrep -P "$pid") || fail "term: no program process"
        kill -TERM "$child"
        kill -TERM "$child" 2>/dev/null
        wait "$pid"
        rc=$?
    else
        timeout -s KILL 60 "$SIGTEST" "$mode" $N 2>"$TMP/$mode.err"
        rc=$?
    fi
    [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] ||
        { cat "$TMP/$mode.err" >&2; fail "$mode: exit status $rc, expected death by SIG$sig"; }
    echo "$mode: died of SIG$sig (status $rc)"
    check_trace "$WEFT_TRACE" "$sig"
}

run segv SEGV
run abort ABRT
run term TERM

# WEFT_SIGNALS=0: the signal is not caught; no Goodbye, no flush.
export WEFT_TRACE="e2e signal off" WEFT_SIGNALS=0
timeout -s KILL 60 "$SIGTEST" abort $N 2>"$TMP/off.err"
rc=$?
[ "$rc" -eq 134 ] || fail "WEFT_SIGNALS=0: exit status $rc, expected 134"
for _ in $(seq 100); do
    grep -q "trace '$WEFT_TRACE' rank 0: disconnected without goodbye" \
        "$TMP/weftd.log" && break
    sleep 0.1
done
grep -q "trace '$WEFT_TRACE' rank 0: disconnected without goodbye" \
    "$TMP/weftd.log" || fail "WEFT_SIGNALS=0: weftd did not see the process vanish"
grep -q "trace '$WEFT_TRACE' rank 0: said goodbye" "$TMP/weftd.log" &&
    fail "WEFT_SIGNALS=0: the process said goodbye"
unset WEFT_SIGNALS
echo "WEFT_SIGNALS=0: the trace waits for its grace period"

# The application's SIGTERM handler (installed before weft_open) runs, not
# libweft's: it _exits with 3, so nothing says goodbye.
export WEFT_TRACE="e2e signal handler"
coproc PROG { exec timeout -s TERM 60 "$SIGTEST" handler $N 2>"$TMP/h.err"; }
pid=$PROG_PID # (see run)
read -r -t 30 line <&"${PROG[0]}" || fail "handler: no ready line"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 3 ] || fail "handler: exit status $rc, expected 3 from the application's handler"
echo "handler: the application's handler ran"

# A pipe's reader gone: `yes | head -n 1` under weft run (libweft-io, the
# default recorders): yes dies of SIGPIPE, and its trace has what it
# recorded (its writes to stdout) with that as the reason.
if [ -e "$WEFT_BUILDDIR/.libs/libweft-io.so" ]; then
    # shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
    SAN=(${WEFT_SAN_PRELOAD:-})
    line=$(env WEFT_TRACE="e2e signal pipe" WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        timeout -s KILL 60 "$WEFT" run -- yes 2>"$TMP/pipe.err" | head -n 1)
    [ "$line" = y ] || fail "yes | head: '$line': $(cat "$TMP/pipe.err")"
    wait_state "e2e signal pipe" partial 60
    why=$(json_get "$TMP/show.json" 'j.get("error")')
    [ "$why" = "ended abnormally: rank 0: signal $(kill -l PIPE) (SIGPIPE)" ] ||
        fail "yes | head: reason '$why', expected SIGPIPE"
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >"$TMP/print.out" 2>&1 ||
        { cat "$TMP/print.out" >&2; fail "yes | head: otf2-print -Werror rejects $archive"; }
    otf2-print "$archive" | grep -q 'IO_OPERATION_BEGIN .*Mode: WRITE' ||
        fail "yes | head: its writes are not in the trace"
    echo "yes | head: yes died of SIGPIPE, its writes are in the trace"
else
    echo "SKIP: yes | head: libweft-io is not built"
fi

for bad in "WEFT_SIGNALS=yes" "WEFT_SIGNAL_FLUSH_MS=-1" "WEFT_SIGNAL_FLUSH_MS=60001"; do
    out=$(env "$bad" WEFT_TRACE=bad timeout 20 "$SIGTEST" abort 1 2>&1)
    echo "$out" | grep -q "${bad%%=*}='${bad#*=}'" ||
        fail "$bad: no message naming it: $out"
done
stop_weftd
echo "ok: fatal signals flush the trace"

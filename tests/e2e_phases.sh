#!/bin/bash
# e2e_phases.sh - weftd SIGKILLed at exact points of a trace's way to its
# archive (#33), each reached by WEFT_TEST_STOP_AT (daemon/testhook.h: it
# stops weftd there with SIGSTOP), then restarted on the same spool and
# port while weft-demo's 2 processes x 2 threads go on or wait:
#   hello      the 1st or 2nd process's journal holds its Hello, its
#              HelloAck not sent (the process makes its connection again
#              and says Hello anew: it must not turn tracing off)
#   stream     at the 1st to 4th step that wrote a recording trace's
#              events into its archive
#   unify      the conversion unified every member's definitions
#   defs       local definitions and mapping tables written, the global
#              definitions and the anchor not
#   commit     the archive written, its catalog row not committed
#   committed  the row committed, the journals not yet removed
# Every time the trace ends complete, with exactly what weft-demo
# recorded (libweft counted nothing as dropped), no journal left, one
# catalog row, and an archive equal, file by file, to what a weftd that
# was never killed makes of the same journals (taken while weftd is
# stopped once the trace's last Goodbye is journaled, converted by
# another weftd's start-up recovery in a spool of their own); anchors are
# compared but for libotf2's random trace id.
# KILLS (default 2) kills per phase; `KILLS=10 tests/e2e_phases.sh` for
# #33's figures.
. "$(dirname "$0")/lib.sh"

KILLS=${KILLS:-2}
DEMO_TIMEOUT=80
STALL=WEFT_STALL_MS=60000
REF_PID=
trap '[ -n "$REF_PID" ] && kill -KILL "$REF_PID" 2>/dev/null; kill_weftd; cleanup' EXIT

# wait_stopped PHASE[:N]: weftd stops itself at PHASE within 30 s, and
# says so (the STOPS-th time in its log).
STOPS=0
wait_stopped() {
    local st
    STOPS=$((STOPS + 1))
    for _ in $(seq 300); do
        st=$(awk '{print $3}' "/proc/$WEFTD_PID/stat" 2>/dev/null) ||
            fail "weftd exited before WEFT_TEST_STOP_AT=$1: $(tail -5 "$TMP/weftd.log")"
        if [ "$st" = T ]; then
            [ "$(grep -c "^weftd: test: stopping at" "$TMP/weftd.log")" -eq "$STOPS" ] &&
                grep "^weftd: test: stopping at" "$TMP/weftd.log" | tail -n 1 |
                grep -q "at ${1%%:*} " ||
                fail "weftd stopped, but not at $1 (stop $STOPS): $(grep "test: stopping" "$TMP/weftd.log" | tail -3)"
            return 0
        fi
        sleep 0.1
    done
    fail "weftd did not reach WEFT_TEST_STOP_AT=$1 within 30 s"
}

# keep_journals NAME: copies trace NAME's journals (complete: weftd is
# stopped after its last Goodbye) to $TMP/ref/NAME/traces/KEY/.
keep_journals() {
    local dir key
    dir=$(find "$SPOOL/traces" -maxdepth 1 -name "$1-*" | head -n 1)
    [ -n "$dir" ] || fail "$1: no trace directory in the spool"
    key=$(basename "$dir")
    mkdir -p "$TMP/ref/$1/traces/$key"
    cp "$dir"/rank-*.wj "$TMP/ref/$1/traces/$key/" ||
        fail "$1: no journals to keep in $dir"
}

# reference NAME: another weftd converts the kept journals at its start
# (grace period 1 s) and is stopped; prints the archive's directory.
reference() {
    local spool="$TMP/ref/$1" dir
    rm -f "$TMP/ref.addr"
    "$WEFTD" --listen 127.0.0.1:0 --spool "$spool" --address-file "$TMP/ref.addr" \
        --log-level info "${AUTH_ARGS[@]}" --set grace_period=1 \
        >>"$TMP/ref.log" 2>&1 &
    REF_PID=$!
    dir=$(find "$spool/traces" -mindepth 1 -maxdepth 1 -type d)
    for _ in $(seq 300); do
        [ -z "$(find "$dir" -name 'rank-*.wj')" ] && break
        sleep 0.1
    done
    kill -TERM "$REF_PID"
    wait "$REF_PID" 2>/dev/null
    REF_PID=
    [ -z "$(find "$dir" -name 'rank-*.wj')" ] ||
        fail "$1: the reference weftd did not convert the journals: $(tail -5 "$TMP/ref.log")"
    echo "$dir/archive"
}

anchor() {
    otf2-print -A "$1" 2>&1 | grep -v -i 'trace identifier\|trace id'
}

# same_archive NAME GOT REF: the same files, each equal (the anchor but
# its trace id).
same_archive() {
    local f
    [ "$(cd "$2" && find . -type f | sort)" = "$(cd "$3" && find . -type f | sort)" ] ||
        fail "$1: other files than the reference's: $(diff <(cd "$2" && find . -type f | sort) <(cd "$3" && find . -type f | sort))"
    while read -r f; do
        if [ "${f##*/}" = traces.otf2 ]; then
            [ "$(anchor "$2/$f")" = "$(anchor "$3/$f")" ] ||
                fail "$1: the anchor differs from the reference's"
        else
            cmp -s "$2/$f" "$3/$f" ||
                fail "$1: $f differs from the reference's: $(cmp "$2/$f" "$3/$f" 2>&1)"
        fi
    done < <(cd "$2" && find . -type f)
}

start_weftd
PORT=${WEFT_SERVER##*:}
n=0
for phase in hello stream unify defs commit committed; do
    for i in $(seq "$KILLS"); do
        name="$phase$i"
        at=1
        [ "$phase" = hello ] && at=$((RANDOM % 2 + 1))
        [ "$phase" = stream ] && at=$((RANDOM % 4 + 1))
        kill_weftd
        WEFT_TEST_STOP_AT="$phase:$at" start_weftd_at "$PORT"
        start_demo "$name" "$STALL" -- -p 2 -t 2 -n 3000 -s 200
        wait_stopped "$phase:$at"
        early=0
        [ "$phase" = hello ] || [ "$phase" = stream ] && early=1
        [ "$early" = 0 ] && keep_journals "$name"
        kill_weftd
        if [ "$early" = 1 ]; then
            # the journals once complete: stopped again after the commit
            WEFT_TEST_STOP_AT=committed start_weftd_at "$PORT"
            wait_stopped committed
            keep_journals "$name"
            kill -CONT "$WEFTD_PID"
        else
            start_weftd_at "$PORT"
        fi
        finish_demo "$name"
        wait_state "$name" complete 60
        check_archive "$name" "$TMP/$name.json"
        grep -E "^weft: .*(dropped|incomplete|gave up|tracing is off)" \
            "$TMP/$name.out" && fail "$name: libweft lost records"
        [ "$(json_get "$TMP/show.json" 'j["dropped"]')" -eq 0 ] ||
            fail "$name: the catalog counts dropped records"
        got=$(dirname "$(json_get "$TMP/show.json" 'j["archive"]')")
        for _ in $(seq 50); do  # removed right after the commit
            [ -z "$(find "$(dirname "$got")" -name 'rank-*.wj')" ] && break
            sleep 0.1
        done
        [ -z "$(find "$(dirname "$got")" -name 'rank-*.wj')" ] ||
            fail "$name: journals left after the commit"
        [ "$("$WEFT" --catalog "$SPOOL/catalog.db" list --name "$name" --json |
              json_get /dev/stdin 'len(j)')" -eq 1 ] ||
            fail "$name: not exactly one catalog row"
        same_archive "$name" "$got" "$(reference "$name")"
        n=$((n + 1))
    done
    echo "$phase: $KILLS kills, every archive exact and equal to the reference"
done
echo "$n kills at 6 phases"

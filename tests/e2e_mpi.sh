#!/bin/bash
# e2e_mpi.sh - unmodified MPI programs traced by libweft-mpi, on 4 ranks
# (oversubscribed), with Open MPI and with MPICH; a flavour whose program,
# mpirun or library is missing prints a SKIP line (77 when none runs).
#   - tests/mpi/every (every wrapped MPI function, checking its own
#     results) gives a complete trace that otf2-print -Werror accepts and
#     in which tests/check_mpi.py (both readers of the python module)
#     finds, rank by rank, what the program says it caused, every message
#     and request matched and every collective seen alike by all members;
#     then every breakage the checker's self-test makes of that archive
#     must be caught (what ViTE makes of it is printed, see vite_renders).
#   - tests/mpi/ring (Fortran, `use mpi`) and ring-f08 (`use mpi_f08`)
#     likewise; and `ring abort`, whose rank 0 calls MPI_ABORT with error
#     code 5: mpirun ends at once with status 5, traced as untraced (the
#     wrapper's tail call into PMPI_Abort once called it again for ever).
#   - tests/mpi/abort with rank 1 calling MPI_Abort, dying of SIGSEGV, or
#     exiting without MPI_Finalize: the run fails, its trace is partial,
#     says that rank 1 ended with MPI_Abort (error code 3), SIGSEGV or an
#     exit before MPI_Finalize, holds the events
#     rank 1 recorded (it ships them before it ends: MPI_Abort's wrapper,
#     libweft's signal handler in front of the one Open MPI installs), and
#     passes otf2-print -Werror and both readers. What the other ranks
#     say depends on the launcher (Open MPI ends them with SIGTERM, which
#     libweft flushes; MPICH's hydra with SIGKILL) and on timing.
#   Every trace that ends abnormally is converted within 10 s of mpirun's
#   end although the grace period is an hour: weftd sees the processes
#   on its host gone, and waits abort_grace_period for the others.
. "$(dirname "$0")/lib.sh"
CHECK_MPI="$WEFT_SRCDIR/tests/check_mpi.py"
NP=4
MPI_TIMEOUT=120
ulimit -c 0
# Sanitized builds: the runtimes are preloaded into MPI programs built
# without them (set_tracer), whose MPI libraries leak by design; the
# program's crash signals reach libweft and MPI, as without ASan.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0"
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# ---- how a rank is traced (the one place to change) --------------------
# set_tracer FLAVOUR: TRACER is the command mpirun starts on each rank in
# front of the program, with every poll recorded (WEFT_MPI_POLL=all: the
# checker counts each MPI_Test* call; e2e_mpi_poll.sh tests collapsing): `weft run` (which finds libweft-mpi-FLAVOUR.so in
# WEFT_LIBDIR, this build's .libs) when this build has it, else the
# library preloaded by hand. libweft.so.0 is found through
# LD_LIBRARY_PATH (the build tree's libraries know only the install
# directory); a sanitized build preloads its runtimes first. Returns 1
# when the library is not built.
set_tracer() {
    local lib="$WEFT_BUILDDIR/.libs/libweft-mpi-$1.so"
    local libpath="$WEFT_BUILDDIR/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    [ -f "$lib" ] || return 1
    # shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
    local san=(${WEFT_SAN_PRELOAD:-})
    if "$WEFT" run --help >/dev/null 2>&1; then
        TRACER=(env "WEFT_LIBDIR=$WEFT_BUILDDIR/.libs" "LD_LIBRARY_PATH=$libpath" WEFT_MPI_POLL=all)
        [ ${#san[@]} -eq 0 ] || TRACER+=("LD_PRELOAD=${san[*]}")
        TRACER+=("$WEFT" run -v --)
    else
        TRACER=(env "LD_PRELOAD=${san[*]:+${san[*]} }$lib" "LD_LIBRARY_PATH=$libpath" WEFT_MPI_POLL=all)
    fi
    echo "$1: tracing with: ${TRACER[*]}"
}

# set_mpirun FLAVOUR: MPIRUN, the launcher of that MPI on NP local ranks.
set_mpirun() {
    case $1 in
        openmpi) MPIRUN=(mpirun.openmpi --oversubscribe -np $NP) ;;
        mpich) MPIRUN=(mpirun.mpich -np $NP) ;;
    esac
    command -v "${MPIRUN[0]}" >/dev/null
}

# problem MESSAGE: one failed check; the test goes on with the next run
# and fails at the end, listing them all.
PROBLEMS=()
problem() {
    echo "FAIL: $*" >&2
    PROBLEMS+=("$*")
    return 1
}

# run_mpi NAME PROGRAM ARGS...: PROGRAM traced as trace NAME on NP ranks,
# its expectation in $TMP/NAME.expect, its output in $TMP/NAME.out; sets
# RC to mpirun's exit status (124: it did not end in time).
run_mpi() {
    local name=$1
    shift
    mkdir -p "$TMP/$name.expect"
    WEFT_TRACE="$name" WEFT_TEST_EXPECT_DIR="$TMP/$name.expect" \
        timeout -k 10 $MPI_TIMEOUT "${MPIRUN[@]}" "${TRACER[@]}" "$@" \
        >"$TMP/$name.out" 2>&1
    RC=$?
    if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then
        tail -n 20 "$TMP/$name.out" >&2
        problem "$name: mpirun did not end within $MPI_TIMEOUT s"
    fi
}

# wait_final NAME: waits until trace NAME is converted (complete, partial
# or failed); sets STATE, leaves its row in $TMP/show.json. Returns 1 if
# there is no such trace 30 s after the run (nothing was traced) or it is
# not converted within 120 s.
wait_final() {
    STATE=
    for i in $(seq 1200); do
        if "$WEFT" --catalog "$SPOOL/catalog.db" show "$1" --json \
                >"$TMP/show.json" 2>/dev/null; then
            STATE=$(json_get "$TMP/show.json" 'j["state"]')
            case $STATE in complete|partial|failed) return 0 ;; esac
        elif [ "$i" -ge 300 ]; then
            problem "$1: no trace at all 30 s after the run: nothing was traced"
            return 1
        fi
        sleep 0.1
    done
    problem "$1: not converted within 120 s (state: $STATE)"
}

# readers NAME: the archive of NAME ($TMP/show.json) passes otf2-print
# -Werror; sets ARCHIVE. Returns 1 if there is no archive.
readers() {
    ARCHIVE=$(json_get "$TMP/show.json" 'j["archive"]')
    [ -f "$ARCHIVE" ] || { problem "$1: no archive at $ARCHIVE"; return 1; }
    otf2-print -Werror --silent "$ARCHIVE" >"$TMP/$1.print" 2>&1 || {
        grep -v "^$\|=== OTF2-PRINT ===" "$TMP/$1.print" | head -n 5 >&2
        problem "$1: otf2-print -Werror rejects $ARCHIVE"
    }
    return 0
}

# check_run NAME [--mutate]: the run succeeded, its trace is complete
# with NP members and matches its expectation (--mutate: and the
# checker's breakages of it are all caught).
check_run() {
    local name=$1
    [ $RC -eq 0 ] || { tail -n 20 "$TMP/$name.out" >&2; problem "$name: mpirun exited $RC"; return; }
    [ "$(ls "$TMP/$name.expect" | wc -l)" -eq $NP ] ||
        { problem "$name: the program wrote $(ls "$TMP/$name.expect" | wc -l) expectations, not $NP"; return; }
    wait_final "$name" || return
    [ "$STATE" = complete ] ||
        problem "$name: trace is $STATE: $(json_get "$TMP/show.json" 'j.get("error")')"
    [ "$(json_get "$TMP/show.json" 'j["members"]')" -eq $NP ] ||
        problem "$name: $(json_get "$TMP/show.json" 'j["members"]') members, expected $NP"
    readers "$name" || return
    if "$PY" "$CHECK_MPI" "$ARCHIVE" "$TMP/$name.expect" >"$TMP/$name.check"; then
        echo "$name: $(cat "$TMP/$name.check")"
        if [ "${2:-}" = --mutate ]; then
            "$PY" "$CHECK_MPI" --self-test "$ARCHIVE" "$TMP/$name.expect" \
                >"$TMP/$name.mutate" || problem "$name: check_mpi.py misses a breakage"
            echo "$name: $(cat "$TMP/$name.mutate")"
        fi
    else
        problem "$name: the archive is not what the program did (check_mpi.py above)"
    fi
    vite_renders "$name" "$ARCHIVE"
}

# vite_renders NAME ARCHIVE: what ViTE (if installed) makes of it, as a
# note, not a check: Debian's ViTE 1.2 places a message's ranks only
# through a Comm whose group is the COMM_LOCATIONS group itself, which
# otf2-print -Werror rejects ("invalid Group reference in Comm"); with
# the COMM_GROUP groups OTF2 asks for it warns "cannot find rank N in
# communicator C" (and knows no InterComm at all).
vite_renders() {
    command -v vite >/dev/null || return 0
    QT_QPA_PLATFORM=offscreen timeout 120 vite -e "$TMP/$1.svg" "$2" \
        >"$TMP/$1.vite" 2>&1
    local rc=$? unplaced
    unplaced=$(grep -c "cannot find rank" "$TMP/$1.vite")
    echo "$1: note: vite exited $rc, SVG of $(stat -c %s "$TMP/$1.svg" 2>/dev/null || echo 0) bytes, $unplaced 'cannot find rank' warnings"
}

# wait_soon NAME: wait_final, within 10 s of now.
wait_soon() {
    local t0=$SECONDS
    wait_final "$1" || return
    [ $((SECONDS - t0)) -le 10 ] ||
        problem "$1: converted $((SECONDS - t0)) s after mpirun ended, not within 10 s"
}

# check_abnormal NAME HOW [RANK]: the run failed, and its trace is partial,
# says that rank RANK (1 unless given) ended HOW, holds its events and
# passes both readers.
check_abnormal() {
    local name=$1 how=$2 r=${3:-1} why events
    [ $RC -ne 0 ] || problem "$name: mpirun exited 0"
    wait_soon "$name" || return
    why=$(json_get "$TMP/show.json" 'j.get("error")')
    [ "$STATE" = partial ] || problem "$name: trace is $STATE, expected partial ($why)"
    case $why in
        *"rank $r: $how"* | *"ranks $r, "*": $how"*) echo "$name: $why" ;;
        *) problem "$name: the reason does not say rank $r ended with '$how': $why" ;;
    esac
    events=$(json_get "$TMP/show.json" "[m['events'] for m in j['ranks'] if m['rank'] == $r][0]")
    [ "$events" -gt 0 ] || problem "$name: rank $r's events are missing"
    readers "$name" || return
    if "$PY" "$CHECK_MPI" --readers-only "$ARCHIVE" >"$TMP/$name.check"; then
        echo "$name: $STATE, $(cat "$TMP/$name.check")"
    else
        problem "$name: a reader rejects the $STATE archive (check_mpi.py above)"
    fi
}

start_weftd --grace-period 3600
ran=0
for flavour in openmpi mpich; do
    every="$WEFT_BUILDDIR/tests/mpi/every-$flavour"
    if [ ! -x "$every" ]; then
        echo "SKIP: $flavour: tests/mpi/every-$flavour not built (configure found no $flavour)"
        continue
    fi
    if ! set_mpirun $flavour; then
        echo "SKIP: $flavour: ${MPIRUN[0]} not found"
        continue
    fi
    if ! set_tracer $flavour; then
        echo "SKIP: $flavour: libweft-mpi-$flavour.so is not built in $WEFT_BUILDDIR/.libs"
        continue
    fi
    ran=$((ran + 1))

    run_mpi "mpi-every-$flavour" "$every"
    check_run "mpi-every-$flavour" --mutate

    for ring in ring ring-f08; do
        if [ -x "$WEFT_BUILDDIR/tests/mpi/$ring-$flavour" ]; then
            run_mpi "mpi-$ring-$flavour" "$WEFT_BUILDDIR/tests/mpi/$ring-$flavour"
            check_run "mpi-$ring-$flavour" --mutate
            timeout -k 10 60 "${MPIRUN[@]}" "$WEFT_BUILDDIR/tests/mpi/$ring-$flavour" \
                abort >"$TMP/$ring-untraced.out" 2>&1
            [ $? -eq 5 ] || problem "$ring-$flavour abort, untraced: mpirun did not end with 5"
            SECONDS=0
            run_mpi "mpi-$ring-abort-$flavour" "$WEFT_BUILDDIR/tests/mpi/$ring-$flavour" abort
            [ $RC -eq 5 ] || problem "mpi-$ring-abort-$flavour: mpirun exited $RC after $SECONDS s, not 5"
            check_abnormal "mpi-$ring-abort-$flavour" "MPI_Abort (error code 5)" 0
        else
            echo "SKIP: $flavour: Fortran $ring not built (no mpif90.$flavour)"
        fi
    done

    # WEFT_REQUIRED=1 and no weftd: every rank says why and the job fails
    # at MPI_Init (it ran untraced with status 0 once).
    WEFT_REQUIRED=1 WEFT_SERVER=127.0.0.1:1 timeout -k 10 $MPI_TIMEOUT \
        "${MPIRUN[@]}" "${TRACER[@]}" "$every" >"$TMP/required.out" 2>&1
    RC=$?
    if [ $RC -eq 0 ] || [ $RC -eq 124 ] || [ $RC -eq 137 ] ||
        ! grep -q "WEFT_REQUIRED=1: exiting with status 1" "$TMP/required.out"; then
        tail -n 5 "$TMP/required.out" >&2
        problem "$flavour: WEFT_REQUIRED=1 without weftd: mpirun exited $RC"
    else
        echo "$flavour: WEFT_REQUIRED=1 without weftd: the job failed at start ($RC)"
    fi

    run_mpi "mpi-abort-$flavour" "$WEFT_BUILDDIR/tests/mpi/abort-$flavour" abort
    check_abnormal "mpi-abort-$flavour" "MPI_Abort (error code 3)"
    run_mpi "mpi-segv-$flavour" "$WEFT_BUILDDIR/tests/mpi/abort-$flavour" segv
    check_abnormal "mpi-segv-$flavour" "signal 11 (SIGSEGV)"
    run_mpi "mpi-exit-$flavour" "$WEFT_BUILDDIR/tests/mpi/abort-$flavour" exit
    check_abnormal "mpi-exit-$flavour" "exit before MPI_Finalize"
done
[ $ran -gt 0 ] || { echo "SKIP: no MPI flavour can be traced here"; exit 77; }
if [ ${#PROBLEMS[@]} -gt 0 ]; then
    printf '  %s\n' "${PROBLEMS[@]}" >&2
    fail "${#PROBLEMS[@]} problem(s), listed above"
fi
stop_weftd
echo ok

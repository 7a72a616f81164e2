#!/bin/bash
# e2e_srun.sh - `srun weft run -- ./app` with a real Slurm (issue #13), as
# a site runs it: a one-node cluster of the test's own (munged with a test
# key, slurmctld and slurmd as root; slurm.conf, key, sockets, free
# loopback ports, state, spool and logs under the test's directory;
# nothing of the system's /etc/slurm or munged), then, for each MPI that
# Slurm can start here (Open MPI through `srun --mpi=pmix`, MPICH through
# `srun --mpi=pmi2`: Debian 12's Open MPI 4.1 fails in MPI_Init under
# pmi2 or none, MPICH 4.0 under pmix or none starts 4 singletons), one
# allocation (salloc -n 4) whose steps are:
#   step 0: tests/mpi/every on 4 tasks, WEFT_TRACE unset: srun exits 0,
#     the trace is named from the program and the step (every-mpich-J.0),
#     its run and job id are the step's, it is complete with ranks 0-3,
#     otf2-print -Werror and tests/check_mpi.py accept it;
#   steps 1 and 2: a small MPI program that exits 3, both with one
#     WEFT_TRACE: srun exits 3, and the two steps are two traces of that
#     name (runs J.1 and J.2), each complete with ranks 0-3.
#   step 3: `weft run -- srun ... exit3`, weft run in front of srun:
#     each task runs under weft run (libweft-launch.so), srun exits 3,
#     one complete trace of the step's ranks, srun itself untraced.
# Then, without MPI: `srun -n 2 weft run -- /bin/sh -c 'exit 5'`: each
# task says it runs untraced, srun exits 5, no trace appears; and
# `srun -n 2 examples/fib` (linked with libweft): trace fib-J.0, ranks
# 0-1 from SLURM_PROCID and SLURM_NTASKS.
# SKIP (77) when not root, when Slurm, munge or an MPI is missing
# (scripts/deps.sh installs them), or when the cluster cannot start here.
. "$(dirname "$0")/lib.sh"

export NP=4 STEP_TIMEOUT=120   # steps.sh reads them too
export PATH="$PATH:/usr/sbin:/sbin"
ulimit -c 0
# Sanitized builds: the runtimes are preloaded into MPI programs built
# without them (tracer), whose MPI libraries leak by design.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Nothing of a surrounding Slurm job or weft setting leaks in.
unset WEFT_TRACE WEFT_RUN WEFT_RANK WEFT_SIZE LD_PRELOAD
for v in $(compgen -v | grep -E '^(SLURM|PMI|PMIX)_'); do unset "$v"; done

[ "$(id -u)" -eq 0 ] || { echo "SKIP: slurmd must run as root"; exit 77; }
for c in munged slurmctld slurmd srun salloc sinfo squeue scancel; do
    command -v "$c" >/dev/null ||
        { echo "SKIP: $c not found (Debian: munge slurmctld slurmd slurm-client)"; exit 77; }
done

# ---- the cluster ---------------------------------------------------------
SLURM_DIR="$TMP/slurm"
NODE=$(hostname -s)
MUNGED_PID='' SLURMCTLD_PID='' SLURMD_PID=''

# stop_pid PID: SIGTERM, 10 s to end, then SIGKILL; reaped.
stop_pid() {
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 0
    kill -TERM "$1" 2>/dev/null
    wait_gone "$1" 10 || kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

# our_stepds: the slurmstepd processes of this cluster (slurmd's
# children, which daemonize; they have its environment, SLURM_CONF).
our_stepds() {
    local p
    for p in $(pgrep -x slurmstepd); do
        tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" |
            grep -qxF "SLURM_CONF=$SLURM_CONF" && echo "$p"
    done
}

# stop_slurm: cancels what still runs, waits (20 s at most) for its step
# daemons, then stops slurmd, slurmctld and munged; runs on exit.
stop_slurm() {
    local p
    if [ -n "$SLURMCTLD_PID" ] && kill -0 "$SLURMCTLD_PID" 2>/dev/null; then
        # shellcheck disable=SC2046 # job ids, one word each
        timeout 10 scancel $(timeout 10 squeue -h -o %i 2>/dev/null) 2>/dev/null
    fi
    for _ in $(seq 200); do
        [ -z "$(our_stepds)" ] && break
        sleep 0.1
    done
    for p in $(our_stepds); do kill -KILL "$p" 2>/dev/null; done
    stop_pid "$SLURMD_PID"
    stop_pid "$SLURMCTLD_PID"
    stop_pid "$MUNGED_PID"
}
trap 'stop_slurm; cleanup' EXIT

# cannot_start WHAT LOG: the cluster cannot run here: SKIP, with the log.
cannot_start() {
    echo "SKIP: $1 (last lines of $2 follow)"
    tail -n 15 "$2" 2>/dev/null | sed 's/^/  /'
    exit 77
}

# write_conf: SLURM_CONF, one node named after this host with 4 CPUs
# whatever the hardware (config_overrides), two free loopback ports, and
# job ids from a random first one (two of these clusters on one host do
# not share PMIx namespaces).
write_conf() {
    local ports
    ports=$("$PY" -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
    mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool" "$SLURM_DIR/tmp"
    export SLURM_CONF="$SLURM_DIR/slurm.conf"
    cat >"$SLURM_CONF" <<EOF
ClusterName=wefttest
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${ports% *}
SlurmdPort=${ports#* }
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
TmpFS=$SLURM_DIR/tmp
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
FirstJobId=$(( (RANDOM << 8) + 1 ))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$NP State=UNKNOWN
PartitionName=weft Nodes=$NODE Default=YES MaxTime=10 State=UP
EOF
}

# start_slurm: munged, slurmctld and slurmd in the foreground (their pids
# are ours), until the node is idle (30 s at most).
start_slurm() {
    local state=
    start_munged || cannot_start "munged did not start" "$TMP/munge/log"
    write_conf
    slurmctld -D -i -f "$SLURM_CONF" >>"$SLURM_DIR/slurmctld.out" 2>&1 &
    SLURMCTLD_PID=$!
    slurmd -D -f "$SLURM_CONF" -N "$NODE" >>"$SLURM_DIR/slurmd.out" 2>&1 &
    SLURMD_PID=$!
    for _ in $(seq 300); do
        kill -0 "$SLURMCTLD_PID" 2>/dev/null ||
            cannot_start "slurmctld exited at start" "$SLURM_DIR/slurmctld.log"
        kill -0 "$SLURMD_PID" 2>/dev/null ||
            cannot_start "slurmd exited at start" "$SLURM_DIR/slurmd.log"
        state=$(timeout 10 sinfo -h -N -n "$NODE" -o %T 2>/dev/null)
        [ "$state" = idle ] && return 0
        sleep 0.1
    done
    cannot_start "node $NODE is '${state:-unknown}', not idle, 30 s after start" \
        "$SLURM_DIR/slurmd.log"
}

# ---- checks ----------------------------------------------------------------
PROBLEMS=()
problem() {
    echo "FAIL: $*" >&2
    PROBLEMS+=("$*")
    return 1
}

# tracer FLAVOUR: TRACER, what srun starts in front of the program: weft
# run finding libweft-mpi-FLAVOUR.so in this build's .libs (WEFT_LIBDIR),
# libweft.so.0 through LD_LIBRARY_PATH, a sanitized build's runtimes
# preloaded first. Returns 1 when that library is not built.
tracer() {
    # shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
    local san=(${WEFT_SAN_PRELOAD:-})
    [ -f "$WEFT_BUILDDIR/.libs/libweft-mpi-$1.so" ] || return 1
    # WEFT_MPI_POLL=all: check_mpi.py compares every MPI_Test* call.
    TRACER=(env "WEFT_LIBDIR=$WEFT_BUILDDIR/.libs" WEFT_MPI_POLL=all
            "LD_LIBRARY_PATH=$WEFT_BUILDDIR/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    [ ${#san[@]} -eq 0 ] || TRACER+=("LD_PRELOAD=${san[*]}")
    TRACER+=("$WEFT" run -v --)
}

# traces NAME: the catalog ids of the traces named NAME, oldest first
# (weft list's order reversed: ids are random and tell no order).
traces() {
    "$WEFT" --catalog "$SPOOL/catalog.db" list --json |
        "$PY" -c 'import json, sys
print(*[t["id"] for t in reversed(json.load(sys.stdin)) if t["name"] == sys.argv[1]])' "$1"
}

# wait_traces NAME COUNT: waits (60 s at most) until COUNT traces named
# NAME are converted (complete, partial or failed); sets IDS.
wait_traces() {
    local id converted=0
    for _ in $(seq 600); do
        IDS=$(traces "$1")
        converted=0
        for id in $IDS; do
            case $("$WEFT" --catalog "$SPOOL/catalog.db" show "$id" --json |
                   "$PY" -c 'import json, sys; print(json.load(sys.stdin)["state"])') in
                complete|partial|failed) converted=$((converted + 1)) ;;
            esac
        done
        [ "$(echo "$IDS" | wc -w)" -ge "$2" ] && [ "$converted" -ge "$2" ] && return 0
        sleep 0.1
    done
    problem "$1: $(echo "$IDS" | wc -w) trace(s), $converted converted, 60 s after the run; expected $2"
}

# check_trace ID NAME JOB STEP [SIZE]: trace ID is NAME, complete, with
# ranks 0..SIZE-1 (NP unless given), from Slurm job JOB's step STEP;
# leaves its row in $TMP/show.json and its archive in ARCHIVE, which
# otf2-print -Werror accepts.
check_trace() {
    local got last=$((${5:-$NP} - 1))
    "$WEFT" --catalog "$SPOOL/catalog.db" show "$1" --json >"$TMP/show.json" ||
        { problem "$2: weft show $1 failed"; return 1; }
    got=$(json_get "$TMP/show.json" \
        '"%s %s %s %s %s" % (j["name"], j["state"], j["job_id"], j["run"].split(":")[-1].replace("slurm.pmix.", ""), ",".join(str(r["rank"]) for r in j["ranks"]))')
    [ "$got" = "$2 complete $3 $3.$4 $(seq -s, 0 $last)" ] ||
        { problem "trace $1: name, state, job, run, ranks are '$got', expected '$2 complete $3 $3.$4 0..$last' ($(json_get "$TMP/show.json" 'j.get("error")'))"; return 1; }
    ARCHIVE=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$ARCHIVE" >"$TMP/print.out" 2>&1 ||
        { head -n 5 "$TMP/print.out" >&2; problem "$2: otf2-print -Werror rejects $ARCHIVE"; return 1; }
    echo "$2: trace $1 complete, run $(json_get "$TMP/show.json" 'j["run"]'), ranks 0-$last"
}

# ---- the allocation's steps --------------------------------------------------
# Run by salloc in the allocation (bash steps.sh FLAVOUR MPI EVERY EXIT3
# DIR TRACER...); each step's exit status in DIR/stepN.rc, its output in
# DIR/stepN.out.
cat >"$TMP/steps.sh" <<'EOF'
flavour=$1 mpi=$2 every=$3 exit3=$4 dir=$5
shift 5
TRACER=("$@")
echo "$SLURM_JOB_ID" >"$dir/job"
step() {
    local n=$1
    shift
    timeout -k 5 "$STEP_TIMEOUT" srun -n "$NP" --mpi="$mpi" "$@" >"$dir/step$n.out" 2>&1
    echo $? >"$dir/step$n.rc"
}
WEFT_TEST_EXPECT_DIR="$dir/expect" step 0 "${TRACER[@]}" "$every"
WEFT_TRACE="srun-steps-$flavour" step 1 "${TRACER[@]}" "$exit3"
WEFT_TRACE="srun-steps-$flavour" step 2 "${TRACER[@]}" "$exit3"
# weft run in front of srun (TRACER ends with "weft run -v --")
WEFT_TRACE="srun-front-$flavour" timeout -k 5 "$STEP_TIMEOUT" "${TRACER[@]}" \
    srun -n "$NP" --mpi="$mpi" "$exit3" >"$dir/step3.out" 2>&1
echo $? >"$dir/step3.rc"
EOF

cat >"$TMP/exit3.c" <<'EOF'
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 3;
}
EOF

# rc_is DIR N WANT: step N of DIR exited WANT.
rc_is() {
    local rc
    rc=$(cat "$1/step$2.rc" 2>/dev/null)
    [ "$rc" = "$3" ] && return 0
    tail -n 15 "$1/step$2.out" >&2
    problem "$(basename "$1") step $2: srun exited ${rc:-(did not run)}, expected $3"
}

# run_flavour FLAVOUR MPI: the allocation's three steps, then their traces.
run_flavour() {
    local flavour=$1 mpi=$2 dir="$TMP/$1" job id ids
    local every="$WEFT_BUILDDIR/tests/mpi/every-$flavour"
    mkdir -p "$dir/expect"
    "mpicc.$flavour" -o "$dir/exit3-$flavour" "$TMP/exit3.c" ||
        { problem "$flavour: mpicc.$flavour cannot build exit3.c"; return; }
    timeout -k 10 $((4 * STEP_TIMEOUT + 30)) salloc -n "$NP" -t 10 \
        -J "weft-$flavour" bash "$TMP/steps.sh" "$flavour" "$mpi" "$every" \
        "$dir/exit3-$flavour" "$dir" "${TRACER[@]}" \
        >"$dir/salloc.out" 2>&1 </dev/null
    job=$(cat "$dir/job" 2>/dev/null)
    [ -n "$job" ] ||
        { cat "$dir/salloc.out" >&2; problem "$flavour: salloc ran nothing"; return; }
    echo "$flavour: job $job"

    rc_is "$dir" 0 0 && wait_traces "every-$flavour-$job.0" 1 && {
        id=$(traces "every-$flavour-$job.0")
        if check_trace "$id" "every-$flavour-$job.0" "$job" 0; then
            if "$PY" "$WEFT_SRCDIR/tests/check_mpi.py" "$ARCHIVE" "$dir/expect" \
                    >"$dir/check.out"; then
                echo "every-$flavour-$job.0: $(cat "$dir/check.out")"
            else
                problem "$flavour: the archive is not what tests/mpi/every did (check_mpi.py above)"
            fi
        fi
    }
    rc_is "$dir" 1 3 && rc_is "$dir" 2 3 &&
        wait_traces "srun-steps-$flavour" 2 && {
        read -ra ids <<<"$(traces "srun-steps-$flavour")"
        [ ${#ids[@]} -eq 2 ] ||
            { problem "$flavour: two steps with one WEFT_TRACE are ${#ids[@]} trace(s), not 2"; return; }
        check_trace "${ids[0]}" "srun-steps-$flavour" "$job" 1
        check_trace "${ids[1]}" "srun-steps-$flavour" "$job" 2
    }
    # step 3, `weft run -- srun ...`: srun untraced, each task under weft
    # run, one trace of the step's ranks as with `srun weft run`
    rc_is "$dir" 3 3 && {
        grep -q "srun is a parallel launcher" "$dir/step3.out" ||
            problem "$flavour: weft run did not see srun as a launcher: $(cat "$dir/step3.out")"
        [ "$(grep -c "exit3-$flavour: dynamically linked" "$dir/step3.out")" = "$NP" ] ||
            problem "$flavour: not each of the $NP tasks ran under weft run: $(cat "$dir/step3.out")"
    } && wait_traces "srun-front-$flavour" 1 && {
        ids=$(traces "srun-front-$flavour")
        [ "$(echo "$ids" | wc -w)" = 1 ] ||
            problem "$flavour: weft run -- srun made traces $ids, not one"
        check_trace "$ids" "srun-front-$flavour" "$job" 3
    }
}

start_slurm
echo "slurm: node $NODE idle; $(srun --mpi=list 2>&1 | tr -s '\n\t' ' ')"
start_weftd --grace-period 2

ran=0
for fm in openmpi:pmix mpich:pmi2; do
    flavour=${fm%:*} mpi=${fm#*:}
    if [ ! -x "$WEFT_BUILDDIR/tests/mpi/every-$flavour" ]; then
        echo "SKIP: $flavour: tests/mpi/every-$flavour not built (configure found no $flavour)"
        continue
    fi
    if ! command -v "mpicc.$flavour" >/dev/null; then
        echo "SKIP: $flavour: mpicc.$flavour not found"
        continue
    fi
    if ! tracer "$flavour"; then
        echo "SKIP: $flavour: libweft-mpi-$flavour.so is not built in $WEFT_BUILDDIR/.libs"
        continue
    fi
    if ! srun --mpi=list 2>&1 | grep -qw "$mpi"; then
        echo "SKIP: $flavour: this Slurm has no mpi/$mpi plugin (srun --mpi=list)"
        continue
    fi
    ran=$((ran + 1))
    run_flavour "$flavour" "$mpi"
done

# ntraces: how many traces the catalog holds.
ntraces() {
    "$WEFT" --catalog "$SPOOL/catalog.db" list --json |
        "$PY" -c 'import json, sys; print(len(json.load(sys.stdin)))'
}

# A program without MPI: weft run says so on each task and execs it.
before=$(ntraces)
timeout -k 5 $STEP_TIMEOUT srun -n 2 "$WEFT" run -- /bin/sh -c 'exit 5' \
    >"$TMP/nompi.out" 2>&1
rc=$?
[ $rc -eq 5 ] || problem "no MPI: srun exited $rc, expected 5: $(cat "$TMP/nompi.out")"
[ "$(grep -c "uses no MPI library: running it untraced" "$TMP/nompi.out")" -eq 2 ] ||
    problem "no MPI: not one 'untraced' line per task: $(cat "$TMP/nompi.out")"
[ "$(ntraces)" = "$before" ] || problem "no MPI: $(($(ntraces) - before)) trace(s) appeared"
echo "no MPI: srun exited 5, both tasks said they run untraced"

# A program linked with libweft, without MPI (examples/fib, compiled
# with -finstrument-functions): rank and size from SLURM_PROCID and
# SLURM_NTASKS, its run and name from the job and step.
if [ -x "$WEFT_BUILDDIR/examples/fib" ]; then
    # shellcheck disable=SC2016 # expanded by the task's sh
    timeout -k 5 $STEP_TIMEOUT srun -n 2 sh -c 'echo "$SLURM_JOB_ID" >"$0"; exec "$@"' \
        "$TMP/fib.job" "$WEFT_BUILDDIR/examples/fib" -t 1 -n 5 >"$TMP/fib.out" 2>&1
    rc=$?
    job=$(cat "$TMP/fib.job" 2>/dev/null)
    if [ $rc -ne 0 ] || [ -z "$job" ]; then
        problem "fib: srun exited $rc: $(cat "$TMP/fib.out")"
    elif wait_traces "fib-$job.0" 1; then
        check_trace "$(traces "fib-$job.0")" "fib-$job.0" "$job" 0 2
    fi
else
    echo "SKIP: examples/fib is not built"
fi

if [ ${#PROBLEMS[@]} -gt 0 ]; then
    printf '  %s\n' "${PROBLEMS[@]}" >&2
    fail "${#PROBLEMS[@]} problem(s), listed above"
fi
[ $ran -gt 0 ] || { echo "SKIP: no MPI flavour can be traced under srun here"; exit 77; }
stop_weftd
echo ok

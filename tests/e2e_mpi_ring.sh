#!/bin/bash
# e2e_mpi_ring.sh - an unmodified MPI program traced by `mpirun -np 4
# weft run -- ./ring`, with Open MPI and with MPICH: the real
# libweft-mpi, a real weftd. The trace is one complete trace of 4 ranks
# named by rank 0 (MPICH's launcher names no job), both readers accept
# it, each rank has the MPI events the program caused (counted from the
# archive with the python reader), the two Comm_dups of the world are two
# communicators with the world's members (one with the name
# MPI_Comm_set_name gave it) and the two colors of a split are two
# communicators of two members each. A Fortran ring (`use mpi`)
# is traced too: Open MPI's Fortran bindings call PMPI_ directly, MPICH's
# call MPI_ (recorders/mpi/fortran.c). `weft run -- mpirun -np 4 ./ring`
# (weft run in front of the launcher, libweft-launch.so) gives the same
# trace of the 4 ranks and none of the launcher; so does an mpirun that
# a script under weft run starts (the script's tree is a trace besides),
# with exec or with posix_spawnp.
. "$(dirname "$0")/lib.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
unset WEFT_TRACE
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"

cat >"$TMP/ring.c" <<'PROG'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, token = 0, a, b = -1, s = 0;
    MPI_Comm dup1, dup2, half;
    MPI_Request rq[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 3; i++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7,
                     MPI_COMM_WORLD);
        }
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &dup1);
    MPI_Comm_set_name(dup1, "ring.dup1");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    a = rank;
    MPI_Irecv(&b, 1, MPI_INT, (rank + size - 1) % size, 1, dup1, &rq[0]);
    MPI_Isend(&a, 1, MPI_INT, (rank + 1) % size, 1, dup1, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Allreduce(&rank, &s, 1, MPI_INT, MPI_SUM, half);
    MPI_Barrier(dup2);
    MPI_Comm_free(&dup1);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&half);
    MPI_Finalize();
    if (b != (rank + size - 1) % size || (rank == 0 && token != 3 * (size - 1)))
        return 1;
    return 0;
}
PROG

cat >"$TMP/fring.f90" <<'PROG'
program fring
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, token, i, s
  integer :: status(MPI_STATUS_SIZE)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  token = 0
  do i = 1, 3
    if (rank == 0) then
      call MPI_SEND(token, 1, MPI_INTEGER, 1, 5, MPI_COMM_WORLD, ierr)
      call MPI_RECV(token, 1, MPI_INTEGER, nprocs - 1, 5, MPI_COMM_WORLD, &
                    status, ierr)
    else
      call MPI_RECV(token, 1, MPI_INTEGER, rank - 1, 5, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      token = token + 1
      call MPI_SEND(token, 1, MPI_INTEGER, mod(rank + 1, nprocs), 5, &
                    MPI_COMM_WORLD, ierr)
    end if
  end do
  call MPI_ALLREDUCE(rank, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)
  if (s /= nprocs * (nprocs - 1) / 2) stop 1
end program fring
PROG

# check NAME [fortran]: the trace's archive, read with both readers.
check() {
    local name=$1 archive
    wait_state "$name" complete 60
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >/dev/null ||
        fail "$name: otf2-print rejects $archive"
    "$PY" - "$archive" "${2:-c}" <<'PY' || fail "$name: the archive is not what the ring did"
import collections, sys, otf2
fortran = sys.argv[2] == "fortran"
want = {"MpiSend": 3, "MpiRecv": 3, "MpiIsend": 1, "MpiIsendComplete": 1,
        "MpiIrecvRequest": 1, "MpiIrecv": 1, "MpiCollectiveBegin": 2,
        "MpiCollectiveEnd": 2, "CommCreate": 3, "CommDestroy": 3,
        "ProgramBegin": 1, "ProgramEnd": 1}
if fortran:
    want = {"MpiSend": 3, "MpiRecv": 3, "MpiCollectiveBegin": 2,
            "MpiCollectiveEnd": 2, "ProgramBegin": 1, "ProgramEnd": 1,
            "MpiIsend": 0, "CommCreate": 0}
bad = []
with otf2.reader.open(sys.argv[1]) as r:
    per = collections.defaultdict(collections.Counter)
    for loc, ev in r.events:
        per[loc.group.name][type(ev).__name__] += 1
    if len(per) != 4:
        bad.append("%d ranks, not 4" % len(per))
    for rank, c in sorted(per.items()):
        for kind, n in want.items():
            if c[kind] != n:
                bad.append("%s: %d %s, want %d" % (rank, c[kind], kind, n))
        if c["Enter"] != c["Leave"] or c["Enter"] < (7 if fortran else 14):
            bad.append("%s: %d Enter, %d Leave" % (rank, c["Enter"], c["Leave"]))
    comms = collections.Counter((c.name, len(c.group.members))
                                for c in r.definitions.comms)
    if fortran:
        if comms != {("MPI_COMM_WORLD", 4): 1, ("MPI_COMM_SELF", 0): 1}:
            bad.append("communicators: %s" % dict(comms))
    elif comms != {("MPI_COMM_WORLD", 4): 1, ("MPI_COMM_SELF", 0): 1,
                 ("ring.dup1", 4): 1, ("MPI_Comm_dup", 4): 1,
                 ("MPI_Comm_split", 2): 2}:
        bad.append("communicators: %s" % dict(comms))
for b in bad:
    print("ring:", b)
sys.exit(1 if bad else 0)
PY
}

# script_launch NAME PROGRAM ARGS...: PROGRAM under weft run as trace
# NAME, which starts the MPI ring's mpirun (4 ranks) and says "script
# went on: 0" after it: two traces of that name, the program's tree and
# the launch's 4 ranks (checked), and no other.
script_launch() {
    local name=$1 ids before after end
    shift
    before=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
    LD_PRELOAD=$(echo $WEFT_SAN_PRELOAD) timeout 120 "$WEFT" run \
        --trace "$name" -- "$@" >"$TMP/$name.out" 2>&1 ||
        fail "$name: weft run -- $1 ... failed: $(cat "$TMP/$name.out")"
    grep -q "script went on: 0" "$TMP/$name.out" ||
        fail "$name: the script's mpirun failed: $(cat "$TMP/$name.out")"
    ids=
    end=$((SECONDS + 60))
    while [ $SECONDS -lt $end ]; do
        ids=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json | "$PY" -c '
import json, sys
ts = [t for t in json.load(sys.stdin) if t["name"] == sys.argv[1]]
if len(ts) == 2 and all(t["state"] in ("complete", "partial", "failed") for t in ts):
    print(*[t["id"] for t in ts if t["members"] == 4])' "$name")
        [ -n "$ids" ] && break
        sleep 0.1
    done
    [ "$(echo "$ids" | wc -w)" = 1 ] ||
        fail "$name: the script's traces are not its tree and one launch of 4 ranks: $("$WEFT" --catalog "$SPOOL/catalog.db" list)"
    after=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$after" = $((before + 2)) ] ||
        fail "$name: the script made $((after - before)) traces, not 2"
    check "$ids"
}

# traces_named PREFIX: the names of the catalog's traces that begin with
# PREFIX, once there is one (at most 60 s). weftd writes a new trace's
# catalog row off its loop, behind the catalog work before it: on a busy
# machine it came after mpirun had returned (CI, once).
traces_named() {
    local names= end=$((SECONDS + 60))
    while [ $SECONDS -lt $end ]; do
        names=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json |
                "$PY" -c 'import json,sys; print(*[t["name"] for t in json.load(sys.stdin) if t["name"].startswith(sys.argv[1])])' "$1")
        [ -n "$names" ] && break
        sleep 0.1
    done
    echo "$names"
}

ran=0
start_weftd
for flavour in openmpi mpich; do
    mpicc=mpicc.$flavour
    mpirun=mpirun.$flavour
    if ! command -v "$mpicc" >/dev/null || ! command -v "$mpirun" >/dev/null ||
        [ ! -e "$WEFT_LIBDIR/libweft-mpi-$flavour.so" ]; then
        echo "SKIP: $flavour: $mpicc, $mpirun or libweft-mpi-$flavour.so missing"
        continue
    fi
    "$mpicc" -o "$TMP/ring-$flavour" "$TMP/ring.c" ||
        fail "$mpicc cannot build the ring"
    args=(-np 4)
    [ "$flavour" = openmpi ] && args+=(--oversubscribe -x WEFT_LIBDIR -x WEFT_SERVER -x LD_PRELOAD -x ASAN_OPTIONS)
    # A sanitized recorder needs the sanitizers' runtimes first.
    LD_PRELOAD=$(echo $WEFT_SAN_PRELOAD) timeout 120 "$mpirun" "${args[@]}" \
        "$WEFT" run -- "$TMP/ring-$flavour" >"$TMP/$flavour.out" 2>&1 ||
        fail "$flavour: the ring failed under weft run: $(cat "$TMP/$flavour.out")"
    name=$(traces_named "ring-$flavour")
    [ -n "$name" ] || fail "$flavour: no trace ring-$flavour-* in the catalog"
    [ "$(echo "$name" | wc -w)" = 1 ] || fail "$flavour: several traces: $name"
    check "$name"
    ran=$((ran + 1))

    # weft run in front of the launcher: the same trace of the tasks,
    # and nothing of the launcher (one trace more, with the 4 ranks)
    before=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
    LD_PRELOAD=$(echo $WEFT_SAN_PRELOAD) timeout 120 "$WEFT" run -v \
        --trace "lring-$flavour" -- "$mpirun" "${args[@]}" \
        "$TMP/ring-$flavour" >"$TMP/l$flavour.out" 2>&1 ||
        fail "$flavour: weft run -- $mpirun failed: $(cat "$TMP/l$flavour.out")"
    grep -q "is a parallel launcher" "$TMP/l$flavour.out" ||
        fail "$flavour: weft run did not see $mpirun as a launcher: $(cat "$TMP/l$flavour.out")"
    [ "$(grep -c "ring-$flavour: dynamically linked" "$TMP/l$flavour.out")" = 4 ] ||
        fail "$flavour: not every task ran under weft run: $(cat "$TMP/l$flavour.out")"
    wait_state "lring-$flavour" complete 60
    after=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$after" = $((before + 1)) ] ||
        fail "$flavour: weft run -- $mpirun made $((after - before)) traces, not 1"
    check "lring-$flavour"

    # mpirun started by a traced script (`weft run -- sh -c "mpirun ..."`,
    # a batch script): the launch is weft run'd too (recorders/exec.c), so
    # the ranks are the same trace; the script's tree another of that name
    script_launch "sring-$flavour" sh -c '"$@"; echo "script went on: $?"' \
        sh "$mpirun" "${args[@]}" "$TMP/ring-$flavour"
    # the same from a program that starts mpirun with posix_spawnp (no
    # exec of its own: python's os.posix_spawnp)
    script_launch "pring-$flavour" /usr/bin/python3 -c '
import os, sys
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ)
print("script went on: %d" % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))' \
        "$mpirun" "${args[@]}" "$TMP/ring-$flavour"

    mpif90=mpif90.$flavour
    if ! command -v "$mpif90" >/dev/null; then
        echo "SKIP: $flavour: no $mpif90: the Fortran ring did not run"
        continue
    fi
    (cd "$TMP" && "$mpif90" -o "$TMP/fring-$flavour" "$TMP/fring.f90") ||
        fail "$mpif90 cannot build the Fortran ring"
    LD_PRELOAD=$(echo $WEFT_SAN_PRELOAD) timeout 120 "$mpirun" "${args[@]}" \
        "$WEFT" run -- "$TMP/fring-$flavour" >"$TMP/f$flavour.out" 2>&1 ||
        fail "$flavour: the Fortran ring failed: $(cat "$TMP/f$flavour.out")"
    name=$(traces_named "fring-$flavour")
    [ "$(echo "$name" | wc -w)" = 1 ] ||
        fail "$flavour: not one trace fring-$flavour-*: '$name'"
    check "$name" fortran
done
[ "$ran" -gt 0 ] || { echo "SKIP: no MPI implementation"; exit 77; }
echo ok

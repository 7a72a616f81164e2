#!/bin/bash
# e2e_openmp_mpi.sh - unmodified hybrid programs, MPI between ranks and
# OpenMP (GCC's libgomp; hybrid.c on clang's libomp too) inside each,
# traced by
# `mpirun -np 2 weft run -- ./prog` with weft run's default recorders,
# with Open MPI and with MPICH (a flavour whose compiler, mpirun or
# library is missing prints a SKIP line naming it; 77 when none runs):
#   - hybrid.c (mpicc -fopenmp): MPI_Init_thread(MPI_THREAD_FUNNELED),
#     then iterations of a team of 2 (a dynamic loop, a critical section,
#     a barrier, and the master's halo exchange with its neighbours,
#     MPI_Sendrecv inside the team) and an MPI_Allreduce after it; then a
#     team whose single member creates tasks in a taskgroup; built by
#     mpicc (GCC) and by mpicc with clang -fopenmp=libomp (LLVM's
#     libomp, whose OMPT tool libweft-openmp is; SKIP without clang);
#   - fhybrid.f90 (mpif90 -fopenmp, `use mpi`): teams of 2 with a
#     dynamic loop and a critical section, then a combined `parallel do
#     schedule(dynamic)` with a critical section in it; MPI_SENDRECV and
#     MPI_ALLREDUCE between them.
# Each program counts what it does (the team sizes from
# omp_get_num_threads) and writes one report per rank. Each run gives the
# untraced run's output; weft run preloaded libweft-mpi and libweft-openmp
# on both ranks; the trace, one for both ranks, is complete, accepted by
# otf2-print -Werror, read alike by the python reader (check_archive.py,
# given otf2-print's events per location and kind), and holds:
#   - per rank, what tests/check_openmp.py --ranks wants: the OpenMP
#     model (ThreadFork and ThreadJoin paired, every member's
#     ThreadTeamBegin, parallel region, implicit barrier and
#     ThreadTeamEnd, loops, critical sections, tasks) and exactly the
#     rank's counts;
#   - regions of both paradigms, MPI and OPENMP, entered on every rank;
#     every MPI event and every ThreadFork and ThreadJoin on one location
#     per rank, its master thread (MPI_THREAD_FUNNELED), the MPI calls
#     the rank counted (hybrid.c's MPI_Sendrecv inside its team's
#     parallel region), every message sent received once.
. "$(dirname "$0")/lib.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
unset WEFT_TRACE OMP_NUM_THREADS OMP_PROC_BIND OMP_WAIT_POLICY OMP_DYNAMIC \
    OMP_THREAD_LIMIT OMP_MAX_ACTIVE_LEVELS OMP_NESTED OMP_SCHEDULE
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"
CHECK="$WEFT_SRCDIR/tests/check_openmp.py"
NP=2
# A sanitized recorder needs the sanitizers' runtimes first: the list of
# their paths, one space apart, for mpirun's LD_PRELOAD.
# shellcheck disable=SC2086,SC2116
SAN_PRELOAD=$(echo $WEFT_SAN_PRELOAD)
[ -f "$WEFT_LIBDIR/libweft-openmp.so" ] || fail "$WEFT_LIBDIR/libweft-openmp.so missing"

cat >"$TMP/hybrid.c" <<'PROG'
#include <mpi.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>

#define ITERS 3         /* a team, a halo exchange, an allreduce each */
#define TEAM 2          /* every team's size (num_threads) */
#define N 16            /* the dynamic loop's iterations */
#define NTASKS 4        /* tasks in the taskgroup */

/* The report's counts (check_openmp.py --ranks, and the MPI calls) */
#define COUNTS(X)                                                       \
    X(forks) X(requested_threads) X(team_begins) X(threads) X(loop)     \
    X(loop_barrier) X(critical) X(barrier) X(barrier_explicit)          \
    X(single) X(single_barrier) X(taskgroup) X(task_create) X(task)     \
    X(sendrecv) X(sendrecv_in_team) X(allreduce)

static struct {
#define X(name) atomic_long name;
    COUNTS(X)
#undef X
} counted;

#define COUNT(name) atomic_fetch_add(&counted.name, 1)

static _Thread_local int seen;  /* this thread ran a team's body */
static atomic_int smallest = TEAM; /* the smallest team seen */

static void fork_team(int want)
{
    COUNT(forks);
    atomic_fetch_add(&counted.requested_threads, want);
}

/* The calling thread begins a team's body. */
static void member(void)
{
    int n = omp_get_num_threads();

    if (!seen) {
        seen = 1;
        COUNT(threads);
    }
    COUNT(team_begins);
    if (n < atomic_load(&smallest))
        atomic_store(&smallest, n);
}

int main(int argc, char **argv)
{
    int provided, rank, size, left, right;
    long total = 0, global = 0, halo = -1, tasked = 0;
    atomic_long done = 0;
    char path[4096];
    FILE *f;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED || argc != 2) {
        fprintf(stderr, "usage: hybrid REPORT (thread level %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    for (int it = 0; it < ITERS; it++) {
        long mine = 0;

        fork_team(TEAM);
#pragma omp parallel num_threads(TEAM)
        {
            long part = 0;

            member();
            COUNT(loop);
#pragma omp for schedule(dynamic)
            for (int i = 0; i < N; i++)
                part += (long)(i + 1) * (rank + 1) + it;
            COUNT(loop_barrier);
#pragma omp critical
            {
                COUNT(critical);
                mine += part;
            }
            COUNT(barrier);
            COUNT(barrier_explicit);
#pragma omp barrier
#pragma omp master
            {
                COUNT(sendrecv);
                COUNT(sendrecv_in_team);
                MPI_Sendrecv(&mine, 1, MPI_LONG, right, it, &halo, 1,
                             MPI_LONG, left, it, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            }
        }
        total += mine + halo;
        COUNT(allreduce);
        MPI_Allreduce(&total, &global, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }

    fork_team(TEAM);
#pragma omp parallel num_threads(TEAM)
    {
        member();
        COUNT(single);
#pragma omp single
        {
            COUNT(taskgroup);
#pragma omp taskgroup
            for (int k = 1; k <= NTASKS; k++) {
                COUNT(task_create);
#pragma omp task firstprivate(k)
                {
                    COUNT(task);
                    atomic_fetch_add(&done, k);
                }
            }
            tasked = atomic_load(&done);
        }
        COUNT(barrier);
        COUNT(single_barrier);
    }
    MPI_Finalize();

    printf("hybrid: rank %d of %d: sum %ld, tasks %ld, teams of %d\n", rank,
           size, global, tasked, atomic_load(&smallest));
    snprintf(path, sizeof path, "%s.%d", argv[1], rank);
    f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f, "{\"rank\": %d", rank);
#define X(name) fprintf(f, ", \"%s\": %ld", #name, atomic_load(&counted.name));
    COUNTS(X)
#undef X
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return tasked == NTASKS * (NTASKS + 1) / 2 ? 0 : 1;
}
PROG

cat >"$TMP/fhybrid.f90" <<'PROG'
program fhybrid
  use mpi
  use omp_lib
  implicit none
  integer, parameter :: iters = 2, team = 2, n = 16
  integer :: ierr, provided, rank, nprocs, left, right, it, i, u, size
  integer :: forks, requested, begins, threads, loops, barriers, crit
  integer :: sendrecvs, allreduces, part, mine, halo, total, global
  integer :: seen = 0
  character(len=4096) :: path
  character(len=16) :: suffix
  !$omp threadprivate(seen)

  call MPI_INIT_THREAD(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  if (provided < MPI_THREAD_FUNNELED .or. command_argument_count() /= 1) then
    write (0, '(a)') 'usage: fhybrid REPORT'
    call MPI_ABORT(MPI_COMM_WORLD, 2, ierr)
  end if
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  forks = 0; requested = 0; begins = 0; threads = 0; loops = 0
  barriers = 0; crit = 0; sendrecvs = 0; allreduces = 0; total = 0
  size = 0
  do it = 1, iters
    ! a team: every member counts itself, meets the loop and the critical
    mine = 0
    forks = forks + 1
    requested = requested + team
    !$omp parallel num_threads(team) private(part)
    if (seen == 0) then
      seen = 1
      !$omp atomic
      threads = threads + 1
    end if
    !$omp atomic
    begins = begins + 1
    !$omp atomic
    loops = loops + 1
    part = 0
    !$omp do schedule(dynamic)
    do i = 1, n
      part = part + i * (rank + 1) + it
    end do
    !$omp end do
    !$omp atomic
    barriers = barriers + 1
    !$omp critical
    crit = crit + 1
    mine = mine + part
    !$omp end critical
    !$omp end parallel
    sendrecvs = sendrecvs + 1
    call MPI_SENDRECV(mine, 1, MPI_INTEGER, right, it, halo, 1, MPI_INTEGER, &
                      left, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    allreduces = allreduces + 1
    call MPI_ALLREDUCE(mine + halo, global, 1, MPI_INTEGER, MPI_SUM, &
                       MPI_COMM_WORLD, ierr)
    total = total + global
  end do
  ! combined: each member's loop region, no barrier in it; the team's
  ! size from omp_get_num_threads (its threads are the teams' above)
  forks = forks + 1
  requested = requested + team
  mine = 0
  !$omp parallel do schedule(dynamic) num_threads(team)
  do i = 1, n
    !$omp critical
    crit = crit + 1
    mine = mine + i
    size = omp_get_num_threads()
    !$omp end critical
  end do
  !$omp end parallel do
  begins = begins + size
  loops = loops + size
  allreduces = allreduces + 1
  call MPI_ALLREDUCE(mine, global, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                     ierr)
  total = total + global
  call MPI_FINALIZE(ierr)

  write (*, '(a,i0,a,i0,a,i0,a,i0)') 'fhybrid: rank ', rank, ' of ', &
    nprocs, ': sum ', total, ', combined team of ', size
  call get_command_argument(1, path)
  write (suffix, '(a,i0)') '.', rank
  open (newunit=u, file=trim(path)//trim(suffix), status='replace', &
        action='write')
  write (u, '(a,i0,10(a,i0),a)') '{"rank": ', rank, ', "forks": ', forks, &
    ', "requested_threads": ', requested, ', "team_begins": ', begins, &
    ', "threads": ', threads, ', "loop": ', loops, ', "loop_barrier": ', &
    barriers, ', "critical": ', crit, ', "sendrecv": ', sendrecvs, &
    ', "sendrecv_in_team": ', 0, ', "allreduce": ', allreduces, '}'
  close (u)
end program fhybrid
PROG

# check_hybrid ANCHOR REPORT...: the MPI side of a hybrid run's archive
# and where it lies (see the top of the file), against the ranks'
# reports (sendrecv, sendrecv_in_team, allreduce, forks).
check_hybrid() {
    PYTHONPATH="$WEFT_SRCDIR/tests" "$PY" - "$@" <<'PY'
import collections, json, sys
import otf2
import p2p
MPI, OPENMP = otf2.Paradigm.MPI, otf2.Paradigm.OPENMP
reports = {}
for path in sys.argv[2:]:
    with open(path) as f:
        j = json.load(f)
    reports[j["rank"]] = j
bad = []
rank_of = p2p.rank_of
with otf2.reader.open(sys.argv[1]) as r:
    paradigms = collections.defaultdict(set)     # rank -> regions' paradigms
    mpi_locs = collections.defaultdict(set)      # rank -> locations
    fork_locs = collections.defaultdict(set)
    visits = collections.defaultdict(collections.Counter)
    in_team = collections.Counter()              # rank -> Sendrecv in a team
    kinds = collections.defaultdict(collections.Counter)
    stacks = collections.defaultdict(list)
    msgs = p2p.Messages()


    for loc, ev in r.events:
        rank, kind = rank_of(loc), type(ev).__name__
        kinds[rank][kind] += 1
        st = stacks[loc]
        if kind == "Enter":
            paradigms[rank].add(ev.region.paradigm)
            if ev.region.paradigm == MPI:
                mpi_locs[rank].add(loc)
                visits[rank][ev.region.name] += 1
                if ev.region.name == "MPI_Sendrecv" and any(
                        n.startswith("!$omp parallel") for n in st):
                    in_team[rank] += 1
            st.append(ev.region.name)
        elif kind == "Leave":
            if st:
                st.pop()
        elif kind.startswith("Mpi"):
            mpi_locs[rank].add(loc)
        elif kind in ("ThreadFork", "ThreadJoin"):
            fork_locs[rank].add(loc)
        msgs.event(rank, kind, ev)
    ranks = sorted({rank_of(loc) for loc in r.definitions.locations})
    if ranks != sorted(reports):
        bad.append("ranks %s in the archive, reports of %s" %
                   (ranks, sorted(reports)))
    for rank, rep in sorted(reports.items()):
        where = "rank %d" % rank
        if not {MPI, OPENMP} <= paradigms[rank]:
            bad.append("%s: regions entered of paradigms %s, not MPI and "
                       "OPENMP" % (where, sorted(map(str, paradigms[rank]))))
        if len(mpi_locs[rank]) != 1 or fork_locs[rank] != mpi_locs[rank]:
            bad.append("%s: MPI events on %s, ThreadFork and ThreadJoin on "
                       "%s: not one location, the master thread" %
                       (where, sorted(l.name for l in mpi_locs[rank]),
                        sorted(l.name for l in fork_locs[rank])))
        for what, got, want in (
                ("ThreadFork", kinds[rank]["ThreadFork"], rep["forks"]),
                ("MPI_Sendrecv", visits[rank]["MPI_Sendrecv"],
                 rep["sendrecv"]),
                ("MPI_Sendrecv in a team", in_team[rank],
                 rep["sendrecv_in_team"]),
                ("MpiSend", kinds[rank]["MpiSend"], rep["sendrecv"]),
                ("MpiRecv", kinds[rank]["MpiRecv"], rep["sendrecv"]),
                ("MPI_Allreduce", visits[rank]["MPI_Allreduce"],
                 rep["allreduce"]),
                ("MpiCollectiveBegin", kinds[rank]["MpiCollectiveBegin"],
                 rep["allreduce"]),
                ("MpiCollectiveEnd", kinds[rank]["MpiCollectiveEnd"],
                 rep["allreduce"]),
                ("ProgramBegin", kinds[rank]["ProgramBegin"], 1),
                ("ProgramEnd", kinds[rank]["ProgramEnd"], 1)):
            if got != want:
                bad.append("%s: %d %s, the program made %d" %
                           (where, got, what, want))
        for name in ("MPI_Init_thread", "MPI_Finalize"):
            if visits[rank][name] != 1:
                bad.append("%s: %d %s" % (where, visits[rank][name], name))
    bad.extend(msgs.problems())
for b in bad:
    print(b)
if not bad:
    print("%d messages matched" % msgs.matched())
sys.exit(1 if bad else 0)
PY
}

# unsaid PROGRAM: stdin without weft run -v's messages on PROGRAM,
# however the ranks' messages interleave, and without empty lines.
unsaid() {
    "$PY" -c '
import re, sys
text = sys.stdin.read().replace("weft run: ", "")
text = re.sub(re.escape(sys.argv[1]) +
              r": [^;\n]*; preloading(?: [^ \n]+?\.so(?=[ \n/]|$))+", "", text)
sys.stdout.write("".join(l for l in text.splitlines(True) if l.strip()))
' "$1"
}

# hybrid FLAVOUR PROG [RUNTIME]: $TMP/PROG-FLAVOUR run untraced, then
# traced under mpirun.FLAVOUR (args), its reports in
# $TMP/PROG-FLAVOUR.report.RANK; its trace checked (see the top of the
# file), its OpenMP as of RUNTIME (check_openmp.py --runtime: gnu, the
# default, or llvm).
hybrid() {
    local flavour=$1 prog=$2-$1 runtime=${3:-gnu} name anchor reports=()
    # (LD_PRELOAD as traced: mpirun's -x warns of an unset one)
    LD_PRELOAD=$SAN_PRELOAD timeout 120 "mpirun.$flavour" \
        "${args[@]}" "$TMP/$prog" "$TMP/$prog.plain" \
        >"$TMP/$prog.plain.out" 2>"$TMP/$prog.plain.err" ||
        fail "$prog failed untraced: $(cat "$TMP/$prog.plain.err")"
    LD_PRELOAD=$SAN_PRELOAD timeout 120 "mpirun.$flavour" \
        "${args[@]}" "$WEFT" run -v -- "$TMP/$prog" "$TMP/$prog.report" \
        >"$TMP/$prog.out" 2>"$TMP/$prog.err" ||
        fail "$prog failed under weft run: $(cat "$TMP/$prog.err")"
    [ "$(sort "$TMP/$prog.plain.out")" = "$(sort "$TMP/$prog.out")" ] ||
        fail "$prog: its output differs traced: $(cat "$TMP/$prog.plain.out" "$TMP/$prog.out")"
    # (the launcher may interleave the ranks' lines: weft run writes
    # "weft run: ", its message and the newline apart)
    for lib in "mpi-$flavour" openmp; do
        [ "$(grep -o "libweft-$lib\.so" "$TMP/$prog.err" | wc -l)" = "$NP" ] ||
            fail "$prog: weft run did not preload libweft-$lib on each rank: $(cat "$TMP/$prog.err")"
    done
    unsaid "$TMP/$prog" <"$TMP/$prog.err" >"$TMP/$prog.said"
    unsaid "$TMP/$prog" <"$TMP/$prog.plain.err" >"$TMP/$prog.plain.said"
    cmp -s "$TMP/$prog.plain.said" "$TMP/$prog.said" ||
        fail "$prog said, traced: $(cat "$TMP/$prog.said")"
    for rank in $(seq 0 $((NP - 1))); do
        reports+=("$TMP/$prog.report.$rank")
    done

    name=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json |
           "$PY" -c 'import json,sys; print(*[t["name"] for t in json.load(sys.stdin) if t["name"].startswith(sys.argv[1] + "-")])' "$prog")
    [ "$(echo "$name" | wc -w)" = 1 ] ||
        fail "$prog: not one trace $prog-* in the catalog: '$name'"
    wait_state "$name" complete 60
    [ "$(json_get "$TMP/show.json" 'j["members"]')" = "$NP" ] ||
        fail "$prog: trace $name has not $NP members: $(cat "$TMP/show.json")"
    anchor=$(json_get "$TMP/show.json" 'j["archive"]')
    readers_agree "$prog" "$anchor"
    "$PY" "$CHECK" --runtime "$runtime" --ranks "$anchor" "${reports[@]}" >"$TMP/$prog.check" ||
        fail "$prog: the OpenMP of the archive is not what the ranks did: $(head -40 "$TMP/$prog.check")"
    check_hybrid "$anchor" "${reports[@]}" >"$TMP/$prog.mpi" ||
        fail "$prog: the MPI of the archive is not what the ranks did: $(head -40 "$TMP/$prog.mpi")"
    echo "ok: $prog: trace $name: $(cat "$TMP/$prog.mpi"); $("$PY" -c '
import json, sys
for rank, s in sorted(json.load(open(sys.argv[1])).items()):
    print("rank %s: %d locations, %d teams begun, %d tasks, OpenMP %s;" % (
        rank, s["locations"], s["events"].get("ThreadTeamBegin", 0),
        s["tasks"], ", ".join("%s %d" % kn for kn in sorted(s["enters"].items()))))
' "$TMP/$prog.check" | tr '\n' ' ')"
}

# LLVM's libomp: clang, and a libweft-openmp that is its OMPT tool
LLVM=1 LLVM_WHY=
if ! command -v clang >/dev/null; then
    LLVM= LLVM_WHY="no clang"
elif ! nm -D "$WEFT_LIBDIR/libweft-openmp.so" | grep -q " T ompt_start_tool$"; then
    LLVM= LLVM_WHY="libweft-openmp.so is no OMPT tool (built without omp-tools.h)"
fi

ran=0
start_weftd
for flavour in openmpi mpich; do
    missing=()
    for tool in "mpicc.$flavour" "mpirun.$flavour"; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    [ -e "$WEFT_LIBDIR/libweft-mpi-$flavour.so" ] ||
        missing+=("libweft-mpi-$flavour.so")
    if [ ${#missing[@]} -gt 0 ]; then
        echo "SKIP: $flavour: ${missing[*]} missing"
        continue
    fi
    args=(-np "$NP")
    # (not bound to a core each: a rank's team has 2 threads)
    [ "$flavour" = openmpi ] && args+=(--oversubscribe --bind-to none -x WEFT_LIBDIR -x WEFT_SERVER -x LD_PRELOAD -x ASAN_OPTIONS)

    "mpicc.$flavour" -fopenmp -g -o "$TMP/hybrid-$flavour" "$TMP/hybrid.c" ||
        fail "mpicc.$flavour -fopenmp cannot build hybrid.c"
    # (a compiler other than GCC, clang say, gives its own OpenMP runtime)
    if ! readelf -d "$TMP/hybrid-$flavour" | grep -q "NEEDED.*libgomp"; then
        echo "SKIP: $flavour: mpicc.$flavour -fopenmp does not use GCC's libgomp"
        continue
    fi
    hybrid "$flavour" hybrid
    ran=$((ran + 1))

    # the same built by clang on LLVM's libomp (the MPI wrapper told to
    # use clang): libomp tells the last team's other threads their end
    # only as it shuts them down, which libweft-openmp has it do before
    # MPI_Finalize closes the session
    if [ -z "$LLVM" ]; then
        echo "SKIP: $flavour: hybrid.c not traced on LLVM's libomp: $LLVM_WHY"
    elif OMPI_CC=clang MPICH_CC=clang "mpicc.$flavour" -fopenmp=libomp -g \
            -o "$TMP/chybrid-$flavour" "$TMP/hybrid.c" 2>"$TMP/chybrid.log" &&
         readelf -d "$TMP/chybrid-$flavour" | grep -q "NEEDED.*libomp"; then
        hybrid "$flavour" chybrid llvm
    else
        fail "mpicc.$flavour with clang does not build hybrid.c on libomp: $(head -5 "$TMP/chybrid.log")"
    fi

    if ! command -v "mpif90.$flavour" >/dev/null; then
        echo "SKIP: $flavour: mpif90.$flavour missing: the Fortran program did not run"
        continue
    fi
    (cd "$TMP" && "mpif90.$flavour" -fopenmp -g -o "$TMP/fhybrid-$flavour" \
        "$TMP/fhybrid.f90") || fail "mpif90.$flavour -fopenmp cannot build fhybrid.f90"
    hybrid "$flavour" fhybrid
done
[ "$ran" -gt 0 ] || { echo "SKIP: no MPI implementation"; exit 77; }
stop_weftd
echo ok

#!/bin/bash
# e2e_lammps.sh - a real hybrid MPI + OpenMP program nobody here wrote,
# traced whole (#35): Debian's LAMMPS (`lmp`, package lammps: Open MPI
# and GCC's libgomp) under
# `mpirun.openmpi -np 2 ... weft run -- lmp -in in.lj`, 2 OpenMP threads
# per rank (OMP_NUM_THREADS: Debian builds LAMMPS without its OPENMP
# package, so there are no /omp styles and no `-sf omp -pk omp N`; the
# threads come from OMP_NUM_THREADS, which LAMMPS hands to FFTW). The
# input is a small charged Lennard-Jones melt written here (LAMMPS's
# bench/in.lj is not packaged; lammps-examples, 145 MB installed, has
# examples/melt/in.melt, the same melt uncharged, which without charges
# and PPPM runs no OpenMP at all): 864 atoms, 50 steps, PPPM, so that
# each step runs
# FFTW's OpenMP threads (libfftw3_omp: parallel regions after the remaps'
# MPI_Waitany), and a `dump custom/mpiio`, whose text LAMMPS formats in
# a parallel region of its own followed by an orphaned `omp barrier`
# (DumpCustomMPIIO::convert_string_omp; its MPI_File_* calls are not
# recorded: libweft-mpi does not wrap MPI-IO); the charges' sums are
# KSpace::qsum_qsq's `parallel for reduction`, whose merge GCC does in
# GOMP_atomic_start/end. Then:
#   - the traced run exits 0 and prints the same thermo table and
#     neighbor statistics as the untraced one, and its dump files are
#     byte for byte the same;
#   - its trace, one for both ranks, is complete, accepted by otf2-print
#     -Werror and read alike by the python reader (readers_agree);
#   - the OpenMP model holds on every location of both processes
#     (check_openmp.py --model: pairing, nesting, teams and their groups,
#     implicit barriers, locks, tasks; no totals: LAMMPS reports none);
#   - per rank: regions of paradigm MPI and OPENMP entered; MPI and the
#     forks on one location, the master thread (LAMMPS calls MPI outside
#     parallel regions); every fork asks for OMP_NUM_THREADS threads and
#     that many locations have OpenMP events; LAMMPS's own constructs
#     are there: an "!$omp atomic" inside "!$omp parallel" on each of
#     them (qsum_qsq), and one "!$omp barrier" outside any parallel
#     region, on the master, per dump written; OpenMP regions are named
#     after the construct alone, as Debian's main archive has no debug
#     information for LAMMPS or FFTW (where liblammps has it, in the
#     binary or as
#     /usr/lib/debug/.build-id/.../*.debug, those two are named after
#     kspace.cpp and dump_custom_mpiio.cpp instead); every message sent
#     is received once;
#   - the same input on 1 rank without mpirun (Open MPI's singleton), 3
#     OpenMP threads: all of the above.
# (Open MPI's progress threads are locations only in a sanitized build:
# libasan's read and writev interceptors, preloaded first, hide that
# Open MPI calls them, which the io recorder leaves out otherwise.)
# Prints a summary line ("ok: ...") per run: locations, teams, parallel
# regions, barriers, messages, and the OpenMP regions that took the most
# time (exclusive, summed over locations).
. "$(dirname "$0")/lib.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
unset WEFT_TRACE OMP_PROC_BIND OMP_DYNAMIC OMP_THREAD_LIMIT \
    OMP_MAX_ACTIVE_LEVELS OMP_NESTED OMP_SCHEDULE
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"
CHECK="$WEFT_SRCDIR/tests/check_openmp.py"
NP=2
THREADS=2
DUMPS=2                 # the input's dump: steps 0 and 50
# Two ranks of two threads on this project's 2-core machines: libgomp's
# threads spin while they wait (OMP_WAIT_POLICY unset), and 4 spinning
# threads on 2 cores made the 50 steps take 8 s untraced instead of
# 0.07 s; passive waits sleep.
export OMP_NUM_THREADS=$THREADS OMP_WAIT_POLICY=passive
# A sanitized recorder needs the sanitizers' runtimes first: the list of
# their paths, one space apart, for mpirun's LD_PRELOAD.
# shellcheck disable=SC2086,SC2116
SAN_PRELOAD=$(echo $WEFT_SAN_PRELOAD)

LMP=$(command -v lmp) ||
    { echo "SKIP: no lmp (scripts/deps.sh --tests installs lammps)"; exit 77; }
command -v mpirun.openmpi >/dev/null ||
    { echo "SKIP: no mpirun.openmpi"; exit 77; }
for lib in openmp mpi-openmpi; do
    [ -f "$WEFT_LIBDIR/libweft-$lib.so" ] ||
        { echo "SKIP: libweft-$lib.so not built"; exit 77; }
done
LIBLAMMPS=$(ldd "$LMP" | awk '$1 ~ /^liblammps\.so/ { print $3 }')
[ -f "$LIBLAMMPS" ] || fail "$LMP does not load liblammps: $(ldd "$LMP")"
readelf -d "$LIBLAMMPS" | grep -q "NEEDED.*libgomp" ||
    { echo "SKIP: $LIBLAMMPS is not built on GCC's libgomp"; exit 77; }
readelf -d "$LIBLAMMPS" | grep -q "NEEDED.*libmpi\.so" ||
    { echo "SKIP: $LIBLAMMPS is not built on Open MPI"; exit 77; }
# Debug information of liblammps: in it, or where libdw looks by build id
DEBUG=0
id=$(readelf -n "$LIBLAMMPS" | sed -n 's/.*Build ID: *//p')
if readelf -S "$LIBLAMMPS" | grep -q '\.debug_info' ||
        { [ -n "$id" ] && [ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; }; then
    DEBUG=1
fi

cat >"$TMP/in.lj" <<'IN'
# a charged Lennard-Jones melt: 864 atoms, half of them +0.5, half -0.5
units		lj
atom_style	charge
lattice		fcc 0.8442
region		box block 0 6 0 6 0 6
create_box	2 box
create_atoms	1 box
mass		* 1.0
variable	odd atom id%2
group		odd variable odd
set		group odd type 2
set		type 1 charge 0.5
set		type 2 charge -0.5
velocity	all create 1.0 87287 loop geom
pair_style	lj/cut/coul/long 2.5
pair_coeff	* * 1.0 1.0
kspace_style	pppm 1.0e-3
neighbor	0.3 bin
neigh_modify	every 2 delay 0 check yes
fix		1 all nve
dump		1 all custom/mpiio 50 dump.*.mpiio id type q x y z
thermo		10
run		50
IN

# deterministic OUT: what of LAMMPS's output OUT must be the same run to
# run: the thermo table (step, temperature, energies, pressure) and the
# neighbor statistics, which the same input, ranks and threads compute
# the same way each time. Not the rest: LAMMPS also prints timings (loop
# time, performance, CPU use, the MPI task timing breakdown, total wall
# time) that differ from run to run.
deterministic() {
    sed -n -e '/^Step /,/^Loop time/{/^Loop time/!p}' \
        -e '/^Total # of neighbors/p' -e '/^Ave neighs/p' \
        -e '/^Neighbor list builds/p' -e '/^Dangerous builds/p' "$1"
}

# check_lammps ANCHOR NP THREADS DUMPS DEBUG: the checks of each rank
# (see the top of the file) on the archive; prints the summary.
check_lammps() {
    PYTHONPATH="$WEFT_SRCDIR/tests" "$PY" - "$@" <<'PY'
import collections, re, sys
import otf2
import p2p
MPI, OPENMP = otf2.Paradigm.MPI, otf2.Paradigm.OPENMP
anchor, np, threads, dumps, debug = sys.argv[1], *map(int, sys.argv[2:])
PARALLEL, ATOMIC, BARRIER = "!$omp parallel", "!$omp atomic", "!$omp barrier"
bad = []
rank_of = p2p.rank_of
construct = lambda name: name.split(" @")[0]
with otf2.reader.open(anchor) as r:
    paradigms = collections.defaultdict(set)     # rank -> regions' paradigms
    mpi_locs = collections.defaultdict(set)      # rank -> locations
    fork_locs = collections.defaultdict(set)
    omp_locs = collections.defaultdict(set)
    asked = collections.defaultdict(collections.Counter)  # rank -> threads
    visits = collections.defaultdict(collections.Counter)
    atomic_in = collections.defaultdict(set)     # rank -> locations
    orphans = collections.defaultdict(collections.Counter)  # rank -> loc
    kinds = collections.defaultdict(collections.Counter)
    stacks = collections.defaultdict(list)       # loc -> [[name, t, child]]
    excl = collections.Counter()                 # OpenMP region -> ns
    omp_names = set()
    teams = set()                                # Comms of the teams
    msgs = p2p.Messages()


    for loc, ev in r.events:
        rank, kind = rank_of(loc), type(ev).__name__
        kinds[rank][kind] += 1
        st = stacks[loc]
        if kind == "Enter":
            reg = ev.region
            paradigms[rank].add(reg.paradigm)
            visits[rank][reg.name] += 1
            if reg.paradigm == MPI:
                mpi_locs[rank].add(loc)
            elif reg.paradigm == OPENMP:
                omp_locs[rank].add(loc)
                omp_names.add(reg.name)
                inside = [construct(f[0].name) for f in st]
                if construct(reg.name) == ATOMIC and PARALLEL in inside:
                    atomic_in[rank].add(loc)
                if construct(reg.name) == BARRIER and PARALLEL not in inside:
                    orphans[rank][loc] += 1
            st.append([reg, ev.time, 0])
        elif kind == "Leave":
            if st:
                reg, t, child = st.pop()
                if reg.paradigm == OPENMP:
                    excl[construct(reg.name)] += ev.time - t - child
                if st:
                    st[-1][2] += ev.time - t
        elif kind.startswith("Mpi"):
            mpi_locs[rank].add(loc)
        elif kind == "ThreadFork":
            fork_locs[rank].add(loc)
            asked[rank][ev.number_of_requested_threads] += 1
        elif kind == "ThreadJoin":
            fork_locs[rank].add(loc)
        elif kind == "ThreadTeamBegin":
            teams.add(ev.thread_team)
        msgs.event(rank, kind, ev)
    locations = r.definitions.locations
    ranks = sorted({rank_of(loc) for loc in locations})
    if ranks != list(range(np)):
        bad.append("ranks %s in the archive, not 0..%d" % (ranks, np - 1))
    for rank in ranks:
        where = "rank %d" % rank
        if not {MPI, OPENMP} <= paradigms[rank]:
            bad.append("%s: regions entered of paradigms %s, not MPI and "
                       "OPENMP" % (where, sorted(map(str, paradigms[rank]))))
        if len(mpi_locs[rank]) != 1 or fork_locs[rank] != mpi_locs[rank]:
            bad.append("%s: MPI events on %s, ThreadFork and ThreadJoin on "
                       "%s: not one location, the master thread" %
                       (where, sorted(l.name for l in mpi_locs[rank]),
                        sorted(l.name for l in fork_locs[rank])))
        if set(asked[rank]) != {threads}:
            bad.append("%s: forks asked for %s threads, not %d each" %
                       (where, dict(asked[rank]), threads))
        if len(omp_locs[rank]) != threads:
            bad.append("%s: OpenMP events on %d locations, not %d" %
                       (where, len(omp_locs[rank]), threads))
        if atomic_in[rank] != omp_locs[rank]:
            bad.append("%s: %s inside %s (KSpace::qsum_qsq's reduction) on "
                       "%s, not on each of %s" %
                       (where, ATOMIC, PARALLEL,
                        sorted(l.name for l in atomic_in[rank]),
                        sorted(l.name for l in omp_locs[rank])))
        # (LAMMPS formats a dump in a parallel region only with threads)
        if dict(orphans[rank]) != {l: dumps for l in mpi_locs[rank]
                                   if threads > 1}:
            bad.append("%s: %s outside parallel regions (the dump's, once "
                       "per dump) %s, not %d on the master thread" %
                       (where, BARRIER, {l.name: n for l, n in
                                         orphans[rank].items()}, dumps))
        for name in ("MPI_Init", "MPI_Finalize"):
            if visits[rank][name] != 1:
                bad.append("%s: %d %s" % (where, visits[rank][name], name))
        for kind in ("ProgramBegin", "ProgramEnd"):
            if kinds[rank][kind] != 1:
                bad.append("%s: %d %s" % (where, kinds[rank][kind], kind))
    if debug:
        # LAMMPS's own constructs named after its sources
        for c, f in ((ATOMIC, "kspace.cpp"), (BARRIER, "dump_custom_mpiio.cpp")):
            if not any(re.match(re.escape(c) + r" @" + re.escape(f) +
                                r":\d+$", n) for n in omp_names):
                bad.append("no %s region named after %s: %s" %
                           (c, f, sorted(omp_names)))
    else:
        named = sorted(n for n in omp_names if n != construct(n))
        if named:
            bad.append("OpenMP regions named after a source line without "
                       "debug information: %s" % named)
    bad.extend(msgs.problems())
    for loc, st in stacks.items():
        if st:
            bad.append("%s: regions never left: %s" %
                       (loc.name, [f[0].name for f in st]))
for b in bad[:40]:
    print(b)
if not bad:
    total = lambda kind: sum(k[kind] for k in kinds.values())
    implicit = sum(v["!$omp implicit barrier"] for v in visits.values())
    explicit = sum(v[BARRIER] for v in visits.values())
    print("%d ranks, %d locations; %d teams (Comms), %d parallel regions "
          "(ThreadFork), %d team begins; barriers: %d implicit, %d explicit "
          "(%d outside parallel regions); %d messages matched, %d "
          "collective calls; top OpenMP regions by exclusive time: %s" % (
              len(ranks), len(locations), len(teams), total("ThreadFork"),
              total("ThreadTeamBegin"), implicit, explicit,
              sum(sum(o.values()) for o in orphans.values()),
              msgs.matched(), total("MpiCollectiveBegin"),
              ", ".join("%s %.1f ms" % (n, t / 1e6)
                        for n, t in excl.most_common(4))))
sys.exit(1 if bad else 0)
PY
}

# only_trace NAME: NAME is the name of one trace of the catalog.
only_trace() {
    [ "$("$WEFT" --catalog "$SPOOL/catalog.db" list --json |
         "$PY" -c 'import json,sys; print(sum(t["name"] == sys.argv[1] for t in json.load(sys.stdin)))' "$1")" = 1 ] ||
        fail "$1: not one trace $1 in the catalog: $("$WEFT" --catalog "$SPOOL/catalog.db" list)"
}

# lammps NAME LAUNCHER...: lmp -in in.lj in $TMP/NAME.plain, then traced
# (weft run -v) as trace NAME in $TMP/NAME, both under LAUNCHER (none: a
# singleton); each exits 0, and they print the same deterministic lines
# and write the same dumps. Their wall times (s) in PLAIN_S and TRACED_S.
lammps() {
    local name=$1 t0 t1 t2
    shift
    mkdir -p "$TMP/$name.plain" "$TMP/$name"
    t0=$(date +%s%N)
    (cd "$TMP/$name.plain" && LD_PRELOAD=$SAN_PRELOAD timeout 120 "$@" \
        "$LMP" -in "$TMP/in.lj" -log none >"$TMP/$name.plain.out" \
        2>"$TMP/$name.plain.err") ||
        fail "$name: lmp failed untraced: $(tail -20 "$TMP/$name.plain.err" "$TMP/$name.plain.out")"
    t1=$(date +%s%N)
    (cd "$TMP/$name" && WEFT_TRACE=$name LD_PRELOAD=$SAN_PRELOAD timeout 120 \
        "$@" "$WEFT" run -v -- "$LMP" -in "$TMP/in.lj" -log none \
        >"$TMP/$name.out" 2>"$TMP/$name.err") ||
        fail "$name: lmp failed under weft run: $(tail -20 "$TMP/$name.err" "$TMP/$name.out")"
    t2=$(date +%s%N)
    PLAIN_S=$(printf "%d.%02d" $(((t1 - t0) / 1000000000)) $(((t1 - t0) / 10000000 % 100)))
    TRACED_S=$(printf "%d.%02d" $(((t2 - t1) / 1000000000)) $(((t2 - t1) / 10000000 % 100)))
    deterministic "$TMP/$name.plain.out" >"$TMP/$name.plain.thermo"
    deterministic "$TMP/$name.out" >"$TMP/$name.thermo"
    [ "$(grep -c . "$TMP/$name.plain.thermo")" -ge 7 ] ||
        fail "$name: no thermo table in lmp's output: $(cat "$TMP/$name.plain.out")"
    cmp -s "$TMP/$name.plain.thermo" "$TMP/$name.thermo" ||
        fail "$name: lmp prints other figures traced: $(diff "$TMP/$name.plain.thermo" "$TMP/$name.thermo")"
    for step in 0 50; do
        cmp -s "$TMP/$name.plain/dump.$step.mpiio" "$TMP/$name/dump.$step.mpiio" ||
            fail "$name: dump.$step.mpiio differs traced (or is missing)"
    done
}

# preloaded NAME N: weft run preloaded libweft-openmp and libweft-mpi-
# openmpi into each of N processes.
preloaded() {
    # (the launcher may interleave the ranks' lines: weft run writes
    # "weft run: ", its message and the newline apart)
    for lib in mpi-openmpi openmp; do
        [ "$(grep -o "libweft-$lib\.so" "$TMP/$1.err" | wc -l)" = "$2" ] ||
            fail "$1: weft run did not preload libweft-$lib on each rank: $(cat "$TMP/$1.err")"
    done
}

# archive NAME NP: the archive of trace NAME, complete, with NP members,
# accepted by both readers and the OpenMP model; its anchor in ANCHOR.
archive() {
    only_trace "$1"
    wait_state "$1" complete 60
    [ "$(json_get "$TMP/show.json" 'j["members"]')" = "$2" ] ||
        fail "$1: the trace has not $2 members: $(cat "$TMP/show.json")"
    ANCHOR=$(json_get "$TMP/show.json" 'j["archive"]')
    readers_agree "$1" "$ANCHOR"
    "$PY" "$CHECK" --model "$ANCHOR" >"$TMP/$1.check" ||
        fail "$1: the OpenMP of the archive breaks the model: $(head -40 "$TMP/$1.check")"
}

start_weftd

# 2 ranks of 2 threads
args=(-np "$NP" --oversubscribe --bind-to none -x WEFT_LIBDIR -x WEFT_SERVER
      -x LD_PRELOAD -x ASAN_OPTIONS -x OMP_NUM_THREADS -x OMP_WAIT_POLICY)
lammps lmp mpirun.openmpi "${args[@]}"
preloaded lmp "$NP"
archive lmp "$NP"
check_lammps "$ANCHOR" "$NP" "$THREADS" "$DUMPS" "$DEBUG" >"$TMP/lmp.lammps" 2>&1 ||
    fail "lmp: the archive is not what LAMMPS did: $(cat "$TMP/lmp.lammps")"
echo "ok: lmp, $NP ranks of $THREADS threads: $(cat "$TMP/lmp.lammps"); untraced $PLAIN_S s, traced $TRACED_S s"

# 1 rank of 3 threads, no mpirun
OMP_NUM_THREADS=3 lammps lmp1
preloaded lmp1 1
archive lmp1 1
check_lammps "$ANCHOR" 1 3 "$DUMPS" "$DEBUG" >"$TMP/lmp1.lammps" 2>&1 ||
    fail "lmp1: the archive is not what LAMMPS did: $(cat "$TMP/lmp1.lammps")"
echo "ok: lmp, a singleton of 3 threads: $(cat "$TMP/lmp1.lammps"); untraced $PLAIN_S s, traced $TRACED_S s"
stop_weftd
echo ok

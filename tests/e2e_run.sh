#!/bin/bash
# e2e_run.sh - weft run on real programs: system binaries keep their pid,
# arguments, standard input and exit status; an Open MPI and an MPICH
# program (compiled here, also Fortran, also through a library that links
# MPI, also found through PATH, also under mpirun) get the matching
# recorder library preloaded after the user's LD_PRELOAD; static programs,
# scripts, programs without MPI and a missing recorder library run
# untraced with a message; unknown recorders and bad options are usage
# errors; PROGRAM not found or not executable exits 127 or 126.
#
# The recorder libraries are stand-ins in WEFT_LIBDIR: small shared
# libraries whose constructor says which one was loaded, so the test
# sees the loader really load the file weft run chose.
. "$(dirname "$0")/lib.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset LD_PRELOAD WEFT_TRACE WEFT_SERVER WEFT_LIBDIR
# weft built with AddressSanitizer refuses to start with a user's
# LD_PRELOAD ahead of its runtime; the programs it runs are not built so.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "SKIP: no C compiler"; exit 77; }

# out NAME COMMAND...: runs COMMAND (60 s at most), stdout in $TMP/NAME.out,
# stderr in $TMP/NAME.err; returns its exit status.
out() {
    local name=$1
    shift
    timeout 60 "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}
# has NAME STREAM TEXT: the output STREAM (out, err) of NAME has a line
# containing TEXT.
has() {
    grep -qF -- "$3" "$TMP/$1.$2" ||
        fail "$1: $2 lacks '$3': $(cat "$TMP/$1.out" "$TMP/$1.err")"
}
hasnt() {
    ! grep -qF -- "$3" "$TMP/$1.$2" ||
        fail "$1: $2 has '$3': $(cat "$TMP/$1.out" "$TMP/$1.err")"
}

# ---- the stand-in recorder libraries, and a user's own preload ----------
mkdir -p "$TMP/lib" "$TMP/lib1" "$TMP/user" "$TMP/bin"
standin() {  # standin NAME FILE
    printf '#include <stdio.h>\n__attribute__((constructor)) static void hi(void)\n{ fprintf(stderr, "standin %s loaded\\n"); }\n' "$1" >"$TMP/standin.c"
    "$CC" -shared -fPIC -o "$2" "$TMP/standin.c" || fail "cannot build stand-in $1"
}
standin openmpi "$TMP/lib/libweft-mpi-openmpi.so"
standin mpich "$TMP/lib/libweft-mpi-mpich.so"
standin user "$TMP/user/libuser.so"
cp "$TMP/lib/libweft-mpi-openmpi.so" "$TMP/lib1/"   # no MPICH, pthread, io
# The pthread and io recorders apply to every dynamic program, by default:
# silent stand-ins. DEF: what -v says is preloaded by default, after the
# MPI library if any; DEFLD: the same in LD_PRELOAD.
printf 'int weft_standin;\n' >"$TMP/dyn.c"
"$CC" -shared -fPIC -o "$TMP/lib/libweft-pthread.so" "$TMP/dyn.c" ||
    fail "cannot build the pthread stand-in"
cp "$TMP/lib/libweft-pthread.so" "$TMP/lib/libweft-io.so"
PTLIB="$TMP/lib/libweft-pthread.so"
IOLIB="$TMP/lib/libweft-io.so"
DEF="$PTLIB $IOLIB"
DEFLD="$PTLIB:$IOLIB"
export WEFT_LIBDIR="$TMP/lib"

# A program that links MPI without needing a launcher: MPI_Initialized is
# allowed before MPI_Init; with argument "init" it is a real MPI program.
cat >"$TMP/hello.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int flag = 0, rank = -1;
    const char *p = getenv("LD_PRELOAD");

    MPI_Initialized(&flag);
    if (argc > 1 && strcmp(argv[1], "init") == 0) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    printf("rank=%d argv0=%s argc=%d LD_PRELOAD=%s\n", rank, argv[0], argc,
           p ? p : "(unset)");
    if (rank >= 0)
        MPI_Finalize();
    return argc > 1 && strcmp(argv[1], "exit7") == 0 ? 7 : 0;
}
EOF

# ---- (a) system programs: exec'd unchanged -------------------------------
# By default a program without MPI gets pthread and io, quietly.
expect 0 "" "$WEFT" run -- /bin/true
out true "$WEFT" run -- /usr/bin/env || fail "weft run env failed"
has true out "LD_PRELOAD=$DEFLD"
[ ! -s "$TMP/true.err" ] || fail "weft run said something: $(cat "$TMP/true.err")"
expect 0 "weft run: /bin/true: dynamically linked, no MPI; preloading $DEF" \
    "$WEFT" run -v -- /bin/true
expect 0 "weft run: /bin/true: dynamically linked, no MPI; preloading $PTLIB" \
    "$WEFT" run -v -t pthread -- /bin/true
# Without the pthread recorder's library, nothing applies: said, untraced.
expect 0 "the pthread recorder needs $TMP/lib1/libweft-pthread.so" \
    env WEFT_LIBDIR="$TMP/lib1" "$WEFT" run -t pthread -- /bin/true
# Nor by default: each missing one is said.
out nolib env WEFT_LIBDIR="$TMP/lib1" "$WEFT" run -- /usr/bin/env ||
    fail "weft run env without the libraries failed"
has nolib err "the pthread recorder needs $TMP/lib1/libweft-pthread.so"
has nolib err "the io recorder needs $TMP/lib1/libweft-io.so"
hasnt nolib out "LD_PRELOAD="
# Without WEFT_LIBDIR a weft of a build tree preloads the recorders built
# beside it (BUILD/.libs), not an installed version's.
if [ -f "$WEFT_BUILDDIR/.libs/libweft.so" ]; then
    libs=$(cd "$WEFT_BUILDDIR/.libs" && pwd -P)
    out tree env -u WEFT_LIBDIR "$WEFT" run -- /usr/bin/env ||
        fail "weft run env of the build tree failed"
    has tree out "LD_PRELOAD=$libs/libweft-pthread.so:$libs/libweft-io.so"
fi
# A task of a parallel launch (a launcher's rank variable set) without
# MPI runs untraced by default: its rank is the MPI program's (a wrapper
# shell or a helper would take it); -t io asks for it all the same.
for v in PMI_RANK OMPI_COMM_WORLD_RANK PMIX_RANK SLURM_PROCID; do
    out "task-$v" env "$v=0" "$WEFT" run -- /usr/bin/env ||
        fail "weft run as a task ($v) failed"
    has "task-$v" err "uses no MPI library: running it untraced (recorders: mpi, pthread, io, openmp)"
    hasnt "task-$v" out "LD_PRELOAD="
done
out task-io env SLURM_PROCID=1 "$WEFT" run -t io -- /usr/bin/env ||
    fail "weft run -t io as a task failed"
has task-io out "LD_PRELOAD=$IOLIB"
# weft run marks the process it starts, so that a recorder tells the task
# from a process the task starts in turn (client/recorder.c).
grep -q "^WEFT_TASK_PID=[0-9][0-9]*\$" "$TMP/task-io.out" ||
    fail "weft run did not set WEFT_TASK_PID: $(cat "$TMP/task-io.out")"
expect 3 "" "$WEFT" run -- /bin/sh -c 'exit 3'
expect 3 "" "$WEFT" run /bin/sh -c 'exit 3'
# PROGRAM's options are its own, with or without "--", even "--" itself.
[ "$("$WEFT" run -- /bin/echo -t x 2>/dev/null)" = "-t x" ] || fail "echo -t x changed"
[ "$("$WEFT" run /bin/echo -v --trace y 2>/dev/null)" = "-v --trace y" ] ||
    fail "echo's options were read by weft run"
[ "$("$WEFT" run -v /bin/echo -- a 2>/dev/null)" = "-- a" ] || fail "echo -- a changed"
[ "$("$WEFT" run -- /bin/echo '' 'a  b' 2>/dev/null | od -c | head -1)" = \
  "$(/bin/echo '' 'a  b' | od -c | head -1)" ] || fail "empty and spaced arguments changed"
# The same process (exec), standard input untouched, a signal's status.
"$WEFT" run -- /bin/sh -c 'echo $$' >"$TMP/pid" 2>/dev/null &
pid=$!
wait "$pid"
[ "$(cat "$TMP/pid")" = "$pid" ] || fail "weft run's pid $pid, the program's $(cat "$TMP/pid")"
[ "$(printf 'one\ntwo\n' | "$WEFT" run -- cat 2>/dev/null)" = "$(printf 'one\ntwo')" ] ||
    fail "standard input did not reach the program"
rc=$(/bin/sh -c '"$0" run -- /bin/sh -c "kill -TERM \$\$" 2>/dev/null; echo $?' "$WEFT")
[ "$rc" -eq 143 ] || fail "a program killed by SIGTERM: weft run exited $rc, not 143"
# Found through PATH; -v says what it found.
expect 0 "weft run: /usr/bin/true: dynamically linked, no MPI; preloading $DEF" \
    env PATH=/usr/bin:/bin "$WEFT" run -v true
expect 0 "weft run: /usr/bin/true: dynamically linked, no MPI; preloading $PTLIB" \
    env PATH=/usr/bin:/bin "$WEFT" run -v -t pthread true
# -t mpi on a program without MPI: a warning, and it runs.
expect 4 "weft run: -t mpi: /bin/sh uses no MPI library: running it untraced" \
    "$WEFT" run -t mpi -- /bin/sh -c 'exit 4'
# --trace and --server set the environment; without --trace, WEFT_TRACE
# is the user's or, unset, PROGRAM-HOST-PID: the name of the process
# tree's trace (WEFT_TREE names the tree, WEFT_TASK_PID its root), which
# every process of it inherits.
out env1 "$WEFT" run --trace run-test --server 127.0.0.1:1 -- /usr/bin/env ||
    fail "weft run env failed"
has env1 out "WEFT_TRACE=run-test"
has env1 out "WEFT_SERVER=127.0.0.1:1"
out env2 "$WEFT" run -- /usr/bin/env || fail "weft run env failed"
has env2 out "WEFT_TRACE=env-$(hostname)-"
grep -q "^WEFT_TREE=tree:$(hostname):[0-9]*:[0-9]*\$" "$TMP/env2.out" ||
    fail "weft run did not set WEFT_TREE: $(cat "$TMP/env2.out")"
hasnt env2 out "WEFT_SERVER="
out env3 env WEFT_TRACE=preset "$WEFT" run --server=x:1 /usr/bin/env ||
    fail "weft run env failed"
has env3 out "WEFT_TRACE=preset"
has env3 out "WEFT_SERVER=x:1"

# ---- scripts (traced through their interpreter), static programs ---------
printf '#!/bin/sh\necho "LD_PRELOAD=${LD_PRELOAD:-(unset)}"\nexit 5\n' >"$TMP/bin/script.sh"
chmod +x "$TMP/bin/script.sh"
out script "$WEFT" run -v -- "$TMP/bin/script.sh"
[ $? -eq 5 ] || fail "the script's exit status was not kept"
has script err "script.sh: script; preloading $DEF"
has script out "LD_PRELOAD=$PTLIB:$IOLIB"
# An interpreter that is not a dynamically linked program: untraced.
if [ -x "$TMP/static" ] || "$CC" -static -o "$TMP/static" -x c - <<<'int main(void) { return 6; }' 2>/dev/null; then
    printf '#!%s\n' "$TMP/static" >"$TMP/bin/static.sh"
    chmod +x "$TMP/bin/static.sh"
    out static-script "$WEFT" run -- "$TMP/bin/static.sh"
    [ $? -eq 6 ] || fail "the static interpreter's exit status was not kept"
    has static-script err "is a script whose interpreter $TMP/static is not a dynamically linked program: running it untraced"
    echo "a script whose interpreter is statically linked: untraced"
fi
# A file without #! is a shell script to execvp: the same here.
printf 'echo plain script "$1"\n' >"$TMP/bin/plain"
chmod +x "$TMP/bin/plain"
out plain "$WEFT" run -- "$TMP/bin/plain" arg || fail "a script without #! failed"
has plain err "is not an ELF program: running it untraced"
has plain out "plain script arg"

printf 'int main(void) { return 6; }\n' >"$TMP/static.c"
if "$CC" -static -o "$TMP/static" "$TMP/static.c" 2>"$TMP/static.log"; then
    out static "$WEFT" run -v -t mpi -- "$TMP/static"
    [ $? -eq 6 ] || fail "the static program's exit status was not kept"
    has static err "weft run: $TMP/static is statically linked: running it untraced"
    has static err "statically linked; preloading nothing"
    "$CC" -static-pie -o "$TMP/static-pie" "$TMP/static.c" 2>/dev/null &&
        expect 6 "is statically linked: running it untraced" "$WEFT" run -- "$TMP/static-pie"
else
    echo "SKIP: static programs: cc -static failed ($(head -c 200 "$TMP/static.log"); Debian: libc6-dev)"
fi

# ---- usage errors, programs that cannot run ------------------------------
touch "$TMP/ran"; rm "$TMP/ran"
for t in pthreads foo mpi,foo "mpi,"; do
    expect 2 "weft run: -t: " "$WEFT" run -t "$t" -- /bin/touch "$TMP/ran"
done
expect 2 "unknown recorder 'bogus' (known: mpi, pthread, io" "$WEFT" run -t bogus -- /bin/true
expect 2 "unknown recorder 'foo' (known: mpi, pthread, io" "$WEFT" run --recorders=mpi,foo /bin/true
[ ! -e "$TMP/ran" ] || fail "weft run ran the program after a usage error"
expect 2 "missing PROGRAM" "$WEFT" run
expect 2 "missing PROGRAM" "$WEFT" run -v --
expect 2 "unknown option '-x'" "$WEFT" run -x /bin/true
expect 2 "unknown option '--bogus'" "$WEFT" run --bogus /bin/true
expect 2 "--trace needs a NAME" "$WEFT" run --trace '' /bin/true
expect 2 "--server needs an ADDR" "$WEFT" run --server= /bin/true
expect 2 "-t needs a LIST" "$WEFT" run -t
expect 127 "weft run: no-such-program-xyz: command not found" "$WEFT" run no-such-program-xyz
expect 127 "No such file or directory" "$WEFT" run -- "$TMP/nothing"
expect 126 "$TMP/hello.c: Permission denied" "$WEFT" run -- "$TMP/hello.c"
expect 126 "Is a directory" "$WEFT" run -- "$TMP"
expect 0 "Usage: weft run [-t LIST]" "$WEFT" run --help
expect 0 "Usage: weft run [-t LIST]" "$WEFT" run -v -h /bin/false

# ---- (b) MPI programs ----------------------------------------------------
# mpi_part FLAVOUR MPICC MPIRUN LIB NAME: the checks for one implementation.
ran_mpi=0
mpi_part() {
    local fl=$1 mpicc=$2 mpirun=$3 soname=$4 name=$5 lib="$TMP/lib/libweft-mpi-$1.so"
    local prog="$TMP/hello_$fl"
    command -v "$mpicc" >/dev/null ||
        { echo "SKIP: $name programs: $mpicc missing (scripts/deps.sh installs it)"; return 0; }
    "$mpicc" -o "$prog" "$TMP/hello.c" || fail "$mpicc hello.c failed"
    ran_mpi=1

    # The matching library, preloaded and loaded; -v says so in one line.
    out "$fl" "$WEFT" run -v -- "$prog" exit7
    [ $? -eq 7 ] || fail "$fl: the exit status was not kept: $(cat "$TMP/$fl.err")"
    has "$fl" out "rank=-1 argv0=$prog argc=2 LD_PRELOAD=$lib:$DEFLD"
    has "$fl" err "standin $fl loaded"
    has "$fl" err "weft run: $prog: dynamically linked, $name ($soname); preloading $lib $DEF"
    [ "$(grep -c 'weft run' "$TMP/$fl.err")" -eq 1 ] ||
        fail "$fl: -v printed more than one line: $(cat "$TMP/$fl.err")"
    ! grep standin "$TMP/$fl.err" | grep -qv "standin $fl loaded" ||
        fail "$fl: another stand-in was loaded: $(cat "$TMP/$fl.err")"
    # Quiet without -v; -t mpi does the same as the default.
    out "$fl-t" "$WEFT" run -t mpi -- "$prog" || fail "$fl: -t mpi failed"
    has "$fl-t" out "LD_PRELOAD=$lib"
    hasnt "$fl-t" out "LD_PRELOAD=$lib:"
    hasnt "$fl-t" err "weft run"

    # The user's LD_PRELOAD is kept, first; ours is not added twice.
    out "$fl-user" env LD_PRELOAD="$TMP/user/libuser.so" "$WEFT" run -- "$prog" ||
        fail "$fl: with LD_PRELOAD failed"
    has "$fl-user" out "LD_PRELOAD=$TMP/user/libuser.so:$lib:$DEFLD"
    has "$fl-user" err "standin user loaded"
    has "$fl-user" err "standin $fl loaded"
    out "$fl-twice" env LD_PRELOAD="$lib" "$WEFT" run -- "$prog" ||
        fail "$fl: with LD_PRELOAD=ours failed"
    has "$fl-twice" out "LD_PRELOAD=$lib:$DEFLD"

    # Found through PATH, argv[0] as given.
    cp "$prog" "$TMP/bin/hello-$fl"
    out "$fl-path" env PATH="$TMP/bin:$PATH" "$WEFT" run -v hello-$fl ||
        fail "$fl: through PATH failed"
    has "$fl-path" out "argv0=hello-$fl argc=1 LD_PRELOAD=$lib:$DEFLD"
    has "$fl-path" err "weft run: $TMP/bin/hello-$fl: dynamically linked, $name"

    # MPI reached only through another library (recursive dependencies).
    printf '#include <mpi.h>\nint mid_initialized(void) { int f = 0; MPI_Initialized(&f); return f; }\n' \
        >"$TMP/mid.c"
    mkdir -p "$TMP/mid-$fl"
    "$mpicc" -shared -fPIC -o "$TMP/mid-$fl/libmid.so" "$TMP/mid.c" || fail "$fl: libmid failed"
    printf 'int mid_initialized(void);\nint main(void) { return mid_initialized(); }\n' >"$TMP/usemid.c"
    "$CC" -o "$TMP/usemid-$fl" "$TMP/usemid.c" -L"$TMP/mid-$fl" -lmid \
        -Wl,-rpath,"$TMP/mid-$fl" || fail "$fl: usemid failed"
    readelf -d "$TMP/usemid-$fl" | grep NEEDED | grep -q mpi &&
        fail "$fl: usemid links MPI itself, the test proves nothing"
    out "$fl-mid" "$WEFT" run -v -- "$TMP/usemid-$fl" || fail "$fl: usemid failed to run"
    has "$fl-mid" err "dynamically linked, $name ($soname); preloading $lib"
    has "$fl-mid" err "standin $fl loaded"

    # The library for this implementation missing: said, and run untraced
    # (lib1 has only Open MPI's).
    if [ "$fl" = mpich ]; then
        out "$fl-missing" env WEFT_LIBDIR="$TMP/lib1" "$WEFT" run -- "$prog" exit7
        rc=$?
        [ $rc -eq 7 ] || fail "mpich with the library missing: exited $rc, not 7"
        has "$fl-missing" err "weft run: the mpi recorder needs $TMP/lib1/libweft-mpi-mpich.so for MPICH (No such file or directory): running $prog untraced"
        has "$fl-missing" out "LD_PRELOAD=(unset)"
        hasnt "$fl-missing" err "standin"
    fi

    # Under the launcher: every rank preloads it, MPI_Init works.
    if command -v "$mpirun" >/dev/null; then
        out "$fl-mpirun" "$mpirun" -np 2 "${@:6}" "$WEFT" run -- "$prog" init ||
            fail "$fl: $mpirun -np 2 weft run failed: $(cat "$TMP/$fl-mpirun.out" "$TMP/$fl-mpirun.err")"
        for r in 0 1; do
            has "$fl-mpirun" out "rank=$r argv0=$prog argc=2 LD_PRELOAD=$lib:$DEFLD"
        done
        [ "$(grep -c "standin $fl loaded" "$TMP/$fl-mpirun.err")" -eq 2 ] ||
            fail "$fl: the stand-in was not loaded by both ranks: $(cat "$TMP/$fl-mpirun.err")"
    else
        echo "SKIP: $name under mpirun: $mpirun missing"
    fi

    # Fortran: the bindings library brings the C one.
    local fc=${mpicc/mpicc/mpif90}
    if command -v "$fc" >/dev/null; then
        printf 'program hello\n  use mpi\n  logical :: flag\n  integer :: ierr\n  call MPI_Initialized(flag, ierr)\n  print *, "fortran ran"\nend program hello\n' \
            >"$TMP/hello.f90"
        "$fc" -o "$TMP/hellof-$fl" "$TMP/hello.f90" || fail "$fc hello.f90 failed"
        out "$fl-f" "$WEFT" run -v -- "$TMP/hellof-$fl" || fail "$fl: Fortran program failed"
        has "$fl-f" out "fortran ran"
        has "$fl-f" err "dynamically linked, $name ("
        has "$fl-f" err "preloading $lib"
    else
        echo "SKIP: $name Fortran: $fc missing"
    fi
}
mpi_part openmpi mpicc.openmpi mpirun.openmpi libmpi.so.40 "Open MPI" --oversubscribe
mpi_part mpich mpicc.mpich mpirun.mpich libmpich.so.12 MPICH

# ---- weft run in front of a launcher (libweft-launch.so) ----------------
# A stand-in launcher: /usr/bin/env named mpirun, which starts one task
# (PMI_RANK set) or a helper (none). The task runs again under weft run
# (a program without MPI under a launcher: untraced unless -t), without
# the library or its variables; a helper keeps the library alone.
if [ -f "$WEFT_BUILDDIR/.libs/libweft-launch.so" ]; then
    ln -s "$WEFT_BUILDDIR/.libs/libweft-launch.so" "$TMP/lib/libweft-launch.so"
    ln -s /usr/bin/env "$TMP/bin/mpirun"
    # a sanitized library needs the sanitizers' runtimes first
    SAN=$(echo ${WEFT_SAN_PRELOAD:-} | tr ' ' ':')
    LAUNCH=(env ${SAN:+LD_PRELOAD=$SAN} "$WEFT" run)
    out launch "${LAUNCH[@]}" -v -- "$TMP/bin/mpirun" PMI_RANK=0 /usr/bin/env ||
        fail "weft run -- mpirun (a stand-in) failed"
    has launch err "weft run: $TMP/bin/mpirun is a parallel launcher: it runs untraced"
    has launch err "weft run: /usr/bin/env uses no MPI library: running it untraced"
    has launch out "PMI_RANK=0"
    if [ -n "$SAN" ]; then
        has launch out "LD_PRELOAD=$SAN"
    else
        hasnt launch out "LD_PRELOAD="
    fi
    hasnt launch out "WEFT_LAUNCH_"
    hasnt launch out "libweft-launch.so"
    out launch_t "${LAUNCH[@]}" -t pthread -- "$TMP/bin/mpirun" PMI_RANK=0 /usr/bin/env ||
        fail "weft run -t pthread -- mpirun (a stand-in) failed"
    has launch_t out "LD_PRELOAD=${SAN:+$SAN:}$PTLIB"
    hasnt launch_t out "libweft-launch.so"
    out launch_helper "${LAUNCH[@]}" -- "$TMP/bin/mpirun" /usr/bin/env ||
        fail "weft run -- mpirun (a stand-in) without a task failed"
    has launch_helper out "LD_PRELOAD=${SAN:+$SAN:}$TMP/lib/libweft-launch.so"
    has launch_helper out "WEFT_LAUNCH_FROM="
    # weft's recorders in the launcher's LD_PRELOAD (a launcher that a
    # traced script starts) are taken out; the user's own stay
    out launch_tree env LD_PRELOAD="${SAN:+$SAN:}$TMP/user/libuser.so:$PTLIB:$IOLIB" \
        "$WEFT" run -- "$TMP/bin/mpirun" /usr/bin/env ||
        fail "weft run -- mpirun (a stand-in) with recorders preloaded failed"
    has launch_tree out "LD_PRELOAD=${SAN:+$SAN:}$TMP/user/libuser.so:$TMP/lib/libweft-launch.so"
    # without the library: said, and the launcher runs untraced
    expect 0 "weft run: $TMP/bin/mpirun is a launcher, and its tasks need $TMP/lib1/libweft-launch.so" \
        env WEFT_LIBDIR="$TMP/lib1" "$WEFT" run -- "$TMP/bin/mpirun" /bin/true
else
    echo "SKIP: libweft-launch.so is not built"
fi

# A program linked with both implementations: neither library is right.
if [ -x "$TMP/hello_openmpi" ] && [ -x "$TMP/hello_mpich" ]; then
    mpicc.openmpi -o "$TMP/both" "$TMP/hello.c" -Wl,--no-as-needed -lmpich ||
        fail "cannot link a program with both MPI libraries"
    out both "$WEFT" run -v -t mpi -- "$TMP/both" || fail "the program with both MPIs failed"
    has both err "weft run: -t mpi: $TMP/both uses both "
    has both err "Open MPI (libmpi.so.40)"
    has both err "MPICH (libmpich.so.12)"
    has both err ": running it untraced"
    has both out "LD_PRELOAD=(unset)"
fi

# The real recorder libraries, when this build has them: preloading them
# into a program that does not start MPI, with no weftd to reach (port 1),
# changes nothing. (A sanitized build's libraries need the sanitizer
# runtimes loaded first: the user's LD_PRELOAD here.)
# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})
SANLD=$(IFS=:; echo "${SAN[*]}")
for fl in openmpi mpich; do
    real="$WEFT_BUILDDIR/.libs/libweft-mpi-$fl.so"
    [ -f "$real" ] && [ -x "$TMP/hello_$fl" ] || continue
    out "real-$fl" env WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" WEFT_SERVER=127.0.0.1:1 \
        ${SANLD:+LD_PRELOAD="$SANLD"} LD_LIBRARY_PATH="$WEFT_BUILDDIR/.libs" \
        "$WEFT" run -v -- "$TMP/hello_$fl" exit7
    [ $? -eq 7 ] || fail "real $fl library: exit status not kept: $(cat "$TMP/real-$fl.err")"
    has "real-$fl" out "rank=-1 argv0=$TMP/hello_$fl argc=2 LD_PRELOAD=${SANLD:+$SANLD:}$real:"
    has "real-$fl" err "preloading $real $WEFT_BUILDDIR/.libs/libweft-pthread.so $WEFT_BUILDDIR/.libs/libweft-io.so"
done

[ "$ran_mpi" -eq 1 ] || echo "SKIP: no MPI compiler: only the non-MPI parts ran"
echo ok

#!/bin/bash
# e2e_io.sh - libweft-io (issue #14) on unmodified programs under
# `weft run -t io`, with a real weftd:
#  - tests/io/iotest calls every wrapped function, also from a
#    constructor before main and from a signal handler, forks a child
#    that writes a file (not traced: the file must not be in the trace)
#    and ends by exec'ing itself (a new traced process, its own trace);
#    tests/check_io.py checks each archive against the program's report;
#    forked before any I/O, the child is not traced either;
#  - tar cf and tar czf of a small directory (Debian's binaries):
#    complete traces both readers accept, every operation completed, and
#    the bytes written per archive file in the trace equal its size
#    (tar czf: gzip, which tar runs, writes the .tgz: one trace of the
#    process tree, tar-z, tar and gzip its members);
#  - with libweft-mpi too (-t mpi,io, Open MPI): one trace of both ranks,
#    their files' bytes, libweft-mpi's own reading unseen; and -t io
#    alone on the same MPI program: its own session, the same files; and
#    weft run's default recorders: the same; in each, a helper process
#    each rank starts (system(): sh and cat, no MPI) neither takes the
#    rank nor shows in its trace;
#  - by default stdio calls served from a stream's buffer are counted
#    (some are in iotest), with WEFT_STDIO=all recorded; a bad
#    WEFT_STDIO is named;
#  - errno and results are untouched (iotest checks each call), and
#    without weftd the programs run as before.
. "$(dirname "$0")/lib.sh"

unset LD_PRELOAD WEFT_TRACE
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"
IOTEST="$WEFT_BUILDDIR/tests/io/iotest"
CHECK_IO="$WEFT_SRCDIR/tests/check_io.py"
[ -e "$WEFT_LIBDIR/libweft-io.so" ] || fail "libweft-io.so not built"

# archive_ok NAME: trace NAME is complete and both readers accept it;
# sets ARCHIVE.
archive_ok() {
    wait_state "$1" complete 60
    ARCHIVE=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$ARCHIVE" >/dev/null ||
        fail "$1: otf2-print rejects $ARCHIVE"
}

start_weftd

# ---- every wrapped call, constructor, fork, signal, exec -----------------
mkdir "$TMP/w"
timeout 60 "$WEFT" run -t io --trace iotest -- "$IOTEST" "$TMP/w" \
    "$TMP/iotest.json" exec >"$TMP/iotest.out" 2>&1 ||
    fail "iotest failed: $(cat "$TMP/iotest.out")"
grep -q '^iotest$' "$TMP/iotest.out" || fail "iotest's printf output is lost"
archive_ok iotest
"$PY" "$CHECK_IO" "$ARCHIVE" "$TMP/iotest.json" >"$TMP/check.out" ||
    fail "iotest: $(cat "$TMP/check.out")"
# By default the stdio calls its streams' buffers served were counted,
# not recorded (their calls and bytes still add up, check_io.py).
[ "$(json_get "$TMP/check.out" 'j["counted"]')" -gt 0 ] ||
    fail "iotest: no stdio call counted: $(cat "$TMP/check.out")"
archive_ok iotest-exec
"$PY" "$CHECK_IO" "$ARCHIVE" "$TMP/iotest.json.exec" >"$TMP/check.out" ||
    fail "iotest after exec: $(cat "$TMP/check.out")"

# WEFT_STDIO=all: every call recorded, none counted; the same calls and
# bytes.
mkdir "$TMP/w4"
WEFT_STDIO=all timeout 60 "$WEFT" run -t io --trace iotest-all -- \
    "$IOTEST" "$TMP/w4" "$TMP/all.json" >"$TMP/all.out" 2>&1 ||
    fail "iotest (WEFT_STDIO=all) failed: $(cat "$TMP/all.out")"
archive_ok iotest-all
"$PY" "$CHECK_IO" "$ARCHIVE" "$TMP/all.json" >"$TMP/check.out" ||
    fail "iotest (WEFT_STDIO=all): $(cat "$TMP/check.out")"
[ "$(json_get "$TMP/check.out" 'j["counted"]')" = 0 ] ||
    fail "iotest (WEFT_STDIO=all): calls counted: $(cat "$TMP/check.out")"
WEFT_STDIO=some "$WEFT" run -t io --trace bad -- /bin/true \
    >"$TMP/bad.out" 2>&1
grep -q "WEFT_STDIO='some' must be syscalls or all" "$TMP/bad.out" ||
    fail "a bad WEFT_STDIO is not named: $(cat "$TMP/bad.out")"

# A fork before the program did any I/O: the child is not traced either.
mkdir "$TMP/w3"
timeout 60 "$WEFT" run -t io --trace forkfirst -- "$IOTEST" "$TMP/w3" \
    "$TMP/ff.json" forkfirst >"$TMP/ff.out" 2>&1 ||
    fail "iotest forkfirst failed: $(cat "$TMP/ff.out")"
archive_ok forkfirst
"$PY" "$CHECK_IO" "$ARCHIVE" "$TMP/ff.json" >"$TMP/check.out" ||
    fail "iotest forkfirst: $(cat "$TMP/check.out")"
"$WEFT" --catalog "$SPOOL/catalog.db" list -n forkfirst --json >"$TMP/list.json"
[ "$(json_get "$TMP/list.json" 'len(j)')" = 1 ] ||
    fail "forkfirst: the forked child made a trace of its own"

# ---- tar, unmodified ------------------------------------------------------
mkdir -p "$TMP/t/dir/sub"
for i in 1 2 3; do
    head -c $((i * 30000)) /dev/urandom >"$TMP/t/dir/f$i"
done
seq 1 5000 >"$TMP/t/dir/sub/numbers.txt"
cd "$TMP/t" || fail "cd"
timeout 60 "$WEFT" run -t io --trace tar-c -- tar cf out.tar dir ||
    fail "tar cf failed"
archive_ok tar-c
"$PY" "$CHECK_IO" "$ARCHIVE" --sizes "$TMP/t/out.tar=$(stat -c %s out.tar)" \
    >"$TMP/check.out" || fail "tar cf: $(cat "$TMP/check.out")"
tar tf out.tar >/dev/null || fail "tar cf made a bad archive"

timeout 60 "$WEFT" run -t io --trace tar-z -- tar czf out.tgz dir ||
    fail "tar czf failed"
cmp <(tar xOzf out.tgz) <(tar xOf out.tar) || fail "tar czf made a bad archive"
# One trace of the process tree: tar and the gzip it runs (members of
# their own), gzip writing the .tgz.
archive_ok tar-z
n=$(json_get "$TMP/show.json" 'j["members"]')
[ "$n" -ge 2 ] || fail "tar czf: $n members, expected tar and gzip"
"$PY" "$CHECK_IO" "$ARCHIVE" --sizes "$TMP/t/out.tgz=$(stat -c %s out.tgz)" \
    >"$TMP/check.out" || fail "tar czf: $(cat "$TMP/check.out")"

# ---- file names: the paths given, absolute, "." and ".." taken out -------
mkdir -p "$TMP/n/sub"
echo hello >"$TMP/n/a.txt"
(cd "$TMP/n/sub" && timeout 60 "$WEFT" run -t io --trace names -- sh -c \
    'head -c 6 ./../a.txt >.//b.txt && head -c 3 ../sub/./b.txt >/dev/null &&
     rm ../sub/b.txt') ||
    fail "names: the shell failed"
archive_ok names
real=$(cd "$TMP/n" && pwd -P)
"$PY" "$CHECK_IO" "$ARCHIVE" --sizes "$real/sub/b.txt=6" >"$TMP/check.out" ||
    fail "names: $(cat "$TMP/check.out")"
"$PY" - "$ARCHIVE" "$real" >"$TMP/names.out" 2>&1 <<'PY' ||
import sys
import otf2
with otf2.reader.open(sys.argv[1]) as r:
    names = {f.name for f in r.definitions.io_files}
    deleted = [e.file.name for _, e in r.events
               if type(e).__name__ == "IoDeleteFile"]
d = sys.argv[2]
want = {d + "/a.txt", d + "/sub/b.txt"}
bad = [n for n in names if "/./" in n or "/../" in n or "//" in n or
       not n.startswith("/")]
if not want <= names or bad or deleted != [d + "/sub/b.txt"]:
    sys.exit("files %s (want %s, none unclean: %s), deleted %s"
             % (sorted(names), sorted(want), bad, deleted))
PY
    fail "names: $(cat "$TMP/names.out")"

# ---- with the MPI recorder: libweft-mpi's session, its own I/O unseen -----
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    cat >"$TMP/mpiio.c" <<'PROG'
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int rank, fd;
    char p[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(p, sizeof p, "%s/mpiio-%d.txt", argv[1], rank);
    fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "hello", 5) != 5)
        return 1;
    close(fd);
    /* A helper process with the rank's environment and no MPI: it must
     * not take the rank (weftd would refuse it, or the rank). */
    snprintf(p, sizeof p, "cat /etc/hostname >%s/helper-%d.txt", argv[1],
             rank);
    if (system(p) != 0)
        return 1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
PROG
    mpicc.openmpi -o "$TMP/mpiio" "$TMP/mpiio.c" || fail "mpicc.openmpi"
    # mpiio NAME [-t LIST]: mpiio on 2 ranks under weft run as trace NAME:
    # one complete trace of both ranks with their files' bytes, not the
    # helpers' files, and no process refused (a helper taking a rank).
    mpiio() {
        local name=$1
        shift
        timeout 120 mpirun.openmpi --oversubscribe -np 2 -x WEFT_SERVER \
            -x WEFT_LIBDIR -x ASAN_OPTIONS "$WEFT" run "$@" --trace "$name" \
            -- "$TMP/mpiio" "$TMP/t" >"$TMP/$name.out" 2>&1 ||
            fail "mpirun weft run $*: $(cat "$TMP/$name.out")"
        archive_ok "$name"
        [ "$(json_get "$TMP/show.json" 'j["members"]')" = 2 ] ||
            fail "$name: not one trace of 2 ranks"
        "$PY" "$CHECK_IO" "$ARCHIVE" --sizes "$TMP/t/mpiio-0.txt=5" \
            "$TMP/t/mpiio-1.txt=5" >"$TMP/check.out" ||
            fail "$name: $(cat "$TMP/check.out")"
        otf2-print "$ARCHIVE" | grep -q "helper-" &&
            fail "$name: the helper's file is in the rank's trace"
        grep -E "refused|cannot join" "$TMP/weftd.log" "$TMP/$name.out" &&
            fail "$name: a process was refused (a helper took a rank?)"
    }
    mpiio mpiio -t mpi,io
    otf2-print "$ARCHIVE" | grep -q "cmdline" &&
        fail "mpiio: libweft-mpi's own reading of /proc/self/cmdline is in the trace"
    # -t io alone: libweft-io opens the session itself (rank and size from
    # Open MPI's environment), one trace of both ranks all the same.
    mpiio mpiio-alone -t io
    # By default (mpi, pthread, io): the same.
    mpiio mpiio-default
else
    echo "SKIP: MPI with -t io: no mpicc.openmpi/mpirun.openmpi"
fi

# ---- without weftd: the program runs as before ---------------------------
rm -rf "$TMP/w2" && mkdir "$TMP/w2"
WEFT_SERVER="unix:$TMP/nobody.sock" timeout 60 "$WEFT" run -t io -- "$IOTEST" "$TMP/w2" \
    "$TMP/off.json" >"$TMP/off.out" 2>&1 ||
    fail "iotest without weftd failed: $(cat "$TMP/off.out")"
grep -q "tracing is off" "$TMP/off.out" ||
    fail "no warning without weftd: $(cat "$TMP/off.out")"
echo "PASS: iotest, exec, tar cf, tar czf traced by libweft-io"

#!/bin/bash
# e2e_pthread.sh - unmodified threaded programs traced by libweft-pthread
# through `weft run -t pthread`, streaming to a real weftd:
#   - tests/pthread/pthtest (every wrapped call; a mutex locked in a
#     constructor before main; a thread ending with pthread_exit, one
#     cancelled inside pthread_cond_wait; a signal handler taking a lock;
#     a forked child that locks a mutex and execs /bin/true): one complete trace
#     (the child and the program it execs make none), accepted by
#     otf2-print -Werror and the python reader, in which
#     tests/check_pthread.py finds exactly what the program reports: the
#     visits of each call's region, every acquisition released on its
#     location in order, create/begin/end/wait paired by sequence number;
#   - two pthtest processes of one trace: one thread contingent each;
#   - pthtest execs env, which execs pthtest: the first one's trace is
#     complete (closed before exec), the second one's is its own;
#   - the library exports only the wrapped calls (pthread, exec family),
#     the condition variable ones in glibc's current version;
#   - a program of the old condition variable ABI runs unchanged, its
#     condition variable calls left to glibc's compatibility functions;
#   - pigz -p 4 (Debian's, unmodified) compresses a few MiB traced: its
#     output is unchanged and its trace passes both readers and the
#     checker (threads it leaves unjoined at exit allowed); then with
#     weft run's default recorders (pthread and io): the same, the bytes
#     it wrote to the .gz in the trace equal the file's size, and
#     `weft profile` shows the time spent waiting for locks and in I/O
#     (paradigms pthread and io);
#   - a program with its own malloc, which locks a mutex and reads a file,
#     runs to its end under weft run's defaults (pthread and io), its
#     trace complete (what weft allocates while that mutex is held must
#     not come back to it);
#   - an MPI program (tests/mpi/every, both MPIs) under -t mpi,pthread:
#     MPI's and UCX's own locking is not recorded (it deadlocked inside
#     malloc once recorded);
#   - weftd unreachable: the program runs unchanged, nothing recorded.
# Every lock call is recorded here (WEFT_LOCKS=all), as the exact counts
# want, except pigz under weft run's defaults; tests/e2e_locks.sh checks
# the default, counting what is not contended.
. "$(dirname "$0")/lib.sh"
export WEFT_LOCKS=all

LIBDIR="$WEFT_BUILDDIR/.libs"
LIB="$LIBDIR/libweft-pthread.so"
PTHTEST="$WEFT_BUILDDIR/tests/pthread/pthtest"
CHECK="$WEFT_SRCDIR/tests/check_pthread.py"
CALLS="$WEFT_SRCDIR/recorders/pthread/calls.def"
[ -f "$LIB" ] || fail "$LIB missing"
[ -x "$PTHTEST" ] || fail "$PTHTEST missing"
# Sanitized builds: the programs traced are not built with the runtimes.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})

# traced NAME COMMAND...: COMMAND under weft run -t pthread as trace NAME
# (libweft-pthread from this build), at most 120 s; its output in
# $TMP/NAME.out and .err.
traced() {
    local name=$1
    shift
    with_recorders "$LIBDIR" timeout 120 \
        "$WEFT" run -t pthread --trace "$name" -- "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# archive_of NAME: waits for trace NAME to be complete, prints its
# archive's anchor file.
archive_of() {
    wait_state "$1" complete 60
    json_get "$TMP/show.json" 'j["archive"]'
}

# readers NAME ANCHOR: otf2-print -Werror accepts it (the checker reads it
# with the python module).
readers() {
    otf2-print -Werror --silent "$2" >"$TMP/$1.print" 2>&1 ||
        fail "$1: otf2-print -Werror rejects $2: $(head -5 "$TMP/$1.print")"
}

# ---- the library's exports ------------------------------------------------
bad=$(nm -D --defined-only "$LIB" | awk '$2 ~ /[TDBRVW]/ {print $3}' |
      grep -vE '^pthread_[a-z_]+(@@?GLIBC_2\.3\.2)?$' |
      grep -vE '^(execve|execv|execvp|execvpe|fexecve|execl|execlp|execle|_exit|_Exit|posix_spawnp?)$' |
      grep -vE '^(_init|_fini|__bss_start|_edata|_end|GLIBC_2\.3\.2)$' || true)
[ -z "$bad" ] || fail "libweft-pthread.so exports more than the wrappers: $bad"
for f in wait timedwait signal broadcast; do
    nm -D --defined-only --with-symbol-versions "$LIB" |
        grep -q " pthread_cond_$f@@GLIBC_2.3.2$" ||
        fail "pthread_cond_$f is not bound to GLIBC_2.3.2"
done
while read -r name; do
    nm -D --defined-only "$LIB" | grep -q " $name\(@\|$\)" ||
        fail "calls.def wraps $name, the library does not export it"
done < <(sed -n 's/^PT(\([a-z_]*\),.*/\1/p' "$CALLS")

start_weftd

# ---- pthtest: every wrapped call, a constructor, fork and exec -------------
traced pth "$PTHTEST" "$TMP/pth.report" fork ||
    fail "pthtest failed: $(cat "$TMP/pth.out" "$TMP/pth.err")"
[ ! -s "$TMP/pth.err" ] || fail "pthtest said: $(cat "$TMP/pth.err")"
anchor=$(archive_of pth)
readers pth "$anchor"
"$PY" "$CHECK" "$anchor" "$CALLS" "$TMP/pth.report" >"$TMP/pth.check" ||
    fail "pthtest's archive: $(cat "$TMP/pth.check")"
echo "pthtest: $(cat "$TMP/pth.check")"
# Threads that named themselves (pthread_setname_np), and one main named,
# have those names as their locations' names (pthtest's: rank 0).
"$PY" - "$anchor" <<'PYEOF' || fail "pthtest's thread names are not its locations' names"
import sys
import otf2
with otf2.reader.open(sys.argv[1]) as r:
    names = sorted(l.name for l in r.definitions.locations
                   if l.group._ref == 0)
want = sorted(["pthtest-main", "sleeper"] +
              ["worker-%d" % k for k in range(len(names) - 2)])
print("locations: %s" % names)
sys.exit(0 if names == want and len(names) > 2 else 1)
PYEOF
# The forked child made no trace of its own; /bin/true it execs is the
# second member of pthtest's (a process of weft run's tree).
n=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json |
    "$PY" -c 'import json,sys; print(sum(t["name"] == "pth" for t in json.load(sys.stdin)))')
[ "$n" -eq 1 ] || fail "$n traces named pth: the forked child was traced"
"$WEFT" --catalog "$SPOOL/catalog.db" show pth --json >"$TMP/pth.json"
[ "$(json_get "$TMP/pth.json" 'j["members"]')" = 2 ] ||
    fail "pth: $(json_get "$TMP/pth.json" 'j["members"]') members, expected pthtest and the /bin/true its child runs"

# ---- two processes of one trace: a thread contingent each ------------------
# (Both define the same groups, which weftd unifies; their Comms differ by
# identity, so each process's sequence numbers stay its own.)
pids=()
for r in 0 1; do
    env WEFT_TRACE=two WEFT_RUN=e2e-pthread-two WEFT_SIZE=2 WEFT_RANK=$r \
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        LD_PRELOAD="${SAN[*]:+${SAN[*]} }$LIB" \
        timeout 120 "$PTHTEST" "$TMP/two$r.report" >"$TMP/two$r.out" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do
    wait "$p" || fail "pthtest of trace two failed: $(cat "$TMP"/two?.out)"
done
anchor=$(archive_of two)
readers two "$anchor"
"$PY" "$CHECK" "$anchor" "$CALLS" >"$TMP/two.check" ||
    fail "trace two: $(cat "$TMP/two.check")"
"$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["contingents"] == 2, j' \
    "$TMP/two.check" || fail "trace two: not one contingent per process: $(cat "$TMP/two.check")"

# ---- exec: the trace of the program before is complete, the program
# after is traced as its own (env, which calls no pthread function, makes
# none) -----------------------------------------------------------------------
traced ex "$PTHTEST" "$TMP/ex.report" exec /usr/bin/env WEFT_TRACE=ex2 \
    "$PTHTEST" "$TMP/ex2.report" ||
    fail "pthtest exec failed: $(cat "$TMP/ex.out" "$TMP/ex.err")"
for t in ex ex2; do
    anchor=$(archive_of $t)
    readers $t "$anchor"
    "$PY" "$CHECK" "$anchor" "$CALLS" "$TMP/$t.report" >"$TMP/$t.check" ||
        fail "$t's archive: $(cat "$TMP/$t.check")"
done
n=$("$WEFT" --catalog "$SPOOL/catalog.db" list --json | "$PY" -c \
    'import json,sys; print(len(json.load(sys.stdin)))')
[ "$n" -eq 4 ] || fail "$n traces after pth, two, ex and ex2"

# ---- pigz -p 4: a real program, unmodified ---------------------------------
if command -v pigz >/dev/null; then
    head -c 4000000 /dev/urandom >"$TMP/data"
    # Compressible too: text repeated.
    seq 1 400000 >>"$TMP/data"
    traced pigz pigz -p 4 -k -f "$TMP/data" ||
        fail "pigz failed traced: $(cat "$TMP/pigz.err")"
    pigz -d -c "$TMP/data.gz" | cmp -s - "$TMP/data" ||
        fail "pigz traced wrote a wrong archive"
    anchor=$(archive_of pigz)
    readers pigz "$anchor"
    "$PY" "$CHECK" "$anchor" "$CALLS" --open-ok >"$TMP/pigz.check" ||
        fail "pigz's archive: $(cat "$TMP/pigz.check")"
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]));
assert j["threads"] >= 4, j; assert j["events"]["ThreadAcquireLock"] > 0, j' \
        "$TMP/pigz.check" || fail "pigz's trace lacks its threads or locks: $(cat "$TMP/pigz.check")"
    echo "pigz -p 4: $(cat "$TMP/pigz.check")"
    # weft run's default: pthread and io together, uncontended locks
    # counted (the profile still shows them).
    rm -f "$TMP/data.gz"
    env -u WEFT_LOCKS WEFT_LIBDIR="$LIBDIR" \
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        timeout 120 "$WEFT" run -v --trace pigz-default -- pigz -p 4 -k -f \
        "$TMP/data" >"$TMP/pigz-default.out" 2>"$TMP/pigz-default.err" ||
        fail "pigz failed traced by default: $(cat "$TMP/pigz-default.err")"
    grep -q "libweft-pthread.so .*libweft-io.so" "$TMP/pigz-default.err" ||
        fail "weft run did not preload pthread and io: $(cat "$TMP/pigz-default.err")"
    pigz -d -c "$TMP/data.gz" | cmp -s - "$TMP/data" ||
        fail "pigz traced by default wrote a wrong archive"
    anchor=$(archive_of pigz-default)
    readers pigz-default "$anchor"
    "$PY" "$CHECK" "$anchor" "$CALLS" --open-ok >"$TMP/pigz.check" ||
        fail "pigz-default's archive: $(cat "$TMP/pigz.check")"
    "$PY" "$WEFT_SRCDIR/tests/check_io.py" "$anchor" --sizes \
        "$TMP/data.gz=$(stat -c %s "$TMP/data.gz")" >"$TMP/pigz-io.check" ||
        fail "pigz-default's I/O: $(cat "$TMP/pigz-io.check")"
    "$WEFT" --catalog "$SPOOL/catalog.db" profile pigz-default --json \
        >"$TMP/profile.json" || fail "weft profile pigz-default failed"
    "$PY" -c 'import json,sys; r={x["region"]: x for x in json.load(open(sys.argv[1]))["regions"]}
for name in ("pthread_mutex_lock", "pthread_cond_wait", "read", "write"):
    assert name in r and r[name]["visits"] > 0 and r[name]["excl_s"] > 0, (name, sorted(r))
    # each region its paradigm (#35): the I/O calls have none in OTF2
    # but their role, and weft names them "io"
    assert r[name]["paradigm"] == ("pthread" if name.startswith("pthread_") else "io"), r[name]' \
        "$TMP/profile.json" ||
        fail "weft profile lacks lock waiting or I/O time, or their paradigm: $(head -c 2000 "$TMP/profile.json")"
else
    echo "SKIP: pigz is not installed (scripts/deps.sh installs it)"
fi

# ---- a binary of the old condition variable ABI (before glibc 2.3.2) ------
# Its pthread_cond_* are glibc's compatibility functions, which our
# wrappers (bound to GLIBC_2.3.2) must leave alone: it runs, its mutex
# calls are recorded, its condition variable calls are not.
if [ "$(uname -m)" = x86_64 ] && command -v "${CC:-cc}" >/dev/null; then
    cat >"$TMP/oldcond.c" <<'CEOF'
#include <errno.h>
#include <pthread.h>
#include <time.h>
__asm__(".symver pthread_cond_init, pthread_cond_init@GLIBC_2.2.5");
__asm__(".symver pthread_cond_destroy, pthread_cond_destroy@GLIBC_2.2.5");
__asm__(".symver pthread_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
__asm__(".symver pthread_cond_signal, pthread_cond_signal@GLIBC_2.2.5");
int main(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c;
    struct timespec t;
    int rc;

    if (pthread_cond_init(&c, NULL) != 0)
        return 1;
    pthread_mutex_lock(&m);
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += t.tv_nsec >= 999000000;
    t.tv_nsec = (t.tv_nsec + 1000000) % 1000000000;
    rc = pthread_cond_timedwait(&c, &m, &t);
    pthread_mutex_unlock(&m);
    pthread_cond_signal(&c);
    return pthread_cond_destroy(&c) != 0 ? 2 : rc == ETIMEDOUT ? 0 : 3;
}
CEOF
    "${CC:-cc}" -o "$TMP/oldcond" "$TMP/oldcond.c" -lpthread ||
        fail "cannot build the old condition variable program"
    traced oldcond "$TMP/oldcond" ||
        fail "the old condition variable program failed traced: $(cat "$TMP/oldcond.err")"
    anchor=$(archive_of oldcond)
    readers oldcond "$anchor"
    printf 'call pthread_mutex_lock 1\ncall pthread_mutex_unlock 1\nacquire 1\nrelease 1\nthreads 0\n' \
        >"$TMP/oldcond.report"
    "$PY" "$CHECK" "$anchor" "$CALLS" "$TMP/oldcond.report" >"$TMP/oldcond.check" ||
        fail "the old condition variable program's archive: $(cat "$TMP/oldcond.check")"
else
    echo "SKIP: the old condition variable ABI is an x86_64 test"
fi

# ---- a program with its own allocator ------------------------------------
# Its malloc takes a pthread mutex (recorded) and, the first time, reads a
# file (recorded too): whatever the recorders and libweft allocate while
# that mutex is held would come back to it and deadlock (it did, in the
# lock map and the event buffers). Under weft run's defaults (pthread and
# io) it must run to its end and its trace be complete.
if [ ${#SAN[@]} -gt 0 ]; then
    # ASan's runtime replaces malloc itself: a program that does too
    # crashes under it, traced or not.
    echo "SKIP: the program with its own allocator: not under the sanitizer runtimes"
elif command -v "${CC:-cc}" >/dev/null; then
    cat >"$TMP/ownalloc.c" <<'CEOF'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static char arena[64 << 20] __attribute__((aligned(64)));
static size_t used;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int ready;
void *malloc(size_t n)
{
    void *p = NULL;
    char buf[64];
    pthread_mutex_lock(&mu);
    if (!ready) {
        int fd = open("/proc/self/maps", O_RDONLY);
        if (fd >= 0) {
            (void)!read(fd, buf, sizeof buf);
            close(fd);
        }
        ready = 1;
    }
    n = (n + 63) & ~(size_t)63;
    if (used + n + 64 <= sizeof arena) {
        *(size_t *)(arena + used) = n;
        p = arena + used + 64;
        used += n + 64;
    }
    pthread_mutex_unlock(&mu);
    return p;
}
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b)
{
    void *p = malloc(a * b);
    if (p)
        memset(p, 0, a * b);
    return p;
}
void *realloc(void *old, size_t n)
{
    void *p = malloc(n);
    if (p && old) {
        size_t o = *(size_t *)((char *)old - 64);
        memcpy(p, old, o < n ? o : n);
    }
    return p;
}
static void *work(void *arg)
{
    for (int i = 0; i < 20000; i++) {
        char *p = malloc(100 + i % 1000);
        if (!p)
            return NULL;
        p[0] = 1;
        free(p);
    }
    return arg;
}
int main(int argc, char **argv)
{
    pthread_t t[4];
    FILE *f = fopen(argv[1], "w");
    if (argc < 2 || !f)
        return 1;
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 1000; i++)
        fprintf(f, "line %d\n", i);
    return fclose(f) != 0;
}
CEOF
    # -fno-builtin: gcc would turn calloc's malloc + memset into calloc.
    "${CC:-cc}" -O2 -fno-builtin -o "$TMP/ownalloc" "$TMP/ownalloc.c" -lpthread ||
        fail "cannot build the program with its own allocator"
    env WEFT_LIBDIR="$LIBDIR" \
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        timeout 120 "$WEFT" run --trace ownalloc -- "$TMP/ownalloc" \
        "$TMP/ownalloc.txt" >"$TMP/ownalloc.out" 2>"$TMP/ownalloc.err" ||
        fail "the program with its own allocator failed (or hung) traced: $(cat "$TMP/ownalloc.err")"
    anchor=$(archive_of ownalloc)
    readers ownalloc "$anchor"
    "$PY" "$CHECK" "$anchor" "$CALLS" --open-ok >"$TMP/ownalloc.check" ||
        fail "ownalloc's archive: $(cat "$TMP/ownalloc.check")"
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1]));
assert j["threads"] >= 4 and j["events"]["ThreadAcquireLock"] >= 80000, j' \
        "$TMP/ownalloc.check" || fail "ownalloc's trace lacks its allocator's locks: $(cat "$TMP/ownalloc.check")"
    "$PY" "$WEFT_SRCDIR/tests/check_io.py" "$anchor" --sizes \
        "$TMP/ownalloc.txt=$(stat -c %s "$TMP/ownalloc.txt")" >"$TMP/ownalloc-io.check" ||
        fail "ownalloc's I/O: $(cat "$TMP/ownalloc-io.check")"
else
    echo "SKIP: no C compiler for the program with its own allocator"
fi

# ---- an MPI program under -t mpi,pthread: MPI's own locking is not its ----
# tests/mpi/every makes no pthread call of its own; Open MPI's progress
# engine and UCX's memory hooks (a rwlock taken inside malloc, its arena
# locked: recording there deadlocked) make hundreds. None is recorded: no
# pthread region in the archive, and the run ends.
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
for flavour in openmpi mpich; do
    every="$WEFT_BUILDDIR/tests/mpi/every-$flavour"
    case $flavour in
        openmpi) mpirun=(mpirun.openmpi --oversubscribe -np 4) ;;
        mpich) mpirun=(mpirun.mpich -np 4) ;;
    esac
    if [ ! -x "$every" ] || [ ! -f "$LIBDIR/libweft-mpi-$flavour.so" ] ||
        ! command -v "${mpirun[0]}" >/dev/null; then
        echo "SKIP: $flavour: mpirun, tests/mpi/every or libweft-mpi-$flavour is missing"
        continue
    fi
    mkdir -p "$TMP/mpi-$flavour.expect"
    WEFT_TRACE="mpi-$flavour" WEFT_TEST_EXPECT_DIR="$TMP/mpi-$flavour.expect" \
        timeout -k 10 120 "${mpirun[@]}" env WEFT_LIBDIR="$LIBDIR" \
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        ${SAN[@]:+LD_PRELOAD="${SAN[*]}"} \
        "$WEFT" run -t mpi,pthread -- "$every" >"$TMP/mpi-$flavour.out" 2>&1 ||
        fail "$flavour: every under -t mpi,pthread failed: $(tail -5 "$TMP/mpi-$flavour.out")"
    anchor=$(archive_of "mpi-$flavour")
    readers "mpi-$flavour" "$anchor"
    n=$(otf2-print "$anchor" | grep -c 'Region: "pthread_' || true)
    [ "$n" -eq 0 ] || fail "$flavour: $n pthread events of MPI's own in every's trace"
    echo "$flavour: every under -t mpi,pthread: no pthread event of MPI's own"
done

# ---- weftd unreachable: the program runs as ever ----------------------------
stop_weftd
WEFT_SERVER=127.0.0.1:1 traced off "$PTHTEST" "$TMP/off.report" ||
    fail "pthtest failed with weftd unreachable: $(cat "$TMP/off.err")"
grep -q "tracing is off" "$TMP/off.err" ||
    fail "no warning with weftd unreachable: $(cat "$TMP/off.err")"
grep -q "^threads 5$" "$TMP/off.report" || fail "pthtest's report: $(cat "$TMP/off.report")"
echo ok

#!/bin/bash
# e2e_mpi_poll.sh - MPI polling collapsed (issue #32): `mpirun -np 2 weft
# run -- ./poll`, with Open MPI and with MPICH. Rank 0 polls receives that
# cannot complete (rank 1 sends only when rank 0 says go) a known number
# of times with MPI_Test, MPI_Testany, MPI_Testsome, MPI_Testall and
# MPI_Iprobe, then completes them with one more call (rank 1 acknowledged after sending,
# so the messages are there); last, 60 MPI_Iprobes that find nothing run
# straight into MPI_Finalize, which must ship their count. By default
# only the first poll of a run of
# the same requests is recorded, and the calls that complete something,
# and the metric "MPI polls collapsed" ends at the number of the others;
# with WEFT_MPI_POLL=all every call is recorded and nothing collapsed; a
# WEFT_MPI_POLL that is neither is reported and collapses. The archive
# passes otf2-print -Werror, and every message sent is received (per
# sender, receiver, tag and size).
. "$(dirname "$0")/lib.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
unset WEFT_TRACE WEFT_MPI_POLL
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"

cat >"$TMP/poll.c" <<'PROG'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c, what)                                                     \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "poll: %s\n", what);                           \
            MPI_Abort(MPI_COMM_WORLD, 3);                                  \
        }                                                                  \
    } while (0)

static int buf[2], msg = 7;
static MPI_Request rq[2];
static MPI_Status sts[2];

/* Rank 0: receives of tags tag, tag + 1 from rank 1. */
static void post(int tag)
{
    MPI_Irecv(&buf[0], 1, MPI_INT, 1, tag, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&buf[1], 1, MPI_INT, 1, tag + 1, MPI_COMM_WORLD, &rq[1]);
}

/* Rank 0: rank 1 sends both and says it did. */
static void go(int tag)
{
    MPI_Send(&msg, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
    MPI_Recv(&msg, 1, MPI_INT, 1, tag + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void rank0(void)
{
    int flag, idx, out, idxs[2];

    post(10);       /* Test: 400 of A, 1 of B, 400 of A, then A completes */
    for (int i = 0; i < 801; i++) {
        MPI_Test(&rq[i == 400], &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "Test completed early");
    }
    go(10);
    MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "Test did not complete");
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);

    post(20);       /* Testany: 300, then two that complete */
    for (int i = 0; i < 300; i++) {
        MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "Testany completed early");
    }
    go(20);
    for (int i = 0; i < 2; i++) {
        MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE);
        CHECK(flag && idx != MPI_UNDEFINED, "Testany did not complete");
    }

    post(30);       /* Testsome: 200, then one completes both */
    for (int i = 0; i < 200; i++) {
        MPI_Testsome(2, rq, &out, idxs, sts);
        CHECK(out == 0, "Testsome completed early");
    }
    go(30);
    MPI_Testsome(2, rq, &out, idxs, sts);
    CHECK(out == 2, "Testsome did not complete both");

    post(40);       /* Testall: 100, then one completes both */
    for (int i = 0; i < 100; i++) {
        MPI_Testall(2, rq, &flag, sts);
        CHECK(!flag, "Testall completed early");
    }
    go(40);
    MPI_Testall(2, rq, &flag, sts);
    CHECK(flag, "Testall did not complete");

    for (int i = 0; i < 150; i++) {   /* Iprobe: 150, then one finds */
        MPI_Iprobe(1, 50, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "Iprobe found a message early");
    }
    go(50);
    MPI_Iprobe(1, 50, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "Iprobe found nothing");
    MPI_Recv(&buf[0], 1, MPI_INT, 1, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&buf[1], 1, MPI_INT, 1, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 60; i++) {    /* Iprobe: 60 fruitless, then */
        MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "Iprobe found a message never sent");
    }                                 /* MPI_Finalize closes the run */
}

static void rank1(void)
{
    int v = 1;

    for (int tag = 10; tag <= 50; tag += 10) {
        MPI_Recv(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
        MPI_Send(&v, 1, MPI_INT, 0, tag + 1, MPI_COMM_WORLD);
        MPI_Send(&v, 1, MPI_INT, 0, tag + 2, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        rank0();
    else if (rank == 1)
        rank1();
    MPI_Finalize();
    return 0;
}
PROG

# check NAME MODE: the archive of trace NAME, run with WEFT_MPI_POLL=all
# (MODE all) or collapsing (MODE collapse).
check() {
    local name=$1 archive
    archive=$(valid_archive "$name") || exit 1
    "$PY" - "$archive" "$2" <<'PY' || fail "$name ($2): the archive is not what poll did"
import collections, sys, otf2
collapse = sys.argv[2] == "collapse"
# Recorded calls of rank 0, and the fruitless ones counted, not recorded.
if collapse:
    want = {"MPI_Test": 4, "MPI_Testany": 3, "MPI_Testsome": 2,
            "MPI_Testall": 2, "MPI_Iprobe": 3}
    want_collapsed = 399 + 399 + 299 + 199 + 99 + 149 + 59
else:
    want = {"MPI_Test": 802, "MPI_Testany": 302, "MPI_Testsome": 201,
            "MPI_Testall": 101, "MPI_Iprobe": 211}
    want_collapsed = None
bad = []
visits = collections.defaultdict(collections.Counter)
metrics = collections.defaultdict(dict)
sends, recvs = collections.Counter(), collections.Counter()
with otf2.reader.open(sys.argv[1]) as r:
    for loc, ev in r.events:
        rank = int(loc.group.name.split()[-1])
        kind = type(ev).__name__
        if kind == "Enter":
            visits[rank][ev.region.name] += 1
        elif kind == "Metric":
            metrics[rank][ev.metric.members[0].name] = ev.values[0]
        elif kind in ("MpiSend", "MpiIsend"):
            sends[(rank, ev.receiver, ev.msg_tag, ev.msg_length)] += 1
        elif kind in ("MpiRecv", "MpiIrecv"):
            recvs[(ev.sender, rank, ev.msg_tag, ev.msg_length)] += 1
for fn, n in want.items():
    if visits[0][fn] != n:
        bad.append("rank 0: %d %s recorded, want %d" % (visits[0][fn], fn, n))
got = metrics[0].get("MPI polls collapsed")
if got != want_collapsed:
    bad.append("rank 0: MPI polls collapsed %s, want %s" % (got, want_collapsed))
t = metrics[0].get("MPI poll time collapsed")
if collapse and not t:
    bad.append("rank 0: MPI poll time collapsed %s" % t)
if metrics[1]:
    bad.append("rank 1 polled nothing, has %s" % metrics[1])
if sends != recvs or sum(sends.values()) != 5 * 4:
    bad.append("messages: sent %s, received %s" % (dict(sends), dict(recvs)))
for b in bad:
    print("poll:", b)
sys.exit(1 if bad else 0)
PY
}

# run FLAVOUR NAME MODE [WEFT_MPI_POLL value]: traces poll as NAME.
run() {
    local flavour=$1 name=$2 args=(-np 2)
    [ "$flavour" = openmpi ] && args+=(--oversubscribe -x WEFT_LIBDIR -x WEFT_SERVER -x LD_PRELOAD -x ASAN_OPTIONS -x WEFT_MPI_POLL)
    (
        [ $# -lt 4 ] || export WEFT_MPI_POLL="$4"
        LD_PRELOAD=$(echo $WEFT_SAN_PRELOAD) timeout 120 "mpirun.$flavour" \
            "${args[@]}" "$WEFT" run --trace "$name" -- "$TMP/poll-$flavour" \
            >"$TMP/$name.out" 2>&1
    ) || fail "$flavour: poll failed under weft run: $(cat "$TMP/$name.out")"
    check "$name" "$3"
}

ran=0
start_weftd
for flavour in openmpi mpich; do
    if ! command -v "mpicc.$flavour" >/dev/null ||
        ! command -v "mpirun.$flavour" >/dev/null ||
        [ ! -e "$WEFT_LIBDIR/libweft-mpi-$flavour.so" ]; then
        echo "SKIP: $flavour: mpicc, mpirun or libweft-mpi-$flavour.so missing"
        continue
    fi
    "mpicc.$flavour" -o "$TMP/poll-$flavour" "$TMP/poll.c" ||
        fail "mpicc.$flavour cannot build poll"
    run "$flavour" "poll-$flavour" collapse
    run "$flavour" "pollall-$flavour" all all
    run "$flavour" "pollbad-$flavour" collapse sometimes
    grep -q 'WEFT_MPI_POLL="sometimes": expected all or collapse' \
        "$TMP/pollbad-$flavour.out" ||
        fail "$flavour: WEFT_MPI_POLL=sometimes not reported: $(cat "$TMP/pollbad-$flavour.out")"
    ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "SKIP: no MPI implementation"; exit 77; }
echo ok

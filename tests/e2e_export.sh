#!/bin/bash
# e2e_export.sh - weft export --format chrome-json against a real weftd's
# archives, checked by tests/check_export.py with otf2-print as the
# reference: every record kind (weft-demo --all-records, on
# CLOCK_MONOTONIC and on the default clock, whose TSC ticks and
# ClockOffsets must come out as otf2-print's corrected times in us)
# arrives, as often as the archive holds it, at its time, with its
# fields (collectives' operation, root, sizes and communicator, I/O
# operations' handle, mode and bytes, ...) and its attributes as args
# with the archive's values (read again with libotf2's Python binding);
# pids start at 1, counters are per location, arrows pair up; on a
# terminal export shows its progress on stderr (under script(1)), and
# writes the same file; an MPI program traced
# under mpirun (Open MPI: messages between all ranks, received from any
# source, and around a communicator of reversed ranks) has an arrow from
# every send to its receive; the
# filters (--from/--to, --ranks, --regions, --min-duration) keep exactly
# what they should, arrows only whole; FILE.gz decompresses to the same
# JSON; a region name of invalid UTF-8, control characters and a
# CESU-encoded surrogate still gives valid JSON; bad option values are
# usage errors naming the option.
. "$(dirname "$0")/lib.sh"

CAT="$SPOOL/catalog.db"
W() { "$WEFT" --catalog "$CAT" "$@"; }
CHECK() { "$PY" "$WEFT_SRCDIR/tests/check_export.py" "$@"; }
archive_of() { W show "$1" --json >"$TMP/show.json" && json_get "$TMP/show.json" 'j["archive"]'; }

start_weftd
WEFT_TRACE=mono WEFT_CLOCK=monotonic timeout 60 "$DEMO" -p 3 -t 2 --all-records \
    --sent "$TMP/sent.jsonl" >"$TMP/demo.out" 2>&1 || { cat "$TMP/demo.out" >&2; fail "weft-demo --all-records failed"; }
WEFT_TRACE=tsc timeout 60 "$DEMO" -p 3 -t 2 --all-records \
    >"$TMP/demo.out" 2>&1 || { cat "$TMP/demo.out" >&2; fail "weft-demo --all-records failed"; }
WEFT_TRACE=plain timeout 60 "$DEMO" -p 2 -t 2 -n 300 \
    >"$TMP/demo.out" 2>&1 || { cat "$TMP/demo.out" >&2; fail "weft-demo failed"; }
for t in mono tsc plain; do wait_state $t complete 60; done

# ---- every record kind, at otf2-print's times, fields and attributes ----
# (--sent: the schema line of the record table, for reading the archive)
for t in mono tsc; do
    W export $t --format chrome-json -o "$TMP/$t.json" 2>"$TMP/err" ||
        fail "export $t: $(cat "$TMP/err")"
    [ -s "$TMP/err" ] && fail "export $t wrote to a non-terminal stderr: $(cat "$TMP/err")"
    out=$(CHECK full "$TMP/$t.json" "$(archive_of $t)" --sent "$TMP/sent.jsonl") ||
        fail "export of $t is wrong"
    echo "$t: $out"
    echo "$out" | "$PY" -c 'import json,sys; j=json.load(sys.stdin)
assert j["kinds"] == 79 and j["processes"] == 3 and j["counters"] == 12, j
assert j["flows"] == {"mpi": 4, "thread": 24}, j
assert j["args"]["fields"] > 0 and j["args"]["attributes"] > 0, j' ||
        fail "$t: not every kind, process, counter, arrow, field or attribute"
done
res=$(CHECK full "$TMP/tsc.json" "$(archive_of tsc)" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["resolution"])')
[ "$res" != 1000000000 ] || echo "note: the default clock counted ns here (no TSC), not ticks"

# ---- progress on a terminal ----
# (none on a stderr that is not one: above). The archive has
# communicators, so the messages are matched first.
events=$(W show mono --json >"$TMP/show.json" && json_get "$TMP/show.json" 'j["events"]')
cmd=$(printf '%q ' "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$TMP/tty.json")
timeout 60 script -qec "$cmd" /dev/null >"$TMP/tty.out" </dev/null ||
    { cat -v "$TMP/tty.out" >&2; fail "export under a terminal failed"; }
tr '\r' '\n' <"$TMP/tty.out" >"$TMP/tty.txt"
grep -qx "weft export: matching messages, location 1 of [0-9]*" "$TMP/tty.txt" ||
    { cat -v "$TMP/tty.out" >&2; fail "no progress of matching messages on a terminal"; }
grep -qxF "weft export: $events events read, written to $TMP/tty.json" "$TMP/tty.txt" ||
    { cat -v "$TMP/tty.out" >&2; fail "no '$events events read' on a terminal"; }
cmp -s "$TMP/tty.json" "$TMP/mono.json" || fail "export on a terminal wrote another file"

# ---- filters ----
A=$(archive_of mono)
W export mono --format chrome-json -o "$TMP/f1.json" --from 40us --to 0.0001 --ranks 0,2 ||
    fail "export --from --to --ranks failed"
CHECK filtered "$TMP/mono.json" "$TMP/f1.json" "$A" --from 40 --to 100 --ranks 0,2 ||
    fail "--from/--to/--ranks kept the wrong events"
W export mono --format chrome-json -o "$TMP/f2.json" --regions 'comp*' ||
    fail "export --regions failed"
CHECK filtered "$TMP/mono.json" "$TMP/f2.json" "$A" --regions 'comp*' ||
    fail "--regions kept the wrong events"
grep -q '"name":"compute"' "$TMP/f2.json" || fail "--regions 'comp*' left out compute"
W export plain --format chrome-json -o "$TMP/plain.json" || fail "export plain failed"
W export plain --format chrome-json -o "$TMP/f3.json" --min-duration 2us ||
    fail "export --min-duration failed"
CHECK filtered "$TMP/plain.json" "$TMP/f3.json" "$(archive_of plain)" --min-duration 2 ||
    fail "--min-duration kept the wrong slices"
# Absolute times: @TICKS as otf2-print prints them.
off=$(otf2-print -G "$A" | sed -n 's/.*Global Offset: \([0-9]*\),.*/\1/p')
W export mono --format chrome-json -o "$TMP/f4.json" --from @$((off + 40000)) --to @$((off + 100000)) --ranks 0,2 ||
    fail "export --from @TICKS failed"
cmp -s "$TMP/f1.json" "$TMP/f4.json" || fail "--from @TICKS --to @TICKS differs from --from 40us --to 0.0001"

# ---- gzip ----
W export plain --format chrome-json -o "$TMP/plain.json.gz" || fail "export to .gz failed"
gzip -t "$TMP/plain.json.gz" || fail "the .gz output is not gzip"
"$PY" -c 'import gzip,sys
assert gzip.open(sys.argv[1]).read() == open(sys.argv[2], "rb").read()' \
    "$TMP/plain.json.gz" "$TMP/plain.json" || fail ".json.gz does not decompress to the .json"

# ---- a region name that is not UTF-8 ----
# Same length as "exchange": an invalid byte, a CESU-encoded surrogate
# (ED A0 80), two control characters.
"$PY" - "$(dirname "$(archive_of plain)")/traces.def" <<'PY' || fail "cannot patch the region name"
import sys
p = sys.argv[1]
d = open(p, "rb").read()
assert d.count(b"exchange\0") == 1, d.count(b"exchange\0")
open(p, "wb").write(d.replace(b"exchange\0", b"x\xff\xed\xa0\x80\x01\x1fe\0"))
PY
W export plain --format chrome-json -o "$TMP/bad.json" || fail "export of a bad name failed"
"$PY" - "$TMP/bad.json" <<'PY' || fail "a name of invalid UTF-8 gave invalid JSON"
import json, sys
ev = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["traceEvents"]
names = {e["name"] for e in ev if e["ph"] == "X"}
bad = [n for n in names if n.startswith("x")]
assert bad == ["x\ufffd\ufffd\ufffd\ufffd\x01\x1fe"], bad
assert not any(0xd800 <= ord(c) <= 0xdfff for n in names for c in n)
PY

# ---- bad option values ----
E="$TMP/x.json"
expect 2 "--from: 'soon' is not a time" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --from soon
expect 2 "--to: '-1' is not a time" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --to -1
expect 2 "--min-duration: '@5' is not a time" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --min-duration @5
expect 2 "--ranks: '3-1' is not a list" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --ranks 3-1
expect 2 "--ranks: '1,' is not a list" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --ranks 1,
expect 2 "--regions needs a GLOB" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --regions ''
expect 2 "--from 2 is after --to 1" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --from 2 --to 1
expect 2 "--from needs a TIME" "$WEFT" --catalog "$CAT" export mono --format chrome-json -o "$E" --from
[ -e "$E" ] && fail "a refused export left $E"

# ---- MPI under mpirun: every send has its arrow ----
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
    [ -e "$WEFT_LIBDIR/libweft-mpi-openmpi.so" ]; then
    cat >"$TMP/ring.c" <<'PROG'
#include <mpi.h>
/* Two messages from every rank to every other (any source, any tag
 * received), then one around a communicator whose ranks are the world's
 * reversed. */
int main(int argc, char **argv)
{
    int rank, size, crank, in, b = -1;
    MPI_Comm rev;
    MPI_Request rq[64];
    int n = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int tag = 0; tag < 2; tag++)
        for (int p = 0; p < size && n < 64; p++)
            if (p != rank)
                MPI_Isend(&rank, 1, MPI_INT, p, tag, MPI_COMM_WORLD, &rq[n++]);
    for (int i = 0; i < n; i++)
        MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_rank(rev, &crank);
    MPI_Irecv(&b, 1, MPI_INT, (crank + 1) % size, 1, rev, &rq[0]);
    MPI_Isend(&rank, 1, MPI_INT, (crank + size - 1) % size, 1, rev, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, rev);
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return 0;
}
PROG
    mpicc.openmpi -o "$TMP/ring" "$TMP/ring.c" || fail "mpicc cannot build the ring"
    WEFT_TRACE=ring LD_PRELOAD=$(echo $WEFT_SAN_PRELOAD) timeout 60 mpirun.openmpi \
        --allow-run-as-root --oversubscribe -np 4 -x WEFT_LIBDIR -x WEFT_SERVER \
        -x WEFT_TRACE -x LD_PRELOAD -x ASAN_OPTIONS \
        "$WEFT" run -- "$TMP/ring" >"$TMP/ring.out" 2>&1 ||
        { cat "$TMP/ring.out" >&2; fail "the traced ring failed"; }
    wait_state ring complete 60
    W export ring --format chrome-json -o "$TMP/ring.json" || fail "export ring failed"
    out=$(CHECK full "$TMP/ring.json" "$(archive_of ring)" --mpi --sent "$TMP/sent.jsonl") ||
        fail "export of the ring is wrong"
    echo "ring: $out"
    echo "$out" | "$PY" -c 'import json,sys; j=json.load(sys.stdin)
assert j["flows"] == {"mpi": 28} and j["processes"] == 4, j' ||
        fail "the ring's 28 messages are not 28 arrows"
    W export ring --format chrome-json -o "$TMP/ring1.json" --ranks 1-2 || fail "export ring --ranks failed"
    CHECK filtered "$TMP/ring.json" "$TMP/ring1.json" "$(archive_of ring)" --ranks 1,2 ||
        fail "--ranks cut the ring's arrows wrong"
else
    echo "SKIP the MPI ring: mpicc.openmpi, mpirun.openmpi or libweft-mpi-openmpi.so missing"
fi
stop_weftd
echo ok

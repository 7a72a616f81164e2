#!/bin/bash
# e2e_cluster_mpi.sh - an MPI job spread over the nodes of a cluster of
# weftds (#34) is one trace at the head, with Open MPI and with MPICH.
# A head and two nodes, n1 and n2, each a network namespace of its own
# with its munged (the cluster's key) and its weftd (tests/cluster_lib.sh,
# as tests/e2e_cluster.sh makes them); a user of the test's own runs
# mpirun on n1, which starts ranks 0-1 there and 2-3 on n2 through an rsh
# of the test's (tests/cluster_mpi_rsh.py: the command runs as that user
# in the node's namespaces, host name $P-NODE, with the node's weftd as
# WEFT_SERVER); MPI's TCP stays on eth0. Each rank is tests/mpi/every
# under `weft run`, and talks to its own node's weftd over its Unix
# socket. Then, at the head: exactly one trace of the launch (named by
# rank 0 from the program and the launcher's job, or rank 0's host and
# pid under MPICH's hydra, which names no job), complete with 4 members,
# two on each node (their host names), owned by the user; its archive
# passes otf2-print -Werror and check_mpi.py's checks (both python
# readers, each rank's events as the program counted them, every message
# matched across the nodes, every collective seen by all its members; run
# by tests/cluster_mpi_check.py, as every.c's communicator of the ranks
# sharing a node is one communicator per node here); each node forwarded
# its own two ranks (its log) and made no trace of its own. The head's
# archive_root is a directory n1 sees and n2 does not (it looks at one of
# its own): n1 journals its ranks itself and writes their event files
# into the trace's archive there, sending the head their definitions and
# sums only (issue #34's nodes that write); n2 forwards its ranks' every
# frame to the head. One job, both ways at once.
. "$(dirname "$0")/lib.sh"

P="wm$$"          # namespaces: $P-sw (the bridge), $P-head, $P-n1, $P-n2
. "$(dirname "$0")/cluster_lib.sh"

RSH_PY="$WEFT_SRCDIR/tests/cluster_mpi_rsh.py"
ulimit -c 0
# Sanitized builds: the runtimes are preloaded into MPI programs built
# without them, whose MPI libraries leak by design.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
unset WEFT_TRACE WEFT_RUN WEFT_RANK WEFT_SIZE WEFT_SERVER LD_PRELOAD

# The flavours that can run here: the program, the launcher, the recorder.
FLAVOURS=()
for flavour in openmpi mpich; do
    launcher=mpirun.openmpi
    [ "$flavour" = mpich ] && launcher=mpiexec.mpich
    if [ ! -x "$WEFT_BUILDDIR/tests/mpi/every-$flavour" ]; then
        echo "SKIP: $flavour: tests/mpi/every-$flavour not built (configure found no $flavour)"
    elif ! command -v "$launcher" >/dev/null; then
        echo "SKIP: $flavour: no $launcher"
    elif [ ! -f "$WEFT_BUILDDIR/.libs/libweft-mpi-$flavour.so" ]; then
        echo "SKIP: $flavour: libweft-mpi-$flavour.so is not built"
    else
        FLAVOURS+=("$flavour")
    fi
done
[ ${#FLAVOURS[@]} -gt 0 ] || { echo "SKIP: no MPI flavour can be traced here"; exit 77; }

make_user RUNNER   # runs the jobs; $TMP/pub: what RUNNER may use
bridge
host head 10.231.8.1
host n1 10.231.8.11
host n2 10.231.8.12
head -c 1024 /dev/urandom >"$TMP/key" && chmod 600 "$TMP/key"
for n in head n1 n2; do
    munge "$n" "$TMP/key"
done
HEAD="${ADDR[head]}:7411"
mkdir -m 0755 "$TMP/shared" "$TMP/n2-view" || fail "cannot make the archive roots"
weftd_in head --set "archive_root=$TMP/shared"
weftd_in n1 --set "head=$HEAD" --set node_name=n1
weftd_in n2 --set "head=$HEAD" --set node_name=n2 --set "archive_root=$TMP/n2-view"
until_ 20 "both nodes linked to the head" nodes_are "n1=linked n2=linked"
for n in n1 n2; do
    until_ 5 "$n's status showing its link" head_is "$n" linked
done
until_ 10 "n1 finding the head's archive_root" archive_is n1 ok
until_ 10 "n2 finding the head's archive_root not where it looks" archive_is n2 unusable
echo "ok: n1 and n2 linked to the head; n1 sees its archive_root, n2 not"

# The cluster's rsh: RSH ADDR COMMAND runs COMMAND as its caller on the
# node at ADDR, with that node's weftd and a temporary directory of its
# own (Open MPI's session directory) in the environment.
"$PY" "$RSH_PY" serve "$TMP/pub/rsh.sock" "$P" \
    --env "WEFT_SERVER=unix:$TMP/{node}/weftd.sock" \
    --env "TMPDIR=$TMP/pub/{node}.tmp" \
    "${ADDR[n1]}=n1" "${ADDR[n2]}=n2" >>"$TMP/rsh.log" 2>&1 &
PIDS+=($!)
disown $!
until_ 10 "the cluster's rsh listening" test -S "$TMP/pub/rsh.sock"
RSH="$TMP/pub/rsh"
printf '#!/bin/sh\nexec %q %q agent %q "$@"\n' "$PY" "$RSH_PY" \
    "$TMP/pub/rsh.sock" >"$RSH" && chmod 755 "$RSH" || fail "cannot write $RSH"
for n in n1 n2; do
    mkdir "$TMP/pub/$n.tmp" && chown "$RUNNER" "$TMP/pub/$n.tmp" ||
        fail "cannot make $n's temporary directory"
done


# traces NAME PREFIX: TRACES, the names of the traces in the catalog of
# NAME's weftd that start with PREFIX.
traces() {
    "$WEFT" --catalog "$TMP/$1/catalog.db" list --json >"$TMP/list.json" ||
        fail "weft list of $1's catalog failed"
    TRACES=$("$PY" -c '
import json, sys
print(*[t["name"] for t in json.load(open(sys.argv[1]))
        if t["name"].startswith(sys.argv[2])])' "$TMP/list.json" "$2")
}
has_traces() { traces "$1" "$2" && [ -n "$TRACES" ]; }

# shellcheck disable=SC2206 # WEFT_SAN_PRELOAD is a list of paths
SAN=(${WEFT_SAN_PRELOAD:-})
for flavour in "${FLAVOURS[@]}"; do
    expect_dir="$TMP/pub/$flavour.expect"
    mkdir "$expect_dir" && chown "$RUNNER" "$expect_dir" ||
        fail "cannot make $expect_dir"
    # What each rank runs, whatever the launcher passes on: weft run
    # finding libweft-mpi-$flavour.so in this build's .libs, every MPI_Test*
    # recorded (check_mpi.py counts them), tracing required (a rank that
    # cannot reach its weftd fails the job instead of running untraced).
    tracer=(env "WEFT_LIBDIR=$WEFT_BUILDDIR/.libs"
            "LD_LIBRARY_PATH=$WEFT_BUILDDIR/.libs" WEFT_MPI_POLL=all
            WEFT_REQUIRED=1 "WEFT_CONFIG=$WEFT_CONFIG"
            "WEFT_TEST_EXPECT_DIR=$expect_dir" "ASAN_OPTIONS=$ASAN_OPTIONS"
            "UBSAN_OPTIONS=${UBSAN_OPTIONS:-}")
    [ ${#SAN[@]} -eq 0 ] || tracer+=("LD_PRELOAD=${SAN[*]}")
    tracer+=("$WEFT" run -v -- "$WEFT_BUILDDIR/tests/mpi/every-$flavour")
    # Two ranks a node. Open MPI: one-sided through point-to-point (osc
    # rdma makes no window over TCP between nodes: MPI_ERR_WIN). Hydra:
    # -genvnone, or every rank would take mpiexec's WEFT_SERVER (n1's
    # weftd) with the rest of its environment.
    case $flavour in
    openmpi)
        job=(mpirun.openmpi --mca plm_rsh_agent "$RSH"
             -H "${ADDR[n1]}:2,${ADDR[n2]}:2" -np 4
             --mca btl "tcp,vader,self" --mca btl_tcp_if_include eth0
             --mca oob_tcp_if_include eth0 --mca pml ob1 --mca osc pt2pt) ;;
    mpich)
        job=(mpiexec.mpich -launcher ssh -launcher-exec "$RSH" -genvnone
             -hosts "${ADDR[n1]}:2,${ADDR[n2]}:2" -np 4 -iface eth0) ;;
    esac
    SECONDS=0
    as "$RUNNER" timeout -k 5 60 "$RSH" "${ADDR[n1]}" \
        "$(printf '%q ' "${job[@]}" "${tracer[@]}")" \
        >"$TMP/$flavour.out" 2>&1 </dev/null ||
        fail "$flavour: the job across n1 and n2 failed: $(tail -n 20 "$TMP/$flavour.out")"
    echo "$flavour: the job ran on n1 and n2 in $SECONDS s"
    [ "$(ls "$expect_dir" | wc -l)" = 4 ] ||
        fail "$flavour: the ranks wrote $(ls "$expect_dir" | wc -l) expectations, not 4"

    # At the head: one trace of the launch, complete, 4 members, two on
    # each node, the user's.
    until_ 30 "$flavour: a trace every-$flavour-* at the head" has_traces head \
        "every-$flavour-"
    traces head "every-$flavour-"
    name=$TRACES
    [ "$(echo "$name" | wc -w)" = 1 ] ||
        fail "$flavour: not one trace every-$flavour-* at the head: '$name'"
    SPOOL=$TMP/head wait_state "$name" complete 60
    [ "$(json_get "$TMP/show.json" 'j["members"]')" = 4 ] ||
        fail "$name: $(json_get "$TMP/show.json" 'j["members"]') members, not 4"
    [ "$(json_get "$TMP/show.json" 'j["uid"]')" = "$RUNNER_UID" ] ||
        fail "$name: owned by uid $(json_get "$TMP/show.json" 'j["uid"]'), not $RUNNER ($RUNNER_UID)"
    hosts=$(json_get "$TMP/show.json" \
        '" ".join("%d@%s" % (r["rank"], r["host"]) for r in sorted(j["ranks"], key=lambda r: r["rank"]))')
    [ "$hosts" = "0@$P-n1 1@$P-n1 2@$P-n2 3@$P-n2" ] ||
        fail "$name: ranks and their hosts are '$hosts', expected 0-1 on $P-n1, 2-3 on $P-n2"
    "$WEFT" --catalog "$TMP/head/catalog.db" show "$name" | sed 's/^/  /'
    archive=$(json_get "$TMP/show.json" 'j["archive"]')
    otf2-print -Werror --silent "$archive" >"$TMP/$flavour.print" 2>&1 ||
        fail "$name: otf2-print -Werror rejects $archive: $(head -n 5 "$TMP/$flavour.print")"
    "$PY" "$WEFT_SRCDIR/tests/cluster_mpi_check.py" "$archive" "$expect_dir" \
        >"$TMP/$flavour.check" ||
        fail "$name: the archive is not what the ranks did (cluster_mpi_check.py above)"
    echo "$name: $(cat "$TMP/$flavour.check")"
    # n1 journaled its two ranks and wrote their events into the archive
    # in the shared archive_root (the head none of them), n2 forwarded
    # its two; neither made a trace of its own, n1's part is gone.
    case $archive in
    "$TMP/shared/"*/archive/traces.otf2) ;;
    *) fail "$name: its archive $archive is not in the head's archive_root" ;;
    esac
    got=$(node_ranks n1 "$name" "journaled here")
    [ "$got" = "0 1" ] || fail "$name: n1 journaled ranks '$got' itself, not 0 1"
    [ -z "$(node_ranks n1 "$name" "forwarded to the head")" ] ||
        fail "$name: n1 forwarded ranks $(node_ranks n1 "$name" "forwarded to the head")"
    got=$(node_ranks n2 "$name" "forwarded to the head")
    [ "$got" = "2 3" ] || fail "$name: n2 forwarded ranks '$got' to the head, not 2 3"
    for r in 0 1; do
        grep -q "peer .* trace '$name' rank $r: EventBatch" "$TMP/head.log" &&
            fail "$name: the head got rank $r's events, which n1 wrote"
    done
    no_part() {
        [ -z "$(find "$TMP/n1/parts" -mindepth 1 -maxdepth 1 -name "every-$flavour-*" 2>/dev/null)" ]
    }
    until_ 10 "$name: n1 removing its part once done" no_part
    for n in n1 n2; do
        traces "$n" "every-$flavour-"
        [ -z "$TRACES" ] &&
            [ -z "$(find "$TMP/$n/traces" -mindepth 1 -maxdepth 1 -name "every-$flavour-*" 2>/dev/null)" ] ||
            fail "$name: $n made a trace of its own: $TRACES"
    done
    echo "ok: $flavour: one job on n1 and n2 is one trace at the head, every message matched; n1 wrote its ranks' events, n2 forwarded its"
done

stop_weftds n1 n2 head
echo "PASS"

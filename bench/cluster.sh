#!/bin/bash
# bench/cluster.sh - a head weftd and NODES node weftds (issue #34), each
# in a network namespace of its own on a bridge (as tests/e2e_cluster.sh:
# veth pairs, addresses only inside the namespaces), driven by
# bench/ingest clients on every node: RANKS ranks per node, all of one
# trace, each BATCHES batches of EVENTS Enter/Leave events, through the
# node's Unix socket. Then the same clients, NODES x RANKS ranks, into
# one weftd alone (its Unix socket), in the same run. Root only.
#
#   make -C BUILD_DIR && bash bench/cluster.sh [-n NODES] [-p RANKS]
#        [-b BATCHES] [-e EVENTS] [-r ROUNDS] [-i IDLE] [-c] [-f] BUILD_DIR
#
# -c: the cluster only. One weftd alone holds a socket per rank and,
# while they write, their journals: two descriptors per rank, 40 000 for
# 20 000 ranks; beyond the hard limit here (ulimit -Hn; it is raised
# where root may), the single weftd is left out, saying so.
# -f: the nodes forward every frame to the head (no archive_root), as
# before #34's step B; by default the head's archive_root is a directory
# every node sees, and the nodes journal their ranks and write their
# event files there, the head getting definitions and sums.
#
# Defaults: 8 nodes x 2500 ranks (20 000 ranks in one trace), 4 batches
# of 1000 events (80 M events), 1 round. Each round prints, for the
# cluster and for the single weftd: the wall time until every batch was
# acknowledged and the aggregate ingest rate; the time from the last
# goodbye to `complete`; CPU time per event of the head, of the nodes
# (their sum) and of all weftds (the single weftd's); the head's peak
# RSS; the most connections any one weftd held (sampled every 0.2 s);
# and the bytes the head received on its network interface.
#
# With -f the head's CPU and bytes grow with the events; without, with
# the ranks and their definitions (issue #34: compare two sizes). What
# the head spends while nothing records (heartbeats, its nodes' figures
# and clock questions: per second, measured for IDLE seconds, -i, before
# the first round) is also taken off each round's, for its length: what
# the trace itself cost the head.
BENCH=bench/cluster
NODES=8 RANKS=2500 BATCHES=4 EVENTS=1000 ROUNDS=1 ALONE=1 FORWARD=0 IDLE=10
while getopts "n:p:b:e:r:i:cf" o; do
    case $o in
    i) IDLE=$OPTARG ;;
    c) ALONE=0 ;;
    f) FORWARD=1 ;;
    n) NODES=$OPTARG ;;
    p) RANKS=$OPTARG ;;
    b) BATCHES=$OPTARG ;;
    e) EVENTS=$OPTARG ;;
    r) ROUNDS=$OPTARG ;;
    *) echo "usage: bench/cluster.sh [-n NODES] [-p RANKS] [-b BATCHES] [-e EVENTS] [-r ROUNDS] [-i IDLE] [-c] [-f] BUILD_DIR" >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
B=$(cd "${1:?usage: bench/cluster.sh [options] BUILD_DIR}" && pwd) || exit 2
RUN_TIMEOUT=600
[ "$(id -u)" -eq 0 ] || { echo "$BENCH: needs root (ip netns)" >&2; exit 2; }
command -v ip >/dev/null || PATH=$PATH:/usr/sbin:/sbin
command -v munged >/dev/null || PATH=$PATH:/usr/sbin
. "$(dirname "$0")/lib.sh"

P="wb$$"
NETS=()
PIDS=()
bench_cleanup_more() {
    for p in "${PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    for n in "${NETS[@]}"; do
        ip netns pids "$n" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$n" 2>/dev/null
    done
}

# The cluster's network: a bridge in a namespace of its own, and one
# namespace per weftd.
ip netns add "$P-sw" && NETS+=("$P-sw") || die "ip netns add failed"
ip -n "$P-sw" link add br0 type bridge && ip -n "$P-sw" link set br0 up ||
    die "cannot make a bridge"
host() { # NAME ADDRESS
    ip netns add "$P-$1" && NETS+=("$P-$1") &&
        ip -n "$P-$1" link add eth0 type veth peer name "$1" netns "$P-sw" &&
        ip -n "$P-sw" link set "$1" master br0 up &&
        ip -n "$P-$1" addr add "$2/16" dev eth0 &&
        ip -n "$P-$1" link set eth0 up && ip -n "$P-$1" link set lo up ||
        die "cannot wire namespace $P-$1"
}
# One munged serves every namespace (its socket is a file).
head -c 1024 /dev/urandom >"$TMP/key" && chmod 600 "$TMP/key"
munged -F -f --key-file="$TMP/key" --socket="$TMP/munge" \
    --pid-file="$TMP/munge.pid" --seed-file="$TMP/munge.seed" \
    --log-file="$TMP/munge.log" >>"$TMP/munge.log" 2>&1 &
PIDS+=($!)
disown $!
for _ in $(seq 100); do [ -S "$TMP/munge" ] && break; sleep 0.05; done
[ -S "$TMP/munge" ] || die "munged did not start"

LIMITS=(--set max_connections=100000 --set max_connections_per_user=100000
        --set max_preauth_connections=100000 --set max_preauth_per_address=100000
        --set max_members_per_user=100000)
# weftd_in NAME SPOOL [ARGS...]: a weftd in namespace NAME (or the host's
# for NAME "-"), its pid in WPID.
weftd_in() {
    local name=$1 spool=$2
    shift 2
    mkdir -p "$spool"
    if [ "$name" = - ]; then
        "$B/weftd" --spool "$spool" --log-level warning \
            --set "munge_socket=$TMP/munge" "${LIMITS[@]}" "$@" \
            >>"$spool.log" 2>&1 &
    else
        ip netns exec "$P-$name" "$B/weftd" --spool "$spool" \
            --log-level warning --set "munge_socket=$TMP/munge" \
            "${LIMITS[@]}" "$@" >>"$spool.log" 2>&1 &
    fi
    WPID=$!
    PIDS+=($WPID)
    disown "$WPID"
    for _ in $(seq 100); do [ -S "$spool/weftd.sock" ] && return 0; sleep 0.1; done
    die "weftd $name did not start: $(tail -n 3 "$spool.log")"
}

# sockets PID: the sockets process PID holds.
sockets() {
    find "/proc/$1/fd" -lname 'socket:*' 2>/dev/null | wc -l
}

# complete CATALOG TRACE: waits until TRACE is complete (or dies saying
# what it is, and why).
complete() {
    local state=""
    for _ in $(seq $((RUN_TIMEOUT * 10))); do
        state=$("$B/weft" --catalog "$1" show "$2" --json 2>/dev/null |
            /usr/bin/python3 -c 'import json,sys; j = json.load(sys.stdin); print(j["state"], j.get("error") or "")' 2>/dev/null)
        case $state in complete*) return 0 ;; partial*|failed*) break ;; esac
        sleep 0.1
    done
    die "trace $2 is '${state:-not in the catalog}', not complete"
}

# drive TRACE SOCKET-OF-NODE...: the clients of every node (rank blocks
# in node order), at once; waits for all; prints the wall seconds.
drive() {
    local trace=$1 t0 pids=() k=0 ns sock
    shift
    t0=$(date +%s.%N)
    for target in "$@"; do
        ns=${target%%=*} sock=${target#*=}
        if [ "$ns" = - ]; then
            "$B/bench/ingest" -A "unix:$sock" -T "$trace" -R $((k * RANKS)) \
                -S $((NODES * RANKS)) -c "$RANKS" -b "$BATCHES" -e "$EVENTS" \
                >>"$TMP/clients.log" 2>&1 &
        else
            ip netns exec "$P-$ns" "$B/bench/ingest" -A "unix:$sock" \
                -T "$trace" -R $((k * RANKS)) -S $((NODES * RANKS)) \
                -c "$RANKS" -b "$BATCHES" -e "$EVENTS" \
                >>"$TMP/clients.log" 2>&1 &
        fi
        pids+=($!)
        k=$((k + 1))
    done
    for p in "${pids[@]}"; do
        wait "$p" || die "clients failed: $(tail -n 3 "$TMP/clients.log")"
    done
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }'
}

# sample_max PID...: writes the most sockets any PID held, sampled every
# 0.2 s until killed, to $TMP/maxconn.
sample_max() {
    local max=0 n p
    while :; do
        for p in "$@"; do
            n=$(sockets "$p")
            [ "$n" -gt "$max" ] && max=$n && echo "$max" >"$TMP/maxconn"
        done
        sleep 0.2
    done
}

EV=$((NODES * RANKS * BATCHES * EVENTS))
host head 10.232.0.1
HEAD=10.232.0.1:7411
ROOT=()
if [ "$FORWARD" = 0 ]; then
    mkdir -m 0755 "$TMP/shared" || die "cannot make $TMP/shared"
    ROOT=(--set "archive_root=$TMP/shared")
fi
weftd_in head "$TMP/head" --listen "$HEAD" "${ROOT[@]}"
HEAD_PID=$WPID
NODE_PIDS=()
TARGETS=()
for i in $(seq 1 "$NODES"); do
    host "n$i" "10.232.1.$i"
    weftd_in "n$i" "$TMP/n$i" --listen 127.0.0.1:0 --set "head=$HEAD" \
        --set "node_name=n$i"
    NODE_PIDS+=($WPID)
    TARGETS+=("n$i=$TMP/n$i/weftd.sock")
done
# count PATTERN: the node logs that hold it.
count() {
    grep -l "$1" "$TMP"/n*.log 2>/dev/null | wc -l
}
for _ in $(seq 200); do
    [ "$(count "linked to head")" -ge "$NODES" ] && break
    sleep 0.1
done
if [ "$FORWARD" = 0 ]; then # (their logs are at level warning: asked)
    for i in $(seq 1 "$NODES"); do
        for _ in $(seq 100); do
            "$B/weft" --catalog "$TMP/n$i/catalog.db" status --json 2>/dev/null |
                grep -q '"state": *"ok"' && break
            sleep 0.1
        done
    done
fi
if [ "$ALONE" = 1 ]; then
    need=$((2 * NODES * RANKS + 1024))
    { [ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge "$need" ] ||
        ulimit -Hn "$need"; } 2>/dev/null
    if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ]; then
        echo "$BENCH: one weftd alone is left out: $((NODES * RANKS)) ranks need about $need descriptors, and the hard limit here is $(ulimit -Hn) (ulimit -Hn could not raise it)"
        ALONE=0
    fi
fi
weftd_in - "$TMP/single" --listen 127.0.0.1:0
SINGLE_PID=$WPID

echo "$BENCH: $NODES nodes x $RANKS ranks, $BATCHES batches x $EVENTS events each: $EV events per trace; the nodes $([ "$FORWARD" = 1 ] && echo "forward every frame to the head" || echo "write the event files (archive_root)")"
# Bytes the head's interface received so far.
head_rx() {
    ip -n "$P-head" -s -j link show eth0 | /usr/bin/python3 -c \
        'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["rx"]["bytes"])'
}
# measure TRACE CATALOG TARGETS...: drives the clients at TARGETS as
# TRACE until every batch was acked (wall: seconds), waits until
# CATALOG says TRACE is complete (after: seconds after that), then
# stops the sampler.
measure() {
    local trace=$1 cat=$2 t1
    shift 2
    wall=$(drive "$trace" "$@") || exit 1
    t1=$(date +%s.%N)
    complete "$cat" "$trace"
    after=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null
}
# now: seconds since the epoch.
now() { date +%s.%N; }
# The head with its nodes linked and nothing recording: its CPU and the
# bytes it receives, per second.
i0=$(cpu_seconds "$HEAD_PID") x0=$(head_rx) t0=$(now)
sleep "$IDLE"
i1=$(cpu_seconds "$HEAD_PID") x1=$(head_rx) t1=$(now)
IDLE_CPU=$(awk -v a="$i0" -v b="$i1" -v s="$t0" -v e="$t1" 'BEGIN { print (b - a) / (e - s) }')
IDLE_RX=$(awk -v a="$x0" -v b="$x1" -v s="$t0" -v e="$t1" 'BEGIN { print (b - a) / (e - s) }')
awk -v c="$IDLE_CPU" -v x="$IDLE_RX" -v s="$IDLE" 'BEGIN {
    printf "the head, its nodes linked, nothing recording (%d s): %.1f ms of CPU and %.0f bytes received a second\n", s, c * 1000, x }'
for r in $(seq 1 "$ROUNDS"); do
    # The cluster.
    rx0=$(head_rx)
    s0=$(now)
    h0=$(cpu_seconds "$HEAD_PID")
    n0=$(cpu_seconds "${NODE_PIDS[@]}")
    rm -f "$TMP/maxconn"
    sample_max "$HEAD_PID" "${NODE_PIDS[@]}" &
    SAMPLER=$!
    measure "cl$r" "$TMP/head/catalog.db" "${TARGETS[@]}"
    h1=$(cpu_seconds "$HEAD_PID")
    n1=$(cpu_seconds "${NODE_PIDS[@]}")
    rx1=$(head_rx)
    s1=$(now)
    awk -v w="$wall" -v a="$after" -v ev="$EV" -v h="$(awk -v x="$h0" -v y="$h1" 'BEGIN{print y-x}')" \
        -v n="$(awk -v x="$n0" -v y="$n1" 'BEGIN{print y-x}')" \
        -v rx=$((rx1 - rx0)) -v mc="$(cat "$TMP/maxconn" 2>/dev/null || echo 0)" \
        -v rss="$(awk '/VmHWM/ { print $2 }' "/proc/$HEAD_PID/status")" -v r="$r" \
        -v d="$(awk -v a="$s0" -v b="$s1" 'BEGIN{print b-a}')" -v ic="$IDLE_CPU" -v ix="$IDLE_RX" 'BEGIN {
        printf "round %d, cluster: acked in %.2f s (%.2f M events/s), complete %.2f s after the last goodbye\n", r, w, ev / w / 1e6, a
        printf "  CPU per event: head %.1f ns, nodes %.1f ns, all %.1f ns; head peak RSS %.1f MiB; at most %d sockets in one weftd; head received %.1f MB (%.2f bytes/event)\n", h * 1e9 / ev, n * 1e9 / ev, (h + n) * 1e9 / ev, rss / 1024, mc, rx / 1e6, rx / ev
        printf "  head: %.2f s of CPU, %.2f MB received in %.1f s; beyond its idle rate, the trace'"'"'s: %.2f s, %.3f MB\n", h, rx / 1e6, d, h - ic * d, (rx - ix * d) / 1e6 }'
    # One weftd alone, the same clients.
    [ "$ALONE" = 1 ] || continue
    s0=$(cpu_seconds "$SINGLE_PID")
    rm -f "$TMP/maxconn"
    sample_max "$SINGLE_PID" &
    SAMPLER=$!
    SINGLE=()
    for i in $(seq 1 "$NODES"); do SINGLE+=("-=$TMP/single/weftd.sock"); done
    measure "one$r" "$TMP/single/catalog.db" "${SINGLE[@]}"
    s1=$(cpu_seconds "$SINGLE_PID")
    awk -v w="$wall" -v a="$after" -v ev="$EV" -v s="$(awk -v x="$s0" -v y="$s1" 'BEGIN{print y-x}')" \
        -v mc="$(cat "$TMP/maxconn" 2>/dev/null || echo 0)" \
        -v rss="$(awk '/VmHWM/ { print $2 }' "/proc/$SINGLE_PID/status")" -v r="$r" 'BEGIN {
        printf "round %d, one weftd: acked in %.2f s (%.2f M events/s), complete %.2f s after the last goodbye\n", r, w, ev / w / 1e6, a
        printf "  CPU per event: %.1f ns; peak RSS %.1f MiB; at most %d sockets\n", s * 1e9 / ev, rss / 1024, mc }'
done

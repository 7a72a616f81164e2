# shellcheck shell=bash
# cluster_lib.sh - what the tests of weftds as a cluster share
# (tests/e2e_cluster*.sh): a bridge and hosts in
# network namespaces of their own named $P-NAME (P set by the test before
# it sources this, after lib.sh), removed with every process in them
# however the test ends; a munged and a weftd in a namespace; `weft
# status` of either side of a link; waiting with a limit; the weftds
# stopped, cleanly. Root only: a test run by another user is skipped (77).

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root (ip netns, useradd)"
    exit 77
fi
command -v ip >/dev/null || PATH=$PATH:/usr/sbin:/sbin
command -v ip >/dev/null || fail "no ip command (iproute2)"
command -v munged >/dev/null || PATH=$PATH:/usr/sbin
command -v munged >/dev/null || fail "no munged (scripts/deps.sh installs munge)"

# A failure says what each weftd last warned of (their logs are
# $TMP/NAME.log; lib.sh's fail shows a single weftd's), then the reason
# again last, where a log's tail shows it.
fail() {
    echo "FAIL: $*" >&2
    for f in "$TMP"/*.log; do
        [ -f "$f" ] && grep -qE "(warning|error): " "$f" || continue
        echo "--- ${f##*/}: its last warnings and errors ---" >&2
        grep -E "(warning|error): " "$f" | tail -n 15 >&2
    done
    echo "FAIL: $*" >&2
    exit 1
}

NETS=()
PIDS=()           # weftds and munged of the namespaces
declare -A PID ADDR

net_cleanup() {
    for p in "${PIDS[@]}"; do
        kill -KILL "$p" 2>/dev/null
    done
    for n in "${NETS[@]}"; do
        ip netns pids "$n" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$n" 2>/dev/null
    done
    cleanup
}
trap net_cleanup EXIT

# bridge: the namespace $P-sw and its bridge br0, which the hosts join.
bridge() {
    ip netns add "$P-sw" || fail "ip netns add failed"
    NETS+=("$P-sw")
    ip -n "$P-sw" link add br0 type bridge && ip -n "$P-sw" link set br0 up ||
        fail "cannot make a bridge in $P-sw"
}

# host NAME ADDRESS: a namespace on the bridge (its port in $P-sw is
# named NAME), with lo and eth0 at ADDRESS/24.
host() {
    local ns="$P-$1"
    ip netns add "$ns" || fail "ip netns add $ns failed"
    NETS+=("$ns")
    ip -n "$ns" link add eth0 type veth peer name "$1" netns "$P-sw" &&
        ip -n "$P-sw" link set "$1" master br0 up &&
        ip -n "$ns" addr add "$2/24" dev eth0 &&
        ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up ||
        fail "cannot wire namespace $ns"
    ADDR[$1]=$2
}

# munge NAME KEY: that namespace's munged with KEY, its socket
# $TMP/pub/NAME.munge.
munge() {
    local sock="$TMP/pub/$1.munge"
    ip netns exec "$P-$1" munged -F -f --key-file="$2" --socket="$sock" \
        --pid-file="$TMP/$1.munge.pid" --seed-file="$TMP/$1.munge.seed" \
        --log-file="$TMP/$1.munge.log" >>"$TMP/$1.munge.log" 2>&1 &
    PIDS+=($!)
    disown $!
    for _ in $(seq 100); do
        [ -S "$sock" ] && return 0
        sleep 0.05
    done
    fail "munged of $1 did not start: $(cat "$TMP/$1.munge.log")"
}

# weftd_in NAME [ARGS...]: NAME's weftd on ADDR[NAME]:7411 and its Unix
# socket, spool $TMP/NAME, log $TMP/NAME.log; heartbeats of 1 s.
weftd_in() {
    local name=$1
    shift
    # (WRAP: a command weftd is run by, given weftd's command line)
    ip netns exec "$P-$name" ${WRAP:-} "$WEFTD" --listen "${ADDR[$name]}:7411" \
        --spool "$TMP/$name" --log-level debug \
        --set "munge_socket=$TMP/pub/$name.munge" --set heartbeat=1 "$@" \
        >>"$TMP/$name.log" 2>&1 &
    PID[$name]=$!
    PIDS+=($!)
    disown $!
}

# status NAME: NAME's `weft status --json` (as root: its status file).
status() {
    "$WEFT" --catalog "$TMP/$1/catalog.db" status --json 2>/dev/null
}

# nodes NAME: "n1=linked n2=gone ..." as the head NAME sees them, sorted.
nodes() {
    status "$1" | "$PY" -c '
import json, sys
try:
    st = json.load(sys.stdin)
except ValueError:
    sys.exit(0)  # no status yet (weftd starting or gone)
print(" ".join(sorted("%s=%s" % (n["name"], n["state"]) for n in st["nodes"])))'
}

# head_of NAME FIELD: a field of NAME's link to its head.
head_of() {
    status "$1" | "$PY" -c '
import json, sys
try:
    print(json.load(sys.stdin).get("head", {}).get(sys.argv[1], ""))
except ValueError:
    pass  # no status yet' "$2"
}

# until_ SECONDS WHAT COMMAND...: COMMAND succeeds within SECONDS, or
# the test fails saying WHAT did not happen.
until_() {
    local t=$1 what=$2
    shift 2
    for _ in $(seq $((t * 5))); do
        "$@" && return 0
        sleep 0.2
    done
    fail "$what within $t s"
}
nodes_are() { [ "$(nodes head)" = "$1" ]; }
head_is() { [ "$(head_of "$1" state)" = "$2" ]; }

# node_field NODE FIELD: FIELD of node NODE in the head's status.
node_field() {
    status head | "$PY" -c '
import json, sys
try:
    st = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
for n in st["nodes"]:
    if n["name"] == sys.argv[1]:
        print(n.get(sys.argv[2], ""))' "$1" "$2"
}
# archive_is NODE STATE: NODE's check of the head's archive_root, as the
# head and NODE see it, is STATE (ok, unusable...).
archive_is() {
    [ "$(node_field "$1" archive | "$PY" -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read() or "{}").get("state",""))')" = "$2" ] &&
        [ "$(head_of "$1" archive | "$PY" -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read() or "{}").get("state",""))')" = "$2" ]
}
# node_ranks NODE TRACE HOW: the ranks of TRACE that NODE's weftd
# forwarded to the head (HOW "forwarded to the head") or journaled
# itself, writing their events ("journaled here"), as its log says, in
# order.
node_ranks() {
    grep -F "trace '$2' rank " "$TMP/$1.log" | grep -F ": $3" |
        sed 's/.* rank \([0-9]*\): .*/\1/' | sort -un | tr '\n' ' ' |
        sed 's/ $//'
}

# demo_on NODE NAME [DEMO ARGS...]: weft-demo on NODE as trace NAME,
# through NODE's weftd (its report in $TMP/NAME.NODE.json), in the
# background (DEMOS).
DEMOS=()
demo_on() {
    local node=$1 name=$2
    shift 2
    ip netns exec "$P-$node" env WEFT_SERVER="unix:$TMP/$node/weftd.sock" \
        WEFT_TRACE="$name" WEFT_STALL_MS=60000 timeout 120 "$DEMO" \
        --report "$TMP/$name.$node.json" "$@" >"$TMP/$name.$node.out" 2>&1 &
    DEMOS+=($!)
}
# demos_done: every demo started ended well.
demos_done() {
    for p in "${DEMOS[@]}"; do
        wait "$p" || fail "a weft-demo failed: $(tail -n 3 "$TMP"/*.out)"
    done
    DEMOS=()
}
# exact NAME MEMBERS: trace NAME is complete at the head with MEMBERS
# members, its archive exactly what the demos of NAME recorded (both
# readers), and no node made a trace of its own of it.
exact() {
    local name=$1
    SPOOL=$TMP/head wait_state "$name" complete 60
    [ "$(json_get "$TMP/show.json" 'j["members"]')" = "$2" ] ||
        fail "$name: $(json_get "$TMP/show.json" 'j["members"]') members at the head, expected $2"
    "$PY" - "$TMP/$name.json" "$TMP/$name".*.json <<'PY' || fail "$name: the demos' reports"
import json, sys
merged = {}
for f in sys.argv[2:]:
    merged.update(json.load(open(f)))
json.dump(merged, open(sys.argv[1], "w"))
PY
    check_archive "$name" "$TMP/$name.json"
    grep -E "^weft: .*(dropped|incomplete|gave up|tracing is off)" \
        "$TMP/$name".*.out && fail "$name: libweft lost records"
    [ -z "$(find "$TMP"/n[123]/traces -mindepth 1 -maxdepth 1 -name "$name-*" 2>/dev/null)" ] ||
        fail "$name: a node made a trace of its own: $(find "$TMP"/n[123]/traces -mindepth 1 -maxdepth 1 -name "$name-*")"
}

# stop_weftds NAME...: those weftds stopped with SIGTERM, each within 15
# s and cleanly, none with a sanitizer's report in the logs.
stop_weftds() {
    for n in "$@"; do
        kill -TERM "${PID[$n]}"
    done
    for n in "$@"; do
        wait_gone "${PID[$n]}" 15 || fail "$n's weftd did not stop on SIGTERM"
        grep -q "stopped$" "$TMP/$n.log" || fail "$n's weftd did not stop cleanly"
    done
    # (disowned, their exit statuses are not ours: under the sanitizers
    # their reports are in their logs)
    if grep -E "Sanitizer|runtime error" "$TMP"/*.log; then
        fail "a weftd's sanitizer report (above)"
    fi
}

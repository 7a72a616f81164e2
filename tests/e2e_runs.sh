#!/bin/bash
# e2e_runs.sh - runs that share a name are separate traces (issue #11). A
# run is the processes of one launch; weftd groups members by (owner,
# name, run). Cases:
#  (a) a run with the name of an unfinished one (a rank of it never came):
#      a new trace, not refused as "rank 0 has already finished";
#  (b) two runs with the same WEFT_TRACE at once: two complete traces;
#  (c) fake Slurm: two steps of one job at once, default names, which
#      name the program and the step (weft-demo-999.0, weft-demo-999.1);
#  (d) fake PMIx namespaces: two runs with one name at once, and the
#      default name of a Slurm PMIx namespace;
#  (e) weft show NAME takes the newest and says the name is ambiguous;
#  (f) a member that reconnects after weftd gave up on its run (grace
#      period over, converted as partial) is refused: no new empty trace;
#  (g) also after weftd restarted (it reads ended runs from the catalog).
# Every complete trace holds exactly what its weft-demo recorded.
. "$(dirname "$0")/lib.sh"

PROXY="$WEFT_SRCDIR/tests/tcpproxy.py"
CLOCKTEST="$WEFT_BUILDDIR/tests/weft-clocktest"
CAT="$SPOOL/catalog.db"

# demo OUT [ENV=VALUE...] -- [DEMO ARGS...]: weft-demo (2 ranks x 2
# threads, 300 iterations unless the args say otherwise) reporting to
# $TMP/OUT.json, its stderr in $TMP/OUT.out; in the background, its pid
# (which names its run: WEFT_RUN=weft-demo-HOST-PID) in $TMP/OUT.pid.
demo() {
    local out=$1 envs=()
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" "$DEMO" -p 2 -t 2 -n 300 "$@" \
        --report "$TMP/$out.json" >"$TMP/$out.out" 2>&1 &
    echo $! >"$TMP/$out.pid"
}

# demo_ok OUT: waits for a demo started by demo; it must succeed and must
# not have been refused.
demo_ok() {
    local pid rc
    pid=$(cat "$TMP/$1.pid")
    wait "$pid"
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$TMP/$1.out" >&2; fail "$1: weft-demo exited with $rc"; }
    grep -q "refused" "$TMP/$1.out" && { cat "$TMP/$1.out" >&2; fail "$1: weftd refused a process"; }
    return 0
}

# list_name NAME: `weft list --name NAME --json` into $TMP/list.json.
list_name() {
    "$WEFT" --catalog "$CAT" list --name "$1" --json >"$TMP/list.json" ||
        fail "weft list --name $1 failed"
}

# wait_runs NAME COUNT: waits (60 s) until COUNT traces are named NAME and
# all of them are complete.
wait_runs() {
    local got
    for _ in $(seq 600); do
        if "$WEFT" --catalog "$CAT" list --name "$1" --json >"$TMP/list.json" 2>/dev/null; then
            got=$(json_get "$TMP/list.json" \
                  '"%d %d" % (len(j), sum(t["state"] == "complete" for t in j))')
            [ "$got" = "$2 $2" ] && return 0
        fi
        sleep 0.1
    done
    fail "$1: expected $2 complete traces, catalog has (traces, complete) = ${got:-none}: $(cat "$TMP/list.json" 2>/dev/null)"
}

# check_run NAME OUT: the trace of NAME whose run is the one of demo OUT
# (RUN given as $3, else weft-demo-HOST-PID) becomes complete (60 s at
# most: it may still be converting) and holds exactly what it recorded,
# checked with otf2-print and check_archive.py.
check_run() {
    local run=${3:-weft-demo-$(hostname)-$(cat "$TMP/$2.pid")} archive state
    for _ in $(seq 600); do
        list_name "$1"
        state=$(json_get "$TMP/list.json" \
                '[t["state"] for t in j if t.get("run") == "'"$run"'"][0]' 2>/dev/null)
        [ "$state" = complete ] && break
        sleep 0.1
    done
    [ "$state" = complete ] ||
        fail "$1: the trace with run $run is not complete: $(cat "$TMP/list.json")"
    archive=$(json_get "$TMP/list.json" \
              '[t["archive"] for t in j if t.get("run") == "'"$run"'"][0]' 2>/dev/null) ||
        fail "$1: no trace with run $run in $(cat "$TMP/list.json")"
    otf2-print -Werror --silent "$archive" >/dev/null ||
        fail "$1 ($run): otf2-print rejects $archive"
    "$PY" "$CHECK_ARCHIVE" "$archive" "$TMP/$2.json" >/dev/null ||
        fail "$1 ($run): the archive does not hold exactly what weft-demo recorded"
}

unset WEFT_TRACE WEFT_RUN PMIX_NAMESPACE OMPI_MCA_ess_base_jobid \
      SLURM_JOB_ID SLURM_STEP_ID SLURM_STEPID SLURM_PROCID SLURM_NTASKS \
      SLURM_RESTART_COUNT PBS_JOBID LSB_JOBID
start_weftd

# ---- (a) after an unfinished run of the same name ---------------------------
# Rank 0 of a 2-process run says goodbye, rank 1 never comes: that trace
# waits for it (grace period). The next run with the name is a new trace.
WEFT_TRACE=seq WEFT_RUN=first WEFT_SIZE=2 WEFT_RANK=0 "$CLOCKTEST" 10 0 \
    >"$TMP/first.out" 2>&1 || fail "seq: the first run failed: $(cat "$TMP/first.out")"
demo seq2 WEFT_TRACE=seq --
demo_ok seq2
check_run seq seq2
list_name seq
[ "$(json_get "$TMP/list.json" 'sorted((t["run"], t["state"]) for t in j)')" = \
  "[('first', 'recording'), ('weft-demo-$(hostname)-$(cat "$TMP/seq2.pid")', 'complete')]" ] ||
    fail "seq: expected the unfinished run and a complete one: $(cat "$TMP/list.json")"
echo "(a) a run after an unfinished run of the same name: a new trace, exact"

# ---- (b) two runs with the same name at once ---------------------------------
demo conc1 WEFT_TRACE=conc -- -s 1000
demo conc2 WEFT_TRACE=conc -- -s 1000
demo_ok conc1
demo_ok conc2
wait_runs conc 2
check_run conc conc1
check_run conc conc2
echo "(b) two runs with one name at once: two complete traces, exact"

# ---- (c) fake Slurm: two steps of one job, default names ---------------------
demo step0 SLURM_JOB_ID=999 SLURM_STEP_ID=0 SLURM_NTASKS=2 -- -s 1000
demo step1 SLURM_JOB_ID=999 SLURM_STEP_ID=1 SLURM_NTASKS=2 -- -s 1000
demo_ok step0
demo_ok step1
wait_runs weft-demo-999.0 1
wait_runs weft-demo-999.1 1
check_run weft-demo-999.0 step0 slurm:999.0
check_run weft-demo-999.1 step1 slurm:999.1
# The same steps under one explicit name: two traces of that name.
demo named0 WEFT_TRACE=job999 SLURM_JOB_ID=999 SLURM_STEP_ID=2 -- -s 1000
demo named1 WEFT_TRACE=job999 SLURM_JOB_ID=999 SLURM_STEP_ID=3 -- -s 1000
demo_ok named0
demo_ok named1
wait_runs job999 2
check_run job999 named0 slurm:999.2
check_run job999 named1 slurm:999.3
echo "(c) two Slurm steps of one job: two traces, named after the program and step"

# ---- (d) fake PMIx namespaces --------------------------------------------------
demo ns1 WEFT_TRACE=px PMIX_NAMESPACE=prterun-a@1 -- -s 1000
demo ns2 WEFT_TRACE=px PMIX_NAMESPACE=prterun-b@1 -- -s 1000
demo_ok ns1
demo_ok ns2
wait_runs px 2
check_run px ns1 pmix:prterun-a@1
check_run px ns2 pmix:prterun-b@1
demo nsdef PMIX_NAMESPACE=slurm.pmix.77.3 --
demo_ok nsdef
wait_runs weft-demo-77.3 1
check_run weft-demo-77.3 nsdef pmix:slurm.pmix.77.3
echo "(d) PMIx namespaces: one trace each; default name weft-demo-77.3"

# ---- (e) a name that picks one of several ---------------------------------------
list_name conc
newest=$(json_get "$TMP/list.json" 'j[0]["key"]')
older=$(json_get "$TMP/list.json" 'j[1]["key"]')
"$WEFT" --catalog "$CAT" show conc >"$TMP/show.txt" 2>"$TMP/show.err" ||
    fail "weft show conc failed: $(cat "$TMP/show.err")"
grep -q "^key: *$newest\$" "$TMP/show.txt" || fail "weft show conc is not the newest ($newest)"
[ "$(cat "$TMP/show.err")" = "weft: 2 traces are named 'conc'; taking the newest ($newest); use a key to pick another (weft list --name 'conc')" ] ||
    fail "weft show conc: no note about the other trace: '$(cat "$TMP/show.err")'"
"$WEFT" --catalog "$CAT" show "$older" >"$TMP/show.txt" 2>"$TMP/show.err" ||
    fail "weft show $older failed"
grep -q "^key: *$older\$" "$TMP/show.txt" || fail "weft show KEY shows another trace"
[ ! -s "$TMP/show.err" ] || fail "weft show KEY: unexpected note: $(cat "$TMP/show.err")"
grep -q "^run: *weft-demo-" "$TMP/show.txt" || fail "weft show: no run: line"
"$WEFT" --catalog "$CAT" show weft-demo-77.3 >/dev/null 2>"$TMP/show.err" ||
    fail "weft show weft-demo-77.3 failed"
[ ! -s "$TMP/show.err" ] || fail "a unique name got a note: $(cat "$TMP/show.err")"
echo "(e) weft show NAME: the newest, and a note naming it"

# ---- (f) a member back after weftd gave up on its run ------------------------
stop_weftd
# tcpproxy.py is a relay: a MUNGE credential is bound to the ends of its
# connection (#30), so weftd refuses a client through it. What the proxy
# tests here is a member coming back late, not identity: from here on weftd runs with auth = none.
export WEFT_AUTH=none
start_weftd --grace-period 1
start_proxy 0 0
port=${PROXY_SERVER##*:}
DEMO_TIMEOUT=60 start_demo late WEFT_SERVER="$PROXY_SERVER" -- -p 1 -t 1 \
    -n 4000 -s 2500
wait_journal late
sleep 0.5
kill -0 "$DEMO_PID" 2>/dev/null || fail "late: the run ended too soon"
{ kill -KILL "$PROXY_PID"; wait "$PROXY_PID"; } 2>/dev/null
PROXY_PID=
wait_state late partial 30
key=$(json_get "$TMP/show.json" 'j["key"]')
kill -0 "$DEMO_PID" 2>/dev/null || fail "late: the run ended before it could reconnect"
TCPPROXY_PORT=$port "$PY" "$PROXY" "$TMP/proxy2.port" "$WEFT_SERVER" 0 0 \
    >>"$TMP/proxy.log" 2>&1 &
PROXY_PID=$!
wait "$DEMO_PID"
DEMO_PID=
grep -q "refused this process when it reconnected: .*has already ended" "$TMP/late.out" ||
    fail "late: no refusal when it reconnected: $(cat "$TMP/late.out")"
list_name late
[ "$(json_get "$TMP/list.json" '[(t["key"], t["state"]) for t in j]')" = "[('$key', 'partial')]" ] ||
    fail "late: expected only the partial trace $key: $(cat "$TMP/list.json")"
[ "$(find "$SPOOL/traces" -maxdepth 1 -name 'late-*' | wc -l)" -eq 1 ] ||
    fail "late: a second spool directory: $(ls "$SPOOL/traces")"
grep -q "has already ended" "$TMP/weftd.log" || fail "late: weftd did not log the refusal"
echo "(f) a late reconnect after the grace period: refused, no new trace"

# ---- (g) the same after a restart of weftd -------------------------------------
# weftd remembers the runs of ended traces from the catalog.
run=$(json_get "$TMP/list.json" 'j[0]["run"]')
stop_weftd
start_weftd --grace-period 1
WEFT_TRACE=late WEFT_RUN="$run" "$CLOCKTEST" 10 0 >"$TMP/again.out" 2>&1
grep -q "weftd refused this process: trace 'late' (run $run) has already ended" "$TMP/again.out" ||
    fail "late, after a restart: not refused: $(cat "$TMP/again.out")"
list_name late
[ "$(json_get "$TMP/list.json" 'len(j)')" -eq 1 ] ||
    fail "late, after a restart: a new trace: $(cat "$TMP/list.json")"
echo "(g) after a restart of weftd: refused too"

stop_weftd
echo "PASS: e2e_runs"

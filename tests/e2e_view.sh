#!/bin/bash
# e2e_view.sh - weft view (issue #36) in a real browser: a real weftd
# records two weft-demo traces (2 processes x 2 threads, and 1 x 2),
# with Open MPI an MPI ring of 3 ranks (`mpirun weft run -- ./ring`:
# messages on two communicators, a barrier) and tests/pthread/pthtest
# under weft run (threads created and joined, every lock, I/O); `weft
# view` serves them on 127.0.0.1 only. Over HTTP: the page and the API answer only under the printed
# token (403 without it or with another); api/window and api/span refuse
# bad arguments with 400 (an unknown trace or location: 404) and a JSON
# error; the page references no URL. In headless Chromium, driven over
# the DevTools protocol (tests/view_cdp.py): every location of every
# archive drawn, exactly the region visits otf2-print reads in the
# archive for the whole trace and for a window of a few visits, a
# click's details (duration, exclusive time, call path) as the archive
# has them, hover, wheel and Home; the filters (a paradigm, a row,
# visits shorter than a threshold hidden: exactly those not drawn); each
# message line is the archive's send and receive, its hover saying tag,
# bytes, communicator, ends and latency; a search's count is the
# archive's Enters of the matching regions, all outlined, next and
# previous landing on the archive's visits; the summary of each whole
# trace shows api/summary's figures and weft profile's; no request
# elsewhere, and a screenshot of the whole page that is not blank
# (WEFT_VIEW_KEEP=DIR keeps it). The marks (collectives, thread arrows,
# locks held, I/O) of the ring and pthtest, over HTTP against otf2-print
# (tests/view_marks.py) and hovered and clicked in Chromium. SIGTERM ends
# weft view with status 0. Then examples/fib (-finstrument-functions): a
# visit's details name its region's source file and lines as the
# archive's definitions do; tests/view/attrs: they give its Enter's
# attributes as the otf2 module reads them. And the index files' cache
# pruned (old, stale, beyond --cache-max).
. "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP: no chromium (Debian package chromium; scripts/deps.sh installs it)"
    exit 77
fi
command -v otf2-print >/dev/null || { echo "SKIP: no otf2-print"; exit 77; }
# As root Chromium needs --no-sandbox; its crash reporter wants a home.
# weft view keeps its index in the user's cache: the test's own.
export HOME="$TMP/home" XDG_CACHE_HOME="$TMP/cache"
mkdir -p "$HOME" "$TMP/cdp"

VIEW_PID=
# stop_view: SIGTERM to weft view (under timeout(1), which passes it on),
# bounded; returns its exit status.
stop_view() {
    local rc
    kill -TERM "$VIEW_PID" 2>/dev/null
    if ! wait_gone "$VIEW_PID" 10; then
        kill -KILL "$VIEW_PID" 2>/dev/null
        wait "$VIEW_PID" 2>/dev/null
        VIEW_PID=
        return 124
    fi
    wait "$VIEW_PID"
    rc=$?
    VIEW_PID=
    return $rc
}
trap '[ -n "$VIEW_PID" ] && stop_view; cleanup' EXIT

start_weftd
out=$(WEFT_TRACE=v timeout 120 "$DEMO" -p 2 -t 2 -n 200 2>&1) ||
    fail "weft-demo (v) failed: $out"
out=$(WEFT_TRACE=w timeout 120 "$DEMO" -p 1 -t 2 -n 50 2>&1) ||
    fail "weft-demo (w) failed: $out"
wait_state v complete 60
wait_state w complete 60
V=$("$WEFT" --catalog "$SPOOL/catalog.db" path v) || fail "weft path v failed"
W=$("$WEFT" --catalog "$SPOOL/catalog.db" path w) || fail "weft path w failed"
TRACES=(v w)
ANCHORS=("$V" "$W")

# An MPI ring with Open MPI (as tests/e2e_mpi_ring.sh traces it): 3
# ranks pass a token 3 times (tag 7, MPI_COMM_WORLD), then each Isends
# 100 bytes to the next on a named duplicate (tag 3).
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
    [ -e "$WEFT_BUILDDIR/.libs/libweft-mpi-openmpi.so" ]; then
    cat >"$TMP/ring.c" <<'PROG'
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, size, token = 0;
    char buf[256] = { 0 };
    MPI_Comm ring;
    MPI_Request rq[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 3; i++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7,
                     MPI_COMM_WORLD);
        }
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &ring);
    MPI_Comm_set_name(ring, "view.ring");
    MPI_Irecv(buf, 100, MPI_CHAR, (rank + size - 1) % size, 3, ring, &rq[0]);
    MPI_Isend(buf + 128, 100, MPI_CHAR, (rank + 1) % size, 3, ring, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Barrier(ring);
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
PROG
    mpicc.openmpi -o "$TMP/ring" "$TMP/ring.c" || fail "mpicc.openmpi cannot build the ring"
    # A sanitized recorder needs the sanitizers' runtimes first (and
    # mpirun's own leaks are not ours).
    ( unset WEFT_TRACE
      export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs"
      export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
      LD_PRELOAD=$(echo $WEFT_SAN_PRELOAD) timeout 120 mpirun.openmpi -np 3 --oversubscribe \
          -x WEFT_LIBDIR -x WEFT_SERVER -x LD_PRELOAD -x ASAN_OPTIONS \
          "$WEFT" run --trace ring -- "$TMP/ring" ) >"$TMP/ring.out" 2>&1 ||
        fail "the MPI ring failed under weft run: $(cat "$TMP/ring.out")"
    wait_state ring complete 60
    R=$("$WEFT" --catalog "$SPOOL/catalog.db" path ring) || fail "weft path ring failed"
    TRACES+=(ring)
    ANCHORS+=("$R")
else
    echo "SKIP: messages: no mpicc.openmpi, mpirun.openmpi or libweft-mpi-openmpi.so"
fi
# An ordinary threaded program under weft run (tests/pthread/pthtest.c:
# threads created and joined, every lock recorded, its report written):
# the marks of threads, locks and I/O.
PTHTEST="$WEFT_BUILDDIR/tests/pthread/pthtest"
[ -x "$PTHTEST" ] || fail "$PTHTEST not built"
( unset WEFT_TRACE
  export WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" WEFT_LOCKS=all
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
  timeout 120 "$WEFT" run --trace pt -- "$PTHTEST" "$TMP/pt.report" ) >"$TMP/pt.out" 2>&1 ||
    fail "pthtest failed under weft run: $(cat "$TMP/pt.out")"
wait_state pt complete 60
P=$("$WEFT" --catalog "$SPOOL/catalog.db" path pt) || fail "weft path pt failed"
TRACES+=(pt)
ANCHORS+=("$P")

# start_view TRACE...: weft view of the traces, which prints one line
# with the address on stdout, then serves: VIEW_PID, URL and PORT.
start_view() {
    # (gone first: the job's redirection truncates them only as it starts)
    rm -f "$TMP/view.out" "$TMP/view.err"
    timeout 300 "$WEFT" --catalog "$SPOOL/catalog.db" view "$@" --port 0 \
        >"$TMP/view.out" 2>"$TMP/view.err" &
    VIEW_PID=$!
    for _ in $(seq 300); do
        [ -s "$TMP/view.out" ] && break
        kill -0 "$VIEW_PID" 2>/dev/null || fail "weft view exited: $(cat "$TMP/view.err")"
        sleep 0.1
    done
    URL=$(sed -n 's|^weft view: \(http://127\.0\.0\.1:[0-9]*/[0-9a-f]\{32\}/\)$|\1|p' "$TMP/view.out")
    [ -n "$URL" ] || fail "weft view printed no address in 30 s: $(cat "$TMP/view.out" "$TMP/view.err")"
    PORT=${URL#http://127.0.0.1:}
    PORT=${PORT%%/*}
    echo "weft view: $URL"
}
start_view "${TRACES[@]}"
# each trace read once into its index file in the user's cache
for t in "${TRACES[@]}"; do
    grep -q "^weft view: $t: [0-9]* region visits and [0-9]* messages read once into $XDG_CACHE_HOME/weft/view/$t-[^/]*\.idx$" "$TMP/view.err" ||
        fail "weft view did not say it indexed $t: $(cat "$TMP/view.err")"
done

# Listening on 127.0.0.1 only: every socket on the port is loopback's.
ss -ltnH "sport = :$PORT" >"$TMP/ss.out" 2>&1 || fail "ss failed: $(cat "$TMP/ss.out")"
[ -s "$TMP/ss.out" ] || fail "nothing listens on port $PORT"
if awk '{print $4}' "$TMP/ss.out" | grep -qv "^127\.0\.0\.1:$PORT$"; then
    cat "$TMP/ss.out" >&2
    fail "weft view listens beyond 127.0.0.1"
fi
ss -ltnpH "sport = :$PORT" | grep -q '"weft' ||
    fail "the listener on port $PORT is not weft view's: $(ss -ltnpH "sport = :$PORT")"

timeout 120 "$PY" - "$URL" "$(IFS=,; echo "${TRACES[*]}")" <<'PY' || fail "weft view's HTTP answers are wrong"
import json, re, sys, urllib.error, urllib.request
url = sys.argv[1]
base = re.match(r"(http://127\.0\.0\.1:\d+)/", url).group(1)
token = url[len(base) + 1:-1]

def get(path, method="GET"):
    req = urllib.request.Request(path if path.startswith("http") else base + path,
                                 method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()

def error(path, status, method="GET", says=None):
    st, ct, body = get(path, method)
    assert st in ((status,) if isinstance(status, int) else status), (path, st, body[:200])
    assert ct.startswith("application/json"), (path, ct)
    j = json.loads(body)
    assert isinstance(j.get("error"), str) and j["error"], (path, j)
    assert says is None or says in j["error"], (path, j, says)
    return j["error"]

# the page, under the token only; it references no address at all
st, ct, page = get(url)
assert st == 200 and ct.startswith("text/html"), (st, ct)
page = page.decode()
assert "window.weftView" in page, "not the viewer's page"
bad = re.findall(r".{20}(?:https?|wss?|ftp)://.{20}", page)
assert not bad, "the page references a URL: %s" % bad
assert not re.search(r"""\b(?:src|href)\s*=\s*["'][^"'#]""", page), "the page loads something"
for path in ["/", "/api/traces", "/%s" % token, "/%s/" % ("0" * 32),
             "/%s/api/traces" % ("0" * 32), "/%sx/" % token[:-1],
             "/%s/" % token.upper(), "/../%s/" % token, "/x/%s/" % token]:
    if path == "/%s/" % token.upper() and token.upper() == token:
        continue
    error(path, 403)
error("/%s/api/nothing" % token, 404)
error("/%s/api/traces" % token, 405, method="POST")

st, ct, body = get(url + "api/traces")
assert st == 200 and ct.startswith("application/json"), (st, ct)
tr = json.loads(body)["traces"]
assert [t["name"] for t in tr] == sys.argv[2].split(","), [t["name"] for t in tr]
assert [t["index"] for t in tr] == list(range(len(tr))), tr
t1 = tr[0]["t1"]
assert tr[0]["t0"] == 0 and t1 > 0 and tr[0]["resolution"] > 0, tr[0]
assert len(tr[0]["locations"]) == 4 and len(tr[1]["locations"]) == 2, tr
for l in tr[0]["locations"]:
    assert l["depth"] == 3 and l["group"] and l["host"] and l["name"], l
assert {r["name"]: r["paradigm"] for r in tr[0]["regions"]} == \
    {"main": "user", "iteration": "user", "compute": "user", "exchange": "user"}, tr[0]["regions"]

w = url + "api/window?"
st, ct, body = get(w + "trace=0&t0=0&t1=%d&px=100" % t1)
assert st == 200, (st, body[:200])
j = json.loads(body)
assert (j["trace"], j["t0"], j["t1"], j["px"]) == (0, 0, t1, 100), j
assert sorted(r["loc"] for r in j["rows"]) == sorted(l["loc"] for l in tr[0]["locations"])
loc = tr[0]["locations"][0]["loc"]
st, _, body = get(w + "trace=0&t0=0&t1=%d&px=100&locs=%d" % (t1, loc))
assert st == 200 and [r["loc"] for r in json.loads(body)["rows"]] == [loc], body[:200]
# bad arguments: 400 and a JSON error
for q in ["trace=0&t0=10&t1=5&px=100",         # t0 > t1
          "trace=0&t0=5&t1=5&px=100",          # empty
          "trace=0&t0=0&t1=100&px=0",
          "trace=0&t0=0&t1=100&px=1000000",
          "trace=0&t0=0&t1=100&px=18446744073709551617",
          "trace=0&t0=x&t1=100&px=100",
          "trace=0&t0=0&t1=1e3&px=100",
          "trace=0&t0=-1&t1=100&px=100",
          "trace=0&t0=0&t1=99999999999999999999999&px=100",
          "trace=0&t0=0&t1=100&px=1.5",
          "trace=0&t0=0&t1=100",
          "trace=0&t1=100&px=100",
          "t0=0&t1=100&px=100",
          "trace=x&t0=0&t1=100&px=100",
          "trace=0&t0=0&t1=100&px=100&locs=",
          "trace=0&t0=0&t1=100&px=100&locs=a",
          "trace=0&t0=0&t1=100&px=100&locs=%d,," % loc,
          "trace=0&t0=0&t1=100&px=100&locs=123456789"]:
    error("/%s/api/window?%s" % (token, q), 400)
# a trace that is not served: "no trace"
error("/%s/api/window?trace=%d&t0=0&t1=100&px=100" % (token, len(tr)), (400, 404), says="no trace")
error("/%s/api/window?trace=4294967296&t0=0&t1=100&px=100" % token, (400, 404))
# api/span: a visit, or 404 where there is none; bad arguments 400
# (a visit of depth 0 at that location, a pixel column wide at the
# finest columns: under load its main may be under 1/100 of the trace)
st, _, body = get(w + "trace=0&t0=0&t1=%d&px=16384&locs=%d" % (t1, loc))
d0 = [s for s in json.loads(body)["rows"][0]["spans"] if s[3] == 0]
assert st == 200 and d0, (st, body[:200])
st, _, body = get(url + "api/span?trace=0&loc=%d&depth=0&t=%d" % (loc, d0[0][0]))
assert st == 200 and json.loads(body)["name"] == "main", (st, body[:200])
error("/%s/api/span?trace=0&loc=%d&depth=0&t=%d" % (token, loc, t1 + 10), 404)
error("/%s/api/span?trace=0&loc=%d&depth=200&t=10" % (token, loc), 404)
error("/%s/api/span?trace=0&loc=77777&depth=0&t=10" % token, 404)
error("/%s/api/span?trace=%d&loc=%d&depth=0&t=10" % (token, len(tr) + 5, loc), (400, 404), says="no trace")
for q in ["trace=0&loc=%d&depth=0" % loc, "trace=0&loc=%d&depth=x&t=1" % loc,
          "trace=0&loc=-1&depth=0&t=1", "trace=0&depth=0&t=1"]:
    error("/%s/api/span?%s" % (token, q), 400)
# api/find's cursor: loc= and depth= together, a location of the trace
if get(url + "api/find?trace=0&q=x")[0] != 404:
    error("/%s/api/find?trace=0&q=main&after=5&loc=%d" % (token, loc), 400, says="together")
    error("/%s/api/find?trace=0&q=main&after=5&loc=x&depth=0" % token, 400)
    error("/%s/api/find?trace=0&q=main&after=5&loc=77777&depth=0" % token, 404)
    st, _, body = get(url + "api/find?trace=0&q=main&before=%d&loc=%d&depth=0" % (d0[0][0], loc))
    assert st == 200 and json.loads(body)["hit"] is None or \
        json.loads(body)["hit"]["start"] <= d0[0][0], (st, body[:200])
print("http: token, page, api/traces, window, span and find answers as expected")
PY

# The marks (collectives, thread arrows, locks held, I/O) of the traces
# that have them, against otf2-print's events.
for i in "${!TRACES[@]}"; do
    case ${TRACES[$i]} in ring | pt) ;; *) continue ;; esac
    timeout 120 "$PY" "$WEFT_SRCDIR/tests/view_marks.py" "$URL" "$i" "${ANCHORS[$i]}" ||
        fail "weft view's marks of ${TRACES[$i]} are not the archive's"
done

# weft profile of each trace, for the summary's region profile (pt's
# with calls its recorders counted instead of recording them)
for i in "${!TRACES[@]}"; do
    "$WEFT" --catalog "$SPOOL/catalog.db" profile "${TRACES[$i]}" --json --limit 0 \
        >"$TMP/cdp/profile.$i.json" || fail "weft profile ${TRACES[$i]} failed"
done
timeout 300 "$PY" "$WEFT_SRCDIR/tests/view_cdp.py" "$CHROMIUM" "$URL" "$TMP/cdp" "${ANCHORS[@]}" ||
    fail "the viewer in Chromium is not as expected (see above; $TMP/cdp/chromium.log)"
if [ -n "${WEFT_VIEW_KEEP:-}" ]; then
    cp "$TMP/cdp/view.png" "$WEFT_VIEW_KEEP/view.png" || fail "cannot keep the screenshot"
fi

stop_view || fail "weft view exited with status $? on SIGTERM: $(cat "$TMP/view.err")"
grep -v '^weft view: ' "$TMP/view.err" >&2 && fail "weft view said something unexpected"

# Source locations: a program built with -finstrument-functions
# (examples/fib), whose regions' definitions name their file and lines:
# a visit's details (api/span) give them as otf2-print -G has them.
WEFT_TRACE=fib WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" timeout 60 "$WEFT_BUILDDIR/examples/fib" \
    >"$TMP/fib.out" 2>&1 || fail "examples/fib failed: $(cat "$TMP/fib.out")"
wait_state fib complete 60
F=$("$WEFT" --catalog "$SPOOL/catalog.db" path fib) || fail "weft path fib failed"
otf2-print -G "$F" >"$TMP/fib.defs" || fail "otf2-print -G fib failed"
# and tests/view/attrs, whose Enters carry attributes (libweft's API)
WEFT_TRACE=attrs timeout 60 "$WEFT_BUILDDIR/tests/view/attrs" >"$TMP/attrs.out" 2>&1 ||
    fail "tests/view/attrs failed: $(cat "$TMP/attrs.out")"
wait_state attrs complete 60
A=$("$WEFT" --catalog "$SPOOL/catalog.db" path attrs) || fail "weft path attrs failed"
start_view fib attrs
timeout 120 "$PY" - "$URL" "$TMP/fib.defs" <<'PY' || fail "weft view's source locations are not the archive's"
import json, re, sys, urllib.request
url, defs = sys.argv[1], open(sys.argv[2]).read()
get = lambda q: json.loads(urllib.request.urlopen(url + q, timeout=30).read())
want = {m.group(1): (m.group(2), int(m.group(3)), int(m.group(4))) for m in re.finditer(
    r'^REGION .*Name: "([^"]*)".*File: "([^"]*)" <\d+>, Begin: (\d+), End: (\d+)', defs, re.M)}
assert len(want) >= 4, defs
t = get("api/traces")["traces"][0]
names = {r["id"]: r["name"] for r in t["regions"]}
seen = set()
for l in t["locations"]:
    w = get("api/window?trace=0&t0=0&t1=%d&px=16384&locs=%d" % (t["t1"], l["loc"]))
    for s0, s1, reg, depth in w["rows"][0]["spans"]:
        if names[reg] in seen:
            continue
        sp = get("api/span?trace=0&loc=%d&depth=%d&t=%d" % (l["loc"], depth, s0))
        src = sp["source"]
        assert (src["file"], src["begin"], src["end"]) == want[sp["name"]], (sp, want[sp["name"]])
        seen.add(sp["name"])
assert len(seen) >= 3, seen
print("source locations: %s as otf2-print -G has them" % sorted(seen))
PY
# each Enter's attributes in its visit's details (api/span) as the otf2
# module reads them; the visits of Enters without any have none
timeout 120 "$PY" - "$URL" "$A" <<'PY' || fail "weft view's attributes are not the archive's"
import json, math, sys, urllib.request
import otf2
url, anchor = sys.argv[1], sys.argv[2]
get = lambda q: json.loads(urllib.request.urlopen(url + q, timeout=30).read())
with otf2.reader.open(anchor) as tr:
    off = tr.definitions.clock_properties.global_offset
    depth, enters = {}, []
    for loc, ev in tr.events:
        d = depth.get(loc._ref, 0)
        if isinstance(ev, otf2.events.Enter):
            enters.append((loc._ref, d, ev.time - off, ev.region.name,
                           [(a.name, str(a.type).split(".")[-1], v) for a, v in ev.attributes.items()]
                           if ev.attributes else None))
            depth[loc._ref] = d + 1
        elif isinstance(ev, otf2.events.Leave):
            depth[loc._ref] = d - 1
with_attrs = 0
for loc, d, t, region, want in enters:
    sp = get("api/span?trace=1&loc=%d&depth=%d&t=%d" % (loc, d, t))
    assert sp["name"] == region and sp["start"] == t, (sp, region, t)
    got = sp.get("attributes")
    if want is None:
        assert got is None, (region, t, got)
        continue
    with_attrs += 1
    assert [tuple(g[:2]) for g in got] == [w[:2] for w in want], (got, want)
    for g, (name, typ, v) in zip(got, want):
        if typ == "REGION":
            assert g[2] == "%s <%d>" % (v.name, v._ref), (g, v)
        elif typ == "DOUBLE":
            assert math.isclose(g[2], v), (g, v)
        else:
            assert g[2] == v, (g, v)
assert with_attrs == 5, with_attrs
print("attributes: %d Enters' attributes as the otf2 module reads them, %d Enters without" %
      (with_attrs, len(enters) - with_attrs))
PY
stop_view || fail "weft view (fib) exited with status $? on SIGTERM: $(cat "$TMP/view.err")"
# The cache: as this view starts, the index files unused for 30 days go
# (old.idx), and temporary ones a day old (x.tmp, not y.tmp); beyond
# --cache-max the least recently used (filler1.idx, not filler2.idx nor
# the ones used minutes ago), never the one the view uses.
C="$XDG_CACHE_HOME/weft/view"
for v in x 12x 4T -1 1.5G; do
    expect 2 "weft view: --cache-max: a size in bytes, or with K, M or G (e.g. 4G), not '$v'" \
        "$WEFT" --catalog "$SPOOL/catalog.db" view fib --cache-max "$v"
done
head -c 1048576 /dev/zero >"$C/filler1.idx"
head -c 1048576 /dev/zero >"$C/filler2.idx"
echo old >"$C/old.idx"
echo x >"$C/x.tmp"
echo y >"$C/y.tmp"
touch -d '3 days ago' "$C/filler1.idx"
touch -d '1 day ago' "$C/filler2.idx"
touch -d '40 days ago' "$C/old.idx"
touch -d '2 days ago' "$C/x.tmp"
before=$(cd "$C" && ls *.idx | grep -v '^filler\|^old' | sort)
# (the index files used minutes ago, fib's too, and 1.5 MiB more)
limit=$(( $(cd "$C" && cat $before | wc -c) + 1536 * 1024 ))
start_view fib --cache-max "$limit"
grep -q "read once" "$TMP/view.err" &&
    fail "weft view indexed fib again: $(cat "$TMP/view.err")"
grep -q "^weft view: removed 3 old index files (1.0 MiB; unused for 30 days, or the least recently used beyond --cache-max) from $C; " "$TMP/view.err" ||
    fail "weft view did not prune its cache as expected: $(cat "$TMP/view.err")"
[ ! -e "$C/filler1.idx" ] && [ ! -e "$C/old.idx" ] && [ ! -e "$C/x.tmp" ] &&
    [ -e "$C/filler2.idx" ] && [ -e "$C/y.tmp" ] ||
    fail "the cache after pruning: $(ls -l "$C")"
for f in $before; do
    [ -e "$C/$f" ] || fail "weft view removed $f, used minutes ago"
done
stop_view || fail "weft view (fib, --cache-max) exited with status $?"
# a limit below what the view uses: everything else goes, its own stays
start_view fib --cache-max 1
stop_view || fail "weft view (fib, --cache-max 1) exited with status $?"
[ "$(cd "$C" && ls *.idx)" = "$(cd "$C" && ls fib-*.idx)" ] ||
    fail "--cache-max 1 left $(ls "$C")"
echo "PASS"

#!/bin/bash
# e2e_report.sh - weft report in a real browser: a real weftd records a
# weft-demo trace (2 processes x 2 threads) and a 4-rank Open MPI ring
# (when mpirun and the MPI recorder are there); `weft report` writes
# each page from the catalog alone; headless Chromium renders it: the
# screenshot is not blank, the DOM has one timeline row per location,
# the region names, the header's numbers (events, ranks), and for the
# ring the message matrix of the ring's sends; weft-demo's "work"
# metric as a plot per location; for dd under `weft run -t io` the file
# it wrote and /dev/zero it read, with their bytes. The page references no
# URL (no network); hovering the timeline shows a tooltip naming the
# location, the time and the region; and a trace without a timeline (converted by an
# older weft) still gets a report that says so. The regions' paradigms
# (weft profile's, the page's and its legend's) are MPI's for the
# ring's calls, OpenMP's for the stencil's, io for dd's reads and writes.
. "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "SKIP: no chromium (Debian package chromium; scripts/deps.sh installs it)"
    exit 77
fi
# As root Chromium needs --no-sandbox; its crash reporter wants a home.
export HOME="$TMP/home"
mkdir -p "$HOME"
browse() {
    timeout 60 "$CHROMIUM" --headless=new --no-sandbox --disable-gpu \
        --no-first-run --disable-extensions --user-data-dir="$TMP/chromium" \
        --window-size=1400,1000 "$@" 2>>"$TMP/chromium.log"
}

# render NAME: the report of trace NAME, its DOM ($TMP/NAME.dom) and
# screenshot ($TMP/NAME.png), checked for a URL and a blank picture.
render() {
    local name=$1 html="$TMP/$1.html" t0 t1
    t0=$(date +%s%N)
    "$WEFT" --catalog "$SPOOL/catalog.db" report "$name" -o "$html" ||
        fail "$name: weft report failed"
    t1=$(date +%s%N)
    echo "$name: report in $(( (t1 - t0) / 1000000 )) ms, $(stat -c %s "$html") bytes"
    if grep -qE 'https?://' "$html"; then
        grep -noE '.{20}https?://.{20}' "$html" | head -3 >&2
        fail "$name: the report references a URL"
    fi
    browse --dump-dom "file://$html" >"$TMP/$name.dom" ||
        fail "$name: chromium --dump-dom failed: $(tail -3 "$TMP/chromium.log")"
    browse --screenshot="$TMP/$name.png" "file://$html" >/dev/null ||
        fail "$name: chromium --screenshot failed: $(tail -3 "$TMP/chromium.log")"
    "$PY" "$WEFT_SRCDIR/tests/png_check.py" "$TMP/$name.png" ||
        fail "$name: the screenshot is blank or missing"
    # WEFT_REPORT_KEEP=DIR keeps the pages and whole-page screenshots
    # (docs/): rendered in a tall window, cut below the page's end.
    if [ -n "${WEFT_REPORT_KEEP:-}" ]; then
        browse --screenshot="$TMP/$name.tall.png" --window-size=1400,4000 \
            "file://$html" >/dev/null ||
            fail "$name: chromium --screenshot failed: $(tail -3 "$TMP/chromium.log")"
        "$PY" "$WEFT_SRCDIR/tests/crop_png.py" "$TMP/$name.tall.png" \
            "$WEFT_REPORT_KEEP/$name.png" || fail "$name: crop_png.py failed"
        cp "$html" "$WEFT_REPORT_KEEP/"
    fi
}

# dom NAME PYTHON: checks the DOM of NAME's report with PYTHON, which sees
# dom (the text), show (weft show --json) and fail(msg).
dom() {
    "$WEFT" --catalog "$SPOOL/catalog.db" show "$1" --json >"$TMP/$1.show.json"
    "$PY" - "$TMP/$1.dom" "$TMP/$1.show.json" "$2" <<'PY' || fail "$1: the report's DOM is not as expected"
import html, json, re, sys
# What the page drew: without its script and its JSON data.
dom = re.sub(r"<script.*?</script>", "", open(sys.argv[1]).read(), flags=re.S)
show = json.load(open(sys.argv[2]))
def cell(id):
    m = re.search(r'<td id="%s">([^<]*)</td>' % id, dom)
    assert m, "no header cell " + id
    return html.unescape(m.group(1))
exec(sys.argv[3])
PY
}

# paradigms NAME PYTHON: checks the paradigms of NAME's regions (#35) with
# PYTHON, which sees prof (weft profile --json --limit 0: region ->
# paradigm), page (the report's paradigms: region -> paradigm) and
# legend (its legend: region -> what it says in parentheses).
paradigms() {
    "$WEFT" --catalog "$SPOOL/catalog.db" profile "$1" --json --limit 0 \
        >"$TMP/$1.par.json" || fail "weft profile $1 failed"
    "$PY" - "$TMP/$1.par.json" "$TMP/$1.html" "$TMP/$1.dom" "$2" <<'PY' || fail "$1: the regions' paradigms are not as expected"
import html, json, re, sys
prof = {r["region"]: r["paradigm"] for r in json.load(open(sys.argv[1]))["regions"]}
page = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                            open(sys.argv[2]).read(), re.S).group(1))["paradigms"]
dom = re.sub(r"<script.*?</script>", "", open(sys.argv[3]).read(), flags=re.S)
legend = dict(re.findall(r'class="legend-name">([^<]*) \(([^()<]*)\)</span>', dom))
legend = {html.unescape(k): v for k, v in legend.items()}
# the page names a region's paradigm as weft profile does
assert all(prof.get(k) == v for k, v in page.items()), (page, prof)
exec(sys.argv[4])
PY
}

start_weftd

# Threads: 2 processes of 2 threads each.
out=$(WEFT_TRACE=r WEFT_TAGS=app=demo,size=small timeout 120 "$DEMO" -p 2 -t 2 -n 200 2>&1) ||
    fail "weft-demo failed: $out"
wait_state r complete 60
render r
"$WEFT" --catalog "$SPOOL/catalog.db" profile r --json >"$TMP/r.profile.json" ||
    fail "weft profile r failed"
export TMP
dom r '
assert cell("h-events") == str(show["events"]), cell("h-events")
import pwd, os
assert cell("h-owner") == pwd.getpwuid(os.getuid()).pw_name, cell("h-owner")
assert cell("h-hosts") == ", ".join(show["hosts"]), (cell("h-hosts"), show["hosts"])
assert cell("h-tags") == "app=demo, size=small", cell("h-tags")
assert cell("h-dropped") == "0", cell("h-dropped")
assert re.fullmatch(r"[0-9.]+ (s|ms|us)", cell("h-duration")), cell("h-duration")
# the wall time beside it, in whole seconds as weft show says it
assert re.fullmatch(r"under 1 s|[0-9]+s|[0-9]+m [0-9]{2}s", cell("h-wall")), cell("h-wall")
# each profile bar says the visits and exclusive time weft profile says
prof_json = json.load(open(os.environ["TMP"] + "/r.profile.json"))["regions"]
def secs(s):
    if s >= 100: return "%.0f s" % s
    if s >= 1: return "%.3f s" % s
    if s >= 1e-3: return "%.3f ms" % (s * 1e3)
    return "%.3f us" % (s * 1e6)
texts = re.findall(r"<text[^>]*>([^<]*visits, incl[^<]*)</text>", dom)
for r in prof_json:
    want = "%s, %d visits" % (secs(r["excl_s"]), r["visits"])
    assert any(t.startswith(want) for t in texts), (want, texts)
assert cell("h-ranks") == "2", cell("h-ranks")
assert cell("h-threads") == str(len(show["locations"])), cell("h-threads")
assert cell("h-state") == "complete"
rows = re.findall(r"class=\"tl-row\" data-loc=\"(\d+)\"", dom)
locs = [l["id"] for l in show["locations"] if l["events"] > 0]
assert sorted(int(r) for r in rows) == sorted(locs), (rows, locs)
assert "id=\"no-timeline\"" not in dom
legend = re.findall(r"class=\"legend-name\">([^<(]*) \(", dom)
assert legend, "no legend"
prof = re.findall(r"class=\"bar-label\"[^>]*>([^<]*)<", dom)
assert len(prof) >= 2, prof
for name in legend:
    assert name in prof, (name, prof)
assert "Load balance" in dom and re.search(r"<svg[^>]*class=\"balance\"", dom)
# weft-demo records its "work" metric (unit items) on every location
plots = re.findall(r"<svg[^>]*class=\"metric-plot\" data-name=\"([^\"]*)\"", dom)
assert plots and set(plots) == {"work"}, plots
assert len(plots) == len(locs), (plots, locs)
assert "work [items]" in dom, "no metric title"
assert re.search(r"<polyline points=\"[0-9.]+,[0-9.]+ [0-9.]+,", dom), "no metric line"
assert "id=\"io-files\"" not in dom, "I/O table without I/O"
'

# Hovering: the middle of the first timeline row names its location, the
# time there and a region of the legend (the page moves a mouse there
# for #hover=X,Y).
# The first row's middle, in canvas pixels, from the page's data: the
# canvas is 1140 pixels wide in a 1400-pixel window, its rows 18 high.
x=$("$PY" - "$TMP/r.html" <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                         page, re.S).group(1))
T, tls = d["trace"], d["timelines"]
dur = max([T.get("duration_s") or 0] + [t["start"] + t["width"] * t["n"] for t in tls])
t = tls[0]
print(int((t["start"] + t["width"] * t["n"] / 2) / dur * 1140))
PY
) || fail "r: no timeline data in the page"
browse --dump-dom "file://$TMP/r.html#hover=$x,9" >"$TMP/r.hover.dom" ||
    fail "chromium --dump-dom (hover) failed"
"$PY" - "$TMP/r.hover.dom" "$TMP/r.dom" <<'PY' || fail "r: the timeline's tooltip is not as expected"
import html, re, sys
dom, plain = open(sys.argv[1]).read(), open(sys.argv[2]).read()
m = re.search(r'<div id="tip"[^>]*>([^<]*)</div>', dom)
assert m and m.group(1), "no tooltip"
tip = html.unescape(m.group(1))
first = re.search(r'class="tl-row" data-loc="\d+"[^>]*>([^<]*)<', plain).group(1)
legend = re.findall(r'class="legend-name">([^<(]*) \(', plain)
t = re.fullmatch(r"(.*) @ ([0-9.]+) (s|ms|us): (.*)", tip)
assert t, tip
assert t.group(1) == html.unescape(first).strip(), (tip, first)
assert t.group(4) in legend, (tip, legend)
assert 'id="tip" style="' in dom and "display: block" in dom, "the tooltip is not shown"
print("tooltip:", tip)
PY

# A trace converted before the timeline summary: its rows are gone.
sqlite3 "$SPOOL/catalog.db" "DELETE FROM timelines; DELETE FROM timeline_regions;" 2>/dev/null ||
    "$PY" -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript("DELETE FROM timelines; DELETE FROM timeline_regions;"); c.commit()' "$SPOOL/catalog.db"
render r
dom r '
assert "id=\"no-timeline\"" in dom
assert cell("h-events") == str(show["events"])
assert re.search(r"class=\"bar-label\"", dom)
'

# File I/O: dd copies 100 blocks of 4096 bytes from /dev/zero to a file.
mkdir -p "$TMP/io"
# (a sanitizer build preloads libweft-io into an uninstrumented dd)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" timeout 60 "$WEFT" run -t io --trace ddio -- \
    dd if=/dev/zero of="$TMP/io/f" bs=4096 count=100 2>"$TMP/dd.out" ||
    fail "dd under weft run failed: $(cat "$TMP/dd.out")"
wait_state ddio complete 60
render ddio
export TMP
dom ddio '
rows = re.findall(r"<tr class=\"io-file\" data-read=\"(\d+)\" data-written=\"(\d+)\" data-ops=\"(\d+)\">\s*<td class=\"io-name\"[^>]*>([^<]*)<", dom)
files = {html.unescape(n): (int(r), int(w), int(o)) for r, w, o, n in rows}
import os
f = files.get(os.path.realpath(os.environ["TMP"]) + "/io/f")
assert f, files
assert f[1] == 409600 and f[0] == 0 and f[2] >= 100, f
z = files.get("/dev/zero")
assert z and z[0] == 409600 and z[1] == 0, files
assert "class=\"metric-plot\"" not in dom, "metric plots without metrics"
'
# dd's reads and writes: I/O calls, paradigm io, I/O in the legend
paradigms ddio '
assert prof["read"] == prof["write"] == "io", prof
assert prof["outside traced calls"] == "", prof
assert all(v == "I/O" for k, v in legend.items() if prof.get(k) == "io"), legend
'

# OpenMP: an imbalanced sweep (tests/openmp/stencil, GCC's libgomp)
# under weft run's default recorders: its regions are OpenMP's in the
# legend, and the load balance shows the team waiting for its slowest
# thread at the static loop's barrier: the first thread waits most, the
# one with the last (costliest) cells hardly at all.
STENCIL="$WEFT_BUILDDIR/tests/openmp/stencil"
[ -x "$STENCIL" ] || fail "$STENCIL missing"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0" \
WEFT_LIBDIR="$WEFT_BUILDDIR/.libs" timeout 120 "$WEFT" run --trace stencil -- \
    "$STENCIL" >"$TMP/stencil.out" 2>&1 ||
    fail "stencil under weft run failed: $(cat "$TMP/stencil.out")"
wait_state stencil complete 60
render stencil
dom stencil '
legend = re.findall(r"class=\"legend-name\">([^<]*)<", dom)
omp = [l for l in legend if l.startswith("!$omp ")]
assert omp and all(l.endswith("(OpenMP)") for l in omp), legend
t = re.search(r"class=\"balance-title\">(!\$omp barrier @stencil\.c:\d+): min ([0-9.]+) (s|ms|us), mean [^,]*, max ([0-9.]+) (s|ms|us)<", dom)
assert t, "no load balance of the static loop barrier"
scale = {"s": 1e3, "ms": 1.0, "us": 1e-3}
lo = float(t.group(2)) * scale[t.group(3)]
hi = float(t.group(4)) * scale[t.group(5)]
assert hi > 50 and lo < hi / 3, (t.group(0), lo, hi)
print("stencil: %s waits %.1f ms at most, %.1f ms at least per thread" % (t.group(1), hi, lo))
'
# its OpenMP regions are of paradigm openmp, so the legend says OpenMP
paradigms stencil '
omp = [k for k in prof if k.startswith("!$omp ")]
assert omp and all(prof[k] == "openmp" for k in omp), prof
assert all(page[k] == "openmp" for k in legend if k.startswith("!$omp ")), (page, legend)
'

# MPI: a 4-rank ring under Open MPI, when it is there.
MPILIB="$WEFT_BUILDDIR/.libs/libweft-mpi-openmpi.so"
if command -v mpirun.openmpi >/dev/null && command -v mpicc.openmpi >/dev/null &&
        [ -e "$MPILIB" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
    cat >"$TMP/ring.c" <<'PROG'
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, size, token = 0;
    char buf[1000] = { 0 };

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 5; i++) {
        if (rank == 0) {
            MPI_Send(buf, 100, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(buf, 100, MPI_CHAR, size - 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 100, MPI_CHAR, rank - 1, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, 100, MPI_CHAR, (rank + 1) % size, 7,
                     MPI_COMM_WORLD);
        }
    }
    MPI_Allreduce(&rank, &token, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
PROG
    mpicc.openmpi -o "$TMP/ring" "$TMP/ring.c" || fail "mpicc.openmpi failed"
    WEFT_TRACE=ring timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe \
        -np 4 -x WEFT_TRACE -x WEFT_SERVER -x WEFT_AUTH \
        -x LD_PRELOAD="$MPILIB" "$TMP/ring" >"$TMP/ring.out" 2>&1 ||
        fail "the MPI ring failed: $(tail -5 "$TMP/ring.out")"
    wait_state ring complete 60
    render ring
    dom ring '
assert cell("h-ranks") == "4", cell("h-ranks")
assert cell("h-events") == str(show["events"])
rows = re.findall(r"class=\"tl-row\" data-loc=\"(\d+)\"", dom)
assert len(rows) == len([l for l in show["locations"] if l["events"]]), rows
assert "MPI_Send" in dom and "MPI_Recv" in dom
# the ring: rank r sends 5 x 100 bytes to r + 1 (500 B)
m = re.search(r"<table class=\"matrix\" id=\"matrix\">(.*?)</table>", dom, re.S)
assert m, "no message matrix"
cells = re.findall(r"<td[^>]*title=\"rank (\d+) -(?:&gt;|>) (\d+): (\d+) messages, ([^\"]*)\"", m.group(1))
got = sorted((int(a), int(b), int(n)) for a, b, n, _ in cells)
assert got == [(r, (r + 1) % 4, 5) for r in range(4)], got
assert all(b == "500 B" for _, _, _, b in cells), cells
# time in MPI: a bar per rank, each with the MPI regions of its locations
m = re.search(r"<svg id=\"mpi-time\".*?</svg>", dom, re.S)
assert m, "no time in MPI per rank"
ranks = re.findall(r"<text[^>]*>rank (\d+)</text>", m.group(0))
assert sorted(int(r) for r in ranks) == [0, 1, 2, 3], ranks
times = re.findall(r"<text[^>]*>([0-9.]+) (s|ms|us)</text>", m.group(0))
assert len(times) == 4 and all(float(v) > 0 for v, _ in times), times
'
    # the MPI calls are of paradigm mpi, and the legend says MPI
    paradigms ring '
for k in ("MPI_Send", "MPI_Recv", "MPI_Allreduce"):
    assert prof.get(k) == "mpi", (k, prof)
assert all(v == "mpi" for k, v in prof.items() if k.startswith("MPI_")), prof
assert legend and all(v == "MPI" for k, v in legend.items() if k.startswith("MPI_")), legend
'
else
    echo "note: no Open MPI or no $MPILIB: the MPI report is not checked"
fi

stop_weftd
echo ok

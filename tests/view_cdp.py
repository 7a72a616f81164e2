#!/usr/bin/python3
"""view_cdp.py CHROMIUM URL OUTDIR ANCHOR... - drives headless Chromium
over the DevTools protocol through a pipe (--remote-debugging-pipe:
commands on its fd 3, answers on its fd 4, each a JSON text ended by a
NUL byte) to the `weft view` page at URL, which serves the traces of the
OTF2 archives ANCHOR... in that order, and checks what the page draws
against the archives as otf2-print (an independent reader) prints them:

  (a) once ready(), for every trace, one row per location of its
      archive, the whole trace shown, exactly the archive's region
      visits at least a pixel wide (start, end, region, depth, in ticks
      since the clock offset);
  (b) a window of a few visits of one location of the first trace:
      exactly the visits of every location at least a pixel wide there,
      and the axis's unit chosen for that zoom; the other traces keep
      their own window;
  (c) a click on a visit with visits inside it: the details (name,
      start, end, duration, inclusive and exclusive time = its duration
      less its children's, call path) from the archive, and the panel
      saying them; a click outside any region says so (between the
      location's first and last events; before them, that it had none);
  (d) hovering a visit names it, clicking it shows its details; the
      wheel zooms around the pointer, a drag zooms into its range,
      shift-drag and the arrow keys pan, + and - zoom, Home shows the
      whole trace again;
  (f) the filters: with a paradigm hidden (by its legend entry too),
      exactly the visits and bins of the others drawn; a row hidden (by
      a click on its label too) draws nothing, the others theirs, and it
      comes back (by "show all rows" too); "hide short" hides exactly
      the visits shorter than its threshold;
  (g) in a trace with MPI messages (a third ANCHOR): the message lines
      drawn are the archive's MpiSend/MpiIsend matched with their
      MpiRecv/MpiIrecv (the n-th of a sender, receiver, communicator
      and tag with the n-th), and hovering each says its tag, bytes,
      communicator, send and receive location and time, and latency;
  (h) search (when weft view answers api/find): the count for the whole
      trace is the archive's Enters of the regions whose name holds the
      text, every drawn visit and bin of them outlined; next from the
      start is the earliest, centred and a few pixels wide at least, its
      details shown; next the one after, previous back, and Enter and
      shift-Enter in the box the same;
  (i) summary (when weft view answers api/summary): for each whole
      trace, the call tree's and region profile's visits and times as
      shown are api/summary's, and the profile is `weft profile --json`
      (OUTDIR/profile.N.json, where there is one) at the resolution
      shown; a call tree node
      closes and opens; with a row hidden, the summary is the others';
  (j) marks (in the traces that have any): over the whole trace every
      kind the archive has drawn, each mark drawn one of the archive's
      (tests/view_marks.py reads them from otf2-print); zoomed onto the
      first of each kind, hovering it names it with its times, clicking
      it shows its details;
  (e) the page fetched nothing but its own address, threw nothing, and
      a screenshot of the whole page (OUTDIR/view.png) is not blank
      (tests/png_check.py).

Run by tests/e2e_view.sh. Everything it waits for has a timeout."""
import base64
import fcntl
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import png_check  # noqa: E402
import view_marks  # noqa: E402

TIMEOUT = 30.0


class CDPError(Exception):
    pass


class Browser:
    """A headless Chromium and its DevTools pipe."""

    def __init__(self, chromium, profile, log):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # out of the way of 3 and 4 before the child puts them there
        hi_r = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_w = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def child():
            # its own process group: close() ends every process of it
            os.setsid()
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-extensions",
             "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--window-size=1400,1000", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            close_fds=False, preexec_fn=child)
        for fd in (to_r, from_w, hi_r, hi_w):
            os.close(fd)
        self.wfd, self.rfd = to_w, from_r
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read_one(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("no answer from Chromium in time")
            r, _, _ = select.select([self.rfd], [], [], left)
            if not r:
                continue
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise CDPError("Chromium closed its pipe (exit %s)" % self.proc.poll())
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=TIMEOUT):
        """The result of command method, or CDPError with its error."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.wfd, data):]
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_one(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise CDPError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method, session, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method and e.get("sessionId") == session:
                    return self.events.pop(i)
            m = self._read_one(deadline)
            if "method" in m:
                self.events.append(m)

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except (CDPError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait(10)
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass


class Page:
    def __init__(self, browser, session):
        self.b, self.s = browser, session

    def send(self, method, params=None, timeout=TIMEOUT):
        return self.b.send(method, params, self.s, timeout)

    def js(self, expr, timeout=TIMEOUT):
        """The value of JavaScript expression expr (a Promise awaited)."""
        r = self.send("Runtime.evaluate", {
            "expression": expr, "awaitPromise": True, "returnByValue": True,
            "timeout": int(timeout * 1000)}, timeout + 5)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CDPError("%s: %s" % (expr, d.get("exception", {}).get(
                "description", d.get("text"))))
        return r["result"].get("value")


# ---- the archive, as otf2-print prints it ----------------------------------

EVENT = re.compile(r'^(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "(.*)" <(\d+)>')
MSG = re.compile(r'^MPI_(I?SEND|I?RECV)\s+(\d+)\s+(\d+)\s+(?:Receiver|Sender): \d+ '
                 r'\(".*" <(\d+)>\), Communicator: "(.*)" <(\d+)>, Tag: (\d+), Length: (\d+)')


def archive_spans(anchor):
    """{location: [(start, end, region name, depth)]} in ticks since the
    clock offset, the clock (offset, resolution, length), and the MPI
    messages: [(send loc, send t, recv loc, recv t, tag, bytes, comm id,
    comm name)], the n-th MpiSend or MpiIsend of a (sender, receiver,
    comm, tag) channel with its n-th MpiRecv or MpiIrecv."""
    defs = subprocess.run(["otf2-print", "-G", anchor], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    m = re.search(r"Ticks per Seconds: (\d+), Global Offset: (\d+), Length: (\d+)", defs)
    if not m:
        raise SystemExit("no CLOCK_PROPERTIES in otf2-print -G " + anchor)
    res, offset, length = (int(x) for x in m.groups())
    stacks, spans, sends, recvs = {}, {}, {}, {}
    out = subprocess.run(["otf2-print", anchor], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    for line in out.splitlines():
        e = EVENT.match(line)
        if not e:
            m = MSG.match(line)
            if m:
                kind, loc, ts, peer = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
                comm, tag, size = (m.group(5), int(m.group(6))), int(m.group(7)), int(m.group(8))
                if kind.endswith("SEND"):
                    sends.setdefault((loc, peer, comm, tag), []).append((ts - offset, size))
                else:
                    recvs.setdefault((peer, loc, comm, tag), []).append((ts - offset, size))
            continue
        kind, loc, ts, name = e.group(1), int(e.group(2)), int(e.group(3)), e.group(4)
        st = stacks.setdefault(loc, [])
        spans.setdefault(loc, [])
        if kind == "ENTER":
            st.append((ts - offset, name))
        else:
            assert st, "a Leave without an Enter at location %d" % loc
            start, nm = st.pop()
            assert nm == name, (loc, ts, nm, name)
            spans[loc].append((start, ts - offset, name, len(st)))
    open_ = {loc: st for loc, st in stacks.items() if st}
    assert not open_, "Enters never left: %s" % open_
    msgs = []
    for ch, ss in sends.items():
        for (st, size), (rt, _) in zip(ss, recvs.get(ch, [])):
            msgs.append((ch[0], st, ch[1], rt, ch[3], size, ch[2][1], ch[2][0]))
    return spans, (offset, res, length), sorted(msgs)


def expected(spans, t0, t1, px):
    """The visits api/window shows exactly in [t0, t1) on px columns."""
    return {loc: sorted([s, e, n, d] for s, e, n, d in v
                        if s < t1 and e > t0 and (e - s) * px >= (t1 - t0))
            for loc, v in spans.items()}


def check_drawn(page, spans, t0, t1, what, ti=0, hidden=(), keep=None):
    """Sets the window of trace ti (unless t0 is None: the one shown) and
    checks the page draws exactly the archive's visits there (those keep
    accepts, none of the locations hidden). Returns drawn(ti)."""
    if t0 is not None:
        page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, t0, t1))
    d = page.js("window.weftView.drawn(%d)" % ti)
    assert not d["pending"], "%s: a window is still being fetched" % what
    if t0 is not None:
        assert (d["t0"], d["t1"]) == (t0, t1), (what, d["t0"], d["t1"], t0, t1)
    want = expected(spans, d["t0"], d["t1"], d["px"])
    for loc in want:
        want[loc] = [] if loc in hidden else [s for s in want[loc] if not keep or keep(s)]
    rows = {r["loc"]: r for r in d["rows"]}
    bad = [loc for loc in rows if rows[loc].get("hidden") != (loc in hidden)]
    assert not bad, "%s: rows %s hidden or shown wrongly" % (what, bad)
    assert sorted(rows) == sorted(spans), \
        "%s: rows %s, the archive's locations %s" % (what, sorted(rows), sorted(spans))
    total = 0
    for loc, w in want.items():
        got = sorted(rows[loc]["spans"])
        if got != w:
            extra = [s for s in got if s not in w][:5]
            missing = [s for s in w if s not in got][:5]
            raise AssertionError("%s: location %d: %d visits drawn, the archive has %d "
                                 "(drawn, not in the archive: %s; missing: %s)" %
                                 (what, loc, len(got), len(w), extra, missing))
        total += len(w)
    print("%s: [%d, %d) on %d px: %d visits, as in the archive; %d bins; axis %s" %
          (what, d["t0"], d["t1"], d["px"], total,
           sum(r["bins"] for r in d["rows"]), " ".join(d["ticks"][:3])))
    return d


def settled(page):
    """drawn(0) once the page has drawn its last change (10 s at most)."""
    return page.js("""new Promise((ok, no) => {
        const end = Date.now() + 10000;
        (function poll() {
            const d = window.weftView.drawn(0);
            if (!d.pending) ok(d);
            else if (Date.now() > end) no(new Error("still fetching after 10 s"));
            else setTimeout(poll, 20);
        })();
    })""")


def wait_js(page, cond, what, timeout=10):
    """The value of JavaScript expression cond once it is truthy (polled
    every 20 ms, timeout seconds at most)."""
    return page.js("""new Promise((ok, no) => {
        const end = Date.now() + %d;
        (function poll() {
            const v = (%s);
            if (v) ok(v);
            else if (Date.now() > end) no(new Error(%s));
            else setTimeout(poll, 20);
        })();
    })""" % (timeout * 1000, cond, json.dumps("in %d s: " % timeout + what)))


def api_status(url, path):
    """The HTTP status of GET url + path."""
    try:
        with urllib.request.urlopen(url + path, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def check_filters(page, archives, paradigms):
    """(f) A legend entry hides and shows its paradigm's regions (by its
    hook and by a click on it), a row's label hides and shows its row
    ("show all rows" too), and "hide short" hides exactly the visits
    shorter than its threshold, in a window of visits and bins alike."""
    spans, _ = archives[0]
    whole = [None] * len(archives)
    for ti, (sp, _) in enumerate(archives):
        whole[ti] = check_drawn(page, sp, None, None, "trace %d before the filters" % ti, ti)
    for fam in sorted({f for p in paradigms for f in p.values()}):
        page.js("window.weftView.setFamily(%s, true)" % json.dumps(fam))
        for ti, (sp, _) in enumerate(archives):
            d = check_drawn(page, sp, None, None, "trace %d, %s hidden" % (ti, fam), ti,
                            keep=lambda s, ti=ti: paradigms[ti][s[2]] != fam)
            assert all(paradigms[ti].get(n) != fam for r in d["rows"] for n in r["binRegions"]), \
                "trace %d: a bin of a hidden %s region is drawn" % (ti, fam)
        # shown again by a click on its legend entry
        page.js("document.querySelector('.legend .fam[data-paradigm=\"%s\"]').click()" % fam)
        assert not page.js("document.querySelector('.legend .fam[data-paradigm=\"%s\"]')"
                           ".classList.contains('off')" % fam)
        for ti, (sp, _) in enumerate(archives):
            check_drawn(page, sp, None, None, "trace %d, %s shown again" % (ti, fam), ti)
    # rows: hidden by the hook, then by a click on the label; shown again
    locs = sorted(spans)
    page.js("window.weftView.setRow(0, %d, true)" % locs[0])
    check_drawn(page, spans, None, None, "location %d hidden" % locs[0], hidden={locs[0]})
    label = "document.querySelector('.labels .loc[data-loc=\"%d\"]')"
    page.js(label % locs[1] + ".click()")
    wait_js(page, "!window.weftView.drawn(0).pending && window.weftView.drawn(0).rows"
            ".filter(r => r.hidden).length == 2", "the second row hidden")
    check_drawn(page, spans, None, None, "two rows hidden", hidden={locs[0], locs[1]})
    page.js(label % locs[1] + ".click()")
    wait_js(page, "!window.weftView.drawn(0).pending && window.weftView.drawn(0).rows"
            ".filter(r => r.hidden).length == 1", "the second row shown again")
    check_drawn(page, spans, None, None, "one row shown again", hidden={locs[0]})
    page.js("document.querySelector('section[data-trace=\"0\"] button.show-all').click()")
    wait_js(page, "!window.weftView.drawn(0).pending && !window.weftView.drawn(0).rows"
            ".some(r => r.hidden)", "every row shown again")
    check_drawn(page, spans, None, None, "show all rows")
    # hide short: in a window of a few visits, the median duration drawn
    loc = locs[0]
    inner = sorted(s for s in spans[loc] if s[3] == 1)
    k = len(inner) // 2
    t0, t1 = inner[k][0], inner[k + 2][1]
    d = check_drawn(page, spans, t0, t1, "before hide short")
    durs = sorted(s[1] - s[0] for r in d["rows"] for s in r["spans"])
    thr = durs[len(durs) // 2]
    res = page.js("window.weftView.traces()[0].resolution")
    page.js("window.weftView.setShort(%r)" % (thr / res))
    d = check_drawn(page, spans, None, None, "hide shorter than %d ticks" % thr,
                    keep=lambda s: s[1] - s[0] >= thr)
    if thr >= (d["t1"] - d["t0"]) / d["px"]:
        assert not sum(r["bins"] for r in d["rows"]), "bins drawn under hide short"
    # the control: 1000 s hides every visit, empty shows them again
    page.js("(() => { const e = document.getElementById('short'); e.value = '1'; "
            "document.getElementById('short-unit').value = '1'; "
            "e.dispatchEvent(new Event('input')); })()")
    d = page.js("window.weftView.drawn(0)")
    assert not any(r["spans"] or r["bins"] for r in d["rows"]), "visits drawn under hide short 1 s"
    page.js("(() => { const e = document.getElementById('short'); e.value = ''; "
            "document.getElementById('short-unit').value = '1e-6'; "
            "e.dispatchEvent(new Event('input')); })()")
    check_drawn(page, spans, None, None, "hide short off")
    print("filters: paradigms %s hidden and shown, rows hidden and shown, hide short "
          "(%d ticks) as expected" % (sorted({f for p in paradigms for f in p.values()}), thr))


def seg_dist(l, x, y):
    """The distance of (x, y) from line l ({x0, y0, x1, y1})."""
    dx, dy = l["x1"] - l["x0"], l["y1"] - l["y0"]
    n = dx * dx + dy * dy
    u = max(0, min(1, ((x - l["x0"]) * dx + (y - l["y0"]) * dy) / n)) if n else 0
    return ((l["x0"] + u * dx - x) ** 2 + (l["y0"] + u * dy - y) ** 2) ** 0.5


def check_messages(page, ti, archive, msgs, comms):
    """(g) The message lines trace ti draws over the whole trace are the
    archive's messages; hovering each (zoomed onto it) says its tag,
    bytes, communicator, send and receive location and time, latency."""
    spans, (_, res, _) = archive
    assert msgs, "trace %d: the archive has no messages" % ti
    info = page.js("window.weftView.traces()[%d]" % ti)
    names = {l_["loc"]: l_["name"] for l_ in info["locations"]}
    page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, info["t0"], info["t1"]))
    drawn = sorted(tuple(l["m"]) for l in page.js("window.weftView.messages(%d)" % ti))
    want = sorted(m[:7] for m in msgs)
    assert drawn == want, "trace %d: message lines %s, the archive's messages %s" % (
        ti, drawn[:4], want[:4])
    hovered = 0
    for m in msgs:
        a, b_ = min(m[1], m[3]), max(m[1], m[3])
        pad = max(1000, b_ - a)
        page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, max(0, a - pad), b_ + pad))
        page.js("document.querySelector('canvas.timeline[data-trace=\"%d\"]')"
                ".scrollIntoView({block: 'center'})" % ti)
        lines = page.js("window.weftView.messages(%d)" % ti)
        mine = [l for l in lines if tuple(l["m"]) == m[:7]]
        assert len(mine) == 1, ("message not drawn once", m, len(mine))
        l = mine[0]
        x, y = (l["x0"] + l["x1"]) / 2, (l["y0"] + l["y1"]) / 2
        page.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        tip = page.js("window.weftView.tip()")
        # (another line through the very same point: either may be named)
        if "(%d ticks); received" % m[1] not in tip and any(
                seg_dist(o, x, y) < 1 for o in lines if o is not l):
            continue
        for needle in ("tag %d," % m[4], "%d bytes" % m[5], "communicator %s;" % comms[m[6]],
                       "sent by %s" % names[m[0]], "location %d)" % m[0],
                       "(%d ticks); received" % m[1],
                       "received by %s" % names[m[2]], "location %d)" % m[2],
                       "(%d ticks); latency" % m[3], "(%d ticks)" % (m[3] - m[1])):
            assert needle in tip, \
                "hover on message %s: the tip %r does not say %r" % (m, tip, needle)
        hovered += 1
    assert hovered * 2 >= len(msgs), "only %d of %d messages hovered" % (hovered, len(msgs))
    print("messages: %d lines, the archive's MpiSend/MpiRecv pairs; hover says each's tag, "
          "bytes, communicator, ends and latency (%d hovered)" % (len(drawn), hovered))


def settle_layout(page):
    """Waits until every trace's summary is the one for its window: a
    summary that comes late changes its height, moving the traces under
    it (and the marks a test would point at)."""
    for tj in range(page.js("window.weftView.traces().length")):
        page.js("window.weftView.summary(%d).then(() => 0)" % tj)


def check_marks(page, ti, anchor):
    """(j) The marks trace ti draws, hovered and clicked."""
    info = page.js("window.weftView.traces()[%d]" % ti)
    want = sorted(tuple(m) for m in view_marks.archive_marks(anchor, info["offset"]))
    page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, info["t0"], info["t1"]))
    drawn = page.js("window.weftView.marks(%d)" % ti)
    stray = [h["m"] for h in drawn if tuple(h["m"]) not in want]
    assert not stray, "trace %d: marks drawn that the archive has not: %s" % (ti, stray[:4])
    kinds = sorted({m[0] for m in want})
    assert sorted({h["m"][0] for h in drawn}) == kinds, \
        ("trace %d: kinds drawn" % ti, sorted({h["m"][0] for h in drawn}), "the archive's", kinds)
    named = 0
    for k in kinds:
        m = next(m for m in want if m[0] == k)
        lo, hi = min(m[2], m[3]), max(m[2], m[3])
        pad = max(1000, hi - lo)
        page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, max(0, lo - pad), hi + pad))
        settle_layout(page)
        page.js("document.querySelector('canvas.timeline[data-trace=\"%d\"]')"
                ".scrollIntoView({block: 'center'})" % ti)
        hits = page.js("window.weftView.marks(%d)" % ti)
        mine = [h for h in hits if tuple(h["m"]) == m]
        assert len(mine) == 1, ("mark not drawn once", m, len(mine))
        h = mine[0]
        x, y = (h["x0"] + h["x1"]) / 2, (h["y0"] + h["y1"]) / 2
        page.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        tip = page.js("window.weftView.tip()")
        title = h["details"][0]
        # (another mark through the very same point may be named instead)
        own = tip.startswith(title + ";") and "(%d ticks)" % m[2] in tip
        if not own and any(tuple(o["m"]) != m and (
                seg_dist(o, x, y) < 4 if o["arrow"] else
                o["x0"] - 2 <= x <= o["x1"] + 2 and o["y0"] - 2 <= y <= o["y1"] + 2)
                for o in hits):
            continue
        assert tip.startswith(title + ";") and "(%d ticks)" % m[2] in tip, \
            "hover on mark %s: the tip %r, not %r" % (m, tip, title)
        mouse(page, "mousePressed", x, y)
        mouse(page, "mouseReleased", x, y)
        # (the renderer may handle the release after the call returns)
        try:
            text = wait_js(page, "(t => t.includes(%s) && t.includes('%d ticks') && t)"
                           "(window.weftView.details())" % (json.dumps(title), m[3]),
                           "the details of mark %s" % (m,), timeout=5)
        except CDPError:
            text = page.js("window.weftView.details()")
        under = page.js("(() => { const e = document.elementFromPoint(%f, %f);"
                        " return e ? e.tagName + '#' + e.id + '.' + e.className : ''; })()" % (x, y))
        assert title in text and "%d ticks" % m[3] in text, \
            "click on mark %s at (%.1f, %.1f) on %s: the details %r, not %r" % (
                m, x, y, under, text, h["details"])
        named += 1
    assert named * 2 >= len(kinds), "only %d of %d kinds of marks hovered" % (named, len(kinds))
    print("marks of trace %d: %d drawn over the whole trace, all the archive's; kinds %s "
          "drawn, hover and click name them (%d checked)" % (ti, len(drawn), kinds, named))


def check_search(page, ti, spans, q):
    """(h) Searching q: api/find's count for the whole trace is the
    archive's visits (Enters) of the regions whose name holds q (case
    aside), every drawn visit and bin of them outlined; next from the
    start is the earliest such visit, centred, at least a few pixels
    wide, its details shown; next again the one after; previous (and
    shift-Enter) goes back."""
    info = page.js("window.weftView.traces()[%d]" % ti)
    page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, info["t0"], info["t1"]))
    j = page.js("window.weftView.search(%d, %s)" % (ti, json.dumps(q)))
    match = lambda name: q.lower() in name.lower()  # noqa: E731
    visits = sorted((s[0], s[1], s[2], s[3], loc) for loc, v in spans.items()
                    for s in v if match(s[2]))
    assert visits, "no region of trace %d holds %r" % (ti, q)
    assert j["count"] == len(visits), \
        "api/find counts %d visits of %r, the archive has %d Enters" % (j["count"], q, len(visits))
    assert sorted(r["name"] for r in info["regions"] if r["id"] in j["regions"]) == \
        sorted(r["name"] for r in info["regions"] if match(r["name"])), j["regions"]
    text = page.js("window.weftView.findText(%d)" % ti)
    assert text.startswith("%d in view" % len(visits)), text
    d = page.js("window.weftView.drawn(%d)" % ti)
    for r in d["rows"]:
        want = [s for s in r["spans"] if match(s[2])]
        assert r["marked"] == want, ("outlined", r["loc"], len(r["marked"]), len(want))
        assert r["markedBins"] == sum(1 for n in r["binRegions"] if match(n)), r["loc"]
    assert d["marked"] > 0, "nothing outlined"
    # next from the start, next, previous
    first = min(visits, key=lambda v: v[0])
    later = sorted(v for v in visits if v[0] > first[0])
    hit = page.js("window.weftView.findStep(%d, 1)" % ti)

    def same(hit, v, what):
        assert hit and (hit["start"], hit["end"], hit["loc"], hit["depth"]) == \
            (v[0], v[1], v[4], v[3]), "%s: found %s, the archive's %s" % (what, hit, v)
        d = page.js("window.weftView.drawn(%d)" % ti)
        assert not d["pending"] and d["t0"] <= v[0] and v[1] <= d["t1"], (what, d["t0"], d["t1"], v)
        wide = (v[1] - v[0]) * d["px"] / (d["t1"] - d["t0"])
        assert wide >= 7.5 or d["t1"] - d["t0"] <= max(4, -(-d["px"] // 100)) or \
            d["t1"] - d["t0"] == info["t1"] - info["t0"], (what, "%.1f px wide" % wide)
        mid, c = (v[0] + v[1]) / 2, (d["t0"] + d["t1"]) / 2
        assert abs(mid - c) <= 1 or d["t0"] == info["t0"] or d["t1"] == info["t1"], (what, mid, c)
        text = page.js("window.weftView.details()")
        assert v[2] in text and "%d ticks" % v[0] in text, (what, text)
    same(hit, first, "next from the start")
    if later:
        hit = page.js("window.weftView.findStep(%d, 1)" % ti)
        same(hit, later[0], "next")
        hit = page.js("window.weftView.findStep(%d, -1)" % ti)
        same(hit, first, "previous")
        # Enter in the box: the next again
        page.js("document.querySelector('section[data-trace=\"%d\"] input.find-q').focus()" % ti)
        key(page, "Enter", 13)
        wait_js(page, "window.weftView.details().includes('%d ticks')" % later[0][0],
                "Enter's next")
        wait_js(page, "!window.weftView.drawn(%d).pending" % ti, "the window after Enter")
        # and shift-Enter the previous
        for kind in ("keyDown", "keyUp"):
            page.send("Input.dispatchKeyEvent", {"type": kind, "key": "Enter", "modifiers": 8,
                                                 "windowsVirtualKeyCode": 13})
        wait_js(page, "window.weftView.details().includes('%d ticks')" % first[0],
                "shift-Enter's previous")
        wait_js(page, "!window.weftView.drawn(%d).pending" % ti, "the window after shift-Enter")
        page.js("document.querySelector('section[data-trace=\"%d\"] input.find-q').blur()" % ti)
    print("search %r: %d visits, as many Enters in the archive; %d outlined; next %d, "
          "next, previous as expected" % (q, j["count"], d["marked"], first[0]))


def shown_time(text, unit):
    """Seconds of a time the summary shows as text in unit (s, ms, ...)."""
    return float(text) * {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit]


def check_summary(page, ti, res, profile):
    """(i) The summary of the whole trace: its call tree's and region
    profile's times as shown are api/summary's, at the resolution shown
    (3 decimals of the unit), and the profile is weft profile's (--json,
    every region; its outside row aside)."""
    info = page.js("window.weftView.traces()[%d]" % ti)
    page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, info["t0"], info["t1"]))
    sm = page.js("window.weftView.summary(%d)" % ti)
    a = sm["answer"]
    assert (a["t0"], a["t1"]) == (info["t0"], info["t1"]), (a["t0"], a["t1"])
    unit = re.search(r"times in (\w+)$", sm["unit"]).group(1)
    tol = 0.5e-3 * {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit] + 1e-12
    rows = {r["path"]: r for r in sm["tree"]}
    for c in a["callpaths"]:
        r = rows.get(",".join(map(str, c["path"])))
        assert r, "the call tree has no row for %s" % c["path"]
        name, incl, excl, visits = r["cells"]
        assert int(visits) == c["visits"], (c, r)
        assert abs(shown_time(incl, unit) - c["incl"] / res) <= tol, ("incl", c, r)
        assert abs(shown_time(excl, unit) - c["excl"] / res) <= tol, ("excl", c, r)
    prof = {int(r["region"]): r for r in sm["profile"]}
    names = {r["id"]: r["name"] for r in info["regions"]}
    assert sorted(prof) == sorted(r["region"] for r in a["regions"]), (sorted(prof), a["regions"])
    for g in a["regions"]:
        name, _, visits, incl, excl = prof[g["region"]]["cells"]
        assert name == names[g["region"]] and int(visits) == g["visits"], (g, name, visits)
        assert abs(shown_time(incl, unit) - g["incl"] / res) <= tol, ("incl", g, incl)
        assert abs(shown_time(excl, unit) - g["excl"] / res) <= tol, ("excl", g, excl)
    # weft profile: the same regions, visits and times at the resolution
    # shown (its seconds are ticks over the resolution too: a tick apart
    # at most, from rounding); not for a trace whose recorders counted
    # calls instead of recording them (weft profile adds those, the
    # viewer shows the events)
    tol += 1.0 / res
    want = {p["region"]: p for p in profile["regions"]
            if p["paradigm"] or p["visits"]} if profile else {}
    got = {r["cells"][0]: r["cells"] for r in sm["profile"]}
    assert not profile or sorted(got) == sorted(want), \
        "the page's regions %s, weft profile's %s" % (sorted(got), sorted(want))
    # (weft profile's times are each process's ticks as recorded; where
    # two processes' TSCs were measured at rates a few ppm apart, the
    # archive has them scaled to one rate: 100 ppm more)
    for n, p in want.items():
        _, _, visits, incl, excl = got[n]
        assert int(visits) == p["visits"], (n, visits, p)
        assert abs(shown_time(incl, unit) - p["incl_s"]) <= tol + 1e-4 * p["incl_s"], \
            ("incl", n, incl, p)
        assert abs(shown_time(excl, unit) - p["excl_s"]) <= tol + 1e-4 * p["excl_s"], \
            ("excl", n, excl, p)
    # every location's bar: its paradigms and the outside, named
    assert len(sm["locations"]) == len(info["locations"]), sm["locations"]
    assert "outside traced regions" in sm["text"], sm["text"]
    # a node of the call tree closed: its descendants' rows not shown
    opened = "Array.from(document.querySelectorAll('.summary[data-trace=\"%d\"] " \
             ".calltree tr[data-path]')).filter(r => r.style.display != 'none').length" % ti
    n = page.js(opened)
    if page.js("(() => { const t = document.querySelector('.summary[data-trace=\"%d\"] "
               ".calltree .tw:not(:empty)'); if (t) t.click(); return !!t; })()" % ti):
        assert page.js(opened) < n, "closing a call tree node hid nothing"
        page.js("document.querySelector('.summary[data-trace=\"%d\"] .calltree .tw:not(:empty)')"
                ".click()" % ti)
        assert page.js(opened) == n, "opening the call tree node again showed other rows"
    # a row hidden: the summary of the others
    loc = info["locations"][0]["loc"]
    page.js("window.weftView.setRow(%d, %d, true)" % (ti, loc))
    a = page.js("window.weftView.summary(%d)" % ti)["answer"]
    assert sorted(l_["loc"] for l_ in a["locations"]) == \
        sorted(l_["loc"] for l_ in info["locations"] if l_["loc"] != loc), a["locations"]
    page.js("window.weftView.setRow(%d, %d, false)" % (ti, loc))
    page.js("window.weftView.summary(%d)" % ti)
    print("summary of trace %d: %d call paths, %d regions as api/summary says%s, in %s" % (
        ti, len(a["callpaths"]), len(a["regions"]),
        " and as weft profile says" if profile else "", unit))


def mouse(page, kind, x, y, buttons=0, modifiers=0):
    ev = {"type": kind, "x": x, "y": y, "modifiers": modifiers}
    if kind != "mouseMoved":
        ev.update(button="left", clickCount=1)
    elif buttons:
        ev.update(button="left", buttons=buttons)
    page.send("Input.dispatchMouseEvent", ev)


def key(page, name, code):
    for kind in ("keyDown", "keyUp"):
        page.send("Input.dispatchKeyEvent", {"type": kind, "key": name,
                                             "windowsVirtualKeyCode": code})


def unit_of(ticks, res):
    s = ticks / res
    return "s" if s >= 1 else "ms" if s >= 1e-3 else "us" if s >= 1e-6 else "ns"


def main():
    chromium, url, outdir = sys.argv[1:4]
    read = [archive_spans(a) for a in sys.argv[4:]]
    archives, messages = [a[:2] for a in read], [a[2] for a in read]
    log = open(os.path.join(outdir, "chromium.log"), "ab")
    b = Browser(chromium, os.path.join(outdir, "profile"), log)
    try:
        run(b, url, archives, messages, outdir, sys.argv[4:])
    finally:
        b.close()


def run(b, url, archives, messages, outdir, anchors):
    target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    sess = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    page = Page(b, sess)
    for domain in ("Page", "Runtime", "Network", "Log"):
        page.send(domain + ".enable")
    page.send("Emulation.setDeviceMetricsOverride", {
        "width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
    nav = page.send("Page.navigate", {"url": url})
    assert not nav.get("errorText"), nav
    b.wait_event("Page.loadEventFired", sess)

    # (a) the whole of every trace, every location
    n = page.js("window.weftView.ready()")
    assert n == len(archives), "ready(): %r traces, not %d" % (n, len(archives))
    infos = page.js("window.weftView.traces()")
    for ti, (spans, (_, res, _)) in enumerate(archives):
        d = check_drawn(page, spans, None, None, "trace %d, whole" % ti, ti)
        assert (d["t0"], d["t1"]) == (infos[ti]["t0"], infos[ti]["t1"]), (d["t0"], d["t1"])
        assert infos[ti]["resolution"] == res, (infos[ti]["resolution"], res)
        assert d["ticks"] and all(t.endswith(" " + unit_of(d["t1"] - d["t0"], res))
                                  for t in d["ticks"]), d["ticks"]
    spans, (_, res, _) = archives[0]
    legend = page.js("Array.from(document.querySelectorAll('.legend-name'), e => e.textContent)")
    assert "outside traced regions" in legend and "user" in legend, legend

    # (b) a few visits of one location, at the depth below its outermost
    loc = sorted(spans)[0]
    inner = sorted(s for s in spans[loc] if s[3] == 1)
    assert len(inner) >= 6, "too few visits at depth 1 of location %d" % loc
    k = len(inner) // 2
    t0 = inner[k][0] - (inner[k][1] - inner[k][0]) // 3
    t1 = inner[k + 2][1] + 7
    d = check_drawn(page, spans, t0, t1, "three visits")
    assert all(t.endswith(" " + unit_of(t1 - t0, res)) for t in d["ticks"]), d["ticks"]
    # and a window narrower than some of the visits and their gaps
    s = inner[k]
    check_drawn(page, spans, s[0] + 3, s[0] + 3 + max(50, (s[1] - s[0]) // 4),
                "inside one visit")
    d = check_drawn(page, spans, t0, t1, "three visits again")

    # (c) a click on the middle visit: its details from the archive
    s = inner[k + 1]
    kids = [c for c in spans[loc] if c[3] == 2 and s[0] <= c[0] and c[1] <= s[1]]
    assert kids, "visit %s has no visits inside it" % (s,)
    excl = (s[1] - s[0]) - sum(c[1] - c[0] for c in kids)
    path = [p[2] for p in sorted(spans[loc], key=lambda p: p[3])
            if p[0] <= s[0] and s[1] <= p[1] and p[3] < s[3]] + [s[2]]
    got = page.js("window.weftView.clickSpan(0, %d, 1, %d)" % (loc, (s[0] + s[1]) // 2))
    want = {"loc": loc, "depth": 1, "name": s[2], "start": s[0], "end": s[1],
            "duration": s[1] - s[0], "inclusive": s[1] - s[0], "exclusive": excl,
            "path": path}
    bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    assert not bad, "api/span's details differ from the archive's (got, want): %s" % bad
    text = page.js("window.weftView.details()")
    for needle in (s[2], "%d ticks" % (s[1] - s[0]), "%d ticks" % excl,
                   "%d ticks" % s[0], " \u203a ".join(path)):
        assert needle in text, "the details panel does not say %r: %r" % (needle, text)
    print("click: %s [%d, %d), exclusive %d ticks, path %s" %
          (s[2], s[0], s[1], excl, " > ".join(path)))
    # outside any traced region: between the location's first and last
    # events, before its first visit or in a gap between its outermost
    # visits; before its first event it had none (not outside)
    outer = sorted(v for v in spans[loc] if v[3] == 0)
    lo = [l_ for l_ in page.js("window.weftView.traces()[0]")["locations"]
          if l_["loc"] == loc][0]
    assert lo["first"] <= outer[0][0] and lo["last"] >= outer[-1][1], (lo, outer[0], outer[-1])
    gaps = [t_ for t_ in [outer[0][0] - 1] + [a[1] for a, b_ in zip(outer, outer[1:])
                                               if b_[0] > a[1]] if t_ >= lo["first"]]
    if gaps:
        o = page.js("window.weftView.clickSpan(0, %d, 0, %d)" % (loc, gaps[0]))
        assert o.get("outside"), o
        text = page.js("window.weftView.details()")
        assert "outside traced regions" in text, text
    if lo["first"] > 0:
        o = page.js("window.weftView.clickSpan(0, %d, 0, %d)" % (loc, lo["first"] - 1))
        assert not o.get("outside"), o
        text = page.js("window.weftView.details()")
        assert "no event of this location then" in text, text

    # (d) hovering the clicked visit names it; the wheel zooms; Home
    box = page.js("(() => { const r = document.querySelector('canvas.timeline')"
                  ".getBoundingClientRect(); return [r.left, r.top, r.width]; })()")
    lay = page.js("(() => { const l = document.querySelector('.labels .loc[data-loc=\"%d\"]');"
                  " return l.offsetTop; })()" % loc)
    x = box[0] + 1 + ((s[0] + s[1]) / 2 - d["t0"]) / (d["t1"] - d["t0"]) * d["px"]
    y = box[1] + 1 + lay + 1 + 12 + 6
    page.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    tip = page.js("document.getElementById('tip').textContent")
    assert s[2] in tip, "the tooltip at the clicked visit says %r" % tip
    print("tooltip:", tip)
    mouse(page, "mousePressed", x, y)
    mouse(page, "mouseReleased", x, y)
    text = page.js("""new Promise((ok, no) => {
        const end = Date.now() + 10000;
        (function poll() {
            const t = window.weftView.details();
            if (t.includes("%d ticks")) ok(t);
            else if (Date.now() > end) no(new Error("no details after a click: " + t));
            else setTimeout(poll, 20);
        })();
    })""" % s[0])
    assert s[2] in text, text
    # the wheel: zoomed in around the pointer (the time under it stays)
    page.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y,
                                           "deltaX": 0, "deltaY": -300})
    z = settled(page)
    w0, w = d["t1"] - d["t0"], z["t1"] - z["t0"]
    assert w < w0 * 0.75, ("wheel", z["t0"], z["t1"], d["t0"], d["t1"])
    xt = lambda v: d["t0"] + (x - box[0] - 1) / d["px"] * w0  # noqa: E731
    assert abs(z["t0"] + (x - box[0] - 1) / z["px"] * w - xt(0)) <= w0 / d["px"] + 1, \
        ("the wheel did not zoom around the pointer", z["t0"], z["t1"])
    # a drag from column 100 to 400: that range
    mouse(page, "mousePressed", box[0] + 101, y)
    mouse(page, "mouseMoved", box[0] + 250, y, buttons=1)
    mouse(page, "mouseReleased", box[0] + 401, y)
    g = settled(page)
    want0, want1 = z["t0"] + 100 / z["px"] * w, z["t0"] + 400 / z["px"] * w
    assert abs(g["t0"] - want0) <= 2 and abs(g["t1"] - want1) <= 2, \
        ("drag", g["t0"], g["t1"], want0, want1)
    # shift-drag 200 pixels to the left: 200 pixels later, as wide
    w = g["t1"] - g["t0"]
    mouse(page, "mousePressed", box[0] + 601, y, modifiers=8)
    mouse(page, "mouseMoved", box[0] + 501, y, buttons=1, modifiers=8)
    mouse(page, "mouseReleased", box[0] + 401, y, modifiers=8)
    p = settled(page)
    assert p["t1"] - p["t0"] == w and abs(p["t0"] - (g["t0"] + 200 / g["px"] * w)) <= 1, \
        ("shift-drag", p["t0"], p["t1"], g["t0"], g["t1"])
    # keys: arrow left (a fifth back), - (twice as wide), + (half)
    key(page, "ArrowLeft", 37)
    k = settled(page)
    assert k["t1"] - k["t0"] == w and abs(k["t0"] - (p["t0"] - w / 5)) <= 1, ("left", k, p)
    key(page, "-", 189)
    k = settled(page)
    assert abs((k["t1"] - k["t0"]) - 2 * w) <= 2, ("-", k["t0"], k["t1"], w)
    key(page, "+", 187)
    k = settled(page)
    assert abs((k["t1"] - k["t0"]) - w) <= 2, ("+", k["t0"], k["t1"], w)
    print("wheel, drag, shift-drag, arrow, - and + keys: windows as expected")
    key(page, "Home", 36)
    settled(page)
    check_drawn(page, spans, None, None, "after Home")
    for ti, (sp, _) in enumerate(archives[1:], 1):
        check_drawn(page, sp, None, None, "trace %d, still whole" % ti, ti)

    # (f) the filters
    paradigms = [page.js("window.weftView.families(%d)" % ti) for ti in range(len(archives))]
    check_filters(page, archives, paradigms)
    # (g) messages, in the traces that have any
    for ti, msgs in enumerate(messages):
        if msgs or infos[ti].get("messages"):
            check_messages(page, ti, archives[ti], msgs, infos[ti]["comms"])
    # (j) marks, in the traces that have any
    for ti, anchor in enumerate(anchors):
        if any(infos[ti].get("marks", {}).values()):
            check_marks(page, ti, anchor)
    # (h) search and (i) summary, once the server answers them
    searched = summed = False
    if api_status(url, "api/find?trace=0&q=x") == 404:
        print("SKIP: search: weft view does not answer api/find (404)")
    else:
        check_search(page, 0, spans, "ComP")
        for ti, (sp, _) in enumerate(archives[1:], 1):
            if any(s_[2].startswith("MPI_") for v in sp.values() for s_ in v):
                check_search(page, ti, sp, "mpi_s")
        searched = True
    if api_status(url, "api/summary?trace=0") == 404:
        print("SKIP: summary: weft view does not answer api/summary (404)")
    else:
        for ti, (_, (_, res_, _)) in enumerate(archives):
            prof = os.path.join(outdir, "profile.%d.json" % ti)
            if os.path.exists(prof):
                with open(prof) as f:
                    check_summary(page, ti, res_, json.load(f))
            else:
                check_summary(page, ti, res_, None)
        summed = True

    # for the picture: the three visits, the middle one's details, a
    # search's visits outlined, the summary
    page.js("window.weftView.setWindow(0, %d, %d)" % (t0, t1))
    if searched:
        page.js("window.weftView.search(0, 'comp')")
    page.js("window.weftView.clickSpan(0, %d, 1, %d)" % (loc, (s[0] + s[1]) // 2))
    if summed:
        page.js("window.weftView.summary(0)")
    page.js("window.scrollTo(0, 0)")
    page.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 5, "y": 5})

    # (e) nothing fetched elsewhere, nothing thrown, a picture
    base = url.rsplit("/", 1)[0] + "/"
    # (Chromium itself asks for /favicon.ico: not the page's doing)
    urls = [e["params"]["request"]["url"] for e in b.events
            if e["method"] == "Network.requestWillBeSent"]
    away = [u for u in urls if not u.startswith(base) and not u.endswith("/favicon.ico")]
    assert not away, "the page fetched other addresses: %s" % away
    thrown = [e["params"] for e in b.events if e["method"] == "Runtime.exceptionThrown"]
    assert not thrown, "the page threw: %s" % thrown
    # (api/span's 404 for the click outside any region is expected, and
    # api/find's and api/summary's while weft view has none)
    errors = [e["params"]["entry"] for e in b.events
              if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"]
    errors = [e["text"] + " " + e.get("url", "") for e in errors
              if not re.search(r"/favicon\.ico$|/api/span\?", e.get("url", "")) and
              not (re.search(r"/api/find\?", e.get("url", "")) and not searched) and
              not (re.search(r"/api/summary\?", e.get("url", "")) and not summed)]
    assert not errors, "the page logged errors: %s" % errors
    height = page.js("document.documentElement.scrollHeight")
    shot = page.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": 1400, "height": min(height, 4000), "scale": 1}})
    png = os.path.join(outdir, "view.png")
    with open(png, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    png_check.check(png)
    print("screenshot: %s, %d requests, all to the page's address" % (png, len(urls)))


if __name__ == "__main__":
    # timeout(1)'s SIGTERM: Chromium is closed on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("view_cdp.py: terminated"))
    try:
        main()
    except (AssertionError, CDPError, OSError) as e:
        sys.exit("view_cdp.py: %s" % e)

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
      saying them; a click outside any region says so;
  (d) hovering a visit names it, clicking it shows its details; the
      wheel zooms around the pointer, a drag zooms into its range,
      shift-drag and the arrow keys pan, + and - zoom, Home shows the
      whole trace again;
  (e) the page fetched nothing but its own address, threw nothing, and
      a screenshot (OUTDIR/view.png) is not blank (tests/png_check.py).

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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import png_check  # noqa: E402

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


def archive_spans(anchor):
    """{location: [(start, end, region name, depth)]} in ticks since the
    clock offset, and the clock (offset, resolution, length)."""
    defs = subprocess.run(["otf2-print", "-G", anchor], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    m = re.search(r"Ticks per Seconds: (\d+), Global Offset: (\d+), Length: (\d+)", defs)
    if not m:
        raise SystemExit("no CLOCK_PROPERTIES in otf2-print -G " + anchor)
    res, offset, length = (int(x) for x in m.groups())
    stacks, spans = {}, {}
    out = subprocess.run(["otf2-print", anchor], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    for line in out.splitlines():
        e = EVENT.match(line)
        if not e:
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
    return spans, (offset, res, length)


def expected(spans, t0, t1, px):
    """The visits api/window shows exactly in [t0, t1) on px columns."""
    return {loc: sorted([s, e, n, d] for s, e, n, d in v
                        if s < t1 and e > t0 and (e - s) * px >= (t1 - t0))
            for loc, v in spans.items()}


def check_drawn(page, spans, t0, t1, what, ti=0):
    """Sets the window of trace ti (unless t0 is None: the one shown) and
    checks the page draws exactly the archive's visits there. Returns
    drawn(ti)."""
    if t0 is not None:
        page.js("window.weftView.setWindow(%d, %d, %d)" % (ti, t0, t1))
    d = page.js("window.weftView.drawn(%d)" % ti)
    assert not d["pending"], "%s: a window is still being fetched" % what
    if t0 is not None:
        assert (d["t0"], d["t1"]) == (t0, t1), (what, d["t0"], d["t1"], t0, t1)
    want = expected(spans, d["t0"], d["t1"], d["px"])
    rows = {r["loc"]: r for r in d["rows"]}
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
    archives = [archive_spans(a) for a in sys.argv[4:]]
    log = open(os.path.join(outdir, "chromium.log"), "ab")
    b = Browser(chromium, os.path.join(outdir, "profile"), log)
    try:
        run(b, url, archives, outdir)
    finally:
        b.close()


def run(b, url, archives, outdir):
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
    # outside any traced region: before the location's first visit, or
    # in a gap between its outermost visits
    outer = sorted(v for v in spans[loc] if v[3] == 0)
    gap = outer[0][0] - 1 if outer[0][0] > 0 else next(
        (a[1] for a, b_ in zip(outer, outer[1:]) if b_[0] > a[1]), None)
    if gap is not None:
        o = page.js("window.weftView.clickSpan(0, %d, 0, %d)" % (loc, gap))
        assert o.get("outside"), o
        text = page.js("window.weftView.details()")
        assert "outside traced regions" in text, text

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
    # for the picture: the three visits, the middle one's details
    page.js("window.weftView.setWindow(0, %d, %d)" % (t0, t1))
    page.js("window.weftView.clickSpan(0, %d, 1, %d)" % (loc, (s[0] + s[1]) // 2))
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
    # (api/span's 404 for the click outside any region is expected)
    errors = [e["params"]["entry"] for e in b.events
              if e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"]
    errors = [e["text"] + " " + e.get("url", "") for e in errors
              if not re.search(r"/favicon\.ico$|/api/span\?", e.get("url", ""))]
    assert not errors, "the page logged errors: %s" % errors
    shot = page.send("Page.captureScreenshot", {"format": "png"})
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

#!/usr/bin/python3
"""Checks the OTF2 archive of tests/openmp/constructs.c traced by
libweft-openmp against the program's report, thread by thread.

usage: check_constructs.py [--runtime gnu|llvm] ARCHIVE/traces.otf2 REPORT.json

REPORT.json is the program's: per thread number (0..team-1) the cancel
directives, cancellation points (and how many it got past), taskyields,
ordered depend(sink) and depend(source) and scopes it met; teams, the
host teams' bodies run. check_openmp.py --model checks the same archive
against the recorder's model (nesting, teams, tasks); this checks what
the model does not know, read with the python module's reader:
  - per thread number (a location's number in the team it is in, by its
    team's Comm group, at the Enter), the Enters of
      "!$omp cancel"                 gnu: the cancel directives met;
                                     llvm: the same (each one cancels,
                                     and libomp tells each activation)
      "!$omp cancellation point"     gnu: the cancellation points met;
                                     llvm: those that found their region
                                     cancelled (met - got past), all
                                     libomp tells
      "!$omp taskyield"              gnu: the taskyields met; llvm: none
                                     (libomp 14 tells no taskyield)
      "!$omp ordered depend(sink)"   the depend(sink) met
      "!$omp ordered depend(source)" the depend(source) met
      "!$omp scope"                  the scopes met (llvm: none, clang
                                     14 has no scope)
    and none outside any team;
  - each lies directly in the region it binds to: a cancel or
    cancellation point in "!$omp for" or "!$omp parallel", a taskyield
    in "!$omp task", a depend(sink) or depend(source) in "!$omp for", a
    scope in "!$omp parallel"; gnu: each named with its source line
    (" @constructs.c:LINE"); llvm: a depend(sink) or depend(source) an
    instant (libomp tells a moment: Enter and Leave at one time);
  - "!$omp teams": as many Enters as team bodies ran, each outside any
    region, each holding directly one ThreadFork; gnu: the team's
    parallel region, of the program's team size, all on one location
    (libgomp runs the teams one after another on the encountering
    thread); llvm: libomp's team of one thread, the team's parallel
    region nested in it, one teams region per location (libomp's league,
    a thread per team).
Prints a JSON summary on success; exits 1 with one problem per line.
"""
import collections
import json
import re
import sys

import otf2

NAME_RE = re.compile(r"^(?P<base>.*?)(?: @(?P<file>[^@]+):(?P<line>\d+))?$")
CANCEL = "!$omp cancel"
POINT = "!$omp cancellation point"
YIELD = "!$omp taskyield"
SINK = "!$omp ordered depend(sink)"
SOURCE = "!$omp ordered depend(source)"
SCOPE = "!$omp scope"
TEAMS = "!$omp teams"
FOR = "!$omp for"
PARALLEL = "!$omp parallel"
TASKS = ("!$omp task", "!$omp task untied")
# construct -> the regions it must lie directly in
PARENTS = {CANCEL: (FOR, PARALLEL), POINT: (FOR, PARALLEL), YIELD: TASKS,
           SINK: (FOR,), SOURCE: (FOR,), SCOPE: (PARALLEL,)}
# runtime -> construct -> the report's counts (summed; "-key": subtracted)
COUNTS = {
    "gnu": {CANCEL: ("cancel",), POINT: ("cancellation_point",),
            YIELD: ("taskyield",), SINK: ("doacross_wait",),
            SOURCE: ("doacross_post",), SCOPE: ("scope",)},
    "llvm": {CANCEL: ("cancel",),
             POINT: ("cancellation_point", "-cancellation_passed"),
             YIELD: (), SINK: ("doacross_wait",),
             SOURCE: ("doacross_post",), SCOPE: ()},
}
SOURCE_FILE = "constructs.c"


class Checker:
    def __init__(self, report, runtime):
        self.report = report
        self.runtime = runtime
        self.problems = []
        self.stacks = collections.defaultdict(list)   # loc -> [(base, ev)]
        self.teams = collections.defaultdict(list)    # loc -> [number]
        self.enters = collections.Counter()           # (base, thread) -> n
        self.teams_locs = collections.Counter()       # loc -> teams Enters
        self.teams_forks = collections.Counter()      # loc -> forks in them
        self.teams_asked = []       # threads those forks asked for

    def problem(self, msg):
        if len(self.problems) < 100:
            self.problems.append(msg)

    def event(self, index, loc, ev):
        kind = type(ev).__name__
        where = "%s, event %d (%s at %d)" % (loc.name, index, kind, ev.time)
        st = self.stacks[loc]
        if kind == "ThreadTeamBegin":
            members = ev.thread_team.group.members
            self.teams[loc].append(members.index(loc) if loc in members
                                   else None)
        elif kind == "ThreadTeamEnd":
            if self.teams[loc]:
                self.teams[loc].pop()
        elif kind == "ThreadFork":
            if st and st[-1][0] == TEAMS:
                self.teams_forks[loc] += 1
                self.teams_asked.append(ev.number_of_requested_threads)
        elif kind == "Enter":
            self.enter(loc, ev, where)
        elif kind == "Leave":
            if not st or st[-1][1].region != ev.region:
                self.problem("%s: leaves %s, not the open region" %
                             (where, ev.region.name))
                return
            base, enter = st.pop()
            if self.runtime == "llvm" and base in (SINK, SOURCE) and \
                    enter.time != ev.time:
                self.problem("%s: %s left %d ns after its Enter, not at "
                             "once" % (where, base, ev.time - enter.time))

    def enter(self, loc, ev, where):
        st = self.stacks[loc]
        m = NAME_RE.match(ev.region.name)
        base = m.group("base")
        parent = st[-1][0] if st else None
        st.append((base, ev))
        if base == TEAMS:
            self.teams_locs[loc] += 1
            if parent is not None:
                self.problem("%s: %s inside %s, not outermost" %
                             (where, ev.region.name, parent))
            return
        if base not in PARENTS:
            return
        if parent not in PARENTS[base]:
            self.problem("%s: %s directly in %s, not in %s" %
                         (where, ev.region.name, parent,
                          " or ".join(PARENTS[base])))
        if self.runtime == "gnu" and m.group("file") != SOURCE_FILE:
            self.problem("%s: %s is not named with its line in %s" %
                         (where, ev.region.name, SOURCE_FILE))
        thread = self.teams[loc][-1] if self.teams[loc] else None
        if thread is None:
            self.problem("%s: %s outside any team" % (where, ev.region.name))
        self.enters[(base, thread)] += 1

    def finish(self):
        report, team = self.report, self.report["team"]
        for loc, st in self.stacks.items():
            if st:
                self.problem("%s: regions never left: %s" %
                             (loc.name, [e.region.name for _, e in st]))
        for base, keys in sorted(COUNTS[self.runtime].items()):
            for t in range(team):
                want = sum(-report[k[1:]][t] if k.startswith("-")
                           else report[k][t] for k in keys)
                got = self.enters[(base, t)]
                if got != want:
                    self.problem("thread %d: %d Enters of %s, the program "
                                 "counted %d (%s)" %
                                 (t, got, base, want,
                                  " ".join(keys) or "libomp tells none"))
        total = sum(self.teams_locs.values())
        if total != report["teams"]:
            self.problem("%d Enters of %s, the program ran %d team bodies" %
                         (total, TEAMS, report["teams"]))
        for loc, n in self.teams_locs.items():
            if self.teams_forks[loc] != n:
                self.problem("%s: %d ThreadFork directly in its %d %s "
                             "regions, not one each" %
                             (loc.name, self.teams_forks[loc], n, TEAMS))
        # gnu: the program's num_threads; llvm: libomp's team of one
        asked = team if self.runtime == "gnu" else 1
        if any(n != asked for n in self.teams_asked):
            self.problem("the ThreadForks directly in %s regions asked for "
                         "%s threads, not %d each" %
                         (TEAMS, self.teams_asked, asked))
        want = 1 if self.runtime == "gnu" else report["teams"]
        if len(self.teams_locs) != want:
            self.problem("%s regions on %d locations, not %d (--runtime %s)"
                         % (TEAMS, len(self.teams_locs), want, self.runtime))

    def summary(self):
        return {"enters": {"%s/%s" % k: n for k, n in
                           sorted(self.enters.items(), key=str)},
                "teams": dict((l.name, n) for l, n in
                              self.teams_locs.items()),
                "teams_forks": self.teams_asked}


def main(argv):
    args, runtime = argv[1:], "gnu"
    if len(args) >= 2 and args[0] == "--runtime":
        runtime, args = args[1], args[2:]
    if runtime not in COUNTS or len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(args[1]) as f:
        report = json.load(f)
    checker = Checker(report, runtime)
    with otf2.reader.open(args[0]) as trace:
        for index, (loc, ev) in enumerate(trace.events):
            checker.event(index, loc, ev)
    checker.finish()
    if checker.problems:
        for p in checker.problems:
            print(p)
        return 1
    print(json.dumps(checker.summary(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

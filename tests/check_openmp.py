#!/usr/bin/python3
"""Checks the OTF2 archive of a program traced by libweft-openmp
(tests/openmp/omptest.c) against the recorder's event model and the
program's report of what it did.

usage: check_openmp.py [--runtime gnu|llvm] ARCHIVE/traces.otf2 REPORT.json
       check_openmp.py [--runtime gnu|llvm] --ranks ARCHIVE/traces.otf2
                       REPORT.json...
       check_openmp.py [--runtime gnu|llvm] --model ARCHIVE/traces.otf2

REPORT.json is omptest's: counts of what the program did (see its
COUNTS), critical_name, the name of its named critical section, and
critical_line and critical_named_line, the source lines of its two
critical constructs.

--runtime: the OpenMP runtime the program ran on, which decides what the
recorder can see of it: gnu (the default), GCC's libgomp, whose entry
points libweft-openmp wraps; llvm, LLVM's libomp, whose OMPT tool it is.
What differs is said below as "gnu:" and "llvm:".

--ranks: the archive of an MPI program whose ranks use OpenMP (a hybrid
program, tests/e2e_openmp_mpi.sh), one REPORT.json per rank, its "rank"
naming it. Each process (the high 32 bits of its locations' ids, its
rank) is checked alone, as a Checker of its own, against its rank's
report, which need not be omptest's: a count it does not list is 0,
critical_name and the critical lines are optional (no named critical
section; llvm: every critical region is the unnamed one's), and a
construct it did not use has no lock id (not one). Every process with
OpenMP events has a report and every report a process. Events of other
paradigms (MPI) are no OpenMP events, wherever they lie.

--model: the archive of a program that reports nothing (a real program,
tests/e2e_lammps.sh), MPI or not: each process checked alone, as with
--ranks, by every check below but the totals against the report (the
last), of which only the task switches remain (two per task created,
two per suspension). Where a check needs the report it goes by the
trace: one lock id per critical section, atomic and ordered the trace
names (llvm: a critical region without a critical name is known by its
lock id alone), and the Comms' sizes are checked when every team got
the threads it asked for (the ThreadTeamBegins are the threads the
ThreadForks asked for).

Regions of paradigm OPENMP are named after their construct ("!$omp for"),
a named critical section's with " (NAME)", optionally followed by
" @FILE:LINE"; the omp lock functions' after the function. Checks, read
with the python module's reader (otf2.reader):
  - every region of an OpenMP construct or omp lock function (by name) is
    of paradigm OPENMP and of its construct's role, and every region of
    paradigm OPENMP is one of them;
  - per location, Enter/Leave nest and every region is left, and no
    event is one weftd wrote to make them nest (weft::nesting: the
    recorder's did not);
  - per location, ThreadFork and ThreadJoin (model OPENMP) pair like
    brackets; right after a ThreadFork the location's next OpenMP event
    is a ThreadTeamBegin, and right after that team's ThreadTeamEnd a
    ThreadJoin; ThreadTeamBegin and ThreadTeamEnd pair with the same
    Comm, a Comm over a COMM_GROUP group of paradigm OPENMP; every other
    member's ThreadTeamBegin and ThreadTeamEnd lie within a fork of that
    Comm, between its ThreadFork and its ThreadJoin (a team ends before
    its encountering thread goes on);
  - a ThreadTeamBegin is directly followed by the Enter of a
    "!$omp parallel" region, whose Leave is directly followed by the
    ThreadTeamEnd and directly preceded by the Leave of its one
    "!$omp implicit barrier" that ends it (the last region directly
    inside it);
  - gnu: an "!$omp implicit barrier" lies directly in a parallel, for,
    sections or scope region, at most one each, the last thing before its
    Leave;
    llvm: directly in a parallel region, where one ends the region (the
    last thing in it: none in a team of one, which libomp does not wait
    for) and the others each end a for, sections or single region,
    following its Leave directly; or directly in a host "!$omp teams"
    region, one at most, the last thing in it (the league's end);
  - a team's Comm lists its members: its group names (through the
    OPENMP COMM_LOCATIONS group) the locations that begin it, each once;
  - Comms per team shape: outermost teams forked by one location with
    one size share a Comm while their threads are the same (a new one
    when they are not), a nested team has a Comm of its own (one fork
    each), and no two shapes share one; where the program's teams got
    the threads they asked for, a Comm's ThreadTeamBegins are the
    threads its forks asked for, and its group's members one team's;
  - ThreadAcquireLock (model OPENMP) happens inside a critical, atomic or
    ordered region (once each, released inside the same region) or a
    omp_set/omp_test lock function's, ThreadReleaseLock inside a
    critical, atomic, ordered or omp_unset function's region; every
    acquisition is released later on its location with the same lock id
    and acquisition order, and per process each lock's acquisition orders
    are distinct and dense (0..n-1); gnu: a failed lock test is an
    omp_test function's region without ThreadAcquireLock; llvm: it is
    not recorded (an omp_test region holds one ThreadAcquireLock);
  - lock ids: one per critical section (unnamed: one), one for atomic, one
    for ordered, one per omp lock object, none shared between them;
    llvm: a critical section's regions are named after its line, the
    named one's maybe after its name too (the runtime's lock is what the
    recorder is given: named when it is the program's variable), a
    region without location is the critical section of its lock id;
    clang does an atomic through libatomic or the runtime: its regions
    are all there or none;
  - explicit tasks, named by (creating thread, generation number), the
    creating thread a number in the task's team, which the team's group
    resolves to a location: a ThreadTaskCreate is the first thing in a
    "!$omp create task" region (one each; llvm: entered and left at its
    time), on the location its creating thread resolves to, in the team
    the location is in (outside any team: a Comm no ThreadTeamBegin
    names, whose group lists the location); a creating thread's
    generation numbers are 1, 2, ... once each;
  - every task created is switched to (ThreadTaskSwitch) once, on one
    location of its process, no earlier than its creation, and completed
    there once; the switch is directly followed by the Enter of a
    "!$omp task" or "!$omp task untied" region, whose Leave is directly
    followed by ThreadTaskComplete of the same task, then a
    ThreadTaskSwitch back to the task the location was running before
    (the innermost it still runs, else its implicit task: its own
    number, generation 0); switches and completes name the task's team; every
    task switched to or completed was created, and a task's region is
    entered or left only so;
  - llvm: an untied task may be suspended where it ran (libomp resumes
    it on any thread of its team): the Leave of its region directly
    followed by a ThreadTaskSwitch back to the task the location was
    running before; and resumed: a ThreadTaskSwitch to it directly
    followed by the Enter of its region again; it completes where it was
    last resumed;
  - the totals of the report: forks, threads requested, team members,
    the Enters of each construct's region, implicit barriers by the
    region they end, acquisitions, failed lock tests, lock objects, tasks
    created, completed and switched to (two switches per task, and two
    per suspension), and the locations with OpenMP events (one per OS
    thread that ran a team's body).

Prints a JSON summary on success (with, to see what a run exercised,
the tasks run on another location than their creator's, the most tasks
one location ran nested, the untied tasks' suspensions and the tasks
resumed on another location than the one that started them); exits 1
with one problem per line.
"""
import collections
import json
import re
import sys

import otf2

MAX_PROBLEMS = 100
Role = otf2.RegionRole
OPENMP = otf2.Paradigm.OPENMP

PARALLEL = "!$omp parallel"
IMPLICIT = "!$omp implicit barrier"
BARRIER = "!$omp barrier"
LOOP = "!$omp for"
SECTIONS = "!$omp sections"
SINGLE = "!$omp single"
CRITICAL = "!$omp critical"
ATOMIC = "!$omp atomic"
TASK = "!$omp task"
UNTIED = "!$omp task untied"
CREATE = "!$omp create task"
TASKLOOP = "!$omp taskloop"
SCOPE = "!$omp scope"
TEAMS = "!$omp teams"
TASKS = (TASK, UNTIED)          # the regions of a task's execution
# construct -> region role
ROLES = {
    PARALLEL: Role.PARALLEL,
    IMPLICIT: Role.IMPLICIT_BARRIER,
    BARRIER: Role.BARRIER,
    LOOP: Role.LOOP,
    SECTIONS: Role.SECTIONS,
    SINGLE: Role.SINGLE,
    CRITICAL: Role.CRITICAL,
    ATOMIC: Role.ATOMIC,
    "!$omp ordered": Role.ORDERED,
    "!$omp taskwait": Role.TASK_WAIT,
    "!$omp taskgroup": Role.TASK_WAIT,
    TASK: Role.TASK,
    UNTIED: Role.TASK_UNTIED,
    CREATE: Role.TASK_CREATE,
    TASKLOOP: Role.LOOP,
    # tests/openmp/constructs.c's (tests/check_constructs.py)
    "!$omp taskyield": Role.TASK_WAIT,
    "!$omp cancel": Role.CODE,
    "!$omp cancellation point": Role.CODE,
    "!$omp ordered depend(source)": Role.ORDERED,
    "!$omp ordered depend(sink)": Role.ORDERED,
    SCOPE: Role.WORKSHARE,
    TEAMS: Role.CODE,
    "omp_set_lock": Role.FUNCTION,
    "omp_unset_lock": Role.FUNCTION,
    "omp_test_lock": Role.FUNCTION,
    "omp_set_nest_lock": Role.FUNCTION,
    "omp_unset_nest_lock": Role.FUNCTION,
    "omp_test_nest_lock": Role.FUNCTION,
}
RUNTIMES = ("gnu", "llvm")
# runtime -> the report's counts (summed; "-key": subtracted) of each
# construct's Enters (critical: by name)
ENTERS = {"gnu": {
    PARALLEL: ("team_begins",),
    BARRIER: ("barrier",),
    LOOP: ("loop",),
    SECTIONS: ("sections",),
    SINGLE: ("single",),
    ATOMIC: ("atomic",),
    "!$omp ordered": ("ordered",),
    "!$omp taskwait": ("taskwait", "taskwait_depend"),
    "!$omp taskgroup": ("taskgroup",),
    TASK: ("task", "taskloop_task"),
    UNTIED: ("task_untied",),
    CREATE: ("task_create", "taskloop_task"),
    TASKLOOP: ("taskloop",),
}}
ENTERS["gnu"].update((f, (f,)) for f in ROLES if f.startswith("omp_"))
# libomp: static loops too; explicit barriers alone; failed tests unseen
ENTERS["llvm"] = dict(ENTERS["gnu"], **{
    BARRIER: ("barrier_explicit",),
    LOOP: ("loop", "loop_static", "loop_combined_static"),
    # a taskloop's own taskgroup (without nogroup); libomp 14 says
    # nothing of a taskwait with depend
    "!$omp taskgroup": ("taskgroup", "taskloop"),
    "!$omp taskwait": ("taskwait",),
    "omp_test_lock": ("omp_test_lock", "-test_lock_failed"),
    "omp_test_nest_lock": ("omp_test_nest_lock", "-test_nest_lock_failed"),
})
# runtime -> the report's count of implicit barriers, by the region they
# end (gnu: lie in; llvm: follow, but for the parallel region's)
IMPLICIT_IN = {
    "gnu": {PARALLEL: ("team_begins",), LOOP: ("loop_barrier",),
            SECTIONS: ("sections_barrier",), SCOPE: ("scope_barrier",)},
    "llvm": {PARALLEL: ("team_begins",),
             LOOP: ("loop_barrier", "loop_static_barrier"),
             SECTIONS: ("sections_barrier",),
             SINGLE: ("single_barrier",)},
}
# runtime -> the report's count of failed lock tests the trace shows
FAILED_TESTS = {"gnu": ("test_failed",), "llvm": ()}
# constructs holding their lock from ThreadAcquireLock to ThreadReleaseLock
BLOCKS = (CRITICAL, ATOMIC, "!$omp ordered")
ACQUIRE_IN = BLOCKS + ("omp_set_lock", "omp_test_lock",
                       "omp_set_nest_lock", "omp_test_nest_lock")
RELEASE_IN = BLOCKS + ("omp_unset_lock", "omp_unset_nest_lock")
OMP_LOCK = "omp lock"       # what an omp lock function's lock id is of
# the counts a report has (--ranks: those it does not list are 0)
COUNT_KEYS = ({k.lstrip("-") for rt in RUNTIMES
               for table in (ENTERS[rt], IMPLICIT_IN[rt])
               for keys in table.values() for k in keys} |
              {"critical", "critical_named", "lock_acquired", "test_failed",
               "lock_objects", "forks", "requested_threads", "team_begins",
               "threads"})
NESTING = "weft::nesting"   # marks the Enters and Leaves weftd added
NAME_RE = re.compile(r"^(?P<base>.*?)(?: @(?P<file>[^@]+):(?P<line>\d+))?$")
CRITICAL_RE = re.compile(r"^!\$omp critical \((?P<name>[^()]+)\)$")
TEAM_EVENTS = ("ThreadFork", "ThreadJoin", "ThreadTeamBegin",
               "ThreadTeamEnd")
LOCK_EVENTS = ("ThreadAcquireLock", "ThreadReleaseLock")
TASK_EVENTS = ("ThreadTaskCreate", "ThreadTaskSwitch", "ThreadTaskComplete")



def construct_of(name):
    """(construct, critical name or None) of a region name; construct None
    when the name is no OpenMP construct's or omp lock function's."""
    base = NAME_RE.match(name).group("base")
    m = CRITICAL_RE.match(base)
    if m:
        return CRITICAL, m.group("name")
    if base in ROLES:
        return base, None
    return None, None


def line_of(name):
    """The source line a region name gives, or None."""
    line = NAME_RE.match(name).group("line")
    return int(line) if line else None


def label(construct, cname):
    return "%s (%s)" % (construct, cname) if cname else construct


def named_critical(report):
    """The label of the report's named critical section; None when it
    names none (--ranks)."""
    name = report.get("critical_name")
    return label(CRITICAL, name) if name else None


def rank_report(report):
    """A --ranks report with the counts it does not list, as 0."""
    full = dict.fromkeys(COUNT_KEYS, 0)
    full.update(report)
    return full


def count_of(report, keys):
    """The report's count that keys say (ENTERS), and how it is made; a
    count the report does not list is 0 (a construct it does not meet)."""
    total, terms = 0, []
    for k in keys:
        sign = -1 if k.startswith("-") else 1
        total += sign * report.get(k.lstrip("-"), 0)
        terms.append(("- " if sign < 0 else "+ " if terms else "") +
                     k.lstrip("-"))
    return total, " ".join(terms) or "none"


def task_name(key):
    """A task's key (creating location, generation), readable."""
    return "task (%s, generation %d)" % (
        key[0].name if key[0] is not None else "unresolved thread", key[1])


# llvm: the constructs an implicit barrier may follow
WORKSHARES = (LOOP, SECTIONS, SINGLE)
# llvm: a critical region without location, its critical section known by
# its lock id only (Checker.finish_locks)
UNPLACED = "?"


class Frame:
    """A region a location is in."""

    def __init__(self, region, construct, cname, time):
        self.region = region
        self.construct = construct  # None: no OpenMP construct's
        self.cname = cname          # a critical section's name
        self.time = time            # of its Enter
        self.implicit = 0           # implicit barriers directly in it
        # llvm, a parallel region: per implicit barrier directly in it, the
        # construct whose Leave it follows directly, or None
        self.barriers = []
        self.acquired = []          # (lock id, order) acquired in it
        self.released = []          # (lock id, order) released in it
        self.created = 0            # ThreadTaskCreate directly in it
        self.create_time = None     # the time of that ThreadTaskCreate
        self.task = None            # the key of the task it runs


class Team:
    """A team a location is in (from its ThreadTeamBegin), or a fork of
    its own: its team to begin, or ended and its join to come."""

    def __init__(self, fork=None, comm=None, begin=None):
        self.fork = fork            # the ThreadFork, if this location forked
        self.comm = comm            # None: forked, ThreadTeamBegin to come
        self.begin = begin          # not forked here: its ThreadTeamBegin's
        self.ended = False          # ThreadTeamEnd seen, ThreadJoin to come


class Task:
    """An explicit task: where its events are, as (location, time,
    team), one per event seen."""

    def __init__(self):
        self.creates = []
        self.switches = []          # switches to it that start it
        self.completes = []
        self.suspends = []          # llvm: switches away from it, untied
        self.resumes = []           # llvm: switches to it that resume it


class Checker:
    """The archive's events, one at a time (event()), then the totals
    against the report (finish()); problems in self.problems."""

    def __init__(self, regions, report, runtime="gnu", sparse=False,
                 model=False):
        self.problems = []
        self.report = report
        self.model = model          # --model: no report, no totals
        self.runtime = runtime
        self.llvm = runtime == "llvm"
        self.implicit_table = IMPLICIT_IN[runtime]
        # --ranks: constructs the report counts 0 times have no lock id
        self.sparse = sparse
        self.constructs = {}                            # region -> (c, name)
        self.kinds = collections.Counter()
        self.enters = collections.Counter()             # label -> Enters
        self.implicit_in = collections.Counter()        # construct -> n
        self.acquired_in = collections.Counter()        # label -> n
        self.failed_tests = 0
        self.forks = self.requested = self.team_begins = 0
        self.stacks = collections.defaultdict(list)     # loc -> [Frame]
        self.teams = collections.defaultdict(list)      # loc -> [Team]
        self.prev = {}                                  # loc -> (kind, c)
        # loc -> (kind or tuple of them, construct or tuple of them,
        # OpenMP events only?, why): what the location's next event must be
        self.want = {}
        self.held = collections.defaultdict(list)       # loc -> [(id, ord)]
        self.orders = collections.defaultdict(list)     # (group, id) -> ords
        self.lock_of = collections.defaultdict(set)     # (group, id) -> what
        self.ids_of = collections.defaultdict(set)      # what -> ids
        # llvm: (group, id) -> critical regions without location left
        self.unplaced = collections.Counter()
        self.comm_shapes = collections.defaultdict(set)  # comm -> shapes
        self.comm_forks = collections.Counter()         # comm -> forks
        self.comm_asked = collections.Counter()         # comm -> threads
        self.comm_begins = collections.Counter()        # comm -> begins
        # comm -> [(ThreadFork time, ThreadJoin time)]
        self.fork_spans = collections.defaultdict(list)
        # comm -> [(loc, ThreadTeamBegin time, ThreadTeamEnd time)] of the
        # members that did not fork it
        self.member_spans = collections.defaultdict(list)
        self.nesting = collections.defaultdict(list)    # loc -> [where]
        self.locations = set()                          # with OpenMP events
        self.tasks = collections.defaultdict(Task)      # key -> Task
        self.running = collections.defaultdict(list)    # loc -> [key]
        self.gens = collections.defaultdict(list)       # loc -> gens
        self.team_locs = collections.defaultdict(list)  # comm -> begins
        self.unresolved = 0         # tasks whose creating thread is not
        self.outside_teams = set()  # Comms of tasks created outside teams
        self.started = {}           # loc -> task switched to, Enter to come
        self.resuming = {}          # llvm: loc -> task resumed, Enter to come
        self.leaving = {}           # loc -> task left, Complete to come
        self.completed = {}         # loc -> (task, team) completed last
        self.untied = set()         # tasks of an untied task's region
        self.suspended = {}         # llvm: task -> where it was suspended
        self.deepest = 0            # tasks one location ran at once
        for region in regions:
            self.define(region)

    def problem(self, msg):
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(msg)

    def define(self, region):
        construct, cname = construct_of(region.name)
        if construct == CRITICAL and self.llvm:
            cname = self.critical_of(region.name, cname)
        self.constructs[region] = (construct, cname)
        if construct is None:
            if region.paradigm == OPENMP:
                self.problem("region %r of paradigm OPENMP is no OpenMP "
                             "construct or omp lock function" % region.name)
            return
        if region.paradigm != OPENMP:
            self.problem("region %r: paradigm %s, not OPENMP" %
                         (region.name, region.paradigm))
        if region.region_role != ROLES[construct]:
            self.problem("region %r: role %s, not %s" %
                         (region.name, region.region_role, ROLES[construct]))

    def critical_of(self, name, cname):
        """llvm: the name of the critical section of a critical region
        (None: the unnamed one; UNPLACED: known by its lock id only), from
        its name or, as libomp gives the runtime's lock, its line."""
        if cname:
            return cname
        line = line_of(name)
        if line is None or self.model:
            return UNPLACED
        lines = {self.report.get("critical_line"):
                 None, self.report.get("critical_named_line"):
                 self.report.get("critical_name")}
        lines.pop(None, None)
        if not lines:       # (--ranks) the unnamed one alone
            return None
        if line not in lines:
            self.problem("region %r: the program's critical constructs are "
                         "at lines %s" % (name, sorted(lines)))
            return None
        return lines[line]

    def event(self, index, loc, ev):
        kind = type(ev).__name__
        self.kinds[kind] += 1
        construct = cname = None
        if kind in ("Enter", "Leave"):
            if ev.region not in self.constructs:
                self.define(ev.region)
            construct, cname = self.constructs[ev.region]
        omp = (construct is not None or kind in TEAM_EVENTS or
               kind in TASK_EVENTS or
               (kind in LOCK_EVENTS and ev.model == OPENMP))
        if omp:
            self.locations.add(loc)
        self.where = "%s (%s), event %d (%s%s at %d)" % (
            loc.name, loc.group.name, index, kind,
            " " + ev.region.name if kind in ("Enter", "Leave") else "",
            ev.time)
        if ev.attributes and any(a.name == NESTING for a in ev.attributes):
            self.nesting[loc].append(self.where)
        self.expected(loc, kind, construct, omp)
        handler = getattr(self, "on_" + kind, None)
        if handler and (kind not in LOCK_EVENTS or ev.model == OPENMP):
            handler(loc, ev, construct, cname)
        self.prev[loc] = (kind, construct)

    def expected(self, loc, kind, construct, omp):
        """Checks the event against what the location's previous one said
        must come next."""
        if loc not in self.want:
            return
        want_kind, want_construct, omp_only, why = self.want.pop(loc)
        if (kind in want_kind if isinstance(want_kind, tuple)
                else kind == want_kind) and (
                construct in want_construct
                if isinstance(want_construct, tuple)
                else construct == want_construct):
            return
        if omp_only and not omp:
            self.want[loc] = (want_kind, want_construct, omp_only, why)
            return
        self.problem("%s, where %s" % (self.where, why))

    def on_Enter(self, loc, ev, construct, cname):
        st = self.stacks[loc]
        parent = st[-1] if st else None
        frame = Frame(ev.region, construct, cname, ev.time)
        st.append(frame)
        if construct == CREATE:
            self.want[loc] = ("ThreadTaskCreate", None, False,
                              "a ThreadTaskCreate must come first in %s" %
                              ev.region.name)
        elif construct in TASKS:
            frame.task = self.started.pop(loc, None)
            if self.prev.get(loc, (None,))[0] != "ThreadTaskSwitch" or \
                    frame.task is None:
                self.problem("%s: entered without a ThreadTaskSwitch to its "
                             "task right before" % self.where)
            if construct == UNTIED and frame.task is not None:
                self.untied.add(frame.task)
            if frame.task is not None and \
                    self.resuming.pop(loc, None) == frame.task:
                if construct != UNTIED:
                    self.problem("%s: %s resumed, which is no untied task's"
                                 % (self.where, task_name(frame.task)))
                return      # entered again: not counted
        if construct == PARALLEL:
            if self.prev.get(loc, (None,))[0] != "ThreadTeamBegin":
                self.problem("%s: entered outside a ThreadTeamBegin" %
                             self.where)
            self.enters[PARALLEL] += 1
        elif construct == IMPLICIT:
            self.enter_implicit(loc, parent)
        elif construct is not None and cname != UNPLACED:
            self.enters[label(construct, cname)] += 1

    def enter_implicit(self, loc, parent):
        """An implicit barrier entered directly in parent (a Frame, or
        None)."""
        up = parent.construct if parent else None
        if self.llvm and up == TEAMS:   # the league's, at its end
            parent.implicit += 1
            if parent.implicit > 1:
                self.problem("%s: a second one in %s" %
                             (self.where, parent.region.name))
            return
        if self.llvm:
            if up != PARALLEL:
                self.problem("%s: directly in %s, not in a parallel region" %
                             (self.where, parent.region.name
                              if parent else "no region"))
                return
            prev = self.prev.get(loc, (None, None))
            parent.barriers.append(
                prev[1] if prev[0] == "Leave" and prev[1] in WORKSHARES
                else None)
            return
        if up not in self.implicit_table:
            self.problem("%s: directly in %s, not in a parallel, for, "
                         "sections or scope region" % (self.where,
                                              parent.region.name
                                              if parent else "no region"))
            return
        parent.implicit += 1
        self.implicit_in[up] += 1
        if parent.implicit > 1:
            self.problem("%s: a second one in %s" %
                         (self.where, parent.region.name))

    def on_Leave(self, loc, ev, construct, cname):
        st = self.stacks[loc]
        if not st or st[-1].region != ev.region:
            self.problem("%s: does not close the open region %s" %
                         (self.where, st[-1].region.name if st else "(none)"))
            return
        frame = st.pop()
        if (construct in self.implicit_table or construct == TEAMS) and \
                frame.implicit and self.prev.get(loc) != ("Leave", IMPLICIT):
            self.problem("%s: left after something else than its %s" %
                         (self.where, IMPLICIT))
        if construct == PARALLEL:
            self.leave_parallel(loc, ev, frame)
            self.want[loc] = ("ThreadTeamEnd", None, False,
                              "a ThreadTeamEnd must follow the Leave of "
                              "%s" % ev.region.name)
        elif construct in TASKS and frame.task is not None:
            self.leaving[loc] = frame.task
            if self.llvm and construct == UNTIED:
                self.want[loc] = (("ThreadTaskComplete", "ThreadTaskSwitch"),
                                  None, False,
                                  "the ThreadTaskComplete of %s, or the "
                                  "ThreadTaskSwitch that suspends it, must "
                                  "follow the Leave of %s" %
                                  (task_name(frame.task), ev.region.name))
            else:
                self.want[loc] = ("ThreadTaskComplete", None, False,
                                  "the ThreadTaskComplete of %s must follow "
                                  "the Leave of %s" % (task_name(frame.task),
                                                       ev.region.name))
        elif construct == CREATE and self.llvm:
            if not frame.time == frame.create_time == ev.time:
                self.problem("%s: entered at %d, its ThreadTaskCreate at %s, "
                             "not all at once" % (self.where, frame.time,
                                                  frame.create_time))
        elif construct in BLOCKS:
            if len(frame.acquired) != 1 or frame.released != frame.acquired:
                self.problem("%s: acquired %s and released %s in it, not "
                             "one lock once" % (self.where, frame.acquired,
                                                frame.released))
            elif cname == UNPLACED:
                self.unplaced[(loc.group, frame.acquired[0][0])] += 1
        elif construct in ("omp_set_lock", "omp_set_nest_lock"):
            if len(frame.acquired) != 1:
                self.problem("%s: %d ThreadAcquireLock in it, not one" %
                             (self.where, len(frame.acquired)))
        elif construct in ("omp_test_lock", "omp_test_nest_lock"):
            if len(frame.acquired) > 1:
                self.problem("%s: %d ThreadAcquireLock in it" %
                             (self.where, len(frame.acquired)))
            self.failed_tests += not frame.acquired
        elif construct in ("omp_unset_lock", "omp_unset_nest_lock"):
            if len(frame.released) != 1:
                self.problem("%s: %d ThreadReleaseLock in it, not one" %
                             (self.where, len(frame.released)))

    def leave_parallel(self, loc, ev, frame):
        """The implicit barriers of a parallel region left (frame)."""
        if not self.llvm:
            if frame.implicit != 1:
                self.problem("%s: holds %d %s directly, not one" %
                             (self.where, frame.implicit, IMPLICIT))
            return
        others = frame.barriers[:-1]
        teams = [t.comm for t in self.teams[loc] if t.comm is not None]
        if frame.barriers and self.prev.get(loc) == ("Leave", IMPLICIT):
            self.implicit_in[PARALLEL] += 1
        elif not frame.barriers and teams and \
                len(teams[-1].group.members) == 1:
            return      # a team of one: libomp waits for no one
        else:
            self.problem("%s: left after something else than its %s" %
                         (self.where, IMPLICIT))
            others = frame.barriers
        for after in others:
            if after is None:
                self.problem("%s: holds a %s that neither ends it nor "
                             "follows the Leave of a for, sections or "
                             "single region" % (self.where, IMPLICIT))
            else:
                self.implicit_in[after] += 1

    def on_ThreadFork(self, loc, ev, construct, cname):
        if ev.model != OPENMP:
            self.problem("%s: model %s, not OPENMP" % (self.where, ev.model))
        self.forks += 1
        self.requested += ev.number_of_requested_threads
        self.teams[loc].append(Team(fork=ev))
        self.want[loc] = ("ThreadTeamBegin", None, True,
                          "the ThreadTeamBegin of the team it forked must "
                          "come first")

    def on_ThreadJoin(self, loc, ev, construct, cname):
        if ev.model != OPENMP:
            self.problem("%s: model %s, not OPENMP" % (self.where, ev.model))
        ts = self.teams[loc]
        if not ts or ts[-1].fork is None or not ts[-1].ended:
            self.problem("%s: no ThreadFork whose team has ended to join" %
                         self.where)
            return
        team = ts.pop()
        self.fork_spans[team.comm].append((team.fork.time, ev.time))

    def on_ThreadTeamBegin(self, loc, ev, construct, cname):
        comm = ev.thread_team
        group = comm.group
        self.team_begins += 1
        self.comm_begins[comm] += 1
        if group.group_type != otf2.GroupType.COMM_GROUP or \
                group.paradigm != OPENMP:
            self.problem("%s: team %s's group %s is of type %s, paradigm "
                         "%s, not COMM_GROUP, OPENMP" %
                         (self.where, comm.name, group.name,
                          group.group_type, group.paradigm))
        elif loc not in group.members:
            self.problem("%s: team %s's group lists %s, not this location" %
                         (self.where, comm.name,
                          [m.name for m in group.members][:8]))
        self.team_locs[comm].append(loc)
        ts = self.teams[loc]
        # the team the location is in: the new team's parent
        outer = [t.comm for t in ts if t.comm is not None]
        parent = outer[-1] if outer else None
        if ts and ts[-1].fork is not None and ts[-1].comm is None:
            ts[-1].comm = comm
            n = ts[-1].fork.number_of_requested_threads
            # outermost: one Comm per creator and size; nested: per fork
            shape = (loc, None, n) if parent is None else \
                (loc, parent, n, self.forks)
            self.comm_forks[comm] += 1
            self.comm_asked[comm] += n
            self.comm_shapes[comm].add(shape)
        else:
            ts.append(Team(comm=comm, begin=ev.time))
        self.want[loc] = ("Enter", PARALLEL, False,
                          "the Enter of a %s region must follow "
                          "ThreadTeamBegin" % PARALLEL)

    def on_ThreadTeamEnd(self, loc, ev, construct, cname):
        ts = self.teams[loc]
        if self.prev.get(loc) != ("Leave", PARALLEL):
            self.problem("%s: not right after the Leave of a %s region" %
                         (self.where, PARALLEL))
        if not ts or ts[-1].comm is None or ts[-1].ended:
            self.problem("%s: no team to end" % self.where)
        elif ts[-1].comm != ev.thread_team:
            self.problem("%s: ends team %s, the location is in %s" %
                         (self.where, ev.thread_team.name, ts[-1].comm.name))
        elif ts[-1].fork is not None:
            ts[-1].ended = True
            self.want[loc] = ("ThreadJoin", None, True,
                              "the ThreadJoin of its fork must come next")
        else:
            team = ts.pop()
            self.member_spans[team.comm].append((loc, team.begin, ev.time))

    def on_ThreadAcquireLock(self, loc, ev, construct, cname):
        st = self.stacks[loc]
        frame = st[-1] if st else None
        key = (ev.lock_id, ev.acquisition_order)
        if frame is None or frame.construct not in ACQUIRE_IN:
            self.problem("%s: lock %d acquired in %s" %
                         (self.where, ev.lock_id,
                          frame.region.name if frame else "no region"))
        else:
            frame.acquired.append(key)
            if frame.cname != UNPLACED:
                what = label(frame.construct, frame.cname) \
                    if frame.construct in BLOCKS else OMP_LOCK
                self.acquired_in[what] += 1
                self.lock_of[(loc.group, ev.lock_id)].add(what)
                self.ids_of[what].add((loc.group, ev.lock_id))
        self.held[loc].append(key)
        self.orders[(loc.group, ev.lock_id)].append(ev.acquisition_order)

    def on_ThreadReleaseLock(self, loc, ev, construct, cname):
        st = self.stacks[loc]
        frame = st[-1] if st else None
        key = (ev.lock_id, ev.acquisition_order)
        if frame is None or frame.construct not in RELEASE_IN:
            self.problem("%s: lock %d released in %s" %
                         (self.where, ev.lock_id,
                          frame.region.name if frame else "no region"))
        else:
            frame.released.append(key)
            if frame.construct in BLOCKS and key not in frame.acquired:
                self.problem("%s: releases lock %d order %d, which its "
                             "region did not acquire" % ((self.where,) + key))
        if key in self.held[loc]:
            self.held[loc].remove(key)
        else:
            self.problem("%s: lock %d order %d was not acquired on this "
                         "location" % ((self.where,) + key))

    def task_key(self, loc, ev):
        """(creating location, generation): the creating thread resolved
        through the group of the task's team (None if it lists none)."""
        members = ev.thread_team.group.members
        n = ev.creating_thread
        creator = members[n] if n < len(members) else None
        if creator is None and self.unresolved < 3:
            self.problem("%s: creating thread %d, the group of team %s "
                         "lists %d members" % (self.where, n,
                                               ev.thread_team.name,
                                               len(members)))
        if creator is None:
            self.unresolved += 1
        return (creator, ev.generation_number)

    def on_ThreadTaskCreate(self, loc, ev, construct, cname):
        key = self.task_key(loc, ev)
        st = self.stacks[loc]
        frame = st[-1] if st else None
        if frame is None or frame.construct != CREATE or frame.created:
            self.problem("%s: %s created in %s, not first in a %s region" %
                         (self.where, task_name(key),
                          frame.region.name if frame else "no region",
                          CREATE))
        else:
            frame.created += 1
            frame.create_time = ev.time
        if key[0] is not None and key[0] != loc:
            self.problem("%s: creating thread %d of team %s is %s" %
                         (self.where, ev.creating_thread,
                          ev.thread_team.name, key[0].name))
        teams = [t.comm for t in self.teams[loc]
                 if t.comm is not None and not t.ended]
        if not teams:
            self.outside_teams.add(ev.thread_team)
        elif ev.thread_team != teams[-1]:
            self.problem("%s: team %s, the location is in %s" %
                         (self.where, ev.thread_team.name, teams[-1].name))
        self.gens[loc].append(ev.generation_number)
        self.tasks[key].creates.append((loc, ev.time, ev.thread_team))

    def on_ThreadTaskSwitch(self, loc, ev, construct, cname):
        key = self.task_key(loc, ev)
        run = self.running[loc]
        if self.prev.get(loc, (None,))[0] == "ThreadTaskComplete":
            done, team = self.completed.pop(loc)
            back = run[-1] if run else (loc, 0)
            if key != back:
                self.problem("%s: switches to %s after %s, not back to %s" %
                             (self.where, task_name(key), task_name(done),
                              task_name(back)))
            if ev.thread_team != team:
                self.problem("%s: team %s, %s's is %s" %
                             (self.where, ev.thread_team.name,
                              task_name(done), team.name))
            return
        if self.llvm and run and key != run[-1] and \
                key == (run[-2] if len(run) > 1
                        else (loc, 0)):
            self.suspend(loc, ev, run)
            return
        if self.llvm and key in self.suspended:
            self.resume(loc, ev, key, run)
            return
        if ev.generation_number == 0:
            self.problem("%s: switches to implicit %s, not after a "
                         "ThreadTaskComplete" % (self.where, task_name(key)))
        self.tasks[key].switches.append((loc, ev.time, ev.thread_team))
        run.append(key)
        self.deepest = max(self.deepest, len(run))
        self.started[loc] = key
        self.want[loc] = ("Enter", TASKS, False,
                          "the Enter of a %s region must follow the "
                          "ThreadTaskSwitch to %s" % (" or ".join(TASKS),
                                                      task_name(key)))

    def suspend(self, loc, ev, run):
        """llvm: a ThreadTaskSwitch from the task the location runs back to
        the one it ran before: suspends an untied task."""
        key = run.pop()
        left = self.leaving.pop(loc, None)
        if key not in self.untied:
            self.problem("%s: suspends %s, which is no untied task" %
                         (self.where, task_name(key)))
        elif self.prev.get(loc) != ("Leave", UNTIED) or left != key:
            self.problem("%s: suspends %s with its %s region still open (a "
                         "suspended task's region must be left, and entered "
                         "again where the task is resumed)" %
                         (self.where, task_name(key), UNTIED))
        t = self.tasks[key]
        if t.creates and ev.thread_team != t.creates[0][2]:
            self.problem("%s: team %s, %s's is %s" %
                         (self.where, ev.thread_team.name, task_name(key),
                          t.creates[0][2].name))
        t.suspends.append((loc, ev.time, ev.thread_team))
        self.suspended[key] = loc

    def resume(self, loc, ev, key, run):
        """llvm: a ThreadTaskSwitch to a suspended task."""
        del self.suspended[key]
        t = self.tasks[key]
        t.resumes.append((loc, ev.time, ev.thread_team))
        if t.switches and ev.thread_team != t.switches[0][2]:
            self.problem("%s: team %s, %s's is %s" %
                         (self.where, ev.thread_team.name, task_name(key),
                          t.switches[0][2].name))
        run.append(key)
        self.deepest = max(self.deepest, len(run))
        self.started[loc] = self.resuming[loc] = key
        self.want[loc] = ("Enter", UNTIED, False,
                          "the Enter of its %s region again must follow the "
                          "ThreadTaskSwitch that resumes %s" %
                          (UNTIED, task_name(key)))

    def on_ThreadTaskComplete(self, loc, ev, construct, cname):
        key = self.task_key(loc, ev)
        run = self.running[loc]
        left = self.leaving.pop(loc, None)
        if self.prev.get(loc, (None, None))[1] not in TASKS or \
                self.prev[loc][0] != "Leave" or left != key:
            self.problem("%s: completes %s, not right after the Leave of its "
                         "region" % (self.where, task_name(key)))
        if run and run[-1] == key:
            run.pop()
        else:
            self.problem("%s: completes %s, the location runs %s" %
                         (self.where, task_name(key),
                          task_name(run[-1]) if run else "no task"))
            if key in run:
                run.remove(key)
        self.tasks[key].completes.append((loc, ev.time, ev.thread_team))
        self.completed[loc] = (key, ev.thread_team)
        self.want[loc] = ("ThreadTaskSwitch", None, False,
                          "a ThreadTaskSwitch back must follow the "
                          "ThreadTaskComplete of %s" % task_name(key))

    def finish(self):
        """The end of the trace: what is left open, the locks, the teams,
        the totals against the report."""
        for loc, st in self.stacks.items():
            if st:
                self.problem("%s: regions never left: %s" %
                             (loc.name, [f.region.name for f in st]))
        for loc, ts in self.teams.items():
            if ts:
                self.problem("%s: teams never ended or forks never joined: "
                             "%s" % (loc.name, [t.comm.name if t.comm
                                                else "fork" for t in ts]))
        for loc, want in self.want.items():
            self.problem("%s: the trace ends where %s" % (loc.name, want[3]))
        for loc, added in self.nesting.items():
            self.problem("%s: %d Enters and Leaves weftd added so that the "
                         "location nests (%s): the recorder's did not; the "
                         "first: %s" % (loc.name, len(added), NESTING,
                                        added[0]))
        self.finish_locks()
        self.finish_tasks()
        self.finish_teams()
        if self.model:
            self.finish_switches()
        else:
            self.finish_totals()

    def finish_locks(self):
        report = self.report
        for loc, h in self.held.items():
            if h:
                self.problem("%s: locks acquired and never released (lock, "
                             "order): %s" % (loc.name, h[:10]))
        for (group, lock), o in self.orders.items():
            if sorted(o) != list(range(len(o))):
                self.problem("%s: lock %d: acquisition orders are not 0..%d "
                             "once each: %s" % (group.name, lock, len(o) - 1,
                                                sorted(o)[:20]))
        for (group, lock), n in self.unplaced.items():
            what = self.lock_of.get((group, lock), set())
            if self.model and not what:
                continue    # a critical section known by its lock alone
            if len(what) != 1 or not next(iter(what)).startswith(CRITICAL):
                self.problem("%s: %d %s regions without location hold lock "
                             "%d, the lock of %s, not of one critical "
                             "section" % (group.name, n, CRITICAL, lock,
                                          sorted(what) or "nothing else"))
                continue
            what = next(iter(what))
            self.enters[what] += n
            self.acquired_in[what] += n
        for (group, lock), what in self.lock_of.items():
            if len(what) != 1:
                self.problem("%s: lock %d is the lock of %s: one each" %
                             (group.name, lock, sorted(what)))
        if self.model:      # each label the trace names: one lock id
            for what, ids in self.ids_of.items():
                if what != OMP_LOCK and len(ids) != 1:
                    self.problem("%s: %d lock ids, not one" %
                                 (what, len(ids)))
            return
        named = named_critical(report)
        used = {CRITICAL: "critical", named: "critical_named",
                ATOMIC: "atomic", "!$omp ordered": "ordered"}
        for what, key in used.items():
            if what is None:
                continue
            ids = self.ids_of[what]
            want = 0 if self.sparse and not report[key] else 1
            if what == ATOMIC and self.llvm:
                want = 1 if self.enters[ATOMIC] else 0
            if len(ids) != want:
                self.problem("%s: %d lock ids, not %s" %
                             (what, len(ids), "one" if want else "none"))
        n = len(self.ids_of[OMP_LOCK])
        if n != report["lock_objects"]:
            self.problem("omp lock functions: %d lock ids, the program used "
                         "%d lock objects" % (n, report["lock_objects"]))

    def finish_tasks(self):
        """Each task created, switched to and completed once, in that
        order, on one location (llvm: an untied task completes where it
        was last resumed); generation numbers; tasks still run or
        suspended; the teams of tasks created outside any team."""
        for key, t in sorted(self.tasks.items(),
                             key=lambda kt: (kt[0][0]._ref if kt[0][0]
                                             else -1, kt[0][1])):
            name = task_name(key)
            for what, got in (("ThreadTaskCreate", t.creates),
                              ("ThreadTaskSwitch to it", t.switches),
                              ("ThreadTaskComplete", t.completes)):
                if len(got) != 1:
                    self.problem("%s: %d %s, not one (on %s)" %
                                 (name, len(got), what,
                                  sorted(g[0].name for g in got)))
            if t.creates and t.switches:
                loc, time, team = t.creates[0]
                if t.switches[0][1] < time:
                    self.problem("%s: switched to on %s at %d, before its "
                                 "creation on %s at %d" %
                                 (name, t.switches[0][0].name,
                                  t.switches[0][1], loc.name, time))
                if t.switches[0][2] != team:
                    self.problem("%s: switched to in team %s, created in "
                                 "%s" % (name, t.switches[0][2].name,
                                         team.name))
            last = (t.resumes or t.switches)[-1:]
            if last and t.completes:
                if t.completes[0][0] != last[0][0]:
                    self.problem("%s: %s on %s, completed on %s" %
                                 (name, "resumed last" if t.resumes
                                  else "switched to", last[0][0].name,
                                  t.completes[0][0].name))
                if t.completes[0][2] != last[0][2]:
                    self.problem("%s: switched to in team %s, completed in "
                                 "%s" % (name, last[0][2].name,
                                         t.completes[0][2].name))
        for loc, gens in self.gens.items():
            if sorted(gens) != list(range(1, len(gens) + 1)):
                self.problem("%s: generation numbers of the tasks it created "
                             "are not 1..%d once each: %s" %
                             (loc.name, len(gens), sorted(gens)[:20]))
        for loc, run in self.running.items():
            if run:
                self.problem("%s: tasks never completed: %s" %
                             (loc.name, [task_name(k) for k in run]))
        for key, loc in self.suspended.items():
            self.problem("%s: suspended on %s, never resumed" %
                         (task_name(key), loc.name))
        for comm in self.outside_teams:
            group = comm.group
            if comm in self.comm_begins:
                self.problem("team %s: tasks created outside any team name "
                             "it, and ThreadTeamBegin does" % comm.name)
            if len(group.members) != 1:
                self.problem("team %s of tasks created outside any team: "
                             "its group lists %d members, not 1" %
                             (comm.name, len(group.members)))
            if group.group_type != otf2.GroupType.COMM_GROUP or \
                    group.paradigm != OPENMP:
                self.problem("team %s of tasks created outside any team: "
                             "group %s is of type %s, paradigm %s, not "
                             "COMM_GROUP, OPENMP" %
                             (comm.name, group.name, group.group_type,
                              group.paradigm))

    def finish_teams(self):
        """A team's Comm lists the locations that begin it; no Comm of
        two shapes; every other member's team within a fork of its Comm;
        where every team
        got the threads it asked for, a Comm's members are the threads
        its forks asked for."""
        report = self.report
        for comm, locs in self.team_locs.items():
            members = comm.group.members
            if len(set(members)) != len(members):
                self.problem("team %s: its group lists a location twice: "
                             "%s" % (comm.name, [m.name for m in members]))
            if set(members) != set(locs):
                self.problem("team %s: its group lists %s, %s began it" %
                             (comm.name, sorted(m.name for m in members),
                              sorted(set(l.name for l in locs))))
        for comm, shapes in self.comm_shapes.items():
            if len(shapes) != 1:
                self.problem("team %s is the Comm of teams of different "
                             "shapes (process, parent team, size): %s" %
                             (comm.name,
                              sorted((s[0].name, s[1].name if s[1] else "",
                                      s[2]) for s in shapes)))
        for comm, spans in self.member_spans.items():
            forks = self.fork_spans[comm]
            out = [(loc, tb, te) for loc, tb, te in spans
                   if not any(tf <= tb and te <= tj for tf, tj in forks)]
            if out:
                loc, tb, te = out[0]
                fork = max((f for f in forks if f[0] <= tb), default=None)
                self.problem(
                    "team %s: %d of its %d members that did not fork it "
                    "begin or end it outside every fork of it (from "
                    "ThreadFork to ThreadJoin); the first: %s from %d to "
                    "%d, %s" %
                    (comm.name, len(out), len(spans), loc.name, tb, te,
                     "no fork before" if fork is None else
                     "the fork before it from %d to %d (ends %d ns after "
                     "its ThreadJoin)" % (fork[0], fork[1], te - fork[1])))
        if (self.team_begins != self.requested if self.model else
                report["team_begins"] != report["requested_threads"]):
            return
        for comm, n in self.comm_begins.items():
            forks, asked = self.comm_forks[comm], self.comm_asked[comm]
            if n != asked:
                self.problem("team %s: %d ThreadTeamBegin, its %d forks "
                             "asked for %d threads" % (comm.name, n, forks,
                                                       asked))
            size = len(comm.group.members)
            if asked != size * forks:
                self.problem("team %s: its group lists %d members, its %d "
                             "forks asked for %d threads" %
                             (comm.name, size, forks, asked))

    def finish_totals(self):
        report = self.report

        def expect(what, got, keys):
            want, how = count_of(report, keys)
            if got != want:
                self.problem("%s: %d in the trace, the program counted %d "
                             "(%s%s)" % (what, got, want, how,
                                         ", --runtime %s" % self.runtime
                                         if len(keys) != 1 else ""))

        named = named_critical(report)
        enters = ENTERS[self.runtime]
        expect("ThreadFork", self.forks, ("forks",))
        expect("ThreadJoin", self.kinds["ThreadJoin"], ("forks",))
        expect("threads ThreadFork requested", self.requested,
               ("requested_threads",))
        expect("ThreadTeamBegin", self.team_begins, ("team_begins",))
        expect("ThreadTeamEnd", self.kinds["ThreadTeamEnd"], ("team_begins",))
        for what, keys in sorted(enters.items()):
            if what == ATOMIC and self.llvm and not self.enters[ATOMIC]:
                continue    # clang's atomic through libatomic: none
            expect("Enter %s" % what, self.enters[what], keys)
        expect("Enter %s" % CRITICAL, self.enters[CRITICAL], ("critical",))
        if named:
            expect("Enter %s" % named, self.enters[named],
                   ("critical_named",))
        others = {k: n for k, n in self.enters.items()
                  if k not in enters and k not in (CRITICAL, named)}
        if others:
            self.problem("Enters of constructs the program did not use: %s"
                         % others)
        for what, keys in sorted(self.implicit_table.items()):
            expect("%s %s %s" % (IMPLICIT, "after" if self.llvm and
                                 what != PARALLEL else "in", what),
                   self.implicit_in[what], keys)
        for what, key in ((CRITICAL, "critical"), (named, "critical_named"),
                          (ATOMIC, "atomic"),
                          ("!$omp ordered", "ordered"),
                          (OMP_LOCK, "lock_acquired")):
            if what is None or (what == ATOMIC and self.llvm and
                                not self.enters[ATOMIC]):
                continue
            expect("ThreadAcquireLock in %s" % what, self.acquired_in[what],
                   (key,))
        expect("omp lock tests without ThreadAcquireLock", self.failed_tests,
               FAILED_TESTS[self.runtime])
        expect("ThreadTaskCreate", self.kinds["ThreadTaskCreate"],
               ("task_create", "taskloop_task"))
        expect("ThreadTaskComplete", self.kinds["ThreadTaskComplete"],
               ("task_create", "taskloop_task"))
        suspends = sum(len(t.suspends) for t in self.tasks.values())
        created = report["task_create"] + report.get("taskloop_task", 0)
        if self.kinds["ThreadTaskSwitch"] != 2 * created + 2 * suspends:
            self.problem("ThreadTaskSwitch: %d in the trace, not two per task "
                         "the program created (%d, task_create + "
                         "taskloop_task) and two per suspension (%d)" %
                         (self.kinds["ThreadTaskSwitch"], created, suspends))
        expect("locations with OpenMP events", len(self.locations),
               ("threads",))

    def finish_switches(self):
        """--model: two task switches per task created and two per
        suspension."""
        suspends = sum(len(t.suspends) for t in self.tasks.values())
        created = self.kinds["ThreadTaskCreate"]
        if self.kinds["ThreadTaskSwitch"] != 2 * created + 2 * suspends:
            self.problem("ThreadTaskSwitch: %d in the trace, not two per task "
                         "created (%d) and two per suspension (%d)" %
                         (self.kinds["ThreadTaskSwitch"], created, suspends))

    def summary(self):
        return {"events": dict(self.kinds), "locations": len(self.locations),
                "enters": dict(self.enters), "teams": len(self.comm_begins),
                "tasks": len(self.tasks),
                "tasks_run_elsewhere": sum(
                    1 for t in self.tasks.values() if t.creates and
                    t.switches and t.creates[0][0] != t.switches[0][0]),
                "tasks_nested": self.deepest,
                "suspensions": sum(len(t.suspends)
                                   for t in self.tasks.values()),
                "tasks_resumed_elsewhere": sum(
                    1 for t in self.tasks.values() if t.switches and
                    any(r[0] != t.switches[0][0] for r in t.resumes)),
                "locks": len(self.orders)}


def main_ranks(anchor, paths, runtime, model=False):
    """--ranks: each process checked alone against its rank's report;
    --model (no paths): each against the model alone."""
    reports, problems, summaries = {}, [], {}
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        if report.get("rank") in reports:
            problems.append("%s: rank %s has a report already" %
                            (path, report.get("rank")))
        reports[report.get("rank")] = rank_report(report)
    with otf2.reader.open(anchor) as trace:
        regions = trace.definitions.regions
        checkers = {}
        for index, (loc, ev) in enumerate(trace.events):
            rank = loc._ref >> 32
            if rank not in checkers:
                checkers[rank] = Checker(regions,
                                         reports.get(rank, rank_report({})),
                                         runtime, sparse=True, model=model)
            checkers[rank].event(index, loc, ev)
        for rank in sorted(set(checkers) | set(reports), key=str):
            checker = checkers.get(rank) or \
                Checker(regions, reports[rank], runtime, sparse=True)
            if rank not in reports and not model:
                if checker.locations:
                    problems.append("rank %s: OpenMP events on %d locations, "
                                    "no report" % (rank,
                                                   len(checker.locations)))
                continue
            checker.finish()
            problems += ["rank %s: %s" % (rank, p) for p in checker.problems]
            summaries[rank] = checker.summary()
    if problems:
        for p in problems[:MAX_PROBLEMS]:
            print(p)
        return 1
    print(json.dumps(summaries, sort_keys=True))
    return 0


def main(argv):
    args, runtime = argv[1:], "gnu"
    if len(args) >= 2 and args[0] == "--runtime":
        runtime, args = args[1], args[2:]
    if runtime not in RUNTIMES:
        print("check_openmp.py: --runtime %s: not one of %s" %
              (runtime, ", ".join(RUNTIMES)), file=sys.stderr)
        return 2
    if len(args) >= 3 and args[0] == "--ranks":
        return main_ranks(args[1], args[2:], runtime)
    if len(args) == 2 and args[0] == "--model":
        return main_ranks(args[1], [], runtime, model=True)
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(args[1]) as f:
        report = json.load(f)
    with otf2.reader.open(args[0]) as trace:
        checker = Checker(trace.definitions.regions, report, runtime)
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

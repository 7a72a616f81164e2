#!/usr/bin/python3
"""runs.py N RUNS ERRLOG [NAME=VALUE...] COMMAND [ARGS...]: runs COMMAND N
times, one after the other (its output to /dev/null, its errors appended
to ERRLOG), with the NAME=VALUE words added to its environment (as env(1)
would, but without env's own exec in every run's time),
and prints two figures per RUNS (the number of processes a run stands
for: a tree's children): the wall time in ms and the CPU time in ms of
COMMAND and every process it waited for (user + system, getrusage's
RUSAGE_CHILDREN). Exits 1 naming the command if a run fails."""
import os
import resource
import subprocess
import sys
import time


def cpu_ns():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1e9


def main():
    n, per, errlog, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    env = dict(os.environ)
    while cmd and "=" in cmd[0] and not cmd[0].startswith("="):
        name, value = cmd.pop(0).split("=", 1)
        env[name] = value
    with open(errlog, "ab") as err, open(os.devnull, "wb") as null:
        c0, t0 = cpu_ns(), time.monotonic_ns()
        for _ in range(n):
            if subprocess.run(cmd, stdout=null, stderr=err, env=env).returncode != 0:
                sys.exit("bench/runs.py: %s failed" % " ".join(cmd))
        t1, c1 = time.monotonic_ns(), cpu_ns()
    print("%.3f %.3f" % ((t1 - t0) / per / 1e6, (c1 - c0) / per / 1e6))


main()

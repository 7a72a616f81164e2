#!/usr/bin/env python3
"""peak_sampler.py PID FILE [INTERVAL] - until process PID has ended (or
is a zombie nobody reaped yet: as long as `kill -0` finds it), samples
every INTERVAL seconds (default 0.1) its resident set and its open
descriptors, and keeps in FILE the highest of each so far as one line
"RSS-MB FDS" (written whole: a new file renamed over the old one).

Descriptors are counted as tests/e2e_hostile.sh's weftd_fds counts them:
those numbered below the process's soft RLIMIT_NOFILE (one numbered
above was inherited, not opened by the process).

One process for the whole run: the shell loop it replaces started six
processes a sample (awk twice, ls, wc, mv and a subshell), ten times a
second through every adversary case, and took more CPU than weftd."""
import os
import sys
import time


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return None


def fd_limit(pid):
    try:
        with open(f"/proc/{pid}/limits") as f:
            for line in f:
                if line.startswith("Max open files"):
                    soft = line.split()[3]
                    return None if soft == "unlimited" else int(soft)
    except OSError:
        pass
    return None


def open_fds(pid):
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    limit = fd_limit(pid)
    return sum(1 for n in names if limit is None or int(n) < limit)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: peak_sampler.py PID FILE [INTERVAL]")
    pid, path = int(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) == 4 else 0.1
    peak_rss = peak_fds = 0
    while alive(pid):
        rss, fds = rss_mb(pid), open_fds(pid)
        peak_rss = max(peak_rss, rss or 0)
        peak_fds = max(peak_fds, fds or 0)
        with open(path + ".tmp", "w") as f:
            f.write(f"{peak_rss} {peak_fds}\n")
        os.replace(path + ".tmp", path)
        time.sleep(interval)


if __name__ == "__main__":
    main()

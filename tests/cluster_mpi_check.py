#!/usr/bin/python3
"""cluster_mpi_check.py - tests/check_mpi.py for tests/mpi/every run on
several nodes (tests/e2e_cluster_mpi.sh).

usage: cluster_mpi_check.py ARCHIVE/traces.otf2 EXPECT_DIR

every.c gives the communicator of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
one name, "every.shared", on every rank: one communicator when the ranks
share a node, one per node otherwise, all of that name, which check_mpi.py
takes for one communicator split into several Comms. So a name that the
ranks' expectations list with different members (a communicator of each
node) becomes NAME@FIRST wherever it occurs, FIRST being the world rank
of the communicator's rank 0: in each rank's expectation (from the
members it lists) and in the archive (from its Comm's group). Then every
check of check_mpi.py runs as it does there (a Comm whose group is not
what its members say is found by them as before), and both readers:
check_mpi.py's main, its output and exit status.
"""
import sys

import check_mpi


def per_node_names(exp):
    """The communicator names the ranks list with different members."""
    seen = {}
    for e in exp.values():
        for c in e.get("comms", []):
            if "members" in c:
                seen.setdefault(c["name"], set()).add(tuple(c["members"]))
    return {n for n, m in seen.items() if len(m) > 1}


def renamed(x, old, new):
    """X (decoded JSON) with every string equal to OLD replaced by NEW."""
    if isinstance(x, str):
        return new if x == old else x
    if isinstance(x, list):
        return [renamed(v, old, new) for v in x]
    if isinstance(x, dict):
        return {k: renamed(v, old, new) for k, v in x.items()}
    return x


def qualify(arch, exp):
    """Renames, in ARCH and EXP, each communicator of a node (see above)."""
    names = per_node_names(exp)
    if not names:
        return
    mapping = check_mpi.Checker(arch, exp)
    mapping.ranks()  # the world rank of each COMM_LOCATIONS member
    for c in arch.comms.values():
        if c["name"] in names and "group" in c:
            members = mapping.world_ranks(c["group"], c["name"]) or [-1]
            c["name"] = "%s@%d" % (c["name"], members[0])
    for rank, e in exp.items():
        for c in e.get("comms", []):
            if c["name"] in names and c.get("members"):
                exp[rank] = renamed(exp[rank], c["name"], "%s@%d"
                                    % (c["name"], c["members"][0]))


def main(argv):
    plain = check_mpi.check

    def check(arch, exp):
        qualify(arch, exp)
        return plain(arch, exp)
    check_mpi.check = check
    return check_mpi.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""p2p.py - the point-to-point messages of an OTF2 archive read with the
otf2 module, matched between sender and receiver (tests/e2e_lammps.sh,
tests/e2e_openmp_mpi.sh): a message is (communicator, sender's world
rank, receiver's, tag, bytes); every one sent must be received once.
"""
import collections

import otf2


def rank_of(loc):
    """A location's world rank: the high 32 bits of its id."""
    return loc._ref >> 32


def world(comm, peer, me):
    """The world rank of rank `peer` of communicator comm, seen from
    world rank `me` (its own for MPI_COMM_SELF)."""
    members = comm.group.members
    if comm.group.group_type == otf2.GroupType.COMM_SELF:
        return me
    return rank_of(members[peer]) if members else peer


class Messages:
    """The sends and receives of an archive, one event at a time."""

    def __init__(self):
        self.sends = collections.Counter()
        self.recvs = collections.Counter()

    def event(self, rank, kind, ev):
        """Counts event ev (its kind's name) of world rank `rank`."""
        if kind in ("MpiSend", "MpiIsend"):
            self.sends[(ev.communicator.name, rank,
                        world(ev.communicator, ev.receiver, rank),
                        ev.msg_tag, ev.msg_length)] += 1
        elif kind in ("MpiRecv", "MpiIrecv"):
            self.recvs[(ev.communicator.name,
                        world(ev.communicator, ev.sender, rank), rank,
                        ev.msg_tag, ev.msg_length)] += 1

    def matched(self):
        return sum(self.sends.values())

    def problems(self):
        """One line per message sent and never received or the other way
        round."""
        bad = []
        for k, n in sorted((self.sends - self.recvs).items()):
            bad.append("%d message(s) %s from rank %d to %d tag %d, %d "
                       "bytes: sent, never received" % ((n,) + k))
        for k, n in sorted((self.recvs - self.sends).items()):
            bad.append("%d message(s) %s from rank %d to %d tag %d, %d "
                       "bytes: received, never sent" % ((n,) + k))
        return bad

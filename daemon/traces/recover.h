/* recover.h - rebuilds traces in progress from the spool at start-up
 * (see recover.c). */
#ifndef WEFT_RECOVER_H
#define WEFT_RECOVER_H

#include "daemon.h"

/* Scans SPOOL/traces: resumes traces still recording, converts those whose
 * members all said goodbye. Problems with single journals are logged and
 * skipped. Returns 0, or WEFT_EIO if the spool cannot be read. Loop
 * thread, before listening. */
int weft_recover_spool(weft_daemon *d);
/* On a node (d->part_cbs wired, its link started): scans SPOOL/parts,
 * its parts of its head's traces (partlink.h), as weft_recover_spool
 * does SPOOL/traces: each member is its head's again (the link sends
 * it), a part whose members are all done finishes (its stream writes
 * their events again, from the journals), the others wait for theirs.
 * 0, or WEFT_EIO if the directory cannot be read. Before the loop runs. */
int weft_recover_parts(weft_daemon *d);

#endif

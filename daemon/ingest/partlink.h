/* partlink.h - a node's share of its head's traces (issue #34): how
 * ingest and the trace lifecycle on a node reach the link to its head.
 *
 * On a node whose head has an archive_root the node sees (ArchiveCheck
 * OK), a member of a launch (not a process tree) is not relayed frame by
 * frame: it joins a *part* here, a trace of this weftd that holds the
 * node's members of the head's trace. This weftd journals and
 * acknowledges them itself, answers their ClockSyncs on the head's clock
 * and writes their event files into the head's archive (streamjob.c);
 * the head gets each member's Hello, Definitions, sums and Goodbye over
 * the link, from daemon/cluster/parts.c, which defines these callbacks
 * (d->part_cbs, NULL but on a node). The process never waits for the
 * head: what the head has not acknowledged is sent again on the next
 * link. Loop thread.
 */
#ifndef WEFT_PARTLINK_H
#define WEFT_PARTLINK_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "journal.h"
#include "memberin.h"
#include "weft.pb-c.h"

typedef struct weft_part_cbs {
    /* Whether a member of h (not a tree's) joins a part here: the head's
     * archive_root is seen and the head's clock is known. */
    int (*takes)(weft_daemon *d, const Weft__Hello *h);
    /* What to add to this weftd's CLOCK_MONOTONIC (ns) for the head's
     * clock, into *offset: 0, or WEFT_ESTATE when not known. */
    int (*head_clock)(weft_daemon *d, int64_t *offset);
    /* in's Hello entry (hello, len: packed weft.Hello, its owner and rank
     * weftd's) reached its journal: in joined its part, and unless the
     * link has a record of it already, the head gets it. 0 or
     * WEFT_ENOMEM. */
    int (*joined)(weft_memberin *in, const uint8_t *hello, size_t len);
    /* Entry e of in (Definitions, Goodbye) reached its journal: the head
     * gets it too (its Goodbye once the member's sums are there). */
    void (*journaled)(weft_memberin *in, const weft_journal_entry *e);
    /* The stream wrote in's event files whole: its sums (packed
     * MemberSums, malloc'd, taken), or NULL with why when they could not
     * be written here (the head counts its events lost). */
    void (*finished)(weft_memberin *in, uint8_t *sums, size_t len,
                     const char *why);
    /* in's process is gone without Goodbye (gone) or its part ended:
     * nothing more comes of it. */
    void (*ended)(weft_memberin *in, int gone);
    /* in is freed (its trace is): the head is told if not yet. */
    void (*freed)(weft_memberin *in);
    /* A part's trace is freed; link is what the cluster's side keeps of
     * its directory (weft_member_part_link), `ended` when the part ended
     * (its members written, their sums handed over): its directory (the
     * journals) then goes once the head holds every member of it; else
     * it stays, for this weftd's next start. */
    void (*released)(void *link, int ended);
} weft_part_cbs;

/* Traces' side (daemon/traces/, declared here for the cluster): the head
 * made the archive of in's trace; in's part writes its members' events
 * into archive_dir (ARCHIVE_ROOT/KEY/archive as this node sees it). A
 * part waits for that before it ends; NULL: the head refused in, the
 * part waits no more. */
void weft_member_part_archive(weft_memberin *in, const char *archive_dir);
/* Where the cluster's side keeps what it has of in's part (its trace's
 * directory and who still needs it: released hands it back), NULL at
 * first. */
void **weft_member_part_link(weft_memberin *in);
/* Removes a part's directory dir: its journals, its note of the head's
 * archive, dir itself (part.c). Any thread. */
void weft_part_dir_remove(const char *dir);
/* Removes the journal of rank in part directory dir (part.c). */
void weft_part_journal_remove(const char *dir, uint32_t rank);

#endif

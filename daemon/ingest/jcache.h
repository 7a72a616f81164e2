/* jcache.h - which member journals hold a file descriptor.
 *
 * DESIGN: a member's journal need not stay open while nothing is
 * written to it. A journal is open from the entry submitted to it (the
 * writer threads open a parked one again, journal.h) until it is idle
 * (no entry queued, no fdatasync running or due) and either
 *  - its member has no connection (it hung up, or was restored at
 *    start): parked at once, or
 *  - more than max_open_journals are open: the least recently used idle
 *    ones are parked, a few at each use (one in use met at the list's
 *    tail goes to its front: thousands of members joining at once do
 *    not make each use walk them all).
 * So journals hold at most max_open_journals descriptors plus those of
 * members being written at that moment (each has a connection, bounded
 * by max_connections), whatever the number of members, and a member that
 * said Hello and hung up costs no descriptor at all.
 *
 * Loop thread only: a journal is parked only while no thread uses it.
 * The open journals are a list, most recently used first, which exists
 * while it is not empty.
 */
#ifndef WEFT_JCACHE_H
#define WEFT_JCACHE_H

#include <stdint.h>

#include "daemon.h"
#include "memberin.h"

/* An entry of a member (its ingest state in) is about to be submitted:
 * its journal counts as open and most recently used; idle journals
 * beyond max_open_journals are parked. */
void weft_jcache_use(weft_memberin *in);
/* Something of in's member finished (an entry handed back, a sync, its
 * connection gone): parks its journal if it is idle and disconnected. */
void weft_jcache_idle(weft_memberin *in);
/* in's journal is closed or its member freed: it leaves the list. */
void weft_jcache_forget(weft_memberin *in);
/* Journals counted open. */
uint64_t weft_jcache_open(const weft_daemon *d);

#endif

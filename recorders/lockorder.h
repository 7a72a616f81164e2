/* lockorder.h - ThreadAcquireLock and ThreadReleaseLock of a recorder's
 * locks (libweft-pthread's mutexes, libweft-openmp's OpenMP locks and
 * critical sections): lock ids (lockmap.h), acquisition orders per lock,
 * and the locks each thread holds.
 *
 * A lock's acquisitions are numbered 0, 1, ... in the order its counter
 * was advanced, which for an exclusive lock is the order the holders got
 * it (one at a time); read locks held at once get distinct numbers too.
 * A release carries the order of the same thread's latest acquisition of
 * that lock still held (its own stack of held locks), so acquire and
 * release pair up on one location even when a thread holds several read
 * locks of one rwlock or releases in another order than it acquired. A
 * release of a lock this thread did not acquire while recording (taken
 * before the session opened) records nothing.
 *
 * One rec_locks per library: the stack of held locks is the library's
 * (thread-local), and keeps lock ids only.
 */
#ifndef WEFT_LOCKORDER_H
#define WEFT_LOCKORDER_H

#include <stdint.h>

#include <otf2/OTF2_GeneralDefinitions.h>

#include "lockmap.h"

typedef struct rec_locks {
    pt_lockmap map;
    OTF2_Paradigm paradigm;     /* the model of its lock events */
} rec_locks;

#define REC_LOCKS_INIT(p) { .map = PT_LOCKMAP_INIT, .paradigm = (p) }

/* Records ThreadAcquireLock of lock object `obj` at t on this thread. */
void rec_lock_acquired(rec_locks *l, const void *obj, uint64_t t);
/* Records ThreadReleaseLock of `obj` at t: the order of this thread's
 * acquisition of it, else its last acquisition's. 1 if it recorded one,
 * 0 if the acquisition was not recorded. */
int rec_lock_releasing(rec_locks *l, const void *obj, uint64_t t);

#endif

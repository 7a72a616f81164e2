/* lock.c - ThreadAcquireLock and ThreadReleaseLock of pthread locks, of
 * paradigm PTHREAD (lockorder.h says how they are numbered and paired).
 */
#include "lockorder.h"
#include "pt.h"

static rec_locks locks = REC_LOCKS_INIT(OTF2_PARADIGM_PTHREAD);

/* See pt.h. */
void pt_lock_acquired(const void *obj, uint64_t t)
{
    rec_lock_acquired(&locks, obj, t);
}

/* See pt.h. */
int pt_lock_releasing(const void *obj, uint64_t t)
{
    return rec_lock_releasing(&locks, obj, t);
}

/* lock.c - ThreadAcquireLock and ThreadReleaseLock: lock ids (lockmap.h),
 * acquisition orders per lock, and the locks each thread holds (see
 * pt.h).
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
 */
#include "lockmap.h"
#include "pt.h"

/* Locks one thread may hold at once and still pair its releases exactly;
 * beyond, a release takes the lock's latest order. */
#define PT_HELD_MAX 64

typedef struct held {
    uint32_t id;
    uint32_t order;
} held;

static pt_lockmap locks = PT_LOCKMAP_INIT;
static __thread held tls_held[PT_HELD_MAX] PT_TLS;
static __thread uint32_t tls_nheld PT_TLS;

/* See pt.h. */
void pt_lock_acquired(const void *obj, uint64_t t)
{
    pt_lock *l = pt_lockmap_get(&locks, (uintptr_t)obj);
    uint32_t order;

    if (!l)
        return;
    order = atomic_fetch_add_explicit(&l->order, 1, memory_order_relaxed);
    if (tls_nheld < PT_HELD_MAX)
        tls_held[tls_nheld++] = (held){ l->id, order };
    weft_evt_ThreadAcquireLock(NULL, t, OTF2_PARADIGM_PTHREAD, l->id, order);
}

/* See pt.h. */
int pt_lock_releasing(const void *obj, uint64_t t)
{
    pt_lock *l = pt_lockmap_find(&locks, (uintptr_t)obj);
    uint32_t order, i;

    if (!l)
        return 0; /* never acquired while recording: nothing to pair */
    for (i = tls_nheld; i-- > 0;)
        if (tls_held[i].id == l->id)
            break;
    if (i != UINT32_MAX) {
        order = tls_held[i].order;
        tls_nheld--;
        for (; i < tls_nheld; i++)
            tls_held[i] = tls_held[i + 1];
    } else if (tls_nheld == PT_HELD_MAX) {
        order = atomic_load_explicit(&l->order, memory_order_relaxed) - 1;
    } else {
        return 0; /* not acquired on this thread while recording */
    }
    weft_evt_ThreadReleaseLock(NULL, t, OTF2_PARADIGM_PTHREAD, l->id, order);
    return 1;
}

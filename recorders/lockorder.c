/* lockorder.c - acquisition orders and the locks each thread holds (see
 * lockorder.h).
 */
#include "lockorder.h"

#include <stddef.h>

#include "weft.h"

/* Locks one thread may hold at once and still pair its releases exactly;
 * beyond, a release takes the lock's latest order. */
#define HELD_MAX 64

typedef struct held {
    uint32_t id;
    uint32_t order;
} held;

static __thread held tls_held[HELD_MAX]
    __attribute__((tls_model("initial-exec")));
static __thread uint32_t tls_nheld __attribute__((tls_model("initial-exec")));

/* See lockorder.h. */
void rec_lock_acquired(rec_locks *l, const void *obj, uint64_t t)
{
    pt_lock *k = pt_lockmap_get(&l->map, (uintptr_t)obj);
    uint32_t order;

    if (!k)
        return;
    order = atomic_fetch_add_explicit(&k->order, 1, memory_order_relaxed);
    if (tls_nheld < HELD_MAX)
        tls_held[tls_nheld++] = (held){ k->id, order };
    weft_evt_ThreadAcquireLock(NULL, t, l->paradigm, k->id, order);
}

/* See lockorder.h. */
int rec_lock_releasing(rec_locks *l, const void *obj, uint64_t t)
{
    pt_lock *k = pt_lockmap_find(&l->map, (uintptr_t)obj);
    uint32_t order, i;

    if (!k)
        return 0; /* never acquired while recording: nothing to pair */
    for (i = tls_nheld; i-- > 0;)
        if (tls_held[i].id == k->id)
            break;
    if (i != UINT32_MAX) {
        order = tls_held[i].order;
        tls_nheld--;
        for (; i < tls_nheld; i++)
            tls_held[i] = tls_held[i + 1];
    } else if (tls_nheld == HELD_MAX) {
        order = atomic_load_explicit(&k->order, memory_order_relaxed) - 1;
    } else {
        return 0; /* not acquired on this thread while recording */
    }
    weft_evt_ThreadReleaseLock(NULL, t, l->paradigm, k->id, order);
    return 1;
}

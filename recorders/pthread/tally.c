/* tally.c - the pure part of counting lock calls (tally.h). */
#include "tally.h"

/* See tally.h. */
int pt_tally_hold(pt_tally_held *h, const void *lock)
{
    if (h->n == PT_TALLY_HELD_MAX)
        return 0;
    h->lock[h->n++] = lock;
    return 1;
}

/* See tally.h. A thread releases in any order; the latest acquisition of
 * the same lock goes (a recursive mutex is held several times). */
int pt_tally_release(pt_tally_held *h, const void *lock)
{
    for (uint32_t i = h->n; i-- > 0;)
        if (h->lock[i] == lock) {
            h->n--;
            for (; i < h->n; i++)
                h->lock[i] = h->lock[i + 1];
            return 1;
        }
    return 0;
}

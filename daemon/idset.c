/* idset.c - a growable set of ids (see idset.h). The bitmap starts at
 * 1024 ids and doubles, so a member that defines ids 0..N holds N/8
 * bytes and a few reallocations. */
#include "idset.h"

#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

#define IDSET_FIRST_CAP 1024

int weft_idset_add(weft_idset *s, uint64_t id, uint64_t limit)
{
    if (id >= limit)
        return WEFT_ELIMIT;
    if (id >= s->cap) {
        uint64_t cap = s->cap ? s->cap : IDSET_FIRST_CAP;
        uint8_t *p;
        while (cap <= id)
            cap *= 2;
        p = realloc(s->bits, cap / 8);
        if (!p)
            return WEFT_ENOMEM;
        memset(p + s->cap / 8, 0, (cap - s->cap) / 8);
        s->bits = p;
        s->cap = cap;
    }
    s->bits[id / 8] |= (uint8_t)(1u << (id % 8));
    return 0;
}

void weft_idset_free(weft_idset *s)
{
    free(s->bits);
    s->bits = NULL;
    s->cap = 0;
}

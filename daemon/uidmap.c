/* uidmap.c - cells by uid in one sorted array (see uidmap.h). */
#include "uidmap.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static uint32_t uid_of(const unsigned char *cell)
{
    uint32_t uid;

    memcpy(&uid, cell, sizeof uid);
    return uid;
}

/* See uidmap.h. */
size_t weft_uidmap_find(const weft_uidmap *m, uint32_t uid, size_t size)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (uid_of(m->v + mid * size) < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* See uidmap.h. */
void *weft_uidmap_at(const weft_uidmap *m, size_t i, size_t size)
{
    assert(i < m->n);
    return m->v + i * size;
}

/* See uidmap.h. */
void *weft_uidmap_lookup(const weft_uidmap *m, uint32_t uid, size_t size)
{
    size_t i = weft_uidmap_find(m, uid, size);

    return i < m->n && uid_of(m->v + i * size) == uid ? m->v + i * size
                                                      : NULL;
}

/* See uidmap.h. */
void *weft_uidmap_get(weft_uidmap *m, uint32_t uid, size_t size)
{
    size_t i = weft_uidmap_find(m, uid, size);
    unsigned char *c;

    if (i < m->n && uid_of(m->v + i * size) == uid)
        return m->v + i * size;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 8;
        unsigned char *v = realloc(m->v, cap * size);
        if (!v)
            return NULL;
        m->v = v;
        m->cap = cap;
    }
    c = m->v + i * size;
    memmove(c + size, c, (m->n - i) * size);
    memset(c, 0, size);
    memcpy(c, &uid, sizeof uid);
    m->n++;
    return c;
}

/* See uidmap.h. */
void weft_uidmap_remove(weft_uidmap *m, size_t i, size_t size)
{
    assert(i < m->n);
    memmove(m->v + i * size, m->v + (i + 1) * size, (m->n - i - 1) * size);
    m->n--;
}

/* See uidmap.h. */
void weft_uidmap_free(weft_uidmap *m)
{
    free(m->v);
    memset(m, 0, sizeof *m);
}

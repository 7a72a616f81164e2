/* hashtab.h - the one hash table: open addressing with linear probing
 * over cells of the caller's type whose first member is a uint32_t key,
 * 0 meaning a free cell (callers store id + 1). The table doubles when
 * half full and never shrinks; nothing is removed one by one.
 *
 * Header only (static inline): the converter probes it for every event
 * it sums, and every library may use it without linking another. The
 * cells' order is the probe order of Fibonacci hashing over the key in
 * 32-bit arithmetic, as the tables it replaced had, so what is walked in
 * cell order comes out as before.
 * Not thread safe; whoever owns the table owns its memory.
 */
#ifndef WEFT_HASHTAB_H
#define WEFT_HASHTAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct weft_hashtab {
    unsigned char *cells; /* ncells cells of the caller's size; NULL: none */
    size_t ncells;        /* 0 or a power of two, more than 2 x used */
    size_t used;          /* cells with a key */
} weft_hashtab;

/* The key of a cell (its first four bytes). */
static inline uint32_t weft_hashtab_key(const void *cell)
{
    uint32_t k;

    memcpy(&k, cell, sizeof k);
    return k;
}

/* The cell of key (not 0) in cells (n of `size` bytes, n a power of two
 * with a free one), or the free cell where it would go. */
static inline void *weft__hashtab_probe(unsigned char *cells, size_t n,
                                        size_t size, uint32_t key)
{
    size_t mask = n - 1, i = (key * 2654435761u) & mask;

    while (weft_hashtab_key(cells + i * size) &&
           weft_hashtab_key(cells + i * size) != key)
        i = (i + 1) & mask;
    return cells + i * size;
}

/* The cell of key (not 0) in t, whose cells are `size` bytes; NULL when
 * t holds no such key. */
static inline void *weft_hashtab_find(const weft_hashtab *t, uint32_t key,
                                      size_t size)
{
    void *c;

    if (!t->ncells)
        return NULL;
    c = weft__hashtab_probe(t->cells, t->ncells, size, key);
    return weft_hashtab_key(c) ? c : NULL;
}

/* The cell of key (not 0) in t, added (zero but for its key) when new;
 * NULL when out of memory (t unchanged). The cell is valid until the
 * next weft_hashtab_get. */
static inline void *weft_hashtab_get(weft_hashtab *t, uint32_t key,
                                     size_t size)
{
    unsigned char *c;

    if ((t->used + 1) * 2 > t->ncells) {
        size_t n = t->ncells ? t->ncells * 2 : 16;
        unsigned char *v = calloc(n, size);
        if (!v)
            return NULL;
        for (size_t i = 0; i < t->ncells; i++)
            if (weft_hashtab_key(t->cells + i * size))
                memcpy(weft__hashtab_probe(v, n, size,
                                           weft_hashtab_key(t->cells +
                                                            i * size)),
                       t->cells + i * size, size);
        free(t->cells);
        t->cells = v;
        t->ncells = n;
    }
    c = weft__hashtab_probe(t->cells, t->ncells, size, key);
    if (!weft_hashtab_key(c)) {
        memcpy(c, &key, sizeof key);
        t->used++;
    }
    return c;
}

/* Cell i of t (i < t->ncells) when it holds a key, else NULL: walks the
 * table in cell order. */
static inline void *weft_hashtab_at(const weft_hashtab *t, size_t i,
                                    size_t size)
{
    unsigned char *c = t->cells + i * size;

    return weft_hashtab_key(c) ? c : NULL;
}

/* Frees the cells; t is then the empty table again. */
static inline void weft_hashtab_free(weft_hashtab *t)
{
    free(t->cells);
    memset(t, 0, sizeof *t);
}

#endif

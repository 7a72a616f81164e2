/* hashtab.h - the one hash table: open addressing with linear probing
 * over cells of the caller's type whose first member is a uint32_t key,
 * 0 meaning a free cell (callers store id + 1). The table doubles when
 * half full and never shrinks; a key removed (weft_hashtab_del) moves
 * the cells after it in its probe run back, so no tombstones.
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

/* Where key's probe run starts in a table of n cells (a power of two). */
static inline size_t weft__hashtab_home(uint32_t key, size_t n)
{
    return (key * 2654435761u) & (n - 1);
}

/* The cell of key (not 0) in cells (n of `size` bytes, n a power of two
 * with a free one), or the free cell where it would go. */
static inline void *weft__hashtab_probe(unsigned char *cells, size_t n,
                                        size_t size, uint32_t key)
{
    size_t mask = n - 1, i = weft__hashtab_home(key, n);

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

/* Removes key from t if it is there: the cells after it in its probe
 * run move back (those whose run starts cyclically in (i, j] stay), so
 * that every find still finds its cell. Cells walked with
 * weft_hashtab_at may move: do not remove while walking. */
static inline void weft_hashtab_del(weft_hashtab *t, uint32_t key,
                                    size_t size)
{
    unsigned char *c = (unsigned char *)weft_hashtab_find(t, key, size);
    size_t mask = t->ncells - 1, i, j;

    if (!c)
        return;
    i = j = (size_t)(c - t->cells) / size;
    memset(c, 0, size);
    t->used--;
    for (;;) {
        size_t home;
        j = (j + 1) & mask;
        if (!weft_hashtab_key(t->cells + j * size))
            return;
        home = weft__hashtab_home(weft_hashtab_key(t->cells + j * size),
                                  t->ncells);
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        memcpy(t->cells + i * size, t->cells + j * size, size);
        memset(t->cells + j * size, 0, size);
        i = j;
    }
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

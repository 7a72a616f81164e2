/* uidmap.h - the one per-user table of the daemon: cells of the caller's
 * type whose first member is a uint32_t uid, kept in uid order in one
 * array (binary search). Few users, walked in uid order (convq's round
 * robin), so a sorted array rather than the hash table of hashtab.h.
 * Used by the conversion queue (convq.c) and the quota table
 * (quota.c). Not thread safe; the owner of the map
 * owns its memory.
 */
#ifndef WEFT_UIDMAP_H
#define WEFT_UIDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct weft_uidmap {
    unsigned char *v;    /* n cells in uid order, room for cap */
    size_t n, cap;
} weft_uidmap;

/* The index of uid's cell in m, or where it would go (0 to m->n). */
size_t weft_uidmap_find(const weft_uidmap *m, uint32_t uid, size_t size);
/* Cell i of m (i < m->n) for cells of `size` bytes. */
void *weft_uidmap_at(const weft_uidmap *m, size_t i, size_t size);
/* uid's cell in m, made (zero but for its uid) when new; NULL when out
 * of memory (m unchanged). Valid until m next changes. */
void *weft_uidmap_get(weft_uidmap *m, uint32_t uid, size_t size);
/* The cell of uid, NULL when m has none. */
void *weft_uidmap_lookup(const weft_uidmap *m, uint32_t uid, size_t size);
/* Removes cell i (i < m->n); the later ones move down one. */
void weft_uidmap_remove(weft_uidmap *m, size_t i, size_t size);
/* Frees the cells; m is then the empty map again. */
void weft_uidmap_free(weft_uidmap *m);

#endif

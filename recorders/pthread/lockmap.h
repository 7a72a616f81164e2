/* lockmap.h - lock object address -> lock id, for libweft-pthread: the
 * same id for the same lock object for the whole process, dense from 0,
 * and each lock's acquisition counter.
 *
 * DESIGN
 * Insert-only open addressing over a list of tables, each twice the size
 * of the one before. A lookup probes the tables in order without a lock
 * (keys are published with release stores after their entry is filled,
 * and never change); a miss takes the map's spin lock, looks again and
 * inserts into the newest table, adding a table when that one is 3/4
 * full. The spin lock is an atomic flag, not a pthread mutex, so the map
 * never calls what libweft-pthread wraps. Tables are never freed while
 * the process runs (pt_lockmap_free is for tests). A lock object whose
 * memory is reused for another lock keeps its address's id.
 */
#ifndef WEFT_PT_LOCKMAP_H
#define WEFT_PT_LOCKMAP_H

#include <stdatomic.h>
#include <stdint.h>

/* Tables: the first holds PT_LOCKMAP_FIRST entries, the k-th that << k. */
#define PT_LOCKMAP_FIRST 256u
#define PT_LOCKMAP_TABLES 24

/* One lock object. `key` is its address (0: free slot); `id` and `order`
 * are valid once key is seen. */
typedef struct pt_lock {
    _Atomic uintptr_t key;
    uint32_t id;
    _Atomic uint32_t order;  /* acquisitions so far (the next one's order) */
} pt_lock;

typedef struct pt_lockmap {
    pt_lock *_Atomic tables[PT_LOCKMAP_TABLES];
    _Atomic uint32_t ntables;   /* tables in use */
    uint32_t fill;              /* entries in the newest table; under busy */
    uint32_t next_id;           /* under busy */
    atomic_flag busy;           /* inserts */
} pt_lockmap;

/* A map initialised by this (or zero-filled static storage) is empty. */
#define PT_LOCKMAP_INIT { .busy = ATOMIC_FLAG_INIT }

/* The entry of lock object `addr` (not 0), added with the next id when
 * new. NULL when out of memory (or beyond the last table). Thread-safe. */
pt_lock *pt_lockmap_get(pt_lockmap *m, uintptr_t addr);
/* The entry of `addr` if it is in the map, else NULL. Thread-safe. */
pt_lock *pt_lockmap_find(pt_lockmap *m, uintptr_t addr);
/* Number of lock objects in the map. */
uint32_t pt_lockmap_count(pt_lockmap *m);
/* Frees the tables; the map is empty again. No other thread may use it. */
void pt_lockmap_free(pt_lockmap *m);

#endif

/* addrmap.h - a process-wide map from code address to a 32-bit value, read
 * without locks: libweft-instrument's "which region is this function".
 *
 * DESIGN
 * Open addressing with linear probing over slots {key, value}; key 0 is
 * an empty slot. Entries are only ever added, never changed or removed,
 * which is what makes lock-free reading simple: a writer stores the value
 * and then publishes the key with release order; a reader that sees the
 * key (acquire) sees its value. Writers are serialized by the caller's
 * lock. When the table is half full the writer builds one twice as large,
 * copies every entry and publishes it (release); the old table stays
 * allocated, chained from the new one, because readers may still be
 * probing it. A reader in an old table may miss an entry added since:
 * a miss is therefore only a hint, to be confirmed under the writers'
 * lock (weft__addrmap_get again) before anything is added.
 */
#ifndef WEFT_ADDRMAP_H
#define WEFT_ADDRMAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Slots of the first table, and the most a table may have (then put gives
 * WEFT_ELIMIT): 16 bytes each, so 64 MiB for about two million keys. */
#define WEFT__ADDRMAP_MIN_SLOTS 4096
#define WEFT__ADDRMAP_MAX_SLOTS ((size_t)1 << 22)

typedef struct weft__addrmap_slot {
    _Atomic uintptr_t key;   /* 0: empty; published last (release) */
    _Atomic uint32_t value;  /* written before key, never after */
} weft__addrmap_slot;

typedef struct weft__addrmap_table {
    size_t mask;                       /* slots - 1, slots a power of 2 */
    unsigned shift;                    /* 64 - log2(slots), for the hash */
    struct weft__addrmap_table *prev;  /* the table this one replaced */
    weft__addrmap_slot slot[];
} weft__addrmap_table;

typedef struct weft__addrmap {
    _Atomic(weft__addrmap_table *) cur; /* NULL until the first put */
    size_t count;                       /* keys; writers only */
} weft__addrmap;

#define WEFT__ADDRMAP_INIT { NULL, 0 }

/* Fibonacci hashing: code addresses are aligned and clustered, the top
 * bits of the product are well spread. */
__attribute__((no_instrument_function)) static inline size_t
weft__addrmap_hash(uintptr_t key, unsigned shift)
{
    return (size_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> shift);
}

/* Looks `key` (not 0) up without locking, from any thread, concurrently
 * with one writer. 1 with *value if found, 0 if not (see DESIGN: a miss
 * must be confirmed under the writers' lock). */
__attribute__((no_instrument_function)) static inline int
weft__addrmap_get(weft__addrmap *m, uintptr_t key, uint32_t *value)
{
    weft__addrmap_table *t =
        atomic_load_explicit(&m->cur, memory_order_acquire);
    size_t i;

    if (!t)
        return 0;
    for (i = weft__addrmap_hash(key, t->shift);; i = (i + 1) & t->mask) {
        uintptr_t k =
            atomic_load_explicit(&t->slot[i].key, memory_order_acquire);

        if (k == key) {
            *value = atomic_load_explicit(&t->slot[i].value,
                                          memory_order_relaxed);
            return 1;
        }
        if (k == 0)
            return 0;
    }
}

/* Adds key (not 0) -> value. The caller holds the writers' lock and has
 * checked that key is absent. Returns 0, WEFT_EINVAL for key 0,
 * WEFT_EEXIST if present, WEFT_ELIMIT when the table would outgrow
 * WEFT__ADDRMAP_MAX_SLOTS, or WEFT_ENOMEM; the map is unchanged on error. */
int weft__addrmap_put(weft__addrmap *m, uintptr_t key, uint32_t value);

/* Frees every table. No reader or writer may be using the map. */
void weft__addrmap_free(weft__addrmap *m);

#endif

/* lockmap.c - lock object address -> lock id (see lockmap.h). */
#include "lockmap.h"

#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

static uint32_t table_size(uint32_t k)
{
    return PT_LOCKMAP_FIRST << k;
}

/* Not proto/hashtab.h (the one table): readers look up without a lock
 * while another thread inserts, and the tables are mmap'd pages, never
 * malloc (the lock may be malloc's own). */

/* Fibonacci hashing of the address, without its alignment bits. */
static uint32_t hash(uintptr_t addr, uint32_t size)
{
    uint64_t h = ((uint64_t)addr >> 3) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32) & (size - 1);
}

/* Entry of addr in table t of `size` entries, or the free slot where it
 * would go (*free_slot), or NULL and *free_slot NULL when it is full. */
static pt_lock *probe(pt_lock *t, uint32_t size, uintptr_t addr,
                      pt_lock **free_slot)
{
    uint32_t i = hash(addr, size);

    *free_slot = NULL;
    for (uint32_t n = 0; n < size; n++, i = (i + 1) & (size - 1)) {
        uintptr_t k = atomic_load_explicit(&t[i].key, memory_order_acquire);
        if (k == addr)
            return &t[i];
        if (k == 0) {
            *free_slot = &t[i];
            return NULL;
        }
    }
    return NULL;
}

/* See lockmap.h. */
pt_lock *pt_lockmap_find(pt_lockmap *m, uintptr_t addr)
{
    uint32_t n = atomic_load_explicit(&m->ntables, memory_order_acquire);
    pt_lock *free_slot;

    for (uint32_t k = 0; k < n; k++) {
        pt_lock *t = atomic_load_explicit(&m->tables[k],
                                          memory_order_acquire);
        pt_lock *e = probe(t, table_size(k), addr, &free_slot);
        if (e)
            return e;
    }
    return NULL;
}

static void lock_map(pt_lockmap *m)
{
    while (atomic_flag_test_and_set_explicit(&m->busy, memory_order_acquire))
        sched_yield();
}

static void unlock_map(pt_lockmap *m)
{
    atomic_flag_clear_explicit(&m->busy, memory_order_release);
}

/* Adds addr to the newest table (a new one when it is 3/4 full). busy
 * held. */
static pt_lock *insert_locked(pt_lockmap *m, uintptr_t addr)
{
    uint32_t n = atomic_load_explicit(&m->ntables, memory_order_relaxed);
    pt_lock *t, *slot = NULL;

    if (n == 0 || m->fill >= table_size(n - 1) / 4 * 3) {
        if (n == PT_LOCKMAP_TABLES)
            return NULL;
        /* Pages, not calloc: the lock may be the one the program's own
         * malloc holds. */
        t = mmap(NULL, table_size(n) * sizeof *t, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t == MAP_FAILED)
            return NULL;
        atomic_store_explicit(&m->tables[n], t, memory_order_release);
        atomic_store_explicit(&m->ntables, n + 1, memory_order_release);
        m->fill = 0;
        n++;
    }
    t = atomic_load_explicit(&m->tables[n - 1], memory_order_relaxed);
    probe(t, table_size(n - 1), addr, &slot);
    if (!slot)
        return NULL; /* cannot happen below 3/4 full */
    slot->id = m->next_id++;
    atomic_store_explicit(&slot->order, 0, memory_order_relaxed);
    atomic_store_explicit(&slot->key, addr, memory_order_release);
    m->fill++;
    return slot;
}

/* See lockmap.h. */
pt_lock *pt_lockmap_get(pt_lockmap *m, uintptr_t addr)
{
    pt_lock *e = pt_lockmap_find(m, addr);

    if (e || addr == 0)
        return e;
    lock_map(m);
    e = pt_lockmap_find(m, addr);
    if (!e)
        e = insert_locked(m, addr);
    unlock_map(m);
    return e;
}

/* See lockmap.h. */
uint32_t pt_lockmap_count(pt_lockmap *m)
{
    uint32_t n;

    lock_map(m);
    n = m->next_id;
    unlock_map(m);
    return n;
}

/* See lockmap.h. */
void pt_lockmap_free(pt_lockmap *m)
{
    uint32_t n = atomic_load(&m->ntables);

    for (uint32_t k = 0; k < n; k++) {
        munmap(atomic_load(&m->tables[k]), table_size(k) * sizeof(pt_lock));
        atomic_store(&m->tables[k], NULL);
    }
    atomic_store(&m->ntables, 0);
    m->fill = 0;
    m->next_id = 0;
}

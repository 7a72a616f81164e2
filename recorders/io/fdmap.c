/* fdmap.c - libweft-io's descriptor map (see fdmap.h). */
#include "fdmap.h"

#include <stddef.h>
#include <sys/mman.h>

/* The chunk of fd, allocated when `create`; NULL when out of range or
 * out of memory. */
static _Atomic uint64_t *chunk_of(io_fdmap *m, int fd, int create)
{
    size_t c;
    _Atomic uint64_t *p, *expect = NULL;

    if (fd < 0 || (unsigned)fd / IO_FDMAP_CHUNK >= IO_FDMAP_CHUNKS)
        return NULL;
    c = (unsigned)fd / IO_FDMAP_CHUNK;
    p = atomic_load_explicit(&m->chunk[c], memory_order_acquire);
    if (p || !create)
        return p;
    p = mmap(NULL, IO_FDMAP_CHUNK * sizeof *p, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (!atomic_compare_exchange_strong_explicit(&m->chunk[c], &expect, p,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire)) {
        munmap(p, IO_FDMAP_CHUNK * sizeof *p);
        p = expect;
    }
    return p;
}

/* See fdmap.h. */
uint64_t io_fdmap_get(io_fdmap *m, int fd)
{
    _Atomic uint64_t *p = chunk_of(m, fd, 0);

    return p ? atomic_load_explicit(&p[(unsigned)fd % IO_FDMAP_CHUNK],
                                    memory_order_acquire)
             : 0;
}

/* See fdmap.h. */
uint64_t io_fdmap_set(io_fdmap *m, int fd, uint64_t e)
{
    _Atomic uint64_t *p = chunk_of(m, fd, e != 0);

    return p ? atomic_exchange_explicit(&p[(unsigned)fd % IO_FDMAP_CHUNK], e,
                                        memory_order_acq_rel)
             : 0;
}

/* See fdmap.h. */
uint64_t io_fdmap_take(io_fdmap *m, int fd)
{
    return io_fdmap_set(m, fd, 0);
}

/* See fdmap.h. */
void io_fdmap_clear(io_fdmap *m)
{
    for (size_t c = 0; c < IO_FDMAP_CHUNKS; c++) {
        _Atomic uint64_t *p = atomic_load(&m->chunk[c]);
        for (size_t i = 0; p && i < IO_FDMAP_CHUNK; i++)
            atomic_store(&p[i], 0);
    }
}

/* fdmap.h - a lock-free map from descriptor numbers to 64-bit entries
 * (a handle and its file), for libweft-io.
 *
 * DESIGN
 * Descriptors are small integers the kernel hands out lowest first, so
 * the map is a two-level array: IO_FDMAP_CHUNKS chunk pointers, each
 * chunk IO_FDMAP_CHUNK atomic entries, allocated with mmap on first use
 * (async-signal-safe, and no malloc that a wrapped allocator could see)
 * and installed with a compare-and-swap; chunks live as long as the
 * process. Reads, writes and removals are single atomic operations, so
 * threads, signal handlers and the child of a fork() (which may have
 * been forked in the middle of any of them) always see whole entries.
 * Entry 0 means "no handle".
 */
#ifndef WEFT_IO_FDMAP_H
#define WEFT_IO_FDMAP_H

#include <stdatomic.h>
#include <stdint.h>

#define IO_FDMAP_CHUNK 4096u
#define IO_FDMAP_CHUNKS 1024u   /* descriptors 0 .. 4M-1 */

typedef struct io_fdmap {
    _Atomic(_Atomic uint64_t *) chunk[IO_FDMAP_CHUNKS];
} io_fdmap;

/* An entry: handle and file ids (file may be OTF2_UNDEFINED_IO_FILE);
 * handle must be below UINT32_MAX. Never 0. */
static inline uint64_t io_entry(uint32_t handle, uint32_t file)
{
    return (uint64_t)file << 32 | (uint32_t)(handle + 1);
}
static inline uint32_t io_entry_handle(uint64_t e)
{
    return (uint32_t)e - 1;
}
static inline uint32_t io_entry_file(uint64_t e)
{
    return (uint32_t)(e >> 32);
}

/* The entry of fd, 0 when none (or fd out of range). */
uint64_t io_fdmap_get(io_fdmap *m, int fd)
    __attribute__((visibility("hidden")));
/* Sets fd's entry to e (0 removes) and returns the old one. Returns 0 and
 * sets nothing when fd is out of range or no memory is left for its
 * chunk. */
uint64_t io_fdmap_set(io_fdmap *m, int fd, uint64_t e)
    __attribute__((visibility("hidden")));
/* Removes and returns fd's entry (0 if none). */
uint64_t io_fdmap_take(io_fdmap *m, int fd)
    __attribute__((visibility("hidden")));
/* Forgets every entry (chunks stay). */
void io_fdmap_clear(io_fdmap *m) __attribute__((visibility("hidden")));

#endif

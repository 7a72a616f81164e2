/* seeds.h - what the parts of mkseeds share: a seed being built (buf),
 * writing it to the corpus of a fuzzer, record streams and frames, and
 * each part's seeds (seeds_daemon.c: fuzz_daemon's and fuzz_client's;
 * seeds_journal.c: fuzz_journal's; mkseeds.c: the rest and main).
 */
#ifndef WEFT_FUZZ_SEEDS_H
#define WEFT_FUZZ_SEEDS_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "weft.pb-c.h"

#define BUF_MAX 4096

typedef struct buf {
    uint8_t b[BUF_MAX];
    size_t len;
} buf;

extern const char *outdir;       /* the corpus directory */

/* Says what failed and exits 1. */
void die(const char *what);
/* Appends to b (dies when it would exceed BUF_MAX). */
void put(buf *b, const void *p, size_t n);
void put_byte(buf *b, uint8_t v);
void put_u64le(buf *b, uint64_t v);
void put_u32le(buf *b, uint32_t v);
/* Appends r encoded (*prev: the previous event's time, or NULL). */
void put_record(buf *b, const weft_record *r, uint64_t *prev);
/* Writes b as outdir/target/name. */
void write_seed(const char *target, const char *name, const buf *b);
/* A member's Definitions records. */
void definitions(buf *b);
/* Events of thread 0 from time `base` on; returns how many. */
unsigned events(buf *b, uint64_t base);
/* Appends env as one frame. */
void put_frame(buf *b, Weft__Envelope *env);
/* Two ClockOffsets, the later one first. */
void clock_offsets(buf *b);

/* fuzz_daemon's seeds, over the Unix socket and TCP, and fuzz_client's. */
void daemon_client_seeds(void);
/* fuzz_journal's seeds: member journals. */
void journal_seeds(void);

#endif

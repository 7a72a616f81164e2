/* memberin.h - what ingest keeps of a member while it receives it: the
 * ids its Definitions defined (validate.c; each with its weft_decl
 * where one is kept) and, with durability = fsync, the acks waiting for
 * an fdatasync (session.c). A weft_member holds one (trace.h, `in`);
 * only daemon/ingest/ reads or writes it, the trace lifecycle frees it
 * with the member and asks whether a sync is out. Loop thread.
 */
#ifndef WEFT_MEMBERIN_H
#define WEFT_MEMBERIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "idset.h"
#include "record.h"

/* An ack held back until the journal is on stable storage. */
typedef struct weft_ack {
    uint8_t definitions;
    uint32_t location;
    uint64_t seq;
} weft_ack;

typedef struct weft_ackq {
    weft_ack *v;
    size_t n, cap;
} weft_ackq;

typedef struct weft_memberin {
    weft_idset defined[WEFT_REF__COUNT]; /* ids defined; value 1, or
                                     the weft_decl where one is kept */
    /* durability = fsync: acks of entries written since the running
     * fdatasync began wait in `waiting`; those it covers in `syncing`. */
    weft_ackq waiting;
    weft_ackq syncing;
    int sync_running;             /* an fdatasync job is in flight */
} weft_memberin;

/* Frees what in holds; in is then empty. */
static inline void weft_memberin_free(weft_memberin *in)
{
    for (int k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&in->defined[k]);
    free(in->waiting.v);
    free(in->syncing.v);
    in->waiting = in->syncing = (weft_ackq){ NULL, 0, 0 };
}

#endif

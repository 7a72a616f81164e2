/* commsum.h - who sent what to whom in an MPI trace (issue #17): the
 * bytes and messages of MpiSend and MpiIsend per sender and receiver
 * world rank, gathered while the converter writes the events, for
 * `weft report`'s communication matrix.
 *
 * A send names its receiver as a rank of its communicator; the map
 * (weft_commmap, built from the unified definitions once pass 1 is done,
 * then read only) turns that into a world rank: the Comm's COMM_GROUP
 * lists indices into the COMM_LOCATIONS group of its paradigm, whose
 * members are location ids (rank << 32 | thread in weftd's archives;
 * an imported archive's own ids, ranked by the caller). Each member being
 * replayed sums its own sends (weft_commsum, owned by its replayer).
 */
#ifndef WEFT_COMMSUM_H
#define WEFT_COMMSUM_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "defview.h"
#include "hashtab.h"

/* A receiver rank the map cannot name. */
#define WEFT_COMMMAP_UNKNOWN UINT32_MAX

typedef struct weft_commmap {
    uint32_t **ranks;    /* by Comm id: world rank of each comm rank
                            (NULL: not an intra-communicator we can map) */
    uint32_t *nranks;
    size_t ncomms;
} weft_commmap;

/* The world rank of location id loc (ctx: the caller's). */
typedef uint32_t (*weft_commmap_rank_fn)(const void *ctx, uint64_t loc);

/* Builds m from defs' Comm and Group definitions; rank_of(ctx, id) is the
 * world rank of a location of a COMM_LOCATIONS group (NULL: weftd's own
 * location ids, rank << 32 | thread; weft import passes the archive's).
 * 0 or WEFT_ENOMEM; weft_commmap_free frees m either way. */
int weft_commmap_build(weft_commmap *m, const weft_defview *defs,
                       weft_commmap_rank_fn rank_of, const void *ctx);
void weft_commmap_free(weft_commmap *m);

/* World rank of rank `rank` of global Comm comm, WEFT_COMMMAP_UNKNOWN
 * when the definitions do not say. */
static inline uint32_t weft_commmap_world(const weft_commmap *m,
                                          uint32_t comm, uint32_t rank)
{
    if (comm >= m->ncomms || !m->ranks[comm] || rank >= m->nranks[comm])
        return WEFT_COMMMAP_UNKNOWN;
    return m->ranks[comm][rank];
}

/* One receiver of a sender. key: receiver + 1; 0: empty. */
typedef struct weft_commsum_cell {
    uint32_t key;
    uint64_t messages, bytes;
} weft_commsum_cell;

/* What one sender sent, by receiver (cells: weft_commsum_cell). */
typedef struct weft_commsum {
    weft_hashtab t;
} weft_commsum;

/* Adds a message of `bytes` to receiver. 0 or WEFT_ENOMEM. */
int weft_commsum_add(weft_commsum *s, uint32_t receiver, uint64_t bytes);
void weft_commsum_free(weft_commsum *s);

/* Appends the cells of s as rows from sender to *rows (*n of them,
 * *cap allocated; realloc'd), by receiver. 0 or WEFT_ENOMEM. */
int weft_commsum_rows(const weft_commsum *s, uint32_t sender,
                      weft_message_row **rows, size_t *n, size_t *cap);

/* Keeps the max rows of most bytes of v (n of them), in sender, receiver
 * order; returns how many remain. */
size_t weft_commsum_cap(weft_message_row *v, size_t n, size_t max);

#endif

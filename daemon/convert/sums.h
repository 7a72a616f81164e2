/* sums.h - a member's sums: what the replay of its events summed (its
 * locations' replay state, profile, timelines, metric series, its sends,
 * I/O and nesting counts), moved into a conversion that adopts the
 * member instead of replaying it: from a stream of the same weftd
 * (stream.c), or from the MemberSums bytes a node's stream packed
 * (weft.proto; issue #34, step B), which are checked here before use.
 * Conversion's thread (a stream's packing: its stepping thread).
 */
#ifndef WEFT_SUMS_H
#define WEFT_SUMS_H

#include <stddef.h>
#include <stdint.h>

#include "convert_internal.h"

/* What a member's replay counted besides its locations, sends, I/O and
 * nested: its nesting's anomalies, added Enters and Leaves and unmatched
 * Leaves, and the locations its events named. */
typedef struct weft__nesting {
    uint64_t anomalies, added, unmatched;
    uint64_t *loc_refs;     /* malloc'd */
    size_t nloc_refs;
} weft__nesting;

/* Locations of one member's sums, and locations they name, at most:
 * max_locations' ceiling (config). */
#define WEFT_SUMS_MAX_LOCATIONS (UINT32_C(1) << 20)

/* What a member's sums must agree with: the member as the head's pass 1
 * made it (weft__sums_want_of). */
typedef struct weft__sums_want {
    uint32_t rank;
    uint32_t size;          /* ranks of the trace: receivers and the
                               locations named are of ranks below it */
    uint64_t resolution;    /* the archive's */
    int rescale;            /* the member's ticks are scaled to ns */
    uint64_t timer_resolution; /* its rate */
    uint64_t ndefs, nregions, nmetric_members, nio_handles; /* its
                               unifier's (m->u) */
} weft__sums_want;

/* Sums decoded: a member holding only what adoption moves (rank, locs
 * sorted by thread with their replay state and refused events, sends,
 * io, nested, refused_*; no path, no unifier) and its nesting. */
typedef struct weft__sums {
    member m;
    weft__nesting n;
} weft__sums;

/* Moves what `from` (a stream's member, or sums decoded) summed of m
 * into conversion c (pass 1 done, c->archive open): each location's
 * replay state and sums (a location `from` wrote no event of gets an
 * empty event file; one that has events is never opened), its sends,
 * I/O and nesting counts (n), the locations its events named, its time
 * range; m is then adopted (pass 2 only finishes it). 0 or the code of a
 * failure (c failed). */
int weft__sums_adopt(conv *c, member *m, member *from, weft__nesting *n);

/* The MemberSums of member m of stream conversion c (done: its writers
 * closed, its timelines finished) with nesting n, packed into *buf
 * (malloc'd, *len bytes, the caller's). 0, WEFT_ENOMEM, or WEFT_ESTATE
 * when m is not done (a region still open). Pure. */
int weft__sums_pack(const conv *c, const member *m, const weft__nesting *n,
                    uint8_t **buf, size_t *len);

/* What member m of conversion c (pass 1 and the resolution done) checks
 * its sums against. */
weft__sums_want weft__sums_want_of(const conv *c, const member *m);

/* Decodes and checks the len bytes at buf as the MemberSums of the
 * member w describes: every count, id, index and time bounded (a
 * node's bytes, from the network). 0 with *out (weft__sums_free), or
 * WEFT_ECORRUPT (or WEFT_ENOMEM) with what was wrong in err. Pure. */
int weft__sums_unpack(const weft__sums_want *w, const uint8_t *buf,
                      size_t len, weft__sums **out, char *err,
                      size_t errlen);
/* Frees s and all it holds; NULL is fine. */
void weft__sums_free(weft__sums *s);

/* Before pass 1: marks each member that c->in->remote names (its own
 * ids then number what a node's stream numbered). 0 or WEFT_EINVAL (a
 * rank without journal, or named twice; c failed). */
int weft__sums_mark_remote(conv *c);
/* After pass 1 and the resolution: each remote member's sums decoded
 * and checked (kept in m->sums, its locations made, their event counts
 * the node's), or the member marked lost without sums. 0 or a WEFT_E*
 * code naming the member (c failed). */
int weft__sums_gather(conv *c);
/* Once c has its archive (the stream's, c->archive; NULL: it is made
 * anew, the nodes' event files gone): each remote member adopted from
 * its sums, or lost (then its rank's event files that its locations do
 * not name are removed). 0 or the code of a failure (c failed). */
int weft__sums_adopt_remote(conv *c);

#endif

/* stream_internal.h - what the two files of a stream share: stream.c
 * (the stream's own interface, convert.h's weft_convert_stream_*, and
 * its steps) and stream_take.c (what a conversion takes of it,
 * stream.h). Not for other files.
 */
#ifndef WEFT_STREAM_INTERNAL_H
#define WEFT_STREAM_INTERNAL_H

#include <stdint.h>

#include "convert_internal.h"
#include "sums.h"

/* The stream's record of one member. */
typedef struct weft__smember {
    uint64_t next;          /* journal offset of the next entry to read */
    int live;               /* 0: left to the conversion */
    int goodbye;            /* its Goodbye was read */
    int done;               /* its open regions left, its writers closed */
    int over;               /* a flush took its writers past the budget:
                               why (budget_take) */
    uint64_t bytes;         /* of the budget's, held */
    weft_profile prof;      /* its profile (its regions so far) */
    weft_commmap cmap;      /* its maps, as its definitions were ... */
    weft_metricmap mmap;
    weft_callcounts ccount;
    size_t ndefs;           /* ... when they were made (weft_unify_ndefs) */
    weft__nesting n;        /* its nesting's counts, the locations its
                               events name */
    char *why;              /* why it was left to the conversion */
    int packed;             /* its sums were packed: its files are its
                               head's (a failure later leaves them) */
} smember;

struct weft_convert_stream {
    weft_convert_input in;
    char *trace_dir, *archive_dir, *trace_name; /* in's, owned */
    conv c;                 /* streaming: its members, by rank */
    size_t mems_cap;
    chunk_budget pool;      /* the archive's (its callbacks' data) */
    weft_convert_result out; /* c.out: its error */
    weft_convert_budget *budget; /* may be NULL */
    uint32_t owner;         /* uid: its share of the budget */
    OTF2_Archive *primary;  /* the archive: made first (its directories),
                               it writes the anchor and definitions once
                               the conversion has it; c.archive writes
                               only the event files (otf2out.h) */
    int opened;             /* the archive was made */
    int broken;             /* the archive failed: the conversion makes it
                               anew */
    uint64_t nlocs;         /* locations made so far (the report's plan) */
    uint64_t written;       /* bytes of full chunks flushed, under
                               pool.lock */
};

/* The rate of the trace's first process (rank 0), which the archive's
 * timer resolution is (convclock.c) when every process keeps its ticks:
 * from its journal's Hello; 0 while it has none. */
uint64_t weft__stream_first_rate(weft_convert_stream *s);
/* The stream's resolution res, and its report plan with it. */
void weft__stream_set_resolution(weft_convert_stream *s, uint64_t res);
/* Whether the archive failed (any thread). */
int weft__stream_broken(weft_convert_stream *s);
/* The archive failed (the disk, libotf2): nothing more is written to it
 * (any thread; weft__stream_tidy removes what s wrote). */
void weft__stream_set_broken(weft_convert_stream *s);
/* A failed archive is removed at once, so that the journals have its
 * room, and its writers' memory goes back (no step running). */
void weft__stream_tidy(weft_convert_stream *s);
/* m is left to the conversion (rc: why); or, for a failure of the
 * archive, the whole stream is (its error kept in c's). */
void weft__stream_give_up(weft_convert_stream *s, conv *c, member *m,
                          int rc);
/* Reads m's journal from where the stream stopped; ends m once its
 * Goodbye and the end of its journal were read (or at once with
 * `last`). 0 or the code of a failure (c failed). */
int weft__stream_read_member(weft_convert_stream *s, conv *c, member *m,
                             int last);

#endif

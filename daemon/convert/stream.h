/* stream.h - what a conversion (convert.c) asks of the stream that wrote
 * its trace ahead of it (stream.c; the stream's own interface is
 * convert.h's weft_convert_stream_*). Conversion's thread.
 */
#ifndef WEFT_STREAM_H
#define WEFT_STREAM_H

#include "convert_internal.h"

/* Whether s is a node's (weft_convert_input.events_only). */
int weft__stream_events_only(const weft_convert_stream *s);
/* s reads what its members' journals hold beyond what it wrote, and
 * ends every member it still writes (as at a journal's end), on up to
 * nthreads threads (this one and those it starts), a member each at a
 * time. */
void weft__stream_catch_up(weft_convert_stream *s, unsigned nthreads);
/* s's archive, with its members' event files, for the conversion to
 * finish (*pool: the chunk budget its callbacks were given, s's); NULL
 * when s has none or failed (weft_convert_stream_free closes it). */
OTF2_Archive *weft__stream_archive(weft_convert_stream *s,
                                   chunk_budget **pool);
/* Marks adopted each member of c (pass 1 done, s's archive c's) that s
 * wrote whole as the conversion would have (not a remote one), and moves
 * what s summed of it to c: its unifier, and what weft__sums_adopt
 * moves. 0 or the code of a failure (c failed). */
int weft__stream_adopt(weft_convert_stream *s, conv *c);
/* libotf2 flushes a chunk of location's events for stream c (its conv)
 * before the writer closes: counted as written, and at the location's
 * first its file buffer is charged to the streams' budget (otf2out.c's
 * pre-flush callback, on the stream's thread). */
void weft__stream_flushed(conv *c, uint64_t location);

#endif

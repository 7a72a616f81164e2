/* replay.h - pass 2 of a conversion: the members' event batches replayed
 * through libotf2's event writers, on worker threads, with every
 * location made to nest and the region profile fed on the way.
 */
#ifndef WEFT_REPLAY_H
#define WEFT_REPLAY_H

#include "convert_internal.h"

/* Replays every member of c (pass 1 done, c->archive open with its
 * event files) on up to c->in->threads threads, merges what they
 * gathered into c in rank order (time range, referenced locations,
 * profile sums and rows, nesting counts), then gives the locations that
 * records name but where nothing was recorded an empty event file.
 * Returns 0, or the code and error (c->out->error) of the lowest rank
 * that failed, or of what failed after. Called on the conversion's
 * thread. */
int weft__replay(conv *c);
/* A copy of c for another thread (*to): the shared fields c's, its own
 * ones (marked "own", convert_internal.h) new and empty, its error into
 * out. 0 or WEFT_ENOMEM; weft__replay_copy_free frees what it got
 * either way. */
int weft__replay_copy(conv *to, const conv *c, weft_convert_result *out);
void weft__replay_copy_free(conv *c);
/* Threads for pass 2: in->threads or the online CPUs, at most
 * WEFT_CONVERT_MAX_THREADS and at most one per member. */
unsigned weft__replay_threads(const conv *c);

/* Replays member m whole (replay.c): its maps, its locations' writers
 * (in groups when they are more than its share of c's), its journal, its
 * sums taken to the trace's ids. 0 or the code of a failure (c failed).
 * Any worker thread, on its own copy of c. */
int weft__replay_member(conv *c, member *m);

/* What a member's replay is made of, for a stream (stream.c) too:
 *
 * Replays the events entry e at off of m's journal, for location l
 * (its writer open), and checks it holds the events it announces (a
 * weft__replay_fn). 0 or the code of a failure (c failed). */
int weft__replay_events(conv *c, member *m, loc *l,
                        const weft_journal_entry *e, uint64_t off);
/* m's journal is done: leaves what is still open on its locations. */
int weft__replay_nest_finish(conv *c, member *m);
/* Closes the writers open on m's locations (their event counts
 * checked). */
int weft__replay_close_writers(conv *c, member *m);
/* c->prof (regions so far, keeping `keep` rows per location), c->cmap,
 * c->mmap and c->ccount of m's own definitions (m->u), in which its
 * events are summed. 0 or WEFT_ENOMEM (c failed);
 * weft__replay_maps_free frees them either way. */
int weft__replay_maps(conv *c, const member *m, size_t keep);
void weft__replay_maps_free(conv *c);
/* The time range of c widened by m's locations' first and last events
 * (a member a stream replayed, m's ClockOffsets known now; not one whose
 * corrected times may fall, m->each_time). */
void weft__replay_note_times(conv *c, const member *m);

#endif

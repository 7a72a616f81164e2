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

#endif

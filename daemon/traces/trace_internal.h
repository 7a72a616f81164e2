/* trace_internal.h - what the files of the trace lifecycle share among
 * themselves (trace.c: joining, leaving, recovery; lifecycle.c: the
 * states and their lists; ended.c: the runs that ended; conversion.c:
 * the conversion jobs). Only daemon/traces/ includes it. Loop thread.
 */
#ifndef WEFT_TRACE_INTERNAL_H
#define WEFT_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* trace.c: frees t, on no list, its members and its quota charge. */
void weft__trace_free(weft_trace *t);

/* lifecycle.c: puts t, new and RECORDING, on its state's list. */
void weft__trace_push(weft_trace *t);

/* conversion.c: t just became CONVERTING: hands it to a conversion job
 * (its journals closed), or moves it on with FINISHED (freed) when none
 * can be queued. */
void weft__trace_convert(weft_trace *t);

/* ended.c: remembers the run of t, which stops recording now. */
void weft__ended_remember(weft_trace *t);
/* The ended run (uid, name, run), NULL if none is remembered. */
const weft_ended_run *weft__ended_find(const weft_daemon *d, uint32_t uid,
                                       const char *name, const char *run);
/* A process of run e says Hello again (rank): WEFT_ECLOSED, err saying
 * why. */
int weft__ended_refuse(const weft_ended_run *e, uint32_t rank, char *err,
                       size_t errlen);
/* Forgets every ended run (at exit). */
void weft__ended_free_all(weft_daemon *d);

#endif

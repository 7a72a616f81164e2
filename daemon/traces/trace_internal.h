/* trace_internal.h - what the files of the trace lifecycle share among
 * themselves (trace.c: joining, leaving, recovery; lifecycle.c: the
 * states and their lists; ended.c: the runs that ended; conversion.c:
 * the conversion jobs; convq.c: their queue), and their state, d->traces.
 * Only daemon/traces/ includes it (and tests). Loop thread.
 */
#ifndef WEFT_TRACE_INTERNAL_H
#define WEFT_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

struct weft_convq;
struct weft_worker;

/* Lists of traces: one per state of enum weft_trace_state but DONE. */
#define WEFT_TRACE_LISTS 5

/* The lifecycle's state (d->traces; weft_traces_init). */
typedef struct weft_traces {
    /* the traces by lifecycle state (enum weft_trace_state, but DONE),
     * newest first: walk them with weft_trace_first/next */
    weft_trace *lists[WEFT_TRACE_LISTS];
    weft_ended_run *ended_runs;   /* runs whose trace ended, newest first
                                     (trace.h) */
    uint64_t nended_runs;
    unsigned converting;          /* conversions in flight: queued for a
                                     max_conversions slot or running */
    unsigned conversions_peak;    /* most conversions that ran at once */
    struct weft_convq *convq;     /* those waiting for a slot (convq.h):
                                     made by the first conversion, freed
                                     by weft_trace_free_all */
    struct weft_worker *converter; /* conversions (conversion.c), while
                                     there are some (it sets this to NULL
                                     when it stops) */
} weft_traces;

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

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

#include "convert.h"
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
    struct weft_worker *streamer; /* recording traces' streams' steps
                                     (streamjob.c), while there are some */
    weft_convert_budget stream_budget; /* event writers the streams hold
                                     (convert_memory's) */
} weft_traces;

/* trace.c: frees t, on no list, its members and its quota charge. */
void weft__trace_free(weft_trace *t);

/* tree.c: a process tree (trace.h's tree).
 * The rank of h's new member of tree t: the next one, within max_members
 * (a new member asks with rank UINT32_MAX). 0, or the WEFT_E* code with
 * err (*limit for the limit). */
int weft__tree_rank(const weft_trace *t, const Weft__Hello *h,
                    uint32_t *rank, enum weft_limit *limit, char *err,
                    size_t errlen);
/* Member in joined tree t (or was restored): its rank and pid are
 * taken, t's size counts it, and t waits no more for its process. */
void weft__tree_joined(weft_trace *t, const weft_memberin *in);
/* Member in of tree t left after its Goodbye: t waits for the processes
 * it named (its exec, its children still running). */
void weft__tree_left(weft_trace *t, const weft_memberin *in);
/* Stops waiting for processes of tree t that ended or did not join
 * within abort_grace_period. 1 when it stopped waiting for any. */
int weft__tree_check(weft_trace *t);
/* Frees what t holds as a tree (weft__trace_free). */
void weft__tree_free(weft_trace *t);

/* trace.c: ends t (RECORDING) if every member is done (a part's head
 * said where its archive is). */
void weft__trace_check_done(weft_trace *t);

/* lifecycle.c: puts t, new and RECORDING, on its state's list. */
void weft__trace_push(weft_trace *t);

/* conversion.c: closes the journals of t's members (it ends: its job
 * reads them). */
void weft__trace_close_journals(weft_trace *t);
/* conversion.c: removes the files of dir named as journals ("rank-*.wj",
 * malformed ones too, as weft_journal_name_parse tells them). */
void weft__trace_remove_journals(const char *dir);
/* A conversion (or a part's end) that failed for a cause that may go
 * away (a full disk, an unwritable directory, libotf2, the catalog) is
 * tried again after a delay that doubles from the minimum up to the
 * maximum (ms). */
#define WEFT_RETRY_MIN_MS 2000
#define WEFT_RETRY_MAX_MS 600000
/* conversion.c: t's next delay (its last one doubled). */
uint64_t weft__trace_retry_delay(const weft_trace *t);
/* conversion.c: t just became CONVERTING: hands it to a conversion job
 * (its journals closed), or moves it on with FINISHED (freed) when none
 * can be queued. */
void weft__trace_convert(weft_trace *t);
/* part.c: the same for a part (trace.h): its stream finishes its
 * members, their sums go to the head, its journals are removed; then
 * FINISHED. When the archive could not be written (the shared file
 * system full or unwritable here), the members not written wait with
 * their journals (RETRY_WAIT), and this is tried again. */
void weft__part_finish(weft_trace *t);
/* The head's archive a part in dir writes into, as noted there (NULL:
 * not noted, or unreadable), malloc'd; and noting it (once, a worker's:
 * the file system). */
char *weft__part_archive_read(const char *dir);
void weft__part_archive_note(const char *dir, const char *archive);

/* streamjob.c: the stream of t, which converts now, in *s (NULL when t
 * has none): 0; or 1 when a step of it is out, and t is converted
 * (weft__trace_convert) once that is back. */
int weft__stream_take(weft_trace *t, weft_convert_stream **s);
/* A new stream of t's archive (a part's: into its head's, events only),
 * its writers within convert_memory's (bounded) or not; NULL when out of
 * memory or a part's head has not said where. */
weft_convert_stream *weft__stream_new(weft_trace *t, int bounded);
/* Frees t's stream (one whose step is out is freed when it is back). */
void weft__stream_free(weft_trace *t);
/* The head's members of t whose nodes write their events (their
 * connections' relay_events_here) are told where, once t's stream made
 * its archive. */
void weft__stream_keys(weft_trace *t);
/* The timer resolution of t's archive: 1e9 (1 ns ticks) for a part, or
 * on a weftd with an archive_root (whose nodes write event files with
 * final times, whatever clock rank 0 had), else 0 (the first process's
 * clock's, convert.h). */
uint64_t weft__trace_resolution(const weft_trace *t);

/* ended.c: remembers the run of t, which stops recording now. */
void weft__ended_remember(weft_trace *t);
/* The ended run (uid, name, run), NULL if none is remembered. */
const weft_ended_run *weft__ended_find(const weft_daemon *d, uint32_t uid,
                                       const char *name, const char *run);
/* A process of run e says Hello again (rank): WEFT_EENDED (every member
 * said goodbye) or WEFT_ECLOSED (partial), err saying why. */
int weft__ended_refuse(const weft_ended_run *e, uint32_t rank, char *err,
                       size_t errlen);
/* Forgets every ended run (at exit). */
void weft__ended_free_all(weft_daemon *d);

#endif

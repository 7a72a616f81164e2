/* worker.h - threads of their own for slow work, fed by a FIFO queue.
 *
 * DESIGN (Redis' bio.c): work that may wait for the disk runs on worker
 * threads so that the loop thread never does; each kind of work has its
 * own worker, so one kind cannot delay another as it would in libuv's
 * shared 4-thread pool. weftd's workers: the fsync batches of durability
 * = fsync (main.c's syncer, one thread), the status file (status.c, one
 * thread: never two writes at once), conversions (convq.c, at most
 * max_conversions at once; the others wait their turn in convq.h's
 * queue, round robin by owner), retention (retain.c), the catalog rows
 * of recording traces and their live figures (traces/catjob.c), the weft
 * command's questions (ask.c) and MUNGE credentials (authn.c).
 *
 * Background work has this mechanism and one other, for a stated reason
 * (issue #31): the journal writer's two threads (ingest/jwriter.c). They
 * are ordered lanes, not a pool of jobs: every member's entries must
 * reach its journal, and come back to be acknowledged, in the order they
 * were submitted (the appends lane), and Hellos open their trace's
 * directory and journal in the order they came (the opens lane), apart
 * from the appends; and a lane takes its whole queue per lock round trip,
 * where a worker takes one job per round trip and per wakeup: appends are
 * ingestion's hot path (bench/ingest). replay.c's threads are no
 * background work: they are one conversion job's own parallelism
 * (convert_threads), made and joined inside weft_convert_trace on a
 * converter thread. libuv's pool serves uv_fs_read only (ask.c: a
 * CATALOG answer's pieces, file-system requests of libuv, not jobs).
 *
 * A job is a weft_work embedded in the caller's struct (as uv_work_t):
 * `work` runs on a worker thread, then `done` on the loop thread, in the
 * order the jobs finished. Threads are made as the queue needs them, up
 * to `max`. The async handle that brings jobs back is referenced only
 * while jobs are out, so an idle worker does not keep the loop running.
 * Loop thread only, except weft_worker_hold.
 */
#ifndef WEFT_WORKER_H
#define WEFT_WORKER_H

#include <uv.h>

typedef struct weft_work weft_work;
typedef void (*weft_work_fn)(weft_work *job);

struct weft_work {
    weft_work *next;     /* the worker's */
    weft_work_fn work;   /* worker thread */
    weft_work_fn done;   /* loop thread; may free the job, submit more */
};

typedef struct weft_worker weft_worker;

/* What a worker has: jobs waiting for a thread, jobs running, and the
 * most that ever ran at once. */
typedef struct weft_worker_counts {
    unsigned queued;
    unsigned running;
    unsigned peak;
} weft_worker_counts;

/* The worker stops itself (as weft_worker_stop) once nothing is queued
 * or running: it exists only while there is work, so nothing has to stop
 * it before the loop closes. */
#define WEFT_WORKER_TRANSIENT 1

/* Starts a worker on loop running at most max (>= 1) jobs at once and
 * stores it in *home, which weft_worker_stop sets back to NULL. flags: 0
 * or WEFT_WORKER_TRANSIENT. Returns 0 or WEFT_EIO (no handle). */
int weft_worker_start(uv_loop_t *loop, unsigned max, int flags,
                      weft_worker **home);
/* Queues job: work(job) on a worker thread, then done(job) on the loop
 * thread. Returns 0, or WEFT_EIO when no thread could be made to run it
 * (job not queued). */
int weft_worker_submit(weft_worker *w, weft_work *job, weft_work_fn work,
                       weft_work_fn done);
/* Changes how many jobs may run at once (>= 1): running jobs go on, the
 * queue follows the new bound. */
void weft_worker_set_max(weft_worker *w, unsigned max);
/* hold 1: no job starts (as a disk that stalls) until called with 0.
 * Any thread; for tests. A worker stopped while held runs its queue. */
void weft_worker_hold(weft_worker *w, int hold);
/* Its figures now. */
weft_worker_counts weft_worker_count(weft_worker *w);
/* Stops w and sets its *home to NULL: no more jobs may be submitted;
 * those queued still run (even while held) and come back; then its
 * threads end and its handle closes. Does not wait: the loop finishes
 * it. NULL is fine. */
void weft_worker_stop(weft_worker *w);

#endif

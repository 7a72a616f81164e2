/* session.c - when libweft-openmp records: libweft's session opens on the
 * first wrapped call of the process (or at load, with WEFT_REQUIRED=1),
 * reading the WEFT_* environment as weft_open does, unless libweft-mpi is
 * loaded: then the session is its, opened at MPI_Init, and OpenMP is
 * recorded from the first call that finds it open (recorder.h 4). When
 * weftd cannot be reached nothing is recorded. The child of a fork()
 * records nothing (libweft's session is the parent's).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "om.h"

atomic_int om_state = OM_ST_INIT;
atomic_int om_ompt; /* ompt.c sets it */

static void at_fork_child(void)
{
    atomic_store(&om_state, OM_ST_OFF);
}

/* Before libweft closes the session (at exit, at MPI_Finalize): libomp
 * tells a team's other threads that the last region ended only as it
 * wakes them, for a later region or as it shuts them down, which it
 * does after the session closed (libomp.so's destructor). A hard pause
 * shuts them down now (libomp starts afresh if the program uses OpenMP
 * again), and the threads it woke record their last region's end. Not
 * inside a parallel region, nor once libomp began to shut down (its
 * exit handler): libomp refuses then. So this runs at exit too, in an
 * exit handler ompt.c registers as libomp starts its tool, which runs
 * before libomp's own. Once per process. */
#define OM_TEAM_WAIT_MS 1000
static void before_close(void)
{
    static atomic_int done;
    int (*pause_all)(int) = NULL;
    void *p;

    if (!atomic_load(&om_ompt) || atomic_load(&om_state) != OM_ST_ON ||
        !(p = dlsym(RTLD_DEFAULT, "omp_pause_resource_all")) ||
        atomic_exchange(&done, 1))
        return;
    memcpy(&pause_all, &p, sizeof p);
    if (pause_all(2) == 0) /* omp_pause_hard */
        om_ompt_wait_team(OM_TEAM_WAIT_MS);
}

/* See om.h. */
void om_ompt_at_exit(void)
{
    before_close();
}

/* What every trace of this recorder holds, then records. */
static int go_on(void)
{
    weft_def_Paradigm(OTF2_PARADIGM_OPENMP, weft_string("OpenMP"),
                      OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN);
    /* whatever om_ompt says now: the session may open (a wrapped call,
     * another recorder's) before libomp starts its tool; both look */
    weft__recorder_before_close(before_close);
    weft__recorder_at_thread_exit(om_ompt_thread_exit);
    atomic_store(&om_state, OM_ST_ON);
    return 1;
}

/* See om.h. */
int om_session_start(void)
{
    int expect = OM_ST_INIT;

    if (atomic_compare_exchange_strong(&om_state, &expect, OM_ST_STARTING)) {
        switch (weft__recorder_start()) {
        case 1:
            return go_on();
        case 0:
            atomic_store(&om_state, OM_ST_MPI);
            break;
        default:
            atomic_store(&om_state, OM_ST_OFF);
            return 0;
        }
    }
    expect = OM_ST_MPI;
    if (!weft_connected() ||
        !atomic_compare_exchange_strong(&om_state, &expect, OM_ST_STARTING))
        return atomic_load(&om_state) == OM_ST_ON;
    return go_on();
}

/* At load, before any fork and any OpenMP call: the real functions, and
 * the session when it must open now. */
__attribute__((constructor)) static void at_load(void)
{
    weft__rguard g;

    om_resolve_all();
    om_parallel_resolve();
    om_tasks_resolve();
    om_team_resolve();
    pthread_atfork(NULL, NULL, at_fork_child);
    if (weft__recorder_at_load() && weft__recorder_begin(&g)) {
        om_session_start();
        weft__recorder_end(&g);
    }
}

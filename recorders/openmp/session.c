/* session.c - when libweft-openmp records: libweft's session opens on the
 * first wrapped call of the process (or at load, with WEFT_REQUIRED=1),
 * reading the WEFT_* environment as weft_open does, unless libweft-mpi is
 * loaded: then the session is its, opened at MPI_Init, and OpenMP is
 * recorded from the first call that finds it open (recorder.h 4). When
 * weftd cannot be reached nothing is recorded. The child of a fork()
 * records nothing (libweft's session is the parent's).
 */
#include <pthread.h>

#include "om.h"

atomic_int om_state = OM_ST_INIT;
atomic_int om_ompt; /* ompt.c sets it */

static void at_fork_child(void)
{
    atomic_store(&om_state, OM_ST_OFF);
}

/* What every trace of this recorder holds, then records. */
static int go_on(void)
{
    weft_def_Paradigm(OTF2_PARADIGM_OPENMP, weft_string("OpenMP"),
                      OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN);
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
    pthread_atfork(NULL, NULL, at_fork_child);
    if (weft__recorder_at_load() && weft__recorder_begin(&g)) {
        om_session_start();
        weft__recorder_end(&g);
    }
}

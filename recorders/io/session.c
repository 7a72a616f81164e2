/* session.c - when libweft-io records: libweft's session opens on the
 * first wrapped call of the process (which may come from a constructor
 * before main), reading the WEFT_* environment as weft_open does.
 *
 * When libweft-mpi is loaded too (-t mpi,io) the session is its: it
 * opens at MPI_Init with the rank MPI gives, so libweft-io does not open
 * one and records from the first call that finds it open. (An MPI
 * program traced with -t io alone opens its own, the rank from the
 * launcher's environment, as weft_open does; weft__recorder_start
 * decides, recorder.h 4.) When
 * weftd cannot be reached (tracing off) nothing is recorded at all. The
 * child of a fork() records nothing (libweft's session is the
 * parent's), even when the parent had recorded nothing yet; a program
 * it execs starts afresh, traced if the environment still preloads
 * libweft-io.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "io.h"
#include "session.h"

atomic_int io_state = IO_ST_INIT;

static void at_fork_child(void)
{
    atomic_store(&io_state, IO_ST_OFF);
}

/* At load, before any fork: the child of every fork() records nothing,
 * also one forked before this process recorded anything. */
__attribute__((constructor)) static void at_load(void)
{
    weft__rguard g;

    io_resolve_all();
    pthread_atfork(NULL, NULL, at_fork_child);
    if (weft__recorder_at_load() && weft__recorder_begin(&g)) {
        io_session_start(); /* opens now (fails the program if it must) */
        weft__recorder_end(&g);
    }
}

/* The session just proved open: define what every trace of this
 * recorder holds, then record. */
static int go_on(void)
{
    io_filter_setup();
    io_handles_init();
    io_count_setup();
    atomic_store(&io_state, IO_ST_ON);
    return 1;
}

/* See session.h. */
int io_session_start(void)
{
    int expect = IO_ST_INIT;

    if (atomic_compare_exchange_strong(&io_state, &expect, IO_ST_STARTING)) {
        switch (weft__recorder_start()) {
        case 1:
            return go_on();
        case 0:
            atomic_store(&io_state, IO_ST_MPI);
            break;
        default:
            atomic_store(&io_state, IO_ST_OFF);
            return 0;
        }
    }
    /* libweft-mpi opens the session (in MPI_Init, which may be over
     * already: then this very call is recorded); ON once it is, and only
     * one thread wins. */
    expect = IO_ST_MPI;
    if (!weft_connected() ||
        !atomic_compare_exchange_strong(&io_state, &expect, IO_ST_STARTING))
        return 0;
    return go_on();
}

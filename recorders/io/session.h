/* session.h - when libweft-io records (session.c). */
#ifndef WEFT_IO_SESSION_H
#define WEFT_IO_SESSION_H

#include <stdatomic.h>

enum { IO_ST_INIT, IO_ST_STARTING, IO_ST_MPI, IO_ST_ON, IO_ST_OFF };

extern atomic_int io_state __attribute__((visibility("hidden")));

/* Decides, on the first wrapped call of the process, whether to record
 * and opens libweft's session; in an MPI program, whether libweft-mpi
 * has opened it. 1: record. Called inside the guard. */
int io_session_start(void) __attribute__((visibility("hidden")));

/* 1 when wrapped calls are recorded, 0 when not, -1 when
 * io_session_start must decide. */
static inline int io_session_on(void)
{
    int st = atomic_load_explicit(&io_state, memory_order_acquire);

    if (__builtin_expect(st == IO_ST_ON, 1))
        return 1;
    return st == IO_ST_OFF || st == IO_ST_STARTING ? 0 : -1;
}

#endif

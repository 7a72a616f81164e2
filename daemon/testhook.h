/* testhook.h - where a test stops weftd on purpose, to kill it at an
 * exact point of a trace's way to its archive (tests/e2e_phases.sh).
 *
 * WEFT_TEST_STOP_AT=PHASE[:N] in weftd's environment stops the whole
 * process with SIGSTOP the N-th time (default 1) any thread reaches
 * PHASE; the test then SIGKILLs it. The phases:
 *   hello      a new member's journal is open and holds its Hello, its
 *              HelloAck not sent (session.c)
 *   stream     a recording trace's stream step wrote events into its
 *              archive (streamjob.c)
 *   unify      a conversion unified the definitions of every member
 *              (pass 1; the archive's events may be half written)
 *   defs       the local definitions and mapping tables are written,
 *              the global definitions and the anchor not yet
 *   commit     the conversion is done (its archive written when it
 *              succeeded), its catalog row not committed
 *   committed  the row is committed, the journals not yet removed
 * Without the variable a phase costs one test of a flag.
 */
#ifndef WEFT_TESTHOOK_H
#define WEFT_TESTHOOK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct weft_testhook {
    int on;                      /* WEFT_TEST_STOP_AT was given */
    char phase[16];
    uint64_t at;                 /* stop at this arrival (1..) */
    _Atomic uint64_t seen;       /* arrivals so far; any thread */
} weft_testhook;

/* Reads WEFT_TEST_STOP_AT into h. 0, or WEFT_ECONFIG with err naming
 * what is wrong with it (an unknown phase, a bad count). */
int weft_testhook_init(weft_testhook *h, char *err, size_t errlen);

/* PHASE is reached (any thread): stops the process there if h says so.
 * h may be NULL. */
void weft_testhook_reach(weft_testhook *h, const char *phase);

#endif

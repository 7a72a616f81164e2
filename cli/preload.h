/* preload.h - the recorders weft run can preload, as one table, and the
 * pure steps from `-t LIST` and what detect.c found to the LD_PRELOAD
 * value (preload.c; tests/test_preload.c). A new recorder is one entry
 * of the table in preload.c, not a new code path in run.c.
 */
#ifndef WEFT_CLI_PRELOAD_H
#define WEFT_CLI_PRELOAD_H

#include <stddef.h>

#include "detect.h"

/* To which programs a recorder applies. */
typedef enum weft_rec_applies {
    /* programs that use an MPI library: one recorder library per
     * implementation (their ABIs differ), chosen by what detect.c found */
    WEFT_REC_MPI,
    /* every dynamically linked program: one library */
    WEFT_REC_DYNAMIC,
    /* programs that use GCC's OpenMP runtime (libgomp): one library */
    WEFT_REC_OPENMP,
} weft_rec_applies;

typedef struct weft_recorder {
    const char *name;       /* as -t names it */
    const char *what;       /* what it records, for weft run --help */
    weft_rec_applies applies;
    /* The library file, in the library directory. WEFT_REC_MPI: per
     * flavour (file[WEFT_MPI_NONE] unused, NULL: no recorder for that
     * implementation); WEFT_REC_DYNAMIC, WEFT_REC_OPENMP: file[0]. */
    const char *file[WEFT_MPI_NFLAVOURS];
    int by_default;         /* chosen without -t wherever it applies */
} weft_recorder;

/* The recorders, in the order their libraries are preloaded. */
extern const weft_recorder weft__recorders[];
extern const size_t weft__nrecorders;

/* A set of recorders: bit i is weft__recorders[i]. */
typedef unsigned weft_rec_set;

/* Adds the recorders a -t value names (comma-separated names; repeats are
 * fine) to *set. Returns 0, or WEFT_EINVAL with err saying why: an empty
 * name or an unknown one, named, with the known ones listed. */
int weft__preload_parse(const char *list, weft_rec_set *set, char *err,
                        size_t errlen);

/* "mpi" or "mpi, pthread, io": the known recorder names into buf. */
void weft__preload_known(char *buf, size_t len);

/* The library file of recorder r for a program whose libraries are
 * `found` (what detect.c found: its MPI flavour, NONE when none, and its
 * OpenMP runtime), or NULL when r does not apply to it. *why then says
 * why in words that follow the program's name ("uses no MPI library"). */
const char *weft__preload_file(const weft_recorder *r,
                               const weft_mpi_found *found,
                               const char **why);

/* The recorders to use: set when -t was given (explicit), else those
 * marked by_default - of which, for a task of a parallel launch that
 * uses no MPI (task_without_mpi), only the MPI ones (which then do not
 * apply: the task runs untraced, as its rank is the MPI program's). */
weft_rec_set weft__preload_choose(weft_rec_set set, int explicit,
                                  int task_without_mpi);

/* The LD_PRELOAD value with library path add after the user's old value
 * (NULL or "" when unset), unchanged when old already lists add. Returns
 * 0 with *out malloc'd, WEFT_EINVAL when add holds a character LD_PRELOAD
 * cannot carry (a space or a colon: its separators), or WEFT_ENOMEM. */
int weft__preload_append(const char *old, const char *add, char **out);

/* The LD_PRELOAD value old without its entries equal to path drop (the
 * others kept in order, joined by ':'; "" when none is left). Returns 0
 * with *out malloc'd, or WEFT_ENOMEM. */
int weft__preload_remove(const char *old, const char *drop, char **out);

#endif

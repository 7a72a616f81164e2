/* fortran.c - Fortran programs (see wm.h).
 *
 * DESIGN
 * Open MPI's Fortran bindings (libmpi_mpifh: mpif.h, `use mpi`, and
 * through it `use mpi_f08`) convert their arguments and call the C
 * PMPI_ functions directly, so the MPI_ wrappers never see a Fortran
 * program's calls; MPICH's (libmpichfort) call the MPI_ functions for
 * mpif.h and `use mpi`, but PMPI_ ones for `use mpi_f08` (PMPI_Init among
 * them). This file interposes the PMPI_ function of every entry
 * of calls.def (and of MPI_Init, MPI_Init_thread, MPI_Finalize): called
 * from the Fortran bindings, it runs the MPI_ wrapper (which records
 * and calls PMPI_ again); called from anywhere else (the wrappers, MPI
 * itself, a program that calls PMPI_ on purpose), it goes straight to
 * MPI's own PMPI_ (dlsym RTLD_NEXT). Where a call comes from is its
 * return address, compared with the address range of the Fortran
 * bindings' library, found once (dl_iterate_phdr).
 *
 * The MPI_ wrapper may end in a tail call of PMPI_ (`jmp PMPI_Abort`:
 * MPI_Abort's does, and any other where the compiler finds the call
 * last), which reaches the interposer with the Fortran bindings' return
 * address still in place: it would run the wrapper again, for ever. So
 * each thread remembers which interposer's wrapper it is running for a
 * Fortran call (fortran_in, the interposer's own cache as its name), and
 * a call of that same PMPI_ from within goes to MPI's.
 */
#include "wm.h" /* mpi.h: says whether this is Open MPI */

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library of this MPI's Fortran bindings. */
#ifdef OPEN_MPI
#define WM_FORTRAN_LIB "libmpi_mpifh"
#else
#define WM_FORTRAN_LIB "libmpichfort"
#endif

/* The Fortran bindings' executable segments (at most a few). */
#define MAX_RANGES 4
static uintptr_t lo[MAX_RANGES], hi[MAX_RANGES];
static int nranges;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int find_bindings(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, WM_FORTRAN_LIB))
        return 0;
    for (int i = 0; i < info->dlpi_phnum && nranges < MAX_RANGES; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            lo[nranges] = info->dlpi_addr + p->p_vaddr;
            hi[nranges] = lo[nranges] + p->p_memsz;
            nranges++;
        }
    }
    return 1;
}

static void find_once(void)
{
    dl_iterate_phdr(find_bindings, NULL);
}

/* 1 when return address `ra` is inside MPI's Fortran bindings. */
static int from_fortran(const void *ra)
{
    uintptr_t a = (uintptr_t)ra;

    pthread_once(&once, find_once);
    for (int i = 0; i < nranges; i++)
        if (a >= lo[i] && a < hi[i])
            return 1;
    return 0;
}

/* MPI's own PMPI_<name>, found once; exits with a message if MPI has
 * none (then the program could not run at all). */
static void *next(const char *name, _Atomic(void *) *cache)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);

    if (f)
        return f;
    f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "weft: libweft-mpi: the MPI library has no %s\n",
                name);
        abort();
    }
    atomic_store_explicit(cache, f, memory_order_release);
    return f;
}

/* The interposer (its `real_`) whose MPI_ wrapper this thread runs for
 * a Fortran call, NULL if none. */
static __thread const void *fortran_in
    __attribute__((tls_model("initial-exec")));

#define WM_EXPORT __attribute__((visibility("default")))
#define WM_INTERPOSE(Name, params, args)                                     \
    WM_EXPORT int PMPI_##Name params                                         \
    {                                                                        \
        static _Atomic(void *) real_;                                        \
        int(*f_) params;                                                     \
                                                                             \
        if (fortran_in != (const void *)&real_ &&                            \
            from_fortran(__builtin_return_address(0))) {                     \
            const void *outer_ = fortran_in;                                 \
            int rc_;                                                         \
                                                                             \
            fortran_in = (const void *)&real_;                               \
            rc_ = MPI_##Name args;                                           \
            fortran_in = outer_;                                             \
            return rc_;                                                      \
        }                                                                    \
        f_ = (int(*) params)next("PMPI_" #Name, &real_);                     \
        return f_ args;                                                      \
    }
#define WM(Name, role, op, hook, params, args) WM_INTERPOSE(Name, params, args)
#define WMC(Name, role, op, hook, params, args) WM_INTERPOSE(Name, params, args)
#define WMK(Name, role, op, params, args, bytes) WM_INTERPOSE(Name, params, args)
#define WMKN(Name, role, op, params, args, bytes) WM_INTERPOSE(Name, params, args)
#include "calls.def"
WM_INTERPOSE(Init, (int *argc, char ***argv), (argc, argv))
WM_INTERPOSE(Init_thread,
             (int *argc, char ***argv, int required, int *provided),
             (argc, argv, required, provided))
WM_INTERPOSE(Finalize, (void), ())
WM_INTERPOSE(Abort, (MPI_Comm comm, int errorcode), (comm, errorcode))

/* detect.h - what weft run learns about a program before it runs it, from
 * bytes alone (pure functions: no file, no process; tests/test_detect.c):
 * the kind of file (a dynamically linked ELF program and its program
 * interpreter, a statically linked one, a #! script, something else) and
 * the MPI implementation named in the dynamic loader's list of its
 * libraries (`ld.so --list PROGRAM`, which run.c runs).
 */
#ifndef WEFT_CLI_DETECT_H
#define WEFT_CLI_DETECT_H

#include <stddef.h>

/* The MPI implementations weft has a recorder for; their ABIs differ, so
 * each has a library of its own. */
typedef enum weft_mpi_flavour {
    WEFT_MPI_NONE = 0,
    WEFT_MPI_OPENMPI,
    WEFT_MPI_MPICH,      /* and the MPICH ABI: libmpi.so.12 */
    WEFT_MPI_NFLAVOURS
} weft_mpi_flavour;

typedef enum weft_prog_kind {
    WEFT_PROG_DYNAMIC,   /* ELF with a PT_INTERP: the loader runs it */
    WEFT_PROG_STATIC,    /* ELF without one (also static-pie) */
    WEFT_PROG_SCRIPT,    /* starts with #! */
    WEFT_PROG_OTHER,     /* anything else (execvp gives it to /bin/sh) */
} weft_prog_kind;

/* Longest interpreter path kept (a PT_INTERP, or a #! line's first word). */
#define WEFT_DETECT_INTERP_MAX 4096

typedef struct weft_prog_info {
    weft_prog_kind kind;
    /* DYNAMIC: the PT_INTERP path; SCRIPT: the #! interpreter ("" when
     * the line names none); else "". */
    char interp[WEFT_DETECT_INTERP_MAX];
    /* DYNAMIC: 1 when every library the program names (DT_NEEDED) is
     * one of glibc's or of the compiler's runtime (libc, libm, libstdc++,
     * libgfortran, ...; weft__detect_base_library), none of which links
     * an MPI library: the loader's list cannot name one then. 0 when it
     * names another library, or its dynamic section cannot be read. */
    int base_only;
} weft_prog_info;

/* Reads the kind of the file whose len bytes are buf (the whole file:
 * the PT_INTERP string may be anywhere in it). Returns 0 with *info
 * filled, or WEFT_ECORRUPT with *why (a static string) naming what is
 * wrong with an ELF file's headers (info->kind is then WEFT_PROG_OTHER). */
int weft__detect_file(const void *buf, size_t len, weft_prog_info *info,
                      const char **why);

/* 1 when the library named name (a soname) is glibc's or the compiler
 * runtime's, which never link MPI; else 0. */
int weft__detect_base_library(const char *name);

/* The MPI implementation of the shared library named name (a soname such
 * as "libmpi.so.40", or a path, of which the last component counts), or
 * WEFT_MPI_NONE. */
weft_mpi_flavour weft__detect_mpi_library(const char *name);

/* The OpenMP runtimes weft knows. */
typedef enum weft_omp_runtime {
    WEFT_OMP_NONE = 0,
    WEFT_OMP_GNU,        /* GCC's libgomp (libgomp.so.1) */
    WEFT_OMP_LLVM,       /* LLVM's libomp (libomp.so.5) */
    WEFT_OMP_INTEL,      /* Intel's libiomp5 (libiomp5.so) */
} weft_omp_runtime;

/* The OpenMP runtime of the shared library named name (a soname or a
 * path, of which the last component counts), or WEFT_OMP_NONE. */
weft_omp_runtime weft__detect_omp_library(const char *name);

/* What the dynamic loader's list says about MPI and OpenMP. */
typedef struct weft_mpi_found {
    weft_mpi_flavour flavour;   /* the first MPI library's, or NONE */
    char lib[256];              /* its name as the list gives it */
    /* a library of another implementation too (flavour and name), or
     * WEFT_MPI_NONE */
    weft_mpi_flavour other;
    char other_lib[256];
    weft_omp_runtime omp;       /* the first OpenMP runtime's, or NONE */
    char omp_lib[256];          /* its name as the list gives it */
} weft_mpi_found;

/* Parses text, the output of `ld.so --list PROGRAM` (NUL-terminated), for
 * MPI libraries and OpenMP runtimes: each line "\tNAME => PATH (0xADDR)", "\tNAME => not
 * found" or "\tPATH (0xADDR)"; both NAME and PATH count, other lines are
 * ignored. Returns the number of library lines read (0: the list named
 * none, e.g. the loader failed), with *found filled. */
int weft__detect_mpi_in_list(const char *text, weft_mpi_found *found);

/* "Open MPI", "MPICH", or "no MPI". */
const char *weft__detect_flavour_name(weft_mpi_flavour f);

#endif

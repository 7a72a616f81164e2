/* preload.c - the recorder table of weft run and the pure steps from
 * `-t LIST` to LD_PRELOAD (see preload.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload.h"
#include "weft_errors.h"

/* Every recorder weft can preload. Only what this build can do is here:
 * a new one is one entry { name, what, WEFT_REC_DYNAMIC,
 * { "libweft-NAME.so" }, 1 }. By default, every recorder that applies. */
const weft_recorder weft__recorders[] = {
    { "mpi", "MPI calls (PMPI), for programs that use Open MPI or MPICH",
      WEFT_REC_MPI,
      { [WEFT_MPI_OPENMPI] = "libweft-mpi-openmpi.so",
        [WEFT_MPI_MPICH] = "libweft-mpi-mpich.so" },
      1 },
    { "pthread", "threads and locks (pthread_create, mutexes, condition "
      "variables, ...), for every dynamically linked program",
      WEFT_REC_DYNAMIC, { "libweft-pthread.so" }, 1 },
    { "io", "POSIX and ISO C file I/O (open, read, write, fopen, fwrite, ...)",
      WEFT_REC_DYNAMIC, { "libweft-io.so" }, 1 },
    { "openmp", "OpenMP (parallel regions, loops, barriers, critical "
      "sections, locks, tasks), for programs that use GCC's libgomp or "
      "LLVM's libomp",
      WEFT_REC_OPENMP, { "libweft-openmp.so" }, 1 },
};
const size_t weft__nrecorders = sizeof weft__recorders /
                                sizeof weft__recorders[0];

_Static_assert(sizeof weft__recorders / sizeof weft__recorders[0] <=
               sizeof(weft_rec_set) * 8, "weft_rec_set too small");

void weft__preload_known(char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < weft__nrecorders && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                         weft__recorders[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

int weft__preload_parse(const char *list, weft_rec_set *set, char *err,
                        size_t errlen)
{
    const char *p = list;

    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        size_t i;

        if (n == 0) {
            snprintf(err, errlen, "empty recorder name in '%s'", list);
            return WEFT_EINVAL;
        }
        for (i = 0; i < weft__nrecorders; i++)
            if (strlen(weft__recorders[i].name) == n &&
                strncmp(weft__recorders[i].name, p, n) == 0)
                break;
        if (i == weft__nrecorders) {
            char known[256];
            weft__preload_known(known, sizeof known);
            snprintf(err, errlen, "unknown recorder '%.*s' (known: %s)",
                     (int)n, p, known);
            return WEFT_EINVAL;
        }
        *set |= 1u << i;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

const char *weft__preload_file(const weft_recorder *r,
                               const weft_mpi_found *found,
                               const char **why)
{
    weft_mpi_flavour f = found->flavour;

    *why = NULL;
    switch (r->applies) {
    case WEFT_REC_MPI:
        if (f == WEFT_MPI_NONE || f >= WEFT_MPI_NFLAVOURS) {
            *why = "uses no MPI library";
            return NULL;
        }
        if (!r->file[f])
            *why = "uses an MPI implementation this recorder lacks";
        return r->file[f];
    case WEFT_REC_DYNAMIC:
        return r->file[0];
    case WEFT_REC_OPENMP:
        switch (found->omp) {
        case WEFT_OMP_GNU:
            return r->file[0];
        case WEFT_OMP_LLVM:
#ifdef WEFT_HAVE_OMPT
            return r->file[0]; /* its OMPT tool */
#else
            *why = "uses LLVM's OpenMP runtime (libomp), which this build "
                   "does not record (built without omp-tools.h: Debian "
                   "package libomp-dev)";
            return NULL;
#endif
        case WEFT_OMP_INTEL:
            *why = "uses Intel's OpenMP runtime (libiomp5), which this "
                   "recorder does not record (GCC's libgomp and LLVM's "
                   "libomp only)";
            return NULL;
        case WEFT_OMP_NONE:
            break;
        }
        *why = "uses no OpenMP runtime";
        return NULL;
    }
    *why = "is not a program this recorder applies to";
    return NULL;
}

weft_rec_set weft__preload_choose(weft_rec_set set, int explicit,
                                  int task_without_mpi)
{
    weft_rec_set chosen = 0;

    if (explicit)
        return set;
    for (size_t i = 0; i < weft__nrecorders; i++)
        if (weft__recorders[i].by_default &&
            !(task_without_mpi &&
              weft__recorders[i].applies != WEFT_REC_MPI))
            chosen |= 1u << i;
    return chosen;
}

/* Does LD_PRELOAD value old list add as one of its entries (separated by
 * spaces or colons, as ld.so reads it)? */
static int lists(const char *old, const char *add)
{
    size_t n = strlen(add);

    for (const char *p = old; *p;) {
        size_t len = strcspn(p, " :");
        if (len == n && strncmp(p, add, n) == 0)
            return 1;
        p += len;
        if (*p)
            p++;
    }
    return 0;
}

int weft__preload_append(const char *old, const char *add, char **out)
{
    int n;

    *out = NULL;
    if (!*add || strpbrk(add, " :"))
        return WEFT_EINVAL;
    if (!old || !*old || strspn(old, " :") == strlen(old))
        n = asprintf(out, "%s", add);
    else if (lists(old, add))
        n = asprintf(out, "%s", old);
    else
        n = asprintf(out, "%s:%s", old, add);
    if (n < 0) {
        *out = NULL;
        return WEFT_ENOMEM;
    }
    return 0;
}

int weft__preload_remove(const char *old, const char *drop, char **out)
{
    size_t n = strlen(drop), used = 0;
    char *s = malloc(strlen(old) + 1);

    *out = NULL;
    if (!s)
        return WEFT_ENOMEM;
    for (const char *p = old; *p;) {
        size_t len = strcspn(p, " :");
        if (len && !(len == n && strncmp(p, drop, n) == 0)) {
            if (used)
                s[used++] = ':';
            memcpy(s + used, p, len);
            used += len;
        }
        p += len;
        if (*p)
            p++;
    }
    s[used] = 0;
    *out = s;
    return 0;
}

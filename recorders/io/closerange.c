/* closerange.c - close_range and closefrom, which close every descriptor
 * of a range (a daemon's closefrom(3), Python's os.closerange): they
 * close around libweft's own descriptors (its socket to weftd, its
 * sender's wake-up), which the program never opened, as if they were
 * not there. Closing them would end the session and keep the process
 * waiting at its exit for the close timeout. Not recorded: they name no
 * file (the handles they end are ended in the archive when their
 * numbers are opened again). See client/fdclaim.c for the calls that
 * name one descriptor.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <unistd.h>

#include "io.h"

typedef int (*close_range_fn)(unsigned int, unsigned int, int);
typedef void (*closefrom_fn)(int);

static close_range_fn real_close_range(void)
{
    static close_range_fn fn;

    if (!fn)
        fn = (close_range_fn)dlsym(RTLD_NEXT, "close_range");
    return fn;
}

/* close_range over [first, last] without libweft's descriptors: the
 * pieces between them. -1 if a piece failed, else 0. */
static int close_around(unsigned int first, unsigned int last, int flags)
{
    close_range_fn real = real_close_range();
    int own[WEFT__OWN_FDS_MAX], n, rc = 0;
    unsigned int from = first;

    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    n = flags & CLOSE_RANGE_CLOEXEC ? 0 : weft__recorder_own_fds(own);
    for (int i = 0; i < n; i++) {
        unsigned int o = (unsigned int)own[i]; /* ascending, < INT_MAX */
        if (o < from || o > last)
            continue;
        if (o > from && real(from, o - 1, flags) < 0)
            rc = -1;
        from = o + 1;
    }
    if (from <= last && real(from, last, flags) < 0)
        rc = -1;
    return rc;
}

IO_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
    if (first > last) {
        errno = EINVAL;
        return -1;
    }
    return close_around(first, last, flags);
}

IO_EXPORT void closefrom(int lowfd)
{
    if (lowfd < 0)
        lowfd = 0;
    if (close_around((unsigned int)lowfd, UINT_MAX, 0) < 0) {
        closefrom_fn real = (closefrom_fn)dlsym(RTLD_NEXT, "closefrom");
        int own[WEFT__OWN_FDS_MAX];
        /* close_range refused (ENOSYS on an old kernel): the C library's
         * own, when libweft has nothing above lowfd. */
        if (real && (weft__recorder_own_fds(own) == 0 ||
                     own[0] < lowfd))
            real(lowfd);
    }
}

/* vararg.c - the wrappers calls.def cannot generate: the variadic calls
 * (open, openat, fcntl, fprintf, printf and their 64-bit and fortified
 * forms) and rewind (no result). They follow the generated ones
 * (wrap.c) step by step; the variadic printf family calls the real
 * vfprintf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "io.h"

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*fcntl_fn)(int, int, ...);
typedef int (*vfprintf_fn)(FILE *, const char *, va_list);
typedef int (*vfprintf_chk_fn)(FILE *, int, const char *, va_list);
typedef void (*rewind_fn)(FILE *);

/* open's mode argument is there only when the flags create a file. */
#define IO_OPEN_MODE(flags, last)                                            \
    __extension__({                                                          \
        mode_t m__ = 0;                                                      \
        if (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE) {     \
            va_list ap__;                                                    \
            va_start(ap__, last);                                            \
            m__ = (mode_t)va_arg(ap__, int);                                 \
            va_end(ap__);                                                    \
        }                                                                    \
        m__;                                                                 \
    })

static int do_open(const void *caller, unsigned call, const char *path,
                   int flags, mode_t mode)
{
    io_frame f;
    int rc;

    if (!io_begin_at(&f, call, caller))
        return ((open_fn)io_real(call))(path, flags, mode);
    io_pre_open(&f, path, flags);
    errno = f.g.saved_errno;
    rc = ((open_fn)io_real(call))(path, flags, mode);
    io_mid(&f);
    io_post_open(&f, rc, path, flags);
    io_end(&f);
    return rc;
}

static int do_openat(const void *caller, unsigned call, int dirfd,
                     const char *path, int flags, mode_t mode)
{
    io_frame f;
    int rc;

    if (!io_begin_at(&f, call, caller))
        return ((openat_fn)io_real(call))(dirfd, path, flags, mode);
    io_pre_openat(&f, dirfd, path, flags);
    errno = f.g.saved_errno;
    rc = ((openat_fn)io_real(call))(dirfd, path, flags, mode);
    io_mid(&f);
    io_post_openat(&f, rc, dirfd, path, flags);
    io_end(&f);
    return rc;
}

IO_EXPORT int open(const char *path, int flags, ...)
{
    return do_open(IO_CALLER, IO_open, path, flags,
                   IO_OPEN_MODE(flags, flags));
}

IO_EXPORT int open64(const char *path, int flags, ...)
{
    return do_open(IO_CALLER, IO_open64, path, flags,
                   IO_OPEN_MODE(flags, flags));
}

IO_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    return do_openat(IO_CALLER, IO_openat, dirfd, path, flags,
                     IO_OPEN_MODE(flags, flags));
}

IO_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    return do_openat(IO_CALLER, IO_openat64, dirfd, path, flags,
                     IO_OPEN_MODE(flags, flags));
}

/* fcntl's third argument is an int, a pointer or absent, by command: it
 * is passed on as the C library reads it, a pointer-sized value. fcntl64
 * is what programs built with 64-bit file offsets call. */
static int do_fcntl(const void *caller, unsigned call, int fd, int cmd,
                    void *arg)
{
    io_frame f;
    int rc;

    if (weft__recorder_fd_claim(fd) < 0)
        return -1; /* EBUSY: libweft's, and it could not move it */
    if (!io_begin_at(&f, call, caller))
        return ((fcntl_fn)io_real(call))(fd, cmd, arg);
    io_pre_fcntl(&f, fd, cmd, arg);
    errno = f.g.saved_errno;
    rc = ((fcntl_fn)io_real(call))(fd, cmd, arg);
    io_mid(&f);
    io_post_fcntl(&f, rc, fd, cmd, arg);
    io_end(&f);
    return rc;
}

IO_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    void *arg;

    va_start(ap, cmd);
    arg = va_arg(ap, void *);
    va_end(ap);
    return do_fcntl(IO_CALLER, IO_fcntl, fd, cmd, arg);
}

IO_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    void *arg;

    va_start(ap, cmd);
    arg = va_arg(ap, void *);
    va_end(ap);
    return do_fcntl(IO_CALLER, IO_fcntl64, fd, cmd, arg);
}

/* The printf family through the real vfprintf (flag < 0) or
 * __vfprintf_chk; counted when served from fp's buffer, as the IOB
 * wrappers (wrap.c). */
static int do_printf(const void *caller, unsigned call, FILE *fp, int flag,
                     const char *fmt, va_list ap)
{
    io_frame f;
    io_bufview v;
    int rc, late;

#define IO_CALL_VFPRINTF                                                     \
    (flag < 0 ? ((vfprintf_fn)io_real(IO_vfprintf))(fp, fmt, ap)             \
              : ((vfprintf_chk_fn)io_real(IO___vfprintf_chk))(fp, flag, fmt, \
                                                               ap))
    if (!io_start(&f, call, caller))
        return IO_CALL_VFPRINTF;
    if (!(late = io_count_view(&f, fp, &v)))
        io_pre_vfprintf(&f, fp, fmt, ap);
    errno = f.g.saved_errno;
    rc = IO_CALL_VFPRINTF;
    io_mid(&f);
    if (late) {
        uint64_t t;
        if (io_count_served(&f, fp, &v, 1, rc))
            return rc;
        t = io_count_missed(&f);
        io_pre_vfprintf(&f, fp, fmt, ap);
        f.t = t;
    }
    io_post_vfprintf(&f, rc, fp, fmt, ap);
    io_end(&f);
    return rc;
#undef IO_CALL_VFPRINTF
}

/* A printf-family wrapper: the stream and the _chk flag (-1: none) come
 * from its fixed parameters. */
#define IO_PRINTF(name, params, fp, flag)                                    \
    IO_EXPORT int name params                                                \
    {                                                                        \
        va_list ap;                                                          \
        int rc;                                                              \
                                                                             \
        va_start(ap, fmt);                                                   \
        rc = do_printf(IO_CALLER, IO_##name, fp, flag, fmt, ap);             \
        va_end(ap);                                                          \
        return rc;                                                           \
    }

IO_PRINTF(fprintf, (FILE *fp, const char *fmt, ...), fp, -1)
IO_PRINTF(__fprintf_chk, (FILE *fp, int flag, const char *fmt, ...), fp,
          flag < 0 ? 0 : flag)
IO_PRINTF(printf, (const char *fmt, ...), stdout, -1)
IO_PRINTF(__printf_chk, (int flag, const char *fmt, ...), stdout,
          flag < 0 ? 0 : flag)

IO_EXPORT void rewind(FILE *fp)
{
    io_frame f;

    if (!io_begin(&f, IO_rewind)) {
        ((rewind_fn)io_real(IO_rewind))(fp);
        return;
    }
    io_pre_rewind(&f, fp);
    errno = f.g.saved_errno;
    ((rewind_fn)io_real(IO_rewind))(fp);
    io_mid(&f);
    io_post_rewind(&f, fp);
    io_end(&f);
}

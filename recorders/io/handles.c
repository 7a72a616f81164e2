/* handles.c - libweft-io's definitions: the two I/O paradigms, files,
 * handles and the pre-created standard streams, plus the operation
 * events every family records (see io.h).
 *
 * Ids. Files and handles are numbered by this process from 0 with
 * atomic counters; a file is defined anew at every open (no table of
 * paths here: weftd merges definitions of equal content, so the archive
 * holds one IoRegularFile per path and host).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flags.h"
#include "io.h"
#include "path.h"

/* The system tree node of this process's host (weft_records.def). */
#define IO_HOST_NODE 1

io_fdmap io_fds;
io_fdmap io_streams;

static atomic_uint next_file, next_handle;
static atomic_uint_fast64_t next_match;

/* See io.h. */
uint64_t io_match(void)
{
    return atomic_fetch_add_explicit(&next_match, 1, memory_order_relaxed);
}

static OTF2_IoFileRef new_file(const char *path, int dir)
{
    OTF2_IoFileRef id;

    if (!path)
        return OTF2_UNDEFINED_IO_FILE;
    id = atomic_fetch_add_explicit(&next_file, 1, memory_order_relaxed);
    if (id >= UINT32_MAX - 1)
        return OTF2_UNDEFINED_IO_FILE;
    if (dir)
        weft_def_IoDirectory(id, weft_string(path), IO_HOST_NODE);
    else
        weft_def_IoRegularFile(id, weft_string(path), IO_HOST_NODE);
    return id;
}

/* See io.h. */
OTF2_IoFileRef io_file(const char *path)
{
    return new_file(path, 0);
}

/* See io.h. */
OTF2_IoFileRef io_directory(const char *path)
{
    return new_file(path, 1);
}

/* See io.h. */
OTF2_IoHandleRef io_handle(const char *path, int fd, OTF2_IoFileRef file,
                           unsigned paradigm, OTF2_IoHandleFlag flags,
                           OTF2_IoHandleRef parent)
{
    OTF2_IoHandleRef id = atomic_fetch_add_explicit(&next_handle, 1,
                                                    memory_order_relaxed);
    char *name = NULL;

    if (id >= UINT32_MAX - 1)
        return OTF2_UNDEFINED_IO_HANDLE;
    if (fd >= 0 && asprintf(&name, "%s (fd %d)", path ? path : "", fd) < 0)
        name = NULL;
    weft_def_IoHandle(id, weft_string(name ? name : path ? path : ""), file,
                      paradigm, flags, OTF2_UNDEFINED_COMM, parent);
    free(name);
    return id;
}

/* See io.h. */
char *io_fd_path(int fd)
{
    char link[64], buf[PATH_MAX];
    ssize_t n;

    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, buf, sizeof buf - 1);
    if (n <= 0 || buf[0] != '/')
        return NULL;
    buf[n] = 0;
    return strdup(buf);
}

/* See io.h. A relative path costs one getcwd (or, after dirfd, the
 * directory's /proc link); an absolute one no system call (path.h). */
char *io_name(int dirfd, const char *path)
{
    char dir[PATH_MAX], out[PATH_MAX];

    if (!path)
        return NULL;
    dir[0] = 0;
    if (path[0] != '/') {
        if (dirfd == AT_FDCWD) {
            if (!getcwd(dir, sizeof dir))
                dir[0] = 0;
        } else {
            char *d = io_fd_path(dirfd);
            if (d)
                snprintf(dir, sizeof dir, "%s", d);
            free(d);
        }
    }
    if (io_path_clean(dir, path, out, sizeof out) < 0)
        return strdup(path); /* no directory to go by, or too long */
    return strdup(out);
}

/* See io.h. */
void io_op_begin(io_frame *f, uint64_t e, OTF2_IoOperationMode m,
                 uint64_t request)
{
    if (!e)
        return;
    io_owed_pay(e, f->t);
    f->match = io_match();
    weft_evt_IoOperationBegin(NULL, f->t, io_entry_handle(e), m,
                              OTF2_IO_OPERATION_FLAG_NONE, request, f->match);
}

/* See io.h. */
void io_op_end(io_frame *f, uint64_t e, uint64_t result)
{
    if (!e)
        return;
    weft_evt_IoOperationComplete(NULL, f->t, io_entry_handle(e), result,
                                 f->match);
}

/* See io.h. */
void io_created(io_frame *f, io_fdmap *map, int fd, const char *name,
                OTF2_IoFileRef file, unsigned paradigm,
                OTF2_IoHandleRef parent, io_open_mode mode)
{
    OTF2_IoHandleRef h = io_handle(name, fd, file, paradigm,
                                   OTF2_IO_HANDLE_FLAG_NONE, parent);

    if (h == OTF2_UNDEFINED_IO_HANDLE) {
        io_fdmap_take(map, fd);
        return;
    }
    io_fdmap_set(map, fd, io_entry(h, file));
    weft_evt_IoCreateHandle(NULL, f->t, h, mode.access, mode.creation,
                            mode.status);
}

/* See io.h. */
void io_posix_opened(io_frame *f, int fd, int dirfd, const char *path,
                     int flags)
{
    char *resolved;
    const char *name;

    if (fd < 0)
        return;
    resolved = path ? io_name(dirfd, path) : io_fd_path(fd);
    name = resolved ? resolved : path;
    io_created(f, &io_fds, fd, name, io_file(name), IO_PARADIGM_POSIX,
               OTF2_UNDEFINED_IO_HANDLE, io_flags_open(flags));
    free(resolved);
}

/* The pre-created handle of standard descriptor fd (named `name`), and
 * of its stream `fp` (named `sname`), if fd is open. */
static void std_stream(int fd, const char *name, FILE *fp,
                       const char *sname)
{
    int fl = fcntl(fd, F_GETFL);
    io_open_mode m;
    struct stat st;
    OTF2_IoFileRef file = OTF2_UNDEFINED_IO_FILE;
    OTF2_IoHandleRef h, s;

    if (fl < 0)
        return;
    m = io_flags_open(fl);
    /* A regular file or directory (a redirection) is a file, named by
     * the kernel; a terminal, pipe, socket or device is none, and its
     * name is not asked for (path.h: what /proc costs). */
    if (fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
        char *path = io_fd_path(fd);
        if (path)
            file = io_file(path);
        free(path);
    }
    h = io_handle(name, -1, file, IO_PARADIGM_POSIX,
                  OTF2_IO_HANDLE_FLAG_PRE_CREATED, OTF2_UNDEFINED_IO_HANDLE);
    if (h == OTF2_UNDEFINED_IO_HANDLE)
        return;
    weft_def_IoPreCreatedHandleState(h, m.access, m.status);
    io_fdmap_set(&io_fds, fd, io_entry(h, file));
    if (!fp)
        return;
    s = io_handle(sname, -1, file, IO_PARADIGM_ISOC,
                  OTF2_IO_HANDLE_FLAG_PRE_CREATED, h);
    if (s == OTF2_UNDEFINED_IO_HANDLE)
        return;
    weft_def_IoPreCreatedHandleState(s, m.access, m.status);
    io_fdmap_set(&io_streams, fd, io_entry(s, file));
}

/* See io.h. */
void io_handles_init(void)
{
    OTF2_IoParadigmProperty props[1] = { OTF2_IO_PARADIGM_PROPERTY_VERSION };
    OTF2_Type types[1] = { OTF2_TYPE_STRING };
    OTF2_AttributeValue posix[1] = { { .stringRef = weft_string("2008") } };
    OTF2_AttributeValue isoc[1] = { { .stringRef = weft_string("C11") } };

    weft_def_IoParadigm(IO_PARADIGM_POSIX, weft_string("POSIX"),
                        weft_string("POSIX I/O"),
                        OTF2_IO_PARADIGM_CLASS_SERIAL,
                        OTF2_IO_PARADIGM_FLAG_OS, 1, props, types, posix);
    weft_def_IoParadigm(IO_PARADIGM_ISOC, weft_string("ISOC"),
                        weft_string("ISO C I/O"),
                        OTF2_IO_PARADIGM_CLASS_SERIAL,
                        OTF2_IO_PARADIGM_FLAG_NONE, 1, props, types, isoc);
    std_stream(0, "stdin", stdin, "stdin");
    std_stream(1, "stdout", stdout, "stdout");
    std_stream(2, "stderr", stderr, "stderr");
}

/* posix.c - the hooks of the POSIX I/O calls (calls.def): handles,
 * operations, seeks and names (see io.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flags.h"
#include "io.h"


/* Bytes of a failed call's result. */
static uint64_t bytes(ssize_t rc)
{
    return rc < 0 ? OTF2_UNDEFINED_UINT64 : (uint64_t)rc;
}

static uint64_t iov_bytes(const struct iovec *iov, int n)
{
    uint64_t sum = 0;

    for (int i = 0; iov && i < n; i++)
        sum += iov[i].iov_len;
    return sum;
}

/* ---- handles ------------------------------------------------------------ */

void io_pre_open(io_frame *f, const char *path, int flags)
{
}

void io_post_open(io_frame *f, int rc, const char *path, int flags)
{
    io_posix_opened(f, rc, AT_FDCWD, path, flags);
}

void io_pre_openat(io_frame *f, int dirfd, const char *path, int flags)
{
}

void io_post_openat(io_frame *f, int rc, int dirfd, const char *path,
                    int flags)
{
    io_posix_opened(f, rc, dirfd, path, flags);
}

void io_pre_creat(io_frame *f, const char *path, mode_t mode)
{
}

void io_post_creat(io_frame *f, int rc, const char *path, mode_t mode)
{
    io_posix_opened(f, rc, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC);
}

/* Records the end of the handle of entry e. */
static void destroyed(io_frame *f, uint64_t e)
{
    if (e)
        weft_evt_IoDestroyHandle(NULL, f->t, io_entry_handle(e));
}

/* The entry is taken before the descriptor is closed: once it is, the
 * kernel may hand its number to another thread's open, whose entry a
 * take after the close would remove (that thread's writes then named no
 * file). */
void io_pre_close(io_frame *f, int fd)
{
    f->entry = io_fdmap_take(&io_fds, fd);
}

/* Linux frees the descriptor even when close fails (EINTR, EIO): the
 * handle ends. EBADF: the number was not open, an entry of it was stale
 * (the descriptor closed unseen: by a raw syscall, say) and is dropped
 * all the same. */
void io_post_close(io_frame *f, int rc, int fd)
{
    if (rc == 0 || f->g.saved_errno != EBADF)
        destroyed(f, f->entry);
}

/* newfd became a copy of fd's handle (e): a new handle of the same file
 * and IoDuplicateHandle. */
static void duplicated(io_frame *f, int newfd, uint64_t e, int cloexec)
{
    OTF2_IoHandleRef h;
    char *path;

    if (!e)
        return;
    path = io_fd_path(newfd);
    h = io_handle(path, newfd, io_entry_file(e), IO_PARADIGM_POSIX,
                  OTF2_IO_HANDLE_FLAG_NONE, OTF2_UNDEFINED_IO_HANDLE);
    free(path);
    if (h == OTF2_UNDEFINED_IO_HANDLE)
        return;
    io_fdmap_set(&io_fds, newfd, io_entry(h, io_entry_file(e)));
    weft_evt_IoDuplicateHandle(NULL, f->t, io_entry_handle(e), h,
                               cloexec ? OTF2_IO_STATUS_FLAG_CLOSE_ON_EXEC
                                       : OTF2_IO_STATUS_FLAG_NONE);
}

void io_pre_dup(io_frame *f, int fd)
{
    f->entry = io_fdmap_get(&io_fds, fd);
}

void io_post_dup(io_frame *f, int rc, int fd)
{
    if (rc >= 0)
        duplicated(f, rc, f->entry, 0);
}

/* A stream on descriptor fd (stdout, say) now writes to what fd was
 * made a copy of: its handle ends and a new one, child of fd's new
 * handle, names that file (sort -o opens its output and dup2s it onto
 * standard output, then writes through stdout). */
static void restream(io_frame *f, int fd)
{
    uint64_t s = io_fdmap_take(&io_streams, fd);
    uint64_t d = io_fdmap_get(&io_fds, fd);
    int fl;
    char *path;

    if (!s)
        return;
    destroyed(f, s);
    if (!d || (fl = fcntl(fd, F_GETFL)) < 0)
        return;
    path = io_fd_path(fd);
    io_created(f, &io_streams, fd, path ? path : "", io_entry_file(d),
               IO_PARADIGM_ISOC, io_entry_handle(d), io_flags_open(fl));
    free(path);
}

/* dup2 and dup3 close newfd first when it is open (and not fd). */
static void dup_to(io_frame *f, int rc, int fd, int newfd, int cloexec)
{
    if (rc < 0 || newfd == fd)
        return;
    destroyed(f, io_fdmap_take(&io_fds, newfd));
    duplicated(f, newfd, f->entry, cloexec);
    restream(f, newfd);
}

void io_pre_dup2(io_frame *f, int fd, int newfd)
{
    f->entry = io_fdmap_get(&io_fds, fd);
}

void io_post_dup2(io_frame *f, int rc, int fd, int newfd)
{
    dup_to(f, rc, fd, newfd, 0);
}

void io_pre_dup3(io_frame *f, int fd, int newfd, int flags)
{
    f->entry = io_fdmap_get(&io_fds, fd);
}

void io_post_dup3(io_frame *f, int rc, int fd, int newfd, int flags)
{
    dup_to(f, rc, fd, newfd, (flags & O_CLOEXEC) != 0);
}

void io_pre_fcntl(io_frame *f, int fd, int cmd, void *arg)
{
    if (cmd == F_SETFL || cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
        f->entry = io_fdmap_get(&io_fds, fd);
}

void io_post_fcntl(io_frame *f, int rc, int fd, int cmd, void *arg)
{
    if (rc < 0 || !f->entry)
        return;
    if (cmd == F_SETFL)
        weft_evt_IoChangeStatusFlags(NULL, f->t, io_entry_handle(f->entry),
                                     io_flags_status((int)(intptr_t)arg));
    else
        duplicated(f, rc, f->entry, cmd == F_DUPFD_CLOEXEC);
}

/* ---- operations --------------------------------------------------------- */

void io_pre_read(io_frame *f, int fd, void *buf, size_t n)
{
    f->entry = io_fdmap_get(&io_fds, fd);
    io_op_begin(f, f->entry, OTF2_IO_OPERATION_MODE_READ, n);
}

void io_post_read(io_frame *f, ssize_t rc, int fd, void *buf, size_t n)
{
    io_op_end(f, f->entry, bytes(rc));
}

void io_pre_write(io_frame *f, int fd, const void *buf, size_t n)
{
    f->entry = io_fdmap_get(&io_fds, fd);
    io_op_begin(f, f->entry, OTF2_IO_OPERATION_MODE_WRITE, n);
}

void io_post_write(io_frame *f, ssize_t rc, int fd, const void *buf,
                   size_t n)
{
    io_op_end(f, f->entry, bytes(rc));
}

void io_pre_pread(io_frame *f, int fd, void *buf, size_t n, off_t off)
{
    io_pre_read(f, fd, buf, n);
}

void io_post_pread(io_frame *f, ssize_t rc, int fd, void *buf, size_t n,
                   off_t off)
{
    io_post_read(f, rc, fd, buf, n);
}

void io_pre_pwrite(io_frame *f, int fd, const void *buf, size_t n,
                   off_t off)
{
    io_pre_write(f, fd, buf, n);
}

void io_post_pwrite(io_frame *f, ssize_t rc, int fd, const void *buf,
                    size_t n, off_t off)
{
    io_post_write(f, rc, fd, buf, n);
}

void io_pre_readv(io_frame *f, int fd, const struct iovec *iov, int n)
{
    f->entry = io_fdmap_get(&io_fds, fd);
    io_op_begin(f, f->entry, OTF2_IO_OPERATION_MODE_READ, iov_bytes(iov, n));
}

void io_post_readv(io_frame *f, ssize_t rc, int fd, const struct iovec *iov,
                   int n)
{
    io_op_end(f, f->entry, bytes(rc));
}

void io_pre_writev(io_frame *f, int fd, const struct iovec *iov, int n)
{
    f->entry = io_fdmap_get(&io_fds, fd);
    io_op_begin(f, f->entry, OTF2_IO_OPERATION_MODE_WRITE,
                iov_bytes(iov, n));
}

void io_post_writev(io_frame *f, ssize_t rc, int fd, const struct iovec *iov,
                    int n)
{
    io_op_end(f, f->entry, bytes(rc));
}

void io_pre_sync(io_frame *f, int fd)
{
    f->entry = io_fdmap_get(&io_fds, fd);
    io_op_begin(f, f->entry, OTF2_IO_OPERATION_MODE_FLUSH, 0);
}

void io_post_sync(io_frame *f, int rc, int fd)
{
    io_op_end(f, f->entry, rc < 0 ? OTF2_UNDEFINED_UINT64 : 0);
}

void io_pre_lseek(io_frame *f, int fd, off_t off, int whence)
{
    f->entry = io_fdmap_get(&io_fds, fd);
}

void io_post_lseek(io_frame *f, off_t rc, int fd, off_t off, int whence)
{
    if (f->entry && rc >= 0)
        weft_evt_IoSeek(NULL, f->t, io_entry_handle(f->entry), off,
                        io_flags_whence(whence), (uint64_t)rc);
}

/* ---- names -------------------------------------------------------------- */

/* The path resolved before the call (it may be gone after). */
void io_pre_unlink(io_frame *f, const char *path)
{
    f->path = io_name(AT_FDCWD, path);
}

void io_post_unlink(io_frame *f, int rc, const char *path)
{
    if (rc == 0 && f->path)
        weft_evt_IoDeleteFile(NULL, f->t, IO_PARADIGM_POSIX,
                              io_file(f->path));
}

void io_pre_unlinkat(io_frame *f, int dirfd, const char *path, int flags)
{
    f->path = io_name(dirfd, path);
}

void io_post_unlinkat(io_frame *f, int rc, int dirfd, const char *path,
                      int flags)
{
    if (rc == 0 && f->path)
        weft_evt_IoDeleteFile(NULL, f->t, IO_PARADIGM_POSIX,
                              (flags & AT_REMOVEDIR) ? io_directory(f->path)
                                                     : io_file(f->path));
}

void io_pre_rmdir(io_frame *f, const char *path)
{
    f->path = io_name(AT_FDCWD, path);
}

void io_post_rmdir(io_frame *f, int rc, const char *path)
{
    if (rc == 0 && f->path)
        weft_evt_IoDeleteFile(NULL, f->t, IO_PARADIGM_POSIX,
                              io_directory(f->path));
}

void io_pre_mkdir(io_frame *f, const char *path, mode_t mode)
{
}

/* A new directory is defined (OTF2 has no event for making one). */
void io_post_mkdir(io_frame *f, int rc, const char *path, mode_t mode)
{
    char *p;

    if (rc != 0)
        return;
    p = io_name(AT_FDCWD, path);
    if (p)
        io_directory(p);
    free(p);
}

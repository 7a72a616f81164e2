/* isoc.c - the hooks of the ISO C I/O calls (calls.def): streams are
 * ISO C I/O handles, found again by their descriptor (fileno) in
 * io_streams (see io.h). Streams without a descriptor (fmemopen,
 * open_memstream) have no handle: their calls record the region only.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "io.h"


/* The descriptor of fp, -1 for NULL or none (fileno_unlocked: it takes
 * no lock a stdio call in progress on another thread may hold). */
static int fd_of(FILE *fp)
{
    return fp ? fileno_unlocked(fp) : -1;
}

static uint64_t stream(FILE *fp)
{
    int fd = fd_of(fp);

    return fd < 0 ? 0 : io_fdmap_get(&io_streams, fd);
}

/* A stream was opened on descriptor fd: its handle, child of `parent`
 * (a POSIX handle or undefined), IoCreateHandle. */
static void opened(io_frame *f, FILE *fp, const char *path, const char *mode,
                   uint64_t parent)
{
    int fd = fd_of(fp);
    char *resolved;
    const char *name;

    if (fd < 0)
        return;
    resolved = path ? io_name(AT_FDCWD, path) : io_fd_path(fd);
    name = resolved ? resolved : path;
    io_created(f, &io_streams, fd, name,
               parent ? io_entry_file(parent) : io_file(name),
               IO_PARADIGM_ISOC,
               parent ? io_entry_handle(parent) : OTF2_UNDEFINED_IO_HANDLE,
               io_flags_fopen(mode));
    free(resolved);
}

void io_pre_fopen(io_frame *f, const char *path, const char *mode)
{
}

void io_post_fopen(io_frame *f, FILE *rc, const char *path, const char *mode)
{
    if (rc)
        opened(f, rc, path, mode, 0);
}

void io_pre_fdopen(io_frame *f, int fd, const char *mode)
{
    f->entry = io_fdmap_get(&io_fds, fd);
}

void io_post_fdopen(io_frame *f, FILE *rc, int fd, const char *mode)
{
    if (rc)
        opened(f, rc, NULL, mode, f->entry);
}

/* fclose ends the stream's handle and, for an fdopen'd stream, its
 * descriptor's (closed inside the C library, unseen). The stream is
 * gone even when fclose fails. What this thread owes the stream is
 * recorded, and the entries taken, before the descriptor closes: after
 * it, the kernel may give its number to another thread's open. */
static void closing(io_frame *f, FILE *fp)
{
    int fd = fd_of(fp);

    f->entry = f->entry_fd = 0;
    if (fd < 0)
        return;
    io_owed_pay(io_fdmap_get(&io_streams, fd), f->t);
    f->entry = io_fdmap_take(&io_streams, fd);
    f->entry_fd = io_fdmap_take(&io_fds, fd);
}

/* The handles closing() took end. */
static void closed(io_frame *f)
{
    if (f->entry)
        weft_evt_IoDestroyHandle(NULL, f->t, io_entry_handle(f->entry));
    if (f->entry_fd)
        weft_evt_IoDestroyHandle(NULL, f->t, io_entry_handle(f->entry_fd));
}

void io_pre_fclose(io_frame *f, FILE *fp)
{
    closing(f, fp);
}

void io_post_fclose(io_frame *f, int rc, FILE *fp)
{
    closed(f);
}

/* freopen closes fp's descriptor (also when it fails) and opens path on
 * the same stream, mostly on the same descriptor number (sort -o does it
 * to stdout): the old handles end, a new one names the new file, so the
 * bytes written next are that file's. Without path the stream keeps its
 * file in another mode: a new handle of the same file. */
void io_pre_freopen(io_frame *f, const char *path, const char *mode,
                    FILE *fp)
{
    closing(f, fp);
}

void io_post_freopen(io_frame *f, FILE *rc, const char *path,
                     const char *mode, FILE *fp)
{
    closed(f);
    if (rc)  /* no path: the descriptor's file, as the kernel names it */
        opened(f, rc, path ? path : "", mode, 0);
}

/* ---- operations --------------------------------------------------------- */

static void op_begin(io_frame *f, FILE *fp, OTF2_IoOperationMode m,
                     uint64_t request)
{
    f->entry = stream(fp);
    io_op_begin(f, f->entry, m, request);
}

void io_pre_fread(io_frame *f, void *p, size_t size, size_t n, FILE *fp)
{
    op_begin(f, fp, OTF2_IO_OPERATION_MODE_READ, (uint64_t)size * n);
}

void io_post_fread(io_frame *f, size_t rc, void *p, size_t size, size_t n,
                   FILE *fp)
{
    io_op_end(f, f->entry, (uint64_t)rc * size);
}

void io_pre_fwrite(io_frame *f, const void *p, size_t size, size_t n,
                   FILE *fp)
{
    op_begin(f, fp, OTF2_IO_OPERATION_MODE_WRITE, (uint64_t)size * n);
}

void io_post_fwrite(io_frame *f, size_t rc, const void *p, size_t size,
                    size_t n, FILE *fp)
{
    io_op_end(f, f->entry, (uint64_t)rc * size);
}

void io_pre_fgets(io_frame *f, char *s, int n, FILE *fp)
{
    op_begin(f, fp, OTF2_IO_OPERATION_MODE_READ, n > 1 ? (uint64_t)n - 1 : 0);
}

/* The bytes read are the string's length (a line holding a NUL byte
 * reads as shorter). */
void io_post_fgets(io_frame *f, char *rc, char *s, int n, FILE *fp)
{
    io_op_end(f, f->entry, rc ? strlen(rc) : 0);
}

void io_pre_fgetc(io_frame *f, FILE *fp)
{
    op_begin(f, fp, OTF2_IO_OPERATION_MODE_READ, 1);
}

void io_post_fgetc(io_frame *f, int rc, FILE *fp)
{
    io_op_end(f, f->entry, rc == EOF ? 0 : 1);
}

/* A read whose size is known only once done (getline, getdelim): the
 * request is what was read, Begin at the call's start. */
static void read_after(io_frame *f, FILE *fp, ssize_t rc)
{
    uint64_t t = f->t;

    f->entry = stream(fp);
    if (!f->entry)
        return;
    f->t = f->t0;
    io_op_begin(f, f->entry, OTF2_IO_OPERATION_MODE_READ,
                rc < 0 ? 0 : (uint64_t)rc);
    f->t = t;
    io_op_end(f, f->entry, rc < 0 ? 0 : (uint64_t)rc);
}

void io_pre_getline(io_frame *f, char **line, size_t *n, FILE *fp)
{
}

/* -1 is also the end of the file: 0 bytes. */
void io_post_getline(io_frame *f, ssize_t rc, char **line, size_t *n,
                     FILE *fp)
{
    read_after(f, fp, rc);
}

void io_pre_getdelim(io_frame *f, char **line, size_t *n, int delim,
                     FILE *fp)
{
}

void io_post_getdelim(io_frame *f, ssize_t rc, char **line, size_t *n,
                      int delim, FILE *fp)
{
    read_after(f, fp, rc);
}

void io_pre_fputs(io_frame *f, const char *s, FILE *fp)
{
    op_begin(f, fp, OTF2_IO_OPERATION_MODE_WRITE, s ? strlen(s) : 0);
}

void io_post_fputs(io_frame *f, int rc, const char *s, FILE *fp)
{
    io_op_end(f, f->entry,
              rc == EOF ? OTF2_UNDEFINED_UINT64 : s ? strlen(s) : 0);
}

void io_pre_fputc(io_frame *f, int c, FILE *fp)
{
    op_begin(f, fp, OTF2_IO_OPERATION_MODE_WRITE, 1);
}

void io_post_fputc(io_frame *f, int rc, int c, FILE *fp)
{
    io_op_end(f, f->entry, rc == EOF ? OTF2_UNDEFINED_UINT64 : 1);
}

/* Formatted output: the bytes are known only once written (the return
 * value), so the request is that too. */
void io_pre_vfprintf(io_frame *f, FILE *fp, const char *fmt, va_list ap)
{
    f->entry = stream(fp);
}

void io_post_vfprintf(io_frame *f, int rc, FILE *fp, const char *fmt,
                      va_list ap)
{
    uint64_t t = f->t;

    if (!f->entry)
        return;
    /* Begin at the call's start time, Complete at its end. */
    f->t = f->t0;
    io_op_begin(f, f->entry, OTF2_IO_OPERATION_MODE_WRITE,
                rc < 0 ? 0 : (uint64_t)rc);
    f->t = t;
    io_op_end(f, f->entry, rc < 0 ? OTF2_UNDEFINED_UINT64 : (uint64_t)rc);
}

void io_pre_vfprintf_chk(io_frame *f, FILE *fp, int flag, const char *fmt,
                         va_list ap)
{
    io_pre_vfprintf(f, fp, fmt, ap);
}

void io_post_vfprintf_chk(io_frame *f, int rc, FILE *fp, int flag,
                          const char *fmt, va_list ap)
{
    io_post_vfprintf(f, rc, fp, fmt, ap);
}

/* ---- positions ---------------------------------------------------------- */

/* IoSeek of a stream: the position after the call, from ftello. */
static void seeked(io_frame *f, FILE *fp, int64_t off, int whence)
{
    off_t pos;

    if (!f->entry)
        return;
    pos = ((off_t(*)(FILE *))io_real(IO_ftello))(fp);
    if (pos >= 0)
        weft_evt_IoSeek(NULL, f->t, io_entry_handle(f->entry), off,
                        io_flags_whence(whence), (uint64_t)pos);
}

void io_pre_fseek(io_frame *f, FILE *fp, long off, int whence)
{
    f->entry = stream(fp);
}

void io_post_fseek(io_frame *f, int rc, FILE *fp, long off, int whence)
{
    if (rc == 0)
        seeked(f, fp, off, whence);
}

void io_pre_fseeko(io_frame *f, FILE *fp, off_t off, int whence)
{
    f->entry = stream(fp);
}

void io_post_fseeko(io_frame *f, int rc, FILE *fp, off_t off, int whence)
{
    if (rc == 0)
        seeked(f, fp, off, whence);
}

void io_pre_rewind(io_frame *f, FILE *fp)
{
    f->entry = stream(fp);
}

void io_post_rewind(io_frame *f, FILE *fp)
{
    seeked(f, fp, 0, SEEK_SET);
}

/* ftell is a seek of 0 from the current position. */
void io_pre_ftell(io_frame *f, FILE *fp)
{
    f->entry = stream(fp);
}

void io_post_ftell(io_frame *f, long rc, FILE *fp)
{
    if (f->entry && rc >= 0)
        weft_evt_IoSeek(NULL, f->t, io_entry_handle(f->entry), 0,
                        OTF2_IO_SEEK_FROM_CURRENT, (uint64_t)rc);
}

void io_pre_ftello(io_frame *f, FILE *fp)
{
    f->entry = stream(fp);
}

void io_post_ftello(io_frame *f, off_t rc, FILE *fp)
{
    io_post_ftell(f, (long)rc, fp);
}

/* fflush(NULL) flushes every output stream: region only. */
void io_pre_fflush(io_frame *f, FILE *fp)
{
    if (fp)
        op_begin(f, fp, OTF2_IO_OPERATION_MODE_FLUSH, 0);
}

void io_post_fflush(io_frame *f, int rc, FILE *fp)
{
    io_op_end(f, f->entry, rc == EOF ? OTF2_UNDEFINED_UINT64 : 0);
}

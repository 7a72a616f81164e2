/* io.h - libweft-io's internals: the POSIX and ISO C I/O recorder.
 *
 * DESIGN
 * Every wrapped function is one entry of calls.def (STYLE habit 13).
 * wrap.c generates from it the wrappers, their regions (named after the
 * call, role FILE_IO or FILE_IO_METADATA, paradigm NONE: OTF2 3.0 has no
 * I/O region paradigm; the I/O paradigm is on the handles) and the
 * prototypes of the family hooks below. A wrapper is
 *
 *     io_begin (guard, Enter) ; io_pre_<hook> ; the real call ;
 *     io_post_<hook> ; io_end (Leave, guard, errno)
 *
 * and records nothing, calling straight through, when io_begin says so:
 * inside libweft (its sender thread, weft_open ...), inside another
 * wrapper on the same thread (fopen calling open, a signal handler
 * interrupting a wrapper), before the session is open or when tracing
 * is off, and in a child of fork() (libweft's session is the parent's).
 * The one guard is libweft's (weft__recorder_begin/end, client/
 * recorder.h); errno is what the real call left.
 *
 * The real functions come from dlsym(RTLD_NEXT) on first use (wrap.c), so
 * a wrapper works from the first call of the process, in a constructor
 * before main.
 *
 * Handles (handles.c): each successful open is a new IoHandle (paradigm
 * POSIX I/O) of an IoRegularFile named by the resolved path, scope the
 * host's system tree node; each fopen/fdopen a new IoHandle of paradigm
 * ISO C I/O (an fdopen'd stream's parent is its descriptor's handle).
 * The standard streams (fd 0-2, stdin/stdout/stderr) are pre-created
 * handles. Two lock-free maps from descriptor number to handle (fdmap.h)
 * find them again: one for descriptors, one for streams keyed by
 * fileno(). Descriptors the recorder did not see open (sockets, pipes,
 * inherited ones other than 0-2) have no handle: their calls record the
 * region only.
 */
#ifndef WEFT_IO_H
#define WEFT_IO_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_Events.h>

#include "fdmap.h"
#include "flags.h"
#include "recorder.h"
#include "weft.h"

#define IO__HIDDEN __attribute__((visibility("hidden")))
#define IO_EXPORT __attribute__((visibility("default")))
#define IO_UNPAREN(...) __VA_ARGS__

/* One id per entry of calls.def: IO_read, IO_fopen, ... */
enum io_call_id {
#define IO(name, ret, role, hook, params, args) IO_##name,
#define IOV(name, ret, role, hook) IO_##name,
#include "calls.def"
    IO__COUNT
};

/* The two I/O paradigms (ids of nature: the same in every process). */
enum { IO_PARADIGM_POSIX = 0, IO_PARADIGM_ISOC = 1 };

/* A recorded call in progress, on the wrapper's stack. */
typedef struct io_frame {
    weft__rguard g;      /* g.saved_errno: the program's errno, then the
                            one the real call left */
    unsigned call;       /* enum io_call_id */
    OTF2_RegionRef region;
    uint64_t t0;         /* Enter's time */
    uint64_t t;          /* Enter's time, then (after the call) Leave's */
    uint64_t entry;      /* pre -> post: a map entry the hook looked up
                            (or took: see io_post_close) */
    uint64_t entry_fd;   /* pre -> post: the descriptor's entry fclose and
                            freopen took with the stream's (entry) */
    uint64_t match;      /* pre -> post: the operation's matchingId */
    int aux;             /* pre -> post: hook's own (a descriptor ...) */
    char *path;          /* pre -> post: a resolved path (malloc'd) */
} io_frame;

/* The real function of `call` (dlsym RTLD_NEXT once); aborts with a
 * message when the C library has none. */
IO__HIDDEN void *io_real(unsigned call);
/* Resolves every call's real function now, at load: resolving one on
 * first use takes ld.so's lock, which libweft's sender thread (calling
 * read, write, close under libweft's mutex) must not wait for while a
 * thread in dlopen's constructors waits for that mutex (see
 * recorders/pthread/pt.h, pt_resolve_all). */
IO__HIDDEN void io_resolve_all(void);
/* Reads WEFT_FILTER (weft__recorder_filter) as the session opens: the
 * calls it excludes are called, not recorded. */
IO__HIDDEN void io_filter_setup(void);
/* The name of `call` (its region's). */
IO__HIDDEN const char *io_call_name(unsigned call);
/* Starts a wrapped call made by code at `caller`: 1 with the guard raised
 * and f ready (f->t0 = f->t: now) when the call is to be recorded (Enter
 * not yet), else 0 as io_begin_at. errno unchanged. */
IO__HIDDEN int io_start(io_frame *f, unsigned call, const void *caller);
/* Records f's Enter at f->t. */
IO__HIDDEN void io_enter(io_frame *f);
/* Starts a wrapped call made by code at `caller`: 1 and Enter recorded
 * when the call is to be recorded (io_end must follow), 0 to call
 * through - also when the MPI stack, an allocator or weft made it
 * (weft__recorder_foreign). errno unchanged. */
IO__HIDDEN int io_begin_at(io_frame *f, unsigned call, const void *caller);
/* The code that called the wrapper this is written in (never in a
 * helper the wrapper calls: an inlined helper's is not its own). */
#define IO_CALLER __builtin_return_address(0)
/* io_begin_at in the wrapper itself. */
#define io_begin(f, call) io_begin_at((f), (call), IO_CALLER)
/* Between the real call and the post hook: keeps the errno the call
 * left and takes the Leave time. */
IO__HIDDEN void io_mid(io_frame *f);
/* Records Leave, lowers the guard and restores the call's errno. */
IO__HIDDEN void io_end(io_frame *f);

/* ---- calls served from a stream's buffer (buffered.c) ------------------ */

#include "buffered.h"

#define IO_IS_WRITE_READ 0
#define IO_IS_WRITE_WRITE 1
#define IO_IS_WRITE_FLUSH 2 /* io_buffer_served's flush */

/* Reads WEFT_STDIO and defines the metrics of the counts, once the
 * session is open. Guard raised. */
IO__HIDDEN void io_count_setup(void);
/* After io_start of a call on stream fp: 1 when the call may be counted
 * (fp's buffer view taken into *v, Enter deferred), else 0 with Enter
 * recorded (WEFT_STDIO=all, no stream). */
IO__HIDDEN int io_count_view(io_frame *f, FILE *fp, io_bufview *v);
/* After io_mid: 1 when the call read (w 0) or wrote (w 1) its `bytes`
 * (< 0: failed or read nothing) within fp's buffer, or flushed (w 2)
 * a stream that had nothing to write: counted, guard
 * lowered, errno the call's - the wrapper returns. Else 0: the call is
 * to be recorded (io_count_missed). */
IO__HIDDEN int io_count_served(io_frame *f, FILE *fp, const io_bufview *v,
                               int w, int64_t bytes);
/* Records a call io_count_served did not count: Enter at its start;
 * f->t is its start (for the pre hook) until the caller sets it back to
 * the returned end. */
IO__HIDDEN uint64_t io_count_missed(io_frame *f);
/* Records at t what this thread's counted calls owe handle map entry
 * `entry` (their bytes), before an operation on it or its end. */
IO__HIDDEN void io_owed_pay(uint64_t entry, uint64_t t);

/* What a call a stream's buffer may serve moved: bytes, or -1 when it
 * failed, moved fewer than asked or read nothing. */
static inline int64_t io_bytes_fread(size_t rc, void *p, size_t size,
                                     size_t n, FILE *fp)
{
    return rc == n ? (int64_t)(rc * size) : -1;
}
static inline int64_t io_bytes_fwrite(size_t rc, const void *p, size_t size,
                                      size_t n, FILE *fp)
{
    return rc == n ? (int64_t)(rc * size) : -1;
}
static inline int64_t io_bytes_fgets(char *rc, char *s, int n, FILE *fp)
{
    return rc ? (int64_t)strlen(rc) : -1;
}
static inline int64_t io_bytes_fgetc(int rc, FILE *fp)
{
    return rc == EOF ? -1 : 1;
}
static inline int64_t io_bytes_getline(ssize_t rc, char **line, size_t *n,
                                       FILE *fp)
{
    return rc > 0 ? rc : -1;
}
static inline int64_t io_bytes_getdelim(ssize_t rc, char **line, size_t *n,
                                        int delim, FILE *fp)
{
    return rc > 0 ? rc : -1;
}
static inline int64_t io_bytes_fputs(int rc, const char *s, FILE *fp)
{
    return rc == EOF ? -1 : (int64_t)strlen(s);
}
static inline int64_t io_bytes_fputc(int rc, int c, FILE *fp)
{
    return rc == EOF ? -1 : 1;
}
static inline int64_t io_bytes_fflush(int rc, FILE *fp)
{
    return rc == 0 ? 0 : -1;
}
static inline int64_t io_bytes_vfprintf(int rc, FILE *fp, const char *fmt,
                                        va_list ap)
{
    return rc;
}
static inline int64_t io_bytes_vfprintf_chk(int rc, FILE *fp, int flag,
                                            const char *fmt, va_list ap)
{
    return rc;
}

/* ---- handles (handles.c) ---------------------------------------------- */

/* Descriptor -> POSIX handle, stream (by fileno) -> ISO C handle. */
extern io_fdmap io_fds IO__HIDDEN;
extern io_fdmap io_streams IO__HIDDEN;

/* Defines the paradigms and the standard streams' pre-created handles
 * (session open, once). */
IO__HIDDEN void io_handles_init(void);
/* The IoRegularFile of `path` (the caller resolved it): a new local id
 * (weftd merges equal ones). OTF2_UNDEFINED_IO_FILE when out of ids. */
IO__HIDDEN OTF2_IoFileRef io_file(const char *path);
/* The IoDirectory of `path`. */
IO__HIDDEN OTF2_IoFileRef io_directory(const char *path);
/* A new IoHandle of `file` in `paradigm`, child of `parent`, named
 * "PATH (fd N)" from `path` and its descriptor fd (or `path` alone for
 * fd < 0); returns its id. weftd merges definitions of equal content, so
 * the descriptor in the name keeps handles that are open at once
 * distinct (a dup, the same file opened twice). */
IO__HIDDEN OTF2_IoHandleRef io_handle(const char *path, int fd,
                                      OTF2_IoFileRef file, unsigned paradigm,
                                      OTF2_IoHandleFlag flags,
                                      OTF2_IoHandleRef parent);
/* The path of open descriptor fd as the kernel knows it
 * (/proc/self/fd/FD: symbolic links followed); malloc'd or NULL. Costs
 * the kernel a proc inode: for descriptors the program named no path
 * for (dup, fdopen, the standard streams). */
IO__HIDDEN char *io_fd_path(int fd);
/* A file's name: `path` relative to dirfd (AT_FDCWD: the working
 * directory) made absolute and cleaned (path.h: ".", ".." and repeated
 * '/' taken out, no symbolic link followed); `path` itself when the
 * directory is unknown. malloc'd, NULL for a NULL path or no memory. */
IO__HIDDEN char *io_name(int dirfd, const char *path);
/* A fresh matchingId. */
IO__HIDDEN uint64_t io_match(void);

/* Records a blocking operation's Begin (at the call's Enter time) on the
 * handle of map entry `e` (nothing for 0). */
IO__HIDDEN void io_op_begin(io_frame *f, uint64_t e, OTF2_IoOperationMode m,
                            uint64_t request);
/* ... and its Complete: `result` bytes, or OTF2_UNDEFINED_UINT64 when
 * the call failed. */
IO__HIDDEN void io_op_end(io_frame *f, uint64_t e, uint64_t result);

/* Descriptor fd (>= 0) was opened in `paradigm` on `file`, named `name`
 * (its resolved path), in `mode`, child of handle `parent` (or
 * OTF2_UNDEFINED_IO_HANDLE): defines the handle, maps fd to it in `map`
 * (io_fds or io_streams; unmapped when out of ids), records
 * IoCreateHandle. */
IO__HIDDEN void io_created(io_frame *f, io_fdmap *map, int fd,
                           const char *name, OTF2_IoFileRef file,
                           unsigned paradigm, OTF2_IoHandleRef parent,
                           io_open_mode mode);
/* A POSIX descriptor fd was opened (fd >= 0) from `path` relative to
 * dirfd with open(2) `flags`: defines file and handle, records
 * IoCreateHandle. */
IO__HIDDEN void io_posix_opened(io_frame *f, int fd, int dirfd,
                                const char *path, int flags);

/* ---- the hook prototypes, from the table ------------------------------ */

#define IO(name, ret, role, hook, params, args)                              \
    IO__HIDDEN void io_pre_##hook(io_frame *f, IO_UNPAREN params);           \
    IO__HIDDEN void io_post_##hook(io_frame *f, ret rc, IO_UNPAREN params);
#include "calls.def"
/* Hooks of the hand-written (variadic) wrappers without an IO entry. */
IO__HIDDEN void io_pre_fcntl(io_frame *f, int fd, int cmd, void *arg);
IO__HIDDEN void io_post_fcntl(io_frame *f, int rc, int fd, int cmd,
                              void *arg);
IO__HIDDEN void io_pre_rewind(io_frame *f, FILE *fp);
IO__HIDDEN void io_post_rewind(io_frame *f, FILE *fp);

/* Declared by glibc only for fortified builds. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...);
int __printf_chk(int flag, const char *fmt, ...);
int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);
int fcntl64(int fd, int cmd, ...);
ssize_t __getdelim(char **line, size_t *n, int delim, FILE *fp);

#endif

/* path.h - how libweft-io names a file: the path the program gave, made
 * absolute and cleaned without asking the kernel (tests/test_iopath.c).
 *
 * Naming a file from /proc/self/fd/N cost 6 us of kernel time per open
 * here (the fd's proc inode and dentry, made and dropped again): 1.3 ms
 * for a compiler's 220 headers. A lexical name costs nothing; it follows
 * no symbolic link, as the program did not either.
 */
#ifndef WEFT_IO_PATH_H
#define WEFT_IO_PATH_H

#include <stddef.h>

#define IO_PATH__HIDDEN __attribute__((visibility("hidden")))

/* Writes to out[0..len) the absolute path of `path` relative to the
 * absolute directory `dir` (ignored when `path` is absolute; NULL or ""
 * is the root): "." and empty components dropped, ".." takes the
 * component before it away (never above the root). 0, or -1 when the
 * result and its NUL do not fit in len bytes, when `path` is empty, or
 * when a relative `path` has no absolute `dir` (out is then ""). */
IO_PATH__HIDDEN int io_path_clean(const char *dir, const char *path,
                                  char *out, size_t len);

#endif

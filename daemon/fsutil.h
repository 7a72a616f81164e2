/* fsutil.h - small file system helpers of weftd: paths, directories.
 * Blocking calls: the loop thread uses them at start-up and for a new
 * trace's directory, worker threads for the rest. Any thread.
 */
#ifndef WEFT_FSUTIL_H
#define WEFT_FSUTIL_H

#include <sys/types.h>

/* mkdir -p: creates path and its missing parents (mode parents, the last
 * one mode leaf); directories that exist are fine. 0, or -1 with errno
 * set (ENAMETOOLONG for a path of 4096 bytes or more). */
int weft_mkdir_p(const char *path, mode_t parents, mode_t leaf);

/* "a/b", malloc'd (the caller frees it), or NULL when out of memory. */
char *weft_path_join(const char *a, const char *b);

/* rm -rf path: removes the file or directory tree, not following
 * symbolic links. A path that does not exist is fine. Best effort: it
 * stops at the first entry it cannot remove. */
void weft_rm_tree(const char *path);

#endif

/* fsutil.h - small file system helpers of weftd: paths, directories.
 * Blocking calls: the loop thread uses them at start-up and for a new
 * trace's directory, worker threads for the rest. Any thread.
 */
#ifndef WEFT_FSUTIL_H
#define WEFT_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The spool's traces/ directory: others may pass through it to their own
 * trace's directory, not list it. A trace's directory is weftd's alone
 * (0700) but for its owner's ACL entry (weft_share_tree). */
#define WEFT_TRACES_DIR_MODE 0711
#define WEFT_TRACE_DIR_MODE 0700

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

/* Lets uid read what is at path: an ACL entry user:uid:r-x on every
 * directory of the tree and user:uid:r-- on every file (not following
 * symbolic links), the mask widened to allow it. Nothing when uid is
 * weftd's own user or root. 0, or -1 with err saying why (a file system
 * without ACLs: EOPNOTSUPP). Worker threads. */
int weft_share_tree(const char *path, uint32_t uid, char *err,
                    size_t errlen);
/* 1 when directory path (st: its lstat) lets group or others in by its
 * mode alone, as a weftd before weft_share_tree made trace directories:
 * group or other bits set and no ACL entries beyond them (with some, the
 * group bits are the ACL's mask). Else 0. */
int weft_dir_open_to_others(const char *path, const struct stat *st);

#endif

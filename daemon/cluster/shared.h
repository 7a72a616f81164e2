/* shared.h - the head's archive_root, a shared file system, as the head
 * marks it and a node checks it (issue #34).
 *
 * The nodes are to write their processes' event files into each trace's
 * archive directory under the head's [cluster] archive_root. A node may
 * do so only where it sees the head's file system: the head writes
 * ROOT/.weft-head at its start (its host name and a token drawn then)
 * and says its archive_root and the token in its NodeHelloAck; the node
 * reads the file where it sees that root (its own archive_root, else the
 * head's path), then makes and removes a directory there. It does so on
 * a thread of its own (a file system that hangs holds no loop), at each
 * link and every WEFT_SHARED_RECHECK_S while linked; its NodeStatus says
 * what it found, and both sides' `weft status` show it.
 */
#ifndef WEFT_SHARED_H
#define WEFT_SHARED_H

#include <stddef.h>

#include "weftd_config.h"

#define WEFT_ARCHIVE_MARK ".weft-head"
/* Seconds between a node's checks while linked. */
#define WEFT_SHARED_RECHECK_S 60
/* Hexadecimal digits of the head's token. */
#define WEFT_ARCHIVE_TOKEN_LEN 32

/* Head, at start: writes ROOT/.weft-head (mode 0644, replaced whole)
 * with host and a new token, which it copies into token. 0, or -1 with
 * err saying why. Blocking. */
int weft_shared_mark(const char *root, const char *host,
                     char token[WEFT_ARCHIVE_TOKEN_LEN + 1], char *err,
                     size_t errlen);

/* What a node found of its head's archive_root. */
enum weft_shared_state {
    WEFT_SHARED_NONE,       /* the head has none */
    WEFT_SHARED_CHECKING,
    WEFT_SHARED_OK,
    WEFT_SHARED_UNUSABLE    /* error says why */
};

typedef struct weft_shared_check {
    enum weft_shared_state state;
    char path[WEFT_ARCHIVE_ROOT_MAX + 1]; /* where the node looked */
    char error[512];
} weft_shared_check;

/* Node: checks that path holds the head's mark with token, and that this
 * weftd may make a directory there (named after node, removed again);
 * fills out (OK or UNUSABLE). Blocking: a worker thread's. */
void weft_shared_check_run(const char *path, const char *token,
                           const char *node, weft_shared_check *out);
/* "none", "checking", "ok", "unusable". */
const char *weft_shared_state_name(enum weft_shared_state s);

#endif

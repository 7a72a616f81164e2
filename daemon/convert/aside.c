/* aside.c - the event files a head's nodes wrote, kept through an
 * archive made anew (issue #34).
 *
 * DESIGN: a head's archive is the primary its stream made, beside which
 * its nodes write their processes' event files (stream.c). When that
 * stream is gone (the head restarted: its primary went with the weftd
 * that made it) or broke (the disk, its budget's floor), the conversion
 * makes the archive anew, and libotf2 makes a primary only where no
 * archive is. So the directory the nodes wrote in is renamed aside,
 * ARCHIVE.nodes, before the new primary is made; once it is, the event
 * files of the remote members' locations are moved into it (the
 * rest of the old directory, what the head's own stream had written, is
 * written again from the journals), and the old one is removed when the
 * archive is done. Every step is a rename, so that a conversion stopped
 * anywhere (weftd killed, a failure) leaves each node's file in exactly
 * one of the two directories; the next one moves back into ARCHIVE.nodes
 * what the last had moved out, and goes on. A remote member one of whose
 * locations recorded events and has no file there is lost (its node's
 * files are not where the head made its archive), saying so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert_internal.h"
#include "fsutil.h"
#include "otf2out.h"
#include "sums.h"
#include "weft_errors.h"

/* dir's event file of l (m's) into path (size 4096). */
static void evt_path(char *path, const char *dir, const member *m,
                     const loc *l)
{
    snprintf(path, 4096, "%s/traces/%" PRIu64 ".evt", dir,
             weft__loc_id(m, l));
}

/* Whether m's event files are the node's to move: a remote member the
 * conversion does not write (lost: its files are made empty). */
static int nodes_member(const member *m)
{
    return m->remote && !m->lost;
}

/* Moves the event files of the remote members' locations from directory
 * `from` into `to` (its traces/ made if missing). A file not there
 * is fine (moved before, or never written). 0, or WEFT_EIO (c failed). */
static int move_files(conv *c, const char *from, const char *to)
{
    char src[4096], dst[4096];

    snprintf(dst, sizeof dst, "%s/traces", to);
    if (weft_mkdir_p(dst, 0700, 0700) < 0)
        return weft__conv_fail(c, WEFT_EIO, "%s: cannot make it: %s", dst,
                               strerror(errno));
    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        if (!nodes_member(m))
            continue;
        for (size_t k = 0; k < m->nlocs; k++) {
            evt_path(src, from, m, &m->locs[k]);
            evt_path(dst, to, m, &m->locs[k]);
            if (rename(src, dst) < 0 && errno != ENOENT)
                return weft__conv_fail(c, WEFT_EIO, "%s: cannot move it to "
                                       "%s: %s", src, dst, strerror(errno));
        }
    }
    return 0;
}

/* Each remote member with a location that recorded events and has no
 * file in c->aside is lost. */
static void check_files(conv *c)
{
    char path[4096];
    struct stat st;

    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        for (size_t k = 0; nodes_member(m) && k < m->nlocs; k++) {
            evt_path(path, c->aside, m, &m->locs[k]);
            if (!m->locs[k].journaled || stat(path, &st) == 0)
                continue;
            m->lost = WEFT__LOST_NO_FILES;
            for (size_t j = 0; j < m->nlocs; j++)
                m->locs[j].journaled = 0;
            weft__sums_free(m->sums);
            m->sums = NULL;
        }
    }
}

/* See convert_internal.h. */
int weft__aside_take(conv *c)
{
    const char *dir = c->in->archive_dir;
    struct stat st;
    int rc;

    if (asprintf(&c->aside, "%s.nodes", dir) < 0) {
        c->aside = NULL;
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    }
    if (lstat(c->aside, &st) == 0) {
        /* An earlier conversion stopped after it: what it moved back
         * goes aside again, the rest of dir is made anew. */
        if ((rc = move_files(c, dir, c->aside)) < 0)
            return rc;
    } else if (rename(dir, c->aside) < 0) {
        if (errno != ENOENT)
            return weft__conv_fail(c, WEFT_EIO, "%s: cannot rename it to "
                                   "%s: %s", dir, c->aside, strerror(errno));
        /* No archive at all: no node wrote any file (check_files) */
    }
    check_files(c);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return weft__conv_fail(c, WEFT_EIO, "%s: cannot make it: %s", dir,
                               strerror(errno));
    if ((rc = weft__otf2_open(c)) < 0)
        return rc;
    return move_files(c, c->aside, dir);
}

/* See convert_internal.h. */
void weft__aside_drop(conv *c)
{
    if (c->aside)
        weft_rm_tree(c->aside);
}

/* fsutil.c - small file system helpers of weftd (see fsutil.h). */
#include "fsutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/acl.h>
#include <acl/libacl.h>

int weft_mkdir_p(const char *path, mode_t parents, mode_t leaf)
{
    char buf[4096];
    size_t n = strlen(path);

    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, parents) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, leaf) != 0 && errno != EEXIST ? -1 : 0;
}

char *weft_path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);

    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void weft_rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- ACLs ---- */

/* weft_share_tree's uid for share_entry (nftw passes no argument). */
static __thread uid_t share_uid;
static __thread int share_errno;
static __thread char share_path[256];

/* Sets user:share_uid:perms on path's access ACL, and the mask to let it
 * through. 0 or -1 with errno set. */
static int share_one(const char *path, acl_perm_t x)
{
    acl_t acl = acl_get_file(path, ACL_TYPE_ACCESS);
    acl_entry_t e = NULL, found = NULL;
    acl_permset_t ps;
    int id = ACL_FIRST_ENTRY, rc = -1;

    if (!acl)
        return -1;
    while (acl_get_entry(acl, id, &e) == 1) {
        acl_tag_t tag;
        id = ACL_NEXT_ENTRY;
        if (acl_get_tag_type(e, &tag) == 0 && tag == ACL_USER) {
            uid_t *q = acl_get_qualifier(e);
            int same = q && *q == share_uid;
            acl_free(q);
            if (same) {
                found = e;
                break;
            }
        }
    }
    if (!found && (acl_create_entry(&acl, &found) != 0 ||
                   acl_set_tag_type(found, ACL_USER) != 0 ||
                   acl_set_qualifier(found, &share_uid) != 0))
        goto out;
    if (acl_get_permset(found, &ps) != 0 || acl_clear_perms(ps) != 0 ||
        acl_add_perm(ps, ACL_READ) != 0 || (x && acl_add_perm(ps, x) != 0) ||
        acl_set_permset(found, ps) != 0 || acl_calc_mask(&acl) != 0)
        goto out;
    rc = acl_set_file(path, ACL_TYPE_ACCESS, acl);
out:
    acl_free(acl);
    return rc;
}

static int share_entry(const char *path, const struct stat *st, int flag,
                       struct FTW *ftw)
{
    (void)ftw;
    if (flag == FTW_SL || S_ISLNK(st->st_mode))
        return 0;
    if (share_one(path, flag == FTW_D || flag == FTW_DP ? ACL_EXECUTE : 0)
        == 0)
        return 0;
    share_errno = errno;
    snprintf(share_path, sizeof share_path, "%s", path);
    return 1;
}

int weft_share_tree(const char *path, uint32_t uid, char *err,
                    size_t errlen)
{
    if (uid == 0 || (uid_t)uid == geteuid())
        return 0;
    share_uid = (uid_t)uid;
    share_errno = 0;
    if (nftw(path, share_entry, 16, FTW_PHYS) == 0)
        return 0;
    if (!share_errno) {
        share_errno = errno;
        snprintf(share_path, sizeof share_path, "%s", path);
    }
    snprintf(err, errlen, "cannot let uid %u read %s: %s%s", (unsigned)uid,
             share_path, strerror(share_errno), share_errno == EOPNOTSUPP ?
             " (the spool's file system has no ACLs: mount it with acl)" :
             "");
    errno = share_errno;
    return -1;
}

int weft_dir_open_to_others(const char *path, const struct stat *st)
{
    if ((st->st_mode & 077) == 0)
        return 0;
    return acl_extended_file_nofollow(path) == 0;
}

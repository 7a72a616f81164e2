/* reserve.c - what admins keep for themselves (see reserve.h). */
#include "reserve.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "weft_errors.h"

typedef struct weft_admins {
    uint32_t gid;            /* admin_group's */
    uint32_t *uids;          /* its members' (by name in the group) */
    size_t n;
} weft_admins;

/* The uids of the names in mem, looked up one by one (names without a
 * user are left out). 0 or WEFT_ENOMEM. */
static int member_uids(char **mem, uint32_t **uids, size_t *n)
{
    struct passwd pw, *pwp;
    char buf[16384];
    size_t count = 0;

    *uids = NULL;
    *n = 0;
    while (mem && mem[count])
        count++;
    if (count && !(*uids = calloc(count, sizeof **uids)))
        return WEFT_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        pwp = NULL;
        if (getpwnam_r(mem[i], &pw, buf, sizeof buf, &pwp) == 0 && pwp)
            (*uids)[(*n)++] = (uint32_t)pwp->pw_uid;
    }
    return 0;
}

int weft_reserve_load(weft_daemon *d, uint32_t *gid)
{
    struct group gr, *grp = NULL;
    weft_admins *a = NULL;
    char *buf = NULL;
    size_t len = 1 << 16;
    int rc = 0;

    if (!*d->cfg.admin_group)
        goto out; /* nobody but root and weftd's user */
    for (;;) {
        char *more = realloc(buf, len);
        if (!more) {
            rc = WEFT_ENOMEM;
            goto out;
        }
        buf = more;
        rc = getgrnam_r(d->cfg.admin_group, &gr, buf, len, &grp);
        if (rc != ERANGE || len >= (16u << 20))
            break;
        len *= 2;
    }
    rc = 0;
    if (!grp) {
        rc = WEFT_ENOTFOUND;
        goto out;
    }
    if (!(a = calloc(1, sizeof *a)) ||
        member_uids(grp->gr_mem, &a->uids, &a->n) < 0) {
        free(a);
        free(buf);
        return WEFT_ENOMEM; /* the old set stays */
    }
    a->gid = (uint32_t)grp->gr_gid;
    *gid = a->gid;
out:
    free(buf);
    if (rc == WEFT_ENOMEM)
        return rc;
    weft_reserve_free(d);
    d->srv->admins = a;
    return rc;
}

void weft_reserve_free(weft_daemon *d)
{
    if (!d->srv->admins)
        return;
    free(d->srv->admins->uids);
    free(d->srv->admins);
    d->srv->admins = NULL;
}

int weft_reserve_is_admin(const weft_daemon *d, uint32_t uid, uint32_t gid)
{
    const weft_admins *a = d->srv->admins;

    if (uid == 0 || uid == (uint32_t)geteuid())
        return 1;
    if (!a)
        return 0;
    if (gid == a->gid)
        return 1;
    for (size_t i = 0; i < a->n; i++)
        if (a->uids[i] == uid)
            return 1;
    return 0;
}

int weft_reserve_conn_is_admin(const weft_conn *c)
{
    return c->is_unix && c->has_peer_uid &&
           weft_reserve_is_admin(c->d, c->peer_uid, c->peer_gid);
}

uint64_t weft_reserve_fds(const weft_daemon *d)
{
    return WEFT_FD_RESERVE +
           WEFT_RESERVE_FDS * d->cfg.reserved_connections;
}

int weft_reserve_admit(const weft_daemon *d, uint64_t open, uint64_t fd,
                       int admin, enum weft_limit *limit)
{
    uint64_t slots = d->cfg.max_connections +
                     (admin ? d->cfg.reserved_connections : 0);
    uint64_t keep = admin ? WEFT_FD_RESERVE : weft_reserve_fds(d);

    if (open > slots) {
        *limit = WEFT_LIMIT_MAX_CONNECTIONS;
        return WEFT_ELIMIT;
    }
    /* Descriptors are allocated lowest first: every one below fd is in
     * use. A connection needs 2 (its socket, its journal). */
    if (d->srv->fd_limit && fd + 2 + keep > d->srv->fd_limit) {
        *limit = WEFT_LIMIT_FD_LIMIT;
        return WEFT_ELIMIT;
    }
    return 0;
}

uint64_t weft_reserve_accept_at(const weft_daemon *d)
{
    return d->cfg.max_connections + d->cfg.reserved_connections +
           WEFT_ACCEPT_SLACK;
}

int weft_reserve_check(weft_conn *c)
{
    weft_daemon *d = c->d;
    enum weft_limit l;
    uv_os_fd_t fd;

    if (uv_fileno(&c->h.handle, &fd) != 0 ||
        weft_reserve_admit(d, d->srv->nconns - d->srv->nclosing, (uint64_t)fd,
                           weft_reserve_conn_is_admin(c), &l) == 0)
        return 0;
    if (l == WEFT_LIMIT_MAX_CONNECTIONS)
        weft_conn_fail_limit(c, l, WEFT_ELIMIT, "too many connections: "
                             "max_connections is %llu", (unsigned long long)
                             d->cfg.max_connections);
    else
        weft_conn_fail_limit(c, l, WEFT_ELIMIT, "too many connections: weftd"
                             " is near its file descriptor limit (RLIMIT_"
                             "NOFILE %llu, %llu kept free; each connection "
                             "needs 2)", (unsigned long long)d->srv->fd_limit,
                             (unsigned long long)weft_reserve_fds(d));
    return WEFT_ELIMIT;
}

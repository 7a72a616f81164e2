/* reserve.h - what root, weftd's own user and members of admin_group
 * keep for themselves when other users have taken everything.
 *
 * DESIGN: an administrator must be able to see and stop what floods
 * weftd. On the Unix socket the kernel says who connects at accept
 * (SO_PEERCRED), so a connection of an admin may take one of
 * `reserved_connections` slots beyond max_connections, and the file
 * descriptors those need (WEFT_RESERVE_FDS each) are kept free by
 * refusing other connections that much earlier near the descriptor
 * limit. Their questions have WEFT_ASK_RESERVE more (ask.c). Who is an
 * admin is known without blocking the loop: admin_group's gid and its
 * members' uids are looked up (NSS may be remote) at start and on
 * SIGHUP only (weft_reserve_load), never per connection or question.
 * Loop thread.
 */
#ifndef WEFT_RESERVE_H
#define WEFT_RESERVE_H

#include <stdint.h>

#include "daemon.h"
#include "server.h"

/* Descriptors one reserved connection may need: its socket and an
 * answer's file (ask.c). */
#define WEFT_RESERVE_FDS 2

/* Looks admin_group up (blocks: NSS) and keeps its gid and its members'
 * uids for weft_reserve_is_admin, replacing what was kept. 0 (no group
 * configured: *found = 0), WEFT_ENOTFOUND (no such group: nobody but
 * root and weftd's user is an admin) or WEFT_ENOMEM (the old set is
 * kept). *gid is the group's when found. */
int weft_reserve_load(weft_daemon *d, uint32_t *gid);
/* Frees what weft_reserve_load kept. */
void weft_reserve_free(weft_daemon *d);
/* 1 if uid (running with gid) is root, weftd's user or in admin_group
 * as last loaded, else 0. Never blocks. */
int weft_reserve_is_admin(const weft_daemon *d, uint32_t uid, uint32_t gid);
/* 1 if c came on the Unix socket from an admin. */
int weft_reserve_conn_is_admin(const weft_conn *c);
/* May a connection be kept whose descriptor is fd, with `open`
 * connections open counting it, admin saying whether it is an admin's
 * Unix one? 0, or WEFT_ELIMIT with *limit the one it is over
 * (WEFT_LIMIT_MAX_CONNECTIONS or WEFT_LIMIT_FD_LIMIT). */
int weft_reserve_admit(const weft_daemon *d, uint64_t open, uint64_t fd,
                       int admin, enum weft_limit *limit);
/* c was just accepted: weft_reserve_admit for it (its descriptor, the
 * connections open). 0, or WEFT_ELIMIT after refusing it with an Error
 * naming the limit. */
int weft_reserve_check(weft_conn *c);
/* Connections open or closing at which accepting waits (server.c:
 * accept_full): max_connections, the reserve and WEFT_ACCEPT_SLACK for
 * refused ones still closing. */
uint64_t weft_reserve_accept_at(const weft_daemon *d);
/* Descriptors weftd keeps free of ordinary connections: WEFT_FD_RESERVE
 * and the reserve's. */
uint64_t weft_reserve_fds(const weft_daemon *d);

#endif

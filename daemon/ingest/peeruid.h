/* peeruid.h - the uid owning the other end of a TCP connection that
 * comes from this host (NETLINK_SOCK_DIAG, as ss(8) shows it).
 *
 * Before a TCP connection authenticates, weftd counts it by where it
 * comes from (preauth.h). Every user of the host weftd runs on comes
 * from the same addresses; the kernel knows which user's socket is at
 * the other end of such a connection, so those are counted per uid
 * instead, and one local user's connections can never crowd out
 * another's. A remote peer is not in this host's socket tables (not
 * found): counted by address. Nothing here is trusted for identity:
 * it only says whose share a connection takes before it authenticates.
 */
#ifndef WEFT_PEERUID_H
#define WEFT_PEERUID_H

#include <stdint.h>
#include <sys/socket.h>

/* Of the TCP connection whose far end is `peer` and near end `local`
 * (as getpeername and getsockname of weftd's socket say): 0 with *uid
 * the owner of the far end's socket if it is on this host, else a
 * negative WEFT_E* code (WEFT_ENOTFOUND: not a socket of this host). One
 * netlink query to the kernel; never waits for a peer. */
int weft_peeruid_lookup(const struct sockaddr *peer,
                        const struct sockaddr *local, uint32_t *uid);

#endif

/* nodes.h - the weftds linked to this one as the nodes of its cluster
 * (issue #34; the node's side is uplink.h).
 *
 * Every weftd is a head: a single machine's is the head of a cluster of
 * none. Another weftd whose weftd.conf names this one ([cluster] head)
 * opens a link and says NodeHello. A node is believed to be a weftd only
 * when the link's uid is root or the uid this weftd runs as (the service
 * user every node's unit runs as): a MUNGE credential over TCP (authn.c,
 * bound to the connection, every later frame MACed) or the kernel's
 * SO_PEERCRED on the Unix socket. A user's process cannot pose as a node:
 * its credential names its own uid. What a node later vouches for (the
 * uids of its ranks) is believed only on such a link.
 *
 * The link carries Heartbeats both ways, every [cluster] heartbeat
 * seconds; one that brings nothing for WEFT_NODE_SILENT_BEATS of them is
 * closed (server.c). A NodeHello under a name that is linked replaces
 * that link when it was silent for two heartbeats (its weftd restarted
 * before this one saw the old link end), and is refused while that link
 * is alive (two nodes of one name would take turns forever, each link
 * closing the other). Nodes stay listed, linked or gone, for `weft status`
 * (at most WEFT_NODES_GONE_KEPT gone ones, the oldest forgotten first).
 * Loop thread.
 */
#ifndef WEFT_NODES_H
#define WEFT_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "daemon.h"
#include "session.h"
#include "status.h"

/* Longest node name: a host name's (frame.h's WEFT_MAX_HOSTNAME is
 * longer; a name is also a file name later). */
#define WEFT_NODE_NAME_MAX 64
#define WEFT_NODES_GONE_KEPT 256

/* NodeHello, Heartbeat and close of a node's link (session.h). */
extern const weft_session_node weft_nodes_cbs;

/* 1 when a link of uid may be a node of a head running as uid self,
 * else 0 with why saying who may. Pure. */
int weft_nodes_trusted(uint32_t uid, uint32_t self, char *why, size_t whylen);
/* 0 when name is a node's name (1 to WEFT_NODE_NAME_MAX of letters,
 * digits, '.', '-', '_', not starting with '.'), else WEFT_EINVAL with
 * why. Pure. */
int weft_nodes_check_name(const char *name, char *why, size_t whylen);
/* fn(node, arg) for each node known, linked first (status.h). */
void weft_nodes_status(const weft_daemon *d, weft_status_node_fn fn,
                       void *arg);
/* Forgets every node (weftd stopping: their links are closed). */
void weft_nodes_free(weft_daemon *d);

#endif

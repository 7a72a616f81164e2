/* relay.h - the members a node relays on its link (NodeRelay, issue #34):
 * each is a connection of its own here, without a socket.
 *
 * A node weftd takes its ranks' connections itself (its Unix socket,
 * SO_PEERCRED) and relays what they say to its head over one link,
 * member by member. The head serves each relayed member with the same
 * session as a connection of its own (session.c: its mode, Hello,
 * records, acks, refusals), on a weft_conn whose `link` is the node's
 * link: what the session sends it goes out as a NodeRelay naming the
 * member, what the node relays for it comes in through weft_relay_take.
 * It holds no descriptor and does not count against the head's
 * connections; its user is the one the node vouches for (believed on a
 * trusted link only: cluster/nodes.c), and no limit per user applies
 * here (the node's own does). Its timeouts are the link's heartbeats.
 *
 * Back-pressure: while a relayed member waits for something (its
 * journal being opened, too much pending, max_buffered), the whole link
 * stops reading (WEFT_PAUSE_RELAY, counted over its members), so that
 * its frames are still taken in the order the node sent them; a member
 * that said Goodbye or is stopping holds nothing: what the node relays
 * for it after that is dropped. A weft command's question relayed from
 * the node's Unix socket (its first frame a Query: an asker) holds no
 * link either: its answer's pieces go as the node says its asker read
 * the last (NodeRelay.more calls its on_written, ask.c).
 *
 * A relayed member is closed as any connection (weft_conn_close): the
 * session lets go of it, the node is told (NodeRelay `closed`, unless
 * the link itself is closing), and the owner's `gone` callback takes it
 * out of its table; the owner frees it later (weft_relay_free), never
 * inside a callback that may still use it. Loop thread.
 */
#ifndef WEFT_RELAY_H
#define WEFT_RELAY_H

#include <stdint.h>

#include "server.h"
#include "weft.pb-c.h"

/* Bytes a NodeRelay adds around the Envelope it carries: the link's
 * frames may be that much larger than max_frame. */
#define WEFT_RELAY_OVERHEAD 64

/* A relayed member `id` of link (a node's, mode NODE) whose user is
 * uid/gid and process pid (0: unknown) on the node named `node`;
 * AUTHENTICATED (its Hello comes next), or FRESH for a weft command's
 * Query (query: the session takes it as on this weftd's Unix socket).
 * gone(rc) is called once when it closes. NULL when out of memory. */
weft_conn *weft_relay_open(weft_conn *link, uint32_t id, uint32_t uid,
                           uint32_t gid, uint32_t pid, const char *node,
                           int query, void (*gone)(weft_conn *rc));
/* The node relayed env for rc: handed to the session as a frame of rc's
 * (dropped when rc is closing, said Goodbye or stops). 0 if it was
 * accepted (or dropped), or the WEFT_E* code rc was failed with. */
int weft_relay_take(weft_conn *rc, const Weft__Envelope *env);
/* The node sent the sums of rc (NodeRelay.sums), whose events it wrote,
 * or a piece of them (`more`: NodeRelay.sums_more; kept until the last,
 * joined, up to a journal entry's most): as weft_relay_take, to
 * weft_session_sums. */
int weft_relay_take_sums(weft_conn *rc, const uint8_t *sums, size_t len,
                         int more);
/* Tells rc's node where rc's events go: the archive of its trace is made,
 * in archive_root's directory `key` (NodeRelay.archive_key). */
void weft_relay_archive_key(weft_conn *rc, const char *key);
/* The node says rc's connection ended (gone: its process too): rc
 * closes without telling it. */
void weft_relay_ended(weft_conn *rc, int gone);
/* The link is closing: rc closes without telling the node. */
void weft_relay_link_closed(weft_conn *rc);
/* Frees rc, closed (after its gone callback). */
void weft_relay_free(weft_conn *rc);

/* server.c's part: what weft_conn_* do for a relayed member. */
void weft__relay_send(weft_conn *rc, uint8_t *frame, size_t len);
void weft__relay_close(weft_conn *rc);
/* rc->paused changed: it holds its link's reading, or lets go. */
void weft__relay_update(weft_conn *rc);

#endif

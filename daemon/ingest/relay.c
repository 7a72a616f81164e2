/* relay.c - the members a node relays on its link (see relay.h). */
#include "relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "journal.h"
#include "memberin.h"
#include "session.h"
#include "weft_errors.h"

/* What holds a relayed member's link: the waits that keep its frames in
 * order or bound memory (a Goodbye or a stop holds nothing: the member
 * takes no more frames). */
#define HOLDING (WEFT_PAUSE_PENDING | WEFT_PAUSE_BUFFERED | WEFT_PAUSE_SESSION)

weft_conn *weft_relay_open(weft_conn *link, uint32_t id, uint32_t uid,
                           uint32_t gid, uint32_t pid, const char *node,
                           int query, void (*gone)(weft_conn *rc))
{
    weft_conn *rc = calloc(1, sizeof *rc);

    if (!rc)
        return NULL;
    if (!(rc->relay_node = strdup(node))) {
        free(rc);
        return NULL;
    }
    rc->d = link->d;
    rc->link = link;
    rc->relay_id = id;
    rc->relay_gone = gone;
    if (pid)
        snprintf(rc->peer, sizeof rc->peer, "node %s %s %u (pid %u)", node,
                 query ? "asker" : "member", (unsigned)id, (unsigned)pid);
    else
        snprintf(rc->peer, sizeof rc->peer, "node %s %s %u", node,
                 query ? "asker" : "member", (unsigned)id);
    rc->has_peer_uid = 1;
    rc->peer_uid = uid;
    rc->peer_gid = gid;
    rc->peer_pid = pid;
    rc->mode = query ? WEFT_CONN_FRESH : WEFT_CONN_AUTHENTICATED;
    rc->accepted = rc->last_frame = uv_now(link->d->loop);
    return rc;
}

/* Whether what the node relays for rc is dropped: rc is closing, said
 * Goodbye or stops. */
static int drops(const weft_conn *rc)
{
    return weft_conn_closing(rc) ||
           (rc->paused & (WEFT_PAUSE_GOODBYE | WEFT_PAUSE_STOPPING));
}

int weft_relay_take(weft_conn *rc, const Weft__Envelope *env)
{
    int taken;

    if (drops(rc))
        return 0;
    rc->last_frame = uv_now(rc->d->loop);
    taken = rc->d->server_cbs->on_frame(rc, env);
    /* Its member knows its node from its Hello on (why it is missing,
     * should it be). */
    if (taken == 0 && env->msg_case == WEFT__ENVELOPE__MSG_HELLO &&
        rc->member && (!rc->member->node ||
                       strcmp(rc->member->node, rc->relay_node) != 0)) {
        free(rc->member->node);
        rc->member->node = strdup(rc->relay_node);
    }
    return taken;
}

/* Sends NodeRelay r on rc's link, unless the link is closing. */
static void send_relay(weft_conn *rc, const Weft__NodeRelay *r)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    uint8_t *frame;
    ssize_t n;

    if (weft_conn_closing(rc->link))
        return;
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
    env.node_relay = (Weft__NodeRelay *)r;
    n = weft_frame_pack(&env, &frame);
    if (n < 0) {
        weft_conn_log(rc->link, WEFT_LOG_ERROR, "cannot pack a NodeRelay "
                      "for member %u: %s", (unsigned)rc->relay_id,
                      weft_strerror((int)n));
        weft_conn_close(rc->link);
        return;
    }
    weft_conn_send(rc->link, frame, (size_t)n);
}

/* A piece of rc's sums (len bytes at sums) joined to those before it
 * (rc->sums_part). 0, or the WEFT_E* code after failing rc. */
static int sums_piece(weft_conn *rc, const uint8_t *sums, size_t len)
{
    uint8_t *v;

    if (len == 0 || len > WEFT_JOURNAL_MAX_PAYLOAD - rc->sums_part_len) {
        weft_conn_fail_limit(rc, WEFT_LIMIT_MAX_FRAME, WEFT_ETOOBIG,
                             "sums %s", len ? "of more than 64 MiB (a "
                             "journal entry's most)" : "in an empty piece");
        return WEFT_ETOOBIG;
    }
    if (!(v = realloc(rc->sums_part, rc->sums_part_len + len))) {
        weft_conn_fail(rc, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    memcpy(v + rc->sums_part_len, sums, len);
    rc->sums_part = v;
    rc->sums_part_len += len;
    return 0;
}

int weft_relay_take_sums(weft_conn *rc, const uint8_t *sums, size_t len,
                         int more)
{
    int r;

    if (drops(rc))
        return 0;
    rc->last_frame = uv_now(rc->d->loop);
    if (!more && !rc->sums_part)
        return weft_session_sums(rc, sums, len);
    if ((r = sums_piece(rc, sums, len)) < 0 || more)
        return r;
    r = weft_session_sums(rc, rc->sums_part, rc->sums_part_len);
    free(rc->sums_part);
    rc->sums_part = NULL;
    rc->sums_part_len = 0;
    return r;
}

void weft_relay_archive_key(weft_conn *rc, const char *key)
{
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;

    if (weft_conn_closing(rc))
        return;
    r.member = rc->relay_id;
    r.archive_key = (char *)key;
    send_relay(rc, &r);
}

void weft__relay_send(weft_conn *rc, uint8_t *frame, size_t len)
{
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;

    /* The link takes frames as large as any its members were promised. */
    if (rc->member_max_frame > rc->link->member_max_frame)
        rc->link->member_max_frame = rc->member_max_frame;
    if (len > WEFT_FRAME_HEADER) {
        r.member = rc->relay_id;
        r.frame.data = frame + WEFT_FRAME_HEADER;
        r.frame.len = len - WEFT_FRAME_HEADER;
        send_relay(rc, &r);
    }
    free(frame);
}

/* A weft command's question (relay.h) holds no link: it sends nothing
 * its answer waits for (an import's rows come before it is paused), and
 * its answer goes as the node says its asker read (NodeRelay.more). */
static int is_asker(const weft_conn *rc)
{
    return rc->mode == WEFT_CONN_FRESH || rc->mode == WEFT_CONN_ASKING ||
           rc->mode == WEFT_CONN_IMPORTING;
}

void weft__relay_update(weft_conn *rc)
{
    int hold = !weft_conn_closing(rc) && (rc->paused & HOLDING) != 0 &&
               !is_asker(rc);

    if (hold == rc->relay_holding)
        return;
    rc->relay_holding = hold;
    weft_conn_relay_hold(rc->link, hold);
}

void weft__relay_close(weft_conn *rc)
{
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;

    weft_conn_event(rc, WEFT_CONN_EV_CLOSE, NULL);
    rc->d->server_cbs->on_closed(rc);
    if (!rc->relay_told) {
        r.member = rc->relay_id;
        r.closed = 1;
        send_relay(rc, &r);
        rc->relay_told = 1;
    }
    weft__relay_update(rc); /* closing: lets go of its link */
    if (rc->relay_gone)
        rc->relay_gone(rc);
}

void weft_relay_ended(weft_conn *rc, int gone)
{
    if (gone && rc->member) /* before the session lets go of it */
        rc->member->node_gone = 1;
    rc->relay_told = 1;
    weft_conn_close(rc);
}

void weft_relay_link_closed(weft_conn *rc)
{
    weft_relay_ended(rc, 0);
}

void weft_relay_free(weft_conn *rc)
{
    free(rc->sums_part);
    free(rc->relay_node);
    free(rc);
}

/* nodes.c - the nodes linked to this weftd (see nodes.h). */
#include "nodes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acks.h"
#include "frame.h"
#include "hashtab.h"
#include "relay.h"
#include "server.h"
#include "shared.h"
#include "weft_errors.h"

/* One node known to this weftd, linked (conn) or gone. */
typedef struct node {
    struct node *next;
    char name[WEFT_NODE_NAME_MAX + 1];
    char peer[128];         /* its link's, as the server names it */
    char server[64];        /* its weftd version */
    weft_conn *conn;        /* its link; NULL once gone */
    int64_t since;          /* unix time it linked, or went */
    uint64_t links;         /* NodeHellos accepted under its name */
    uint64_t heartbeats;    /* on its current link (NodeStatus too) */
    Weft__NodeStatus st;    /* its last NodeStatus (zero: none yet;
                               its strings not kept: these are) */
    enum weft_shared_state archive; /* what it found of archive_root */
    char archive_path[WEFT_ARCHIVE_ROOT_MAX + 1];
    char archive_error[512];
} node;

typedef struct weft_nodes {
    node *list;             /* newest first */
    unsigned ngone;
} weft_nodes;

/* A member the link relays (relay.h), by the node's number for it. */
typedef struct relay_cell {
    uint32_t key;           /* its number (never 0) */
    weft_conn *rc;
} relay_cell;

/* A node's link (weft_conn.node): its node while it is that node's
 * current link, and the members it relays. */
typedef struct node_link {
    node *n;                /* NULL once another link replaced it */
    weft_hashtab relays;    /* relay_cell */
    weft_conn *dead;        /* closed members to free (chained by next) */
    int closing;            /* the link closes: its members go at once */
} node_link;

int weft_nodes_trusted(uint32_t uid, uint32_t self, char *why, size_t whylen)
{
    if (uid == 0 || uid == self)
        return 1;
    snprintf(why, whylen, "NodeHello from uid %u: a node must be a weftd "
             "running as root or as this head's user (uid %u)",
             (unsigned)uid, (unsigned)self);
    return 0;
}

int weft_nodes_check_name(const char *name, char *why, size_t whylen)
{
    size_t n = strlen(name);

    if (n == 0 || n > WEFT_NODE_NAME_MAX) {
        snprintf(why, whylen, "node name of %zu bytes (1 to %d)", n,
                 WEFT_NODE_NAME_MAX);
        return WEFT_EINVAL;
    }
    if (name[0] == '.') {
        snprintf(why, whylen, "node name '%s' starts with '.'", name);
        return WEFT_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_')
            continue;
        snprintf(why, whylen, "node name has byte 0x%02x at %zu (letters, "
                 "digits, '.', '-' and '_' only)", (unsigned char)ch, i);
        return WEFT_EINVAL;
    }
    return 0;
}

static weft_nodes *nodes_of(weft_daemon *d)
{
    if (!d->nodes)
        d->nodes = calloc(1, sizeof *d->nodes);
    return d->nodes;
}

static node *find(weft_nodes *ns, const char *name)
{
    for (node *n = ns->list; n; n = n->next)
        if (strcmp(n->name, name) == 0)
            return n;
    return NULL;
}

/* Forgets the oldest gone node while more than WEFT_NODES_GONE_KEPT are
 * kept. */
static void trim_gone(weft_nodes *ns)
{
    while (ns->ngone > WEFT_NODES_GONE_KEPT) {
        node **oldest = NULL;
        for (node **p = &ns->list; *p; p = &(*p)->next)
            if (!(*p)->conn)
                oldest = p;
        if (!oldest)
            return;
        node *n = *oldest;
        *oldest = n->next;
        free(n);
        ns->ngone--;
    }
}

/* The node is gone: its link closed. */
static void gone(weft_nodes *ns, node *n)
{
    n->conn = NULL;
    n->since = (int64_t)time(NULL);
    ns->ngone++;
    trim_gone(ns);
}

/* Whether link c brought something within the last two heartbeats (a
 * node sends one each): its node is there, and a NodeHello of its name
 * is another node's. */
static int alive(const weft_conn *c)
{
    return uv_now(c->d->loop) - c->last_frame <
           2 * c->d->cfg.cluster_heartbeat * 1000;
}

static void send_ack(weft_conn *c)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeHelloAck ack = WEFT__NODE_HELLO_ACK__INIT;
    char host[256] = "";

    gethostname(host, sizeof host - 1);
    ack.protocol_version = WEFT_PROTOCOL_VERSION;
    ack.head = host;
    ack.server = (char *)PACKAGE_VERSION;
    ack.heartbeat = (uint32_t)c->d->cfg.cluster_heartbeat;
    ack.max_frame = (uint32_t)c->d->cfg.max_frame;
    ack.archive_root = c->d->cfg.archive_root;
    ack.archive_token = c->d->archive_token;
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_HELLO_ACK;
    env.node_hello_ack = &ack;
    weft_conn_send_env(c, &env);
}

static int on_node_hello(weft_conn *c, const Weft__NodeHello *h)
{
    weft_daemon *d = c->d;
    weft_nodes *ns;
    node *n;
    node_link *l;
    char why[256];
    int rc;

    if ((rc = weft_conn_check_version(c, h->protocol_version)) < 0)
        return rc;
    if (!c->has_peer_uid) {
        weft_conn_fail(c, WEFT_EAUTH, "NodeHello without a MUNGE "
                       "credential: a node proves over TCP that it runs as "
                       "this head's user (is munged running on the node "
                       "with the cluster's key?)");
        return WEFT_EAUTH;
    }
    if (!weft_nodes_trusted(c->peer_uid, (uint32_t)geteuid(), why,
                            sizeof why)) {
        weft_conn_fail(c, WEFT_EAUTH, "%s", why);
        return WEFT_EAUTH;
    }
    if (weft_nodes_check_name(h->node, why, sizeof why) < 0) {
        weft_conn_fail(c, WEFT_EINVAL, "NodeHello: %s", why);
        return WEFT_EINVAL;
    }
    if (!(ns = nodes_of(d))) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    n = find(ns, h->node);
    if (n && n->conn && alive(n->conn)) {
        weft_conn_fail(c, WEFT_EEXIST, "node name %s is linked from %s, "
                       "heard from %llu ms ago: do two nodes have this "
                       "name? ([cluster] node_name)", n->name, n->peer,
                       (unsigned long long)(uv_now(d->loop) -
                                            n->conn->last_frame));
        return WEFT_EEXIST;
    }
    if ((rc = weft_conn_charge_user(c, c->peer_uid)) < 0)
        return rc;
    if ((rc = weft_conn_event(c, WEFT_CONN_EV_NODE_HELLO, NULL)) < 0)
        return rc;
    if (!(l = calloc(1, sizeof *l))) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    if (n && n->conn) {
        weft_conn_log(c, WEFT_LOG_WARNING, "node %s linked again: its "
                      "previous link (from %s), silent for two heartbeats, "
                      "is closed", n->name, n->peer);
        weft_conn *old = n->conn;
        ((node_link *)old->node)->n = NULL;
        n->conn = NULL;
        weft_conn_close(old);
    } else if (n) {
        ns->ngone--;
    } else {
        if (!(n = calloc(1, sizeof *n))) {
            free(l);
            weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
            return WEFT_ENOMEM;
        }
        snprintf(n->name, sizeof n->name, "%s", h->node);
        n->next = ns->list;
        ns->list = n;
    }
    snprintf(n->peer, sizeof n->peer, "%s", c->peer);
    snprintf(n->server, sizeof n->server, "%s", h->server);
    n->conn = c;
    n->since = (int64_t)time(NULL);
    n->links++;
    n->heartbeats = 0;
    memset(&n->st, 0, sizeof n->st);
    n->archive = WEFT_SHARED_NONE;
    n->archive_path[0] = n->archive_error[0] = 0;
    l->n = n;
    c->node = l;
    weft_conn_log(c, WEFT_LOG_INFO, "node %s linked (weftd %s, uid %u, "
                  "%s)", n->name, n->server, (unsigned)c->peer_uid,
                  c->is_unix ? "SO_PEERCRED" : "MUNGE");
    send_ack(c);
    return 0;
}

/* The node of link c, while c is its current link. */
static node *node_of(const weft_conn *c)
{
    return c->node ? ((node_link *)c->node)->n : NULL;
}

static int on_node_heartbeat(weft_conn *c)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
    node *n = node_of(c);

    if (n)
        n->heartbeats++;
    env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    weft_conn_send_env(c, &env);
    return 0;
}

static int on_node_status(weft_conn *c, const Weft__NodeStatus *st)
{
    node *n = node_of(c);

    if (n) {
        n->st.connections = st->connections;
        n->st.recording = st->recording;
        n->st.events = st->events;
        n->st.written = st->written;
        n->archive = WEFT_SHARED_NONE;
        n->archive_path[0] = n->archive_error[0] = 0;
        if (st->archive &&
            st->archive->state <= WEFT__ARCHIVE_CHECK__STATE__UNUSABLE) {
            n->archive = (enum weft_shared_state)st->archive->state;
            snprintf(n->archive_path, sizeof n->archive_path, "%s",
                     st->archive->path);
            snprintf(n->archive_error, sizeof n->archive_error, "%s",
                     st->archive->error);
        }
    }
    return on_node_heartbeat(c);
}

/* Frees the members of l that closed. */
static void free_dead(node_link *l)
{
    while (l->dead) {
        weft_conn *rc = l->dead;
        l->dead = rc->next;
        weft_relay_free(rc);
    }
}

/* relay.h's gone: rc closed; it is freed on the link's next frame (or
 * its close), once nothing on the stack uses it. */
static void relay_gone(weft_conn *rc)
{
    node_link *l = rc->link->node;

    if (!l->closing)
        weft_hashtab_del(&l->relays, rc->relay_id, sizeof(relay_cell));
    rc->next = l->dead;
    l->dead = rc;
}

/* Tells the node that member `id` is not here (closed), with an Error
 * of code and message. */
static void relay_refuse(weft_conn *c, uint32_t id, int code,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void relay_refuse(weft_conn *c, uint32_t id, int code,
                         const char *fmt, ...)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeRelay no = WEFT__NODE_RELAY__INIT;
    uint8_t *frame = NULL;
    char msg[512];
    va_list ap;
    ssize_t n;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    weft_conn_log(c, WEFT_LOG_INFO, "node %s member %u refused: %s",
                  node_of(c) ? node_of(c)->name : "?", (unsigned)id, msg);
    n = weft_frame_pack_error(&frame, code, "%s", msg);
    no.member = id;
    no.closed = 1;
    if (n > WEFT_FRAME_HEADER) {
        no.frame.data = frame + WEFT_FRAME_HEADER;
        no.frame.len = (size_t)n - WEFT_FRAME_HEADER;
    }
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
    env.node_relay = &no;
    weft_conn_send_env(c, &env);
    free(frame);
}

/* A relayed member's Hello, or a weft command's Query (query): its
 * relayed conn is made (at most max_connections per link). The conn, or
 * NULL after telling the node why not. */
static weft_conn *relay_new(weft_conn *c, node_link *l,
                            const Weft__NodeRelay *r, int query)
{
    weft_daemon *d = c->d;
    relay_cell *cell;

    if (l->relays.used >= d->cfg.max_connections) {
        weft_limit_hit(d, WEFT_LIMIT_MAX_CONNECTIONS);
        relay_refuse(c, r->member, WEFT_ELIMIT, "node %s relays %zu "
                     "members already: max_connections is %llu",
                     l->n ? l->n->name : "?", l->relays.used,
                     (unsigned long long)d->cfg.max_connections);
        return NULL;
    }
    if (!(cell = weft_hashtab_get(&l->relays, r->member, sizeof *cell)) ||
        !(cell->rc = weft_relay_open(c, r->member, r->uid, r->gid, r->pid,
                                     l->n ? l->n->name : "?", query,
                                     relay_gone))) {
        if (cell)
            weft_hashtab_del(&l->relays, r->member, sizeof *cell);
        relay_refuse(c, r->member, WEFT_ENOMEM, "out of memory");
        return NULL;
    }
    cell->rc->relay_events_here = r->events_here && !query;
    return cell->rc;
}

/* A frame of a member the node relays. Whatever becomes of the member,
 * the link goes on: a member's refusal is the member's (relay.h). */
static int on_node_relay(weft_conn *c, const Weft__NodeRelay *r)
{
    node_link *l = c->node;
    relay_cell *cell;
    Weft__Envelope *env;
    weft_conn *rc = NULL;

    free_dead(l);
    if (r->member == 0) {
        weft_conn_fail(c, WEFT_EPROTO, "NodeRelay for member 0");
        return WEFT_EPROTO;
    }
    cell = weft_hashtab_find(&l->relays, r->member, sizeof *cell);
    if (r->more) { /* its asker read: its answer's next piece (ask.c) */
        if (cell && cell->rc->on_written && !weft_conn_closing(cell->rc))
            cell->rc->on_written(cell->rc);
        return 0;
    }
    if (r->closed) {
        if (cell)
            weft_relay_ended(cell->rc, r->gone);
        return 0;
    }
    if (r->sums.len) { /* of a member whose events the node wrote */
        if (cell)
            weft_relay_take_sums(cell->rc, r->sums.data, r->sums.len,
                                 r->sums_more);
        else
            relay_refuse(c, r->member, WEFT_ESTATE, "sums relayed for "
                         "member %u, which is not here",
                         (unsigned)r->member);
        return 0;
    }
    env = weft_frame_unpack(r->frame.data, r->frame.len);
    if (cell)
        rc = cell->rc;
    if (!env && rc)
        weft_conn_fail(rc, WEFT_EPROTO, "relayed frame of %zu bytes is not "
                       "a weft protocol message", r->frame.len);
    else if (!env)
        relay_refuse(c, r->member, WEFT_EPROTO, "relayed frame of %zu bytes "
                     "for member %u is not a weft protocol message",
                     r->frame.len, (unsigned)r->member);
    else if (!rc && env->msg_case != WEFT__ENVELOPE__MSG_HELLO &&
             env->msg_case != WEFT__ENVELOPE__MSG_QUERY)
        relay_refuse(c, r->member, WEFT_ESTATE, "%s relayed for member %u, "
                     "which is not here: a member's first frame is its "
                     "Hello (or a Query)",
                     weft_frame_kind_name(env->msg_case),
                     (unsigned)r->member);
    else if (!rc)
        rc = relay_new(c, l, r, env->msg_case == WEFT__ENVELOPE__MSG_QUERY);
    if (rc && env)
        weft_relay_take(rc, env);
    weft_frame_free_envelope(env);
    return 0;
}

static void on_node_closed(weft_conn *c)
{
    node_link *l = c->node;
    node *n = l ? l->n : NULL;

    if (!l)
        return;
    /* Its members are gone with it (they come back when the node links
     * again, as clients that reconnect). */
    l->closing = 1;
    for (size_t i = 0; i < l->relays.ncells; i++) {
        relay_cell *cell = weft_hashtab_at(&l->relays, i, sizeof *cell);
        if (cell)
            weft_relay_link_closed(cell->rc);
    }
    c->node = NULL;
    weft_hashtab_free(&l->relays);
    free_dead(l);
    free(l);
    if (!n || n->conn != c)
        return;
    weft_conn_log(c, WEFT_LOG_WARNING, "node %s gone: its link closed",
                  n->name);
    gone(c->d->nodes, n);
}

const weft_session_node weft_nodes_cbs = { on_node_hello, on_node_heartbeat,
                                           on_node_status, on_node_relay,
                                           on_node_closed };

void weft_nodes_status(const weft_daemon *d, weft_status_node_fn fn,
                       void *arg)
{
    const weft_nodes *ns = d->nodes;

    for (int linked = 1; ns && linked >= 0; linked--)
        for (const node *n = ns->list; n; n = n->next) {
            weft_status_node s;
            if ((n->conn != NULL) != linked)
                continue;
            s.name = n->name;
            s.peer = n->peer;
            s.server = n->server;
            s.linked = linked;
            s.since = n->since;
            s.links = n->links;
            s.heartbeats = n->heartbeats;
            s.connections = n->st.connections;
            s.recording = n->st.recording;
            s.events = n->st.events;
            s.written = n->st.written;
            s.relayed = n->conn && n->conn->node
                            ? ((const node_link *)n->conn->node)->relays.used
                            : 0;
            s.archive_state = weft_shared_state_name(n->archive);
            s.archive_path = n->archive_path;
            s.archive_error = n->archive_error;
            fn(&s, arg);
        }
}

void weft_nodes_free(weft_daemon *d)
{
    weft_nodes *ns = d->nodes;

    if (!ns)
        return;
    /* Their links closed before (weft_server_stop): no conn points
     * here any more. */
    while (ns->list) {
        node *n = ns->list;
        ns->list = n->next;
        free(n);
    }
    free(ns);
    d->nodes = NULL;
}

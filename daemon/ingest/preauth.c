/* preauth.c - connections whose user is not known yet (see preauth.h).
 *
 * The per-address count walks the FIFO: it holds at most
 * max_preauth_connections connections, and it is walked once per TCP
 * accept, so no table is kept.
 */
#include "preauth.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fifo.h"
#include "peeruid.h"
#include "server.h"
#include "weft_errors.h"

typedef struct weft_preauth {
    weft_conn *head, *tail;  /* oldest first, linked by pa_next/pa_prev */
    uint64_t n;
    uint64_t buffered;       /* bytes their frame readers hold */
} weft_preauth;

/* The oldest counted connection that may be closed for room, after
 * `after` (NULL: from the oldest), of address addr if not NULL, holding
 * bytes if holding; never `keep`. NULL if none. */
static weft_conn *oldest(weft_preauth *pa, const char *addr, int holding,
                         const weft_conn *keep)
{
    for (weft_conn *c = pa->head; c; c = c->pa_next) {
        if (c == keep || weft_conn_closing(c) || c->auth_job)
            continue;
        if (addr && strcmp(c->addr, addr) != 0)
            continue;
        if (holding && c->held == 0)
            continue;
        return c;
    }
    return NULL;
}

static uint64_t count_address(const weft_preauth *pa, const char *addr)
{
    uint64_t n = 0;

    for (const weft_conn *c = pa->head; c; c = c->pa_next)
        n += !weft_conn_closing(c) && strcmp(c->addr, addr) == 0;
    return n;
}

/* Closes v to make room for a newer connection, for limit l. */
static void close_for_room(weft_conn *v, enum weft_limit l, uint64_t max)
{
    weft_conn_fail_limit(v, l, WEFT_ELIMIT, "closed before authentication "
                         "to make room for a newer connection (%s): %s is "
                         "%llu", v->addr, weft_limit_name(l),
                         (unsigned long long)max);
}

/* What c counts under for max_preauth_per_address: the uid at the far
 * end when it is a socket of this host (peeruid.h), else the source
 * address describe_peer put in c->addr. */
static void share_key(weft_conn *c)
{
    struct sockaddr_storage peer, local;
    int plen = sizeof peer, llen = sizeof local;
    uint32_t uid;

    if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&peer, &plen) == 0 &&
        uv_tcp_getsockname(&c->h.tcp, (struct sockaddr *)&local,
                           &llen) == 0 &&
        weft_peeruid_lookup((struct sockaddr *)&peer,
                            (struct sockaddr *)&local, &uid) == 0)
        snprintf(c->addr, sizeof c->addr, "local uid %u", (unsigned)uid);
}

int weft_preauth_enter(weft_conn *c)
{
    weft_daemon *d = c->d;
    weft_preauth *pa;
    weft_conn *v;

    assert(!c->preauth && !c->is_unix);
    share_key(c);
    /* Room first, so that c itself is never the one closed (each close
     * may free the FIFO when it empties it). */
    while ((pa = d->srv->preauth) &&
           count_address(pa, c->addr) >= d->cfg.max_preauth_per_address &&
           (v = oldest(pa, c->addr, 0, c)) != NULL)
        close_for_room(v, WEFT_LIMIT_MAX_PREAUTH_PER_ADDRESS,
                       d->cfg.max_preauth_per_address);
    while ((pa = d->srv->preauth) && pa->n >= d->cfg.max_preauth_connections &&
           (v = oldest(pa, NULL, 0, c)) != NULL)
        close_for_room(v, WEFT_LIMIT_MAX_PREAUTH_CONNECTIONS,
                       d->cfg.max_preauth_connections);
    if (!pa && !(pa = d->srv->preauth = calloc(1, sizeof *pa)))
        return WEFT_ENOMEM;
    c->preauth = 1;
    WEFT_DLIST_PUSH_TAIL(pa->head, pa->tail, c, pa_prev, pa_next);
    pa->n++;
    /* What it holds so far counted in d->srv->buffered: move it here. */
    assert(d->srv->buffered >= c->held);
    d->srv->buffered -= c->held;
    pa->buffered += c->held;
    return 0;
}

void weft_preauth_leave(weft_conn *c)
{
    weft_daemon *d = c->d;
    weft_preauth *pa = d->srv->preauth;

    if (!c->preauth)
        return;
    assert(pa && pa->n > 0 && pa->buffered >= c->held);
    WEFT_DLIST_UNLINK(pa->head, pa->tail, c, pa_prev, pa_next);
    c->preauth = 0;
    pa->buffered -= c->held;
    if (weft_conn_closing(c))
        c->held = 0; /* its reader is freed in on_close */
    else
        d->srv->buffered += c->held; /* a session's from now on */
    if (--pa->n == 0) { /* made again when needed: nothing to free at exit */
        assert(pa->buffered == 0);
        free(pa);
        d->srv->preauth = NULL;
    }
}

void weft_preauth_account(weft_conn *c, uint64_t held)
{
    weft_daemon *d = c->d;
    weft_preauth *pa = d->srv->preauth;
    weft_conn *v;

    assert(c->preauth && pa && pa->buffered >= c->held);
    pa->buffered = pa->buffered - c->held + held;
    c->held = held;
    /* The oldest holders go, c last (each close may free the FIFO) */
    while ((pa = d->srv->preauth) &&
           pa->buffered > d->cfg.max_preauth_buffered &&
           ((v = oldest(pa, NULL, 1, c)) != NULL ||
            (c->preauth && c->held > 0 && (v = c) != NULL)))
        weft_conn_fail_limit(v, WEFT_LIMIT_MAX_PREAUTH_BUFFERED, WEFT_ELIMIT,
                             "%llu bytes of frames held by connections not "
                             "authenticated yet: max_preauth_buffered is "
                             "%llu", (unsigned long long)pa->buffered,
                             (unsigned long long)
                                 d->cfg.max_preauth_buffered);
}

uint64_t weft_preauth_count(const weft_daemon *d)
{
    return d->srv->preauth ? d->srv->preauth->n : 0;
}

uint64_t weft_preauth_buffered(const weft_daemon *d)
{
    return d->srv->preauth ? d->srv->preauth->buffered : 0;
}

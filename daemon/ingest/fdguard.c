/* fdguard.c - pausing a listener that is out of file descriptors (see
 * fdguard.h).
 */
#include "fdguard.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "server.h"
#include "weft_errors.h"

enum { TCP, UNIX_SOCK, NLISTENERS };

typedef struct listener_pause {
    struct weft_fdguard *g;
    int paused;              /* the handle is closed or closing */
    int handle_closed;       /* its close callback ran: it may be reused */
    int dupfd;               /* the listening socket meanwhile, or -1 */
    uv_connection_cb cb;
    uv_timer_t timer;
    int have_timer;
} listener_pause;

typedef struct weft_fdguard {
    weft_daemon *d;
    int spare;               /* given up to dup a listener, or -1 */
    int stopped;
    unsigned closing;        /* handles whose close callback refers to
                                g and has not run yet */
    listener_pause p[NLISTENERS];
} weft_fdguard;

static int open_spare(void)
{
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

int weft_fdguard_start(weft_daemon *d)
{
    weft_fdguard *g = d->srv->fdguard;

    if (!g) {
        if (!(g = calloc(1, sizeof *g)))
            return WEFT_ENOMEM;
        g->d = d;
        g->spare = -1;
        for (int i = 0; i < NLISTENERS; i++) {
            g->p[i].g = g;
            g->p[i].dupfd = -1;
        }
        d->srv->fdguard = g;
    }
    if (g->spare < 0 && (g->spare = open_spare()) < 0) {
        weft_dlog(d, WEFT_LOG_WARNING, "cannot keep a spare file "
                  "descriptor: %s", strerror(errno));
        return WEFT_EIO;
    }
    return 0;
}

static listener_pause *pause_of(weft_daemon *d, const uv_stream_t *l)
{
    weft_fdguard *g = d->srv->fdguard;

    if (!g)
        return NULL;
    return &g->p[l == (const uv_stream_t *)&d->srv->tcp ? TCP : UNIX_SOCK];
}

int weft_fdguard_paused(const weft_daemon *d, const uv_stream_t *l)
{
    const listener_pause *p = pause_of((weft_daemon *)d, l);

    return p && p->paused;
}

/* g goes once stopped and no close callback may refer to it. */
static void closed(weft_fdguard *g)
{
    if (--g->closing == 0 && g->stopped)
        free(g);
}

static void on_listener_closed(uv_handle_t *h)
{
    listener_pause *p = h->data;

    p->handle_closed = 1;
    closed(p->g);
}

/* Listens on p's dup again, into the handle it had. 0 or a libuv error
 * (the dup is closed then). */
static int relisten(listener_pause *p)
{
    weft_daemon *d = p->g->d;
    int is_tcp = p == &p->g->p[TCP];
    uv_stream_t *s = is_tcp ? (uv_stream_t *)&d->srv->tcp
                            : (uv_stream_t *)&d->srv->unix_sock;
    int rc;

    rc = is_tcp ? uv_tcp_init(d->loop, &d->srv->tcp)
                : uv_pipe_init(d->loop, &d->srv->unix_sock, 0);
    if (rc == 0) {
        s->data = d;
        rc = is_tcp ? uv_tcp_open(&d->srv->tcp, p->dupfd)
                    : uv_pipe_open(&d->srv->unix_sock, p->dupfd);
        if (rc != 0)
            uv_close((uv_handle_t *)s, NULL); /* the dup is still ours */
    }
    if (rc == 0) {
        p->dupfd = -1; /* the handle's now */
        rc = uv_listen(s, (int)d->cfg.listen_backlog, p->cb);
        if (rc != 0)
            uv_close((uv_handle_t *)s, NULL);
    }
    if (p->dupfd >= 0)
        close(p->dupfd);
    p->dupfd = -1;
    return rc;
}

static void on_pause_over(uv_timer_t *t)
{
    listener_pause *p = t->data;
    weft_fdguard *g = p->g;
    weft_daemon *d = g->d;
    int rc;

    if (g->spare < 0)
        g->spare = open_spare();
    if (!p->handle_closed || g->spare < 0) {
        /* Still out of descriptors: wait again, asleep */
        uv_timer_start(t, on_pause_over, WEFT_ACCEPT_PAUSE_MS, 0);
        return;
    }
    p->paused = 0;
    p->handle_closed = 0;
    if ((rc = relisten(p)) != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot listen again on the %s socket "
                  "after running out of file descriptors: %s; restart "
                  "weftd", p == &g->p[TCP] ? "TCP" : "Unix",
                  uv_strerror(rc));
        return;
    }
    weft_dlog(d, WEFT_LOG_INFO, "accepting %s connections again",
              p == &g->p[TCP] ? "TCP" : "Unix");
}

int weft_fdguard_accept_failed(weft_daemon *d, uv_stream_t *l, int status,
                               uv_connection_cb cb)
{
    listener_pause *p;
    uv_os_fd_t fd;

    if (status != UV_EMFILE && status != UV_ENFILE)
        return 0;
    if ((!d->srv->fdguard && weft_fdguard_start(d) == WEFT_ENOMEM) ||
        !(p = pause_of(d, l)) || p->g->stopped)
        return 0;
    if (p->paused || uv_is_closing((uv_handle_t *)l))
        return 1;
    if (uv_fileno((uv_handle_t *)l, &fd) != 0)
        return 0;
    if (p->g->spare >= 0) {
        close(p->g->spare);
        p->g->spare = -1;
    }
    p->dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (p->dupfd < 0)
        weft_dlog(d, WEFT_LOG_ERROR, "out of file descriptors, and no spare "
                  "one to keep the %s listening socket: it is closed; "
                  "restart weftd", l->type == UV_TCP ? "TCP" : "Unix");
    else
        weft_dlog(d, WEFT_LOG_WARNING, "accept: %s: not accepting %s "
                  "connections for %d ms (fd_limit %llu)",
                  uv_strerror(status), l->type == UV_TCP ? "TCP" : "Unix",
                  WEFT_ACCEPT_PAUSE_MS, (unsigned long long)d->srv->fd_limit);
    p->paused = 1;
    p->handle_closed = 0;
    p->cb = cb;
    l->data = p; /* for on_listener_closed; relisten sets d again */
    p->g->closing++;
    uv_close((uv_handle_t *)l, on_listener_closed);
    if (p->dupfd < 0)
        return 1;
    if (!p->have_timer) {
        uv_timer_init(d->loop, &p->timer);
        p->timer.data = p;
        p->have_timer = 1;
    }
    uv_timer_start(&p->timer, on_pause_over, WEFT_ACCEPT_PAUSE_MS, 0);
    return 1;
}

static void on_timer_closed(uv_handle_t *h)
{
    listener_pause *p = h->data;

    closed(p->g);
}

void weft_fdguard_stop(weft_daemon *d)
{
    weft_fdguard *g = d->srv->fdguard;

    if (!g)
        return;
    d->srv->fdguard = NULL;
    g->stopped = 1;
    if (g->spare >= 0)
        close(g->spare);
    g->spare = -1;
    for (int i = 0; i < NLISTENERS; i++) {
        listener_pause *p = &g->p[i];
        if (p->dupfd >= 0)
            close(p->dupfd);
        p->dupfd = -1;
        if (p->have_timer) {
            g->closing++;
            uv_close((uv_handle_t *)&p->timer, on_timer_closed);
        }
    }
    if (g->closing == 0)
        free(g);
}

/* accept.c - weftd's listeners, accepting connections and the limits
 * on them (max_connections through reserve.h, max_connections_per_user
 * here, the file descriptors through fdguard.h). A connection accepted
 * is handed to server.c, which reads it (weft__conn_read_start).
 */
#include "accept.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdguard.h"
#include "log.h"
#include "preauth.h"
#include "reserve.h"
#include "uidmap.h"
#include "weft_errors.h"

static void on_connection(uv_stream_t *server, int status);

/* ---- connections per user (max_connections_per_user) ---- */

/* A user's cell in d->srv->users (uidmap.h). */
typedef struct user_conns {
    uint32_t uid;      /* first: the map's key */
    uint32_t n;        /* connections of uid that said Hello, open */
} user_conns;

int weft_conn_charge_user(weft_conn *c, uint32_t uid)
{
    weft_daemon *d = c->d;
    user_conns *u;

    if (c->charged && c->charged_uid == uid)
        return 0; /* since accept (the Unix socket's peer) */
    if (c->link)
        return 0; /* a relayed member: its node counts its connection */
    weft__conn_uncharge_user(c);
    if (!(u = weft_uidmap_get(&d->srv->users, uid, sizeof *u))) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return WEFT_ENOMEM;
    }
    if (u->n >= d->cfg.max_connections_per_user) {
        weft_conn_fail_limit(c, WEFT_LIMIT_MAX_CONNECTIONS_PER_USER,
                             WEFT_ELIMIT, "uid %u has %u connections "
                             "already: max_connections_per_user is %llu",
                             (unsigned)uid, u->n, (unsigned long long)
                             d->cfg.max_connections_per_user);
        return WEFT_ELIMIT;
    }
    u->n++;
    c->charged = 1;
    c->charged_uid = uid;
    return 0;
}

void weft__conn_uncharge_user(weft_conn *c)
{
    weft_daemon *d = c->d;
    size_t i;
    user_conns *u;

    if (!c->charged)
        return;
    c->charged = 0;
    i = weft_uidmap_find(&d->srv->users, c->charged_uid, sizeof *u);
    if (i == d->srv->users.n)
        return;
    u = weft_uidmap_at(&d->srv->users, i, sizeof *u);
    if (u->uid == c->charged_uid && --u->n == 0)
        weft_uidmap_remove(&d->srv->users, i, sizeof *u);
    if (d->srv->users.n == 0)
        weft_uidmap_free(&d->srv->users);
}

static void describe_peer(weft_conn *c, int is_tcp)
{
    if (is_tcp) {
        struct sockaddr_storage ss;
        int len = sizeof ss;
        char host[64] = "?";
        int port = 0;
        if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0) {
            if (ss.ss_family == AF_INET) {
                uv_ip4_name((struct sockaddr_in *)&ss, host, sizeof host);
                port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
            } else if (ss.ss_family == AF_INET6) {
                uv_ip6_name((struct sockaddr_in6 *)&ss, host, sizeof host);
                port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
            }
        }
        snprintf(c->peer, sizeof c->peer, "%s:%d", host, port);
        snprintf(c->addr, sizeof c->addr, "%s", host);
        c->peer_loopback = strncmp(host, "127.", 4) == 0 ||
                           strcmp(host, "::1") == 0 ||
                           strncmp(host, "::ffff:127.", 11) == 0;
    } else {
        struct ucred cred;
        socklen_t len = sizeof cred;
        uv_os_fd_t fd;
        c->is_unix = 1;
        if (uv_fileno(&c->h.handle, &fd) == 0 &&
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            c->has_peer_uid = 1;
            c->peer_uid = cred.uid;
            c->peer_gid = cred.gid;
            c->peer_pid = cred.pid > 0 ? (uint32_t)cred.pid : 0;
            snprintf(c->peer, sizeof c->peer, "unix:pid %d uid %u",
                     (int)cred.pid, (unsigned)cred.uid);
        } else {
            snprintf(c->peer, sizeof c->peer, "unix:?");
        }
    }
}

/* A new connection of d (is_tcp: a TCP one, else a Unix one), listed and
 * reading nothing yet, its handle not yet bound to a socket. NULL when
 * out of memory (then nothing is left of it, or it is closing). */
static weft_conn *conn_new(weft_daemon *d, int is_tcp)
{
    weft_conn *c = calloc(1, sizeof *c);
    int rc;

    if (!c) {
        weft_dlog(d, WEFT_LOG_ERROR, "out of memory accepting a connection");
        return NULL;
    }
    c->d = d;
    rc = is_tcp ? uv_tcp_init(d->loop, &c->h.tcp)
                : uv_pipe_init(d->loop, &c->h.pipe, 0);
    if (rc) {
        free(c);
        return NULL;
    }
    c->h.handle.data = c;
    c->last_frame = uv_now(d->loop);
    weft_frame_reader_init(&c->reader, d->cfg.max_frame < WEFT_MAX_HELLO_FRAME
                                           ? d->cfg.max_frame
                                           : WEFT_MAX_HELLO_FRAME);
    c->next = d->srv->conns;
    if (d->srv->conns)
        d->srv->conns->prev = c;
    d->srv->conns = c;
    d->srv->nconns++;
    if (!d->srv->rbuf && !(d->srv->rbuf = malloc(WEFT_READ_CHUNK))) {
        weft_dlog(d, WEFT_LOG_ERROR, "out of memory accepting a connection");
        weft__conn_close_now(c);
        return NULL;
    }
    return c;
}

/* c's handle is bound to its socket: names the peer, applies the limits
 * on connections and starts reading. */
static void conn_start(weft_conn *c, int is_tcp)
{
    weft_daemon *d = c->d;

    if (is_tcp) {
        uv_tcp_nodelay(&c->h.tcp, 1);
        /* A dead host is found by keepalive, a live but silent peer by
         * session_timeout (weft_server_tick). */
        uv_tcp_keepalive(&c->h.tcp, 1, 60);
    }
    describe_peer(c, is_tcp);
    c->accepted = uv_now(d->loop);
    if (is_tcp && weft_preauth_enter(c) < 0) {
        weft_conn_fail(c, WEFT_ENOMEM, "out of memory");
        return;
    }
    if (c->preauth && d->cfg.auth == WEFT_AUTH_MUNGE &&
        c->reader.max_frame > d->cfg.max_preauth_frame)
        c->reader.max_frame = (size_t)d->cfg.max_preauth_frame;
    if (!is_tcp && c->has_peer_uid &&
        weft_conn_charge_user(c, c->peer_uid) < 0)
        return; /* max_connections_per_user, from accept on */
    if (weft_reserve_check(c) < 0)
        return; /* max_connections, the file descriptor limit */
    weft_conn_log(c, WEFT_LOG_DEBUG, "connected");
    if (weft__conn_read_start(c) != 0)
        weft_conn_close(c);
    else if (is_tcp && d->server_cbs->on_tcp_open)
        d->server_cbs->on_tcp_open(c);
}

/* Connections open or closing (refused ones hold their descriptor until
 * closed) at which accepting waits: beyond max_connections, refusals
 * would otherwise take a descriptor each, as fast as peers connect. */
static int accept_full(const weft_daemon *d)
{
    return d->srv->nconns >= weft_reserve_accept_at(d);
}

/* A listener whose connection was not taken (libuv stops watching it
 * until uv_accept) takes it once there is room. */
void weft__server_take_held(weft_daemon *d)
{
    for (int i = 0; i < 2 && !accept_full(d); i++) {
        uv_stream_t *s = d->srv->held[i];
        int is_tcp = s && s->type == UV_TCP;
        weft_conn *c;
        if (!s)
            continue;
        d->srv->held[i] = NULL;
        if (!(c = conn_new(d, is_tcp)))
            continue; /* out of memory: it stays unwatched until restart */
        if (uv_accept(s, &c->h.stream) != 0) {
            weft__conn_close_now(c);
            continue;
        }
        conn_start(c, is_tcp);
    }
}

static void on_connection(uv_stream_t *server, int status)
{
    weft_daemon *d = server->data;
    int is_tcp = server->type == UV_TCP;
    weft_conn *c;

    if (status < 0) {
        /* Out of descriptors libuv retries at once, for as long as a
         * connection waits: the listener pauses instead (fdguard.h).
         * Other failures are said now and then, not once per attempt. */
        uint64_t n = ++d->srv->accept_failed;
        if (status == UV_EMFILE || status == UV_ENFILE)
            weft_limit_hit(d, WEFT_LIMIT_FD_LIMIT);
        if (weft_fdguard_accept_failed(d, server, status, on_connection))
            return;
        if ((n & (n - 1)) == 0)
            weft_dlog(d, WEFT_LOG_WARNING, "accept failed (%llu times so "
                      "far): %s", (unsigned long long)n, uv_strerror(status));
        return;
    }
    if (accept_full(d)) { /* not taken: libuv waits for take_held */
        d->srv->held[is_tcp] = server;
        return;
    }
    if (!(c = conn_new(d, is_tcp)))
        return;
    if (uv_accept(server, &c->h.stream) != 0) {
        weft__conn_close_now(c);
        return;
    }
    conn_start(c, is_tcp);
}

int weft_server_open_fd(weft_daemon *d, int fd, weft_conn **out)
{
    weft_conn *c;

    assert(d->server_cbs && fd >= 0);
    *out = NULL;
    if (!(c = conn_new(d, 0))) {
        close(fd);
        return WEFT_ENOMEM;
    }
    if (uv_pipe_open(&c->h.pipe, fd) != 0) {
        close(fd);
        weft__conn_close_now(c);
        return WEFT_EIO;
    }
    conn_start(c, 0);
    *out = c;
    return 0;
}

void weft_server_raise_fd_limit(weft_daemon *d)
{
    struct rlimit rl;
    rlim_t was;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        weft_dlog(d, WEFT_LOG_WARNING, "getrlimit(RLIMIT_NOFILE): %s",
                  strerror(errno));
        return;
    }
    was = rl.rlim_cur;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            weft_dlog(d, WEFT_LOG_WARNING, "cannot raise the file descriptor "
                      "limit from %llu to %llu: %s", (unsigned long long)was,
                      (unsigned long long)rl.rlim_max, strerror(errno));
            rl.rlim_cur = was;
        }
    }
    d->srv->fd_limit = rl.rlim_cur == RLIM_INFINITY ? 0 : (uint64_t)rl.rlim_cur;
    weft_dlog(d, WEFT_LOG_INFO, "file descriptors: limit %llu%s%s (about "
              "%llu connections with their journals)",
              (unsigned long long)rl.rlim_cur,
              rl.rlim_cur != was ? ", raised from " : "",
              rl.rlim_cur != was ? "the soft limit" : "",
              rl.rlim_cur > weft_reserve_fds(d)
                  ? (unsigned long long)(rl.rlim_cur - weft_reserve_fds(d)) / 2
                  : 0ull);
    if (d->srv->fd_limit &&
        d->srv->fd_limit < weft_reserve_fds(d) + 2 * d->cfg.max_connections)
        weft_dlog(d, WEFT_LOG_WARNING, "max_connections = %llu needs about "
                  "%llu file descriptors, the limit is %llu: connections "
                  "beyond it are refused (LimitNOFILE= in the unit raises "
                  "it)", (unsigned long long)d->cfg.max_connections,
                  (unsigned long long)(weft_reserve_fds(d) +
                                       2 * d->cfg.max_connections),
                  (unsigned long long)d->srv->fd_limit);
}

/* The listen(2) backlog: listen_backlog, which the kernel caps at
 * net.core.somaxconn (said once, at the first listen). */
static int backlog(weft_daemon *d)
{
    unsigned long max = 0;
    FILE *f;

    if (!d->srv->backlog_checked) {
        d->srv->backlog_checked = 1;
        f = fopen("/proc/sys/net/core/somaxconn", "r");
        if (f && fscanf(f, "%lu", &max) == 1 && max < d->cfg.listen_backlog)
            weft_dlog(d, WEFT_LOG_WARNING, "listen_backlog = %llu, but the "
                      "kernel queues at most net.core.somaxconn = %lu "
                      "connections: more processes connecting at once wait "
                      "a second or more (sysctl net.core.somaxconn raises "
                      "it)", (unsigned long long)d->cfg.listen_backlog, max);
        if (f)
            fclose(f);
    }
    return (int)d->cfg.listen_backlog;
}

static int write_address_file(weft_daemon *d, const char *addr)
{
    char tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof tmp, "%s.tmp", d->cfg.address_file);
    f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", addr) < 0 || fclose(f) != 0 ||
        rename(tmp, d->cfg.address_file) != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot write address file %s: %s",
                  d->cfg.address_file, strerror(errno));
        return WEFT_EIO;
    }
    return 0;
}

static int tcp_listening(weft_daemon *d, const char *how);

static int start_tcp(weft_daemon *d)
{
    const char *listen = d->cfg.listen;
    const char *colon = strrchr(listen, ':');
    char host[256];
    struct sockaddr_storage ss;
    char *end;
    long port;
    int rc;

    port = strtol(colon + 1, &end, 10);
    if ((size_t)(colon - listen) >= sizeof host || *end || port < 0 ||
        port > 65535 || end == colon + 1) {
        weft_dlog(d, WEFT_LOG_ERROR, "listen = '%s': expected HOST:PORT with "
                  "a port between 0 and 65535", listen);
        return WEFT_ECONFIG;
    }
    memcpy(host, listen, (size_t)(colon - listen));
    host[colon - listen] = 0;
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = 0;
    }
    if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)&ss) != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "listen = '%s': '%s' is not an IPv4 or "
                  "IPv6 address", listen, host);
        return WEFT_ECONFIG;
    }
    uv_tcp_init(d->loop, &d->srv->tcp);
    d->srv->tcp.data = d;
    d->srv->have_tcp = 1;
    rc = uv_tcp_bind(&d->srv->tcp, (struct sockaddr *)&ss, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&d->srv->tcp, backlog(d),
                       on_connection);
    if (rc != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot listen on %s: %s", listen,
                  uv_strerror(rc));
        return WEFT_EIO;
    }
    return tcp_listening(d, "");
}

/* Logs the address the TCP listener has, keeps it in d->srv->bound and writes
 * the address file. how says where the socket came from. */
static int tcp_listening(weft_daemon *d, const char *how)
{
    struct sockaddr_storage ss;
    int namelen = sizeof ss;
    char bound[300];

    memset(&ss, 0, sizeof ss);
    uv_tcp_getsockname(&d->srv->tcp, (struct sockaddr *)&ss, &namelen);
    if (ss.ss_family == AF_INET6) {
        char name[64];
        uv_ip6_name((struct sockaddr_in6 *)&ss, name, sizeof name);
        snprintf(bound, sizeof bound, "[%s]:%d", name,
                 ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
    } else {
        char name[64];
        uv_ip4_name((struct sockaddr_in *)&ss, name, sizeof name);
        snprintf(bound, sizeof bound, "%s:%d", name,
                 ntohs(((struct sockaddr_in *)&ss)->sin_port));
    }
    weft_dlog(d, WEFT_LOG_INFO, "listening on %s%s", bound, how);
    snprintf(d->srv->bound, sizeof d->srv->bound, "%s", bound);
    if (d->cfg.address_file)
        return write_address_file(d, bound);
    return 0;
}

static int start_unix(weft_daemon *d)
{
    const char *path = d->cfg.socket;
    struct stat st;
    int rc;

    /* A stale socket from a previous run blocks bind; remove only sockets. */
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(path);
    uv_pipe_init(d->loop, &d->srv->unix_sock, 0);
    d->srv->unix_sock.data = d;
    d->srv->have_unix = 1;
    rc = uv_pipe_bind(&d->srv->unix_sock, path);
    if (rc == 0) {
        chmod(path, 0666);
        rc = uv_listen((uv_stream_t *)&d->srv->unix_sock, backlog(d),
                       on_connection);
    }
    if (rc != 0 && !d->cfg.socket_set && d->srv->have_tcp) {
        /* the default one (SPOOL/weftd.sock): a spool where no socket can
         * be made costs users their weft command, not the service */
        weft_dlog(d, WEFT_LOG_WARNING, "cannot listen on unix socket %s: "
                  "%s; serving TCP only (users who cannot read the "
                  "catalog cannot ask weftd for their traces: set socket "
                  "in weftd.conf)", path, uv_strerror(rc));
        return 0;
    }
    if (rc != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "cannot listen on unix socket %s: %s",
                  path, uv_strerror(rc));
        return WEFT_EIO;
    }
    weft_dlog(d, WEFT_LOG_INFO, "listening on unix:%s", path);
    return 0;
}

int weft_server_adopt(weft_daemon *d, int fd, int is_unix)
{
    int rc;

    assert(fd >= 0);
    if (is_unix ? d->srv->have_unix : d->srv->have_tcp) {
        weft_dlog(d, WEFT_LOG_WARNING, "socket activation: fd %d is a second "
                  "%s socket; weftd listens on one of each, closing it", fd,
                  is_unix ? "Unix" : "TCP");
        close(fd);
        return 0;
    }
    if (is_unix) {
        char path[4096];
        size_t len = sizeof path;
        uv_pipe_init(d->loop, &d->srv->unix_sock, 0);
        d->srv->unix_sock.data = d;
        d->srv->have_unix = 2; /* systemd's socket: never unlinked by weftd */
        rc = uv_pipe_open(&d->srv->unix_sock, fd);
        if (rc == 0)
            rc = uv_listen((uv_stream_t *)&d->srv->unix_sock, backlog(d),
                           on_connection);
        if (rc == 0 && uv_pipe_getsockname(&d->srv->unix_sock, path, &len) != 0)
            snprintf(path, sizeof path, "?");
        if (rc == 0)
            weft_dlog(d, WEFT_LOG_INFO, "listening on unix:%s (fd %d from "
                      "systemd socket activation)", path, fd);
    } else {
        char how[64];
        uv_tcp_init(d->loop, &d->srv->tcp);
        d->srv->tcp.data = d;
        d->srv->have_tcp = 1;
        rc = uv_tcp_open(&d->srv->tcp, fd);
        if (rc == 0)
            rc = uv_listen((uv_stream_t *)&d->srv->tcp, backlog(d),
                           on_connection);
        if (rc == 0) {
            snprintf(how, sizeof how, " (fd %d from systemd socket "
                     "activation)", fd);
            return tcp_listening(d, how);
        }
    }
    if (rc != 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "socket activation: cannot listen on fd "
                  "%d: %s", fd, uv_strerror(rc));
        return WEFT_EIO;
    }
    return 0;
}

int weft__server_listen(weft_daemon *d)
{
    int rc = 0;

    weft_fdguard_start(d); /* a failure is logged; weftd goes on */
    if (d->srv->have_tcp || d->srv->have_unix) {
        weft_dlog(d, WEFT_LOG_INFO, "socket activation: not binding listen "
                  "= '%s' or socket = '%s'", d->cfg.listen, d->cfg.socket);
        return 0;
    }
    if (*d->cfg.listen)
        rc = start_tcp(d);
    if (rc == 0 && *d->cfg.socket)
        rc = start_unix(d);
    return rc;
}

void weft__server_stop_listening(weft_daemon *d)
{
    d->srv->held[0] = d->srv->held[1] = NULL;
    weft_fdguard_stop(d); /* a paused listener is closed already */
    if (d->srv->have_tcp && !uv_is_closing((uv_handle_t *)&d->srv->tcp))
        uv_close((uv_handle_t *)&d->srv->tcp, NULL);
    if (d->srv->have_unix && !uv_is_closing((uv_handle_t *)&d->srv->unix_sock))
        uv_close((uv_handle_t *)&d->srv->unix_sock, NULL);
    if (d->srv->have_unix == 1) {
        unlink(d->cfg.socket);
        d->srv->have_unix = 3; /* unlinked */
    }
}

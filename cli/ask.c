/* ask.c - asking the running weftd what this user may see (daemon/ask/ask.h):
 * for a user who cannot read the catalog or the status file (they are
 * weftd's alone), weftd answers on its Unix socket with this user's part
 * of them, the kernel telling it who asks.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "frame.h"
#include "weft_errors.h"

/* How long an answer may take (weftd copies a user's rows: a second for
 * a large catalog on a busy machine). */
#define ASK_TIMEOUT_MS 60000

int weft__cli_private(const char *path, int mode)
{
    return access(path, mode) != 0 && errno == EACCES;
}

int weft__cli_asks(const cli *c, int mode)
{
    return c->node || weft__cli_private(c->catalog_path, mode);
}

/* weftd's Unix socket: $WEFT_SOCKET, else the configuration's. Returns a
 * malloc'd path or NULL after saying why. */
static char *ask_socket(void)
{
    const char *env = getenv("WEFT_SOCKET");
    weft_config cfg;
    char err[512] = "";
    char *path = NULL;

    if (env && *env)
        return weft__cli_xstrdup(env);
    if (weft__cli_load_config(&cfg, err, sizeof err) < 0)
        weft__cli_fail("%s", err);
    else if (!cfg.socket || !*cfg.socket)
        weft__cli_fail("the catalog is weftd's and its configuration (%s) "
                       "has no Unix socket to ask weftd on (socket =)",
                       weft_config_default_path());
    else
        path = weft__cli_xstrdup(cfg.socket);
    weft_config_free(&cfg);
    return path;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sends all of buf[0..len) on fd. 0 or -1 (errno). */
static int send_all(int fd, const uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A connection to weftd and what was read of it. */
typedef struct ask_conn {
    int fd;
    const char *sock;        /* escaped, for messages */
    weft_frame_reader r;
    uint8_t buf[64 << 10];
    size_t have, off;        /* bytes in buf, bytes of them fed */
} ask_conn;

/* Takes one frame from a into *env, waiting until deadline. 0, or
 * EXIT_FAIL after saying why. */
static int read_envelope(ask_conn *a, int64_t deadline,
                         Weft__Envelope **env)
{
    const char *sock = a->sock;

    for (;;) {
        const uint8_t *p = a->buf + a->off;
        size_t len = a->have - a->off;
        uint8_t *frame = NULL;
        uint32_t flen = 0;
        int rc = weft_frame_reader_feed(&a->r, &p, &len, &frame, &flen);
        a->off = (size_t)(p - a->buf);
        if (rc == 1) {
            *env = weft_frame_unpack(frame, flen);
            free(frame);
            if (!*env)
                return weft__cli_fail("weftd at %s answered with a frame "
                                      "that does not unpack", sock);
            return 0;
        }
        if (rc < 0)
            return weft__cli_fail("weftd at %s answered: %s", sock,
                                  weft_strerror(rc));
        struct pollfd pfd = { a->fd, POLLIN, 0 };
        int64_t left = deadline - now_ms();
        ssize_t n;
        if (left <= 0 || (rc = poll(&pfd, 1, (int)left)) == 0)
            return weft__cli_fail("weftd at %s did not answer within %d s",
                                  sock, ASK_TIMEOUT_MS / 1000);
        if (rc < 0 && errno == EINTR)
            continue;
        n = rc < 0 ? -1 : recv(a->fd, a->buf, sizeof a->buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return weft__cli_fail("weftd at %s closed the connection "
                                  "without answering%s%s", sock,
                                  n < 0 ? ": " : "",
                                  n < 0 ? strerror(errno) : "");
        a->have = (size_t)n;
        a->off = 0;
    }
}

/* Connects a to weftd's socket sock (a->sock its escaped name). 0, or
 * EXIT_FAIL after saying why. */
static int ask_connect(ask_conn *a, const char *sock)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };

    if (strlen(sock) >= sizeof sa.sun_path)
        return weft__cli_fail("weftd's socket path %s is too long", a->sock);
    strcpy(sa.sun_path, sock);
    a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (a->fd < 0 || connect(a->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        return weft__cli_fail("the catalog is weftd's, and weftd does not "
                              "answer on %s (%s): is it running? (root "
                              "reads the catalog without it)", a->sock,
                              strerror(errno));
    return 0;
}

/* Sends env to weftd as one frame; what says what it was for ("ask
 * weftd"). 0, or EXIT_FAIL after saying why. */
static int send_envelope(ask_conn *a, const Weft__Envelope *env,
                         const char *what)
{
    uint8_t *frame = NULL;
    ssize_t flen = weft_frame_pack(env, &frame);
    int status = 0;

    if (flen < 0)
        frame = NULL;
    if (flen < 0 || send_all(a->fd, frame, (size_t)flen) != 0)
        status = weft__cli_fail("cannot %s on %s: %s", what, a->sock,
                                flen < 0 ? weft_strerror((int)flen)
                                         : strerror(errno));
    free(frame);
    return status;
}

/* Reads Answer frames from a until the last one, into *data (malloc'd,
 * NUL-terminated) and *len. 0, or EXIT_FAIL after saying why. */
static int read_answer(ask_conn *a, int64_t deadline, unsigned char **data,
                       size_t *len)
{
    Weft__Envelope *in = NULL;
    unsigned char *got = NULL;
    size_t n = 0;
    int status = EXIT_FAIL;

    for (;;) {
        if (read_envelope(a, deadline, &in) != 0)
            goto out;
        if (in->msg_case == WEFT__ENVELOPE__MSG_ERROR) {
            char *m = weft__cli_escape(in->error->message);
            weft__cli_fail("weftd: %s", m);
            free(m);
            goto out;
        }
        if (in->msg_case != WEFT__ENVELOPE__MSG_ANSWER ||
            n + in->answer->data.len > WEFT_MAX_ANSWER) {
            weft__cli_fail("weftd at %s answered with %s", a->sock,
                           in->msg_case == WEFT__ENVELOPE__MSG_ANSWER ?
                           "more than it may send" :
                           weft_frame_kind_name(in->msg_case));
            goto out;
        }
        unsigned char *p = realloc(got, n + in->answer->data.len + 1);
        if (!p) {
            weft__cli_fail("out of memory");
            goto out;
        }
        got = p;
        memcpy(got + n, in->answer->data.data, in->answer->data.len);
        n += in->answer->data.len;
        got[n] = 0; /* text answers are strings */
        if (in->answer->last)
            break;
        weft_frame_free_envelope(in);
        in = NULL;
    }
    *data = got;
    *len = n;
    got = NULL;
    status = EXIT_OK;
out:
    if (in)
        weft_frame_free_envelope(in);
    free(got);
    return status;
}

/* weft__cli_ask, and weft__cli_ask_import's ImportTrace imp (NULL:
 * none) sent after the Query. */
static int ask_weftd(int kind, const char *trace, int force, int here,
                     const Weft__ImportTrace *imp, unsigned char **data,
                     size_t *len)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Query q = WEFT__QUERY__INIT;
    ask_conn *a = calloc(1, sizeof *a);
    char *sock = ask_socket();
    int status = EXIT_FAIL;
    int64_t deadline = now_ms() + ASK_TIMEOUT_MS;

    *data = NULL;
    *len = 0;
    if (!a) {
        free(sock);
        return weft__cli_fail("out of memory");
    }
    a->fd = -1;
    weft_frame_reader_init(&a->r, WEFT_ANSWER_CHUNK + 4096);
    if (!sock)
        goto out;
    a->sock = weft__cli_escape(sock);
    if (ask_connect(a, sock) != 0)
        goto out;
    q.protocol_version = WEFT_PROTOCOL_VERSION;
    q.kind = (Weft__Query__Kind)kind;
    q.trace = (char *)(trace ? trace : "");
    q.force = force;
    q.here = here;
    env.msg_case = WEFT__ENVELOPE__MSG_QUERY;
    env.query = &q;
    if (send_envelope(a, &env, "ask weftd") != 0)
        goto out;
    if (imp) {
        env.msg_case = WEFT__ENVELOPE__MSG_IMPORT_TRACE;
        env.import_trace = (Weft__ImportTrace *)imp;
        if (send_envelope(a, &env, "send the import to weftd") != 0)
            goto out;
    }
    status = read_answer(a, deadline, data, len);
out:
    if (a->fd >= 0)
        close(a->fd);
    weft_frame_reader_free(&a->r);
    free((char *)a->sock);
    free(a);
    free(sock);
    return status;
}

int weft__cli_ask(int kind, const char *trace, int force, int here,
                  unsigned char **data, size_t *len)
{
    return ask_weftd(kind, trace, force, here, NULL, data, len);
}

int weft__cli_ask_import(const Weft__ImportTrace *imp, int here,
                         unsigned char **data, size_t *len)
{
    return ask_weftd(WEFT__QUERY__KIND__IMPORT, NULL, 0, here, imp, data,
                     len);
}

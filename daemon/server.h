/* server.h - weftd's listeners and connections (libuv).
 *
 * Each connection runs a receive state machine (weft_frame_reader: header,
 * then payload, length checked against max_frame before any buffer is
 * sized) and hands complete frames to session.c. A connection is closed
 * asynchronously: pending writes drain (so an Error reaches the peer),
 * then the handle is closed and its memory freed in the close callback.
 */
#ifndef WEFT_SERVER_H
#define WEFT_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "daemon.h"
#include "frame.h"

#define WEFT_READ_CHUNK (64u << 10)

typedef struct weft_conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    weft_daemon *d;
    char peer[128];            /* "127.0.0.1:5555" or "unix:pid 42" */
    int has_peer_uid;          /* Unix socket: uid from SO_PEERCRED */
    uint32_t peer_uid;
    weft_frame_reader reader;
    int closing;               /* no more frames are processed */
    int paused;                /* reading stopped: replies pile up */
    struct weft_member *member; /* set by Hello */
    uint32_t clock_syncs;      /* ClockSync requests answered (session.c) */
    uv_shutdown_t shutdown_req;
    struct weft_conn *next, *prev;
    char rbuf[WEFT_READ_CHUNK];
} weft_conn;

/* Listens on a listening stream socket systemd passed (socket
 * activation; Unix if is_unix, else TCP) instead of binding; takes
 * ownership of fd. A second socket of a kind is closed with a warning.
 * Call before weft_server_start. 0 or a WEFT_E* code (logged). */
int weft_server_adopt(weft_daemon *d, int fd, int is_unix);
/* Starts the listeners of d->cfg, or, if sockets were adopted, none.
 * 0 or a WEFT_E* code (logged). */
int weft_server_start(weft_daemon *d);
/* Stops listening and closes every connection. */
void weft_server_stop(weft_daemon *d);

/* Queues a packed frame for the peer; takes ownership of `frame`. */
void weft_conn_send(weft_conn *c, uint8_t *frame, size_t len);
/* Sends an Error frame with code and message, logs it, then closes. */
void weft_conn_fail(weft_conn *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Closes after pending writes. Idempotent. */
void weft_conn_close(weft_conn *c);
/* Logs a line prefixed with the peer, trace and rank. */
void weft_conn_log(const weft_conn *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

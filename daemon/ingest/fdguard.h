/* fdguard.h - weftd out of file descriptors: accepting pauses.
 *
 * DESIGN: when accept(2) fails with EMFILE or ENFILE, libuv's listener
 * callback (uv__server_io) retries at once, and goes on retrying as
 * long as a connection waits in the listen queue: the loop never comes
 * back, no timer or signal (SIGTERM) is handled, and the log fills with
 * one line per attempt. libuv leaves that loop only when the listener is
 * closed. So on the first such failure a listener is paused: a spare
 * descriptor kept for this (opened at start) is given up to dup(2) the
 * listening socket, the handle is closed (its queue is kept by the
 * dup), and after WEFT_ACCEPT_PAUSE_MS a timer listens on the dup
 * again, once the spare could be opened anew (else it waits another
 * pause). Connections wait in the kernel's queue meanwhile; the loop
 * sleeps.
 *
 * Loop thread only. One state per listener (TCP, Unix).
 */
#ifndef WEFT_FDGUARD_H
#define WEFT_FDGUARD_H

#include <uv.h>

#include "daemon.h"

#define WEFT_ACCEPT_PAUSE_MS 500

/* Opens the spare descriptor. 0 or WEFT_EIO (logged; weftd goes on, and
 * a later EMFILE then closes the listener until a spare can be had). */
int weft_fdguard_start(weft_daemon *d);
/* Accepting on listener (d->srv->tcp or d->srv->unix_sock) failed with status
 * (a libuv error): pauses it if that is EMFILE or ENFILE. cb is its
 * connection callback, for when it listens again. 1 if paused (or
 * pausing already), else 0. */
int weft_fdguard_accept_failed(weft_daemon *d, uv_stream_t *listener,
                               int status, uv_connection_cb cb);
/* 1 while listener is paused. */
int weft_fdguard_paused(const weft_daemon *d, const uv_stream_t *listener);
/* Stops pausing for good (weftd stops listening): closes the dups, the
 * timers and the spare. Idempotent. */
void weft_fdguard_stop(weft_daemon *d);

#endif

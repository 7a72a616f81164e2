/* accept.h - what server.c (connections, their reading and writing) and
 * accept.c (listeners, accepting, the limits on connections) share; not
 * for other modules, which use server.h.
 */
#ifndef WEFT_ACCEPT_H
#define WEFT_ACCEPT_H

#include "server.h"

/* accept.c: binds and listens as d->cfg says, unless systemd's sockets
 * were adopted. 0 or a WEFT_E* code (logged). */
int weft__server_listen(weft_daemon *d);
/* accept.c: closes the listeners (and unlinks the Unix socket weftd
 * made); connections are left alone. */
void weft__server_stop_listening(weft_daemon *d);
/* accept.c: a listener whose connection was not taken takes it once
 * there is room under max_connections (a connection closed). */
void weft__server_take_held(weft_daemon *d);
/* accept.c: c closes, it no longer counts for its user. */
void weft__conn_uncharge_user(weft_conn *c);

/* server.c: c's read path starts (read callback, frame reader). 0 or a
 * libuv error. */
int weft__conn_read_start(weft_conn *c);
/* server.c: closes c's handle at once (its memory is freed in the close
 * callback), without draining its writes. */
void weft__conn_close_now(weft_conn *c);

#endif

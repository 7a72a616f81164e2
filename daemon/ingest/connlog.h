/* connlog.h - log lines a peer can cause at will, one per connection
 * (a disconnect without Goodbye, a frame cut off, a failed read or
 * write): rate-limited per cause like refusals (max_log_refusals a
 * second), the lines held back counted and said in the next one let
 * through, so a peer that connects and hangs up in a loop cannot fill
 * the disk with weftd's log. Loop thread.
 */
#ifndef WEFT_CONNLOG_H
#define WEFT_CONNLOG_H

#include "server.h"

enum weft_connlog {
    WEFT_CONNLOG_NO_GOODBYE,   /* a member hung up without Goodbye */
    WEFT_CONNLOG_CUT_FRAME,    /* closed in the middle of a frame */
    WEFT_CONNLOG_READ_FAILED,
    WEFT_CONNLOG_WRITE_FAILED,
    WEFT_CONNLOG__COUNT
};

/* weft_conn_log (server.h) of c's line of cause at level, unless more
 * than cfg.max_log_refusals lines of that cause were logged this second
 * (then it is counted, and the next line of that cause says how many
 * were not logged). Lines above the log level are neither logged nor
 * counted. */
void weft_connlog(const weft_conn *c, enum weft_connlog cause, int level,
                  const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

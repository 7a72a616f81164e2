/* log.h - weftd's log lines on stderr (journald adds time and unit).
 * Each line starts with its level; lines about a connection name the peer,
 * the trace and the rank (see weft_conn_log in server.h). */
#ifndef WEFT_LOG_H
#define WEFT_LOG_H

enum { WEFT_LOG_ERROR, WEFT_LOG_WARNING, WEFT_LOG_INFO, WEFT_LOG_DEBUG };

/* Writes one line if level <= threshold. */
void weft_log(int threshold, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

/* log.h - weftd's log lines.
 *
 * In the foreground (stderr is not the journal) each line is
 *   2026-11-24T00:40:12.345+0000 weftd: info: MESSAGE
 * with the local time and its UTC offset. Under systemd (JOURNAL_STREAM
 * names stderr) each message goes to the journal with sd_journal_send:
 * MESSAGE, PRIORITY, SYSLOG_IDENTIFIER=weftd and, where the call site
 * knows them, the structured fields TRACE= (the name), TRACE_KEY= (the
 * spool key), RANK= and PEER=, so `journalctl TRACE_KEY=...` finds every
 * line of one trace. Control characters and backslashes in messages and
 * fields are escaped (\n, \xHH, \\): a trace name cannot forge a line.
 */
#ifndef WEFT_LOG_H
#define WEFT_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

enum { WEFT_LOG_ERROR, WEFT_LOG_WARNING, WEFT_LOG_INFO, WEFT_LOG_DEBUG };

/* What a line is about; any field may be NULL (rank < 0: none). The
 * strings are the caller's. */
typedef struct weft_log_ctx {
    const char *trace;   /* trace name as the client gave it */
    const char *key;     /* the trace's spool key */
    int64_t rank;
    const char *peer;    /* "127.0.0.1:5555", "unix:pid 42" */
} weft_log_ctx;

/* Writes one line if level <= threshold. */
void weft_log(int threshold, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with context (ctx may be NULL): journal fields under
 * systemd; the message itself should still name what it is about. */
void weft_logc(int threshold, int level, const weft_log_ctx *ctx,
               const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A rate limit for one cause of log lines (a refusal a peer can repeat
 * at will): at most WEFT_LOG_BURST lines per second; the lines beyond
 * are counted, and the next line let through says how many were left
 * out. Zero-initialise; loop thread (or one owner). */
#define WEFT_LOG_BURST 3
typedef struct weft_log_limit {
    uint64_t second;      /* the second (now_ms / 1000) of `lines` */
    unsigned lines;       /* lines let through in it */
    uint64_t suppressed;  /* left out since the last one let through */
} weft_log_limit;
/* May a line of l's cause go out at now_ms (a monotonic clock in ms)?
 * 1 with *suppressed the number left out before it (to say in the
 * line), or 0 (counted). */
int weft_log_ratelimited(weft_log_limit *l, uint64_t now_ms,
                         uint64_t *suppressed);

/* ---- the pure parts, for tests ---- */

/* Copies in to out (outlen > 0, always terminated) with control
 * characters, DEL and backslashes escaped; bytes >= 0x80 are kept (UTF-8
 * names stay readable). A cut never splits an escape. Returns strlen of
 * out. */
size_t weft_log_escape(char *out, size_t outlen, const char *in);
/* The foreground line for an already escaped msg at time ts (local time,
 * tz offset included), without the newline. Returns strlen of out. */
size_t weft_log_format(char *out, size_t outlen, const struct timespec *ts,
                       int level, const char *msg);

#define WEFT_LOG_MAX_FIELDS 7
/* The journal fields of one message: "MESSAGE=...", "PRIORITY=N",
 * "SYSLOG_IDENTIFIER=weftd", then TRACE, TRACE_KEY, RANK, PEER as ctx
 * has them, each escaped, in buf. */
typedef struct weft_log_fields {
    char buf[4096];
    struct iovec iov[WEFT_LOG_MAX_FIELDS];
    int n;
} weft_log_fields;
/* Fills f for msg (escaped here) and ctx (may be NULL). */
void weft_log_journal_fields(weft_log_fields *f, int level,
                             const weft_log_ctx *ctx, const char *msg);

#endif

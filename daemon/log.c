/* log.c - weftd's log lines (see log.h): a timestamped line on stderr in
 * the foreground, structured fields in the journal under systemd. */
#include "log.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* CODE_FILE/LINE/FUNC would always name vlog below: leave them out. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#define LINE_MAX_BYTES 2048

static const char *const names[] = { "error", "warning", "info", "debug" };
static const int syslog_prio[] = { 3, 4, 6, 7 };

int weft_log_ratelimited(weft_log_limit *l, uint64_t now_ms,
                         uint64_t *suppressed)
{
    uint64_t second = now_ms / 1000;

    if (second != l->second) {
        l->second = second;
        l->lines = 0;
    }
    if (l->lines >= WEFT_LOG_BURST) {
        l->suppressed++;
        return 0;
    }
    l->lines++;
    *suppressed = l->suppressed;
    l->suppressed = 0;
    return 1;
}

size_t weft_log_escape(char *out, size_t outlen, const char *in)
{
    size_t n = 0;

    for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
        char esc[5];
        size_t k;
        switch (*p) {
        case '\n': memcpy(esc, "\\n", 3); break;
        case '\r': memcpy(esc, "\\r", 3); break;
        case '\t': memcpy(esc, "\\t", 3); break;
        case '\\': memcpy(esc, "\\\\", 3); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                snprintf(esc, sizeof esc, "\\x%02x", *p);
            else {
                esc[0] = (char)*p;
                esc[1] = 0;
            }
        }
        k = strlen(esc);
        if (n + k >= outlen)
            break;
        memcpy(out + n, esc, k);
        n += k;
    }
    out[n] = 0;
    return n;
}

size_t weft_log_format(char *out, size_t outlen, const struct timespec *ts,
                       int level, const char *msg)
{
    struct tm tm;
    char when[32], zone[8];
    time_t sec = ts->tv_sec;
    int n;

    localtime_r(&sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    strftime(zone, sizeof zone, "%z", &tm);
    n = snprintf(out, outlen, "%s.%03ld%s weftd: %s: %s", when,
                 (long)(ts->tv_nsec / 1000000), zone, names[level], msg);
    if (n < 0)
        n = 0;
    return (size_t)n < outlen ? (size_t)n : outlen - 1;
}

/* Appends "KEY=escaped value" to f. */
static void add_field(weft_log_fields *f, size_t *used, const char *key,
                      const char *value)
{
    size_t room = sizeof f->buf - *used, k = strlen(key);
    char *p = f->buf + *used;

    if (f->n == WEFT_LOG_MAX_FIELDS || room < k + 2)
        return;
    memcpy(p, key, k);
    p[k] = '=';
    k += 1 + weft_log_escape(p + k + 1, room - k - 1, value);
    f->iov[f->n].iov_base = p;
    f->iov[f->n].iov_len = k;
    f->n++;
    *used += k + 1;
}

void weft_log_journal_fields(weft_log_fields *f, int level,
                             const weft_log_ctx *ctx, const char *msg)
{
    size_t used = 0;
    char num[24];

    f->n = 0;
    add_field(f, &used, "MESSAGE", msg);
    snprintf(num, sizeof num, "%d", syslog_prio[level]);
    add_field(f, &used, "PRIORITY", num);
    add_field(f, &used, "SYSLOG_IDENTIFIER", "weftd");
    if (!ctx)
        return;
    if (ctx->trace)
        add_field(f, &used, "TRACE", ctx->trace);
    if (ctx->key)
        add_field(f, &used, "TRACE_KEY", ctx->key);
    if (ctx->rank >= 0) {
        snprintf(num, sizeof num, "%" PRId64, ctx->rank);
        add_field(f, &used, "RANK", num);
    }
    if (ctx->peer)
        add_field(f, &used, "PEER", ctx->peer);
}

/* Is stderr the journal? JOURNAL_STREAM is "DEV:INODE" of the stream
 * systemd connected; a child of weftd's may inherit the variable with
 * another stderr, so it is compared, not just tested. */
static int stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 ||
        fstat(STDERR_FILENO, &st) != 0)
        return 0;
    return (unsigned long long)st.st_dev == dev &&
           (unsigned long long)st.st_ino == ino;
}

static void vlog(int level, const weft_log_ctx *ctx, const char *fmt,
                 va_list ap)
{
    char raw[LINE_MAX_BYTES], msg[LINE_MAX_BYTES], line[LINE_MAX_BYTES + 64];
    struct timespec ts;

    vsnprintf(raw, sizeof raw, fmt, ap);
    if (stderr_is_journal()) {
        weft_log_fields f;
        weft_log_journal_fields(&f, level, ctx, raw);
        if (sd_journal_sendv(f.iov, f.n) == 0)
            return;
        weft_log_escape(msg, sizeof msg, raw);
        fprintf(stderr, "<%d>%s\n", syslog_prio[level], msg);
        return;
    }
    weft_log_escape(msg, sizeof msg, raw);
    clock_gettime(CLOCK_REALTIME, &ts);
    weft_log_format(line, sizeof line, &ts, level, msg);
    fprintf(stderr, "%s\n", line);
}

void weft_log(int threshold, int level, const char *fmt, ...)
{
    va_list ap;

    if (level > threshold)
        return;
    va_start(ap, fmt);
    vlog(level, NULL, fmt, ap);
    va_end(ap);
}

void weft_logc(int threshold, int level, const weft_log_ctx *ctx,
               const char *fmt, ...)
{
    va_list ap;

    if (level > threshold)
        return;
    va_start(ap, fmt);
    vlog(level, ctx, fmt, ap);
    va_end(ap);
}

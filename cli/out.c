/* out.c - what the weft command's output is made of: terminal-safe
 * text, sizes and times, aligned tables, JSON; and the small parsers of
 * option values (messages and growing strings: msg.c). Allocation
 * failures here exit: a command-line query out of memory has nothing
 * better to do.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "out.h"

/* ---- text --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1 to 4), or 0. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n, i;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Copy of s safe for a terminal: control characters as \n, \t, \r or
 * \xHH (a line feed as is when keep_lf), a backslash doubled, invalid
 * UTF-8 and C1 controls as \xHH. */
static char *escape(const char *s, int keep_lf)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    weft__sbuf b = { 0 };

    while (*p) {
        size_t n = utf8_len(p);
        if (*p == '\\') {
            weft__cli_sb_add(&b, "\\\\", 2);
        } else if (*p == '\n' && keep_lf) {
            weft__cli_sb_add(&b, "\n", 1);
        } else if (*p == '\n') {
            weft__cli_sb_add(&b, "\\n", 2);
        } else if (*p == '\t') {
            weft__cli_sb_add(&b, "\\t", 2);
        } else if (*p == '\r') {
            weft__cli_sb_add(&b, "\\r", 2);
        } else if (n == 0 || *p < 0x20 || *p == 0x7f ||
                   (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
            size_t k = n ? n : 1;
            for (size_t i = 0; i < k; i++)
                weft__cli_sb_printf(&b, "\\x%02x", p[i]);
            p += k;
            continue;
        } else {
            weft__cli_sb_add(&b, (const char *)p, n);
            p += n;
            continue;
        }
        p++;
    }
    return weft__cli_sb_take(&b);
}

char *weft__cli_escape(const char *s)
{
    return escape(s, 0);
}

char *weft__cli_escape_lf(const char *s)
{
    return escape(s, 1);
}

size_t weft__cli_width(const char *s)
{
    size_t w = 0;

    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

char *weft__cli_fmt_time(int64_t t)
{
    char buf[64];
    struct tm tm;
    time_t tt = (time_t)t;

    if (t <= 0 || !localtime_r(&tt, &tm) ||
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        return weft__cli_xstrdup("-");
    return weft__cli_xstrdup(buf);
}

char *weft__cli_fmt_size(uint64_t bytes)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB",
                                         "EiB" };
    char buf[32];
    double v = (double)bytes;
    size_t u = 0;

    if (bytes < 1024) {
        snprintf(buf, sizeof buf, "%" PRIu64 " B", bytes);
        return weft__cli_xstrdup(buf);
    }
    v /= 1024;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return weft__cli_xstrdup(buf);
}

char *weft__cli_fmt_u64(uint64_t v)
{
    char buf[32];

    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return weft__cli_xstrdup(buf);
}

char *weft__cli_fmt_secs(double s)
{
    char buf[64];

    snprintf(buf, sizeof buf, "%.6f", s);
    return weft__cli_xstrdup(buf);
}

char *weft__cli_fmt_duration(int64_t secs)
{
    char buf[64];

    if (secs < 0)
        return weft__cli_xstrdup("-");
    if (secs >= 86400)
        snprintf(buf, sizeof buf, "%" PRId64 "d %02" PRId64 "h %02" PRId64
                 "m %02" PRId64 "s", secs / 86400, secs / 3600 % 24,
                 secs / 60 % 60, secs % 60);
    else if (secs >= 3600)
        snprintf(buf, sizeof buf, "%" PRId64 "h %02" PRId64 "m %02" PRId64
                 "s", secs / 3600, secs / 60 % 60, secs % 60);
    else if (secs >= 60)
        snprintf(buf, sizeof buf, "%" PRId64 "m %02" PRId64 "s", secs / 60,
                 secs % 60);
    else
        snprintf(buf, sizeof buf, "%" PRId64 "s", secs);
    return weft__cli_xstrdup(buf);
}

char *weft__cli_fmt_span(double secs)
{
    char buf[64];

    if (!(secs >= 0))
        return weft__cli_xstrdup("-");
    if (secs >= 59.9995)
        return weft__cli_fmt_duration((int64_t)(secs + 0.5));
    if (secs >= 0.9999995)
        snprintf(buf, sizeof buf, "%.3f s", secs);
    else if (secs >= 0.0009999995)
        snprintf(buf, sizeof buf, "%.3f ms", secs * 1e3);
    else
        snprintf(buf, sizeof buf, "%.3f us", secs * 1e6);
    return weft__cli_xstrdup(buf);
}

char *weft__cli_fmt_ticks(uint64_t t, uint64_t res)
{
    char buf[64];
    uint64_t scale = 1, frac;
    int digits = 0;

    if (!res)
        return weft__cli_xstrdup("-");
    /* the decimals a tick needs: 1000/s has 3, 10^9/s 9, 2.4e9/s 9 */
    while (scale < res && digits < 9) {
        scale *= 10;
        digits++;
    }
    /* (t % res) * scale / res without overflow: t % res < res <= 2^64 */
    frac = (uint64_t)((unsigned __int128)(t % res) * scale / res);
    if (digits)
        snprintf(buf, sizeof buf, "%" PRIu64 ".%0*" PRIu64, t / res, digits,
                 frac);
    else
        snprintf(buf, sizeof buf, "%" PRIu64, t / res);
    return weft__cli_xstrdup(buf);
}

char *weft__cli_archive_of(const char *path)
{
    weft__sbuf b = { 0 };

    if (!path || !*path)
        return NULL;
    weft__cli_sb_add(&b, path, strlen(path));
    weft__cli_sb_add(&b, "/traces.otf2", strlen("/traces.otf2"));
    return weft__cli_sb_take(&b);
}

/* ---- tables ------------------------------------------------------------- */

/* Adds a row of ncols cells, taking ownership of them. */
void weft__cli_table_add(weft__table *t, char **row)
{
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = weft__cli_xrealloc(t->cells,
                                      t->cap * t->ncols * sizeof *t->cells);
    }
    memcpy(t->cells + t->nrows * t->ncols, row, t->ncols * sizeof *row);
    t->nrows++;
}

static void print_cell(FILE *out, const char *s, size_t width, int right,
                       int last)
{
    size_t pad = width - weft__cli_width(s);

    if (right)
        fprintf(out, "%*s", (int)pad, "");
    fputs(s, out);
    if (!right && !last)
        fprintf(out, "%*s", (int)pad, "");
}

void weft__cli_table_print(const weft__table *t, FILE *out)
{
    size_t w[WEFT__TABLE_MAX_COLS];

    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = weft__cli_width(t->heads[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = weft__cli_width(t->cells[r * t->ncols + c]);
            if (cw > w[c])
                w[c] = cw;
        }
    }
    for (size_t c = 0; c < t->ncols; c++) {
        print_cell(out, t->heads[c], w[c], t->right[c], c + 1 == t->ncols);
        fputs(c + 1 < t->ncols ? "  " : "\n", out);
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            print_cell(out, t->cells[r * t->ncols + c], w[c], t->right[c],
                       c + 1 == t->ncols);
            fputs(c + 1 < t->ncols ? "  " : "\n", out);
        }
}

void weft__cli_table_free(weft__table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

/* ---- JSON --------------------------------------------------------------- */

/* A JSON string of s; invalid UTF-8 bytes become U+FFFD. */
json_t *weft__cli_jstr(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    weft__sbuf b = { 0 };
    json_t *j;

    if (!s)
        return json_null();
    j = json_string(s);
    if (j)
        return j;
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0) {
            weft__cli_sb_add(&b, "\xef\xbf\xbd", 3);
            p++;
        } else {
            weft__cli_sb_add(&b, (const char *)p, n);
            p += n;
        }
    }
    j = json_string(b.s ? b.s : "");
    free(b.s);
    return j;
}

json_t *weft__cli_ju64(uint64_t v)
{
    return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* Sets key to value, exiting when out of memory (value NULL). */
void weft__cli_jset(json_t *obj, const char *key, json_t *value)
{
    if (!value || json_object_set_new(obj, key, value) != 0) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
}


/* Prints j indented and takes it. Returns an exit status. */
int weft__cli_print_json(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2));

    json_decref(j);
    if (!s)
        return weft__cli_fail("out of memory");
    puts(s);
    free(s);
    return EXIT_OK;
}

/* Parses a whole decimal number in [min, max]; 0 or -1. */
int weft__cli_parse_int(const char *s, int64_t min, int64_t max,
                        int64_t *out)
{
    char *end;
    long long v;

    if (!*s || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* See out.h. */
int weft__cli_local_time(int y, int mo, int d, int h, int mi, int sec,
                         int64_t *out)
{
    struct tm tm = { 0 };
    time_t t;

    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    t = mktime(&tm);
    if (t == (time_t)-1 || tm.tm_year != y - 1900 || tm.tm_mon != mo - 1 ||
        tm.tm_mday != d || tm.tm_min != mi || tm.tm_sec != sec)
        return -1;
    *out = (int64_t)t;
    return 0;
}

/* Index of word in words[0..n), or -1. */
int weft__cli_word_index(const char *word, const char *const *words,
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(word, words[i]) == 0)
            return (int)i;
    return -1;
}

/* The optimal string alignment distance, row by row of the table: prev2
 * and prev are the two rows above (see out.h). */
size_t weft__cli_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), rows[3][64];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2], *t;

    if (la >= sizeof rows[0] / sizeof rows[0][0] ||
        lb >= sizeof rows[0] / sizeof rows[0][0])
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            /* two neighbours swapped: "lsit" is one edit from "list" */
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

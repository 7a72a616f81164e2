/* export_json.c - the streaming writer of `weft export`: JSON text is
 * appended to a buffer and written out (plain, or gzip through zlib)
 * whenever 256 KiB have gathered, so memory stays bounded whatever the
 * trace's size. Strings go through jansson (after invalid UTF-8 became
 * U+FFFD: weft__cli_jstr), each string of the archive once.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#define FLUSH_AT (256u * 1024u)

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int weft__xout_open(weft__xout *o, const char *path, const weft__arc *a)
{
    memset(o, 0, sizeof *o);
    o->a = a;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    if (ends_with(path, ".gz")) {
        /* Level 1: JSON still shrinks about 8-fold, several times faster
         * than the default level. */
        o->gz = gzopen(path, "wb1");
        if (!o->gz && !errno)
            errno = ENOMEM;
        return o->gz ? 0 : -1;
    }
    o->f = fopen(path, "w");
    return o->f ? 0 : -1;
}

void weft__xout_flush(weft__xout *o, int force)
{
    weft__sbuf *b = &o->b;

    if (!b->len || (!force && b->len < FLUSH_AT))
        return;
    if (!o->err && o->gz) {
        if (gzwrite(o->gz, b->s, (unsigned)b->len) != (int)b->len) {
            int e;
            gzerror(o->gz, &e);
            o->err = e == Z_ERRNO && errno ? errno : EIO;
        }
    } else if (!o->err && fwrite(b->s, 1, b->len, o->f) != b->len) {
        o->err = errno ? errno : EIO;
    }
    b->len = 0;
}

int weft__xout_close(weft__xout *o)
{
    int rc;

    weft__xout_flush(o, 1);
    if (o->gz) {
        rc = gzclose(o->gz);
        if (rc != Z_OK && !o->err)
            o->err = rc == Z_ERRNO && errno ? errno : EIO;
    } else if (o->f && o->f != stdout) {
        if (fclose(o->f) != 0 && !o->err)
            o->err = errno ? errno : EIO;
    } else if (o->f && fflush(o->f) != 0 && !o->err) {
        o->err = errno ? errno : EIO;
    }
    for (size_t i = 0; i < o->nesc; i++)
        free(o->esc[i]);
    free(o->esc);
    free(o->b.s);
    rc = o->err;
    memset(o, 0, sizeof *o);
    errno = rc;
    return rc ? -1 : 0;
}

/* s as JSON text (malloc'd); exits when out of memory, as out.c does. */
static char *json_text(const char *s)
{
    json_t *j = weft__cli_jstr(s);
    char *t = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

    json_decref(j);
    if (!t) {
        fputs("weft: out of memory\n", stderr);
        exit(EXIT_FAIL);
    }
    return t;
}

void weft__xj_str(weft__sbuf *b, const char *s)
{
    char *t = json_text(s);

    weft__cli_sb_add(b, t, strlen(t));
    free(t);
}

void weft__xj_ascii(weft__sbuf *b, const char *s)
{
    weft__xj_lit(b, "\"");
    weft__cli_sb_add(b, s, strlen(s));
    weft__xj_lit(b, "\"");
}

void weft__xj_sref(weft__xout *o, weft__sbuf *b, OTF2_StringRef s)
{
    const weft__arc *a = o->a;

    if (s >= a->nstrings || !a->strings[s]) {
        weft__xj_lit(b, "\"\"");
        return;
    }
    if (s >= o->nesc) {
        size_t n = a->nstrings;
        o->esc = weft__cli_xrealloc(o->esc, n * sizeof *o->esc);
        memset(o->esc + o->nesc, 0, (n - o->nesc) * sizeof *o->esc);
        o->nesc = n;
    }
    if (!o->esc[s])
        o->esc[s] = json_text(a->strings[s]);
    weft__cli_sb_add(b, o->esc[s], strlen(o->esc[s]));
}

/* Decimal digits of v, at the end of buf[24]; returns the first. */
static char *digits(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

void weft__xj_u64(weft__sbuf *b, uint64_t v)
{
    char buf[24];
    char *p = digits(buf + sizeof buf, v);

    weft__cli_sb_add(b, p, (size_t)(buf + sizeof buf - p));
}

void weft__xj_i64(weft__sbuf *b, int64_t v)
{
    if (v < 0) {
        weft__xj_lit(b, "-");
        weft__xj_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        weft__xj_u64(b, (uint64_t)v);
    }
}

void weft__xj_double(weft__sbuf *b, double v)
{
    char buf[32];
    int n;

    if (!isfinite(v)) {
        weft__xj_lit(b, "null");
        return;
    }
    n = snprintf(buf, sizeof buf, "%.17g", v);
    weft__cli_sb_add(b, buf, (size_t)n);
}

/* Integer arithmetic (128 bits): ticks of a 2.4 GHz TSC and ns alike
 * come out exact to the nanosecond, rounded to nearest. */
void weft__xj_us(weft__sbuf *b, uint64_t t, uint64_t zero, uint64_t res)
{
    uint64_t d = t >= zero ? t - zero : zero - t;
    unsigned __int128 ns;
    uint64_t whole, frac;
    char buf[32], *p;

    if (!res)
        res = 1000000000u;
    ns = ((unsigned __int128)d * 1000000000u + res / 2) / res;
    whole = (uint64_t)(ns / 1000);
    frac = (uint64_t)(ns % 1000);
    p = buf + sizeof buf;
    *--p = (char)('0' + frac % 10);
    *--p = (char)('0' + frac / 10 % 10);
    *--p = (char)('0' + frac / 100);
    *--p = '.';
    p = digits(p, whole);
    if (t < zero && ns)
        *--p = '-';
    weft__cli_sb_add(b, p, (size_t)(buf + sizeof buf - p));
}

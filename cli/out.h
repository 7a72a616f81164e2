/* out.h - the weft command's output helpers (out.c): messages, growing
 * strings, terminal-safe text, sizes and times, aligned tables, JSON, and
 * the parsers of small option values. Every function that allocates
 * exits the program when out of memory, so none returns NULL for it.
 */
#ifndef WEFT_CLI_OUT_H
#define WEFT_CLI_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* ---- messages ----------------------------------------------------------- */

/* "weft CMD: MESSAGE" (cmd NULL: "weft: MESSAGE") on stderr; returns
 * EXIT_FAIL. weft__cli_fail is the one without a command name. */
__attribute__((format(printf, 2, 3)))
int weft__cli_error(const char *cmd, const char *fmt, ...);
#define weft__cli_fail(...) weft__cli_error(NULL, __VA_ARGS__)
/* "weft CMD: MESSAGE" (cmd NULL: "weft: MESSAGE") and where to find help;
 * returns EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
int weft__cli_usage(const char *cmd, const char *fmt, ...);

/* ---- strings ------------------------------------------------------------ */

void *weft__cli_xrealloc(void *p, size_t n);
char *weft__cli_xstrdup(const char *s);

/* A growing string; s is NULL until something is added. */
typedef struct weft__sbuf {
    char *s;
    size_t len, cap;
} weft__sbuf;

void weft__cli_sb_add(weft__sbuf *b, const char *s, size_t n);
__attribute__((format(printf, 2, 3)))
void weft__cli_sb_printf(weft__sbuf *b, const char *fmt, ...);
/* The string (malloc'd, "" when empty); b is empty again. */
char *weft__cli_sb_take(weft__sbuf *b);

/* A malloc'd copy of s (NULL: "") safe for a terminal: control characters
 * as \n, \t, \r or \xHH, a backslash doubled, invalid UTF-8 and C1
 * controls as \xHH. */
char *weft__cli_escape(const char *s);
/* The same but a line feed stays as it is: for formats that quote it
 * (CSV). Every other control character (ESC, BEL, CR ...) is escaped. */
char *weft__cli_escape_lf(const char *s);
/* Columns s takes on a terminal (code points; wide characters count 1). */
size_t weft__cli_width(const char *s);

/* ---- figures (each malloc'd) -------------------------------------------- */

/* Local "YYYY-MM-DD HH:MM:SS", "-" for t <= 0. */
char *weft__cli_fmt_time(int64_t t);
/* "512 B", "1.5 KiB", ... */
char *weft__cli_fmt_size(uint64_t bytes);
char *weft__cli_fmt_u64(uint64_t v);
/* Seconds with 6 decimals: "0.001250". */
char *weft__cli_fmt_secs(double s);
/* "1d 02h 03m 04s", "3m 05s", "7s"; "-" below 0. */
char *weft__cli_fmt_duration(int64_t secs);
/* A span of time, milliseconds kept below a minute: "183.000 us",
 * "14.183 ms", "2.350 s", then as fmt_duration: "3m 05s"; "-" below 0. */
char *weft__cli_fmt_span(double secs);
/* Clock ticks t at res ticks a second as seconds, exact, with as many
 * decimals as the resolution has (up to 9): 1234567 at 1000 is
 * "1234.567"; "-" when res is 0. */
char *weft__cli_fmt_ticks(uint64_t t, uint64_t res);
/* PATH/traces.otf2, or NULL for an empty or NULL path. */
char *weft__cli_archive_of(const char *path);

/* ---- tables ------------------------------------------------------------- */

#define WEFT__TABLE_MAX_COLS 9

/* Columns separated by two spaces under a header line; numbers right-
 * aligned. Set ncols, heads and right; cells are added by table_add. */
typedef struct weft__table {
    size_t ncols;
    const char *heads[WEFT__TABLE_MAX_COLS];
    int right[WEFT__TABLE_MAX_COLS]; /* right-aligned (numbers) */
    char **cells;                    /* nrows * ncols, owned */
    size_t nrows, cap;
} weft__table;

/* Adds a row of t->ncols cells, taking ownership of them. */
void weft__cli_table_add(weft__table *t, char **row);
void weft__cli_table_print(const weft__table *t, FILE *out);
void weft__cli_table_free(weft__table *t);

/* ---- JSON --------------------------------------------------------------- */

/* A new JSON string of s (invalid UTF-8 bytes become U+FFFD), json null
 * for NULL; NULL only when out of memory. */
json_t *weft__cli_jstr(const char *s);
/* An integer, or a real above INT64_MAX. */
json_t *weft__cli_ju64(uint64_t v);
/* Sets key to value (taking it), exiting when out of memory (value NULL). */
void weft__cli_jset(json_t *obj, const char *key, json_t *value);
/* Prints j indented on stdout and takes it. Returns an exit status. */
int weft__cli_print_json(json_t *j);

/* ---- option values ------------------------------------------------------ */

/* Parses a whole decimal number in [min, max]; 0 or -1. */
int weft__cli_parse_int(const char *s, int64_t min, int64_t max,
                        int64_t *out);
/* Unix seconds of a local time from broken-down fields, checking they
 * name a real moment (mktime would roll 2026-02-30 over to March); 0 or
 * -1. */
int weft__cli_local_time(int y, int mo, int d, int h, int mi, int sec,
                         int64_t *out);
/* Index of word in words[0..n), or -1. */
int weft__cli_word_index(const char *word, const char *const *words,
                         size_t n);
/* The number of single-character insertions, deletions, substitutions
 * and swaps of two neighbours that make a into b (optimal string
 * alignment: "lsit" is 1 from "list"); words of 64 bytes or more count as
 * far from everything (SIZE_MAX). */
size_t weft__cli_edit_distance(const char *a, const char *b);
#define WEFT__WORD_INDEX(word, words) \
    weft__cli_word_index(word, words, sizeof words / sizeof words[0])

#endif

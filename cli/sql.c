/* sql.c - weft sql: one read-only SQL query on the catalog, printed as an
 * aligned table, CSV or JSON.
 *
 * DESIGN: the user's SQL text runs against the same file weftd writes, so
 * four independent locks keep it from changing anything:
 *   1. the file is opened SQLITE_OPEN_READONLY (never created);
 *   2. extension loading is off, SQLITE_DBCONFIG_DEFENSIVE on,
 *      PRAGMA query_only = ON;
 *   3. an authorizer allows only SELECT, reading columns, recursive CTEs
 *      and functions (minus load_extension and friends). That refuses the
 *      table-valued pragmas too (pragma_table_info(...) ...): the schema
 *      is readable as SELECT sql FROM sqlite_schema;
 *   4. the text must be exactly one statement, and SQLite must call it
 *      read-only (sqlite3_stmt_readonly).
 * A refusal names what was refused and exits 1, leaving the file as it
 * was. Reads wait for weftd's write transactions through a busy timeout
 * (WAL mode: a reader normally never waits at all).
 *
 * Formats (decided here, documented in weft(1) and the README):
 *   table (the default, also when stdout is not a terminal, so scripts see
 *         what people see): a header line, columns separated by two
 *         spaces, numbers right-aligned (and the header of a column of
 *         numbers); NULL is an empty cell; text goes through
 *         weft__cli_escape (control characters visible).
 *   csv:  RFC 4180 quoting (a field with '"', ',' or LF is quoted,
 *         quotes doubled), a header line, lines end in LF; NULL is an
 *         empty field, an empty string is "". Text goes through
 *         weft__cli_escape_lf: control characters other than LF (CR,
 *         ESC, BEL, C1) visible as in the table, a backslash doubled.
 *   json: an array of objects, one per row, keyed by column name (a
 *         repeated name gets ":2", ":3", ...); integers and reals are
 *         numbers (a non-finite real is null), NULL is null, text is
 *         verbatim (invalid UTF-8 as U+FFFD). Streamed, one row a line.
 * BLOBs are lowercase hexadecimal text in every format.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli.h"
#include "frame.h"

#define SQL_BUSY_TIMEOUT_MS 10000

/* What the authorizer saw; owned by cmd_sql's frame. */
typedef struct sql_guard {
    char denied[256];        /* what was refused, "" if nothing */
    int denied_internal;     /* denied is a write to a sqlite_* table */
} sql_guard;

typedef struct sql_out {
    char **cells;            /* table: nrows * ncols, owned */
    unsigned char *num;      /* table: 1 where a cell is a number */
    size_t ncols, nrows, cap;
    char **names;            /* json: unique keys, owned */
} sql_out;

/* ---- the authorizer ----------------------------------------------------- */

/* Functions refused even though calling a function is reading: they reach
 * outside the database (the last three exist only in some builds). */
static const char *const denied_functions[] = {
    "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer",
};

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (sqlite3_stricmp(s, list[i]) == 0)
            return 1;
    return 0;
}

/* Words for an action code, for the refusal message. */
static const char *action_name(int action)
{
    switch (action) {
    case SQLITE_INSERT: return "INSERT into";
    case SQLITE_UPDATE: return "UPDATE of";
    case SQLITE_DELETE: return "DELETE from";
    case SQLITE_CREATE_INDEX: case SQLITE_CREATE_TEMP_INDEX:
        return "CREATE INDEX";
    case SQLITE_CREATE_TABLE: case SQLITE_CREATE_TEMP_TABLE:
        return "CREATE TABLE";
    case SQLITE_CREATE_TRIGGER: case SQLITE_CREATE_TEMP_TRIGGER:
        return "CREATE TRIGGER";
    case SQLITE_CREATE_VIEW: case SQLITE_CREATE_TEMP_VIEW:
        return "CREATE VIEW";
    case SQLITE_CREATE_VTABLE: return "CREATE VIRTUAL TABLE";
    case SQLITE_DROP_INDEX: case SQLITE_DROP_TEMP_INDEX: return "DROP INDEX";
    case SQLITE_DROP_TABLE: case SQLITE_DROP_TEMP_TABLE: return "DROP TABLE";
    case SQLITE_DROP_TRIGGER: case SQLITE_DROP_TEMP_TRIGGER:
        return "DROP TRIGGER";
    case SQLITE_DROP_VIEW: case SQLITE_DROP_TEMP_VIEW: return "DROP VIEW";
    case SQLITE_DROP_VTABLE: return "DROP VIRTUAL TABLE";
    case SQLITE_ALTER_TABLE: return "ALTER TABLE";
    case SQLITE_PRAGMA: return "PRAGMA";
    case SQLITE_TRANSACTION: return "transaction";
    case SQLITE_SAVEPOINT: return "SAVEPOINT";
    case SQLITE_ATTACH: return "ATTACH";
    case SQLITE_DETACH: return "DETACH";
    case SQLITE_REINDEX: return "REINDEX";
    case SQLITE_ANALYZE: return "ANALYZE";
    case SQLITE_FUNCTION: return "function";
    default: return "statement";
    }
}

/* The object an action is about, for the message ("" if none): the
 * function or altered table in a2, else the table, pragma or file in a1. */
static const char *action_object(int action, const char *a1, const char *a2)
{
    if (action == SQLITE_FUNCTION || action == SQLITE_ALTER_TABLE)
        return a2 ? a2 : "";
    return a1 ? a1 : "";
}

/* 1 for a write to SQLite's own tables: DDL and ANALYZE do these first,
 * so a later, more telling refusal replaces it in the message. */
static int internal_write(int action, const char *table)
{
    return (action == SQLITE_INSERT || action == SQLITE_UPDATE ||
            action == SQLITE_DELETE) &&
           table && strncmp(table, "sqlite_", 7) == 0;
}

static int authorize(void *arg, int action, const char *a1, const char *a2,
                     const char *db, const char *trigger)
{
    sql_guard *g = arg;
    const char *what;
    char *esc;

    (void)db;
    (void)trigger;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_FUNCTION:
        if (!in_list(a2, denied_functions,
                     sizeof denied_functions / sizeof *denied_functions))
            return SQLITE_OK;
        break;
    default:
        break;
    }
    if (g->denied[0] && !g->denied_internal)
        return SQLITE_DENY;
    g->denied_internal = internal_write(action, a1);
    what = action_name(action);
    esc = weft__cli_escape(action_object(action, a1, a2));
    if (!esc)
        snprintf(g->denied, sizeof g->denied, "%s", what);
    else if (g->denied_internal)
        snprintf(g->denied, sizeof g->denied, "changing the schema (%s %s)",
                 what, esc);
    else if (action == SQLITE_FUNCTION)
        snprintf(g->denied, sizeof g->denied, "function %s()", esc);
    else if (action == SQLITE_PRAGMA && a2) {
        char *v = weft__cli_escape(a2);
        snprintf(g->denied, sizeof g->denied, "PRAGMA %s = %s", esc,
                 v ? v : "...");
        free(v);
    }
    else
        snprintf(g->denied, sizeof g->denied, "%s%s%s", what,
                 *esc ? " " : "", esc);
    free(esc);
    return SQLITE_DENY;
}

/* ---- opening ------------------------------------------------------------ */

/* Opens path read-only with every lock of the DESIGN note but the
 * authorizer; a catalog that is weftd's alone as weftd's image of this
 * user's rows (ask.c), into c->image. Returns the handle, or NULL after
 * saying why. */
static sqlite3 *sql_open(cli *c)
{
    const char *path = c->catalog_path;
    sqlite3 *db = NULL;
    struct stat sb;
    char *esc;
    int off = 0, on = 1;

    if (weft__cli_asks(c, R_OK)) {
        if (weft__cli_ask(WEFT__QUERY__KIND__CATALOG, NULL, 0, !c->node, &c->image,
                          &c->image_len) != EXIT_OK)
            return NULL;
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) !=
                SQLITE_OK ||
            weft_catalog_load_image(db, c->image, c->image_len) !=
                SQLITE_OK) {
            weft__cli_error("sql", "weftd's answer is not a catalog: %s",
                            db ? sqlite3_errmsg(db) : "out of memory");
            goto fail;
        }
        goto lock;
    }
    if (stat(path, &sb) != 0) {
        esc = weft__cli_escape(path);
        weft__cli_error("sql", "no catalog at %s (has weftd run with this "
                          "configuration?)", esc ? esc : path);
        free(esc);
        return NULL;
    }
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        esc = weft__cli_escape(path);
        weft__cli_error("sql", "cannot open catalog %s: %s", esc ? esc : path,
                          db ? sqlite3_errmsg(db) : "out of memory");
        free(esc);
        goto fail;
    }
lock:
    if (sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, off,
                          NULL) != SQLITE_OK ||
        sqlite3_enable_load_extension(db, 0) != SQLITE_OK ||
        sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, on, NULL)
            != SQLITE_OK ||
        sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, off, NULL)
            != SQLITE_OK ||
        sqlite3_busy_timeout(db, SQL_BUSY_TIMEOUT_MS) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA query_only = ON", NULL, NULL, NULL)
            != SQLITE_OK) {
        weft__cli_error("sql", "catalog %s: cannot make the connection "
                          "read-only: %s", path, sqlite3_errmsg(db));
        goto fail;
    }
    return db;
fail:
    sqlite3_close(db);
    return NULL;
}

/* Prepares the one statement of query into *st. Returns EXIT_OK, or
 * EXIT_FAIL after saying why (a refusal, more than one statement, or
 * SQLite's message for a bad query). */
static int sql_prepare(sqlite3 *db, sql_guard *g, const char *path,
                       const char *query, sqlite3_stmt **st)
{
    sqlite3_stmt *extra = NULL;
    const char *tail = NULL, *next = NULL;
    int rc;

    *st = NULL;
    rc = sqlite3_prepare_v2(db, query, -1, st, &tail);
    if (rc != SQLITE_OK) {
        /* A table-valued pragma makes its table as SQLite's own schema
         * write (the authorizer's first sight of it): say what the user
         * wrote rather than what SQLite does for it. */
        if (g->denied_internal && strcasestr(query, "pragma_"))
            return weft__cli_error("sql", "only read-only queries are "
                                     "allowed: the pragma_*() table-valued "
                                     "functions (read the schema with "
                                     "SELECT sql FROM sqlite_schema)");
        if (g->denied[0])
            return weft__cli_error("sql", "only read-only queries are "
                                     "allowed: %s", g->denied);
        if ((rc & 0xff) == SQLITE_NOTADB)
            return weft__cli_error("sql", "catalog %s: %s", path,
                                     sqlite3_errmsg(db));
        return weft__cli_error("sql", "%s", sqlite3_errmsg(db));
    }
    if (!*st)
        return weft__cli_error("sql", "the query is empty (give one SELECT "
                                 "statement)");
    /* Whatever follows must be blanks, comments and semicolons only. */
    while (tail && *tail) {
        rc = sqlite3_prepare_v2(db, tail, -1, &extra, &next);
        sqlite3_finalize(extra);
        if (rc != SQLITE_OK || extra) {
            sqlite3_finalize(*st);
            *st = NULL;
            return weft__cli_error("sql", "only one statement is allowed; "
                                     "found more after the first ';'");
        }
        if (next == tail)
            break;
        tail = next;
    }
    if (!sqlite3_stmt_readonly(*st)) {
        sqlite3_finalize(*st);
        *st = NULL;
        return weft__cli_error("sql", "only read-only queries are allowed: %s",
                                 g->denied[0] ? g->denied
                                              : "the statement writes");
    }
    return EXIT_OK;
}

/* ---- values ------------------------------------------------------------- */

static char *hex_of(const void *p, int n)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = p;
    char *s = weft__cli_xrealloc(NULL, (size_t)n * 2 + 1);

    for (int i = 0; i < n; i++) {
        s[2 * i] = digits[b[i] >> 4];
        s[2 * i + 1] = digits[b[i] & 15];
    }
    s[2 * (size_t)n] = 0;
    return s;
}

/* Column i of the current row as text (malloc'd; NULL for SQL NULL):
 * numbers as SQLite renders them, BLOBs as hex, text verbatim. */
static char *cell_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t;

    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        return NULL;
    case SQLITE_BLOB: {
        const void *b = sqlite3_column_blob(st, i);
        return hex_of(b, b ? sqlite3_column_bytes(st, i) : 0);
    }
    default:
        t = sqlite3_column_text(st, i);
        if (!t) {
            weft__cli_error("sql", "out of memory");
            exit(EXIT_FAIL);
        }
        return weft__cli_xstrdup((const char *)t);
    }
}

static int is_number(sqlite3_stmt *st, int i)
{
    int t = sqlite3_column_type(st, i);

    return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

/* ---- table -------------------------------------------------------------- */

/* Makes room for one more row of cells. */
static void out_grow(sql_out *o)
{
    if ((o->nrows + 1) * o->ncols <= o->cap)
        return;
    o->cap = o->cap ? o->cap * 2 : 64 * o->ncols;
    o->cells = realloc(o->cells, o->cap * sizeof *o->cells);
    o->num = realloc(o->num, o->cap);
    if (!o->cells || !o->num) {
        weft__cli_error("sql", "out of memory");
        exit(EXIT_FAIL);
    }
}

static void table_row(sql_out *o, sqlite3_stmt *st)
{
    size_t base;

    out_grow(o);
    base = o->nrows * o->ncols;
    for (size_t i = 0; i < o->ncols; i++) {
        char *t = cell_text(st, (int)i);
        char *e = weft__cli_escape(t ? t : "");
        if (!e) {
            weft__cli_error("sql", "out of memory");
            exit(EXIT_FAIL);
        }
        o->num[base + i] = (unsigned char)is_number(st, (int)i);
        o->cells[base + i] = e;
        free(t);
    }
    o->nrows++;
}

static void put_cell(const char *s, size_t width, int right, int last)
{
    size_t w = weft__cli_width(s), pad = width > w ? width - w : 0;

    if (right)
        printf("%*s", (int)pad, "");
    fputs(s, stdout);
    if (!right && !last)
        printf("%*s", (int)pad, "");
    fputs(last ? "\n" : "  ", stdout);
}

/* Widths of the columns, and whether each is numeric (every cell that is
 * not NULL is a number, and there is one): its header is right-aligned
 * over the numbers, as in out.c's tables. */
static void table_print(const sql_out *o, char **heads)
{
    size_t *w = weft__cli_xrealloc(NULL, o->ncols * sizeof *w);
    unsigned char *numeric = weft__cli_xrealloc(NULL, o->ncols);

    for (size_t c = 0; c < o->ncols; c++) {
        int nums = 0, others = 0;
        w[c] = weft__cli_width(heads[c]);
        for (size_t r = 0; r < o->nrows; r++) {
            const char *cell = o->cells[r * o->ncols + c];
            size_t cw = weft__cli_width(cell);
            if (cw > w[c])
                w[c] = cw;
            if (o->num[r * o->ncols + c])
                nums++;
            else if (*cell)
                others++;
        }
        numeric[c] = nums > 0 && others == 0;
    }
    for (size_t c = 0; c < o->ncols; c++)
        put_cell(heads[c], w[c], numeric[c], c + 1 == o->ncols);
    for (size_t r = 0; r < o->nrows; r++)
        for (size_t c = 0; c < o->ncols; c++)
            put_cell(o->cells[r * o->ncols + c], w[c],
                     o->num[r * o->ncols + c], c + 1 == o->ncols);
    free(numeric);
    free(w);
}

/* ---- CSV ---------------------------------------------------------------- */

/* A field's text goes through weft__cli_escape_lf first: others' names
 * and command lines reach root's terminal through a CSV as well (#30). */
static void csv_field(const char *text, int is_null, int last)
{
    char *s = is_null ? NULL : weft__cli_escape_lf(text);

    if (is_null) {
        /* nothing: an empty field */
    } else if (!*s || strpbrk(s, "\",\n")) {
        putchar('"');
        for (const char *p = s; *p; p++) {
            if (*p == '"')
                putchar('"');
            putchar(*p);
        }
        putchar('"');
    } else {
        fputs(s, stdout);
    }
    free(s);
    putchar(last ? '\n' : ',');
}

static void csv_row(sqlite3_stmt *st, int ncols)
{
    for (int i = 0; i < ncols; i++) {
        char *t = cell_text(st, i);
        csv_field(t ? t : "", t == NULL, i + 1 == ncols);
        free(t);
    }
}

/* ---- JSON --------------------------------------------------------------- */

/* The JSON keys: column names, a repeated one suffixed ":N". */
static char **json_names(sqlite3_stmt *st, int ncols)
{
    char **names = weft__cli_xrealloc(NULL, (size_t)ncols * sizeof *names);

    for (int i = 0; i < ncols; i++) {
        const char *n = sqlite3_column_name(st, i);
        size_t len;
        int dup = 1;

        n = n ? n : "";
        len = strlen(n) + 16;
        names[i] = weft__cli_xrealloc(NULL, len);
        snprintf(names[i], len, "%s", n);
        for (int j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0) {
                snprintf(names[i], len, "%s:%d", n, ++dup);
                j = -1;     /* "a:2" may be taken too: check again */
            }
    }
    return names;
}

static json_t *json_value(sqlite3_stmt *st, int i)
{
    double d;
    char *t;
    json_t *j;

    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        return json_null();
    case SQLITE_INTEGER:
        return json_integer((json_int_t)sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
        d = sqlite3_column_double(st, i);
        return isfinite(d) ? json_real(d) : json_null();
    default:
        t = cell_text(st, i);
        j = weft__cli_jstr(t);
        free(t);
        return j;
    }
}

/* Prints one row object; returns 0, or -1 when out of memory. */
static int json_row(sqlite3_stmt *st, char **names, int ncols, int first)
{
    json_t *o = json_object();
    char *s = NULL;

    if (!o)
        return -1;
    for (int i = 0; i < ncols; i++) {
        json_t *key = weft__cli_jstr(names[i]);
        json_t *v = json_value(st, i);
        if (!key || !v || json_object_set_new(o, json_string_value(key), v)) {
            json_decref(key);
            json_decref(o);
            return -1;
        }
        json_decref(key);
    }
    s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!s)
        return -1;
    printf("%s%s", first ? "[\n" : ",\n", s);
    free(s);
    return 0;
}

/* ---- the command -------------------------------------------------------- */

enum sql_format { FMT_TABLE, FMT_CSV, FMT_JSON };

static int run(sqlite3 *db, sql_guard *g, sqlite3_stmt *st,
               enum sql_format fmt, sql_out *o)
{
    int ncols = sqlite3_column_count(st), rc, nrows = 0;
    char **heads = weft__cli_xrealloc(NULL, (size_t)(ncols ? ncols : 1) *
                                            sizeof *heads);
    int status = EXIT_FAIL;

    o->ncols = (size_t)ncols;
    for (int i = 0; i < ncols; i++) {
        const char *n = sqlite3_column_name(st, i);
        heads[i] = fmt == FMT_TABLE ? weft__cli_escape(n ? n : "")
                                    : weft__cli_xstrdup(n ? n : "");
        if (!heads[i]) {
            weft__cli_error("sql", "out of memory");
            exit(EXIT_FAIL);
        }
    }
    if (fmt == FMT_JSON)
        o->names = json_names(st, ncols);
    if (fmt == FMT_CSV)
        for (int i = 0; i < ncols; i++)
            csv_field(heads[i], 0, i + 1 == ncols);
    for (;;) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
            break;
        if (fmt == FMT_TABLE)
            table_row(o, st);
        else if (fmt == FMT_CSV)
            csv_row(st, ncols);
        else if (json_row(st, o->names, ncols, nrows == 0) < 0) {
            weft__cli_error("sql", "out of memory");
            goto out;
        }
        nrows++;
    }
    if (rc != SQLITE_DONE) {
        if (g->denied[0])
            weft__cli_error("sql", "only read-only queries are allowed: %s",
                              g->denied);
        else
            weft__cli_error("sql", "%s", sqlite3_errmsg(db));
        goto out;
    }
    if (fmt == FMT_TABLE && ncols > 0)
        table_print(o, heads);
    if (fmt == FMT_JSON)
        fputs(nrows ? "\n]\n" : "[]\n", stdout);
    status = EXIT_OK;
out:
    for (int i = 0; i < ncols; i++) {
        free(heads[i]);
        if (o->names)
            free(o->names[i]);
    }
    free(o->names);
    o->names = NULL;
    free(heads);
    return status;
}

/* weft sql: see the DESIGN note above. Returns an exit status. */
int weft__cmd_sql(cli *c)
{
    enum sql_format fmt = FMT_TABLE;
    sql_guard guard = { 0 };
    sql_out out = { 0 };
    sqlite3_stmt *st = NULL;
    sqlite3 *db = NULL;
    int status;

    if (c->json && c->format)
        return weft__cli_usage("sql", "--%s and --json exclude each other",
                               c->format);
    if (c->json)
        fmt = FMT_JSON;
    else if (c->format && strcmp(c->format, "csv") == 0)
        fmt = FMT_CSV;
    db = sql_open(c);
    if (!db)
        return EXIT_FAIL;
    sqlite3_set_authorizer(db, authorize, &guard);
    status = sql_prepare(db, &guard, c->catalog_path, c->args[0], &st);
    if (status == EXIT_OK)
        status = run(db, &guard, st, fmt, &out);
    for (size_t i = 0; i < out.nrows * out.ncols; i++)
        free(out.cells[i]);
    free(out.cells);
    free(out.num);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return status;
}

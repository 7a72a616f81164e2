/* catalog_image.c - one user's part of the catalog as a database of its
 * own, in memory (see catalog.h): what weftd answers a user's `weft`
 * command, which cannot read the catalog itself (daemon/ask/ask.c), and how
 * that command opens it.
 *
 * The image has the catalog's tables and indexes, created from the
 * catalog's own schema (so it is always the same version), the traces
 * rows of one uid and the rows of every table that refer to them by
 * trace_id. A table without trace_id is left empty: nothing reaches a
 * user that is not theirs by construction.
 */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "catalog_internal.h"
#include "weft_errors.h"

/* "file:PATH?mode=ro" with PATH percent-encoded (every byte but
 * unreserved characters and '/'), or NULL. sqlite3_free it. */
static char *ro_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = sqlite3_malloc64(3 * n + 16), *p = u;

    if (!u)
        return NULL;
    p += sprintf(p, "file:");
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if (isalnum(*s) || strchr("/-._~", *s))
            *p++ = (char)*s;
        else
            p += sprintf(p, "%%%02X", *s);
    }
    strcpy(p, "?mode=ro");
    return u;
}

static int img_err(char **errmsg, sqlite3 *db, const char *path,
                   const char *what)
{
    if (errmsg && asprintf(errmsg, "catalog %s: %s: %s", path, what,
                           db ? sqlite3_errmsg(db) : "out of memory") < 0)
        *errmsg = NULL;
    return WEFT_EDB;
}

static int exec_free(sqlite3 *db, char *sql)
{
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;

    sqlite3_free(sql);
    return rc;
}

/* Has table src.name a trace_id column? */
static int has_trace_id(sqlite3 *db, const char *name)
{
    char *sql = sqlite3_mprintf("SELECT 1 FROM pragma_table_info(%Q, 'src') "
                                "WHERE name = 'trace_id'", name);
    sqlite3_stmt *st = NULL;
    int yes = 0;

    if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
        yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    sqlite3_free(sql);
    return yes;
}

/* Copies src's schema and the rows of uid (every row when all) into main.
 * Inside one transaction: the rows are those of one moment. */
static int copy_rows(sqlite3 *db, int all, uint32_t uid, const char **what)
{
    sqlite3_stmt *st = NULL;
    int rc;

    *what = "reading the schema";
    rc = sqlite3_prepare_v2(db, "SELECT type, name, sql FROM src.sqlite_schema"
                            " WHERE sql IS NOT NULL AND name NOT LIKE "
                            "'sqlite_%' ORDER BY type = 'index', rowid",
                            -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *sql = (const char *)sqlite3_column_text(st, 2);

        *what = "creating the schema";
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        if (rc != SQLITE_OK || strcmp(type, "table") != 0)
            continue;
        *what = "copying rows";
        if (strcmp(name, "traces") == 0)
            rc = exec_free(db, sqlite3_mprintf(
                "INSERT INTO main.traces SELECT * FROM src.traces "
                "WHERE %d OR uid = %u;"
                /* the order of their own rows, not a count of others' */
                "UPDATE main.traces SET seq = r.n FROM (SELECT id, "
                "row_number() OVER (ORDER BY seq) AS n FROM main.traces) "
                "AS r WHERE NOT %d AND r.id = main.traces.id", all, uid,
                all));
        else if (has_trace_id(db, name))
            rc = exec_free(db, sqlite3_mprintf(
                "INSERT INTO main.\"%w\" SELECT * FROM src.\"%w\" WHERE "
                "trace_id IN (SELECT id FROM main.traces)", name, name));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return rc == SQLITE_ROW ? SQLITE_ERROR : rc;
    *what = "copying the schema version";
    rc = sqlite3_prepare_v2(db, "PRAGMA src.user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        rc = exec_free(db, sqlite3_mprintf("PRAGMA main.user_version = %lld",
                                           sqlite3_column_int64(st, 0)));
    sqlite3_finalize(st);
    return rc;
}

int weft_catalog_image(const char *path, int all, uint32_t uid,
                       unsigned char **bytes, size_t *len, char **errmsg)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    const char *what = "opening an image in memory";
    char *uri = NULL;
    sqlite3_int64 size = 0;
    int rc;

    assert(path && bytes && len);
    *bytes = NULL;
    *len = 0;
    if (errmsg)
        *errmsg = NULL;
    rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE |
                         SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
    if (rc == SQLITE_OK) {
        what = "opening it read-only";
        rc = sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
    }
    if (rc == SQLITE_OK) {
        uri = ro_uri(path);
        rc = uri ? sqlite3_prepare_v2(db, "ATTACH ? AS src", -1, &st, NULL)
                 : SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK &&
        (rc = sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC)) == SQLITE_OK)
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_finalize(st);
    sqlite3_free(uri);
    if (rc == SQLITE_OK) {
        what = "starting a read";
        rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK)
        rc = copy_rows(db, all, uid, &what);
    if (rc == SQLITE_OK) {
        what = "ending the read";
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
        what = "detaching it";
        rc = sqlite3_exec(db, "DETACH src", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) {
        what = "serializing the image";
        *bytes = sqlite3_serialize(db, "main", &size, 0);
        rc = *bytes ? SQLITE_OK : SQLITE_NOMEM;
    }
    if (rc != SQLITE_OK) {
        rc = img_err(errmsg, db, path, what);
        sqlite3_close(db);
        return rc;
    }
    *len = (size_t)size;
    sqlite3_close(db);
    return 0;
}

int weft_catalog_load_image(sqlite3 *db, const unsigned char *bytes,
                            size_t len)
{
    unsigned char *copy = sqlite3_malloc64(len ? len : 1);
    int rc;

    if (!copy)
        return SQLITE_NOMEM;
    memcpy(copy, bytes, len);
    /* FREEONCLOSE: the copy is SQLite's from here, also on failure. */
    rc = sqlite3_deserialize(db, "main", copy, (sqlite3_int64)len,
                             (sqlite3_int64)len,
                             SQLITE_DESERIALIZE_FREEONCLOSE |
                             SQLITE_DESERIALIZE_READONLY);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", NULL,
                          NULL, NULL);
    return rc;
}

int weft_catalog_open_image(const unsigned char *bytes, size_t len,
                            const char *name, weft_catalog **out,
                            char **errmsg)
{
    weft_catalog *c = NULL;
    int rc;

    assert(bytes && name && out);
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(name))) {
        free(c);
        if (errmsg)
            *errmsg = strdup("out of memory");
        return WEFT_ENOMEM;
    }
    c->readonly = 1;
    if (sqlite3_open_v2(":memory:", &c->db, SQLITE_OPEN_READWRITE, NULL) !=
        SQLITE_OK)
        rc = weft__cat_err(c, WEFT_ENOMEM, "%s: out of memory", name);
    else if (weft_catalog_load_image(c->db, bytes, len) != SQLITE_OK)
        rc = weft__cat_err(c, WEFT_ECORRUPT, "%s: not a catalog image: %s",
                           name, sqlite3_errmsg(c->db));
    else
        rc = weft__cat_setup(c);
    if (rc < 0) {
        if (errmsg)
            *errmsg = strdup(c->errmsg);
        weft_catalog_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

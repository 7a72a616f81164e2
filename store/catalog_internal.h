/* catalog_internal.h - what the catalog's three files share: the handle,
 * the column lists of the traces table and the helpers defined in
 * catalog.c. Not for use outside store/.
 *
 * Errors: every helper that fails records a message in the handle
 * (weft_catalog_errmsg) and returns a negative WEFT_E* code.
 */
#ifndef WEFT_CATALOG_INTERNAL_H
#define WEFT_CATALOG_INTERNAL_H

#include <stdint.h>

#include <sqlite3.h>

#include "catalog.h"

#define BUSY_TIMEOUT_MS 10000
#define ERRMSG_MAX 512

struct weft_catalog {
    sqlite3 *db;
    char *path;            /* owned */
    int readonly;
    char errmsg[ERRMSG_MAX];
    sqlite3_stmt *tags_st; /* weft_catalog_tags, prepared once: weft list
                              --json asks for every trace's tags */
};

/* The columns weft__cat_read_trace reads, in its order. */
#define TRACE_COLS                                                           \
    "id, key, name, uid, state, created, finished, path, members, "          \
    "locations, events, bytes, dropped, time_first, time_last, "             \
    "timer_resolution, error, hosts, command, job_id, protocol_version, run, "\
    "joined, live_updated, clock, retry_at, refused"
/* "INTO traces (...) VALUES (...)" with the named parameters that
 * weft__cat_bind_trace binds. The id is never one given before (schema
 * 9 and 10, trace_ids): drawn at random (:random_id, see random_id in
 * catalog.c) so that ids tell nothing of others' traces, or, in a
 * catalog set to sequential ids (weftd.conf trace_ids), one above the
 * highest ever given. */
#define TRACE_INTO                                                           \
    "INTO traces (id, key, name, uid, state, created, finished, path, "      \
    "members, locations, events, bytes, dropped, time_first, time_last, "    \
    "timer_resolution, error, hosts, command, job_id, protocol_version, "    \
    "run, joined, live_updated, clock, retry_at, refused) "                  \
    "VALUES ((SELECT CASE WHEN sequential THEN last + 1 ELSE :random_id "     \
    "END FROM trace_ids), :key, :name, :uid, :state, "                       \
    ":created, "                                                             \
    ":finished, :path, :members, :locations, :events, :bytes, :dropped, "    \
    ":time_first, :time_last, :timer_resolution, :error, :hosts, :command, " \
    ":job_id, :protocol_version, :run, :joined, :live_updated, :clock, "     \
    ":retry_at, :refused)"

/* Sets c's message from fmt; returns code. */
__attribute__((format(printf, 3, 4)))
int weft__cat_err(weft_catalog *c, int code, const char *fmt, ...);
/* WEFT_EDB with the connection's SQLite error, naming what we did. */
int weft__cat_db_err(weft_catalog *c, const char *what);
/* 0 with *st prepared (the caller finalizes it), or WEFT_EDB. */
int weft__cat_prepare(weft_catalog *c, const char *sql, sqlite3_stmt **st);
/* Bind by parameter name (absent names are skipped); SQLite codes. */
int weft__cat_bind_text(sqlite3_stmt *st, const char *param, const char *s);
int weft__cat_bind_i64(sqlite3_stmt *st, const char *param, int64_t v);
/* Binds every field of row to TRACE_INTO's parameters: 0 or WEFT_EDB. */
int weft__cat_bind_trace(weft_catalog *c, sqlite3_stmt *st,
                         const weft_trace_row *row);
/* *out a malloc'd copy of a text column: 0 or WEFT_ENOMEM. */
int weft__cat_col_text(sqlite3_stmt *st, int col, int null_ok, char **out);
/* Fills row from a statement selecting TRACE_COLS (strings malloc'd, also
 * on failure: weft_catalog_trace_free). */
int weft__cat_read_trace(weft_catalog *c, sqlite3_stmt *st,
                         weft_trace_row *row);
/* Runs sql without results: 0 or WEFT_EDB naming what. */
int weft__cat_exec(weft_catalog *c, const char *sql, const char *what);
/* What every open does to a new connection c->db: busy timeout, foreign
 * keys, the schema version checked (and, writable, WAL and migrations).
 * 0 or a WEFT_E* code. */
int weft__cat_setup(weft_catalog *c);
/* Rolls back the open transaction, if any. */
void weft__cat_rollback(weft_catalog *c);

#endif

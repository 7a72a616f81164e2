/* catalog.c - the SQLite catalog of traces (see catalog.h).
 *
 * DESIGN: one SQLite file in WAL mode, so the weft command can read while
 * weftd writes. The schema version is PRAGMA user_version; `migrations`
 * below lists the steps from each version to the next, and a writable
 * open applies the missing ones, each in its own IMMEDIATE transaction
 * that re-reads the version (two writers opening at once do not both
 * migrate). A read-only open never changes the file: it refuses a catalog
 * it cannot read instead. Values always go through bound parameters; the
 * only SQL text we build is "PRAGMA user_version = <our constant>" and
 * weft_catalog_query's, which is put together from fixed fragments (one
 * per filter given) whose values are all bound.
 * uint64 figures are stored as SQLite's int64 (cast both ways).
 * Foreign keys are on for every connection, so deleting a trace deletes
 * its locations, members, tags and regions.
 *
 * Schema 2 (issue #6): traces.hosts (distinct member hosts, sorted,
 * comma-separated), .command, .job_id, .protocol_version; members (one
 * row per rank, also for ranks that never came), tags (key=value per
 * trace, index on key and value) and regions (the region profile that
 * conversion computes: per location, and summed over all locations with
 * location_id NULL; times in seconds).
 *
 * Schema 3 (issue #11): traces.joined (members that joined so far) and
 * .live_updated (unix time weftd last wrote the live figures of a trace
 * still recording; 0: none). While a trace records, weftd rewrites its
 * figures (joined, locations, events, bytes received so far) and its
 * member and location rows every few seconds with
 * weft_catalog_trace_live, which touches only rows still in state
 * recording: the conversion's final row, written once the state left
 * recording, always wins.
 */
#include "catalog.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <sqlite3.h>

#include "weft_errors.h"

#define BUSY_TIMEOUT_MS 10000
#define ERRMSG_MAX 512
#define ID_DIGITS_MAX 18 /* below INT64_MAX whatever the digits */

struct weft_catalog {
    sqlite3 *db;
    char *path;            /* owned */
    int readonly;
    char errmsg[ERRMSG_MAX];
    sqlite3_stmt *tags_st; /* weft_catalog_tags, prepared once: weft list
                              --json asks for every trace's tags */
};

/* migrations[i] takes the schema from version i to i + 1. Append a step
 * (and bump WEFT_CATALOG_SCHEMA_VERSION) to change the schema; never edit
 * a step that has shipped. */
static const char *const migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE traces ("
    " id INTEGER PRIMARY KEY,"
    " key TEXT UNIQUE NOT NULL,"
    " name TEXT NOT NULL DEFAULT '',"
    " uid INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL,"
    " created INTEGER NOT NULL DEFAULT 0,"
    " finished INTEGER NOT NULL DEFAULT 0,"
    " path TEXT NOT NULL DEFAULT '',"
    " members INTEGER NOT NULL DEFAULT 0,"
    " locations INTEGER NOT NULL DEFAULT 0,"
    " events INTEGER NOT NULL DEFAULT 0,"
    " bytes INTEGER NOT NULL DEFAULT 0,"
    " dropped INTEGER NOT NULL DEFAULT 0,"
    " time_first INTEGER NOT NULL DEFAULT 0,"
    " time_last INTEGER NOT NULL DEFAULT 0,"
    " timer_resolution INTEGER NOT NULL DEFAULT 0,"
    " error TEXT);"
    "CREATE TABLE locations ("
    " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
    " id INTEGER NOT NULL,"
    " rank INTEGER NOT NULL DEFAULT 0,"
    " thread INTEGER NOT NULL DEFAULT 0,"
    " name TEXT NOT NULL DEFAULT '',"
    " events INTEGER NOT NULL DEFAULT 0,"
    " dropped INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (trace_id, id));"
    "CREATE INDEX traces_name ON traces(name);"
    "CREATE INDEX traces_created ON traces(created);"
    "CREATE INDEX traces_state ON traces(state);"
    "CREATE INDEX traces_uid ON traces(uid);",
    /* 1 -> 2 */
    "ALTER TABLE traces ADD COLUMN hosts TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE traces ADD COLUMN command TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE traces ADD COLUMN job_id TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE traces ADD COLUMN protocol_version INTEGER NOT NULL"
    " DEFAULT 0;"
    "CREATE TABLE members ("
    " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL,"
    " host TEXT NOT NULL DEFAULT '',"
    " pid INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL,"
    " locations INTEGER NOT NULL DEFAULT 0,"
    " events INTEGER NOT NULL DEFAULT 0,"
    " dropped INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (trace_id, rank));"
    "CREATE TABLE tags ("
    " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
    " key TEXT NOT NULL,"
    " value TEXT NOT NULL,"
    " PRIMARY KEY (trace_id, key));"
    "CREATE INDEX tags_kv ON tags(key, value);"
    "CREATE TABLE regions ("
    " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
    " location_id INTEGER," /* NULL: summed over all locations */
    " region TEXT NOT NULL,"
    " visits INTEGER NOT NULL,"
    " incl_s REAL NOT NULL,"
    " excl_s REAL NOT NULL);"
    "CREATE INDEX regions_trace ON regions(trace_id, location_id);"
    "CREATE INDEX regions_region ON regions(region);",
    /* 2 -> 3: the launch a trace is (issue #11); names may repeat */
    "ALTER TABLE traces ADD COLUMN run TEXT NOT NULL DEFAULT '';",
    /* 3 -> 4: live figures of recording traces (issue #11) */
    ("ALTER TABLE traces ADD COLUMN joined INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE traces ADD COLUMN live_updated INTEGER NOT NULL DEFAULT 0;"),
};
_Static_assert(sizeof migrations / sizeof migrations[0] ==
               WEFT_CATALOG_SCHEMA_VERSION,
               "one migration step per schema version");

#define TRACE_COLS                                                           \
    "id, key, name, uid, state, created, finished, path, members, "          \
    "locations, events, bytes, dropped, time_first, time_last, "             \
    "timer_resolution, error, hosts, command, job_id, protocol_version, run, "\
    "joined, live_updated"
#define TRACE_INTO                                                           \
    "INTO traces (key, name, uid, state, created, finished, path, "   \
    "members, locations, events, bytes, dropped, time_first, time_last, "    \
    "timer_resolution, error, hosts, command, job_id, protocol_version, "    \
    "run, joined, live_updated) "                                            \
    "VALUES (:key, :name, :uid, :state, :created, " \
    ":finished, :path, :members, :locations, :events, :bytes, :dropped, "   \
    ":time_first, :time_last, :timer_resolution, :error, :hosts, :command, " \
    ":job_id, :protocol_version, :run, :joined, :live_updated)"

__attribute__((format(printf, 3, 4)))
static int set_err(weft_catalog *c, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

/* Records the connection's current SQLite error, naming what we did. */
static int db_err(weft_catalog *c, const char *what)
{
    return set_err(c, WEFT_EDB, "catalog %s: %s: %s", c->path, what,
                   sqlite3_errmsg(c->db));
}

static int prepare(weft_catalog *c, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) != SQLITE_OK)
        return db_err(c, "prepare");
    return 0;
}

/* Binds by parameter name; names absent from the statement are skipped,
 * so one binder serves INSERT and UPDATE texts alike. */
static int bind_text(sqlite3_stmt *st, const char *param, const char *s)
{
    int i = sqlite3_bind_parameter_index(st, param);

    if (i == 0)
        return SQLITE_OK;
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT)
             : sqlite3_bind_null(st, i);
}

static int bind_i64(sqlite3_stmt *st, const char *param, int64_t v)
{
    int i = sqlite3_bind_parameter_index(st, param);

    return i == 0 ? SQLITE_OK : sqlite3_bind_int64(st, i, v);
}

static int bind_trace(weft_catalog *c, sqlite3_stmt *st,
                      const weft_trace_row *row)
{
    const char *state = row->state ? row->state : WEFT_STATE_RECORDING;
    int rc = SQLITE_OK;

#define B(call) if (rc == SQLITE_OK) rc = (call)
    B(bind_text(st, ":key", row->key));
    B(bind_text(st, ":name", row->name ? row->name : ""));
    B(bind_i64(st, ":uid", row->uid));
    B(bind_text(st, ":state", state));
    B(bind_i64(st, ":created", row->created));
    B(bind_i64(st, ":finished", row->finished));
    B(bind_text(st, ":path", row->path ? row->path : ""));
    B(bind_i64(st, ":members", row->members));
    B(bind_i64(st, ":locations", (int64_t)row->locations));
    B(bind_i64(st, ":events", (int64_t)row->events));
    B(bind_i64(st, ":bytes", (int64_t)row->bytes));
    B(bind_i64(st, ":dropped", (int64_t)row->dropped));
    B(bind_i64(st, ":time_first", (int64_t)row->time_first));
    B(bind_i64(st, ":time_last", (int64_t)row->time_last));
    B(bind_i64(st, ":timer_resolution", (int64_t)row->timer_resolution));
    B(bind_text(st, ":error", row->error && *row->error ? row->error : NULL));
    B(bind_text(st, ":hosts", row->hosts ? row->hosts : ""));
    B(bind_text(st, ":command", row->command ? row->command : ""));
    B(bind_text(st, ":job_id", row->job_id ? row->job_id : ""));
    B(bind_i64(st, ":protocol_version", row->protocol_version));
    B(bind_text(st, ":run", row->run ? row->run : ""));
    B(bind_i64(st, ":joined", row->joined));
    B(bind_i64(st, ":live_updated", row->live_updated));
#undef B
    return rc == SQLITE_OK ? 0 : db_err(c, "bind");
}

/* Copy of a text column; NULL columns give "" unless null_ok. */
static int col_text(sqlite3_stmt *st, int col, int null_ok, char **out)
{
    const unsigned char *s = sqlite3_column_text(st, col);

    *out = NULL;
    if (!s && null_ok)
        return 0;
    *out = strdup(s ? (const char *)s : "");
    return *out ? 0 : WEFT_ENOMEM;
}

/* Fills row from a statement selecting TRACE_COLS. Strings are malloc'd
 * (weft_catalog_trace_free), also on failure. */
static int read_trace(weft_catalog *c, sqlite3_stmt *st, weft_trace_row *row)
{
    int rc = 0;

    memset(row, 0, sizeof *row);
    row->id = sqlite3_column_int64(st, 0);
    row->uid = (uint32_t)sqlite3_column_int64(st, 3);
    row->created = sqlite3_column_int64(st, 5);
    row->finished = sqlite3_column_int64(st, 6);
    row->members = (uint32_t)sqlite3_column_int64(st, 8);
    row->locations = (uint64_t)sqlite3_column_int64(st, 9);
    row->events = (uint64_t)sqlite3_column_int64(st, 10);
    row->bytes = (uint64_t)sqlite3_column_int64(st, 11);
    row->dropped = (uint64_t)sqlite3_column_int64(st, 12);
    row->time_first = (uint64_t)sqlite3_column_int64(st, 13);
    row->time_last = (uint64_t)sqlite3_column_int64(st, 14);
    row->timer_resolution = (uint64_t)sqlite3_column_int64(st, 15);
    row->protocol_version = (uint32_t)sqlite3_column_int64(st, 20);
    row->joined = (uint32_t)sqlite3_column_int64(st, 22);
    row->live_updated = sqlite3_column_int64(st, 23);
    if (col_text(st, 1, 0, &row->key) < 0 ||
        col_text(st, 2, 0, &row->name) < 0 ||
        col_text(st, 4, 0, &row->state) < 0 ||
        col_text(st, 7, 0, &row->path) < 0 ||
        col_text(st, 16, 1, &row->error) < 0 ||
        col_text(st, 17, 0, &row->hosts) < 0 ||
        col_text(st, 18, 0, &row->command) < 0 ||
        col_text(st, 19, 0, &row->job_id) < 0 ||
        col_text(st, 21, 0, &row->run) < 0)
        rc = set_err(c, WEFT_ENOMEM, "catalog %s: out of memory", c->path);
    return rc;
}

static int get_user_version(weft_catalog *c, int64_t *version)
{
    sqlite3_stmt *st = NULL;
    int rc;

    rc = prepare(c, "PRAGMA user_version", &st);
    if (rc < 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = db_err(c, "reading the schema version");
        goto out;
    }
    *version = sqlite3_column_int64(st, 0);
out:
    sqlite3_finalize(st);
    return rc;
}

static int check_not_newer(weft_catalog *c, int64_t version)
{
    if (version > WEFT_CATALOG_SCHEMA_VERSION)
        return set_err(c, WEFT_EVERSION, "catalog %s has schema version %"
                       PRId64 ", this weft knows up to %d; upgrade weft",
                       c->path, version, WEFT_CATALOG_SCHEMA_VERSION);
    return 0;
}

static int exec(weft_catalog *c, const char *sql, const char *what)
{
    if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_err(c, what);
    return 0;
}

static void rollback(weft_catalog *c)
{
    if (!sqlite3_get_autocommit(c->db))
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Applies the steps from the file's version up to ours. */
static int migrate(weft_catalog *c)
{
    int64_t version;
    char sql[64];
    int rc;

    for (;;) {
        rc = exec(c, "BEGIN IMMEDIATE", "starting the schema upgrade");
        if (rc < 0)
            return rc;
        rc = get_user_version(c, &version);
        if (rc == 0)
            rc = check_not_newer(c, version);
        if (rc == 0 && version < 0)
            rc = set_err(c, WEFT_ECORRUPT, "catalog %s has schema version %"
                         PRId64, c->path, version);
        if (rc < 0 || version == WEFT_CATALOG_SCHEMA_VERSION)
            break;
        rc = exec(c, migrations[version], "upgrading the schema");
        if (rc < 0)
            break;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %" PRId64,
                 version + 1);
        rc = exec(c, sql, "setting the schema version");
        if (rc < 0)
            break;
        rc = exec(c, "COMMIT", "committing the schema upgrade");
        if (rc < 0)
            break;
    }
    if (rc < 0)
        rollback(c);
    else
        rc = exec(c, "COMMIT", "ending the schema check");
    return rc;
}

static int setup(weft_catalog *c)
{
    int64_t version = 0;
    int rc;

    if (sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS) != SQLITE_OK)
        return db_err(c, "setting the busy timeout");
    rc = exec(c, "PRAGMA foreign_keys = ON", "enabling foreign keys");
    /* Listing 100,000 traces in creation order reads the table through
     * an index, page by page: mapped pages make that about 1.5x faster
     * than copying each into SQLite's small page cache. */
    if (rc == 0)
        rc = exec(c, "PRAGMA mmap_size = 268435456", "mapping the catalog");
    if (rc == 0)
        rc = get_user_version(c, &version);
    if (rc == 0)
        rc = check_not_newer(c, version);
    if (rc < 0)
        return rc;
    if (c->readonly) {
        if (version < WEFT_CATALOG_SCHEMA_VERSION)
            return set_err(c, WEFT_EVERSION, "catalog %s has schema version "
                           "%" PRId64 ", older than %d; start weftd once to "
                           "upgrade it", c->path, version,
                           WEFT_CATALOG_SCHEMA_VERSION);
        return 0;
    }
    /* Switching a new file to WAL takes an exclusive lock and SQLite does
     * not wait for it through the busy handler: when two connections open
     * a new catalog at once (weftd's worker jobs), retry for a while. */
    for (int tries = 0;; tries++) {
        rc = exec(c, "PRAGMA journal_mode = WAL", "switching to WAL mode");
        if (rc == 0 || (sqlite3_errcode(c->db) & 0xff) != SQLITE_BUSY ||
            tries == BUSY_TIMEOUT_MS / 10)
            break;
        usleep(10000);
    }
    return rc < 0 ? rc : migrate(c);
}

/* Returns 0 with *out a new handle (weft_catalog_close), or a WEFT_E*
 * code with *errmsg malloc'd (the caller frees): WEFT_ENOTFOUND when a
 * read-only catalog does not exist, WEFT_EVERSION for a schema we cannot
 * use, WEFT_EDB for SQLite failures. */
int weft_catalog_open(const char *path, int readonly, weft_catalog **out,
                      char **errmsg)
{
    weft_catalog *c = NULL;
    struct stat sb;
    int flags, rc = 0;

    assert(path && out);
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        rc = WEFT_ENOMEM;
        if (c)
            set_err(c, rc, "catalog %s: out of memory", path);
        goto out;
    }
    c->readonly = readonly;
    if (readonly && stat(path, &sb) != 0) {
        int e = errno;
        rc = set_err(c, e == ENOENT ? WEFT_ENOTFOUND : WEFT_EIO,
                     "catalog %s: %s", path, strerror(e));
        goto out;
    }
    flags = readonly ? SQLITE_OPEN_READONLY
                     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &c->db, flags, NULL) != SQLITE_OK) {
        rc = c->db ? db_err(c, "open")
                   : set_err(c, WEFT_ENOMEM, "catalog %s: out of memory",
                             path);
        goto out;
    }
    sqlite3_extended_result_codes(c->db, 1);
    rc = setup(c);
out:
    if (rc < 0) {
        if (errmsg)
            *errmsg = strdup(c ? c->errmsg : "out of memory");
        weft_catalog_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* quick_check on a read-only connection of its own: nothing of the file
 * changes, whatever it holds. */
int weft_catalog_verify(const char *path, char **errmsg)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    struct stat sb;
    char *msg = NULL;
    int rc = 0, step;

    assert(path && errmsg);
    *errmsg = NULL;
    if (stat(path, &sb) != 0)
        return 0; /* created on first open */
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) !=
            SQLITE_OK) {
        int code = db ? sqlite3_errcode(db) & 0xff : SQLITE_NOMEM;
        rc = code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? WEFT_ECORRUPT
                                                              : WEFT_EDB;
        if (asprintf(&msg, "catalog %s %s: %s", path,
                     rc == WEFT_ECORRUPT ? "is damaged" : "cannot be read",
                     db ? sqlite3_errmsg(db) : "out of memory") < 0)
            msg = NULL;
        goto out;
    }
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const char *r = (const char *)sqlite3_column_text(st, 0);
        if (!r || strcmp(r, "ok") != 0) {
            rc = WEFT_ECORRUPT;
            if (asprintf(&msg, "catalog %s is damaged: %s", path,
                         r ? r : "?") < 0)
                msg = NULL;
        }
    } else {
        int code = sqlite3_errcode(db) & 0xff;
        rc = code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? WEFT_ECORRUPT
                                                              : WEFT_EDB;
        if (asprintf(&msg, "catalog %s %s: %s", path,
                     rc == WEFT_ECORRUPT ? "is damaged" : "cannot be read",
                     sqlite3_errmsg(db)) < 0)
            msg = NULL;
    }
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (rc < 0)
        *errmsg = msg ? msg : strdup("out of memory");
    else
        free(msg);
    return rc;
}

/* Closes the handle (NULL is fine). */
void weft_catalog_close(weft_catalog *c)
{
    if (!c)
        return;
    sqlite3_finalize(c->tags_st);
    sqlite3_close(c->db);
    free(c->path);
    free(c);
}

/* Room SQLite needs to open a WAL catalog: its -shm file (32 KiB) and
 * the first frames of its -wal file, with a margin. */
#define CATALOG_OPEN_ROOM (256u << 10)

int weft_catalog_disk_full(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    struct statvfs st;

    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s",
                 (int)(slash > path ? slash - path : 1), path);
    if (statvfs(dir, &st) != 0)
        return 0;
    return (uint64_t)st.f_bavail * st.f_frsize < CATALOG_OPEN_ROOM;
}

/* The last failure's message, owned by the handle, "" if none. */
const char *weft_catalog_errmsg(const weft_catalog *c)
{
    return c->errmsg;
}

static int64_t id_of_key(weft_catalog *c, const char *key)
{
    sqlite3_stmt *st = NULL;
    int64_t id = WEFT_ENOTFOUND;

    if (prepare(c, "SELECT id FROM traces WHERE key = ?", &st) < 0) {
        id = WEFT_EDB;
        goto out;
    }
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW: id = sqlite3_column_int64(st, 0); break;
    case SQLITE_DONE:
        id = set_err(c, WEFT_ENOTFOUND, "catalog %s: no trace with key %s",
                     c->path, key);
        break;
    default: id = db_err(c, "looking up a key"); break;
    }
out:
    sqlite3_finalize(st);
    return id;
}

/* Returns 0 and sets row->id (of the new or the existing row), or a
 * WEFT_E* code. An existing row is left unchanged. row->state NULL means
 * WEFT_STATE_RECORDING. Nothing of row is kept. */
int weft_catalog_trace_begin(weft_catalog *c, weft_trace_row *row)
{
    sqlite3_stmt *st = NULL;
    int64_t id;
    int rc;

    assert(c && row);
    if (!row->key)
        return set_err(c, WEFT_EINVAL, "catalog %s: trace without a key",
                       c->path);
    rc = prepare(c, "INSERT OR IGNORE " TRACE_INTO, &st);
    if (rc < 0)
        goto out;
    rc = bind_trace(c, st, row);
    if (rc < 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = db_err(c, "recording a trace");
        goto out;
    }
    id = id_of_key(c, row->key);
    if (id < 0) {
        rc = (int)id;
        goto out;
    }
    row->id = id;
out:
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0 or a WEFT_E* code; nothing of row is kept. A row failed
 * before keeps its finish time (recovery reports the same damage at
 * every start). */
int weft_catalog_trace_fail(weft_catalog *c, const weft_trace_row *row)
{
    static const char upsert[] = "INSERT " TRACE_INTO
        " ON CONFLICT (key) DO UPDATE SET state = excluded.state,"
        " error = excluded.error,"
        " finished = CASE WHEN state = 'failed' AND finished <> 0"
        "            THEN finished ELSE excluded.finished END";
    weft_trace_row r;
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && row);
    if (!row->key)
        return set_err(c, WEFT_EINVAL, "catalog %s: trace without a key",
                       c->path);
    r = *row;
    r.state = (char *)WEFT_STATE_FAILED;
    rc = prepare(c, upsert, &st);
    if (rc == 0)
        rc = bind_trace(c, st, &r);
    if (rc == 0 && sqlite3_step(st) != SQLITE_DONE)
        rc = db_err(c, "marking a trace failed");
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0, WEFT_ENOTFOUND when no trace has this key, or WEFT_EDB. */
int weft_catalog_trace_set_state(weft_catalog *c, const char *key,
                                 const char *state)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && key && state);
    rc = prepare(c, "UPDATE traces SET state = ? WHERE key = ?", &st);
    if (rc < 0)
        goto out;
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = db_err(c, "setting a trace state");
    else if (sqlite3_changes(c->db) == 0)
        rc = set_err(c, WEFT_ENOTFOUND, "catalog %s: no trace with key %s",
                     c->path, key);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Runs a statement with one id parameter to its end. */
static int exec_id(weft_catalog *c, const char *sql, int64_t id,
                   const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = prepare(c, sql, &st);

    if (rc == 0) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_err(c, what);
    }
    sqlite3_finalize(st);
    return rc;
}

static int store_locations(weft_catalog *c, int64_t id,
                           const weft_location_row *locs, size_t nlocs)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM locations WHERE trace_id = ?", id,
                 "removing old locations");
    if (rc == 0)
        rc = prepare(c, "INSERT INTO locations (trace_id, id, rank, thread,"
                     " name, events, dropped) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     &ins);
    for (size_t i = 0; rc == 0 && i < nlocs; i++) {
        const weft_location_row *l = &locs[i];
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, (int64_t)l->id);
        sqlite3_bind_int64(ins, 3, l->rank);
        sqlite3_bind_int64(ins, 4, l->thread);
        sqlite3_bind_text(ins, 5, l->name ? l->name : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 6, (int64_t)l->events);
        sqlite3_bind_int64(ins, 7, (int64_t)l->dropped);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_err(c, "storing a location");
    }
    sqlite3_finalize(ins);
    return rc;
}

static int store_members(weft_catalog *c, int64_t id,
                         const weft_member_row *m, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM members WHERE trace_id = ?", id,
                 "removing old members");
    if (rc == 0)
        rc = prepare(c, "INSERT INTO members (trace_id, rank, host, pid,"
                     " state, locations, events, dropped)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, m[i].rank);
        sqlite3_bind_text(ins, 3, m[i].host ? m[i].host : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(ins, 4, m[i].pid);
        sqlite3_bind_text(ins, 5, m[i].state ? m[i].state
                                             : WEFT_MEMBER_MISSING, -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(ins, 6, (int64_t)m[i].locations);
        sqlite3_bind_int64(ins, 7, (int64_t)m[i].events);
        sqlite3_bind_int64(ins, 8, (int64_t)m[i].dropped);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_err(c, "storing a member");
    }
    sqlite3_finalize(ins);
    return rc;
}

/* INSERT OR IGNORE: the first value given for a key stays. */
static int insert_tags(weft_catalog *c, int64_t id, const weft_tag *tags,
                       size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = prepare(c, "INSERT OR IGNORE INTO tags (trace_id, key, value)"
                 " VALUES (?, ?, ?)", &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!tags[i].key || !tags[i].value) {
            rc = set_err(c, WEFT_EINVAL, "catalog %s: a tag without key or "
                         "value", c->path);
            break;
        }
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_text(ins, 2, tags[i].key, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 3, tags[i].value, -1, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_err(c, "storing a tag");
    }
    sqlite3_finalize(ins);
    return rc;
}

static int store_regions(weft_catalog *c, int64_t id,
                         const weft_region_row *r, size_t n)
{
    sqlite3_stmt *ins = NULL;
    int rc;

    rc = exec_id(c, "DELETE FROM regions WHERE trace_id = ?", id,
                 "removing an old profile");
    if (rc == 0)
        rc = prepare(c, "INSERT INTO regions (trace_id, location_id, region,"
                     " visits, incl_s, excl_s) VALUES (?, ?, ?, ?, ?, ?)",
                     &ins);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        if (r[i].location < 0)
            sqlite3_bind_null(ins, 2);
        else
            sqlite3_bind_int64(ins, 2, r[i].location);
        sqlite3_bind_text(ins, 3, r[i].region ? r[i].region : "", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(ins, 4, (int64_t)r[i].visits);
        sqlite3_bind_double(ins, 5, r[i].incl_s);
        sqlite3_bind_double(ins, 6, r[i].excl_s);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_err(c, "storing the region profile");
    }
    sqlite3_finalize(ins);
    return rc;
}

/* Returns 0 or a WEFT_E* code (nothing changed then). */
int weft_catalog_trace_add_tags(weft_catalog *c, int64_t trace_id,
                                const weft_tag *tags, size_t ntags)
{
    int rc;

    assert(c && (tags || ntags == 0));
    rc = exec(c, "BEGIN IMMEDIATE", "starting a transaction");
    if (rc == 0)
        rc = insert_tags(c, trace_id, tags, ntags);
    if (rc == 0)
        rc = exec(c, "COMMIT", "committing tags");
    if (rc < 0)
        rollback(c);
    return rc;
}

/* Returns 0 or a WEFT_E* code (nothing changed then). row->created 0
 * keeps the stored creation time. Nothing of row or locs is kept. */
int weft_catalog_trace_finish(weft_catalog *c, const weft_trace_row *row,
                              const weft_location_row *locs, size_t nlocs)
{
    weft_trace_detail d = { 0 };

    d.locations = locs;
    d.nlocations = nlocs;
    return weft_catalog_trace_finish_detail(c, row, &d);
}

/* Returns 0 or a WEFT_E* code (nothing changed then): the trace row, its
 * locations, members, tags and profile in one transaction. */
int weft_catalog_trace_finish_detail(weft_catalog *c,
                                     const weft_trace_row *row,
                                     const weft_trace_detail *detail)
{
    static const char upsert[] = "INSERT " TRACE_INTO
        " ON CONFLICT (key) DO UPDATE SET name = excluded.name,"
        " uid = excluded.uid, state = excluded.state,"
        " created = CASE WHEN excluded.created <> 0 THEN excluded.created"
        "           ELSE created END,"
        " finished = excluded.finished, path = excluded.path,"
        " members = excluded.members, locations = excluded.locations,"
        " events = excluded.events, bytes = excluded.bytes,"
        " dropped = excluded.dropped, time_first = excluded.time_first,"
        " time_last = excluded.time_last,"
        " timer_resolution = excluded.timer_resolution,"
        " error = excluded.error, hosts = excluded.hosts,"
        " command = excluded.command, job_id = excluded.job_id,"
        " protocol_version = excluded.protocol_version,"
        " run = CASE WHEN excluded.run <> '' THEN excluded.run ELSE run END,"
        " joined = CASE WHEN excluded.joined <> 0 THEN excluded.joined"
        "          ELSE joined END,"
        " live_updated = excluded.live_updated";
    static const weft_trace_detail none;
    const weft_trace_detail *d = detail ? detail : &none;
    sqlite3_stmt *st = NULL;
    int64_t id;
    int rc;

    assert(c && row);
    assert(d->locations || d->nlocations == 0);
    assert(d->members || d->nmembers == 0);
    assert(d->tags || d->ntags == 0);
    assert(d->regions || d->nregions == 0);
    if (!row->key)
        return set_err(c, WEFT_EINVAL, "catalog %s: trace without a key",
                       c->path);
    rc = exec(c, "BEGIN IMMEDIATE", "starting a transaction");
    if (rc < 0)
        return rc;
    rc = prepare(c, upsert, &st);
    if (rc < 0)
        goto out;
    rc = bind_trace(c, st, row);
    if (rc < 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_DONE) {
        rc = db_err(c, "storing a trace");
        goto out;
    }
    id = id_of_key(c, row->key);
    if (id < 0) {
        rc = (int)id;
        goto out;
    }
    rc = store_locations(c, id, d->locations, d->nlocations);
    if (rc == 0)
        rc = store_members(c, id, d->members, d->nmembers);
    if (rc == 0)
        rc = exec_id(c, "DELETE FROM tags WHERE trace_id = ?", id,
                     "removing old tags");
    if (rc == 0)
        rc = insert_tags(c, id, d->tags, d->ntags);
    if (rc == 0)
        rc = store_regions(c, id, d->regions, d->nregions);
    if (rc == 0)
        rc = exec(c, "COMMIT", "committing a trace");
out:
    sqlite3_finalize(st);
    if (rc < 0)
        rollback(c);
    return rc;
}

/* Returns 0 or a WEFT_E* code (nothing changed then); stored[i] (stored
 * may be NULL) says whether v[i]'s row was still recording and got its
 * figures. One transaction for all of v. */
int weft_catalog_trace_live(weft_catalog *c, const weft_live_figures *v,
                            size_t n, int64_t now, uint8_t *stored)
{
    static const char update[] = "UPDATE traces SET joined = :joined,"
        " locations = :locations, events = :events, bytes = :bytes,"
        " live_updated = :now WHERE key = :key AND state = '"
        WEFT_STATE_RECORDING "' RETURNING id";
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && (v || n == 0));
    if (stored)
        memset(stored, 0, n);
    rc = exec(c, "BEGIN IMMEDIATE", "starting a transaction");
    if (rc < 0)
        return rc;
    rc = prepare(c, update, &st);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int64_t id;
        int step;
        assert(v[i].key);
        assert(v[i].members || v[i].nmembers == 0);
        assert(v[i].locs || v[i].nlocs == 0);
        sqlite3_reset(st);
        if (bind_text(st, ":key", v[i].key) != SQLITE_OK ||
            bind_i64(st, ":joined", v[i].joined) != SQLITE_OK ||
            bind_i64(st, ":locations", (int64_t)v[i].locations) != SQLITE_OK ||
            bind_i64(st, ":events", (int64_t)v[i].events) != SQLITE_OK ||
            bind_i64(st, ":bytes", (int64_t)v[i].bytes) != SQLITE_OK ||
            bind_i64(st, ":now", now) != SQLITE_OK) {
            rc = db_err(c, "bind");
            break;
        }
        step = sqlite3_step(st);
        if (step == SQLITE_DONE)
            continue;  /* gone, or no longer recording: leave it */
        if (step != SQLITE_ROW) {
            rc = db_err(c, "storing live figures");
            break;
        }
        id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        rc = store_members(c, id, v[i].members, v[i].nmembers);
        if (rc == 0)
            rc = store_locations(c, id, v[i].locs, v[i].nlocs);
        if (stored)
            stored[i] = 1;
    }
    sqlite3_finalize(st);
    if (rc == 0)
        rc = exec(c, "COMMIT", "committing live figures");
    if (rc < 0) {
        rollback(c);
        if (stored)
            memset(stored, 0, n);
        return rc;
    }
    return 0;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_list(weft_catalog *c, weft_catalog_trace_fn fn, void *arg)
{
    return weft_catalog_query(c, NULL, fn, arg);
}

/* ORDER BY of each weft_list_sort, its natural direction first. */
static const char *sort_sql(enum weft_list_sort sort, int reverse)
{
    static const char *const sql[][2] = {
        [WEFT_SORT_CREATED] = { "created DESC, id DESC",
                                "created ASC, id ASC" },
        [WEFT_SORT_NAME] = { "name ASC, created DESC, id DESC",
                             "name DESC, created ASC, id ASC" },
        [WEFT_SORT_EVENTS] = { "events DESC, created DESC, id DESC",
                               "events ASC, created ASC, id ASC" },
        [WEFT_SORT_SIZE] = { "bytes DESC, created DESC, id DESC",
                             "bytes ASC, created ASC, id ASC" },
        [WEFT_SORT_DURATION] = {
            "(CASE WHEN finished >= created THEN finished - created"
            " ELSE -1 END) DESC, created DESC, id DESC",
            "(CASE WHEN finished >= created THEN finished - created"
            " ELSE -1 END) ASC, created ASC, id ASC" },
        [WEFT_SORT_STATE] = { "state ASC, created DESC, id DESC",
                              "state DESC, created ASC, id ASC" },
    };

    if ((unsigned)sort >= sizeof sql / sizeof sql[0])
        return NULL;
    return sql[sort][reverse ? 1 : 0];
}

/* The SELECT of a filter, its values as "?" in the order bind_filter
 * binds them. NULL (and c's message set) on failure; sqlite3_free it. */
static char *filter_sql(weft_catalog *c, const weft_list_filter *f)
{
    sqlite3_str *q = sqlite3_str_new(c->db);
    const char *order = sort_sql(f->sort, f->reverse);
    char *sql;

    if (!order) {
        sqlite3_free(sqlite3_str_finish(q));
        set_err(c, WEFT_EINVAL, "catalog %s: unknown sort order %d", c->path,
                (int)f->sort);
        return NULL;
    }
    sqlite3_str_appendall(q, "SELECT " TRACE_COLS " FROM traces t WHERE 1");
    if (f->has_uid)
        sqlite3_str_appendall(q, " AND t.uid = ?");
    if (f->name_glob)
        sqlite3_str_appendall(q, " AND t.name GLOB ?");
    if (f->state)
        sqlite3_str_appendall(q, " AND t.state = ?");
    if (f->since)
        sqlite3_str_appendall(q, " AND t.created >= ?");
    if (f->until)
        sqlite3_str_appendall(q, " AND t.created <= ?");
    /* hosts is what a recording trace knows; members, after it ended. */
    if (f->host)
        sqlite3_str_appendall(q, " AND (instr(',' || t.hosts || ',',"
                              " ',' || ? || ',') > 0 OR EXISTS (SELECT 1"
                              " FROM members m WHERE m.trace_id = t.id"
                              " AND m.host = ?))");
    for (size_t i = 0; i < f->ntags; i++)
        sqlite3_str_appendall(q, " AND EXISTS (SELECT 1 FROM tags g"
                              " WHERE g.trace_id = t.id AND g.key = ?"
                              " AND g.value = ?)");
    sqlite3_str_appendf(q, " ORDER BY %s", order);
    if (f->limit > 0)
        sqlite3_str_appendall(q, " LIMIT ?");
    sql = sqlite3_str_finish(q);
    if (!sql)
        set_err(c, WEFT_ENOMEM, "catalog %s: out of memory", c->path);
    return sql;
}

static int bind_filter(weft_catalog *c, sqlite3_stmt *st,
                       const weft_list_filter *f)
{
    int i = 0, rc = SQLITE_OK;

#define B(call) if (rc == SQLITE_OK) rc = (call)
    if (f->has_uid)
        B(sqlite3_bind_int64(st, ++i, f->uid));
    if (f->name_glob)
        B(sqlite3_bind_text(st, ++i, f->name_glob, -1, SQLITE_STATIC));
    if (f->state)
        B(sqlite3_bind_text(st, ++i, f->state, -1, SQLITE_STATIC));
    if (f->since)
        B(sqlite3_bind_int64(st, ++i, f->since));
    if (f->until)
        B(sqlite3_bind_int64(st, ++i, f->until));
    if (f->host) {
        B(sqlite3_bind_text(st, ++i, f->host, -1, SQLITE_STATIC));
        B(sqlite3_bind_text(st, ++i, f->host, -1, SQLITE_STATIC));
    }
    for (size_t k = 0; k < f->ntags; k++) {
        B(sqlite3_bind_text(st, ++i, f->tags[k].key ? f->tags[k].key : "",
                            -1, SQLITE_STATIC));
        B(sqlite3_bind_text(st, ++i, f->tags[k].value ? f->tags[k].value
                                                      : "", -1,
                            SQLITE_STATIC));
    }
    if (f->limit > 0)
        B(sqlite3_bind_int64(st, ++i, f->limit));
#undef B
    return rc == SQLITE_OK ? 0 : db_err(c, "bind");
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_query(weft_catalog *c, const weft_list_filter *filter,
                       weft_catalog_trace_fn fn, void *arg)
{
    static const weft_list_filter all;
    const weft_list_filter *f = filter ? filter : &all;
    sqlite3_stmt *st = NULL;
    weft_trace_row row;
    char *sql;
    int rc, step;

    assert(c && fn && (f->tags || f->ntags == 0));
    sql = filter_sql(c, f);
    if (!sql)
        return sort_sql(f->sort, f->reverse) ? WEFT_ENOMEM : WEFT_EINVAL;
    rc = prepare(c, sql, &st);
    sqlite3_free(sql);
    if (rc < 0)
        goto out;
    rc = bind_filter(c, st, f);
    if (rc < 0)
        goto out;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        rc = read_trace(c, st, &row);
        if (rc == 0)
            rc = fn(&row, arg);
        weft_catalog_trace_free(&row);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = db_err(c, "listing traces");
out:
    sqlite3_finalize(st);
    return rc;
}

/* Runs a query selecting TRACE_COLS with one text parameter (or an id when
 * text is NULL) and reads its first row. */
static int find_one(weft_catalog *c, const char *sql, const char *text,
                    int64_t id, weft_trace_row *out)
{
    sqlite3_stmt *st = NULL;
    int rc;

    rc = prepare(c, sql, &st);
    if (rc < 0)
        goto out;
    if (text)
        sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(st, 1, id);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW: rc = read_trace(c, st, out); break;
    case SQLITE_DONE: rc = WEFT_ENOTFOUND; break;
    default: rc = db_err(c, "finding a trace"); break;
    }
out:
    sqlite3_finalize(st);
    return rc;
}

/* Parses "12" or "#12" (*strict set for the '#' form); 0 or -1. */
static int parse_id(const char *s, int64_t *id, int *strict)
{
    size_t n;

    *strict = *s == '#';
    s += *strict;
    n = strspn(s, "0123456789");
    if (n == 0 || s[n] != '\0' || n > ID_DIGITS_MAX)
        return -1;
    *id = strtoll(s, NULL, 10);
    return 0;
}

/* Returns 0 with *out filled (strings malloc'd: weft_catalog_trace_free),
 * WEFT_ENOTFOUND, or another WEFT_E* code. "#12" is only ever an id; a
 * bare number is tried as an id, then as a key and a name. */
int weft_catalog_find(weft_catalog *c, const char *what, weft_trace_row *out)
{
    static const char by_id[] = "SELECT " TRACE_COLS
        " FROM traces WHERE id = ?";
    static const char by_key[] = "SELECT " TRACE_COLS
        " FROM traces WHERE key = ?";
    static const char by_name[] = "SELECT " TRACE_COLS
        " FROM traces WHERE name = ? ORDER BY created DESC, id DESC LIMIT 1";
    int64_t id;
    int strict = 0, rc = WEFT_ENOTFOUND;

    assert(c && what && out);
    memset(out, 0, sizeof *out);
    if (parse_id(what, &id, &strict) == 0)
        rc = find_one(c, by_id, NULL, id, out);
    if (rc == WEFT_ENOTFOUND && !strict)
        rc = find_one(c, by_key, what, 0, out);
    if (rc == WEFT_ENOTFOUND && !strict)
        rc = find_one(c, by_name, what, 0, out);
    if (rc == WEFT_ENOTFOUND)
        set_err(c, rc, "catalog %s: no trace %s", c->path, what);
    if (rc < 0)
        weft_catalog_trace_free(out);
    return rc;
}

/* Returns 0 with *n the number of traces named `name` (of any owner the
 * handle can see), or a WEFT_E* code. */
int weft_catalog_count_name(weft_catalog *c, const char *name, uint64_t *n)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c && name && n);
    *n = 0;
    rc = prepare(c, "SELECT count(*) FROM traces WHERE name = ?", &st);
    if (rc < 0)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        *n = (uint64_t)sqlite3_column_int64(st, 0);
    else
        rc = db_err(c, "counting traces by name");
    sqlite3_finalize(st);
    return rc;
}

/* Frees the strings of a row read from the catalog and clears it. */
void weft_catalog_trace_free(weft_trace_row *row)
{
    if (!row)
        return;
    free(row->key);
    free(row->name);
    free(row->state);
    free(row->path);
    free(row->error);
    free(row->hosts);
    free(row->command);
    free(row->job_id);
    free(row->run);
    memset(row, 0, sizeof *row);
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_locations(weft_catalog *c, int64_t trace_id,
                           weft_catalog_location_fn fn, void *arg)
{
    sqlite3_stmt *st = NULL;
    weft_location_row row;
    int rc, step;

    assert(c && fn);
    rc = prepare(c, "SELECT id, rank, thread, name, events, dropped"
                 " FROM locations WHERE trace_id = ?"
                 " ORDER BY rank, thread, id", &st);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(st, 1, trace_id);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        memset(&row, 0, sizeof row);
        row.id = (uint64_t)sqlite3_column_int64(st, 0);
        row.rank = (uint32_t)sqlite3_column_int64(st, 1);
        row.thread = (uint32_t)sqlite3_column_int64(st, 2);
        row.events = (uint64_t)sqlite3_column_int64(st, 4);
        row.dropped = (uint64_t)sqlite3_column_int64(st, 5);
        if (col_text(st, 3, 0, &row.name) < 0) {
            rc = set_err(c, WEFT_ENOMEM, "catalog %s: out of memory",
                         c->path);
            goto out;
        }
        rc = fn(&row, arg);
        free(row.name);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = db_err(c, "listing locations");
out:
    sqlite3_finalize(st);
    return rc;
}

static int oom(weft_catalog *c)
{
    return set_err(c, WEFT_ENOMEM, "catalog %s: out of memory", c->path);
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_members(weft_catalog *c, int64_t trace_id,
                         weft_catalog_member_fn fn, void *arg)
{
    sqlite3_stmt *st = NULL;
    weft_member_row row;
    int rc, step;

    assert(c && fn);
    rc = prepare(c, "SELECT rank, host, pid, state, locations, events,"
                 " dropped FROM members WHERE trace_id = ? ORDER BY rank",
                 &st);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(st, 1, trace_id);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        memset(&row, 0, sizeof row);
        row.rank = (uint32_t)sqlite3_column_int64(st, 0);
        row.pid = (uint32_t)sqlite3_column_int64(st, 2);
        row.locations = (uint64_t)sqlite3_column_int64(st, 4);
        row.events = (uint64_t)sqlite3_column_int64(st, 5);
        row.dropped = (uint64_t)sqlite3_column_int64(st, 6);
        if (col_text(st, 1, 0, &row.host) < 0 ||
            col_text(st, 3, 0, &row.state) < 0)
            rc = oom(c);
        else
            rc = fn(&row, arg);
        free(row.host);
        free(row.state);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = db_err(c, "listing members");
out:
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The tag passed to fn is owned by the catalog and valid during the call. */
int weft_catalog_tags(weft_catalog *c, int64_t trace_id,
                      weft_catalog_tag_fn fn, void *arg)
{
    sqlite3_stmt *st;
    weft_tag tag;
    int rc = 0, step;

    assert(c && fn);
    if (!c->tags_st)
        rc = prepare(c, "SELECT key, value FROM tags WHERE trace_id = ?"
                     " ORDER BY key", &c->tags_st);
    if (rc < 0)
        return rc;
    st = c->tags_st;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, trace_id);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (col_text(st, 0, 0, &tag.key) < 0 ||
            col_text(st, 1, 0, &tag.value) < 0)
            rc = oom(c);
        else
            rc = fn(&tag, arg);
        free(tag.key);
        free(tag.value);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = db_err(c, "listing tags");
out:
    sqlite3_reset(st); /* ends the read */
    return rc;
}

static const char *region_order(enum weft_region_sort sort)
{
    switch (sort) {
    case WEFT_RSORT_EXCL: return "r.excl_s DESC, r.region";
    case WEFT_RSORT_INCL: return "r.incl_s DESC, r.region";
    case WEFT_RSORT_VISITS: return "r.visits DESC, r.region";
    case WEFT_RSORT_NAME: return "r.region, r.excl_s DESC";
    }
    return NULL;
}

/* Returns 0 after all rows, fn's first non-zero value, or a WEFT_E* code.
 * The row passed to fn is owned by the catalog and valid during the call.
 * One query: a window numbers the rows of each location (or of the sum)
 * in sort order and sums their exclusive time, the limit applies to the
 * numbers. */
int weft_catalog_regions(weft_catalog *c, int64_t trace_id, int by_location,
                         enum weft_region_sort sort, int64_t limit,
                         weft_catalog_region_fn fn, void *arg)
{
    const char *order = region_order(sort);
    sqlite3_stmt *st = NULL;
    weft_region_row row;
    char *sql;
    int rc, step;

    assert(c && fn);
    if (!order)
        return set_err(c, WEFT_EINVAL, "catalog %s: unknown region order %d",
                       c->path, (int)sort);
    sql = sqlite3_mprintf(
        "SELECT location_id, region, visits, incl_s, excl_s, lname, total"
        " FROM (SELECT r.location_id, r.region, r.visits, r.incl_s,"
        "  r.excl_s, coalesce(l.name, '') AS lname,"
        "  row_number() OVER (PARTITION BY r.location_id ORDER BY %s) AS n,"
        "  sum(r.excl_s) OVER (PARTITION BY r.location_id) AS total"
        "  FROM regions r LEFT JOIN locations l"
        "  ON l.trace_id = r.trace_id AND l.id = r.location_id"
        "  WHERE r.trace_id = ? AND r.location_id %s)"
        " WHERE ? <= 0 OR n <= ? ORDER BY location_id, n",
        order, by_location ? "IS NOT NULL" : "IS NULL");
    if (!sql)
        return oom(c);
    rc = prepare(c, sql, &st);
    sqlite3_free(sql);
    if (rc < 0)
        goto out;
    sqlite3_bind_int64(st, 1, trace_id);
    sqlite3_bind_int64(st, 2, limit);
    sqlite3_bind_int64(st, 3, limit);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        memset(&row, 0, sizeof row);
        row.location = sqlite3_column_type(st, 0) == SQLITE_NULL
                       ? WEFT_PROFILE_ALL : sqlite3_column_int64(st, 0);
        row.visits = (uint64_t)sqlite3_column_int64(st, 2);
        row.incl_s = sqlite3_column_double(st, 3);
        row.excl_s = sqlite3_column_double(st, 4);
        row.total_excl_s = sqlite3_column_double(st, 6);
        if (col_text(st, 1, 0, &row.region) < 0 ||
            col_text(st, 5, 0, &row.location_name) < 0)
            rc = oom(c);
        else
            rc = fn(&row, arg);
        free(row.region);
        free(row.location_name);
        if (rc != 0)
            goto out;
    }
    if (step != SQLITE_DONE)
        rc = db_err(c, "reading the region profile");
out:
    sqlite3_finalize(st);
    return rc;
}

/* Returns 0, WEFT_ENOTFOUND when no trace has this id, or another WEFT_E*
 * code (nothing changed then). */
int weft_catalog_trace_delete(weft_catalog *c, int64_t id)
{
    static const char *const sql[] = {
        "DELETE FROM locations WHERE trace_id = ?",
        "DELETE FROM traces WHERE id = ?",
    };
    sqlite3_stmt *st = NULL;
    int rc, found = 0;

    assert(c);
    if (c->readonly)
        return set_err(c, WEFT_EINVAL, "catalog %s: opened read-only",
                       c->path);
    rc = exec(c, "BEGIN IMMEDIATE", "deleting a trace");
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        rc = prepare(c, sql[i], &st);
        if (rc < 0)
            goto out;
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = db_err(c, "deleting a trace");
            goto out;
        }
        found = sqlite3_changes(c->db) > 0;
        sqlite3_finalize(st);
        st = NULL;
    }
    if (!found) {
        rc = set_err(c, WEFT_ENOTFOUND, "catalog %s: no trace with id %"
                     PRId64, c->path, id);
        goto out;
    }
    rc = exec(c, "COMMIT", "deleting a trace");
out:
    sqlite3_finalize(st);
    if (rc < 0)
        rollback(c);
    return rc;
}

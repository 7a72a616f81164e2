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
 *
 * Schema 6 (issue #17): what `weft report` draws without reading
 * events, computed by the conversion and written in the same
 * transaction as the final row (so a trace has all of it or none, and
 * it goes with the trace, like the profile): timelines (per location,
 * the dominant region of each time bin, bins as a blob of uvarints),
 * timeline_regions (names of the region ids the bins hold) and messages
 * (MPI bytes and messages per sender and receiver world rank). Traces
 * converted before have no rows there; `weft report` says so. Tables
 * rather than a file beside the archive: the commit that says complete
 * carries them, ON DELETE CASCADE removes them with the trace (rm,
 * retention), a user who cannot read the catalog gets them in weftd's
 * image of their rows (catalog_image.c copies every trace_id table), and
 * no new file needs the archive's permissions. Like the profile, `weft
 * reindex` does not rebuild them.
 *
 * Schema 7 (issue #17): two more of those, written and deleted the same
 * way: io_files (per file: bytes read and written, operations, seconds
 * in them; the WEFT_CONVERT_IO_FILES files of most time and one row,
 * others > 0, summing the rest) and metrics (per location and metric
 * member: its name and unit, and its values over time as bins of
 * minimum, maximum and last value, a blob of little-endian float64
 * triples, NaN for a bin without a value; series_total: the series the
 * conversion saw, more than the rows when capped).
 *
 * Schema 15 (issue #35): regions.paradigm, the OTF2 paradigm of the
 * row's region as text ("mpi", "openmp", "pthread", "io", ...: what
 * weft_profile_paradigm_name says; '' for the rows of time outside
 * traced calls and for rows stored before). Text rather than OTF2's
 * number so that `weft sql` reads it as `weft profile` prints it.
 *
 * This file: opening, checking and closing the catalog, the schema and its
 * migrations, and the helpers catalog_write.c and catalog_read.c share
 * (catalog_internal.h).
 */
#include "catalog.h"
#include "catalog_internal.h"

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
    /* 4 -> 5: the trace clocks its processes read (issue #16) */
    "ALTER TABLE traces ADD COLUMN clock TEXT NOT NULL DEFAULT '';",
    /* 5 -> 6: what weft report draws (issue #17) */
    ("CREATE TABLE timelines ("
     " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
     " location_id INTEGER NOT NULL,"
     " start_s REAL NOT NULL,"
     " width_s REAL NOT NULL,"
     " nbins INTEGER NOT NULL,"
     " bins BLOB NOT NULL," /* a uvarint per bin: region id + 1, 0 none */
     " PRIMARY KEY (trace_id, location_id));"
     "CREATE TABLE timeline_regions ("
     " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
     " region_id INTEGER NOT NULL,"
     " name TEXT NOT NULL,"
     " PRIMARY KEY (trace_id, region_id));"
     "CREATE TABLE messages ("
     " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
     " sender INTEGER NOT NULL,"
     " receiver INTEGER NOT NULL,"
     " messages INTEGER NOT NULL,"
     " bytes INTEGER NOT NULL,"
     " PRIMARY KEY (trace_id, sender, receiver));"),
    /* 6 -> 7: file I/O and metrics of weft report (issue #17) */
    ("CREATE TABLE io_files ("
     " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
     " ord INTEGER NOT NULL,"    /* most time first; others last */
     " name TEXT NOT NULL,"
     " others INTEGER NOT NULL," /* 0: a file; n: the n others summed */
     " bytes_read INTEGER NOT NULL,"
     " bytes_written INTEGER NOT NULL,"
     " operations INTEGER NOT NULL,"
     " time_s REAL NOT NULL,"
     " PRIMARY KEY (trace_id, ord));"
     "CREATE TABLE metrics ("
     " trace_id INTEGER NOT NULL REFERENCES traces(id) ON DELETE CASCADE,"
     " location_id INTEGER NOT NULL,"
     " member_id INTEGER NOT NULL,"
     " name TEXT NOT NULL,"
     " unit TEXT NOT NULL,"
     " start_s REAL NOT NULL,"
     " width_s REAL NOT NULL,"
     " npoints INTEGER NOT NULL,"
     " points BLOB NOT NULL,"    /* float64 LE min, max, last per bin */
     " series_total INTEGER NOT NULL,"
     " PRIMARY KEY (trace_id, location_id, member_id));"),
    /* 7 -> 8: when weftd tries a failed conversion again (weft wait) */
    "ALTER TABLE traces ADD COLUMN retry_at INTEGER NOT NULL DEFAULT 0;",
    /* 8 -> 9: a trace id is never given again, also after the newest
     * trace was removed (scripts keep ids): the highest ever given,
     * which TRACE_INTO counts on */
    ("CREATE TABLE trace_ids (last INTEGER NOT NULL);"
     "INSERT INTO trace_ids SELECT coalesce(max(id), 0) FROM traces;"
     "CREATE TRIGGER trace_ids_last AFTER INSERT ON traces BEGIN"
     " UPDATE trace_ids SET last = max(last, NEW.id); END;"),
    /* 9 -> 10: ids drawn at random (catalog_internal.h), so that the
     * gaps between one user's ids tell nothing of the traces others made
     * (#30); trace_ids_given keeps every id given from now on, floor the
     * highest one given before (all of 1..floor may have been) */
    ("ALTER TABLE trace_ids ADD COLUMN sequential INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE trace_ids ADD COLUMN floor INTEGER NOT NULL DEFAULT 0;"
     "UPDATE trace_ids SET floor = last;"
     "CREATE TABLE trace_ids_given (id INTEGER PRIMARY KEY);"
     "DROP TRIGGER trace_ids_last;"
     /* seq: the order traces came in, which ids no longer tell: lists
      * and retention order by it where created or finished are the same
      * second; the trigger numbers every new row (whoever inserts it); a
      * user's image numbers their own rows 1, 2 ... (catalog_image.c) */
     "ALTER TABLE traces ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;"
     "UPDATE traces SET seq = id;"
     "CREATE INDEX traces_seq ON traces(seq);"
     "CREATE TRIGGER trace_ids_last AFTER INSERT ON traces BEGIN"
     " UPDATE trace_ids SET last = max(last, NEW.id);"
     " INSERT OR IGNORE INTO trace_ids_given VALUES (NEW.id);"
     " UPDATE traces SET seq = (SELECT max(seq) FROM traces) + 1"
     "  WHERE NEW.seq = 0 AND id = NEW.id; END;"),
    /* 10 -> 11: bytes a trace costs its owner's max_user_spool_bytes
     * beyond its archive's (an import: its catalog rows) */
    "ALTER TABLE traces ADD COLUMN charged INTEGER NOT NULL DEFAULT 0;",
    /* 11 -> 12: of `dropped`, the records weftd did not store (quota,
     * disk reserve, failed writes; #30), the rest the clients' */
    "ALTER TABLE traces ADD COLUMN refused INTEGER NOT NULL DEFAULT 0;",
    /* 12 -> 13: the process and program of a process tree's location
     * (#32: weft report's rows, weft profile --by-program) */
    ("ALTER TABLE locations ADD COLUMN process TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE locations ADD COLUMN program TEXT NOT NULL DEFAULT '';"),
    /* 13 -> 14: a process tree member's parent (#32: weft show) */
    "ALTER TABLE members ADD COLUMN parent_pid INTEGER NOT NULL DEFAULT 0;",
    /* 14 -> 15: the paradigm of a profile row's region (#35: weft
     * profile, weft report); rows stored before have '' */
    "ALTER TABLE regions ADD COLUMN paradigm TEXT NOT NULL DEFAULT '';",
};
_Static_assert(sizeof migrations / sizeof migrations[0] ==
               WEFT_CATALOG_SCHEMA_VERSION,
               "one migration step per schema version");

__attribute__((format(printf, 3, 4)))
int weft__cat_err(weft_catalog *c, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

/* Records the connection's current SQLite error, naming what we did. */
int weft__cat_db_err(weft_catalog *c, const char *what)
{
    return weft__cat_err(c, WEFT_EDB, "catalog %s: %s: %s", c->path, what,
                         sqlite3_errmsg(c->db));
}

int weft__cat_prepare(weft_catalog *c, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(c->db, sql, -1, st, NULL) != SQLITE_OK)
        return weft__cat_db_err(c, "prepare");
    return 0;
}

/* Binds by parameter name; names absent from the statement are skipped,
 * so one binder serves INSERT and UPDATE texts alike. */
int weft__cat_bind_text(sqlite3_stmt *st, const char *param, const char *s)
{
    int i = sqlite3_bind_parameter_index(st, param);

    if (i == 0)
        return SQLITE_OK;
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT)
             : sqlite3_bind_null(st, i);
}

int weft__cat_bind_i64(sqlite3_stmt *st, const char *param, int64_t v)
{
    int i = sqlite3_bind_parameter_index(st, param);

    return i == 0 ? SQLITE_OK : sqlite3_bind_int64(st, i, v);
}

/* An id for a new trace in random mode (TRACE_INTO): uniform in
 * floor + [1, WEFT_CATALOG_ID_RANGE], never one given before; when 64
 * draws all hit given ones, the one above the highest. 0 or WEFT_EDB. */
static int random_id(weft_catalog *c, int64_t *id)
{
    static const char ids[] = "SELECT floor, last FROM trace_ids";
    static const char used[] = "SELECT EXISTS (SELECT 1 FROM "
        "trace_ids_given WHERE id = ?1) OR EXISTS (SELECT 1 FROM traces "
        "WHERE id = ?1)";
    sqlite3_stmt *st = NULL;
    int64_t floor = 0, last = 0;
    int rc = weft__cat_prepare(c, ids, &st);

    if (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        floor = sqlite3_column_int64(st, 0);
        last = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    st = NULL;
    *id = last + 1;
    if (rc == 0)
        rc = weft__cat_prepare(c, used, &st);
    for (int tries = 0; rc == 0 && tries < 64; tries++) {
        uint64_t v;
        int64_t cand;
        sqlite3_randomness(sizeof v, &v);
        cand = floor + 1 + (int64_t)(v % WEFT_CATALOG_ID_RANGE);
        sqlite3_reset(st);
        if (sqlite3_bind_int64(st, 1, cand) != SQLITE_OK ||
            sqlite3_step(st) != SQLITE_ROW) {
            rc = weft__cat_db_err(c, "drawing a trace id");
            break;
        }
        if (sqlite3_column_int(st, 0) == 0) {
            *id = cand;
            break;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int weft__cat_bind_trace(weft_catalog *c, sqlite3_stmt *st,
                      const weft_trace_row *row)
{
    const char *state = row->state ? row->state : WEFT_STATE_RECORDING;
    int rc = SQLITE_OK;

    if (sqlite3_bind_parameter_index(st, ":random_id") > 0) {
        int64_t id;
        if (random_id(c, &id) < 0)
            return WEFT_EDB;
        rc = weft__cat_bind_i64(st, ":random_id", id);
    }

#define B(call) if (rc == SQLITE_OK) rc = (call)
    B(weft__cat_bind_text(st, ":key", row->key));
    B(weft__cat_bind_text(st, ":name", row->name ? row->name : ""));
    B(weft__cat_bind_i64(st, ":uid", row->uid));
    B(weft__cat_bind_text(st, ":state", state));
    B(weft__cat_bind_i64(st, ":created", row->created));
    B(weft__cat_bind_i64(st, ":finished", row->finished));
    B(weft__cat_bind_text(st, ":path", row->path ? row->path : ""));
    B(weft__cat_bind_i64(st, ":members", row->members));
    B(weft__cat_bind_i64(st, ":locations", (int64_t)row->locations));
    B(weft__cat_bind_i64(st, ":events", (int64_t)row->events));
    B(weft__cat_bind_i64(st, ":bytes", (int64_t)row->bytes));
    B(weft__cat_bind_i64(st, ":dropped", (int64_t)row->dropped));
    B(weft__cat_bind_i64(st, ":time_first", (int64_t)row->time_first));
    B(weft__cat_bind_i64(st, ":time_last", (int64_t)row->time_last));
    B(weft__cat_bind_i64(st, ":timer_resolution",
                         (int64_t)row->timer_resolution));
    B(weft__cat_bind_text(st, ":error",
                          row->error && *row->error ? row->error : NULL));
    B(weft__cat_bind_text(st, ":hosts", row->hosts ? row->hosts : ""));
    B(weft__cat_bind_text(st, ":command", row->command ? row->command : ""));
    B(weft__cat_bind_text(st, ":job_id", row->job_id ? row->job_id : ""));
    B(weft__cat_bind_i64(st, ":protocol_version", row->protocol_version));
    B(weft__cat_bind_text(st, ":run", row->run ? row->run : ""));
    B(weft__cat_bind_i64(st, ":joined", row->joined));
    B(weft__cat_bind_i64(st, ":live_updated", row->live_updated));
    B(weft__cat_bind_text(st, ":clock", row->clock ? row->clock : ""));
    B(weft__cat_bind_i64(st, ":retry_at", row->retry_at));
    B(weft__cat_bind_i64(st, ":refused", (int64_t)row->refused));
#undef B
    return rc == SQLITE_OK ? 0 : weft__cat_db_err(c, "bind");
}

/* Copy of a text column; NULL columns give "" unless null_ok. */
int weft__cat_col_text(sqlite3_stmt *st, int col, int null_ok, char **out)
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
int weft__cat_read_trace(weft_catalog *c, sqlite3_stmt *st, weft_trace_row *row)
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
    row->retry_at = sqlite3_column_int64(st, 25);
    row->refused = (uint64_t)sqlite3_column_int64(st, 26);
    if (weft__cat_col_text(st, 1, 0, &row->key) < 0 ||
        weft__cat_col_text(st, 2, 0, &row->name) < 0 ||
        weft__cat_col_text(st, 4, 0, &row->state) < 0 ||
        weft__cat_col_text(st, 7, 0, &row->path) < 0 ||
        weft__cat_col_text(st, 16, 1, &row->error) < 0 ||
        weft__cat_col_text(st, 17, 0, &row->hosts) < 0 ||
        weft__cat_col_text(st, 18, 0, &row->command) < 0 ||
        weft__cat_col_text(st, 19, 0, &row->job_id) < 0 ||
        weft__cat_col_text(st, 21, 0, &row->run) < 0 ||
        weft__cat_col_text(st, 24, 0, &row->clock) < 0)
        rc = weft__cat_err(c, WEFT_ENOMEM, "catalog %s: out of memory",
                           c->path);
    return rc;
}

static int get_user_version(weft_catalog *c, int64_t *version)
{
    sqlite3_stmt *st = NULL;
    int rc;

    rc = weft__cat_prepare(c, "PRAGMA user_version", &st);
    if (rc < 0)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = weft__cat_db_err(c, "reading the schema version");
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
        return weft__cat_err(c, WEFT_EVERSION, "catalog %s has schema version %"
                             PRId64 ", this weft knows up to %d; upgrade weft",
                             c->path, version, WEFT_CATALOG_SCHEMA_VERSION);
    return 0;
}

int weft__cat_exec(weft_catalog *c, const char *sql, const char *what)
{
    if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return weft__cat_db_err(c, what);
    return 0;
}

void weft__cat_rollback(weft_catalog *c)
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
        rc = weft__cat_exec(c, "BEGIN IMMEDIATE",
                            "starting the schema upgrade");
        if (rc < 0)
            return rc;
        rc = get_user_version(c, &version);
        if (rc == 0)
            rc = check_not_newer(c, version);
        if (rc == 0 && version < 0)
            rc = weft__cat_err(c, WEFT_ECORRUPT,
                               "catalog %s has schema version %"
                               PRId64, c->path, version);
        if (rc < 0 || version == WEFT_CATALOG_SCHEMA_VERSION)
            break;
        rc = weft__cat_exec(c, migrations[version], "upgrading the schema");
        if (rc < 0)
            break;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %" PRId64,
                 version + 1);
        rc = weft__cat_exec(c, sql, "setting the schema version");
        if (rc < 0)
            break;
        rc = weft__cat_exec(c, "COMMIT", "committing the schema upgrade");
        if (rc < 0)
            break;
    }
    if (rc < 0)
        weft__cat_rollback(c);
    else
        rc = weft__cat_exec(c, "COMMIT", "ending the schema check");
    return rc;
}

int weft__cat_setup(weft_catalog *c)
{
    int64_t version = 0;
    int rc;

    if (sqlite3_busy_timeout(c->db, BUSY_TIMEOUT_MS) != SQLITE_OK)
        return weft__cat_db_err(c, "setting the busy timeout");
    rc = weft__cat_exec(c, "PRAGMA foreign_keys = ON", "enabling foreign keys");
    /* Listing 100,000 traces in creation order reads the table through
     * an index, page by page: mapped pages make that about 1.5x faster
     * than copying each into SQLite's small page cache. */
    if (rc == 0)
        rc = weft__cat_exec(c, "PRAGMA mmap_size = 268435456",
                            "mapping the catalog");
    if (rc == 0)
        rc = get_user_version(c, &version);
    if (rc == 0)
        rc = check_not_newer(c, version);
    if (rc < 0)
        return rc;
    if (c->readonly) {
        if (version < WEFT_CATALOG_SCHEMA_VERSION)
            return weft__cat_err(c, WEFT_EVERSION,
                                 "catalog %s has schema version %" PRId64
                                 ", older than %d; start weftd once to "
                                 "upgrade it", c->path, version,
                                 WEFT_CATALOG_SCHEMA_VERSION);
        return 0;
    }
    /* Switching a new file to WAL takes an exclusive lock and SQLite does
     * not wait for it through the busy handler: when two connections open
     * a new catalog at once (weftd's worker jobs), retry for a while. */
    for (int tries = 0;; tries++) {
        rc = weft__cat_exec(c, "PRAGMA journal_mode = WAL",
                            "switching to WAL mode");
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
            weft__cat_err(c, rc, "catalog %s: out of memory", path);
        goto out;
    }
    c->readonly = readonly;
    if (readonly && stat(path, &sb) != 0) {
        int e = errno;
        rc = weft__cat_err(c, e == ENOENT ? WEFT_ENOTFOUND : WEFT_EIO,
                           "catalog %s: %s", path, strerror(e));
        goto out;
    }
    flags = readonly ? SQLITE_OPEN_READONLY
                     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &c->db, flags, NULL) != SQLITE_OK) {
        rc = c->db ? weft__cat_db_err(c, "open")
                   : weft__cat_err(c, WEFT_ENOMEM, "catalog %s: out of memory",
                                   path);
        goto out;
    }
    sqlite3_extended_result_codes(c->db, 1);
    rc = weft__cat_setup(c);
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

/* See catalog.h. */
int weft_catalog_set_sequential_ids(weft_catalog *c, int sequential)
{
    sqlite3_stmt *st = NULL;
    int rc;

    assert(c);
    rc = weft__cat_prepare(c, "UPDATE trace_ids SET sequential = ?", &st);
    if (rc == 0 && (sqlite3_bind_int(st, 1, sequential != 0) != SQLITE_OK ||
                    sqlite3_step(st) != SQLITE_DONE))
        rc = weft__cat_db_err(c, "setting how trace ids are given");
    sqlite3_finalize(st);
    return rc;
}

/* The last failure's message, owned by the handle, "" if none. */
const char *weft_catalog_errmsg(const weft_catalog *c)
{
    return c->errmsg;
}

int weft_catalog_in_transaction(const weft_catalog *c)
{
    return !sqlite3_get_autocommit(c->db);
}

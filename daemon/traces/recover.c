/* recover.c - weftd's start-up scan of the spool.
 *
 * DESIGN: everything weftd acknowledged is in a member journal, so the
 * journals are the whole truth about traces not yet converted. At start,
 * before listening, each SPOOL/traces/KEY/ with journals is rebuilt:
 * torn journal tails are cut (weft_journal_open), every entry is replayed
 * through the same validation the session used when it arrived (so member
 * ids, sequence numbers and clocks are exactly as before the crash), and
 * then
 *  - a trace whose members all said goodbye is converted (again, if a
 *    conversion was interrupted: the archive is always rebuilt from the
 *    journals);
 *  - any other trace waits for its members to reconnect and resume from
 *    the sequence numbers in HelloAck, and is converted as partial after
 *    the grace period if they do not.
 * A directory without journals has been converted and committed (journals
 * are deleted only after that) and is left alone.
 *
 * Damage is reported, never forgotten: a journal recovery cannot use (not
 * a journal, its Hello corrupt or missing, an entry that fails the
 * session's checks) makes its trace `failed` in the catalog, the error
 * naming the file and the offset of the bad entry; the trace is not
 * converted and its journals stay where they are (conversion would delete
 * them). A journal holding only its magic is a process whose Hello was
 * never acknowledged: it is no member and no damage. Afterwards, catalog
 * rows still `recording` or `converting` for which no journal was
 * recovered (a previous weftd died, the journals are gone) become
 * `failed` too, so `weft list --state recording` shows only what really
 * records. These catalog writes are synchronous: recovery runs before the
 * loop does, under the spool lock (spool.h), nothing waits for it.
 */
#include "recover.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "catalog.h"
#include "journal.h"
#include "log.h"
#include "partlink.h"
#include "quota.h"
#include "spool.h"
#include "trace.h"
#include "trace_internal.h"
#include "validate.h"
#include "weft_errors.h"

__attribute__((format(printf, 3, 4)))
static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* What recovery did, for the catalog afterwards. */
typedef struct recovery {
    weft_daemon *d;
    int part;                   /* SPOOL/parts: a node's parts of its
                                   head's traces (partlink.h) */
    weft_catalog *cat;          /* NULL when it cannot be opened */
    char **keys;                /* trace directories with journals */
    size_t nkeys, cap;
} recovery;

static void remember_key(recovery *rec, const char *key)
{
    if (rec->nkeys == rec->cap) {
        size_t cap = rec->cap ? rec->cap * 2 : 16;
        char **v = realloc(rec->keys, cap * sizeof *v);
        if (!v)
            return;
        rec->keys = v;
        rec->cap = cap;
    }
    if ((rec->keys[rec->nkeys] = strdup(key)) != NULL)
        rec->nkeys++;
}

static int key_known(const recovery *rec, const char *key)
{
    for (size_t i = 0; i < rec->nkeys; i++)
        if (strcmp(rec->keys[i], key) == 0)
            return 1;
    return 0;
}

/* Records trace key as failed with error (t: what its good journals told,
 * may be NULL). Logged; the catalog write is best effort. */
static void fail_trace(recovery *rec, const char *tdir, const char *key,
                       const weft_trace *t, const char *error)
{
    weft_daemon *d = rec->d;
    weft_trace_row row = { 0 };
    char name[256], *archive = NULL;
    int64_t created;

    weft_spool_key_parse(key, name, sizeof name, &created);
    row.key = (char *)key;
    row.name = t && t->name ? t->name : name;
    row.uid = t ? t->uid : 0;
    row.created = created;
    row.finished = (int64_t)time(NULL);
    row.members = t ? t->size : 0;
    row.error = (char *)error;
    if ((archive = weft_spool_archive_dir(tdir)) != NULL)
        row.path = archive;
    weft_dlog_ctx(d, WEFT_LOG_ERROR, (&(const weft_log_ctx){ row.name, key,
                                                             -1, NULL }),
                  "recovery: trace '%s' (%s) failed: %s; its journals are "
                  "kept in %s", row.name, key, error, tdir);
    if (!rec->part && rec->cat &&
        weft_catalog_trace_fail(rec->cat, &row) < 0)
        weft_dlog(d, WEFT_LOG_ERROR, "recovery: trace '%s': cannot record "
                  "the failure: %s", row.name,
                  weft_catalog_errmsg(rec->cat));
    free(archive);
}

/* A journaled Goodbye: the member said goodbye, and how it ended. */
static int restore_goodbye(weft_member *m, const weft_journal_entry *e,
                           char *why, size_t whylen)
{
    Weft__Goodbye *g = weft__goodbye__unpack(NULL, e->len, e->payload);
    char *ended = NULL;
    int rc;

    if (!g) {
        snprintf(why, whylen, "the Goodbye entry does not unpack");
        return WEFT_ECORRUPT;
    }
    rc = weft_goodbye_ended(g, &ended, why, whylen);
    m->in.execs = g->exec;
    weft__goodbye__free_unpacked(g, NULL);
    if (rc < 0)
        return rc;
    free(m->in.ended);
    m->in.ended = ended;
    m->in.said_goodbye = 1;
    return 0;
}

/* Takes journal entry e (not a Hello) into m: definitions, events,
 * refused batches, the Goodbye. 0, or a WEFT_E* code with why. */
static int replay_entry(weft_member *m, const weft_journal_entry *e,
                        char *why, size_t whylen)
{
    weft_loc_state *l;
    uint64_t last = 0, charge;
    int rc = 0;

    switch (e->kind) {
    case WEFT_JE_DEFS:
        rc = weft_validate_defs(&m->in, e->payload, e->len, &charge, NULL,
                                why, whylen);
        if (rc == 0) {
            m->trace->def_bytes += charge;
            m->in.defs_seq = m->in.held_defs_seq = e->seq;
        }
        break;
    case WEFT_JE_EVENTS:
        rc = weft_memberin_location(&m->in, e->location, why, whylen);
        if (rc == 0)
            rc = weft_validate_events(&m->in, e->location, e->base_time,
                                      e->count, e->payload, e->len, &last,
                                      NULL, why, whylen);
        if (rc < 0)
            break;
        l = &m->in.locs[e->location];
        l->last_seq = l->held_seq = e->seq;
        if (e->count)
            l->last_time = l->held_time = last;
        l->events += e->count;
        break;
    case WEFT_JE_REFUSED:
        rc = weft_memberin_location(&m->in, e->location, why, whylen);
        if (rc == 0) {
            m->in.locs[e->location].last_seq = e->seq;
            m->in.locs[e->location].held_seq = e->seq;
            m->in.refused += e->count;
            m->in.locs[e->location].refused += e->count;
        }
        break;
    case WEFT_JE_GOODBYE:
        rc = restore_goodbye(m, e, why, whylen);
        break;
    default:
        break;
    }
    return rc;
}

/* Replays one journal (of rank, as its file name says) into member
 * state. Returns 0 or a WEFT_E* code with err naming the file and the
 * offset of the entry that failed. */
static int replay(weft_trace *t, const char *path, const char *name,
                  uint32_t rank, weft_member **mp, char *err, size_t errlen)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    weft_member *m = NULL;
    char why[512];
    uint64_t off = 0;
    struct stat st;
    int rc;

    err[0] = 0;
    rc = weft_journal_reader_open(path, &r);
    if (rc < 0) {
        say(err, errlen, "%s: offset 0: %s", path,
            rc == WEFT_ECORRUPT ? "not a weft journal (bad magic)"
                                : weft_strerror(rc));
        return rc;
    }
    while (off = weft_journal_reader_offset(r),
           (rc = weft_journal_reader_next(r, &e)) == 1) {
        if (e.kind == WEFT_JE_HELLO) {
            Weft__Hello *h = weft__hello__unpack(NULL, e.len, e.payload);
            if (!h) {
                rc = WEFT_ECORRUPT;
                say(err, errlen, "%s: offset %" PRIu64 ": the Hello entry "
                    "does not unpack", path, off);
                break;
            }
            /* The member's journal is the file of its rank: a Hello of
             * another rank (a renamed or damaged file) would have weftd
             * open a second journal for it (found by fuzz_journal). */
            if (h->rank != rank) {
                rc = WEFT_ECORRUPT;
                snprintf(why, sizeof why, "it is of rank %u, but the file "
                         "is rank %u's", h->rank, rank);
            } else if (!m) { /* a reconnect repeats Hello; the first stands */
                rc = weft_trace_restore_member(t, h, &m, why, sizeof why);
                /* a part's: the head gets it again (partlink.h) */
                if (rc == 0 && t->part && t->d->part_cbs) {
                    m->in.in_part = 1;
                    if (t->d->part_cbs->joined(&m->in, e.payload, e.len) < 0)
                        weft_dlog(t->d, WEFT_LOG_ERROR, "recovery: %s: out "
                                  "of memory: its head does not learn of "
                                  "rank %u", path, rank);
                }
            }
            weft__hello__free_unpacked(h, NULL);
            if (rc < 0) {
                say(err, errlen, "%s: offset %" PRIu64 ": Hello: %s", path,
                    off, why);
                break;
            }
            continue;
        }
        if (!m) {
            rc = WEFT_ECORRUPT;
            say(err, errlen, "%s: offset %" PRIu64 ": an entry of kind %u "
                "comes before the Hello", path, off, e.kind);
            break;
        }
        rc = replay_entry(m, &e, why, sizeof why);
        if (rc < 0) {
            say(err, errlen, "%s: offset %" PRIu64 ": %s", path, off, why);
            break;
        }
        /* A part's: what the head may not hold yet goes again (its HelloAck
         * says which Definitions it holds). */
        if (t->part && t->d->part_cbs &&
            (e.kind == WEFT_JE_DEFS || e.kind == WEFT_JE_GOODBYE))
            t->d->part_cbs->journaled(&m->in, &e);
    }
    if (rc == 0 && !m) {
        /* The good data ends before any Hello: a corrupt first entry. */
        if (stat(path, &st) == 0 && (uint64_t)st.st_size > off)
            say(err, errlen, "%s: offset %" PRIu64 ": the Hello entry is "
                "corrupt (bad header or checksum; %" PRIu64 " bytes of "
                "the file follow it)", path, off,
                (uint64_t)st.st_size - off);
        else
            say(err, errlen, "%s (%s): no Hello: the process never "
                "finished its handshake", path, name);
        rc = WEFT_ECORRUPT;
    } else if (rc < 0 && rc != WEFT_ECORRUPT && !err[0]) {
        say(err, errlen, "%s: offset %" PRIu64 ": %s", path, off,
            weft_strerror(rc));
    }
    if (m) { /* its bytes count for its owner until it is converted */
        uint64_t bytes = weft_journal_reader_offset(r) *
                         WEFT_QUOTA_JOURNAL_FACTOR;
        if (weft_quota_live(&t->d->quota, t->uid, (int64_t)bytes) == 0)
            t->charged += bytes;
    }
    weft_journal_reader_close(r);
    *mp = m;
    return rc < 0 ? rc : 0;
}

/* A journal with nothing after its magic (or less): a process whose Hello
 * was never written, so never acknowledged. */
static int journal_empty(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 &&
           (uint64_t)st.st_size <= strlen(WEFT_JOURNAL_MAGIC);
}

/* Rebuilds one trace directory. */
static void recover_trace(recovery *rec, const char *tdir, const char *key)
{
    weft_daemon *d = rec->d;
    DIR *dp = opendir(tdir);
    struct dirent *de;
    weft_trace *t = NULL;
    unsigned members = 0, bad = 0, journals = 0;
    char first_err[768] = "";

    if (!dp) {
        weft_dlog(d, WEFT_LOG_ERROR, "recovery: cannot open %s: %s", tdir,
                  strerror(errno));
        return;
    }
    while ((de = readdir(dp)) != NULL) {
        char *path = NULL, err[768];
        weft_member *m = NULL;
        uint32_t rank;
        uint64_t cut = 0;
        weft_journal *j = NULL;
        int rc;
        if (weft_journal_name_parse(de->d_name, &rank) != 1)
            continue;
        if (asprintf(&path, "%s/%s", tdir, de->d_name) < 0)
            break;
        if (journals++ == 0)
            remember_key(rec, key);
        if (journal_empty(path)) {
            weft_dlog(d, WEFT_LOG_INFO, "recovery: %s: empty (the process's "
                      "Hello was never acknowledged); not a member", path);
            free(path);
            continue;
        }
        /* Cut a torn tail before replaying. */
        rc = weft_journal_open(path, &j, &cut);
        if (rc == 0) {
            weft_journal_close(j);
            if (cut)
                weft_dlog(d, WEFT_LOG_WARNING, "recovery: %s: cut %" PRIu64
                          " bytes of a torn tail (never acknowledged)", path,
                          cut);
        } else if (rc == WEFT_ECORRUPT) {
            weft_dlog(d, WEFT_LOG_ERROR, "recovery: %s: a corrupt entry with "
                      "acknowledged data after it; the file is kept as it is",
                      path);
        }
        if (!t) {
            int64_t created;
            char name[8];
            weft_spool_key_parse(key, name, sizeof name, &created);
            t = weft_trace_restore(d, key, tdir,
                                   created ? created : (int64_t)time(NULL),
                                   err, sizeof err);
            if (!t) {
                weft_dlog(d, WEFT_LOG_ERROR, "recovery: %s: %s", tdir, err);
                free(path);
                break;
            }
            if ((t->part = rec->part))
                t->part_archive = weft__part_archive_read(tdir);
        }
        if (replay(t, path, de->d_name, rank, &m, err, sizeof err) < 0) {
            weft_dlog(d, WEFT_LOG_ERROR, "recovery: %s", err);
            if (bad++ == 0)
                snprintf(first_err, sizeof first_err, "%s", err);
        } else {
            members++;
        }
        free(path);
    }
    closedir(dp);
    if (bad) {
        char error[1024];
        snprintf(error, sizeof error, "recovery cannot use %u of %u member "
                 "journals: %s%s", bad, bad + members, first_err,
                 bad > 1 ? " (the others: see weftd's log)" : "");
        fail_trace(rec, tdir, key, t, error);
        if (t)
            weft_trace_abandon(t);
        return;
    }
    if (journals && (!t || t->joined == 0)) {
        fail_trace(rec, tdir, key, t, "no journal holds acknowledged data "
                   "(every process's Hello was lost)");
        if (t)
            weft_trace_abandon(t);
        return;
    }
    if (!t)
        return;
    weft_tlog(t, WEFT_LOG_INFO, "recovery: trace '%s' (%s): %u member "
              "journals", t->name ? t->name : "?", key, members);
    weft_trace_restored(t);
}

/* A catalog row weftd left recording or converting. */
typedef struct stale_row {
    char *key, *state, *path;
} stale_row;

typedef struct stale_list {
    const recovery *rec;
    const char *traces;         /* SPOOL/traces/ */
    stale_row *v;
    size_t n, cap;
} stale_list;

static int collect_stale(const weft_trace_row *row, void *arg)
{
    stale_list *l = arg;

    if (key_known(l->rec, row->key) ||
        strncmp(row->path, l->traces, strlen(l->traces)) != 0)
        return 0; /* recovered, or not a trace of this spool */
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        stale_row *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].key = strdup(row->key);
    l->v[l->n].state = strdup(row->state);
    l->v[l->n].path = strdup(row->path);
    l->n++;
    return 0;
}

/* Rows still recording or converting with no journal recovered: the
 * weftd that wrote them died and what it journaled is gone. */
static void fail_stale_rows(recovery *rec)
{
    static const char *const states[] = { WEFT_STATE_RECORDING,
                                          WEFT_STATE_CONVERTING };
    stale_list l = { rec, NULL, NULL, 0, 0 };
    char *traces = NULL;

    if (!rec->cat || asprintf(&traces, "%s/traces/", rec->d->cfg.spool) < 0)
        return;
    l.traces = traces;
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        weft_list_filter f = { 0 };
        f.state = states[i];
        if (weft_catalog_query(rec->cat, &f, collect_stale, &l) < 0)
            weft_dlog(rec->d, WEFT_LOG_ERROR, "recovery: cannot list the "
                      "catalog's %s traces: %s", states[i],
                      weft_catalog_errmsg(rec->cat));
    }
    for (size_t i = 0; i < l.n; i++) {
        char error[1024], *tdir = l.v[i].path ? strdup(l.v[i].path) : NULL;
        char *slash = tdir ? strrchr(tdir, '/') : NULL;
        if (l.v[i].key && l.v[i].state && tdir && slash) {
            *slash = 0; /* SPOOL/traces/KEY */
            snprintf(error, sizeof error, "a previous weftd stopped while "
                     "the trace was %s and no journal of it is left in %s",
                     l.v[i].state, tdir);
            fail_trace(rec, tdir, l.v[i].key, NULL, error);
        }
        free(tdir);
        free(l.v[i].key);
        free(l.v[i].state);
        free(l.v[i].path);
    }
    free(l.v);
    free(traces);
}

int weft_recover_parts(weft_daemon *d)
{
    recovery rec = { d, 1, NULL, NULL, 0, 0 };
    char *parts = NULL;
    DIR *dp;
    struct dirent *de;
    int rc = 0;

    if (!d->part_cbs)
        return 0;
    if (asprintf(&parts, "%s/parts", d->cfg.spool) < 0)
        return WEFT_ENOMEM;
    if (!(dp = opendir(parts))) {
        rc = errno == ENOENT ? 0 : WEFT_EIO;
        if (rc < 0)
            weft_dlog(d, WEFT_LOG_ERROR, "cannot read %s: %s", parts,
                      strerror(errno));
        free(parts);
        return rc;
    }
    while ((de = readdir(dp)) != NULL) {
        char *tdir = NULL;
        if (de->d_name[0] == '.')
            continue;
        if (asprintf(&tdir, "%s/%s", parts, de->d_name) < 0)
            break;
        recover_trace(&rec, tdir, de->d_name);
        free(tdir);
    }
    closedir(dp);
    for (size_t i = 0; i < rec.nkeys; i++)
        free(rec.keys[i]);
    free(rec.keys);
    free(parts);
    return 0;
}

int weft_recover_spool(weft_daemon *d)
{
    recovery rec = { d, 0, NULL, NULL, 0, 0 };
    char *traces = NULL, *msg = NULL;
    DIR *dp;
    struct dirent *de;
    int rc = 0;

    /* Runs that ended before this start; restored traces add theirs. */
    weft_trace_load_ended_runs(d);
    if (asprintf(&traces, "%s/traces", d->cfg.spool) < 0)
        return WEFT_ENOMEM;
    if (weft_catalog_open(d->cfg.catalog, 0, &rec.cat, &msg) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "recovery: %s; failed traces are only "
                  "logged", msg ? msg : d->cfg.catalog);
        free(msg);
    }
    dp = opendir(traces);
    if (!dp) {
        rc = errno == ENOENT ? 0 : WEFT_EIO;
        goto out;
    }
    while ((de = readdir(dp)) != NULL) {
        char *tdir = NULL;
        if (de->d_name[0] == '.')
            continue;
        if (asprintf(&tdir, "%s/%s", traces, de->d_name) < 0)
            break;
        recover_trace(&rec, tdir, de->d_name);
        free(tdir);
    }
    closedir(dp);
    fail_stale_rows(&rec);
out:
    weft_catalog_close(rec.cat);
    for (size_t i = 0; i < rec.nkeys; i++)
        free(rec.keys[i]);
    free(rec.keys);
    free(traces);
    return rc;
}

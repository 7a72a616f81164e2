/* reindex.c - weft reindex: rebuilds the catalog from the spool.
 *
 * DESIGN: the spool is the truth (archives and journals); the catalog is
 * an index of it. When the catalog is damaged (weftd refuses to start on
 * it) or lost, reindex writes a new one from SPOOL/traces/KEY/:
 *  - a directory with member journals is a trace weftd has not finished:
 *    it is catalogued `recording` from the first readable Hello (name,
 *    owner, size, hosts, command, job id, tags), and weftd's recovery at
 *    its next start resumes, converts or fails it as usual; when no
 *    journal has a readable Hello it is `failed`, naming the file and
 *    the offset of the bad entry;
 *  - a directory with archive/traces.otf2 and no journal is a converted
 *    trace: its locations, events per location, timer resolution and time
 *    range come from the archive's definitions (libotf2, archive.c's
 *    reader; `weft verify` reads the events back), its name from the
 *    archive's description. What the archive does not hold (owner, state
 *    complete or partial, hosts, command, job id, tags, members, finish
 *    time) comes from the old catalog when it can still read that trace's
 *    row; otherwise the owner is the archive file's owner, the state
 *    complete and the region profile is empty.
 * It holds the spool lock (spool.h) all along, so it never runs beside a
 * weftd on the same spool. The new catalog is written beside the old one
 * and renamed into place; the old one (with its -wal and -shm files) is
 * renamed to CATALOG.old-YYYYmmddTHHMMSSZ, never deleted.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "cli.h"
#include "journal.h"
#include "spool.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

/* What one run did. */
typedef struct reindex {
    const char *spool;
    weft_catalog *old;       /* the old catalog, when it still opens */
    weft_catalog *cat;       /* the new one */
    unsigned archives, journals, failed, skipped, salvaged;
} reindex;

static int key_cmp(const void *a, const void *b)
{
    const char *ka = *(const char *const *)a, *kb = *(const char *const *)b;
    char na[8], nb[8];
    int64_t ta, tb;

    weft_spool_key_parse(ka, na, sizeof na, &ta);
    weft_spool_key_parse(kb, nb, sizeof nb, &tb);
    if (ta != tb)
        return ta < tb ? -1 : 1;
    return strcmp(ka, kb);
}

/* The trace directories' names, oldest first (their catalog ids then
 * follow creation order as weftd's do). */
static int list_keys(const char *traces, char ***out, size_t *n)
{
    DIR *dp = opendir(traces);
    struct dirent *de;
    char **v = NULL;
    size_t cap = 0;

    *n = 0;
    *out = NULL;
    if (!dp)
        return errno == ENOENT ? 0 : -1;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (*n == cap) {
            char **p;
            cap = cap ? cap * 2 : 64;
            if (!(p = realloc(v, cap * sizeof *v)))
                break;
            v = p;
        }
        if (!(v[*n] = strdup(de->d_name)))
            break;
        (*n)++;
    }
    closedir(dp);
    if (*n)
        qsort(v, *n, sizeof *v, key_cmp);
    *out = v;
    return 0;
}

/* The first Hello of the journal at path, or NULL with why (file and
 * offset) in err. */
static Weft__Hello *journal_hello(const char *path, char *err, size_t errlen)
{
    weft_journal_reader *r = NULL;
    weft_journal_entry e;
    Weft__Hello *h = NULL;
    uint64_t off = 0;
    struct stat st;
    int rc;

    rc = weft_journal_reader_open(path, &r);
    if (rc < 0) {
        snprintf(err, errlen, "%s: offset 0: %s", path,
                 rc == WEFT_ECORRUPT ? "not a weft journal (bad magic)"
                                     : weft_strerror(rc));
        return NULL;
    }
    weft_journal_reader_skip(r, WEFT_JE_EVENTS);
    off = weft_journal_reader_offset(r);
    rc = weft_journal_reader_next(r, &e);
    if (rc == 1 && e.kind == WEFT_JE_HELLO) {
        h = weft__hello__unpack(NULL, e.len, e.payload);
        if (!h)
            snprintf(err, errlen, "%s: offset %" PRIu64 ": the Hello entry "
                     "does not unpack", path, off);
    } else if (rc == 1) {
        snprintf(err, errlen, "%s: offset %" PRIu64 ": an entry of kind %u "
                 "comes before the Hello", path, off, e.kind);
    } else if (rc == 0 && stat(path, &st) == 0 &&
               (uint64_t)st.st_size > off) {
        snprintf(err, errlen, "%s: offset %" PRIu64 ": the Hello entry is "
                 "corrupt (bad header or checksum)", path, off);
    } else {
        snprintf(err, errlen, "%s: no Hello: the process never finished "
                 "its handshake", path);
    }
    weft_journal_reader_close(r);
    return h;
}

/* A trace directory with journals: recording from its first readable
 * Hello, or failed. */
static int index_journals(reindex *x, const char *key, const char *tdir,
                          char **journals, size_t nj)
{
    weft_trace_row row = { 0 };
    Weft__Hello *h = NULL;
    char name[256], err[1024] = "", *archive = NULL;
    weft_tag *tags = NULL;
    int rc;

    for (size_t i = 0; i < nj && !h; i++) {
        char e[1024];
        struct stat st;
        if (stat(journals[i], &st) == 0 &&
            (uint64_t)st.st_size <= strlen(WEFT_JOURNAL_MAGIC))
            continue; /* a Hello never acknowledged */
        h = journal_hello(journals[i], e, sizeof e);
        if (!h && !err[0])
            snprintf(err, sizeof err, "%s", e);
    }
    if (!(archive = weft_spool_archive_dir(tdir)))
        return WEFT_ENOMEM;
    weft_spool_key_parse(key, name, sizeof name, &row.created);
    row.key = (char *)key;
    row.path = archive;
    if (h) {
        row.name = h->trace;
        row.uid = h->uid;
        row.members = h->size;
        row.hosts = h->hostname;
        row.command = h->command;
        row.job_id = h->job_id;
        row.protocol_version = h->protocol_version;
        row.state = (char *)WEFT_STATE_RECORDING;
        rc = weft_catalog_trace_begin(x->cat, &row);
        if (rc == 0 && h->n_tags) {
            tags = calloc(h->n_tags, sizeof *tags);
            if (!tags)
                rc = WEFT_ENOMEM;
            for (size_t i = 0; tags && i < h->n_tags; i++) {
                tags[i].key = h->tags[i]->key;
                tags[i].value = h->tags[i]->value;
            }
            if (rc == 0)
                rc = weft_catalog_trace_add_tags(x->cat, row.id, tags,
                                                 h->n_tags);
        }
        x->journals++;
    } else {
        row.name = name;
        row.finished = (int64_t)time(NULL);
        row.error = err[0] ? err : (char *)"no journal holds a Hello";
        rc = weft_catalog_trace_fail(x->cat, &row);
        x->failed++;
        printf("failed: %s: %s\n", key, row.error);
    }
    free(tags);
    if (h)
        weft__hello__free_unpacked(h, NULL);
    free(archive);
    return rc;
}

typedef struct salvage {
    weft_member_row *members;
    size_t nmembers;
    weft_tag *tags;
    size_t ntags;
} salvage;

static int salvage_member(const weft_member_row *m, void *arg)
{
    salvage *s = arg;
    weft_member_row *v = realloc(s->members, (s->nmembers + 1) * sizeof *v);

    if (!v)
        return WEFT_ENOMEM;
    s->members = v;
    v[s->nmembers] = *m;
    v[s->nmembers].host = strdup(m->host ? m->host : "");
    v[s->nmembers].state = strdup(m->state ? m->state : "");
    s->nmembers++;
    return 0;
}

static int salvage_tag(const weft_tag *t, void *arg)
{
    salvage *s = arg;
    weft_tag *v = realloc(s->tags, (s->ntags + 1) * sizeof *v);

    if (!v)
        return WEFT_ENOMEM;
    s->tags = v;
    v[s->ntags].key = strdup(t->key);
    v[s->ntags].value = strdup(t->value);
    s->ntags++;
    return 0;
}

static void salvage_free(salvage *s)
{
    for (size_t i = 0; i < s->nmembers; i++) {
        free(s->members[i].host);
        free(s->members[i].state);
    }
    for (size_t i = 0; i < s->ntags; i++) {
        free(s->tags[i].key);
        free(s->tags[i].value);
    }
    free(s->members);
    free(s->tags);
}

/* A trace whose archive does not open (err says why): catalogued as
 * failed. Returns 0 or a WEFT_E* code. */
static int index_unreadable(reindex *x, const char *key, const char *tdir,
                            char *err)
{
    weft_trace_row row = { 0 };
    char name[256], *archive = NULL;
    int rc;

    if (!(archive = weft_spool_archive_dir(tdir)))
        return WEFT_ENOMEM;
    weft_spool_key_parse(key, name, sizeof name, &row.created);
    row.key = (char *)key;
    row.name = name;
    row.path = archive;
    row.error = err;
    row.finished = (int64_t)time(NULL);
    rc = weft_catalog_trace_fail(x->cat, &row);
    printf("failed: %s: %s\n", key, row.error);
    x->failed++;
    free(archive);
    return rc;
}

/* Frees the n location rows of archive_locations. */
static void locations_free(weft_location_row *locs, size_t n)
{
    for (size_t i = 0; locs && i < n; i++)
        free(locs[i].program);
    free(locs);
}

/* The locations of archive a as catalog rows (malloc'd, with their
 * programs; names and processes point into a), adding their events to
 * *events and the number of ranks to *ranks. A process tree's locations
 * name their process and its program (weft profile --by-program). NULL
 * when out of memory. */
static weft_location_row *archive_locations(const weft__arc *a,
                                            uint64_t *events,
                                            uint32_t *ranks)
{
    weft_location_row *locs = calloc(a->nlocs ? a->nlocs : 1, sizeof *locs);
    const char *process;

    if (!locs)
        return NULL;
    for (size_t i = 0; i < a->nlocs; i++) {
        locs[i].id = a->locs[i].id;
        locs[i].rank = (uint32_t)(a->locs[i].id >> 32);
        locs[i].thread = (uint32_t)a->locs[i].id;
        locs[i].name = (char *)weft__arc_string(a, a->locs[i].name);
        if (weft__arc_tree_process(a, a->locs[i].group, &process,
                                   &locs[i].program) < 0) {
            locations_free(locs, i);
            return NULL;
        }
        locs[i].process = (char *)process;
        locs[i].events = a->locs[i].events;
        *events += a->locs[i].events;
        if (locs[i].rank + 1 > *ranks)
            *ranks = locs[i].rank + 1;
    }
    return locs;
}

/* The members of archive a (weft__arc_members) with their locations and
 * events; malloc'd (*n of them, strings in a), NULL when out of memory. */
static weft_member_row *archive_members(const weft__arc *a, size_t *n)
{
    weft_member_row *members;
    uint32_t *lg_rank;

    if (weft__arc_members(a, &members, n, &lg_rank) < 0)
        return NULL;
    for (size_t i = 0; i < a->nlocs; i++) {
        OTF2_LocationGroupRef g = a->locs[i].group;
        uint32_t r = g < a->nlg_type ? lg_rank[g] : UINT32_MAX;
        if (r < *n) {
            members[r].locations++;
            members[r].events += a->locs[i].events;
        }
    }
    free(lg_rank);
    return members;
}

/* A converted trace: figures from the archive's definitions, the rest
 * from the old catalog's row when it still reads. */
static int index_archive(reindex *x, const char *key, const char *tdir,
                         const char *anchor)
{
    weft_trace_row row = { 0 }, old = { 0 };
    weft_trace_detail detail = { 0 };
    weft_location_row *locs = NULL;
    salvage sv = { 0 };
    weft_member_row *members = NULL;  /* of the archive: no old row */
    size_t nmembers = 0;
    weft__arc a = { 0 };
    char name[256], *archive = NULL, *err = NULL, *desc = NULL;
    char *clock = NULL;
    struct stat st;
    uint32_t ranks = 0;
    size_t nlocs = 0;
    int rc = 0, have_old = 0;

    if (weft__arc_open(&a, anchor, &err) < 0) {
        rc = index_unreadable(x, key, tdir, err);
        goto out;
    }
    if (!(archive = weft_spool_archive_dir(tdir))) {
        rc = WEFT_ENOMEM;
        goto out;
    }
    if (!(locs = archive_locations(&a, &row.events, &ranks))) {
        rc = WEFT_ENOMEM;
        goto out;
    }
    nlocs = a.nlocs;
    if (x->old && weft_catalog_find(x->old, key, &old) == 0 &&
        strcmp(old.key, key) == 0) {
        have_old = 1;
        x->salvaged++;
        weft_catalog_members(x->old, old.id, salvage_member, &sv);
        weft_catalog_tags(x->old, old.id, salvage_tag, &sv);
        row = old;
        if (strcmp(old.state, WEFT_STATE_RECORDING) == 0 ||
            strcmp(old.state, WEFT_STATE_CONVERTING) == 0)
            row.state = (char *)WEFT_STATE_COMPLETE; /* the archive is */
        row.events = 0;
        for (size_t i = 0; i < a.nlocs; i++)
            row.events += a.locs[i].events;
    } else {
        weft_spool_key_parse(key, name, sizeof name, &row.created);
        row.name = name;
        if (OTF2_Reader_GetDescription(a.reader, &desc) == OTF2_SUCCESS &&
            desc && *desc)
            row.name = desc;
        row.state = (char *)WEFT_STATE_COMPLETE;
        row.members = ranks;
        if (!(members = archive_members(&a, &nmembers))) {
            rc = WEFT_ENOMEM;
            goto out;
        }
        row.joined = (uint32_t)nmembers;
        if (stat(anchor, &st) == 0) {
            row.uid = st.st_uid;
            row.finished = (int64_t)st.st_mtime;
        }
    }
    row.key = (char *)key;
    row.path = archive;
    row.locations = a.nlocs;
    row.bytes = weft__arc_bytes(archive);
    row.timer_resolution = a.resolution;
    /* weftd names the processes' clocks in the archive (README, Clocks);
     * an archive older than that keeps what the old catalog said. */
    if (OTF2_Reader_GetProperty(a.reader, "WEFT::CLOCK", &clock) ==
            OTF2_SUCCESS && clock && *clock)
        row.clock = clock;
    if (a.have_clock && row.events) {
        row.time_first = a.offset;
        row.time_last = a.length ? a.offset + a.length - 1 : a.offset;
    }
    detail.locations = locs;
    detail.nlocations = a.nlocs;
    detail.members = have_old ? sv.members : members;
    detail.nmembers = have_old ? sv.nmembers : nmembers;
    detail.tags = sv.tags;
    detail.ntags = sv.ntags;
    rc = weft_catalog_trace_finish_detail(x->cat, &row, &detail);
    x->archives++;
out:
    weft__arc_close(&a);
    if (have_old)
        weft_catalog_trace_free(&old);
    salvage_free(&sv);
    free(members);
    locations_free(locs, nlocs);
    free(desc);
    free(clock);
    free(err);
    free(archive);
    return rc;
}

/* One SPOOL/traces/KEY. Returns 0 or a WEFT_E* code of the new catalog. */
static int index_trace(reindex *x, const char *traces, const char *key)
{
    char *tdir = NULL, *anchor = NULL, **journals = NULL;
    size_t nj = 0;
    DIR *dp;
    struct dirent *de;
    struct stat st;
    int rc = 0;

    if (asprintf(&tdir, "%s/%s", traces, key) < 0)
        return WEFT_ENOMEM;
    if (!(dp = opendir(tdir))) {
        printf("skipped: %s: %s\n", tdir, strerror(errno));
        x->skipped++;
        free(tdir);
        return 0;
    }
    while ((de = readdir(dp)) != NULL) {
        uint32_t rank;
        char **v;
        if (weft_journal_name_parse(de->d_name, &rank) != 1)
            continue;
        if (!(v = realloc(journals, (nj + 1) * sizeof *v)) ||
            asprintf(&v[nj], "%s/%s", tdir, de->d_name) < 0) {
            journals = v ? v : journals;
            rc = WEFT_ENOMEM;
            break;
        }
        journals = v;
        nj++;
    }
    closedir(dp);
    if (rc == 0 && nj) {
        rc = index_journals(x, key, tdir, journals, nj);
    } else if (rc == 0 &&
               asprintf(&anchor, "%s/archive/traces.otf2", tdir) >= 0 &&
               stat(anchor, &st) == 0) {
        rc = index_archive(x, key, tdir, anchor);
    } else if (rc == 0) {
        printf("skipped: %s: no journal and no archive\n", tdir);
        x->skipped++;
    }
    for (size_t i = 0; i < nj; i++)
        free(journals[i]);
    free(journals);
    free(anchor);
    free(tdir);
    return rc;
}

/* Moves path (and its -wal, -shm) to path + suffix. 0 or -1. */
static int move_aside(const char *path, const char *suffix)
{
    static const char *const ext[] = { "", "-wal", "-shm" };

    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        char *from = NULL, *to = NULL;
        int rc = 0;
        if (asprintf(&from, "%s%s", path, ext[i]) < 0 ||
            asprintf(&to, "%s%s%s", path, suffix, ext[i]) < 0)
            rc = -1;
        else if (rename(from, to) != 0 && errno != ENOENT)
            rc = -1;
        if (rc < 0)
            weft__cli_fail("reindex: cannot rename %s to %s: %s", from, to,
                           strerror(errno));
        free(from);
        free(to);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The catalog's directory: the spool when none is given. */
static char *default_spool(const char *catalog)
{
    const char *slash = strrchr(catalog, '/');
    char *dir = NULL;

    if (!slash)
        return strdup(".");
    if (asprintf(&dir, "%.*s", (int)(slash - catalog + (slash == catalog)),
                 catalog) < 0)
        return NULL;
    return dir;
}

/* The old catalog at path, opened read-only to salvage what it still
 * holds, or NULL; says what is wrong with it. */
static weft_catalog *open_old(const char *path)
{
    weft_catalog *old = NULL;
    char *msg = NULL;

    if (weft_catalog_verify(path, &msg) < 0)
        printf("old catalog: %s\n", msg ? msg : "damaged");
    free(msg);
    msg = NULL;
    if (weft_catalog_open(path, 1, &old, &msg) < 0) {
        printf("old catalog: nothing can be read from it (%s)\n",
               msg ? msg : "?");
        old = NULL;
    }
    free(msg);
    return old;
}

/* Puts the new catalog tmp in the place of catalog, giving it to the
 * spool's owner when run as root; the old one, if stamp is not NULL,
 * moves aside to catalog + stamp (filled in here, stampsz bytes).
 * Returns 0, or -1 after saying why. */
static int install(const char *tmp, const char *catalog, const char *spool,
                   char *stamp, size_t stampsz)
{
    time_t now = time(NULL);
    struct stat st;
    struct tm tm;

    /* The new catalog belongs to whoever owns the spool (root running
     * reindex for the weft user's spool). */
    if (geteuid() == 0 && stat(spool, &st) == 0 &&
        chown(tmp, st.st_uid, st.st_gid) != 0)
        printf("warning: cannot give %s to uid %u: %s\n", tmp,
               (unsigned)st.st_uid, strerror(errno));
    if (stamp) {
        gmtime_r(&now, &tm);
        strftime(stamp, stampsz, ".old-%Y%m%dT%H%M%SZ", &tm);
        if (move_aside(catalog, stamp) < 0)
            return -1;
    }
    if (rename(tmp, catalog) != 0) {
        weft__cli_fail("reindex: cannot rename %s to %s: %s", tmp, catalog,
                       strerror(errno));
        return -1;
    }
    return 0;
}

int weft__cmd_reindex(cli *c)
{
    reindex x = { 0 };
    char *spool = NULL, *traces = NULL, *tmp = NULL, *msg = NULL;
    char **keys = NULL, err[1024], stamp[40] = "";
    size_t nkeys = 0;
    int lock = -1, status = EXIT_FAIL, rc, had_old;
    struct stat st;

    spool = c->nargs ? strdup(c->args[0]) : default_spool(c->catalog_path);
    if (!spool || asprintf(&traces, "%s/traces", spool) < 0 ||
        asprintf(&tmp, "%s.reindex-%ld", c->catalog_path,
                 (long)getpid()) < 0) {
        traces = tmp = NULL;
        weft__cli_fail("out of memory");
        goto out;
    }
    x.spool = spool;
    if (stat(traces, &st) != 0 || !S_ISDIR(st.st_mode)) {
        weft__cli_fail("reindex: %s is not a spool (no %s directory)",
                       spool, traces);
        goto out;
    }
    if (weft_spool_lock(spool, "weft-reindex", &lock, err, sizeof err) < 0) {
        weft__cli_fail("reindex: %s%s", err, strstr(err, "in use")
                       ? "; stop weftd first" : "");
        goto out;
    }
    had_old = stat(c->catalog_path, &st) == 0;
    if (had_old)
        x.old = open_old(c->catalog_path);
    unlink(tmp);
    rc = weft_catalog_open(tmp, 0, &x.cat, &msg);
    if (rc < 0) {
        weft__cli_fail("reindex: %s", msg ? msg : weft_strerror(rc));
        goto out;
    }
    if (list_keys(traces, &keys, &nkeys) < 0) {
        weft__cli_fail("reindex: cannot read %s: %s", traces,
                       strerror(errno));
        goto out;
    }
    for (size_t i = 0; i < nkeys; i++) {
        rc = index_trace(&x, traces, keys[i]);
        if (rc < 0) {
            weft__cli_fail("reindex: %s: %s", keys[i],
                           rc == WEFT_ENOMEM ? "out of memory"
                                             : weft_catalog_errmsg(x.cat));
            goto out;
        }
    }
    weft_catalog_close(x.cat);
    x.cat = NULL;
    weft_catalog_close(x.old);
    x.old = NULL;
    if (install(tmp, c->catalog_path, spool, had_old ? stamp : NULL,
                sizeof stamp) < 0)
        goto out;
    printf("catalog %s rebuilt from %s: %u traces from archives (%u with "
           "their old catalog row), %u from journals (recording: weftd "
           "resumes or converts them at its next start), %u failed, %u "
           "skipped\n", c->catalog_path, spool, x.archives, x.salvaged,
           x.journals, x.failed, x.skipped);
    if (had_old)
        printf("the old catalog is kept as %s%s\n", c->catalog_path, stamp);
    status = EXIT_OK;
out:
    weft_catalog_close(x.cat);
    weft_catalog_close(x.old);
    if (status != EXIT_OK && tmp)
        unlink(tmp);
    weft_spool_unlock(lock);
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i]);
    free(keys);
    free(msg);
    free(tmp);
    free(traces);
    free(spool);
    return status;
}

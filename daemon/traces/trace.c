/* trace.c - traces being recorded and their members: joining (three
 * steps, so that the loop never waits for the disk), leaving, the grace
 * period, and recovery's restored traces. Their lifecycle's states are
 * lifecycle.c's, the conversion of a finished trace conversion.c's, the
 * runs that ended ended.c's (trace_internal.h).
 *
 * A trace is one run of a program: members are grouped by (owner, name,
 * run), so two launches with the same name are two traces, concurrent
 * or not. A finished trace stops RECORDING and its run is remembered in
 * d->traces->ended_runs: a member of that run that comes back late (after the
 * grace period) is refused instead of starting a new, otherwise empty
 * trace. Members without a run (older clients) are grouped by name, and
 * a new run with that name starts a new trace once the last one has
 * left.
 *
 * Catalog (the rows are built by catrow.c): the first Hello of a trace
 * queues its row as recording with that member's host, command, job id
 * and tags, so a trace is found by tag and host while it records; the
 * conversion job stores, in one transaction, the figures, locations, one
 * member row per rank (missing for ranks that never came or did not say
 * goodbye), the union of the members' tags (the lowest rank's value
 * wins) and the region profile that conversion computed.
 */
#include "trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "catrow.h"
#include "clock.h"
#include "convq.h"
#include "fail.h"
#include "frame.h"
#include "fsutil.h"
#include "jcache.h"
#include "log.h"
#include "procwatch.h"
#include "spool.h"
#include "partlink.h"
#include "retain.h"
#include "trace_internal.h"
#include "userlim.h"
#include "weft_errors.h"

#define WEFT_MAX_TRACE_NAME 1024
static void member_free(weft_member *m)
{
    if (!m)
        return;
    weft_jcache_forget(&m->in);
    if (m->in.journal)
        weft_journal_close(m->in.journal);
    if (m->in.part && m->in.d->part_cbs)
        m->in.d->part_cbs->freed(&m->in);
    weft_memberin_free(&m->in);
    free(m->command);
    free(m->job_id);
    weft_catrow_free_tags(m->tags, m->ntags);
    free(m);
}

void weft__trace_free(weft_trace *t)
{
    if (!t)
        return;
    weft_quota_live(&t->d->quota, t->uid, -(int64_t)t->charged);
    weft__stream_free(t);
    for (size_t i = 0; i < t->members.ncells; i++)
        member_free(weft_trace_member_at(t, i));
    if (t->part_link && t->d->part_cbs)
        t->d->part_cbs->released(t->part_link, t->part_ended);
    weft_hashtab_free(&t->members);
    weft__tree_free(t);
    free(t->name);
    free(t->run);
    free(t->key);
    free(t->dir);
    free(t->made.key);
    free(t->made.dir);
    free(t->part_archive);
    free(t);
}

/* ---- the members table (trace.h): proto/hashtab.h on a mixed rank ---- */

static uint32_t member_key(uint32_t rank)
{
    uint32_t h = rank + 1;  /* never 0: rank < size <= UINT32_MAX */

    h ^= h >> 16; /* murmur3's finalizer: strided ranks spread too */
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

weft_member *weft_trace_member(const weft_trace *t, uint32_t rank)
{
    const weft_member_cell *c =
        weft_hashtab_find(&t->members, member_key(rank), sizeof *c);

    return c ? c->m : NULL;
}

weft_member *weft_trace_member_at(const weft_trace *t, size_t i)
{
    const weft_member_cell *c =
        weft_hashtab_at(&t->members, i, sizeof *c);

    return c ? c->m : NULL;
}

/* Adds m (its rank not in t yet). 0 or WEFT_ENOMEM. */
static int members_put(weft_trace *t, weft_member *m)
{
    weft_member_cell *c =
        weft_hashtab_get(&t->members, member_key(m->in.rank), sizeof *c);

    if (!c)
        return WEFT_ENOMEM;
    c->m = m;
    return 0;
}

static void members_del(weft_trace *t, uint32_t rank)
{
    weft_hashtab_del(&t->members, member_key(rank),
                     sizeof(weft_member_cell));
}

static int member_rank_cmp(const void *a, const void *b)
{
    uint32_t x = (*(weft_member *const *)a)->in.rank,
             y = (*(weft_member *const *)b)->in.rank;

    return (x > y) - (x < y);
}

weft_member **weft_trace_members(const weft_trace *t)
{
    weft_member **v = malloc((t->joined ? t->joined : 1) * sizeof *v);
    uint32_t n = 0;

    if (!v)
        return NULL;
    for (size_t i = 0; i < t->members.ncells; i++)
        if (weft_trace_member_at(t, i))
            v[n++] = weft_trace_member_at(t, i);
    qsort(v, n, sizeof *v, member_rank_cmp);
    return v;
}

/* Hello.run, "" when absent (an older client). */
static const char *hello_run(const Weft__Hello *h)
{
    return h->run ? h->run : "";
}

static void convert_when_written(weft_trace *t);

/* t stops recording (RECORDING -> SYNCING): its run is remembered as
 * ended, and it converts once its members' writes are done. */
static void trace_end(weft_trace *t)
{
    if (!t->part)
        weft__ended_remember(t);
    if (weft_trace_on(t, WEFT_TEV_END) == 0)
        convert_when_written(t);
}

/* SYNCING: converts t unless a journal write or fdatasync of a member
 * is still out (weft_trace_synced or weft_member_written come back
 * here once it is done). */
static void convert_when_written(weft_trace *t)
{
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        if (m && (m->in.sync_running || m->in.pending))
            return;
    }
    if (weft_trace_on(t, WEFT_TEV_WRITTEN) == 0)
        weft__trace_convert(t);
}

/* ---- joining and leaving ----
 *
 * A Hello joins in three steps (trace.h): in memory on the loop thread;
 * the disk work (mkdir of a new trace's directory, the journal's open and
 * header) on the journal writer's open thread, one member after the
 * other, so a trace's directory exists before its members' journals are
 * opened in it; the result back on the loop thread. A new trace is in
 * RECORDING from the first step on, so the run's other members join it
 * while its directory is being made.
 */

static int check_hello(const weft_daemon *d, const Weft__Hello *h, char *err,
                       size_t errlen)
{
    size_t n = strlen(h->trace);

    if (n == 0)
        return weft__fail(err, errlen, WEFT_EINVAL, "Hello: empty trace name");
    if (n > WEFT_MAX_TRACE_NAME)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: trace name of %zu "
                          "bytes exceeds %d",
                          n, WEFT_MAX_TRACE_NAME);
    if (h->tree && h->size != 0)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: a process tree's member says the trace "
                          "has %u members (0: as many as join)", h->size);
    if (!h->tree && (h->size == 0 || h->size > d->cfg.max_members))
        return weft__fail(err, errlen, WEFT_ELIMIT,
                          "Hello: trace size %u is not "
                          "between 1 and max_members (%" PRIu64 ")",
                          h->size, d->cfg.max_members);
    if (!h->tree && h->rank >= h->size)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: rank %u is not below "
                          "the trace size %u",
                          h->rank, h->size);
    if (h->timer_resolution == 0)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: timer_resolution is 0");
    if (!weft_clock_name(h->clock, h->timer_resolution))
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: clock '%.32s' is not "
                          "monotonic or tsc",
                          h->clock);
    n = strlen(hello_run(h));
    if (n > WEFT_MAX_TRACE_NAME)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: run id of %zu bytes "
                          "exceeds %d",
                          n, WEFT_MAX_TRACE_NAME);
    if ((n = strlen(h->hostname)) > WEFT_MAX_HOSTNAME)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: host name of %zu "
                          "bytes exceeds %d",
                          n, WEFT_MAX_HOSTNAME);
    if ((n = strlen(h->command)) > WEFT_MAX_COMMAND)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: command line of %zu "
                          "bytes exceeds %d",
                          n, WEFT_MAX_COMMAND);
    if ((n = strlen(h->job_id)) > WEFT_MAX_JOB_ID)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "Hello: job id of %zu bytes "
                          "exceeds %d",
                          n, WEFT_MAX_JOB_ID);
    return 0;
}

/* A new trace of h's run, in memory only: its directory is made by its
 * first member's open job (weft_member_open), so that the loop thread
 * never waits for the disk; its key and dir are the ones that job tries
 * first. RECORDING at once, so that the run's other members find it
 * meanwhile. NULL when out of memory. */
static weft_trace *trace_new(weft_daemon *d, const Weft__Hello *h,
                             uint32_t uid)
{
    weft_trace *t = calloc(1, sizeof *t);
    time_t now = time(NULL);
    char *traces = NULL;

    if (!t)
        return NULL;
    t->d = d;
    t->uid = uid;
    t->size = h->size;
    t->tree = h->tree;
    t->part = d->part_cbs && !h->tree;
    t->created = (int64_t)now;
    t->name = strdup(h->trace);
    t->run = strdup(hello_run(h));
    t->made.serial = weft_spool_key_random(); /* unguessable: spool.h */
    t->key = weft_spool_key_make(h->trace, now, t->made.serial);
    /* A part's journals are not a trace of this weftd's: apart, where
     * neither recovery nor retention looks (SPOOL/parts). */
    traces = weft_path_join(d->cfg.spool, t->part ? "parts" : "traces");
    if (!t->name || !t->run || !t->key || !traces ||
        !(t->dir = weft_path_join(traces, t->key))) {
        free(traces);
        weft__trace_free(t);
        return NULL;
    }
    free(traces);
    weft__trace_push(t);  /* RECORDING */
    return t;
}

/* Open thread: makes t's directory, SPOOL/traces/KEY, with the key
 * trace_new chose or, when an earlier run of weftd took it, the next
 * serial's, and its archive's outside the spool ([cluster]
 * archive_root); sets t->made. */
static void make_dir(weft_trace *t)
{
    weft_trace_made *md = &t->made;
    char *traces = strdup(t->dir), *key = NULL, *dir = NULL;
    /* (set at start; a part's archive is its head's) */
    const char *root = t->part ? "" : t->d->cfg.archive_root;

    if (!traces || !strrchr(traces, '/')) {
        md->rc =
            weft__fail(md->err, sizeof md->err, WEFT_ENOMEM, "out of memory");
        goto out;
    }
    *strrchr(traces, '/') = 0;
    if (weft_mkdir_p(traces, 0755, WEFT_TRACES_DIR_MODE) != 0) {
        md->rc = weft__fail(md->err, sizeof md->err, WEFT_EIO, "cannot create "
                            "trace directory under %s: %s", traces,
                            strerror(errno));
        goto out;
    }
    /* A directory of its own: keys of an earlier run may be taken. */
    for (int tries = 0;; tries++) {
        free(key);
        free(dir);
        dir = NULL;
        key = tries ? weft_spool_key_make(t->name, (time_t)t->created,
                               md->serial + (uint64_t)tries)
                    : strdup(t->key);
        if (!key || !(dir = weft_path_join(traces, key))) {
            md->rc = weft__fail(md->err, sizeof md->err, WEFT_ENOMEM,
                                "out of memory");
            goto out;
        }
        if (mkdir(dir, WEFT_TRACE_DIR_MODE) == 0) {
            /* its archive outside the spool (spool.h), if so configured;
             * its key taken there: the next */
            int rc = *root ? weft_spool_archive_make(root, key, dir, md->err,
                                                     sizeof md->err)
                           : 0;
            if (rc == 0) {
                md->serial += (uint64_t)tries;
                break;
            }
            rmdir(dir);
            if (rc != WEFT_EEXIST || tries == 1000) {
                md->rc = rc == WEFT_EEXIST
                             ? weft__fail(md->err, sizeof md->err, WEFT_EIO,
                                          "no free archive directory in %s",
                                          root)
                             : rc;
                goto out;
            }
            continue;
        }
        if (errno != EEXIST || tries == 1000) {
            md->rc = weft__fail(md->err, sizeof md->err, WEFT_EIO,
                                "cannot create "
                                "trace directory %s: %s",
                                dir, strerror(errno));
            goto out;
        }
    }
    md->key = key;
    md->dir = dir;
    key = dir = NULL;
    md->rc = 1;
out:
    free(key);
    free(dir);
    free(traces);
}

/* Loop thread: the job that made t's directory is back. On a collision
 * t takes the key that was used instead. */
static void adopt_dir(weft_trace *t)
{
    char *key, *dir;

    if (strcmp(t->dir, t->made.dir) != 0 &&
        (key = strdup(t->made.key)) != NULL &&
        (dir = strdup(t->made.dir)) != NULL) {
        free(t->key);
        free(t->dir);
        t->key = key;
        t->dir = dir;
    }
    weft_tlog(t, WEFT_LOG_INFO, "trace '%s': new, %u members, run %s, "
              "spool %s", t->name, t->size, t->run[0] ? t->run : "-",
              t->dir);
}

/* The member of t of rank `rank` (h's, or the one a tree gives), in
 * memory (copies of what its Hello says for the catalog): neither in t
 * yet nor with a journal. 0 or WEFT_ENOMEM. */
static int member_alloc(weft_trace *t, const Weft__Hello *h, uint32_t rank,
                        weft_member **out, char *err, size_t errlen)
{
    weft_member *m = calloc(1, sizeof *m);

    if (!m || !(m->in.host = strdup(h->hostname)) ||
        !(m->command = strdup(h->command)) ||
        !(m->job_id = strdup(h->job_id)) ||
        (h->n_tags && !(m->tags = calloc(h->n_tags, sizeof *m->tags)))) {
        member_free(m);
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < h->n_tags; i++) {
        m->tags[i].key = strdup(h->tags[i]->key);
        m->tags[i].value = strdup(h->tags[i]->value);
        m->ntags = i + 1;
        if (!m->tags[i].key || !m->tags[i].value) {
            member_free(m);
            return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
        }
    }
    m->protocol_version = h->protocol_version;
    m->in.d = t->d;
    m->in.member = m;
    m->in.uid = t->uid;
    m->in.size = t->tree ? UINT32_MAX : t->size;
    m->in.start_time = h->clock_at_realtime;
    m->in.resolution = h->timer_resolution;
    m->trace = t;
    m->in.rank = rank;
    m->in.pid = h->pid;
    m->in.parent_pid = h->tree ? h->parent_pid : 0;
    m->remote = h->events_node && *h->events_node; /* (restored) */
    t->nodes_files |= m->remote;
    *out = m;
    return 0;
}

/* Opens m's journal, dir/rank-R.wj, for appending (an existing journal is
 * kept: a restart resumes it; restoring, a damaged one is kept as it
 * is, with no journal open). Any thread. */
static int open_journal(weft_member *m, const char *dir, int restoring,
                        char *err, size_t errlen)
{
    char name[32], *path;
    int rc;

    weft_journal_name(name, sizeof name, m->in.rank);
    path = weft_path_join(dir, name);
    rc = path ? weft_journal_open(path, &m->in.journal, NULL) : WEFT_ENOMEM;
    if (rc == WEFT_ECORRUPT && restoring) {
        /* Acknowledged data lies beyond the damage: keep the file as it
         * is for conversion to report, and let nobody append to it. */
        m->damaged = 1;
        rc = 0;
    }
    if (rc < 0)
        weft__fail(err, errlen, rc, "cannot open journal %s: %s",
                   path ? path : name, rc == WEFT_EIO ? strerror(errno)
                                                      : weft_strerror(rc));
    free(path);
    return rc;
}

/* Member m of t says Hello again: 0 if it may resume where its journal
 * is, else the WEFT_E* code with err (connected already, finished, its
 * last batches still being written, its journal damaged). */
static int check_rejoin(const weft_trace *t, const weft_member *m, char *err,
                        size_t errlen)
{
    if (m->in.conn)
        return weft__fail(err, errlen, WEFT_EEXIST,
                          "rank %u of trace '%s' is "
                          "already connected (host %s, pid %u)",
                          m->in.rank, t->name, m->in.host, m->in.pid);
    if (m->in.said_goodbye)
        return weft__fail(err, errlen, WEFT_EEXIST,
                          "rank %u of trace '%s' has "
                          "already finished",
                          m->in.rank, t->name);
    if (m->in.gone)
        return weft__fail(err, errlen, WEFT_EEXIST,
                          "rank %u of trace '%s' ended: its process %u "
                          "is gone",
                          m->in.rank, t->name, m->in.pid);
    if (m->in.pending) /* HelloAck must report what is journaled */
        return weft__fail(
            err, errlen, WEFT_EEXIST,
            "rank %u of trace '%s': what "
            "its previous connection sent is still being written to "
            "the journal; try again",
            m->in.rank, t->name);
    if (m->damaged)
        return weft__fail(err, errlen, WEFT_ECORRUPT,
                          "the journal of rank %u of "
                          "trace '%s' is damaged; the trace cannot go on",
                          m->in.rank, t->name);
    return 0;
}

/* The recording trace of h's run (the same owner, name and run), or
 * NULL. */
static weft_trace *recording(weft_daemon *d, const Weft__Hello *h,
                             uint32_t uid)
{
    const char *run = hello_run(h);
    weft_trace *t;

    for (t = d->traces->lists[WEFT_TRACE_RECORDING]; t; t = t->next)
        if (t->uid == uid && t->run && strcmp(t->run, run) == 0 &&
            strcmp(t->name, h->trace) == 0)
            break;
    return t;
}

int weft_trace_part_here(weft_daemon *d, const Weft__Hello *h, uint32_t uid)
{
    weft_trace *t = h->tree ? NULL : recording(d, h, uid);

    return t && t->part && weft_trace_member(t, h->rank);
}

/* The trace h joins, RECORDING: an existing one of its run (*created 0),
 * else a new one (1), within the owner's limits. 0, or the WEFT_E* code
 * with err and *limit. */
static int find_trace(weft_daemon *d, const Weft__Hello *h, uint32_t uid,
                      weft_trace **out, int *created, enum weft_limit *limit,
                      char *err, size_t errlen)
{
    const char *run = hello_run(h);
    const weft_ended_run *e;
    weft_trace *t;
    uint64_t mine = 0;
    int rc;

    *created = 0;
    t = recording(d, h, uid);
    if (t && t->tree != h->tree)
        return weft__fail(err, errlen, WEFT_EINVAL, "trace '%s' is %sa "
                          "process tree but this process says it is%s",
                          t->name, t->tree ? "" : "not ",
                          t->tree ? " not" : "");
    if (t && !t->tree && t->size != h->size)
        return weft__fail(err, errlen, WEFT_EINVAL,
                          "trace '%s' has %u members but "
                          "this process says %u",
                          t->name, t->size, h->size);
    if ((*out = t) != NULL)
        return 0;
    /* (a part ends with its members here; the head says whether its
     * trace did) */
    if (run[0] && !(d->part_cbs && !h->tree) &&
        (e = weft__ended_find(d, uid, h->trace, run)) != NULL)
        return weft__ended_refuse(e, h->rank, err, errlen);
    for (weft_trace *o = d->traces->lists[WEFT_TRACE_RECORDING]; o;
         o = o->next)
        mine += o->uid == uid;
    if (mine >= d->cfg.max_traces_per_user) {
        *limit = WEFT_LIMIT_MAX_TRACES_PER_USER;
        return weft__fail(err, errlen, WEFT_ELIMIT,
                          "uid %u has %" PRIu64 " traces recording already: "
                          "max_traces_per_user is %" PRIu64,
                          uid, mine, d->cfg.max_traces_per_user);
    }
    if ((rc = weft_retain_check_user(d, uid, err, errlen)) < 0) {
        *limit = WEFT_LIMIT_MAX_USER_SPOOL_BYTES;
        return rc;
    }
    if ((rc = weft_diskres_check(&d->diskres, d->cfg.spool,
                                 d->cfg.min_free_spool_bytes,
                                 uv_now(d->loop),
                                 weft_quota_promised(&d->quota), 0, err,
                                 errlen)) < 0) {
        *limit = WEFT_LIMIT_MIN_FREE_SPOOL_BYTES;
        return rc;
    }
    if (!(*out = trace_new(d, h, uid)))
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    *created = 1;
    return 0;
}

int weft_trace_join_begin(weft_daemon *d, const Weft__Hello *h, uint32_t uid,
                          weft_memberin **out, enum weft_limit *limit,
                          char *err, size_t errlen)
{
    enum weft_limit lim = WEFT_LIMIT_NONE;
    weft_trace *t = NULL;
    weft_member *m = NULL;
    uint32_t rank = h->rank;
    int rc, created = 0;

    if (limit)
        *limit = WEFT_LIMIT_NONE;
    rc = check_hello(d, h, err, errlen);
    if (rc == 0)
        rc = find_trace(d, h, uid, &t, &created, &lim, err, errlen);
    else if (rc == WEFT_ELIMIT) /* the one limit it checks */
        lim = WEFT_LIMIT_MAX_MEMBERS;
    if (rc == 0 && h->rank != UINT32_MAX && /* a tree's new member */
        (m = weft_trace_member(t, h->rank)) != NULL) {
        if ((rc = check_rejoin(t, m, err, errlen)) < 0)
            goto out;
        /* The same member coming back: resume where the journal is. */
        t->connected++;
        t->idle_since = 0;
        *out = &m->in;
        return 0;
    }
    if (rc == 0 && t->tree)
        rc = weft__tree_rank(t, h, &rank, &lim, err, errlen);
    if (rc == 0 && (rc = weft_userlim_members(d, uid, err, errlen)) < 0)
        lim = WEFT_LIMIT_MAX_MEMBERS_PER_USER;
    if (rc == 0)
        rc = member_alloc(t, h, rank, &m, err, errlen);
    if (rc == 0 && (rc = members_put(t, m)) < 0) {
        member_free(m);
        weft__fail(err, errlen, rc, "out of memory");
    }
    if (rc < 0)
        goto out;
    m->makes_dir = created;
    t->joined++;
    if (t->tree)
        weft__tree_joined(t, &m->in);
    t->connected++;
    t->idle_since = 0;
    *out = &m->in;
    return 1;
out:
    if (created) /* nothing of it reached the disk */
        weft_trace_on(t, WEFT_TEV_FORGET);
    if (limit)
        *limit = lim;
    return rc;
}

int weft_member_open(weft_memberin *in, char *err, size_t errlen)
{
    weft_member *m = in->member;
    weft_trace *t = m->trace;

    if (m->makes_dir)
        make_dir(t);
    if (t->made.rc < 0)
        return weft__fail(err, errlen, t->made.rc, "%s", t->made.err);
    /* A trace restored at start has its directory, and no made.dir. */
    return open_journal(m, t->made.dir ? t->made.dir : t->dir, 0, err,
                        errlen);
}

void weft_trace_join_end(weft_memberin *in, int rc, int connected)
{
    weft_member *m = in->member;
    weft_trace *t = m->trace;
    int made = m->makes_dir && t->made.rc > 0;

    m->makes_dir = 0;
    if (made)
        adopt_dir(t);
    if (rc < 0) { /* the rank is not taken */
        members_del(t, m->in.rank);
        t->joined--;
        if (t->tree)
            t->size = t->joined;
        if (connected)
            t->connected--;
        member_free(m);
    }
    if (t->made.rc < 0) {
        /* Its directory could not be made: a later Hello starts the run
         * afresh; the members that joined meanwhile fail the same way. */
        if (t->state == WEFT_TRACE_RECORDING)
            weft_trace_on(t, WEFT_TEV_NO_DIR);
        if (t->joined == 0)
            weft_trace_on(t, WEFT_TEV_FORGET);
        return;
    }
    if (made && !t->part)
        /* with this member's host, command and tags */
        weft_catrow_queue_begin(t);
    if (rc < 0) {
        /* A trace this Hello just made has nobody connected: let the
         * grace period reclaim it rather than keep it recording. */
        if (t->connected == 0 && !t->idle_since)
            t->idle_since = uv_now(t->d->loop);
        weft_trace_synced(t); /* a conversion may wait for this job */
    }
}

int weft_trace_join(weft_daemon *d, const Weft__Hello *h, uint32_t uid,
                    weft_member **out, char *err, size_t errlen)
{
    weft_memberin *in = NULL;
    int rc = weft_trace_join_begin(d, h, uid, &in, NULL, err, errlen);
    weft_member *m = in ? in->member : NULL;

    if (rc == 1) {
        rc = weft_member_open(in, err, errlen);
        weft_trace_join_end(in, rc, 1);
    }
    if (rc < 0)
        return rc;
    *out = m;
    return 0;
}

/* ---- recovery (see recover.c) ---- */

weft_trace *weft_trace_restore(weft_daemon *d, const char *key,
                               const char *dir, int64_t created, char *err,
                               size_t errlen)
{
    weft_trace *t = calloc(1, sizeof *t);

    if (!t || !(t->key = strdup(key)) || !(t->dir = strdup(dir))) {
        weft__trace_free(t);
        weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
        return NULL;
    }
    t->d = d;
    t->created = created;
    t->restored = 1;
    weft__trace_push(t);  /* RECORDING */
    return t;
}

int weft_trace_restore_member(weft_trace *t, const Weft__Hello *h,
                              weft_member **out, char *err, size_t errlen)
{
    weft_member *m = NULL;
    int rc = check_hello(t->d, h, err, errlen);

    if (rc < 0)
        return rc;
    if (!t->name) { /* the first journal names the trace */
        t->name = strdup(h->trace);
        t->run = strdup(hello_run(h));
        if (!t->name || !t->run)
            return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
        t->size = h->size;
        t->tree = h->tree;
        t->uid = h->uid;
    }
    if (strcmp(t->name, h->trace) != 0 || strcmp(t->run, hello_run(h)) ||
        t->tree != h->tree || (!t->tree && t->size != h->size))
        return weft__fail(
            err, errlen, WEFT_ECORRUPT,
            "Hello of trace '%s' (run "
            "'%s') with %u members%s in the directory of trace '%s' "
            "(run '%s') with %u%s",
            h->trace, hello_run(h), h->size, h->tree ? " (a tree)" : "",
            t->name, t->run, t->size, t->tree ? " (a tree)" : "");
    if (t->tree && h->rank == UINT32_MAX)
        return weft__fail(err, errlen, WEFT_ECORRUPT, "a process tree's "
                          "member without a rank");
    if (weft_trace_member(t, h->rank))
        return weft__fail(err, errlen, WEFT_ECORRUPT,
                          "a second journal for rank "
                          "%u",
                          h->rank);
    rc = member_alloc(t, h, h->rank, &m, err, errlen);
    if (rc == 0 && (rc = open_journal(m, t->dir, 1, err, errlen)) == 0 &&
        (rc = members_put(t, m)) < 0)
        weft__fail(err, errlen, rc, "out of memory");
    if (rc == 0 && m->in.journal) /* no descriptor until it is written */
        weft_journal_park(m->in.journal);
    if (rc < 0) {
        member_free(m);
        return rc;
    }
    t->joined++;
    if (t->tree)
        weft__tree_joined(t, &m->in);
    *out = m;
    return 0;
}

void weft_trace_abandon(weft_trace *t)
{
    weft_trace_on(t, WEFT_TEV_FORGET);
}

void weft_trace_restored(weft_trace *t)
{
    weft_daemon *d = t->d;
    unsigned damaged = 0;

    if (t->joined == 0) {
        /* Nothing readable: keep the files for inspection, forget it. */
        weft_trace_on(t, WEFT_TEV_FORGET);
        return;
    }
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        if (m && m->in.said_goodbye)
            t->goodbyes++;
        if (m && m->damaged)
            damaged++;
    }
    /* in case weftd died before the row was written */
    if (!t->part)
        weft_catrow_queue_begin(t);
    if (damaged) {
        weft_tlog(t, WEFT_LOG_ERROR,
                  "trace '%s': %u member journals are "
                  "damaged in the middle (not a torn tail); converting now, "
                  "the catalog will say where",
                  t->name, damaged);
        trace_end(t);
        return;
    }
    if (t->goodbyes == (t->part ? t->joined : t->size)) {
        trace_end(t);
        return;
    }
    weft_tlog(t, WEFT_LOG_INFO, "trace '%s': %u of %u members done; waiting "
              "up to %" PRIu64 " s for the others to reconnect", t->name,
              t->goodbyes, t->size, d->cfg.grace_period);
    t->idle_since = uv_now(d->loop);
}

/* 1 (after ending t) when every member of t is done: said goodbye, or
 * its process is gone; of a tree, unless it waits for a process to join
 * (tree.c). */
static int end_if_done(weft_trace *t)
{
    /* (a part has the members that joined here: the others are other
     * nodes', or its head's; and it writes their events once its head
     * said where, or said it will not) */
    if (t->goodbyes + t->gone < (t->part ? t->joined : t->size) ||
        t->nexpected || (t->part && !t->part_archive && !t->part_refused))
        return 0;
    if (t->gone)
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s': %u of %u members said "
                  "goodbye, the processes of the others are gone; "
                  "converting", t->name, t->goodbyes, t->size);
    trace_end(t);
    return 1;
}

/* Member in of t left without goodbye and weftd watches its process (or
 * its node said it ended): if that is gone, the member is done (without
 * its last buffers). Returns 1 when that ended t. */
static int check_gone(weft_trace *t, weft_memberin *in)
{
    if (in->gone ||
        !(in->node_gone || weft_proc_gone(in->pid, in->proc_start)))
        return 0;
    in->gone = 1;
    t->gone++;
    if (in->part && t->d->part_cbs)
        t->d->part_cbs->ended(in, 1);
    weft_tlog(t, WEFT_LOG_WARNING, "trace '%s' rank %u: its process %u is "
              "gone without goodbye (killed, or ended where libweft could "
              "not see it); what it had not sent is lost", t->name,
              in->rank, in->pid);
    return end_if_done(t);
}

/* See trace_internal.h. */
void weft__trace_check_done(weft_trace *t)
{
    if (t->state == WEFT_TRACE_RECORDING)
        end_if_done(t);
}

void weft_trace_member_left(weft_memberin *in)
{
    weft_trace *t = in->member->trace;

    t->connected--;
    if (in->said_goodbye) {
        t->goodbyes++;
        t->aborting |= in->ended != NULL;
        if (t->tree)
            weft__tree_left(t, in);
        if (end_if_done(t))
            return;
    } else if ((in->watched || in->node_gone) && check_gone(t, in)) {
        return;
    }
    if (t->connected == 0)
        t->idle_since = uv_now(t->d->loop);
}

/* The members of t (RECORDING) that left without goodbye and whose
 * processes weftd watches: those gone are done; and the processes a
 * tree waits for that will not join now (tree.c). 1 when that ended t. */
static int check_left(weft_trace *t)
{
    if (t->nexpected && weft__tree_check(t) && end_if_done(t))
        return 1;
    if (t->connected + t->goodbyes + t->gone >= t->joined)
        return 0; /* none left so */
    for (size_t i = 0; i < t->members.ncells; i++) {
        weft_member *m = weft_trace_member_at(t, i);
        if (m && !m->in.conn && !m->in.said_goodbye &&
            (m->in.watched || m->in.node_gone) && check_gone(t, &m->in))
            return 1;
    }
    return 0;
}

int weft_member_written(weft_memberin *in)
{
    weft_trace *t = in->member->trace;

    if (t->state != WEFT_TRACE_SYNCING)
        return 0;
    weft_trace_synced(t);
    return 1;
}

void weft_trace_synced(weft_trace *t)
{
    if (t->state == WEFT_TRACE_SYNCING)
        convert_when_written(t);
}

void weft_trace_check_idle(weft_daemon *d)
{
    uint64_t now = uv_now(d->loop);
    uint64_t grace;
    weft_trace *t, *next;

    weft_convq_next(d);  /* one the converter could not take before */
    for (t = d->traces->lists[WEFT_TRACE_RETRY_WAIT]; t; t = next) {
        next = t->next;
        if (d->stopping || now < t->retry_at)
            continue;
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s': %s again", t->name,
                  t->part ? "writing this node's part" : "converting");
        if (weft_trace_on(t, WEFT_TEV_RETRY) == 0)
            convert_when_written(t);
    }
    for (t = d->traces->lists[WEFT_TRACE_RECORDING]; t; t = next) {
        next = t->next;
        if (check_left(t))
            continue;
        grace = d->cfg.grace_period;
        if (t->aborting && d->cfg.abort_grace_period < grace)
            grace = d->cfg.abort_grace_period;
        if (t->idle_since && now - t->idle_since >= grace * 1000) {
            weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': no process connected "
                      "for %" PRIu64 " s%s; %u of %u said goodbye, converting "
                      "what arrived", t->name, grace,
                      t->aborting ? " after one ended abnormally" : "",
                      t->goodbyes, t->size);
            trace_end(t);
        }
    }
}

/* Frees the traces still recording (at exit); their journals stay. */
void weft_trace_free_all(weft_daemon *d)
{
    /* Those converting belong to their jobs, which are all back by now;
     * the others' journals stay (the next start converts them). */
    static const enum weft_trace_state held[] = {
        WEFT_TRACE_RECORDING, WEFT_TRACE_SYNCING, WEFT_TRACE_RETRY_WAIT,
        WEFT_TRACE_DROPPED };

    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++)
        while (d->traces->lists[held[i]])
            weft_trace_on(d->traces->lists[held[i]], WEFT_TEV_FORGET);
    weft__ended_free_all(d);
    weft_convq_free(d->traces->convq); /* its per-user entries, all empty */
    free(d->traces->convq);
    d->traces->convq = NULL;
}

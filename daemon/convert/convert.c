/* convert.c - journals of a finished trace -> one OTF2 archive: the
 * members, the result, and weft_convert_trace, which runs it all
 * (reading a journal and pass 1: convert_read.c; the clocks:
 * convclock.c).
 *
 * DESIGN: two passes over the member journals (rank-<R>.wj), in rank
 * order and, within a journal, in entry order.
 *   Pass 1 (convert_read.c) reads Hello and Goodbye entries, learns
 *   every location (thread) of every member and feeds all definitions
 *   through the trace's unifier (c->u, the archive's global ids) and
 *   each member's through its own (member.u, which pass 2 checks and
 *   sums its events in, replay.c), so that pass 2 never meets an event
 *   whose definition comes later.
 *   Pass 2 (replay.c) replays the event batches through libotf2 on worker
 *   threads, making every location nest and feeding the region profile
 *   (profile.c) with what it writes.
 * Entries whose seq is not above the last one seen for the same (member,
 * location) or (member, definitions) are resends and are skipped, the
 * same way in both passes (weft__conv_read_member). Then otf2out.c
 * writes one local definition file per location and the global
 * definitions, and closes the archive.
 * Members name derived definitions by convention (weft_records.def), so
 * pass 1 tells the unifier what a member's system tree nodes 0 and 1 and
 * the ranks of location groups are; a member's ClockOffset records are
 * kept aside and written to the local definitions of each of its
 * locations. Locations that records name but where nothing was recorded
 * (a definition or attribute naming an idle thread) get an empty event
 * file before the event files are closed, so every reference resolves.
 * The profile's times go out in seconds at the resolution written to
 * ClockProperties.
 */
#include "convert.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_internal.h"
#include "otf2out.h"
#include "replay.h"
#include "stream.h"
#include "sums.h"
#include "weft_errors.h"


/* Any thread: a worker's copy fails into its own out. */
int weft__conv_fail(conv *c, int code, const char *fmt, ...)
{
    va_list ap;

    if (!c->out->error[0]) {
        va_start(ap, fmt);
        vsnprintf(c->out->error, sizeof c->out->error, fmt, ap);
        va_end(ap);
    }
    /* A stream's failure is a member's (stream.c says which fail it). */
    if (c->pool && !c->streaming)
        weft__otf2_budget_fail(c->pool);
    return code;
}

/* ---- members and locations -------------------------------------------- */

static int rank_cmp(const void *a, const void *b)
{
    const member *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Adds a member for each journal in the trace directory, by rank. */
static int list_journals(conv *c)
{
    DIR *dir = NULL;
    struct dirent *de;
    size_t cap = 0;
    int rc = 0;

    dir = opendir(c->in->trace_dir);
    if (!dir)
        return weft__conv_fail(c, errno == ENOENT ? WEFT_ENOTFOUND
                                                  : WEFT_EIO,
                               "%s: cannot open the trace directory: %s",
                               c->in->trace_dir, strerror(errno));
    while ((errno = 0, de = readdir(dir)) != NULL) {
        uint32_t rank = 0;
        int k = weft_journal_name_parse(de->d_name, &rank);
        member *m;
        if (k == 0)
            continue;
        if (k < 0) {
            rc = weft__conv_fail(c, WEFT_ECORRUPT, "%s/%s: not a valid "
                                 "journal name (expected rank-<R>.wj)",
                                 c->in->trace_dir, de->d_name);
            goto out;
        }
        if (c->nmems == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            member *p = realloc(c->mems, ncap * sizeof *p);
            if (!p) {
                rc = weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
                goto out;
            }
            c->mems = p;
            cap = ncap;
        }
        m = &c->mems[c->nmems];
        memset(m, 0, sizeof *m);
        m->rank = rank;
        c->nmems++;
        if (asprintf(&m->path, "%s/%s", c->in->trace_dir, de->d_name) < 0) {
            m->path = NULL;
            rc = weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            goto out;
        }
        /* Its own ids: what it names by convention (nodes, location
         * groups) is the trace's to map, and a conflict keeps the first
         * definition as the trace's unifier does (gather). */
        if (!(m->u = weft_unify_new(0))) {
            rc = weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            goto out;
        }
        weft_unify_keep_first(m->u, 1);
        weft_unify_derived_own(m->u, 1);
    }
    if (errno) {
        rc = weft__conv_fail(c, WEFT_EIO, "%s: cannot read the trace "
                             "directory: %s", c->in->trace_dir,
                             strerror(errno));
        goto out;
    }
    if (c->nmems)
        qsort(c->mems, c->nmems, sizeof *c->mems, rank_cmp);
out:
    closedir(dir);
    return rc;
}

/* Locations are added in pass 1 (and by replay.c for those only named). */
loc *weft__conv_loc(member *m, uint32_t t, int create)
{
    size_t lo = 0, hi = m->nlocs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->locs[mid].thread == t)
            return &m->locs[mid];
        if (m->locs[mid].thread < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!create)
        return NULL;
    if (m->nlocs == m->locs_cap) {
        size_t ncap = m->locs_cap ? m->locs_cap * 2 : 8;
        loc *p = realloc(m->locs, ncap * sizeof *p);
        if (!p)
            return NULL;
        m->locs = p;
        m->locs_cap = ncap;
    }
    memmove(m->locs + lo + 1, m->locs + lo, (m->nlocs - lo) * sizeof *m->locs);
    memset(&m->locs[lo], 0, sizeof m->locs[lo]);
    m->locs[lo].thread = t;
    m->nlocs++;
    return &m->locs[lo];
}

/* Location groups are numbered densely in rank order (readers refuse
 * gaps); clients name them by rank. */
static int number_location_groups(conv *c)
{
    char msg[256];

    for (size_t i = 0; i < c->nmems; i++) {
        int rc = weft_unify_set_derived(c->u, WEFT_UNIFY_ALL,
                                        WEFT_REF_LOCATION_GROUP,
                                        c->mems[i].rank, i, msg, sizeof msg);
        if (rc < 0)
            return weft__conv_fail(c, rc, "%s: %s", c->mems[i].path, msg);
    }
    return 0;
}

/* See convert_internal.h. */
int weft__conv_keep_local_def(conv *c, member *m, const weft_record *r)
{
    if (m->nlocal == m->local_cap) {
        size_t cap = m->local_cap ? 2 * m->local_cap : 8;
        weft_record *p = realloc(m->local_defs, cap * sizeof *p);
        if (!p)
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        m->local_defs = p;
        m->local_cap = cap;
    }
    m->local_defs[m->nlocal++] = *r;
    return 0;
}

/* The member of rank, NULL when it has no journal. Any thread. */
member *weft__conv_member(conv *c, uint32_t rank)
{
    size_t lo = 0, hi = c->nmems;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->mems[mid].rank == rank)
            return &c->mems[mid];
        if (c->mems[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- thread names ------------------------------------------------------ */

/* Pass 1 is done: each location a ThreadName named gets that string (a
 * string the unifier does not know, which validation prevents, leaves
 * the default name). */
static void name_threads(conv *c)
{
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs; k++) {
            loc *l = &m->locs[k];
            const weft_record *s;
            uint64_t g;
            if (!l->name_ref ||
                weft_unify_lookup(c->u, m->rank, WEFT_REF_STRING,
                                  l->name_ref - 1u, &g) < 0)
                continue;
            s = weft_unify_get(c->u, WEFT_REC_String, g);
            if (s && s->u.String.string)
                l->name = s->u.String.string;
        }
    }
}

/* See convert_internal.h. */
const char *weft__conv_loc_name(const loc *l, char *buf, size_t len)
{
    if (l->name)
        return l->name;
    weft__otf2_thread_name(buf, len, l->thread);
    return buf;
}

/* ---- the result ------------------------------------------------------- */

/* Appends one reason to out->incomplete (*len bytes used), after "; "
 * when there is one before; what does not fit is cut. */
__attribute__((format(printf, 3, 4)))
static void incomplete(weft_convert_result *out, size_t *len,
                       const char *fmt, ...)
{
    size_t cap = sizeof out->incomplete;
    va_list ap;
    int k;

    if (*len && *len < cap)
        *len += (size_t)snprintf(out->incomplete + *len, cap - *len, "; ");
    if (*len >= cap)
        return;
    va_start(ap, fmt);
    k = vsnprintf(out->incomplete + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (k > 0)
        *len += (size_t)k;
}

/* Appends that n definitions were left out, why, and the first. */
static void left_out(weft_convert_result *out, size_t *len, uint64_t n,
                     const char *why, const char *first)
{
    if (n)
        incomplete(out, len, "%" PRIu64 " definition%s left out (%s): %s",
                   n, n > 1 ? "s" : "", why, first);
}

/* After pass 2: every event of the journals was replayed, and what the
 * members that said goodbye reported sending (net of what they dropped:
 * a Goodbye counts the events shipped) is what their journals hold; where
 * not, out->incomplete says so (the trace is not complete), as it says
 * which definitions conflicting ones kept out, which named processes
 * that sent nothing and which named no team. A thread that a Goodbye
 * does not name is not compared: libweft names every thread that
 * recorded, but hand-written peers send empty Goodbyes. */
static int check_counts(conv *c)
{
    weft_convert_result *out = c->out;
    size_t len = 0, more = 0;
    char refused[512];

    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        if (!m->lost)
            continue;
        if (!out->lost++)
            incomplete(out, &len, "rank %" PRIu32 ": its events are lost "
                       "(%s)", m->rank, m->lost == WEFT__LOST_NO_SUMS
                           ? "its node sent no sums"
                       : m->lost == WEFT__LOST_BAD_SUMS
                           ? m->lost_why
                       : m->lost == WEFT__LOST_NO_FILES
                           ? "its node's event files are not in the "
                             "archive's directory"
                           : "the archive its node wrote into was made "
                             "anew");
    }
    if (out->lost > 1)
        incomplete(out, &len, "%" PRIu32 " members' events lost in all",
                   out->lost);

    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs; k++) {
            const loc *l = &m->locs[k];
            uint64_t sent = l->sent;
            if (l->replayed != l->journaled)
                return weft__conv_fail(c, WEFT_ECORRUPT, "%s: thread %"
                                       PRIu32 ": its entries hold %" PRIu64
                                       " events but %" PRIu64 " were read "
                                       "back", m->path, l->thread,
                                       l->journaled, l->replayed);
            if (!m->has_goodbye || !l->said_goodbye ||
                l->replayed + l->refused == sent)
                continue;
            if (len) {
                more++;
                continue;
            }
            incomplete(out, &len, "rank %" PRIu32 " thread %" PRIu32 ": %"
                       PRIu64 " events arrived, its Goodbye reported %"
                       PRIu64 " sent (%" PRIu64 " dropped)", m->rank,
                       l->thread, l->replayed, sent, l->dropped);
        }
    }
    if (more)
        incomplete(out, &len, "%zu more threads differ", more);
    if (weft__conv_refused_why(c, refused, sizeof refused))
        incomplete(out, &len, "%s", refused);
    left_out(out, &len, c->conflicts, "another of the same key came "
             "first", c->conflict);
    left_out(out, &len, c->absent, "they name the location group of a "
             "process that sent nothing", c->absent_def);
    left_out(out, &len, c->teamless, "their team is no communicator of "
             "the trace", c->teamless_def);
    if (c->nghosts)
        incomplete(out, &len, "%zu location%s of processes that sent "
                   "nothing named by records, made empty (first: rank %"
                   PRIu64 " thread %" PRIu64 ")", c->nghosts,
                   c->nghosts > 1 ? "s" : "", c->ghosts[0] >> 32,
                   c->ghosts[0] & 0xffffffffu);
    return 0;
}

/* After a failure: the members, events and drops the journals hold as
 * pass 1 counted them, and no locations: a failed trace is never
 * catalogued with 0 events over journals that hold some. */
static void held_result(conv *c)
{
    weft_convert_result *out = c->out;

    for (size_t i = 0; i < c->nmems; i++)
        for (size_t j = 0; j < c->mems[i].nlocs; j++) {
            out->events += c->mems[i].locs[j].journaled;
            out->dropped += c->mems[i].locs[j].dropped +
                            c->mems[i].locs[j].refused;
            out->refused += c->mems[i].locs[j].refused;
        }
    out->members = (uint32_t)c->nmems;
}

/* Fills c->out with the figures of the archive. */
static int fill_result(conv *c)
{
    weft_convert_result *out = c->out;
    size_t n = 0, k = 0;

    for (size_t i = 0; i < c->nmems; i++)
        n += c->mems[i].nlocs;
    out->locations = n ? calloc(n, sizeof *out->locations) : NULL;
    if (n && !out->locations)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        for (size_t j = 0; j < m->nlocs; j++) {
            const loc *l = &m->locs[j];
            weft_location_row *row = &out->locations[k++];
            char name[64];
            out->nlocations = k;
            row->id = weft__loc_id(m, l);
            row->rank = m->rank;
            row->thread = l->thread;
            row->events = l->events;
            row->dropped = l->dropped + l->refused;
            if (!(row->name = strdup(weft__conv_loc_name(l, name,
                                                         sizeof name))) ||
                (m->tree && weft__conv_tree_row(m, row) < 0))
                return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            out->events += row->events;
            out->dropped += row->dropped;
            out->refused += l->refused;
        }
    }
    out->members = (uint32_t)c->nmems;
    out->time_first = c->any_event ? c->tmin : 0;
    out->time_last = c->any_event ? c->tmax : 0;
    out->timer_resolution = c->resolution;
    weft__conv_clocks(c, out->clock, sizeof out->clock);
    out->bytes = weft__otf2_bytes(c->in->archive_dir);
    return 0;
}

/* The region profile and the nesting figures of c->out. */
static int profile_result(conv *c)
{
    weft_convert_result *out = c->out;
    int rc = weft_profile_result(&c->prof, c->resolution, &out->regions,
                                 &out->nregions);

    if (rc < 0)
        return weft__conv_fail(c, rc, "out of memory");
    out->profile_anomalies = c->anomalies;
    out->nesting_added = c->added;
    out->nesting_unmatched = c->unmatched;
    out->passes = c->passes;
    pthread_mutex_lock(&c->pool->lock);
    out->writers_peak = c->pool->writers_peak;
    pthread_mutex_unlock(&c->pool->lock);
    return 0;
}

/* ---- the whole conversion --------------------------------------------- */

/* The conversion reached phase (weft_convert_input.reached). */
static void reached(const conv *c, const char *phase)
{
    if (c->in->reached)
        c->in->reached(c->in->reached_arg, phase);
}

/* Pass 1 and what pass 2 needs from it. Sets *read_all once every
 * journal has been read. */
static int gather(conv *c, int *read_all)
{
    int rc;

    c->u = weft_unify_new(0);
    if (!c->u)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    /* Nothing acknowledged is lost over one definition: the first of a
     * key stands, and the trace is partial saying so (check_counts). */
    weft_unify_keep_first(c->u, 1);
    c->nodes = 1;
    if ((rc = list_journals(c)) < 0 || (rc = number_location_groups(c)) < 0 ||
        (rc = weft__sums_mark_remote(c)) < 0)
        return rc;
    for (size_t i = 0; i < c->nmems; i++)
        if ((rc = weft__conv_read_member(c, &c->mems[i], NULL)) < 0)
            return rc;
    *read_all = 1;
    for (size_t i = 0; i < weft_unify_ndefs(c->u); i++)
        if ((rc = weft__conv_note_locations(c, weft_unify_def(c->u, i))) < 0)
            return rc;
    name_threads(c);
    if ((rc = weft__conv_pick_resolution(c)) < 0 ||
        (rc = weft__sums_gather(c)) < 0)
        return rc;
    /* The next attribute id, defined after pass 2 if nesting used it. */
    c->nest_attr = (uint32_t)weft_unify_count(c->u, WEFT_REC_Attribute);
    if (weft_profile_init(&c->prof, weft_unify_region_name,
                          weft_unify_region_paradigm, c->u,
                          weft_unify_count(c->u, WEFT_REC_Region),
                          WEFT_PROFILE_ROWS_PER_LOCATION) < 0)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    weft__conv_plan_timelines(c);
    return 0;
}

/* Pass 2 and the rest of the archive, closed (an archive a stream
 * began, c->archive, is finished). */
static int write_archive(conv *c)
{
    int rc;

    if (!c->archive)
        rc = weft__otf2_open(c);
    else  /* a stream's, or made anew for the nodes' files (aside.c) */
        rc = c->aside ? 0 : weft__otf2_set_clocks(c);
    if (rc < 0 || (rc = weft__replay(c)) < 0 ||
        (rc = check_counts(c)) < 0 || (rc = weft__otf2_close_events(c)) < 0 ||
        (rc = weft__otf2_write_local_defs(c)) < 0 ||
        (reached(c, "defs"), rc = weft__otf2_write_global_defs(c)) < 0 ||
        (rc = weft__otf2_close(c)) < 0)
        return rc;
    if (c->out->error[0])  /* an error libotf2 did not return */
        return WEFT_EOTF2;
    return 0;
}

/* The archive is written: synced if asked, and described in c->out. */
static int finish(conv *c)
{
    int rc;

    if ((rc = weft__otf2_sync(c)) < 0 || (rc = fill_result(c)) < 0 ||
        (rc = weft__conv_report_result(c)) < 0)
        return rc;
    return profile_result(c);
}

/* A partial archive is no archive; the journals stay for a retry. c->out
 * keeps its first error and, when every journal was read, what they
 * hold. */
static void failed(conv *c, int read_all)
{
    weft_convert_result *out = c->out;
    char error[sizeof out->error];

    /* (what nodes wrote there is theirs alone: it stays) */
    if (!c->in->nremote)
        weft__otf2_clean(c->in->archive_dir);
    memcpy(error, out->error, sizeof error);
    weft_convert_result_free(out);
    memcpy(out->error, error, sizeof error);
    if (read_all)
        held_result(c);
}

/* See convert_internal.h. */
void weft__conv_fan_out(void *(*fn)(void *), void *args, size_t size,
                        unsigned n)
{
    pthread_t *tid = n > 1 ? calloc(n, sizeof *tid) : NULL;
    uint8_t *started = n > 1 ? calloc(n, 1) : NULL;

    for (unsigned i = 1; tid && started && i < n; i++)
        started[i] = pthread_create(&tid[i], NULL, fn,
                                    (char *)args + i * size) == 0;
    fn(args);
    for (unsigned i = 1; tid && started && i < n; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
    free(tid);
    free(started);
}

/* See convert_internal.h. */
void weft__conv_free(conv *c)
{
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        free(m->path);
        free(m->hostname);
        free(m->program);
        for (size_t k = 0; k < m->nlocs; k++) {
            weft_profile_loc_free(&m->locs[k].prof);
            weft_timeline_free(&m->locs[k].tl);
            weft_iolive_free(&m->locs[k].io);
            weft_metricloc_free(&m->locs[k].ml);
            free(m->locs[k].gap);
        }
        free(m->locs);
        free(m->local_defs);
        free(m->offsets);
        for (size_t k = 0; k < m->nprows; k++) {
            free(m->prows[k].region);
            free(m->prows[k].paradigm);
        }
        free(m->prows);
        weft_commsum_free(&m->sends);
        weft_iosum_free(&m->io);
        free(m->error);
        weft_unify_free(m->u);
        weft__sums_free(m->sums);
        free(m->lost_why);
        free(m->regions.v);
        free(m->metric_members.v);
        free(m->handles.v);
    }
    free(c->mems);
    free(c->teams);
    free(c->loc_refs);
    free(c->ghosts);
    weft_profile_free(&c->prof);
    weft_unify_scratch_free(&c->scratch);
    weft_unify_scratch_free(&c->wscratch);
    free(c->rev);
    free(c->aside);
    weft_unify_free(c->u);
}

/* Converts the trace in in->trace_dir into an archive in
 * in->archive_dir (an archive left there by an earlier attempt is
 * replaced). Returns 0 with *out filled (out->locations is the caller's:
 * weft_convert_result_free), or a WEFT_E* code with out->error naming the
 * journal, entry offset and record that failed. Fewer journals than
 * in->members is not an error: out->members says how many were found. */
int weft_convert_trace(const weft_convert_input *in, weft_convert_result *out)
{
    return weft__convert_trace(in, 0, out);
}

/* A stream's archive, and the members it wrote whole, for c (pass 1
 * done); s is freed when it has no archive to give. 0 or the code of a
 * failure (c failed). */
static int take_stream(conv *c, weft_convert_stream **s)
{
    weft__stream_catch_up(*s, weft__replay_threads(c));
    c->archive = weft__stream_archive(*s, &c->pool);
    if (!c->archive) {
        /* Its files go: the archive is made anew. */
        weft_convert_stream_free(*s);
        *s = NULL;
        return 0;
    }
    return weft__stream_adopt(*s, c);
}

/* What in asks of a conversion (with stream s, or none) that it
 * cannot do. 0 or WEFT_EINVAL (c failed). */
static int check_input(conv *c, const weft_convert_stream *s)
{
    const weft_convert_input *in = c->in;

    if (in->resolution && in->resolution != WEFT_CONVERT_NS)
        return weft__conv_fail(c, WEFT_EINVAL, "a fixed timer resolution "
                               "is 1 ns (%" PRIu64 " ticks a second asked)",
                               in->resolution);
    if (s && weft__stream_events_only(s))
        return weft__conv_fail(c, WEFT_EINVAL, "a node's stream (events "
                               "only) is converted by its head");
    return 0;
}

/* weft_convert_trace and weft_convert_trace_stream (s may be NULL). */
static int convert(const weft_convert_input *in, weft_convert_stream *s,
                   int general_only, weft_convert_result *out)
{
    conv c;
    chunk_budget pool;
    int rc, read_all = 0;

    assert(in && in->trace_dir && in->archive_dir && out);
    weft__otf2_init();
    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    memset(&pool, 0, sizeof pool);
    pthread_mutex_init(&pool.lock, NULL);
    c.in = in;
    c.out = out;
    c.pool = &pool;
    c.general_only = general_only;
    weft__otf2_sink(&c);
    rc = check_input(&c, s);
    if (rc == 0)
        rc = gather(&c, &read_all);
    if (rc == 0)
        reached(&c, "unify");
    if (rc == 0 && s)
        rc = take_stream(&c, &s);
    /* (no stream has the archive its nodes wrote into: made anew) */
    if (rc == 0 && in->nremote && !c.archive)
        rc = weft__aside_take(&c);
    if (rc == 0 && in->nremote)
        rc = weft__sums_adopt_remote(&c);
    if (rc == 0)
        rc = write_archive(&c);
    if (rc == 0)
        rc = finish(&c);
    if (rc == 0)
        weft__aside_drop(&c);
    if (rc < 0)
        weft__otf2_budget_fail(c.pool);  /* closing writes nothing more */
    if (c.archive)
        OTF2_Archive_Close(c.archive);
    weft__otf2_sink(NULL);
    if (rc < 0)
        failed(&c, read_all);
    weft__conv_free(&c);
    weft_convert_stream_free(s);
    pthread_mutex_destroy(&pool.lock);
    return rc;
}

/* See convert.h. */
int weft__convert_trace(const weft_convert_input *in, int general_only,
                        weft_convert_result *out)
{
    return convert(in, NULL, general_only, out);
}

/* See convert.h. */
int weft_convert_trace_stream(const weft_convert_input *in,
                              weft_convert_stream *s,
                              weft_convert_result *out)
{
    return convert(in, s, 0, out);
}

uint64_t weft_convert_writers(uint64_t memory)
{
    if (!memory)
        return 0;
    if (memory < WEFT_CONVERT_FIXED_BYTES + WEFT_CONVERT_WRITER_BYTES)
        return 1;
    return (memory - WEFT_CONVERT_FIXED_BYTES) / WEFT_CONVERT_WRITER_BYTES;
}

/* Frees the location rows of *out and zeroes it. */
void weft_convert_result_free(weft_convert_result *out)
{
    if (!out)
        return;
    for (size_t i = 0; i < out->nlocations; i++) {
        free(out->locations[i].name);
        free(out->locations[i].process);
        free(out->locations[i].program);
    }
    free(out->locations);
    for (size_t i = 0; i < out->nregions; i++) {
        free(out->regions[i].region);
        free(out->regions[i].paradigm);
    }
    free(out->regions);
    for (size_t i = 0; i < out->ntimelines; i++)
        free(out->timelines[i].bins);
    free(out->timelines);
    for (size_t i = 0; i < out->ntimeline_regions; i++)
        free(out->timeline_regions[i].name);
    free(out->timeline_regions);
    free(out->messages);
    for (size_t i = 0; i < out->nio_files; i++)
        free(out->io_files[i].name);
    free(out->io_files);
    for (size_t i = 0; i < out->nmetrics; i++) {
        free(out->metrics[i].name);
        free(out->metrics[i].unit);
        free(out->metrics[i].points);
    }
    free(out->metrics);
    memset(out, 0, sizeof *out);
}

/* catrow.c - a trace's catalog rows (see catrow.h). */
#include "catrow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catjob.h"
#include "log.h"
#include "spool.h"
#include "weft_errors.h"

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct hosts of the n members v, sorted, comma-separated;
 * malloc'd, NULL when out of memory. */
static char *member_hosts(weft_member *const *v, size_t n)
{
    const char **h = calloc(n ? n : 1, sizeof *h);
    size_t nh = 0, len = 1;
    char *out = NULL;

    if (!h)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (v[i]->in.host[0])
            h[nh++] = v[i]->in.host;
    qsort(h, nh, sizeof *h, str_cmp);
    for (size_t i = 0; i < nh; i++)
        len += strlen(h[i]) + 1;
    out = malloc(len);
    if (out) {
        char *p = out;
        *p = 0;
        for (size_t i = 0; i < nh; i++) {
            if (i && strcmp(h[i], h[i - 1]) == 0)
                continue;
            p += sprintf(p, "%s%s", p == out ? "" : ",", h[i]);
        }
    }
    free(h);
    return out;
}

typedef struct ranked_tag {
    weft_tag tag;
    size_t pos;          /* order of appearance: rank, then Hello order */
} ranked_tag;

static int ranked_tag_cmp(const void *a, const void *b)
{
    const ranked_tag *x = a, *y = b;
    int c = strcmp(x->tag.key, y->tag.key);

    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The tags of the n members v (in rank order): the union of their
 * tags, the lowest rank's value winning for a key two members give
 * differently; sorted by key (n log n for members x 64 tags). *out
 * malloc'd with the strings pointing into the members (valid while they
 * live). */
static int trace_tags(weft_member *const *v, size_t nv, weft_tag **out,
                      size_t *nout)
{
    size_t n = 0, k = 0;
    ranked_tag *r;

    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < nv; i++)
        n += v[i]->ntags;
    if (n == 0)
        return 0;
    r = calloc(n, sizeof *r);
    *out = calloc(n, sizeof **out);
    if (!r || !*out) {
        free(r);
        free(*out);
        *out = NULL;
        return WEFT_ENOMEM;
    }
    n = 0;
    for (size_t m = 0; m < nv; m++)
        for (size_t i = 0; i < v[m]->ntags; i++, n++)
            r[n] = (ranked_tag){ v[m]->tags[i], n };
    qsort(r, n, sizeof *r, ranked_tag_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(r[i].tag.key, r[i - 1].tag.key) != 0)
            (*out)[k++] = r[i].tag;
    free(r);
    *nout = k;
    return 0;
}

void weft_catrow_free_tags(weft_tag *tags, size_t n)
{
    for (size_t i = 0; tags && i < n; i++) {
        free(tags[i].key);
        free(tags[i].value);
    }
    free(tags);
}

/* Copies of tags (strings too); NULL when out of memory or n is 0. */
static weft_tag *copy_tags(const weft_tag *tags, size_t n)
{
    weft_tag *v = n ? calloc(n, sizeof *v) : NULL;

    for (size_t i = 0; v && i < n; i++) {
        v[i].key = strdup(tags[i].key);
        v[i].value = strdup(tags[i].value);
        if (!v[i].key || !v[i].value) {
            weft_catrow_free_tags(v, i + 1);
            return NULL;
        }
    }
    return v;
}

int weft_catrow_recording(const weft_trace *t, weft_trace_row *row,
                          weft_tag **tags, size_t *ntags)
{
    weft_member **v = weft_trace_members(t);
    /* Rank 0's command and job id, else the lowest rank's that joined. */
    const weft_member *first = v && t->joined ? v[0] : NULL;
    weft_tag *shared = NULL;

    memset(row, 0, sizeof *row);
    *tags = NULL;
    *ntags = 0;
    if (v && trace_tags(v, t->joined, &shared, ntags) == 0 && *ntags) {
        *tags = copy_tags(shared, *ntags);
        if (!*tags)
            *ntags = 0;
    }
    free(shared);
    row->hosts = v ? member_hosts(v, t->joined) : NULL;
    row->command = strdup(first ? first->command : "");
    row->job_id = strdup(first ? first->job_id : "");
    row->protocol_version = first ? first->protocol_version : 0;
    row->key = strdup(t->key);
    row->name = strdup(t->name);
    row->run = strdup(t->run ? t->run : "");
    row->path = weft_spool_archive_dir(t->dir);
    row->state = strdup(WEFT_STATE_RECORDING);
    row->uid = t->uid;
    row->created = t->created;
    row->members = t->size;
    free(v);
    if (!row->key || !row->name || !row->run || !row->path || !row->state ||
        !row->hosts || !row->command || !row->job_id)
        return WEFT_ENOMEM;
    return 0;
}

static int row_cmp(const void *a, const void *b)
{
    uint32_t x = ((const weft_member_row *)a)->rank,
             y = ((const weft_member_row *)b)->rank;

    return (x > y) - (x < y);
}

/* The member rows of the n members v (rank order) after conversion:
 * those that did not say goodbye as missing (ranks that never came have
 * no row); figures from res. *out is malloc'd, its strings point into
 * the members. */
static int member_rows(weft_member *const *v, size_t n,
                       const weft_convert_result *res, weft_member_row **out)
{
    weft_member_row *rows = calloc(n ? n : 1, sizeof *rows);

    *out = rows;
    if (!rows)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        rows[i].rank = v[i]->in.rank;
        rows[i].host = v[i]->in.host;
        rows[i].pid = v[i]->in.pid;
        rows[i].parent_pid = v[i]->in.parent_pid;
        rows[i].state = (char *)weft_catrow_member_state(v[i]);
    }
    for (size_t i = 0; i < res->nlocations; i++) {
        const weft_location_row *l = &res->locations[i];
        weft_member_row key = { .rank = l->rank },
                        *r = bsearch(&key, rows, n, sizeof *rows, row_cmp);
        if (!r)
            continue;
        r->locations++;
        r->events += l->events;
        r->dropped += l->dropped;
    }
    return 0;
}

int weft_catrow_final_make(const weft_trace *t, const weft_convert_result *res,
                           weft_catrow_final *out)
{
    weft_member **v = weft_trace_members(t);
    const weft_member *first = v && t->joined ? v[0] : NULL;
    weft_trace_row *row = &out->row;
    weft_trace_detail *detail = &out->detail;
    int rc;

    memset(out, 0, sizeof *out);
    if (!v)
        return WEFT_ENOMEM;
    row->key = t->key;
    row->name = t->name;
    row->run = t->run;
    row->uid = t->uid;
    row->created = t->created;
    row->members = t->size;
    row->locations = res->nlocations;
    row->events = res->events;
    row->bytes = res->bytes;
    /* Lost where the journals could not say so: in no location's row */
    row->dropped = res->dropped + t->unjournaled;
    row->refused = res->refused + t->unjournaled;
    row->time_first = res->time_first;
    row->time_last = res->time_last;
    row->timer_resolution = res->timer_resolution;
    row->clock = (char *)res->clock;
    row->hosts = member_hosts(v, t->joined);
    row->command = first ? first->command : (char *)"";
    row->job_id = first ? first->job_id : (char *)"";
    row->protocol_version = first ? first->protocol_version : 0;
    detail->locations = res->locations;
    detail->nlocations = res->nlocations;
    detail->regions = res->regions;
    detail->nregions = res->nregions;
    detail->timelines = res->timelines;
    detail->ntimelines = res->ntimelines;
    detail->timeline_regions = res->timeline_regions;
    detail->ntimeline_regions = res->ntimeline_regions;
    detail->messages = res->messages;
    detail->nmessages = res->nmessages;
    detail->io_files = res->io_files;
    detail->nio_files = res->nio_files;
    detail->metrics = res->metrics;
    detail->nmetrics = res->nmetrics;
    rc = member_rows(v, t->joined, res, &out->members);
    if (rc == 0)
        rc = trace_tags(v, t->joined, &out->tags, &detail->ntags);
    if (rc == 0 && !row->hosts)
        rc = WEFT_ENOMEM;
    detail->members = out->members;
    detail->nmembers = out->members ? t->joined : 0;
    detail->tags = out->tags;
    free(v);
    return rc;
}

void weft_catrow_final_free(weft_catrow_final *f)
{
    free(f->row.hosts);
    free(f->members);
    free(f->tags);
    memset(f, 0, sizeof *f);
}

const char *weft_catrow_member_state(const weft_member *m)
{
    if (!m || !m->in.said_goodbye)
        return WEFT_MEMBER_MISSING;
    return m->in.ended ? WEFT_MEMBER_ABORTED : WEFT_MEMBER_COMPLETE;
}

/* 1 if member o said goodbye and ended abnormally as `how` says. */
static int ended_so(const weft_member *o, const char *how)
{
    return o && o->in.said_goodbye && o->in.ended &&
           strcmp(o->in.ended, how) == 0;
}

/* Appends to buf (n bytes used of len) how the members v (nv of them,
 * rank order) that ended abnormally ended: each distinct way once (at
 * most 4), with its ranks (at most 8), e.g. "ended abnormally: rank 1:
 * MPI_Abort (error code 3); ranks 0, 2, 3: signal 15 (SIGTERM)". Returns
 * the new n (< len). */
static size_t ended_reasons(weft_member *const *v, size_t nv, char *buf,
                            size_t n, size_t len)
{
    const char *done[4];
    size_t ndone = 0, more = 0;

    for (size_t i = 0; i < nv && n < len; i++) {
        const weft_member *m = v[i];
        uint32_t shown = 0, count = 0;
        size_t k;

        if (!m->in.said_goodbye || !m->in.ended)
            continue;
        for (k = 0; k < ndone && strcmp(done[k], m->in.ended) != 0; k++)
            ;
        if (k < ndone)
            continue; /* listed with the first rank that ended so */
        if (ndone == sizeof done / sizeof *done) {
            more++;
            continue;
        }
        done[ndone++] = m->in.ended;
        for (size_t q = i; q < nv; q++)
            count += (uint32_t)ended_so(v[q], m->in.ended);
        n += (size_t)snprintf(buf + n, len - n, "%s%s ", ndone > 1 ? "; "
                              : n ? "; ended abnormally: "
                                  : "ended abnormally: ",
                              count > 1 ? "ranks" : "rank");
        for (size_t q = i; q < nv && n < len && shown < 8; q++) {
            if (!ended_so(v[q], m->in.ended))
                continue;
            n += (size_t)snprintf(buf + n, len - n, "%s%u", shown ? ", " : "",
                                  v[q]->in.rank);
            shown++;
        }
        if (n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s: %s",
                                  count > shown ? ", ..." : "", m->in.ended);
    }
    if (more && n < len)
        n += (size_t)snprintf(buf + n, len - n, "; %zu more ways", more);
    return n < len ? n : len - 1;
}

void weft_catrow_partial_reason(const weft_trace *t,
                                const weft_convert_result *res, char *buf,
                                size_t len)
{
    weft_member **v = weft_trace_members(t);
    size_t n = 0;
    uint32_t absent = t->size - t->joined, silent = 0, gone = 0;
    uint32_t first_absent = t->joined;
    const weft_member *first_silent = NULL;
    const weft_member *first_gone = NULL;

    buf[0] = 0;
    for (uint32_t i = 0; v && i < t->joined; i++) {
        if (v[i]->in.rank != i && first_absent == t->joined)
            first_absent = i; /* the ranks before it all came */
        if (v[i]->in.gone && gone++ == 0)
            first_gone = v[i];
        else if (!v[i]->in.said_goodbye && !v[i]->in.gone && silent++ == 0)
            first_silent = v[i];
    }
    if (absent)
        n += (size_t)snprintf(buf + n, len - n, "%u of %u members never "
                              "came (rank %u%s)", absent, t->size,
                              first_absent, absent > 1 ? "..." : "");
    /* (a relayed member's node is named: a node cut off loses all its
     * members at once) */
    if (gone && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%u of %u members ended "
                              "without goodbye (rank %u, pid %u%s%s%s: "
                              "killed, or ended where libweft could not see "
                              "it)", n ? "; " : "", gone, t->size,
                              first_gone->in.rank, first_gone->in.pid,
                              first_gone->in.node ? ", on node " : "",
                              first_gone->in.node ? first_gone->in.node : "",
                              gone > 1 ? ", ..." : "");
    if (silent && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%u of %u members did not "
                              "say goodbye (rank %u%s%s%s)", n ? "; " : "",
                              silent, t->size, first_silent->in.rank,
                              first_silent->in.node ? " on node " : "",
                              first_silent->in.node ? first_silent->in.node
                                                    : "",
                              silent > 1 ? "..." : "");
    if (v && n < len)
        n = ended_reasons(v, t->joined, buf, n, len);
    if (res->incomplete[0] && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "; " : "",
                              res->incomplete);
    if (t->unjournaled && n < len)
        snprintf(buf + n, len - n, "%s%" PRIu64 " events not stored "
                 "(dropped), nor could their journals in %s say so: %s",
                 n ? "; " : "", t->unjournaled, t->dir,
                 strerror(t->unjournaled_errno));
    free(v);
}

/* ---- catalog row of a new trace (worker thread) ---- */

typedef struct begin_job {
    weft_trace_row row;
    weft_tag *tags;      /* owned copies */
    size_t ntags;
} begin_job;

static void begin_free(begin_job *j)
{
    weft_catalog_trace_free(&j->row);
    weft_catrow_free_tags(j->tags, j->ntags);
    free(j);
}

static int begin_run(weft_catalog *cat, void *arg, char *err, size_t errlen)
{
    begin_job *j = arg;
    int rc = weft_catalog_trace_begin(cat, &j->row);

    (void)err;
    (void)errlen;
    if (rc == 0 && j->ntags)
        rc = weft_catalog_trace_add_tags(cat, j->row.id, j->tags, j->ntags);
    return rc;
}

static void begin_done(weft_daemon *d, void *arg, int rc, const char *err)
{
    begin_job *j = arg;

    if (rc < 0)
        weft_dlog_ctx(d, WEFT_LOG_ERROR, (&(const weft_log_ctx){
                          j->row.name, j->row.key, -1, NULL }),
                      "trace '%s': cannot record it in the catalog: %s",
                      j->row.name, err);
    begin_free(j);
}

/* See catrow.h. */
void weft_catrow_queue_begin(weft_trace *t)
{
    weft_daemon *d = t->d;
    begin_job *j = calloc(1, sizeof *j);
    int rc = j ? weft_catrow_recording(t, &j->row, &j->tags, &j->ntags)
               : WEFT_ENOMEM;

    if (rc == 0)
        rc = weft_catjob_queue(d, begin_run, begin_done, j);
    if (rc < 0 && j) /* not recorded, as before a row existed */
        begin_free(j);
}

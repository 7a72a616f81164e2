/* export_mpi.c - which MPI send matches which receive, for the arrows of
 * `weft export` (and which ThreadCreate its ThreadBegin, which ThreadEnd
 * its ThreadWait: channels of their own kind, export.h).
 *
 * DESIGN: MPI delivers the messages of one channel (communicator, sender,
 * receiver, tag) in the order they were sent, so the n-th send of a
 * channel is received by its n-th receive; a receive names its actual
 * sender and tag (never a wildcard). The exporter reads the archive one
 * location after the other, so an arrow's two ends are seen far apart.
 * Pass 1 therefore counts each channel's sends and receives and notes
 * which of them the filters let through, as runs of consecutive indices
 * (a channel's sends come from one process, in order: one run per
 * thread and window, whatever the number of messages). Pass 2 counts
 * again in the same order; the n-th send gets the arrow of message
 * base + n when a receive n exists and is exported, and so does that
 * receive. Memory is per channel, never per message.
 *
 * Events name their peer by its rank in the communicator; the Comm's
 * COMM_GROUP lists, per communicator rank, an index into the paradigm's
 * COMM_LOCATIONS group, whose locations belong to the processes (location
 * groups) that are the channel's ends. Each communicator's table is built
 * the first time it is needed.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"

typedef struct run {
    uint64_t lo, hi;         /* exported indices lo .. hi - 1 */
} run;

typedef struct side {
    uint64_t n;              /* pass 1: how many */
    uint64_t seen;           /* pass 2: how many so far */
    run *runs;               /* exported ones, ascending */
    size_t nruns;
} side;

typedef struct chan {
    weft__xchan_key k;
    int used;
    uint64_t base;           /* flow id of message 0 */
    side s[2];               /* sends, receives */
} chan;

typedef struct loc_group {
    OTF2_LocationRef loc;
    OTF2_LocationGroupRef group;
} loc_group;

struct weft__xmpi {
    chan *t;                 /* open addressing, power-of-two size */
    size_t cap, n;
    const weft__arc *a;
    uint32_t **procs;        /* comm -> process of each rank ([0]: n) */
    size_t nprocs;
    loc_group *by_loc;       /* the locations, sorted by id */
};

weft__xmpi *weft__xmpi_new(const weft__arc *a)
{
    weft__xmpi *m = calloc(1, sizeof *m);

    if (!m)
        return NULL;
    m->a = a;
    m->cap = 64;
    m->t = calloc(m->cap, sizeof *m->t);
    if (!m->t) {
        free(m);
        return NULL;
    }
    return m;
}

void weft__xmpi_free(weft__xmpi *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++) {
        free(m->t[i].s[0].runs);
        free(m->t[i].s[1].runs);
    }
    for (size_t i = 0; i < m->nprocs; i++)
        free(m->procs[i]);
    free(m->procs);
    free(m->by_loc);
    free(m->t);
    free(m);
}

static int by_loc_cmp(const void *x, const void *y)
{
    const loc_group *p = x, *q = y;

    return p->loc < q->loc ? -1 : p->loc > q->loc;
}

/* The process of location id, or `fallback` when it is not defined. */
static uint32_t process_of(weft__xmpi *m, uint64_t id, uint32_t fallback)
{
    const weft__arc *a = m->a;
    loc_group key = { id, 0 }, *hit;

    if (!m->by_loc) {
        m->by_loc = weft__cli_xrealloc(NULL, (a->nlocs + 1) *
                                       sizeof *m->by_loc);
        for (size_t i = 0; i < a->nlocs; i++)
            m->by_loc[i] = (loc_group){ a->locs[i].id, a->locs[i].group };
        qsort(m->by_loc, a->nlocs, sizeof *m->by_loc, by_loc_cmp);
    }
    hit = bsearch(&key, m->by_loc, a->nlocs, sizeof key, by_loc_cmp);
    return hit ? hit->group : fallback;
}

/* The COMM_LOCATIONS group of paradigm p, or NULL. */
static const weft__arc_group *comm_locations(const weft__arc *a,
                                             OTF2_Paradigm p)
{
    for (size_t i = 0; i < a->ngroups; i++)
        if (a->groups[i].type == OTF2_GROUP_TYPE_COMM_LOCATIONS &&
            a->groups[i].paradigm == p)
            return &a->groups[i];
    return NULL;
}

/* comm's table (comm < a->ncomms): the process of each of its ranks ([0]: how many); ranks
 * without one are their own number (an archive without the groups). */
static uint32_t *comm_procs(weft__xmpi *m, uint32_t comm)
{
    const weft__arc *a = m->a;
    const weft__arc_group *g = NULL, *cl = NULL;
    uint32_t *p;

    if (comm >= m->nprocs) {
        size_t n = (size_t)comm + 1;
        m->procs = weft__cli_xrealloc(m->procs, n * sizeof *m->procs);
        memset(m->procs + m->nprocs, 0, (n - m->nprocs) * sizeof *m->procs);
        m->nprocs = n;
    }
    if (m->procs[comm])
        return m->procs[comm];
    if (a->comm_group[comm] < a->ngroups)
        g = &a->groups[a->comm_group[comm]];
    if (g)
        cl = comm_locations(a, g->paradigm);
    p = weft__cli_xrealloc(NULL, ((g ? g->n : 0) + 1u) * sizeof *p);
    p[0] = g ? g->n : 0;
    for (uint32_t r = 0; g && r < g->n; r++) {
        uint64_t w = g->members[r];
        p[r + 1] = cl && w < cl->n ? process_of(m, cl->members[w], (uint32_t)w)
                                   : (uint32_t)w;
    }
    m->procs[comm] = p;
    return p;
}

uint32_t weft__xmpi_process(weft__xmpi *m, uint32_t comm, uint32_t rank,
                            uint32_t self)
{
    const weft__arc *a = m->a;
    uint32_t *p;

    if (comm >= a->ncomms)       /* undefined: take the rank as it is */
        return rank;
    if (a->comm_group[comm] < a->ngroups &&
        a->groups[a->comm_group[comm]].type == OTF2_GROUP_TYPE_COMM_SELF)
        return self;
    p = comm_procs(m, comm);
    return rank < p[0] ? p[rank + 1] : rank;
}

/* Not proto/hashtab.h (the one table, keyed by a uint32_t): a channel's
 * key is five fields, compared whole. */
static size_t hash(const weft__xchan_key *k)
{
    uint64_t h = ((uint64_t)k->comm << 32 | k->tag) * 0x9e3779b97f4a7c15u;

    h ^= ((uint64_t)k->from << 32 | k->to) * 0xc2b2ae3d27d4eb4fu;
    h += k->kind;
    return (size_t)(h ^ h >> 29);
}

static int same(const weft__xchan_key *a, const weft__xchan_key *b)
{
    return a->kind == b->kind && a->comm == b->comm && a->from == b->from &&
           a->to == b->to && a->tag == b->tag;
}

/* The slot of k: its channel, or the empty slot where it would go. */
static chan *slot(chan *t, size_t cap, const weft__xchan_key *k)
{
    size_t i = hash(k) & (cap - 1);

    while (t[i].used && !same(&t[i].k, k))
        i = (i + 1) & (cap - 1);
    return &t[i];
}

/* Channel k, added if new (pass 1); NULL when absent and !add. Exits
 * when out of memory. */
static chan *find(weft__xmpi *m, const weft__xchan_key *k, int add)
{
    chan *c;

    if (add && (m->n + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap * 2;
        chan *t = weft__cli_xrealloc(NULL, cap * sizeof *t);
        memset(t, 0, cap * sizeof *t);
        for (size_t i = 0; i < m->cap; i++)
            if (m->t[i].used)
                *slot(t, cap, &m->t[i].k) = m->t[i];
        free(m->t);
        m->t = t;
        m->cap = cap;
    }
    c = slot(m->t, m->cap, k);
    if (!c->used) {
        if (!add)
            return NULL;
        c->used = 1;
        c->k = *k;
        m->n++;
    }
    return c;
}

void weft__xmpi_note(weft__xmpi *m, const weft__xchan_key *k, int recv,
                     int exported)
{
    side *s = &find(m, k, 1)->s[recv];
    uint64_t i = s->n++;

    if (!exported)
        return;
    if (s->nruns && s->runs[s->nruns - 1].hi == i) {
        s->runs[s->nruns - 1].hi++;
        return;
    }
    s->runs = weft__cli_xrealloc(s->runs, (s->nruns + 1) * sizeof *s->runs);
    s->runs[s->nruns++] = (run){ i, i + 1 };
}

void weft__xmpi_seal(weft__xmpi *m)
{
    uint64_t next = 1;

    for (size_t i = 0; i < m->cap; i++) {
        chan *c = &m->t[i];
        if (!c->used)
            continue;
        c->base = next;
        next += c->s[0].n < c->s[1].n ? c->s[0].n : c->s[1].n;
    }
}

static int exported(const side *s, uint64_t i)
{
    size_t lo = 0, hi = s->nruns;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->runs[mid].hi <= i)
            lo = mid + 1;
        else if (s->runs[mid].lo > i)
            hi = mid;
        else
            return 1;
    }
    return 0;
}

uint64_t weft__xmpi_flow(weft__xmpi *m, const weft__xchan_key *k, int recv)
{
    chan *c = find(m, k, 0);
    uint64_t i;

    if (!c)
        return 0;
    i = c->s[recv].seen++;
    if (i >= c->s[!recv].n || !exported(&c->s[!recv], i) ||
        !exported(&c->s[recv], i))
        return 0;
    return c->base + i;
}

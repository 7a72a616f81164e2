/* commsum.c - who sent what to whom (commsum.h). */
#include "commsum.h"

#include <otf2/OTF2_Definitions.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "weft_errors.h"

/* The COMM_LOCATIONS group of paradigm p, NULL if u has none. */
static const weft_record *locations_group(const weft_defview *defs,
                                          uint32_t p)
{
    size_t n = weft_defview_count(defs, WEFT_REC_Group);

    for (size_t i = 0; i < n; i++) {
        const weft_record *g = weft_defview_get(defs, WEFT_REC_Group, i);
        if (g && g->u.Group.groupType == OTF2_GROUP_TYPE_COMM_LOCATIONS &&
            g->u.Group.paradigm == p)
            return g;
    }
    return NULL;
}

/* 0 or WEFT_ENOMEM. */
int weft_commmap_build(weft_commmap *m, const weft_defview *defs,
                       weft_commmap_rank_fn rank_of, const void *ctx)
{
    /* Comm and InterComm ids are one id space: a unifier's view counts
     * each type's definitions, and a Comm defined after an InterComm
     * has an id beyond the Comms before it. */
    size_t n = weft_defview_count(defs, WEFT_REC_Comm);
    size_t ncomms = n + weft_defview_count(defs, WEFT_REC_InterComm);
    size_t ngroups = weft_defview_count(defs, WEFT_REC_Group);

    memset(m, 0, sizeof *m);
    if (!n)
        return 0;
    m->ranks = calloc(ncomms, sizeof *m->ranks);
    m->nranks = calloc(ncomms, sizeof *m->nranks);
    if (!m->ranks || !m->nranks)
        return WEFT_ENOMEM;
    m->ncomms = ncomms;
    for (size_t i = 0; i < n; i++) {
        const weft_record *c = weft_defview_get(defs, WEFT_REC_Comm, i);
        const weft_record *g, *locs;
        uint32_t *v, id = c ? c->u.Comm.self : 0;
        if (!c || id >= ncomms || m->ranks[id] ||
            c->u.Comm.group >= ngroups)
            continue;
        g = weft_defview_get(defs, WEFT_REC_Group, c->u.Comm.group);
        if (!g || g->u.Group.groupType != OTF2_GROUP_TYPE_COMM_GROUP ||
            !g->u.Group.numberOfMembers)
            continue;
        locs = locations_group(defs, g->u.Group.paradigm);
        v = malloc(g->u.Group.numberOfMembers * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        for (uint32_t r = 0; r < g->u.Group.numberOfMembers; r++) {
            uint64_t k = g->u.Group.members[r];
            if (!locs)  /* no locations group: indices are world ranks */
                v[r] = k < UINT32_MAX ? (uint32_t)k : WEFT_COMMMAP_UNKNOWN;
            else if (k < locs->u.Group.numberOfMembers && rank_of)
                v[r] = rank_of(ctx, locs->u.Group.members[k]);
            else if (k < locs->u.Group.numberOfMembers)
                v[r] = (uint32_t)(locs->u.Group.members[k] >> 32);
            else
                v[r] = WEFT_COMMMAP_UNKNOWN;
        }
        m->ranks[id] = v;
        m->nranks[id] = g->u.Group.numberOfMembers;
    }
    return 0;
}

void weft_commmap_free(weft_commmap *m)
{
    for (size_t i = 0; i < m->ncomms; i++)
        free(m->ranks[i]);
    free(m->ranks);
    free(m->nranks);
    memset(m, 0, sizeof *m);
}

/* 0 or WEFT_ENOMEM (s unchanged). */
int weft_commsum_add(weft_commsum *s, uint32_t receiver, uint64_t bytes)
{
    uint32_t key = receiver + 1;
    weft_commsum_cell *c;

    if (!key)
        return 0;  /* WEFT_COMMMAP_UNKNOWN is not counted */
    if (!(c = weft_hashtab_get(&s->t, key, sizeof *c)))
        return WEFT_ENOMEM;
    c->messages++;
    c->bytes += bytes;
    return 0;
}

void weft_commsum_free(weft_commsum *s)
{
    weft_hashtab_free(&s->t);
}

static int cmp_pair(const void *a, const void *b)
{
    const weft_message_row *x = a, *y = b;

    if (x->sender != y->sender)
        return x->sender < y->sender ? -1 : 1;
    return x->receiver < y->receiver ? -1 : x->receiver > y->receiver;
}

static int cmp_bytes(const void *a, const void *b)
{
    const weft_message_row *x = a, *y = b;

    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return cmp_pair(a, b);
}

/* 0 or WEFT_ENOMEM. */
int weft_commsum_rows(const weft_commsum *s, uint32_t sender,
                      weft_message_row **rows, size_t *n, size_t *cap)
{
    size_t first = *n;

    if (*n + s->t.used > *cap) {
        size_t c = *n + s->t.used;
        weft_message_row *v = realloc(*rows, c * sizeof *v);
        if (!v)
            return WEFT_ENOMEM;
        *rows = v;
        *cap = c;
    }
    for (size_t i = 0; i < s->t.ncells; i++) {
        const weft_commsum_cell *c = weft_hashtab_at(&s->t, i, sizeof *c);
        if (c)
            (*rows)[(*n)++] = (weft_message_row){ sender, c->key - 1,
                                                  c->messages, c->bytes };
    }
    if (*n > first)
        qsort(*rows + first, *n - first, sizeof **rows, cmp_pair);
    return 0;
}

size_t weft_commsum_cap(weft_message_row *v, size_t n, size_t max)
{
    if (n <= max)
        return n;
    qsort(v, n, sizeof *v, cmp_bytes);
    qsort(v, max, sizeof *v, cmp_pair);
    return max;
}

/* teams.c - the groups of thread teams (OpenMP's): weft's own TeamMember
 * records (weft_records.def) kept in pass 1 (weft__teams_note), and the
 * unified definitions as the archive gets them, with those groups made
 * (weft__teams_defs, which otf2defs.c writes).
 *
 * DESIGN: a client defines a team's Comm before it knows the team's
 * threads, with an empty COMM_GROUP of paradigm P and P's COMM_LOCATIONS
 * group empty too; then it tells each thread's number in the team with
 * a TeamMember. A team is complete when the first TeamMember of each
 * (team, number) covers the numbers 0..n-1 with n distinct locations of
 * the archive. Where P has that one COMM_LOCATIONS group, and it is
 * empty, the group gets the sorted locations of P's complete teams as
 * members, and each complete team a new COMM_GROUP (its old group's
 * name, paradigm and flags; members: by thread number, the index of the
 * thread's location in P's COMM_LOCATIONS group), one for all teams of
 * the same old group and members, to which its Comm then refers. The
 * rest is written as the unifier has it: an archive without TeamMember
 * records is what it was.
 * Readers want the group ids dense and written in order (otf2-print
 * -Werror), and each definition after what it refers to (the python
 * reader): new groups take the ids after the unifier's last group, each
 * written just before the first Comm that refers to it, and the
 * unifier's groups that come after the first team's Comm in first-seen
 * order are written just before that Comm instead (a group refers to
 * strings, locations, regions or metrics, never to a Comm). Teams before
 * the first Comm where every later group can be so moved (the regions
 * or metrics it names written by then) keep their empty groups.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "convert_internal.h"
#include "weft_errors.h"

#define PARADIGMS 256 /* OTF2_Paradigm is a uint8_t */

/* ---- pass 1 ------------------------------------------------------------ */

/* See convert_internal.h. */
int weft__teams_note(conv *c, const member *m, const weft_record *r)
{
    const weft_TeamMember *tm = &r->u.TeamMember;
    team_member *t;
    uint64_t g;

    if (tm->comm == OTF2_UNDEFINED_COMM) /* names nothing, as a CommName */
        return 0;
    if (weft_unify_lookup(c->u, m->rank, WEFT_REF_COMM, tm->comm, &g) < 0)
        return 1;
    if (c->nteams == c->teams_cap) {
        size_t cap = c->teams_cap ? 2 * c->teams_cap : 64;
        t = realloc(c->teams, cap * sizeof *t);
        if (!t)
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        c->teams = t;
        c->teams_cap = cap;
    }
    t = &c->teams[c->nteams];
    t->location = (uint64_t)m->rank << 32 | tm->thread;
    t->seq = c->nteams++;
    t->comm = (uint32_t)g;
    t->index = tm->index;
    return 0;
}

/* ---- the plan ---------------------------------------------------------- */

/* A complete team: the Comm at `pos` of the unifier's order. */
typedef struct team {
    size_t pos;
    const weft_record *group;  /* its empty COMM_GROUP */
    uint64_t *members;         /* n: the locations by thread number, then
                                  their indices in P's COMM_LOCATIONS */
    uint32_t n;
    uint32_t gid;              /* of its new group */
    size_t first;              /* the team whose new group it shares */
} team;

/* What weft__teams_defs works with. */
typedef struct plan {
    conv *c;
    size_t ndefs, ngroups;     /* the unifier's */
    const weft_record *where[PARADIGMS]; /* P's one COMM_LOCATIONS
                                  group when it is empty, else NULL */
    team *t;                   /* by position */
    size_t nt;
    uint64_t *slots;           /* the teams' members, then the
                                  COMM_LOCATIONS groups' (out->members) */
    size_t nslots;             /* of each half */
    size_t lo[PARADIGMS], n[PARADIGMS]; /* P's in the second half */
    size_t *at[WEFT_REF__COUNT]; /* by kind: the position of each id,
                                  for the kinds groups name among the
                                  unified definitions */
    size_t nat[WEFT_REF__COUNT];
} plan;

static int cmp_member(const void *a, const void *b)
{
    const team_member *x = a, *y = b;

    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Whether location id v is a location of the archive. */
static int is_location(conv *c, uint64_t v)
{
    member *m = weft__conv_member(c, (uint32_t)(v >> 32));

    return m && weft__conv_loc(m, (uint32_t)v, 0);
}

/* Finds each paradigm's one COMM_LOCATIONS group when it is empty. */
static void find_where(plan *p)
{
    unsigned seen[PARADIGMS] = { 0 };

    for (size_t i = 0; i < p->ngroups; i++) {
        const weft_record *g = weft_unify_get(p->c->u, WEFT_REC_Group, i);
        if (g->u.Group.groupType != OTF2_GROUP_TYPE_COMM_LOCATIONS)
            continue;
        seen[g->u.Group.paradigm]++;
        p->where[g->u.Group.paradigm] = g->u.Group.numberOfMembers ? NULL : g;
    }
    for (size_t k = 0; k < PARADIGMS; k++)
        if (seen[k] > 1)
            p->where[k] = NULL;
}

/* The empty COMM_GROUP of a paradigm that has its COMM_LOCATIONS group
 * empty that d, a Comm, refers to; NULL when it refers to another. */
static const weft_record *team_group(const plan *p, const weft_record *d)
{
    const weft_record *g;

    if (d->u.Comm.group >= p->ngroups)  /* OTF2_UNDEFINED_GROUP too */
        return NULL;
    g = weft_unify_get(p->c->u, WEFT_REC_Group, d->u.Comm.group);
    if (g->u.Group.groupType != OTF2_GROUP_TYPE_COMM_GROUP ||
        g->u.Group.numberOfMembers || !p->where[g->u.Group.paradigm])
        return NULL;
    return g;
}

/* The members of Comm `comm` into out (by thread number): their count
 * when the team is complete, else 0. scratch has room for as many. */
static uint32_t team_members(plan *p, uint32_t comm, uint64_t *out,
                             uint64_t *scratch)
{
    const team_member *v = p->c->teams, *e = v + p->c->nteams;
    size_t lo = 0, hi = p->c->nteams;
    uint32_t n = 0;

    while (lo < hi) {  /* the first of comm */
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].comm < comm)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (v += lo; v < e && v->comm == comm; v++) {
        if (n && v->index == n - 1u)  /* a later one of that number */
            continue;
        if (v->index != n || !is_location(p->c, v->location))
            return 0;
        out[n++] = v->location;
    }
    memcpy(scratch, out, n * sizeof *out);
    qsort(scratch, n, sizeof *scratch, cmp_u64);
    for (uint32_t i = 1; i < n; i++)
        if (scratch[i] == scratch[i - 1])  /* one thread twice */
            return 0;
    return n;
}

/* The complete teams, by position. 0 or WEFT_ENOMEM. */
static int find_teams(plan *p)
{
    size_t cap = 0, used = 0;

    for (size_t i = 0; i < p->ndefs; i++) {
        const weft_record *d = weft_unify_def(p->c->u, i);
        const weft_record *g;
        team *t;
        uint32_t n;
        if (d->type != WEFT_REC_Comm || !(g = team_group(p, d)))
            continue;
        n = team_members(p, d->u.Comm.self, p->slots + used,
                         p->slots + p->nslots);
        if (!n)
            continue;
        if (p->nt == cap) {
            cap = cap ? 2 * cap : 16;
            if (!(t = realloc(p->t, cap * sizeof *t)))
                return WEFT_ENOMEM;
            p->t = t;
        }
        t = &p->t[p->nt++];
        memset(t, 0, sizeof *t);
        t->pos = i;
        t->group = g;
        t->members = p->slots + used;
        t->n = n;
        used += n;
    }
    return 0;
}

/* Whether kind's definitions are among the unified ones (written there,
 * where a group may have to wait for them): strings and what weftd
 * derives (locations) are written before. */
static int late_kind(unsigned kind)
{
    return kind != WEFT_REF_NONE && kind != WEFT_REF_STRING &&
           weft_ref_kind_scope(kind) != WEFT_SCOPE_DERIVED;
}

/* Group g's references of late kinds: their kinds into *mask (bit k:
 * kind k), and the position after the last definition they name among
 * those p->at places into *after. */
static void group_refs(const plan *p, const weft_record *g, uint32_t *mask,
                       size_t *after)
{
    const weft_rec_desc *d = weft_rec_desc_of(g->type);

    *mask = 0;
    *after = 0;
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        size_t n = f->is_self || f->wire == WEFT_WIRE_Z
                       ? 0 : weft_field_nvalues(g, f);
        for (size_t k = 0; k < n; k++) {
            unsigned kind = weft_field_kind(g, d, f, k);
            uint64_t v = weft_field_value(g, f, k);
            if (!late_kind(kind) || v == weft_ref_kind_undefined(kind))
                continue;
            *mask |= UINT32_C(1) << kind;
            if (v < p->nat[kind] && p->at[kind][v] + 1 > *after)
                *after = p->at[kind][v] + 1;
        }
    }
}

/* p->at for the late kinds that groups name (none, mostly). 0 or
 * WEFT_ENOMEM. */
static int place_ids(plan *p)
{
    uint32_t mask = 0, m;
    size_t after;

    for (size_t i = 0; i < p->ngroups; i++) {
        group_refs(p, weft_unify_get(p->c->u, WEFT_REC_Group, i), &m, &after);
        mask |= m;
    }
    for (int pass = 0; mask && pass < 2; pass++) {
        for (size_t i = 0; i < p->ndefs; i++) {
            const weft_record *d = weft_unify_def(p->c->u, i);
            const weft_rec_desc *rd = weft_rec_desc_of(d->type);
            const weft_field_desc *sf;
            uint64_t id;
            if (rd->self_field < 0)
                continue;
            sf = &rd->fields[rd->self_field];
            if (!(mask >> sf->ref & 1))
                continue;
            id = weft_field_get(d, sf);
            if (pass == 0 && id >= p->nat[sf->ref])
                p->nat[sf->ref] = id + 1;
            else if (pass == 1)
                p->at[sf->ref][id] = i;
        }
        for (unsigned k = 0; pass == 0 && k < WEFT_REF__COUNT; k++)
            if ((mask >> k & 1) && p->nat[k] &&
                !(p->at[k] = calloc(p->nat[k], sizeof *p->at[k])))
                return WEFT_ENOMEM;
    }
    return 0;
}

/* Drops the teams before the first whose Comm can have every later
 * group written before it (the definitions those groups name come
 * before the Comm). 0 or WEFT_ENOMEM. */
static int keep_movable(plan *p)
{
    size_t need = 0, j = p->nt, first = p->nt;
    int rc;

    if ((rc = place_ids(p)) < 0)
        return rc;
    for (size_t i = p->ndefs; i-- > 0 && j > 0;) {
        const weft_record *d = weft_unify_def(p->c->u, i);
        uint32_t mask;
        size_t after;
        if (p->t[j - 1].pos == i) {
            if (need > i)  /* nor can any team before it */
                break;
            first = --j;
        }
        if (d->type == WEFT_REC_Group) {
            group_refs(p, d, &mask, &after);
            need = after > need ? after : need;
        }
    }
    memmove(p->t, p->t + first, (p->nt - first) * sizeof *p->t);
    p->nt -= first;
    return 0;
}

/* Each paradigm's COMM_LOCATIONS members (p->lo, p->n: the sorted
 * distinct locations of its teams, in the second half of p->slots), and
 * each team's members turned into indices there. */
static void number_locations(plan *p)
{
    uint64_t *v = p->slots + p->nslots;
    size_t used = 0;

    for (size_t k = 0; k < PARADIGMS; k++) {
        size_t n = 0;
        if (!p->where[k])
            continue;
        for (size_t i = 0; i < p->nt; i++)
            if (p->t[i].group->u.Group.paradigm == k) {
                memcpy(v + used + n, p->t[i].members,
                       p->t[i].n * sizeof *v);
                n += p->t[i].n;
            }
        qsort(v + used, n, sizeof *v, cmp_u64);
        p->lo[k] = used;
        for (size_t i = 0; i < n; i++)
            if (i == 0 || v[used + i] != v[p->lo[k] + p->n[k] - 1])
                v[p->lo[k] + p->n[k]++] = v[used + i];
        used += p->n[k];
    }
    for (size_t i = 0; i < p->nt; i++) {
        team *t = &p->t[i];
        const uint64_t *locs = v + p->lo[t->group->u.Group.paradigm];
        size_t nlocs = p->n[t->group->u.Group.paradigm];
        for (uint32_t k = 0; k < t->n; k++)
            t->members[k] = (uint64_t *)bsearch(&t->members[k], locs, nlocs,
                                                sizeof *locs, cmp_u64) - locs;
    }
}

/* Teams by old group and members: those that share a new group are
 * together, by position. */
static int cmp_members(const team *x, const team *y)
{
    if (x->group != y->group)
        return x->group->u.Group.self < y->group->u.Group.self ? -1 : 1;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return memcmp(x->members, y->members, x->n * sizeof *x->members);
}

static int cmp_team(const void *a, const void *b)
{
    const team *x = *(team *const *)a, *y = *(team *const *)b;
    int k = cmp_members(x, y);

    if (k)
        return k;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Each team's new group: shared by the teams of one old group with the
 * same members, numbered after the unifier's groups in the order of
 * their first Comms. The number of new groups, or WEFT_ENOMEM. */
static ssize_t share_groups(plan *p)
{
    team **s = malloc(p->nt * sizeof *s);
    size_t ngroups = 0;

    if (!s)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < p->nt; i++)
        s[i] = &p->t[i];
    qsort(s, p->nt, sizeof *s, cmp_team);
    for (size_t i = 0; i < p->nt; i++)
        s[i]->first = i && !cmp_members(s[i - 1], s[i])
                          ? s[i - 1]->first : (size_t)(s[i] - p->t);
    free(s);
    for (size_t i = 0; i < p->nt; i++)
        p->t[i].gid = p->t[i].first == i
                          ? (uint32_t)(p->ngroups + ngroups++)
                          : p->t[p->t[i].first].gid;
    return (ssize_t)ngroups;
}

/* ---- the definitions as written ------------------------------------ */

/* Group g (of the unifier) as written: P's COMM_LOCATIONS group with its
 * members when P has teams (made in **own, which moves on). */
static const weft_record *group_as_written(const plan *p, weft_record **own,
                                           const weft_record *g)
{
    OTF2_Paradigm k = g->u.Group.paradigm;
    weft_record *r = *own;

    if (p->where[k] != g || !p->n[k])
        return g;
    *r = *g;
    r->u.Group.numberOfMembers = (uint32_t)p->n[k];
    r->u.Group.members = p->slots + p->nslots + p->lo[k];
    ++*own;
    return r;
}

/* The list of out (room made): the unifier's order, but for the teams,
 * each with its new group before it, and the groups after the first
 * team moved before it. */
static void write_order(const plan *p, weft__team_defs *out)
{
    weft_record *own = out->own;
    size_t j = 0;

    for (size_t i = 0; i < p->ndefs; i++) {
        const weft_record *d = weft_unify_def(p->c->u, i);
        const team *t = j < p->nt && p->t[j].pos == i ? &p->t[j++] : NULL;
        if (d->type == WEFT_REC_String ||  /* (written before) */
            (d->type == WEFT_REC_Group && i > p->t[0].pos))  /* moved */
            continue;
        if (!t) {
            out->v[out->n++] = d->type == WEFT_REC_Group
                                   ? group_as_written(p, &own, d) : d;
            continue;
        }
        for (size_t q = i + 1; t == p->t && q < p->ndefs; q++) {
            const weft_record *g = weft_unify_def(p->c->u, q);
            if (g->type == WEFT_REC_Group)
                out->v[out->n++] = group_as_written(p, &own, g);
        }
        if (t->first == (size_t)(t - p->t)) {
            memset(own, 0, sizeof *own);
            own->type = WEFT_REC_Group;
            own->u.Group.self = t->gid;
            own->u.Group.name = t->group->u.Group.name;
            own->u.Group.groupType = OTF2_GROUP_TYPE_COMM_GROUP;
            own->u.Group.paradigm = t->group->u.Group.paradigm;
            own->u.Group.groupFlags = t->group->u.Group.groupFlags;
            own->u.Group.numberOfMembers = t->n;
            own->u.Group.members = t->members;
            out->v[out->n++] = own++;
        }
        *own = *d;
        own->u.Comm.group = t->gid;
        out->v[out->n++] = own++;
    }
}

/* See convert_internal.h. */
int weft__teams_defs(conv *c, weft__team_defs *out)
{
    plan p;
    ssize_t ngroups = 0;
    size_t nown = 0;
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (!c->nteams)
        return 0;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.ndefs = weft_unify_ndefs(c->u);
    p.ngroups = weft_unify_count(c->u, WEFT_REC_Group);
    p.nslots = c->nteams;
    qsort(c->teams, c->nteams, sizeof *c->teams, cmp_member);
    find_where(&p);
    if (!(p.slots = malloc(2 * p.nslots * sizeof *p.slots)))
        rc = WEFT_ENOMEM;
    if (rc < 0 || (rc = find_teams(&p)) < 0 ||
        (p.nt && (rc = keep_movable(&p)) < 0))
        goto out;
    if (!p.nt)  /* no team has its members: the archive as it was */
        goto out;
    number_locations(&p);
    if ((ngroups = share_groups(&p)) < 0) {
        rc = (int)ngroups;
        goto out;
    }
    /* Records: the COMM_LOCATIONS groups with members, new groups and
     * Comms. */
    for (size_t k = 0; k < PARADIGMS; k++)
        nown += p.n[k] != 0;
    out->v = malloc((p.ndefs + (size_t)ngroups) * sizeof *out->v);
    out->own = malloc((nown + (size_t)ngroups + p.nt) * sizeof *out->own);
    if (!out->v || !out->own) {
        rc = WEFT_ENOMEM;
        goto out;
    }
    write_order(&p, out);
    out->members = p.slots;
    p.slots = NULL;
out:
    for (unsigned k = 0; k < WEFT_REF__COUNT; k++)
        free(p.at[k]);
    free(p.t);
    free(p.slots);
    if (rc < 0) {
        weft__teams_defs_free(out);
        return weft__conv_fail(c, rc, "out of memory");
    }
    return 0;
}

/* See convert_internal.h. */
void weft__teams_defs_free(weft__team_defs *out)
{
    free(out->v);
    free(out->own);
    free(out->members);
    memset(out, 0, sizeof *out);
}

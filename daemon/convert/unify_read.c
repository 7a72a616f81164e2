/* unify_read.c - reading what a unifier built (unify.h): its global
 * definitions by type and in first-seen order, their view for the
 * report's summaries, and a member's local -> global maps.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>

#include "fail.h"
#include "profile.h"
#include "unify_internal.h"
#include "weft_errors.h"

typedef struct each_arg {
    int (*fn)(void *arg, uint64_t local, uint64_t global);
    void *arg;
} each_arg;

static int each_mapped(void *arg, uint64_t local, uint64_t value)
{
    const each_arg *a = arg;

    return value >= MAP_HELD ? 0 : a->fn(a->arg, local, value - 1u);
}

int weft_unify_each_local(const weft_unifier *u, uint32_t mid, unsigned kind,
                          int (*fn)(void *arg, uint64_t local,
                                    uint64_t global),
                          void *arg)
{
    const member *m;
    each_arg a = { fn, arg };

    assert(u && fn && kind < WEFT_REF__COUNT);
    m = weft__unify_member_find(u, mid);
    return m ? weft_idset_each(&m->maps[kind], each_mapped, &a) : 0;
}

const uint64_t *weft_unify_id_table(const weft_unifier *u, uint32_t mid,
                                    unsigned kind, size_t *n)
{
    const member *m;

    assert(u && n && kind < WEFT_REF__COUNT);
    m = weft__unify_member_find(u, mid);
    if (!m) {
        *n = 0;
        return NULL;
    }
    return weft_idset_dense(&m->maps[kind], n);
}

typedef struct compose_arg {
    const member *to;   /* the member in `to` */
    unsigned kind;
    uint32_t *v;        /* by `from`'s id */
    size_t n;
    uint64_t local;     /* a local id that conflicted, with what it met */
    uint32_t was, now;
} compose_arg;

static int compose_one(void *arg, uint64_t local, uint64_t id)
{
    compose_arg *a = arg;
    uint32_t g = map_get(a->to, a->kind, local);

    if (id >= a->n || !g)
        return 0;
    if (a->v[id] != WEFT_UNIFY_NO_ID && a->v[id] != g - 1u) {
        a->local = local;
        a->was = a->v[id];
        a->now = g - 1u;
        return WEFT_ECONFLICT;
    }
    a->v[id] = g - 1u;
    return 0;
}

int weft_unify_compose(const weft_unifier *from, const weft_unifier *to,
                       uint32_t mid, unsigned kind, uint32_t **out,
                       size_t *n, char *err, size_t errlen)
{
    compose_arg a = { .kind = kind };
    int rc;

    assert(from && to && out && n && kind < WEFT_REF__COUNT &&
           weft_ref_kind_scope(kind) != WEFT_SCOPE_DERIVED);
    *out = NULL;
    *n = 0;
    a.n = from->next_id[kind];
    if (!a.n)
        return 0;
    if (!(a.v = malloc(a.n * sizeof *a.v)))
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < a.n; i++)
        a.v[i] = WEFT_UNIFY_NO_ID;
    a.to = weft__unify_member_find(to, mid);
    rc = weft_unify_each_local(from, mid, kind, compose_one, &a);
    if (rc < 0) {
        free(a.v);
        return weft__fail(err, errlen, rc, "member %" PRIu32 ": %s %" PRIu64
                          " is %s %" PRIu32 " and %" PRIu32 " of the trace",
                          mid, weft_ref_kind_name(kind), a.local,
                          weft_ref_kind_name(kind), a.was, a.now);
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

/* Global id of a member's local id: 0 and *global, or WEFT_ENOTFOUND. */
int weft_unify_lookup(const weft_unifier *u, uint32_t mid, unsigned kind,
                      uint64_t local, uint64_t *global)
{
    uint32_t g;

    assert(u && global);
    if (kind == WEFT_REF_NONE || kind >= WEFT_REF__COUNT)
        return WEFT_ENOTFOUND;
    g = map_get(weft__unify_member_find(u, mid), kind, local);
    if (!g)
        return WEFT_ENOTFOUND;
    *global = g - 1u;
    return 0;
}

/* Number of global definitions of record type `type`. */
size_t weft_unify_count(const weft_unifier *u, uint32_t type)
{
    const type_list *l = weft__unify_list_of(u, type);

    return l ? l->n : 0;
}

/* The i-th global definition of `type`, owned by u; NULL past the end. */
const weft_record *weft_unify_get(const weft_unifier *u, uint32_t type,
                                  size_t i)
{
    const type_list *l = weft__unify_list_of(u, type);

    return l && i < l->n ? &l->v[i]->rec : NULL;
}

/* The text of global String id, "" when there is none. */
const char *weft_unify_string(const weft_unifier *u, uint32_t id)
{
    const weft_record *s = weft_unify_get(u, WEFT_REC_String, id);

    if (!s || s->u.String.self != id || !s->u.String.string)
        return "";
    return s->u.String.string;
}

/* Number of global definitions of all types. */
size_t weft_unify_ndefs(const weft_unifier *u)
{
    return u->norder;
}

/* The i-th global definition in first-seen order, owned by u. */
const weft_record *weft_unify_def(const weft_unifier *u, size_t i)
{
    return i < u->norder ? &u->order[i]->rec : NULL;
}

/* See unify.h. */
const char *weft_unify_region_name(const void *u, uint32_t id)
{
    const weft_record *r = weft_unify_get(u, WEFT_REC_Region, id);

    if (!r || r->u.Region.self != id)
        return "";
    return weft_unify_string(u, r->u.Region.name);
}

/* See unify.h. */
const char *weft_unify_region_paradigm(const void *u, uint32_t id, char *buf)
{
    const weft_record *r = weft_unify_get(u, WEFT_REC_Region, id);

    if (!r || r->u.Region.self != id)
        return "";
    return weft_profile_paradigm_name(r->u.Region.paradigm,
                                      r->u.Region.regionRole, buf);
}

static size_t view_count(const void *u, uint32_t type)
{
    return weft_unify_count(u, type);
}

static const weft_record *view_get(const void *u, uint32_t type, size_t i)
{
    return weft_unify_get(u, type, i);
}

static const char *view_string(const void *u, uint32_t id)
{
    return weft_unify_string(u, id);
}

weft_defview weft_unify_view(const weft_unifier *u)
{
    return (weft_defview){ u, view_count, view_get, view_string };
}

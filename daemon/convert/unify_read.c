/* unify_read.c - reading what a unifier built (unify.h): its global
 * definitions by type and in first-seen order, their view for the
 * report's summaries, and a member's local -> global maps.
 */
#include <assert.h>
#include <stdlib.h>

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

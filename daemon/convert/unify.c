/* unify.c - definition unification (see unify.h).
 *
 * DESIGN: a global definition is kept as one allocation (def_entry): the
 * record with global ids, its encoded content as the lookup key, and
 * copies of its strings and arrays. The key is the record encoded with
 * weft_encode after mapping, with its own id set to 0, so "same content"
 * means "same bytes" for every record kind without knowing any of them.
 * Keys live in a POSIX tsearch tree. Local->global maps are id sets per
 * (member, id space) (idset.h: memory by the ids defined, not by their
 * size), holding global id + 1 by local id; a pseudo-member `all` holds
 * the derived mappings that apply to every member.
 * Keyed definitions (unify.h) also go into a second tree by identity:
 * record type, key field values after mapping and, for NATURE ids, the
 * id itself. A second definition with a known identity must have the same
 * content key as the first, or it is a conflict.
 * What is built is read in unify_read.c; the structures both share are
 * in unify_internal.h.
 */
#include "unify.h"

#include <assert.h>
#include <inttypes.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "fail.h"
#include "idset.h"
#include "unify_internal.h"
#include "weft_errors.h"

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)


/* Returns array v (elements of `size` bytes, capacity *cap) grown to
 * hold n elements, or NULL with v and *cap unchanged. */
static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
    size_t c = *cap ? *cap : 16;
    void *p;

    if (n <= *cap)
        return v;
    while (c < n)
        c *= 2;
    p = realloc(v, c * size);
    if (p)
        *cap = c;
    return p;
}

static int cmp_entry(const void *a, const void *b)
{
    const def_entry *x = a, *y = b;

    if (x->keylen != y->keylen)
        return x->keylen < y->keylen ? -1 : 1;
    return memcmp(x->key, y->key, x->keylen);
}

static void no_free(void *p)
{
    (void)p;
}

static int cmp_ident(const void *a, const void *b)
{
    const ident_entry *x = a, *y = b;

    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return memcmp(x->key, y->key, x->len);
}

static const void *get_ptr(const weft_record *r, const weft_field_desc *f)
{
    const void *p;

    memcpy(&p, weft_field_cptr(r, f), sizeof p);
    return p;
}

static void set_ptr(weft_record *r, const weft_field_desc *f, const void *p)
{
    memcpy(weft_field_ptr(r, f), &p, sizeof p);
}


type_list *weft__unify_list_of(const weft_unifier *u, uint32_t type)
{
    for (size_t i = 0; i < u->nlists; i++)
        if (u->lists[i].type == type)
            return &u->lists[i];
    return NULL;
}

static int member_cmp(const void *key, const void *elem)
{
    uint32_t id = *(const uint32_t *)key;
    const member *m = *(member *const *)elem;

    return id < m->id ? -1 : id > m->id;
}

member *weft__unify_member_find(const weft_unifier *u, uint32_t id)
{
    member **p;

    if (!u->nmembers)
        return NULL;
    p = bsearch(&id, u->members, u->nmembers, sizeof *u->members,
                member_cmp);
    return p ? *p : NULL;
}

static int member_get(weft_unifier *u, uint32_t id, member **out)
{
    member *m = weft__unify_member_find(u, id);
    member **members;
    size_t i;

    if (m) {
        *out = m;
        return 0;
    }
    members = grow(u->members, &u->members_cap, u->nmembers + 1,
                   sizeof *u->members);
    if (!members)
        return WEFT_ENOMEM;
    u->members = members;
    m = calloc(1, sizeof *m);
    if (!m)
        return WEFT_ENOMEM;
    m->id = id;
    for (i = u->nmembers; i > 0 && u->members[i - 1]->id > id; i--)
        ;
    memmove(u->members + i + 1, u->members + i,
            (u->nmembers - i) * sizeof *u->members);
    u->members[i] = m;
    u->nmembers++;
    *out = m;
    return 0;
}

_Static_assert(WEFT_REF__COUNT <= 32, "a uint32_t of kinds holds them all");


/* Member mid of u (made if new) in *m, with room for its local id of
 * kind (MAP_HELD) unless it had a mapping (had). 0 or WEFT_ENOMEM. */
static int hold_local(weft_unifier *u, uint32_t mid, unsigned kind,
                      uint64_t local, uint32_t had, member **m)
{
    int rc = member_get(u, mid, m);

    if (rc == 0 && !had)
        rc = weft_idset_put(&(*m)->maps[kind], local, MAP_HELD);
    return rc;
}

/* Maps one reference value v of id space `kind`. m NULL and global set:
 * v must be a global id of this unifier; else a local id of member `mid`
 * (m may be NULL when the member has defined nothing yet). */
static int map_value(const weft_unifier *u, const member *m, uint32_t mid,
                     int global, const weft_rec_desc *d,
                     const weft_field_desc *f, unsigned kind, uint64_t v,
                     uint64_t *out, char *err, size_t errlen)
{
    uint32_t g;

    if (v == weft_ref_kind_undefined(kind)) {
        *out = v;
        return 0;
    }
    if (weft_ref_kind_scope(kind) == WEFT_SCOPE_DERIVED) {
        if (global || kind == WEFT_REF_LOCATION) {
            *out = v; /* weftd's own ids, and locations, are global */
            return 0;
        }
        g = map_get(m, kind, v);
        if (!g)
            g = map_get(&u->all, kind, v);
        if (!g && u->derived_own) {
            *out = v;
            return 0;
        }
        if (!g)
            return weft__fail(err, errlen, WEFT_EREF, "member %" PRIu32 ": "
                              "%s.%s = %" PRIu64 ": no such %s (clients name "
                              "the system tree nodes 0 and 1 and location "
                              "groups by rank)", mid, d->name, f->name, v,
                              weft_ref_kind_name(kind));
        *out = g - 1u;
        return 0;
    }
    if (global) {
        if (v >= u->next_id[kind])
            return weft__fail(err, errlen, WEFT_EREF, "%s.%s = %" PRIu64
                              ": no global %s definition with this id", d->name,
                              f->name, v, weft_ref_kind_name(kind));
        *out = v;
        return 0;
    }
    g = map_get(m, kind, v);
    if (!g)
        return weft__fail(err, errlen, WEFT_EREF, "member %" PRIu32 ": %s.%s = "
                          "%" PRIu64 ": this member defined no %s with this id",
                          mid, d->name, f->name, v, weft_ref_kind_name(kind));
    *out = g - 1u;
    return 0;
}

/* Can field f hold references (for some value of its selector)? */
static int may_refer(const weft_field_desc *f)
{
    return (f->ref != WEFT_REF_NONE || f->sel_map != WEFT_SEL_NONE) &&
           !f->is_self;
}

/* Does array field f of r hold a reference now? (Typed values of plain
 * types, such as metric values, are left where they are.) */
static int array_refers(const weft_rec_desc *d, const weft_record *r,
                        const weft_field_desc *f)
{
    size_t n;

    if (!f->is_array || !may_refer(f))
        return 0;
    n = weft_field_count(r, f);
    if (f->ref != WEFT_REF_NONE)
        return n > 0;
    for (size_t k = 0; k < n; k++)
        if (weft_field_kind(r, d, f, k) != WEFT_REF_NONE)
            return 1;
    return 0;
}

/* Maps every reference of r of the id spaces in `kinds` (bit k: kind k)
 * except its own id, in place; arrays holding references are copied to
 * (*buf, *cap) first and r's pointers redirected there. */
static int map_refs(const weft_unifier *u, const member *m, uint32_t mid,
                    int global, uint32_t kinds, const weft_rec_desc *d,
                    weft_record *r, void **buf, size_t *cap, char *err,
                    size_t errlen)
{
    uint64_t copied = 0; /* bit i: field i was copied */
    size_t need = 0, off = 0;
    uint64_t v = 0;
    int rc;

    if (d->is_scalar) {  /* most events: no array to copy */
        for (unsigned i = 0; i < d->nfields; i++) {
            const weft_field_desc *f = &d->fields[i];
            unsigned kind;
            if (!may_refer(f) ||
                (kind = weft_field_kind(r, d, f, 0)) == WEFT_REF_NONE ||
                !(kinds >> kind & 1))
                continue;
            rc = map_value(u, m, mid, global, d, f, kind,
                           weft_field_get(r, f), &v, err, errlen);
            if (rc < 0)
                return rc;
            weft_field_set(r, f, v);
        }
        return 0;
    }
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        if (array_refers(d, r, f)) {
            need += ALIGN8(weft_field_count(r, f) * f->size);
            copied |= (uint64_t)1 << i;
        }
    }
    if (need > *cap) {
        void *p = realloc(*buf, need);
        if (!p)
            return weft__fail(err, errlen, WEFT_ENOMEM, "%s: out of memory",
                              d->name);
        *buf = p;
        *cap = need;
    }
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        size_t n;
        if (!may_refer(f) || (f->is_array && !(copied >> i & 1)))
            continue;
        n = weft_field_nvalues(r, f);
        if (f->is_array) {
            uint8_t *dst = (uint8_t *)*buf + off;
            memcpy(dst, get_ptr(r, f), n * f->size);
            set_ptr(r, f, dst);
            off += ALIGN8(n * f->size);
        }
        for (size_t k = 0; k < n; k++) {
            unsigned kind = weft_field_kind(r, d, f, k);
            if (kind == WEFT_REF_NONE || !(kinds >> kind & 1))
                continue;
            rc = map_value(u, m, mid, global, d, f, kind,
                           weft_field_value(r, f, k), &v, err, errlen);
            if (rc < 0)
                return rc;
            if (f->is_array)
                weft_field_set_elem(r, f, k, v);
            else
                weft_field_set(r, f, v);
        }
    }
    return 0;
}

/* Encodes r (with its own id already zeroed) into u->key. */
static ssize_t encode_key(weft_unifier *u, const weft_record *r)
{
    size_t bound = weft_encode_bound(r);

    if (bound > u->key_cap) {
        uint8_t *p = realloc(u->key, bound);
        if (!p)
            return WEFT_ENOMEM;
        u->key = p;
        u->key_cap = bound;
    }
    return weft_encode(r, NULL, u->key, u->key_cap);
}

static def_entry *find(const weft_unifier *u, size_t keylen)
{
    def_entry probe;
    void *const *node;

    memset(&probe, 0, sizeof probe);
    probe.key = u->key;
    probe.keylen = keylen;
    node = tfind(&probe, &u->tree, cmp_entry);
    return node ? *(def_entry *const *)node : NULL;
}

/* Stores mapped record r (key in u->key) as a new global definition. */
static int add_entry(weft_unifier *u, const weft_rec_desc *d,
                     const weft_record *r, size_t keylen, def_entry **out,
                     char *err, size_t errlen)
{
    type_list *list = weft__unify_list_of(u, d->type);
    size_t size = sizeof(def_entry) + ALIGN8(keylen);
    def_entry **order, **listv;
    def_entry *e;
    uint8_t *p;

    assert(list);
    if (d->self_field >= 0) {
        unsigned kind = d->fields[d->self_field].ref;
        if (u->next_id[kind] >= u->max_ids)
            return weft__fail(err, errlen, WEFT_ELIMIT, "%s: more than %" PRIu32
                              " global %s definitions", d->name, u->max_ids,
                              weft_ref_kind_name(kind));
    }
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *s = get_ptr(r, f);
            size += ALIGN8((s ? strlen(s) : 0) + 1);
        } else if (f->is_array) {
            size += ALIGN8(weft_field_count(r, f) * f->size);
        }
    }
    order = grow(u->order, &u->order_cap, u->norder + 1, sizeof *u->order);
    if (order)
        u->order = order;
    listv = grow(list->v, &list->cap, list->n + 1, sizeof *list->v);
    if (listv)
        list->v = listv;
    if (!order || !listv || !(e = malloc(size)))
        return weft__fail(err, errlen, WEFT_ENOMEM, "%s: out of memory",
                          d->name);
    p = e->data;
    memcpy(p, u->key, keylen);
    e->key = p;
    e->keylen = keylen;
    p += ALIGN8(keylen);
    e->rec = *r;
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        if (f->wire == WEFT_WIRE_Z) {
            const char *s = get_ptr(r, f);
            size_t n = s ? strlen(s) : 0;
            if (n)
                memcpy(p, s, n);
            p[n] = 0;
            set_ptr(&e->rec, f, p);
            p += ALIGN8(n + 1);
        } else if (f->is_array) {
            size_t n = weft_field_count(r, f) * f->size;
            if (n)
                memcpy(p, get_ptr(r, f), n);
            set_ptr(&e->rec, f, n ? p : NULL);
            p += ALIGN8(n);
        }
    }
    e->gid = UINT64_MAX;
    e->renamed = 0;
    if (d->self_field >= 0) {
        const weft_field_desc *sf = &d->fields[d->self_field];
        e->gid = u->next_id[sf->ref];
        weft_field_set(&e->rec, sf, e->gid);
    }
    if (!tsearch(e, &u->tree, cmp_entry)) {
        free(e);
        return weft__fail(err, errlen, WEFT_ENOMEM, "%s: out of memory",
                          d->name);
    }
    if (d->self_field >= 0)
        u->next_id[d->fields[d->self_field].ref]++;
    u->order[u->norder++] = e;
    list->v[list->n++] = e;
    *out = e;
    return 0;
}

/* Renders r for an error message. */
static const char *describe(const weft_record *r, char *buf, size_t n)
{
    FILE *f = fmemopen(buf, n, "w");

    buf[0] = 0;
    if (f) {
        weft_record_print(f, r);
        fclose(f);
    }
    buf[n - 1] = 0;
    return buf;
}

/* Returns a new empty unifier (the caller's, weft_unify_free) or NULL. */
weft_unifier *weft_unify_new(uint32_t max_ids)
{
    const weft_rec_desc *const *descs;
    weft_unifier *u;
    size_t n;

    if (max_ids == 0)
        max_ids = WEFT_UNIFY_DEFAULT_MAX_IDS;
    assert(max_ids <= (1u << 31));
    u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->max_ids = max_ids;
    descs = weft_rec_descs(&n);
    u->lists = calloc(n, sizeof *u->lists);
    if (!u->lists) {
        free(u);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!descs[i]->is_event && !descs[i]->is_pseudo &&
            !(descs[i]->flags & WEFT_DF_LOCAL))
            u->lists[u->nlists++].type = descs[i]->type;
    return u;
}

/* Frees u, its definitions and their strings (NULL is fine). */
void weft_unify_free(weft_unifier *u)
{
    if (!u)
        return;
    tdestroy(u->tree, no_free);
    tdestroy(u->idents, free);
    for (unsigned k = 0; k < WEFT_REF__COUNT; k++)
        weft_idset_free(&u->all.maps[k]);
    for (size_t i = 0; i < u->norder; i++)
        free(u->order[i]);
    free(u->order);
    for (size_t i = 0; i < u->nlists; i++)
        free(u->lists[i].v);
    free(u->lists);
    for (size_t i = 0; i < u->nmembers; i++) {
        for (unsigned k = 0; k < WEFT_REF__COUNT; k++)
            weft_idset_free(&u->members[i]->maps[k]);
        free(u->members[i]);
    }
    free(u->members);
    free(u->key);
    weft_unify_scratch_free(&u->arrays);
    free(u);
}

/* Identity of keyed definition r (references mapped; `local` its own id
 * as the member gave it) into buf: type, key fields, and a NATURE id.
 * Returns the length, 0 if r is not keyed. */
static size_t identity(const weft_rec_desc *d, const weft_record *r,
                       uint64_t local, uint8_t *buf)
{
    size_t n = 0;

    if (!d->is_keyed)
        return 0;
    memcpy(buf, &d->type, 4);
    n = 4;
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        uint64_t v;
        if (f->is_self && weft_ref_kind_scope(f->ref) == WEFT_SCOPE_NATURE)
            v = local;
        else if (f->is_key)
            v = weft_field_get(r, f);
        else
            continue;
        assert(n + 8 <= IDENT_MAX);
        memcpy(buf + n, &v, 8);
        n += 8;
    }
    return n;
}

static ident_entry *ident_find(const weft_unifier *u, const uint8_t *key,
                               size_t len)
{
    uint8_t probe_mem[sizeof(ident_entry) + IDENT_MAX];
    ident_entry *probe = (ident_entry *)probe_mem;
    void *const *node;

    probe->e = NULL;
    probe->len = len;
    memcpy(probe->key, key, len);
    node = tfind(probe, &u->idents, cmp_ident);
    return node ? *(ident_entry *const *)node : NULL;
}

static int ident_add(weft_unifier *u, const uint8_t *key, size_t len,
                     def_entry *e)
{
    ident_entry *ie = malloc(sizeof *ie + len);

    if (!ie)
        return WEFT_ENOMEM;
    ie->e = e;
    ie->len = len;
    memcpy(ie->key, key, len);
    if (!tsearch(ie, &u->idents, cmp_ident)) {
        free(ie);
        return WEFT_ENOMEM;
    }
    return 0;
}

/* The message of a conflict between r (of member mid) and entry e. */
static int conflict(const weft_rec_desc *d, uint32_t mid, weft_record *r,
                    const def_entry *e, char *err, size_t errlen)
{
    char mine[192], theirs[192];

    if (d->self_field >= 0)
        weft_field_set(r, &d->fields[d->self_field], e->gid);
    return weft__fail(err, errlen, WEFT_ECONFLICT, "member %" PRIu32 ": %s "
                      "conflicts with the definition of member %" PRIu32 " "
                      "(ids after unification): member %" PRIu32 " has {%s}, "
                      "member %" PRIu32 " has {%s}", mid, d->name, e->member,
                      e->member, describe(&e->rec, theirs, sizeof theirs), mid,
                      describe(r, mine, sizeof mine));
}

/* Maps and adds a member's definition (see unify.h). Returns 0 or a
 * WEFT_E* code with err set; def stays the caller's, nothing is kept. */
/* Applies weft's own record r (WEFT_DF_WEFT, references mapped): a
 * CommName names its communicator, unless an earlier one did; a
 * ThreadName concerns a member's location, which the converter names
 * (convert.c), and a TeamMember a team's group, which the converter
 * writes (otf2defs.c), not the unified definitions. Returns 0 or
 * WEFT_EREF when no communicator has that id. */
static int apply_weft(weft_unifier *u, uint32_t mid, const weft_record *r,
                      char *err, size_t errlen)
{
    static const uint32_t kinds[] = { WEFT_REC_Comm, WEFT_REC_InterComm };
    uint64_t comm;

    if (r->type == WEFT_REC_ThreadName || r->type == WEFT_REC_TeamMember)
        return 0;
    assert(r->type == WEFT_REC_CommName);
    comm = r->u.CommName.comm;
    if (comm == OTF2_UNDEFINED_COMM) /* ingest took it: it names nothing */
        return 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        type_list *l = weft__unify_list_of(u, kinds[k]);
        for (size_t i = 0; l && i < l->n; i++) {
            def_entry *e = l->v[i];
            if (e->gid != comm)
                continue;
            if (!e->renamed) {
                if (e->rec.type == WEFT_REC_Comm)
                    e->rec.u.Comm.name = r->u.CommName.name;
                else
                    e->rec.u.InterComm.name = r->u.CommName.name;
                e->renamed = 1;
            }
            return 0;
        }
    }
    return weft__fail(err, errlen, WEFT_EREF, "member %" PRIu32 ": "
                      "CommName.comm = %" PRIu64 " names no communicator", mid,
                      comm);
}

/* 0 if member mid may send def (type d, NULL: none) to be unified. */
static int check_def(const weft_unifier *u, uint32_t mid,
                     const weft_record *def, const weft_rec_desc *d,
                     char *err, size_t errlen)
{
    if (!d || d->is_event || d->is_pseudo)
        return weft__fail(err, errlen, WEFT_ETYPE, "member %" PRIu32 ": record "
                          "type %" PRIu32 " is not a definition", mid,
                          def->type);
    if (d->flags & (WEFT_DF_DAEMON | WEFT_DF_LOCAL))
        return weft__fail(err, errlen, WEFT_ETYPE, "member %" PRIu32 ": %s "
                          "definitions %s", mid, d->name,
                          d->flags & WEFT_DF_DAEMON
                              ? "are made by weftd, not sent by members"
                              : "belong to locations and are not unified");
    if (mid >= u->max_ids)
        return weft__fail(err, errlen, WEFT_ELIMIT, "member %" PRIu32 ": "
                          "member numbers are limited to %" PRIu32, mid,
                          u->max_ids);
    return 0;
}

int weft_unify_add_def(weft_unifier *u, uint32_t mid, const weft_record *def,
                       char *err, size_t errlen)
{
    const weft_rec_desc *d;
    const weft_field_desc *sf = NULL;
    weft_record r;
    member *m;
    def_entry *e;
    ident_entry *ie = NULL;
    uint8_t ident[IDENT_MAX];
    size_t identlen;
    uint64_t local = 0;
    uint32_t had = 0;
    int kept = 0;
    ssize_t keylen;
    char text[160];
    int rc;

    assert(u && def);
    d = weft_rec_desc_of(def->type);
    if ((rc = check_def(u, mid, def, d, err, errlen)) < 0)
        return rc;
    r = *def;
    m = weft__unify_member_find(u, mid);
    rc = map_refs(u, m, mid, 0, WEFT_UNIFY_KINDS_ALL, d, &r, &u->arrays.buf, &u->arrays.cap, err,
                  errlen);
    if (rc < 0)
        return rc;
    if (d->flags & WEFT_DF_WEFT)
        return apply_weft(u, mid, &r, err, errlen);
    if (d->self_field >= 0) {
        sf = &d->fields[d->self_field];
        local = weft_field_get(&r, sf);
        if (local == weft_ref_kind_undefined(sf->ref))
            return weft__fail(err, errlen, WEFT_EREF, "member %" PRIu32 ": %s."
                              "%s = %" PRIu64 " is the undefined %s id", mid,
                              d->name, sf->name, local,
                              weft_ref_kind_name(sf->ref));
        if (local >= u->max_ids)
            return weft__fail(err, errlen, WEFT_ELIMIT, "member %" PRIu32 ": "
                              "%s.%s = %" PRIu64 " exceeds the id limit %"
                              PRIu32, mid, d->name, sf->name, local,
                              u->max_ids);
        had = map_get(m, sf->ref, local);
        weft_field_set(&r, sf, 0);
    }
    keylen = encode_key(u, &r);
    if (keylen < 0)
        return weft__fail(err, errlen, (int)keylen, "member %" PRIu32 ": %s: "
                          "cannot encode: %s", mid, d->name,
                          weft_strerror((int)keylen));
    e = find(u, (size_t)keylen);
    identlen = identity(d, &r, local, ident);
    if (identlen) {
        ie = ident_find(u, ident, identlen);
        if (ie && ie->e != e) {
            rc = conflict(d, mid, &r, ie->e, err, errlen);
            if (!u->keep_first)
                return rc;
            e = ie->e;  /* it stands; this member's id means it */
            kept = 1;
        }
    }
    if (had && (!e || e->gid != had - 1u)) {
        if (sf)
            weft_field_set(&r, sf, local);
        return weft__fail(err, errlen, WEFT_EEXIST, "member %" PRIu32 ": %s %s "
                          "= %" PRIu64 " defined again with different content: "
                          "%s", mid, d->name, sf->name, local,
                          describe(&r, text, sizeof text));
    }
    if (sf && (rc = hold_local(u, mid, sf->ref, local, had, &m)) < 0)
        return weft__fail(err, errlen, rc, "member %" PRIu32 ": %s: out of "
                          "memory", mid, d->name);
    if (!e) {
        rc = add_entry(u, d, &r, (size_t)keylen, &e, err, errlen);
        if (rc < 0)
            goto unhold;
        e->member = mid;
    }
    if (identlen && !ie && ident_add(u, ident, identlen, e) < 0) {
        rc = weft__fail(err, errlen, WEFT_ENOMEM, "member %" PRIu32 ": %s: out "
                        "of memory", mid, d->name);
        goto unhold;
    }
    if (sf) /* an id it holds: no memory needed */
        weft_idset_put(&m->maps[sf->ref], local, e->gid + 1u);
    return kept;
unhold:
    if (sf && !had)
        weft_idset_del(&m->maps[sf->ref], local);
    return rc;
}

void weft_unify_keep_first(weft_unifier *u, int on)
{
    assert(u);
    u->keep_first = on != 0;
}

void weft_unify_derived_own(weft_unifier *u, int on)
{
    assert(u);
    u->derived_own = on != 0;
}

/* Sets a derived mapping (see unify.h). Returns 0 or a WEFT_E* code. */
int weft_unify_set_derived(weft_unifier *u, uint32_t mid, unsigned kind,
                           uint64_t local, uint64_t global, char *err,
                           size_t errlen)
{
    member *m = &u->all;
    int rc;

    assert(u);
    if (kind == WEFT_REF_NONE || kind >= WEFT_REF__COUNT ||
        weft_ref_kind_scope(kind) != WEFT_SCOPE_DERIVED ||
        kind == WEFT_REF_LOCATION)
        return weft__fail(err, errlen, WEFT_EINVAL, "%s ids are not mapped",
                          weft_ref_kind_name(kind));
    if (local >= u->max_ids || global >= u->max_ids ||
        (mid != WEFT_UNIFY_ALL && mid >= u->max_ids))
        return weft__fail(err, errlen, WEFT_ELIMIT, "%s %" PRIu64 " -> %" PRIu64
                          " for member %" PRIu32 ": beyond the id limit %"
                          PRIu32, weft_ref_kind_name(kind), local, global, mid,
                          u->max_ids);
    if (mid != WEFT_UNIFY_ALL && (rc = member_get(u, mid, &m)) < 0)
        return weft__fail(err, errlen, rc, "out of memory");
    if ((rc = weft_idset_put(&m->maps[kind], local, global + 1u)) < 0)
        return weft__fail(err, errlen, rc, "out of memory");
    return 0;
}

/* Adds a weftd-made definition with global references; *gid gets its
 * id. Returns 0 or a WEFT_E* code with err set. */
int weft_unify_add_global(weft_unifier *u, const weft_record *def,
                          uint64_t *gid, char *err, size_t errlen)
{
    const weft_rec_desc *d;
    weft_record r;
    def_entry *e;
    ssize_t keylen;
    int rc;

    assert(u && def);
    d = weft_rec_desc_of(def->type);
    if (!d || d->is_event || d->is_pseudo || (d->flags & WEFT_DF_LOCAL))
        return weft__fail(err, errlen, WEFT_ETYPE, "record type %" PRIu32
                          " is not a global definition", def->type);
    r = *def;
    rc = map_refs(u, NULL, 0, 1, WEFT_UNIFY_KINDS_ALL, d, &r, &u->arrays.buf, &u->arrays.cap, err,
                  errlen);
    if (rc < 0)
        return rc;
    if (d->self_field >= 0)
        weft_field_set(&r, &d->fields[d->self_field], 0);
    keylen = encode_key(u, &r);
    if (keylen < 0)
        return weft__fail(err, errlen, (int)keylen, "%s: cannot encode: %s",
                          d->name, weft_strerror((int)keylen));
    e = find(u, (size_t)keylen);
    if (!e) {
        rc = add_entry(u, d, &r, (size_t)keylen, &e, err, errlen);
        if (rc < 0)
            return rc;
        e->member = WEFT_UNIFY_ALL;
    }
    if (gid)
        *gid = e->gid;
    return 0;
}

/* Rewrites ev's references (and its attribute list's) of the id spaces
 * in `kinds` to global ids; mapped copies live in the caller's scratch.
 * Returns 0 or a WEFT_E* code with err set. */
int weft_unify_map_event_kinds(const weft_unifier *u, uint32_t mid,
                               weft_record *ev, weft_unify_scratch *scratch,
                               uint32_t kinds, char *err, size_t errlen)
{
    const weft_rec_desc *d;
    const member *m;
    int rc;

    assert(u && ev && scratch);
    d = weft_rec_desc_of(ev->type);
    if (!d || !d->is_event)
        return weft__fail(err, errlen, WEFT_ETYPE, "member %" PRIu32 ": record "
                          "type %" PRIu32 " is not an event", mid, ev->type);
    /* Events come in runs of one member: remember its lookup. */
    if (scratch->unifier == u && scratch->member &&
        scratch->member_id == mid) {
        m = scratch->member;
    } else {
        m = weft__unify_member_find(u, mid);
        scratch->unifier = u;
        scratch->member = m;
        scratch->member_id = mid;
    }
    /* Enter/Leave, most of any trace: one region, mapped directly (an
     * unknown one goes the generic way, which says why). */
    if ((ev->type == WEFT_REC_Enter || ev->type == WEFT_REC_Leave) &&
        !ev->attributes) {
        if (!(kinds >> WEFT_REF_REGION & 1))
            return 0;
        uint32_t *region = ev->type == WEFT_REC_Enter ? &ev->u.Enter.region
                                                      : &ev->u.Leave.region;
        uint32_t g = *region == OTF2_UNDEFINED_REGION
                         ? 0 : map_get(m, WEFT_REF_REGION, *region);
        if (*region == OTF2_UNDEFINED_REGION)
            return 0;
        if (g) {
            *region = g - 1u;
            return 0;
        }
    }
    rc = map_refs(u, m, mid, 0, kinds, d, ev, &scratch->buf, &scratch->cap,
                  err, errlen);
    if (rc == 0 && ev->attributes) {
        const weft_rec_desc *ad = weft_rec_desc_of(ev->attributes->type);
        if (!ad || !ad->is_pseudo)
            return weft__fail(err, errlen, WEFT_ETYPE, "member %" PRIu32 ": "
                              "%s: attributes of type %" PRIu32 " are no "
                              "attribute list", mid, d->name,
                              ev->attributes->type);
        scratch->attrs = *ev->attributes;
        rc = map_refs(u, m, mid, 0, kinds, ad, &scratch->attrs,
                      &scratch->abuf, &scratch->acap, err, errlen);
        ev->attributes = &scratch->attrs;
    }
    return rc;
}

int weft_unify_map_event(const weft_unifier *u, uint32_t mid,
                         weft_record *ev, weft_unify_scratch *scratch,
                         char *err, size_t errlen)
{
    return weft_unify_map_event_kinds(u, mid, ev, scratch,
                                      WEFT_UNIFY_KINDS_ALL, err, errlen);
}

/* Frees the scratch memory and empties it for reuse. */
void weft_unify_scratch_free(weft_unify_scratch *scratch)
{
    free(scratch->buf);
    free(scratch->abuf);
    memset(scratch, 0, sizeof *scratch);
}

/* defs.c - libweft's definitions: strings and regions interned (equal
 * names, one id), metrics, and the pending definitions stream that the
 * sender ships as Definitions frames (weft__def_append for api.c's
 * weft_def_*).
 *
 * Definitions are encoded into chunks of at most WEFT__DEFS_CHUNK bytes
 * under the session mutex; a chunk gets its sequence number when the
 * sender takes it, and is freed at weftd's Ack (conn.c). Tracing off
 * (DISCARD, FORKED) still hands out ids, so the program behaves the same,
 * but keeps nothing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "client_internal.h"
#include "codec.h"
#include "fifo.h"
#include "record.h"
#include "recorder.h"
#include "client_session.h"
#include "weft.h"
#include "weft_errors.h"

/* weft_metric remembers value types for metric ids below this. */
#define WEFT__METRIC_TYPES 4096

static _Atomic uint8_t metric_types[WEFT__METRIC_TYPES];

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The slot holding s, or the empty slot where it would go. cap > 0. */
static weft__intern_slot *intern_slot_of(const weft__intern *t, const char *s)
{
    size_t mask = t->cap - 1, i = (size_t)hash_str(s) & mask;

    while (t->slots[i].key && strcmp(t->slots[i].key, s) != 0)
        i = (i + 1) & mask;
    return &t->slots[i];
}

/* The id of s, or -1 if it is not in the table. */
static int64_t intern_find(const weft__intern *t, const char *s)
{
    const weft__intern_slot *sl;

    if (t->cap == 0)
        return -1;
    sl = intern_slot_of(t, s);
    return sl->key ? (int64_t)sl->id : -1;
}

/* Adds s -> id (s not present). Returns 0 or WEFT_ENOMEM. */
static int intern_add(weft__intern *t, const char *s, uint32_t id)
{
    weft__intern_slot *sl;
    char *key;

    if (2 * (t->n + 1) > t->cap) {
        weft__intern bigger = { NULL, t->cap ? 2 * t->cap : 64, t->n };
        bigger.slots = calloc(bigger.cap, sizeof *bigger.slots);
        if (!bigger.slots)
            return WEFT_ENOMEM;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].key)
                *intern_slot_of(&bigger, t->slots[i].key) = t->slots[i];
        free(t->slots);
        *t = bigger;
    }
    key = strdup(s);
    if (!key)
        return WEFT_ENOMEM;
    sl = intern_slot_of(t, s);
    sl->key = key;
    sl->id = id;
    t->n++;
    return 0;
}

static void intern_free(weft__intern *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].key);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
/* Encodes r at the end of the pending definitions. mu held. Returns 0,
 * WEFT_ETOOBIG or WEFT_ENOMEM. */
int weft__defs_append_locked(const weft_record *r)
{
    size_t bound = weft_encode_bound(r);
    weft__chunk *c = weft__S.d_tail;
    ssize_t n;

    if (bound > WEFT__MAX_BUFFER)
        return WEFT_ETOOBIG;
    if (!c || c->seq || (c->len > 0 && c->len + bound > WEFT__DEFS_CHUNK)) {
        c = calloc(1, sizeof *c);
        if (!c)
            return WEFT_ENOMEM;
        WEFT_FIFO_PUSH(weft__S.d_head, weft__S.d_tail, c);
    }
    if (c->len + bound > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        uint8_t *p;
        while (cap < c->len + bound)
            cap *= 2;
        p = realloc(c->data, cap);
        if (!p)
            return WEFT_ENOMEM;
        c->data = p;
        c->cap = cap;
    }
    n = weft_encode(r, NULL, c->data + c->len, c->cap - c->len);
    if (n < 0)
        return (int)n;
    c->len += (size_t)n;
    return 0;
}

/* See client_internal.h: 0, WEFT_ECLOSED, WEFT_ETOOBIG or WEFT_ENOMEM.
 * The encoded bytes are the session's; r stays the caller's. */
int weft__def_append(const weft_record *r)
{
    int rc = 0;

    weft__inside++;
    pthread_mutex_lock(&weft__S.mu);
    switch (atomic_load(&weft__S.state)) {
    case WEFT__ST_ACTIVE:
        rc = weft__defs_append_locked(r);
        break;
    case WEFT__ST_DISCARD:
    case WEFT__ST_FORKED:
        break;
    default:
        rc = WEFT_ECLOSED;
        break;
    }
    pthread_mutex_unlock(&weft__S.mu);
    weft__inside--;
    return rc;
}

static int session_usable(void)
{
    int st = atomic_load(&weft__S.state);

    return st == WEFT__ST_ACTIVE || st == WEFT__ST_DISCARD ||
           st == WEFT__ST_FORKED;
}

/* Defines a record unless tracing is off. mu held. */
static int define_locked(const weft_record *r)
{
    return atomic_load(&weft__S.state) == WEFT__ST_ACTIVE
               ? weft__defs_append_locked(r)
               : 0;
}

/* The id of string s, defining it on first use. mu held.
 * OTF2_UNDEFINED_STRING on failure. */
static OTF2_StringRef string_locked(const char *s)
{
    weft_record r = { .type = WEFT_REC_String };
    int64_t found = intern_find(&weft__S.strings, s);
    OTF2_StringRef id;

    if (found >= 0)
        return (OTF2_StringRef)found;
    id = weft__S.next_string;
    if (id == OTF2_UNDEFINED_STRING)
        return OTF2_UNDEFINED_STRING;
    r.u.String.self = id;
    r.u.String.string = s;
    if (define_locked(&r) < 0)
        return OTF2_UNDEFINED_STRING;
    weft__S.next_string++;
    /* Without memory to remember it, s is defined again next time. */
    (void)intern_add(&weft__S.strings, s, id);
    return id;
}

/* The id of s (interned: equal strings, one id), defined on first use;
 * OTF2_UNDEFINED_STRING when the session is not open. s is copied. */
WEFT_API OTF2_StringRef weft_string(const char *s)
{
    OTF2_StringRef id = OTF2_UNDEFINED_STRING;

    if (!s)
        return OTF2_UNDEFINED_STRING;
    weft__inside++;
    pthread_mutex_lock(&weft__S.mu);
    if (session_usable())
        id = string_locked(s);
    pthread_mutex_unlock(&weft__S.mu);
    weft__inside--;
    return id;
}

/* The region named `name` (interned by name: the first definition of a
 * name holds) with that role and paradigm, and where src (or NULL) says;
 * OTF2_UNDEFINED_REGION when the session is not open or out of memory. */
static OTF2_RegionRef region_with(const char *name, OTF2_RegionRole role,
                                  OTF2_Paradigm paradigm,
                                  const weft__region_src *src)
{
    weft_record r = { .type = WEFT_REC_Region };
    weft_Region *d = &r.u.Region;
    OTF2_RegionRef id = OTF2_UNDEFINED_REGION;
    int64_t found;

    if (!name)
        return OTF2_UNDEFINED_REGION;
    weft__inside++;
    pthread_mutex_lock(&weft__S.mu);
    if (!session_usable())
        goto out;
    found = intern_find(&weft__S.regions, name);
    if (found >= 0) {
        id = (OTF2_RegionRef)found;
        goto out;
    }
    if (weft__S.next_region == OTF2_UNDEFINED_REGION)
        goto out;
    d->self = weft__S.next_region;
    d->name = d->canonicalName = string_locked(name);
    d->description = d->sourceFile = string_locked("");
    if (src && src->canonical)
        d->canonicalName = string_locked(src->canonical);
    if (src && src->file)
        d->sourceFile = string_locked(src->file);
    if (d->name == OTF2_UNDEFINED_STRING ||
        d->canonicalName == OTF2_UNDEFINED_STRING ||
        d->description == OTF2_UNDEFINED_STRING ||
        d->sourceFile == OTF2_UNDEFINED_STRING)
        goto out;
    if (src) {
        d->beginLineNumber = src->begin_line;
        d->endLineNumber = src->end_line;
    }
    d->regionRole = role;
    d->paradigm = paradigm;
    d->regionFlags = OTF2_REGION_FLAG_NONE;
    if (define_locked(&r) < 0)
        goto out;
    id = weft__S.next_region++;
    (void)intern_add(&weft__S.regions, name, id);
out:
    pthread_mutex_unlock(&weft__S.mu);
    weft__inside--;
    return id;
}

/* A user function region named `name` (interned by name, so calling it
 * again returns the same id); OTF2_UNDEFINED_REGION when the session is
 * not open or out of memory. */
WEFT_API OTF2_RegionRef weft_region(const char *name)
{
    return region_with(name, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                       NULL);
}

/* See recorder.h. */
OTF2_RegionRef weft__recorder_region(const char *name, OTF2_RegionRole role,
                                     OTF2_Paradigm paradigm)
{
    return region_with(name, role, paradigm, NULL);
}

/* See recorder.h. */
OTF2_RegionRef weft__recorder_region_src(const char *name,
                                         OTF2_RegionRole role,
                                         OTF2_Paradigm paradigm,
                                         const weft__region_src *src)
{
    return region_with(name, role, paradigm, src);
}

/* A one-member metric (MetricMember + MetricClass). Value types: UINT64,
 * INT64, DOUBLE; the weft_metric_* call used must match it. Returns the
 * metric id or OTF2_UNDEFINED_METRIC. */
WEFT_API OTF2_MetricRef weft_metric(const char *name, const char *unit,
                                    OTF2_Type value_type,
                                    OTF2_MetricMode mode)
{
    weft_record mr = { .type = WEFT_REC_MetricMember };
    weft_record cr = { .type = WEFT_REC_MetricClass };
    weft_MetricMember *m = &mr.u.MetricMember;
    weft_MetricClass *c = &cr.u.MetricClass;
    OTF2_MetricRef id = OTF2_UNDEFINED_METRIC;
    OTF2_MetricMemberRef member;

    if (!name || (value_type != OTF2_TYPE_UINT64 &&
                  value_type != OTF2_TYPE_INT64 &&
                  value_type != OTF2_TYPE_DOUBLE))
        return OTF2_UNDEFINED_METRIC;
    weft__inside++;
    pthread_mutex_lock(&weft__S.mu);
    if (!session_usable() || weft__S.next_metric == OTF2_UNDEFINED_METRIC ||
        weft__S.next_member == OTF2_UNDEFINED_METRIC_MEMBER)
        goto out;
    member = weft__S.next_member;
    m->self = member;
    m->name = string_locked(name);
    m->description = string_locked("");
    m->unit = string_locked(unit ? unit : "");
    if (m->name == OTF2_UNDEFINED_STRING ||
        m->description == OTF2_UNDEFINED_STRING ||
        m->unit == OTF2_UNDEFINED_STRING)
        goto out;
    m->metricType = OTF2_METRIC_TYPE_USER;
    m->metricMode = mode;
    m->valueType = value_type;
    m->base = OTF2_BASE_DECIMAL;
    m->exponent = 0;
    c->self = weft__S.next_metric;
    c->numberOfMetrics = 1;
    c->metricMembers = &member;
    c->metricOccurrence = OTF2_METRIC_SYNCHRONOUS_STRICT;
    c->recorderKind = OTF2_RECORDER_KIND_ABSTRACT;
    if (define_locked(&mr) < 0)
        goto out;
    weft__S.next_member++;
    if (define_locked(&cr) < 0)
        goto out;
    id = weft__S.next_metric++;
    if (id < WEFT__METRIC_TYPES)
        atomic_store_explicit(&metric_types[id], value_type,
                              memory_order_relaxed);
out:
    pthread_mutex_unlock(&weft__S.mu);
    weft__inside--;
    return id;
}

/* See client_internal.h. Lock-free: read on the record path. */
OTF2_Type weft__metric_type(OTF2_MetricRef metric)
{
    if (metric >= WEFT__METRIC_TYPES)
        return OTF2_TYPE_NONE;
    return atomic_load_explicit(&metric_types[metric], memory_order_relaxed);
}

/* See client_session.h. */
void weft__chunks_free(weft__chunk **list)
{
    while (*list) {
        weft__chunk *c = *list;
        *list = c->next;
        free(c->data);
        free(c);
    }
}

/* See client_session.h. mu held. */
void weft__defs_free_locked(void)
{
    weft__chunks_free(&weft__S.d_head);
    weft__chunks_free(&weft__S.df_head);
    weft__S.d_tail = weft__S.df_tail = NULL;
    intern_free(&weft__S.strings);
    intern_free(&weft__S.regions);
}

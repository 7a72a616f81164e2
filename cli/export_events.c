/* export_events.c - each OTF2 event kind as Trace Event JSON, for
 * `weft export`.
 *
 * DESIGN: a reader callback per event kind of the record table fills a
 * weft_record, so that one function sees every event with its
 * descriptor: fields and attributes become args generically, and only
 * the kinds that draw something else are special:
 *   Enter/Leave       an "X" slice per region visit (kept on a stack until
 *                     the Leave: filters need the duration)
 *   Metric            a "C" counter, named by metric and location
 *   MPI send/receive  a zero-length "X" slice and a flow arrow ("s"/"f")
 *                     from each send to its matching receive (export_mpi.c)
 *   thread create/begin, end/wait   the same, matched by (contingent,
 *                     sequence count)
 *   begin/end pairs   collectives, I/O operations, locks, thread teams,
 *                     fork/join, the program, measurement off: an async
 *                     slice ("b"/"e"), which may overlap the region slices
 *   anything else     an instant ("i") named by its kind
 * Every event but Enter/Leave/Metric has its OTF2 kind(s) as "cat".
 * A begin without end, or an Enter without Leave, ends at the location's
 * last event with "unfinished": true in its args.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* ---- values and args ------------------------------------------------------ */

/* A reference as its definition's name, its id when nameless, null when
 * undefined; a string reference as its text, even when empty (an empty
 * ParameterString value is "", not the string's id). */
static void put_ref(weft__export *e, weft__sbuf *b, unsigned kind,
                    uint64_t id)
{
    const weft__arc *a = e->a;
    OTF2_StringRef name = OTF2_UNDEFINED_STRING;

    if (kind != WEFT_REF_NONE && id == weft_ref_kind_undefined(kind)) {
        weft__xj_lit(b, "null");
        return;
    }
    if (kind == WEFT_REF_STRING) {
        name = (OTF2_StringRef)id;
    } else if (kind == WEFT_REF_LOCATION) {
        for (size_t i = 0; i < a->nlocs; i++)
            if (a->locs[i].id == id)
                name = a->locs[i].name;
    } else if (kind < WEFT_REF__COUNT && id < a->nnames[kind]) {
        name = a->names[kind][id];
    }
    if (kind == WEFT_REF_NONE ||
        (kind != WEFT_REF_STRING && !*weft__arc_string(a, name)))
        weft__xj_u64(b, id);
    else
        weft__xj_sref(&e->out, b, name);
}

/* A typed value (attributes, TV fields). */
static void put_typed(weft__export *e, weft__sbuf *b, OTF2_Type type,
                      OTF2_AttributeValue v)
{
    unsigned kind = weft_sel_kind(WEFT_SEL_TYPE, type);

    switch (type) {
    case OTF2_TYPE_INT8: weft__xj_i64(b, v.int8); break;
    case OTF2_TYPE_INT16: weft__xj_i64(b, v.int16); break;
    case OTF2_TYPE_INT32: weft__xj_i64(b, v.int32); break;
    case OTF2_TYPE_INT64: weft__xj_i64(b, v.int64); break;
    case OTF2_TYPE_UINT8: weft__xj_u64(b, v.uint8); break;
    case OTF2_TYPE_UINT16: weft__xj_u64(b, v.uint16); break;
    case OTF2_TYPE_UINT32: weft__xj_u64(b, v.uint32); break;
    case OTF2_TYPE_UINT64: weft__xj_u64(b, v.uint64); break;
    case OTF2_TYPE_FLOAT: weft__xj_double(b, v.float32); break;
    case OTF2_TYPE_DOUBLE: weft__xj_double(b, v.float64); break;
    default:
        if (kind == WEFT_REF_NONE) {
            weft__xj_u64(b, v.uint64);
        } else {
            uint64_t id = 0;
            memcpy(&id, &v, weft_typed_width(type));
            put_ref(e, b, kind, id);
        }
    }
}

/* "key": (key: our own ASCII, a field's name) */
static void put_key(weft__sbuf *b, const char *key, int *n)
{
    if ((*n)++)
        weft__xj_lit(b, ",");
    weft__xj_ascii(b, key);
    weft__xj_lit(b, ":");
}

/* The name of definition id of kind as "key":, or "FALLBACK N": when it
 * has none. */
static void put_name_key(weft__export *e, weft__sbuf *b, unsigned kind,
                         uint32_t id, const char *fallback, int *n)
{
    const weft__arc *a = e->a;
    char buf[48];

    if (id < a->nnames[kind] && *weft__arc_string(a, a->names[kind][id])) {
        if ((*n)++)
            weft__xj_lit(b, ",");
        weft__xj_sref(&e->out, b, a->names[kind][id]);
        weft__xj_lit(b, ":");
        return;
    }
    snprintf(buf, sizeof buf, "%s %" PRIu32, fallback, id);
    put_key(b, buf, n);
}

/* Value i of field f of r. */
static void put_value(weft__export *e, weft__sbuf *b, const weft_record *r,
                      const weft_rec_desc *d, const weft_field_desc *f,
                      size_t i)
{
    uint64_t v = weft_field_value(r, f, i);

    if (f->wire == WEFT_WIRE_T) {
        OTF2_AttributeValue av;
        const char *base = weft_field_cptr(r, f);
        if (f->is_array) {
            memcpy(&base, base, sizeof base);
            base += i * f->size;
        }
        memset(&av, 0, sizeof av);
        memcpy(&av, base, f->size < sizeof av ? f->size : sizeof av);
        put_typed(e, b, (OTF2_Type)weft_field_selector(r, d, f, i), av);
    } else if (f->wire == WEFT_WIRE_D) {
        double x;
        memcpy(&x, &v, sizeof x);
        weft__xj_double(b, x);
    } else if (f->wire == WEFT_WIRE_I) {
        weft__xj_i64(b, (int64_t)v);
    } else {
        put_ref(e, b, weft_field_kind(r, d, f, i), v);
    }
}

/* The fields of r as args members ("name":value,...), after *n others. */
static void put_fields(weft__export *e, weft__sbuf *b, const weft_record *r,
                       int *n)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    for (uint8_t k = 0; d && k < d->nfields; k++) {
        const weft_field_desc *f = &d->fields[k];
        if (f->wire == WEFT_WIRE_Z)   /* no event has a string field */
            continue;
        put_key(b, f->name, n);
        if (!f->is_array) {
            put_value(e, b, r, d, f, 0);
            continue;
        }
        weft__xj_lit(b, "[");
        for (size_t i = 0, m = weft_field_count(r, f); i < m; i++) {
            if (i)
                weft__xj_lit(b, ",");
            put_value(e, b, r, d, f, i);
        }
        weft__xj_lit(b, "]");
    }
}

/* The attributes of an event as an args member "key":{...}. */
static void put_attrs(weft__export *e, weft__sbuf *b, const char *key,
                      OTF2_AttributeList *al, int *n)
{
    uint32_t na = al ? OTF2_AttributeList_GetNumberOfElements(al) : 0;
    int m = 0;

    if (!na)
        return;
    put_key(b, key, n);
    weft__xj_lit(b, "{");
    for (uint32_t i = 0; i < na; i++) {
        OTF2_AttributeRef id;
        OTF2_Type type;
        OTF2_AttributeValue v;
        if (OTF2_AttributeList_GetAttributeByIndex(al, i, &id, &type, &v) !=
            OTF2_SUCCESS)
            continue;
        put_name_key(e, b, WEFT_REF_ATTRIBUTE, id, "attribute", &m);
        put_typed(e, b, type, v);
    }
    weft__xj_lit(b, "}");
}

/* args members of r: its fields, unless !fields, and its attributes;
 * returns them malloc'd, or NULL for none. */
static char *members(weft__export *e, const weft_record *r,
                     OTF2_AttributeList *al, int fields, const char *akey)
{
    weft__sbuf b = { 0 };
    int n = 0;

    if (fields)
        put_fields(e, &b, r, &n);
    put_attrs(e, &b, akey, al, &n);
    return b.s;
}

/* ---- events --------------------------------------------------------------- */

/* {"ph":PH,"pid":..,"tid":..,"ts":T  -- the caller adds the rest and "}". */
static weft__sbuf *head(weft__export *e, const char *ph, uint64_t t)
{
    weft__sbuf *b = &e->out.b;

    weft__xout_flush(&e->out, 0);
    if (e->first)
        weft__xj_lit(b, "\n{\"ph\":\"");
    else
        weft__xj_lit(b, ",\n{\"ph\":\"");
    e->first = 0;
    weft__cli_sb_add(b, ph, strlen(ph));
    weft__xj_lit(b, "\",\"pid\":");
    weft__xj_u64(b, e->pid);
    weft__xj_lit(b, ",\"tid\":");
    weft__xj_u64(b, e->tid);
    weft__xj_lit(b, ",\"ts\":");
    weft__xj_us(b, t, e->a->offset, e->a->resolution);
    return b;
}

static void put_cat(weft__sbuf *b, const char *cat)
{
    weft__xj_lit(b, ",\"cat\":");
    weft__xj_ascii(b, cat);
}

/* ,"args":{MEMBERS[,EXTRA]} when there is any. */
static void put_args(weft__sbuf *b, const char *m, const char *extra)
{
    if (!(m && *m) && !extra)
        return;
    weft__xj_lit(b, ",\"args\":{");
    if (m)
        weft__cli_sb_add(b, m, strlen(m));
    if (extra) {
        if (m && *m)
            weft__xj_lit(b, ",");
        weft__cli_sb_add(b, extra, strlen(extra));
    }
    weft__xj_lit(b, "}");
}

static int in_window(const weft__export *e, uint64_t t0, uint64_t t1)
{
    return t1 >= e->from && t0 <= e->to;
}

static const char *kind_name(uint32_t type)
{
    const weft_rec_desc *d = weft_rec_desc_of(type);

    return d ? d->name : "Unknown";
}

/* An event of r at its time, unless the window leaves it out: phase ph
 * with `lead` members (",\"s\":\"t\"", ",\"dur\":0"), named name, r's
 * kind as category, its fields and attributes (and extra) as args.
 * Returns 1 when written. */
static int point(weft__export *e, const weft_record *r,
                 OTF2_AttributeList *al, const char *ph, const char *lead,
                 const char *name, const char *extra)
{
    weft__sbuf *b;
    char *m;

    if (!in_window(e, r->time, r->time))
        return 0;
    m = members(e, r, al, 1, "attributes");
    b = head(e, ph, r->time);
    weft__cli_sb_add(b, lead, strlen(lead));
    weft__xj_lit(b, ",\"name\":");
    weft__xj_ascii(b, name);
    put_cat(b, kind_name(r->type));
    put_args(b, m, extra);
    weft__xj_lit(b, "}");
    free(m);
    return 1;
}

/* An instant event of r's kind. */
static void instant(weft__export *e, const weft_record *r,
                    OTF2_AttributeList *al, const char *extra)
{
    point(e, r, al, "i", ",\"s\":\"t\"", kind_name(r->type), extra);
}

/* ---- region slices -------------------------------------------------------- */

static void push(weft__xstack *s, const weft__xopen *o)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = weft__cli_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = *o;
}

/* region_ok has an entry per region and a last one for the regions
 * without a definition. */
static int region_ok(const weft__export *e, OTF2_RegionRef r)
{
    if (!e->region_ok)
        return 1;
    return e->region_ok[r < e->nregion_ok ? r : e->nregion_ok - 1];
}

/* The slice of open Enter o, ended at t (extra: more args members). */
static void region_slice(weft__export *e, weft__xopen *o, uint64_t t,
                         const char *extra)
{
    const weft__arc *a = e->a;
    OTF2_RegionRef r = o->what;
    weft__sbuf *b;

    if (t - o->t < e->min_dur || !in_window(e, o->t, t) || !region_ok(e, r))
        goto out;
    b = head(e, "X", o->t);
    weft__xj_lit(b, ",\"dur\":");
    weft__xj_us(b, t, o->t, a->resolution);
    weft__xj_lit(b, ",\"name\":");
    if (r < a->nnames[WEFT_REF_REGION] &&
        *weft__arc_string(a, a->names[WEFT_REF_REGION][r])) {
        weft__xj_sref(&e->out, b, a->names[WEFT_REF_REGION][r]);
    } else if (r == OTF2_UNDEFINED_REGION) {
        weft__xj_lit(b, "\"(undefined region)\"");
    } else {
        weft__xj_lit(b, "\"region ");
        weft__xj_u64(b, r);
        weft__xj_lit(b, "\"");
    }
    put_args(b, o->args, extra);
    weft__xj_lit(b, "}");
out:
    free(o->args);
    o->args = NULL;
}

static void on_enter(weft__export *e, const weft_record *r,
                     OTF2_AttributeList *al)
{
    weft__xopen o = { r->time, NULL, r->u.Enter.region, { 0 }, NULL };

    o.args = members(e, r, al, 0, "attributes");
    push(&e->regions, &o);
}

/* A Leave ends the innermost Enter of its region (and the Enters inside
 * it, which lack their Leave); one without Enter is an instant. */
static void on_leave(weft__export *e, const weft_record *r,
                     OTF2_AttributeList *al)
{
    weft__xstack *s = &e->regions;
    size_t i = s->n;
    char *m;

    while (i > 0 && s->v[i - 1].what != r->u.Leave.region)
        i--;
    if (i == 0) {
        instant(e, r, al, "\"unmatched\":true");
        return;
    }
    while (s->n > i)
        region_slice(e, &s->v[--s->n], r->time, "\"unfinished\":true");
    m = members(e, r, al, 0, "leave attributes");
    region_slice(e, &s->v[--s->n], r->time, m);
    free(m);
}

/* ---- begin/end pairs: async slices ---------------------------------------- */

typedef struct pair {
    uint32_t begin, end, end2;   /* record kinds (end2: 0 or another end) */
    const char *name;            /* NULL: from a field (pair_name) */
    const char *keys[3];         /* fields that match an end to its begin */
    const char *cat;
} pair;

static const pair pairs[] = {
    { WEFT_REC_MpiCollectiveBegin, WEFT_REC_MpiCollectiveEnd, 0, NULL,
      { NULL }, "MpiCollectiveBegin,MpiCollectiveEnd" },
    { WEFT_REC_NonBlockingCollectiveRequest,
      WEFT_REC_NonBlockingCollectiveComplete, 0, NULL, { "requestID" },
      "NonBlockingCollectiveRequest,NonBlockingCollectiveComplete" },
    { WEFT_REC_RmaCollectiveBegin, WEFT_REC_RmaCollectiveEnd, 0, NULL,
      { NULL }, "RmaCollectiveBegin,RmaCollectiveEnd" },
    { WEFT_REC_IoOperationBegin, WEFT_REC_IoOperationComplete,
      WEFT_REC_IoOperationCancelled, NULL, { "handle", "matchingId" },
      "IoOperationBegin,IoOperationComplete,IoOperationCancelled" },
    { WEFT_REC_ThreadAcquireLock, WEFT_REC_ThreadReleaseLock, 0,
      "lock held", { "model", "lockID" },
      "ThreadAcquireLock,ThreadReleaseLock" },
    { WEFT_REC_IoAcquireLock, WEFT_REC_IoReleaseLock, 0, "I/O lock held",
      { "handle" }, "IoAcquireLock,IoReleaseLock" },
    { WEFT_REC_RmaAcquireLock, WEFT_REC_RmaReleaseLock, 0, "RMA lock held",
      { "win", "remote", "lockId" }, "RmaAcquireLock,RmaReleaseLock" },
    { WEFT_REC_ThreadTeamBegin, WEFT_REC_ThreadTeamEnd, 0, "thread team",
      { "threadTeam" }, "ThreadTeamBegin,ThreadTeamEnd" },
    { WEFT_REC_ThreadFork, WEFT_REC_ThreadJoin, 0, "fork-join",
      { "model" }, "ThreadFork,ThreadJoin" },
    { WEFT_REC_CallingContextEnter, WEFT_REC_CallingContextLeave, 0,
      "calling context", { "callingContext" },
      "CallingContextEnter,CallingContextLeave" },
    { WEFT_REC_ProgramBegin, WEFT_REC_ProgramEnd, 0, "program", { NULL },
      "ProgramBegin,ProgramEnd" },
    /* MeasurementOnOff: OFF begins, ON ends (on_measurement). */
    { WEFT_REC_MeasurementOnOff, WEFT_REC_MeasurementOnOff, 0,
      "measurement off", { NULL }, "MeasurementOnOff" },
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])
#define MEASUREMENT_PAIR (NPAIRS - 1)

/* Value of r's field called name (0 when it has none). */
static uint64_t field(const weft_record *r, const char *name)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    for (uint8_t k = 0; d && k < d->nfields; k++)
        if (!d->fields[k].is_array && strcmp(d->fields[k].name, name) == 0)
            return weft_field_get(r, &d->fields[k]);
    return 0;
}

static const char *const collective_ops[] = {
    "BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV",
    "ALLGATHER", "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW",
    "ALLREDUCE", "REDUCE", "REDUCE_SCATTER", "SCAN", "EXSCAN",
    "REDUCE_SCATTER_BLOCK", "CREATE_HANDLE", "DESTROY_HANDLE", "ALLOCATE",
    "DEALLOCATE", "CREATE_HANDLE_AND_ALLOCATE",
    "DESTROY_HANDLE_AND_DEALLOCATE",
};

/* The name of a slice whose pair has none: its begin's I/O mode, its
 * end's collective operation. */
static void pair_name(weft__sbuf *b, const pair *p, const weft_record *end)
{
    char buf[64];
    uint64_t op = end ? field(end, "collectiveOp") : UINT64_MAX;
    const char *ops = op < sizeof collective_ops / sizeof collective_ops[0]
                      ? collective_ops[op] : "collective";

    if (p->begin == WEFT_REC_MpiCollectiveBegin)
        snprintf(buf, sizeof buf, "MPI %s", ops);
    else if (p->begin == WEFT_REC_NonBlockingCollectiveRequest)
        snprintf(buf, sizeof buf, "MPI nonblocking %s", ops);
    else
        snprintf(buf, sizeof buf, "RMA %s", ops);
    weft__xj_ascii(b, buf);
}

static const char *io_name(uint64_t mode)
{
    return mode == OTF2_IO_OPERATION_MODE_READ ? "I/O read"
           : mode == OTF2_IO_OPERATION_MODE_WRITE ? "I/O write"
           : mode == OTF2_IO_OPERATION_MODE_FLUSH ? "I/O flush" : "I/O";
}

static void pair_key(const pair *p, const weft_record *r, uint64_t key[3])
{
    for (int k = 0; k < 3; k++)
        key[k] = p->keys[k] ? field(r, p->keys[k]) : 0;
}

/* One side ("b" or "e") of async slice id. */
static void async_side(weft__export *e, const char *ph, uint64_t t,
                       const pair *p, const char *name_json, uint64_t id,
                       const char *m, const char *extra)
{
    weft__sbuf *b = head(e, ph, t);

    weft__xj_lit(b, ",\"id\":");
    weft__xj_u64(b, id);
    put_cat(b, p->cat);
    weft__xj_lit(b, ",\"name\":");
    weft__cli_sb_add(b, name_json, strlen(name_json));
    put_args(b, m, extra);
    weft__xj_lit(b, "}");
}

/* The slice of open begin o of pair p, ended at t by end (NULL: never). */
static void pair_slice(weft__export *e, weft__xopen *o, const pair *p,
                       uint64_t t, const weft_record *end,
                       OTF2_AttributeList *al)
{
    weft__sbuf name = { 0 };
    char *m;
    uint64_t id;

    if (t - o->t < e->min_dur || !in_window(e, o->t, t))
        goto out;
    if (o->name)
        weft__xj_ascii(&name, o->name);
    else
        pair_name(&name, p, end);
    id = ++e->next_id;
    async_side(e, "b", o->t, p, name.s, id, o->args, NULL);
    m = end ? members(e, end, al, 1, "attributes") : NULL;
    async_side(e, "e", t, p, name.s, id, m,
               end ? NULL : "\"unfinished\":true");
    free(m);
out:
    free(name.s);
    free(o->args);
    o->args = NULL;
}

static void pair_begin(weft__export *e, size_t pi, const weft_record *r,
                       OTF2_AttributeList *al)
{
    const pair *p = &pairs[pi];
    weft__xopen o = { r->time, p->name, (uint32_t)pi, { 0 }, NULL };

    if (p->begin == WEFT_REC_IoOperationBegin)
        o.name = io_name(r->u.IoOperationBegin.mode);
    pair_key(p, r, o.key);
    o.args = members(e, r, al, 1, "attributes");
    push(&e->pairs, &o);
}

/* The latest open begin of pair pi with r's key ends; an end without
 * begin is an instant. */
static void pair_end(weft__export *e, size_t pi, const weft_record *r,
                     OTF2_AttributeList *al)
{
    weft__xstack *s = &e->pairs;
    uint64_t key[3];
    size_t i = s->n;

    pair_key(&pairs[pi], r, key);
    while (i > 0 && !(s->v[i - 1].what == pi &&
                      memcmp(s->v[i - 1].key, key, sizeof key) == 0))
        i--;
    if (i == 0) {   /* measurement on from the start is no anomaly */
        instant(e, r, al, pi == MEASUREMENT_PAIR ? NULL
                                                 : "\"unmatched\":true");
        return;
    }
    pair_slice(e, &s->v[i - 1], &pairs[pi], r->time, r, al);
    memmove(&s->v[i - 1], &s->v[i], (s->n - i) * sizeof *s->v);
    s->n--;
}

/* Is r a begin (1) or an end (-1) of a pair (*pi), or neither (0)? */
static int pair_of(const weft_record *r, size_t *pi)
{
    if (r->type == WEFT_REC_MeasurementOnOff) {
        *pi = MEASUREMENT_PAIR;
        return r->u.MeasurementOnOff.measurementMode == OTF2_MEASUREMENT_OFF
               ? 1 : -1;
    }
    for (size_t i = 0; i < MEASUREMENT_PAIR; i++) {
        *pi = i;
        if (pairs[i].begin == r->type)
            return 1;
        if (pairs[i].end == r->type || pairs[i].end2 == r->type)
            return -1;
    }
    return 0;
}

/* ---- arrows: MPI messages, thread creation and join ----------------------- */

/* A zero-length slice of r (named name) with one end of flow id. */
static void flow_point(weft__export *e, const weft_record *r,
                       OTF2_AttributeList *al, const char *name,
                       const char *extra, const char *fcat,
                       const char *fname, const char *ph, uint64_t id)
{
    weft__sbuf *b;

    if (!point(e, r, al, "X", ",\"dur\":0", name, extra) || !id)
        return;
    b = head(e, ph, r->time);
    weft__xj_lit(b, ",\"bp\":\"e\",\"id\":");
    weft__xj_u64(b, id);
    put_cat(b, fcat);
    weft__xj_lit(b, ",\"name\":");
    weft__xj_ascii(b, fname);
    weft__xj_lit(b, "}");
}

/* The channel of a send (recv 0) or receive: an MPI message's, or a
 * thread creation's or join's (export.h). */
static void channel(weft__export *e, const weft_record *r, int recv,
                    weft__xchan_key *k)
{
    const weft_ThreadCreate *x = &r->u.ThreadCreate;  /* all four alike */
    uint32_t self = e->a->locs[e->loc].group;
    uint32_t comm, peer;

    memset(k, 0, sizeof *k);
    switch (r->type) {
    case WEFT_REC_MpiSend:
        comm = r->u.MpiSend.communicator, peer = r->u.MpiSend.receiver;
        k->tag = r->u.MpiSend.msgTag;
        break;
    case WEFT_REC_MpiIsend:
        comm = r->u.MpiIsend.communicator, peer = r->u.MpiIsend.receiver;
        k->tag = r->u.MpiIsend.msgTag;
        break;
    case WEFT_REC_MpiRecv:
        comm = r->u.MpiRecv.communicator, peer = r->u.MpiRecv.sender;
        k->tag = r->u.MpiRecv.msgTag;
        break;
    case WEFT_REC_MpiIrecv:
        comm = r->u.MpiIrecv.communicator, peer = r->u.MpiIrecv.sender;
        k->tag = r->u.MpiIrecv.msgTag;
        break;
    default:
        k->kind = r->type == WEFT_REC_ThreadCreate ||
                  r->type == WEFT_REC_ThreadBegin ? WEFT__XCHAN_CREATE
                                                  : WEFT__XCHAN_JOIN;
        k->comm = x->threadContingent;
        k->from = (uint32_t)(x->sequenceCount >> 32);
        k->to = (uint32_t)x->sequenceCount;
        return;
    }
    k->comm = comm;
    if (e->mpi)
        peer = weft__xmpi_process(e->mpi, comm, peer, self);
    k->from = recv ? peer : self;
    k->to = recv ? self : peer;
}

static const char *const arrow_names[][3] = {
    /* kind, zero-length slice, flow category, flow name */
    [WEFT_REC_MpiSend] = { "MPI send", "mpi", "message" },
    [WEFT_REC_MpiIsend] = { "MPI isend", "mpi", "message" },
    [WEFT_REC_MpiRecv] = { "MPI recv", "mpi", "message" },
    [WEFT_REC_MpiIrecv] = { "MPI irecv", "mpi", "message" },
    [WEFT_REC_ThreadCreate] = { "thread create", "thread", "create" },
    [WEFT_REC_ThreadBegin] = { "thread begin", "thread", "create" },
    [WEFT_REC_ThreadEnd] = { "thread end", "thread", "join" },
    [WEFT_REC_ThreadWait] = { "thread wait", "thread", "join" },
};

/* One end of an arrow: pass 1 notes it, pass 2 draws it (with its
 * arrow when the other end is there and exported). */
static void on_arrow(weft__export *e, const weft_record *r,
                     OTF2_AttributeList *al)
{
    int recv = r->type == WEFT_REC_MpiRecv || r->type == WEFT_REC_MpiIrecv ||
               r->type == WEFT_REC_ThreadBegin ||
               r->type == WEFT_REC_ThreadWait;
    const char *const *names = arrow_names[r->type];
    weft__xchan_key k;
    uint64_t id = 0;
    char extra[48];

    channel(e, r, recv, &k);
    if (e->pass == 1) {
        weft__xmpi_note(e->mpi, &k, recv, in_window(e, r->time, r->time));
        return;
    }
    if (e->mpi)
        id = weft__xmpi_flow(e->mpi, &k, recv);
    snprintf(extra, sizeof extra, "\"peer rank\":%" PRIu32,
             recv ? k.from : k.to);
    flow_point(e, r, al, names[0], k.kind ? NULL : extra, names[1],
               names[2], recv ? "f" : "s", id);
}

/* ---- counters ------------------------------------------------------------- */

/* "METRIC (LOCATION)" as JSON text, made once per metric and location. */
static const char *counter_name(weft__export *e, OTF2_MetricRef m)
{
    const weft__arc *a = e->a;
    const OTF2_MetricMemberRef *mem =
        m < a->nclasses && a->classes[m] ? a->classes[m] + 1 : NULL;
    uint8_t n = mem ? (uint8_t)a->classes[m][0] : 0;
    weft__sbuf s = { 0 };
    size_t cap = e->ncounter_names;

    if (m >= cap) {
        size_t want = (size_t)m + 1;
        if (want > (1u << 20))
            want = 1u << 20;
        if (m >= want)
            return "\"metric\"";
        e->counter_names = weft__cli_xrealloc(e->counter_names,
                                              want * sizeof(char *));
        memset(e->counter_names + cap, 0, (want - cap) * sizeof(char *));
        e->ncounter_names = want;
    }
    if (e->counter_names[m])
        return e->counter_names[m];
    for (uint8_t i = 0; i < n; i++) {
        if (i)
            weft__xj_lit(&s, ", ");
        weft__cli_sb_printf(&s, "%s", weft__arc_name(a, WEFT_REF_METRIC_MEMBER,
                                                    mem[i]));
    }
    if (!s.len)
        weft__cli_sb_printf(&s, "metric %" PRIu32, m);
    weft__cli_sb_printf(&s, " (%s, tid %" PRIu32 ")",
                        weft__arc_string(a, a->locs[e->loc].name), e->tid);
    weft__xj_str(&e->scratch, s.s);
    free(s.s);
    e->counter_names[m] = weft__cli_sb_take(&e->scratch);
    return e->counter_names[m];
}

static void on_metric(weft__export *e, const weft_record *r,
                      OTF2_AttributeList *al)
{
    const weft__arc *a = e->a;
    const weft_Metric *x = &r->u.Metric;
    const OTF2_MetricMemberRef *mem =
        x->metric < a->nclasses && a->classes[x->metric]
        ? a->classes[x->metric] + 1 : NULL;
    uint8_t nmem = mem ? (uint8_t)a->classes[x->metric][0] : 0;
    weft__sbuf *b;
    const char *name;
    int n = 0;

    if (!in_window(e, r->time, r->time))
        return;
    name = counter_name(e, x->metric);
    b = head(e, "C", r->time);
    weft__xj_lit(b, ",\"name\":");
    weft__cli_sb_add(b, name, strlen(name));
    weft__xj_lit(b, ",\"args\":{");
    for (uint8_t i = 0; i < x->numberOfMetrics; i++) {
        put_name_key(e, b, WEFT_REF_METRIC_MEMBER,
                     i < nmem ? mem[i] : OTF2_UNDEFINED_METRIC_MEMBER,
                     "member", &n);
        switch (x->typeIDs[i]) {
        case OTF2_TYPE_INT64:
            weft__xj_i64(b, x->metricValues[i].signed_int);
            break;
        case OTF2_TYPE_UINT64:
            weft__xj_u64(b, x->metricValues[i].unsigned_int);
            break;
        default:
            weft__xj_double(b, x->metricValues[i].floating_point);
        }
    }
    put_attrs(e, b, "attributes", al, &n);
    weft__xj_lit(b, "}}");
}

/* ---- dispatch ------------------------------------------------------------- */

static void tick(weft__export *e)
{
    if (e->pass == 2 && ++e->events % 262144 == 0 && e->progress)
        fprintf(stderr, "\rweft export: %" PRIu64 " of %" PRIu64
                " events (%.0f%%)", e->events, e->total,
                e->total ? 100.0 * (double)e->events / (double)e->total : 0.0);
}

static OTF2_CallbackCode on_event(weft__export *e, const weft_record *r,
                                  OTF2_AttributeList *al)
{
    size_t pi;
    int side;

    tick(e);
    e->last_t = r->time;
    switch (r->type) {
    case WEFT_REC_Enter:
        on_enter(e, r, al);
        break;
    case WEFT_REC_Leave:
        on_leave(e, r, al);
        break;
    case WEFT_REC_Metric:
        on_metric(e, r, al);
        break;
    case WEFT_REC_MpiSend:
    case WEFT_REC_MpiIsend:
    case WEFT_REC_MpiRecv:
    case WEFT_REC_MpiIrecv:
    case WEFT_REC_ThreadCreate:
    case WEFT_REC_ThreadBegin:
    case WEFT_REC_ThreadWait:
    case WEFT_REC_ThreadEnd:
        on_arrow(e, r, al);
        break;
    default:
        side = pair_of(r, &pi);
        if (side > 0)
            pair_begin(e, pi, r, al);
        else if (side < 0)
            pair_end(e, pi, r, al);
        else
            instant(e, r, al, NULL);
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* One callback per event kind of the record table, each filling a
 * weft_record: the fields become a sequence of (type, name) tuples that
 * PARAMS_ turns into the parameter list and SET_ into assignments (the
 * _A/_B pairs walk the sequence; the last one pastes into _END: CAT
 * pastes onto the last token of its first argument, which may hold
 * commas once expanded). */
#define WEFT_SCALAR(ctype, name, W, sel) (ctype, name)
#define WEFT_ARRAY(ctype, name, count, W, sel) (const ctype *, name)
#define PARAMS_A(t, n) , t n PARAMS_B
#define PARAMS_B(t, n) , t n PARAMS_A
#define PARAMS_A_END
#define PARAMS_B_END
#define SET_A(t, n) x->n = n; SET_B
#define SET_B(t, n) x->n = n; SET_A
#define SET_A_END
#define SET_B_END
#define CAT_(b, ...) __VA_ARGS__ ## b
#define CAT(a, b) CAT_(b, a)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define WEFT_EVENT(id, Name, fields)                                         \
    static OTF2_CallbackCode cb_##Name(OTF2_LocationRef loc,                 \
                                       OTF2_TimeStamp t, uint64_t pos,       \
                                       void *ud, OTF2_AttributeList *al      \
                                       CAT(PARAMS_A fields, _END))           \
    {                                                                        \
        weft_record r;                                                       \
        weft_##Name *x = &r.u.Name;                                          \
        memset(&r, 0, sizeof r);                                             \
        r.type = WEFT_REC_##Name;                                            \
        r.time = t;                                                          \
        CAT(SET_A fields, _END)                                              \
        (void)x;                                                             \
        return on_event(ud, &r, al);                                         \
    }
#include "weft_records.def"
#pragma GCC diagnostic pop

OTF2_EvtReaderCallbacks *weft__export_callbacks(int pass)
{
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();

    if (!cb)
        return NULL;
    if (pass == 1) {
        OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, cb_MpiSend);
        OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, cb_MpiIsend);
        OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, cb_MpiRecv);
        OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, cb_MpiIrecv);
        OTF2_EvtReaderCallbacks_SetThreadCreateCallback(cb, cb_ThreadCreate);
        OTF2_EvtReaderCallbacks_SetThreadBeginCallback(cb, cb_ThreadBegin);
        OTF2_EvtReaderCallbacks_SetThreadEndCallback(cb, cb_ThreadEnd);
        OTF2_EvtReaderCallbacks_SetThreadWaitCallback(cb, cb_ThreadWait);
        return cb;
    }
#define WEFT_EVENT(id, Name, fields)                                         \
    OTF2_EvtReaderCallbacks_Set##Name##Callback(cb, cb_##Name);
#include "weft_records.def"
    return cb;
}
#undef WEFT_SCALAR
#undef WEFT_ARRAY

/* ---- locations ------------------------------------------------------------ */

uint32_t weft__export_tid(const weft__arc *a, size_t i)
{
    uint32_t k = 0;

    if (a->locs[i].id >> 32 == a->locs[i].group)   /* weft's: rank, thread */
        return (uint32_t)a->locs[i].id;
    for (size_t j = 0; j < i; j++)
        k += a->locs[j].group == a->locs[i].group;
    return k;
}

int weft__export_rank_ok(const weft__export *e, size_t i)
{
    OTF2_LocationGroupRef g = e->a->locs[i].group;

    return !e->rank_ok || (g < e->nrank_ok && e->rank_ok[g]);
}

void weft__export_location_begin(weft__export *e, size_t i)
{
    e->loc = i;
    e->pid = e->a->locs[i].group + 1;
    e->tid = weft__export_tid(e->a, i);
    e->last_t = 0;
}

void weft__export_location_end(weft__export *e)
{
    while (e->regions.n)
        region_slice(e, &e->regions.v[--e->regions.n], e->last_t,
                     "\"unfinished\":true");
    for (size_t i = 0; i < e->pairs.n; i++)
        pair_slice(e, &e->pairs.v[i], &pairs[e->pairs.v[i].what], e->last_t,
                   NULL, NULL);
    e->pairs.n = 0;
    for (size_t i = 0; i < e->ncounter_names; i++)
        free(e->counter_names[i]);
    free(e->counter_names);
    e->counter_names = NULL;
    e->ncounter_names = 0;
}

/* archive.c - reading an OTF2 archive back with libotf2: its global
 * definitions (clock, strings, locations, the names of regions, metrics,
 * comms, files and the rest, groups) into arrays,
 * then each location's events through the caller's callbacks. verify,
 * export and reindex read archives through it.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#include "archive.h"
#include "profile.h"
#include "weft_errors.h"

/* libotf2 reports errors through one process-wide callback; the command
 * is single-threaded, so the last message is kept here for ours. */
static char otf2_last[512];

static OTF2_ErrorCode otf2_error(void *ud, const char *file, uint64_t line,
                                 const char *func, OTF2_ErrorCode code,
                                 const char *fmt, va_list va)
{
    (void)ud;
    (void)file;
    (void)line;
    (void)func;
    if (fmt && *fmt)
        vsnprintf(otf2_last, sizeof otf2_last, fmt, va);
    else
        snprintf(otf2_last, sizeof otf2_last, "%s",
                 OTF2_Error_GetDescription(code));
    return code;
}

__attribute__((format(printf, 2, 3)))
static int arc_err(char **err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (vasprintf(err, fmt, ap) < 0)
        *err = NULL;
    va_end(ap);
    return -1;
}

/* Array p of *n elements of size sz grown to hold index i, new elements
 * all 0xff bytes; returns the array, or NULL (p still valid). */
static void *grow(void *p, size_t *n, size_t i, size_t sz)
{
    size_t m;
    void *q;

    if (i < *n)
        return p;
    if (i > (1u << 26))   /* ids of a sane archive are dense */
        return NULL;
    m = i + 1 > *n * 2 ? i + 1 : *n * 2;
    q = realloc(p, m * sz);
    if (!q)
        return NULL;
    memset((char *)q + *n * sz, 0xff, (m - *n) * sz);
    *n = m;
    return q;
}

#define GROW(arr, n, i)                                                      \
    ({ void *tmp_ = grow((arr), &(n), (i), sizeof *(arr));                  \
       tmp_ ? ((arr) = tmp_, 0) : -1; })

static OTF2_CallbackCode def_clock(void *ud, uint64_t res, uint64_t off,
                                   uint64_t len, uint64_t realtime)
{
    weft__arc *a = ud;

    a->have_clock = 1;
    a->realtime = realtime;
    a->resolution = res;
    a->offset = off;
    a->length = len;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_string(void *ud, OTF2_StringRef self,
                                    const char *s)
{
    weft__arc *a = ud;
    size_t old = a->nstrings;

    if (GROW(a->strings, a->nstrings, self) < 0)
        return OTF2_CALLBACK_ERROR;
    for (size_t i = old; i < a->nstrings; i++)
        a->strings[i] = NULL;
    free(a->strings[self]);
    a->strings[self] = strdup(s ? s : "");
    return a->strings[self] ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode def_location(void *ud, OTF2_LocationRef self,
                                      OTF2_StringRef name,
                                      OTF2_LocationType type, uint64_t nev,
                                      OTF2_LocationGroupRef group)
{
    weft__arc *a = ud;
    weft__arc_loc *l;

    (void)type;
    l = realloc(a->locs, (a->nlocs + 1) * sizeof *l);
    if (!l)
        return OTF2_CALLBACK_ERROR;
    a->locs = l;
    l += a->nlocs++;
    l->id = self;
    l->name = name;
    l->group = group;
    l->events = nev;
    l->seen = 0;
    return OTF2_CALLBACK_SUCCESS;
}

/* Counts a second definition of id of kind (what). */
static void duplicate(weft__arc *a, const char *what, uint64_t id)
{
    if (!a->dups++)
        snprintf(a->dup_first, sizeof a->dup_first, "%s %" PRIu64, what, id);
}

/* The record types kept whole (archive.h), in kept[]'s order. */
static const uint32_t kept_types[WEFT__ARC_KEPT] = {
    WEFT_REC_Comm, WEFT_REC_Group, WEFT_REC_MetricMember,
    WEFT_REC_MetricClass, WEFT_REC_MetricInstance, WEFT_REC_IoRegularFile,
    WEFT_REC_IoDirectory, WEFT_REC_IoHandle
};

static int kept_slot(uint32_t type)
{
    for (int k = 0; k < WEFT__ARC_KEPT; k++)
        if (kept_types[k] == type)
            return k;
    return -1;
}

/* Keeps definition r, of id `id`, whole. 0 or -1 (out of memory). */
static int keep(weft__arc *a, const weft_record *r, uint64_t id)
{
    int k = kept_slot(r->type);
    size_t old;

    assert(k >= 0);
    old = a->nkept[k];
    if (GROW(a->kept[k], a->nkept[k], id) < 0)
        return -1;
    memset(a->kept[k] + old, 0, (a->nkept[k] - old) * sizeof *a->kept[k]);
    a->kept[k][id] = *r;
    return 0;
}

/* Records the name of definition id of id space kind. */
static OTF2_CallbackCode set_name(weft__arc *a, unsigned kind, uint64_t id,
                                  OTF2_StringRef name)
{
    assert(kind < WEFT_REF__COUNT && kind != WEFT_REF_LOCATION);
    if (id < a->nnames[kind] && a->names[kind][id] != OTF2_UNDEFINED_STRING)
        duplicate(a, weft_ref_kind_name(kind), id);
    if (GROW(a->names[kind], a->nnames[kind], id) < 0)
        return OTF2_CALLBACK_ERROR;
    a->names[kind][id] = name;
    return OTF2_CALLBACK_SUCCESS;
}

/* Definitions whose name is all the export needs of them. */
#define NAME_ONLY(fn, KIND, ...)                                           \
    static OTF2_CallbackCode fn(void *ud, uint32_t self,                  \
                                OTF2_StringRef name, __VA_ARGS__)         \
    { return set_name(ud, WEFT_REF_##KIND, self, name); }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
/* A region: its name, its paradigm and role for the profile (issue #35),
 * its source file and lines for the viewer (#36). */
static OTF2_CallbackCode def_region(void *ud, OTF2_RegionRef self,
                                    OTF2_StringRef name,
                                    OTF2_StringRef canon, OTF2_StringRef desc,
                                    OTF2_RegionRole role, OTF2_Paradigm par,
                                    OTF2_RegionFlag flags,
                                    OTF2_StringRef file, uint32_t b,
                                    uint32_t e)
{
    weft__arc *a = ud;

    if (GROW(a->regions, a->nregions, self) < 0)
        return OTF2_CALLBACK_ERROR;
    a->regions[self] = (weft__arc_region){ par, role, file, b, e };
    return set_name(a, WEFT_REF_REGION, self, name);
}
NAME_ONLY(def_attribute, ATTRIBUTE, OTF2_StringRef desc, OTF2_Type type)
NAME_ONLY(def_intercomm, COMM, OTF2_GroupRef ga, OTF2_GroupRef gb,
          OTF2_CommRef common, OTF2_CommFlag flags)
NAME_ONLY(def_parameter, PARAMETER, OTF2_ParameterType type)
NAME_ONLY(def_rmawin, RMA_WIN, OTF2_CommRef comm, OTF2_RmaWinFlag flags)
NAME_ONLY(def_node, SYSTEM_TREE_NODE, OTF2_StringRef cls,
          OTF2_SystemTreeNodeRef parent)
NAME_ONLY(def_interrupt, INTERRUPT_GENERATOR, OTF2_InterruptGeneratorMode m,
          OTF2_Base base, int64_t exp, uint64_t period)
NAME_ONLY(def_cart, CART_TOPOLOGY, OTF2_CommRef comm, uint8_t n,
          const OTF2_CartDimensionRef *dims)
NAME_ONLY(def_dimension, CART_DIMENSION, uint32_t size,
          OTF2_CartPeriodicity periodic)
#pragma GCC diagnostic pop

/* Definitions the report's summaries read: kept whole and named. */
static OTF2_CallbackCode keep_named(weft__arc *a, const weft_record *r,
                                    unsigned kind, uint64_t id,
                                    OTF2_StringRef name)
{
    if (keep(a, r, id) < 0)
        return OTF2_CALLBACK_ERROR;
    return set_name(a, kind, id, name);
}

static OTF2_CallbackCode def_member(void *ud, OTF2_MetricMemberRef self,
                                    OTF2_StringRef name,
                                    OTF2_StringRef desc, OTF2_MetricType mt,
                                    OTF2_MetricMode mm, OTF2_Type vt,
                                    OTF2_Base base, int64_t exp,
                                    OTF2_StringRef unit)
{
    weft_record r = { .type = WEFT_REC_MetricMember };

    r.u.MetricMember = (weft_MetricMember){ .self = self, .name = name,
        .description = desc, .metricType = mt, .metricMode = mm,
        .valueType = vt, .base = base, .exponent = exp, .unit = unit };
    return keep_named(ud, &r, WEFT_REF_METRIC_MEMBER, self, name);
}

static OTF2_CallbackCode def_regular_file(void *ud, OTF2_IoFileRef self,
                                          OTF2_StringRef name,
                                          OTF2_SystemTreeNodeRef scope)
{
    weft_record r = { .type = WEFT_REC_IoRegularFile };

    r.u.IoRegularFile = (weft_IoRegularFile){ self, name, scope };
    return keep_named(ud, &r, WEFT_REF_IO_FILE, self, name);
}

static OTF2_CallbackCode def_directory(void *ud, OTF2_IoFileRef self,
                                       OTF2_StringRef name,
                                       OTF2_SystemTreeNodeRef scope)
{
    weft_record r = { .type = WEFT_REC_IoDirectory };

    r.u.IoDirectory = (weft_IoDirectory){ self, name, scope };
    return keep_named(ud, &r, WEFT_REF_IO_FILE, self, name);
}

static OTF2_CallbackCode def_handle(void *ud, OTF2_IoHandleRef self,
                                    OTF2_StringRef name, OTF2_IoFileRef file,
                                    OTF2_IoParadigmRef par,
                                    OTF2_IoHandleFlag flags,
                                    OTF2_CommRef comm,
                                    OTF2_IoHandleRef parent)
{
    weft_record r = { .type = WEFT_REC_IoHandle };

    r.u.IoHandle = (weft_IoHandle){ .self = self, .name = name,
        .file = file, .ioParadigm = par, .ioHandleFlags = flags,
        .comm = comm, .parent = parent };
    return keep_named(ud, &r, WEFT_REF_IO_HANDLE, self, name);
}

static OTF2_CallbackCode def_paradigm(void *ud, OTF2_IoParadigmRef self,
                                      OTF2_StringRef ident,
                                      OTF2_StringRef name,
                                      OTF2_IoParadigmClass cls,
                                      OTF2_IoParadigmFlag flags, uint8_t n,
                                      const OTF2_IoParadigmProperty *props,
                                      const OTF2_Type *types,
                                      const OTF2_AttributeValue *values)
{
    (void)ident, (void)cls, (void)flags, (void)n, (void)props, (void)types;
    (void)values;
    return set_name(ud, WEFT_REF_IO_PARADIGM, self, name);
}

static OTF2_CallbackCode def_location_group(void *ud,
                                            OTF2_LocationGroupRef self,
                                            OTF2_StringRef name,
                                            OTF2_LocationGroupType type,
                                            OTF2_SystemTreeNodeRef parent,
                                            OTF2_LocationGroupRef creator)
{
    weft__arc *a = ud;

    if (GROW(a->lg_parent, a->nlg, self) < 0 ||
        GROW(a->lg_type, a->nlg_type, self) < 0 ||
        GROW(a->lg_creator, a->nlg_creator, self) < 0)
        return OTF2_CALLBACK_ERROR;
    a->lg_parent[self] = parent;
    a->lg_type[self] = type;
    a->lg_creator[self] = creator;
    return set_name(a, WEFT_REF_LOCATION_GROUP, self, name);
}

static OTF2_CallbackCode def_comm(void *ud, OTF2_CommRef self,
                                  OTF2_StringRef name, OTF2_GroupRef group,
                                  OTF2_CommRef parent, OTF2_CommFlag flags)
{
    weft__arc *a = ud;
    weft_record r = { .type = WEFT_REC_Comm };

    if (GROW(a->comm_group, a->ncomms, self) < 0)
        return OTF2_CALLBACK_ERROR;
    a->comm_group[self] = group;
    r.u.Comm = (weft_Comm){ .self = self, .name = name, .group = group,
                            .parent = parent, .flags = flags };
    return keep_named(a, &r, WEFT_REF_COMM, self, name);
}

static OTF2_CallbackCode def_group(void *ud, OTF2_GroupRef self,
                                   OTF2_StringRef name, OTF2_GroupType type,
                                   OTF2_Paradigm paradigm,
                                   OTF2_GroupFlag flags, uint32_t n,
                                   const uint64_t *members)
{
    weft__arc *a = ud;
    size_t old = a->ngroups;
    weft__arc_group *g;
    weft_record r = { .type = WEFT_REC_Group };

    if (GROW(a->groups, a->ngroups, self) < 0)
        return OTF2_CALLBACK_ERROR;
    memset(a->groups + old, 0, (a->ngroups - old) * sizeof *a->groups);
    g = &a->groups[self];
    free(g->members);
    g->members = n ? malloc(n * sizeof *members) : NULL;
    if (n && !g->members)
        return OTF2_CALLBACK_ERROR;
    if (n)
        memcpy(g->members, members, n * sizeof *members);
    g->n = n;
    g->type = type;
    g->paradigm = paradigm;
    r.u.Group = (weft_Group){ .self = self, .name = name, .groupType = type,
        .paradigm = paradigm, .groupFlags = flags, .numberOfMembers = n,
        .members = g->members };
    return keep_named(a, &r, WEFT_REF_GROUP, self, name);
}

/* The members of metric self (a class, or an instance of one), kept
 * as r with them. 0 or -1 (out of memory). */
static int set_class(weft__arc *a, OTF2_MetricRef self, uint8_t n,
                     const OTF2_MetricMemberRef *m, weft_record *r)
{
    size_t old = a->nclasses;
    OTF2_MetricMemberRef *c;

    if (GROW(a->classes, a->nclasses, self) < 0)
        return -1;
    for (size_t i = old; i < a->nclasses; i++)
        a->classes[i] = NULL;
    c = malloc((n + 1u) * sizeof *c);
    if (!c)
        return -1;
    c[0] = n;
    if (n)
        memcpy(c + 1, m, n * sizeof *c);
    free(a->classes[self]);
    a->classes[self] = c;
    if (r->type == WEFT_REC_MetricClass)
        r->u.MetricClass.metricMembers = c + 1;
    return keep(a, r, self);
}

static OTF2_CallbackCode def_class(void *ud, OTF2_MetricRef self, uint8_t n,
                                   const OTF2_MetricMemberRef *m,
                                   OTF2_MetricOccurrence occ,
                                   OTF2_RecorderKind kind)
{
    weft_record r = { .type = WEFT_REC_MetricClass };

    r.u.MetricClass = (weft_MetricClass){ .self = self,
        .numberOfMetrics = n, .metricOccurrence = occ,
        .recorderKind = kind };
    return set_class(ud, self, n, m, &r) < 0 ? OTF2_CALLBACK_ERROR
                                             : OTF2_CALLBACK_SUCCESS;
}

/* An instance has the members of its class (classes come first). */
static OTF2_CallbackCode def_instance(void *ud, OTF2_MetricRef self,
                                      OTF2_MetricRef cls,
                                      OTF2_LocationRef rec,
                                      OTF2_MetricScope scope, uint64_t s)
{
    weft__arc *a = ud;
    OTF2_MetricMemberRef *c;
    weft_record r = { .type = WEFT_REC_MetricInstance };

    if (cls >= a->nclasses || !(c = a->classes[cls]))
        return OTF2_CALLBACK_SUCCESS;
    r.u.MetricInstance = (weft_MetricInstance){ .self = self,
        .metricClass = cls, .recorder = rec, .metricScope = scope,
        .scope = s };
    return set_class(a, self, (uint8_t)c[0], c + 1, &r) < 0
           ? OTF2_CALLBACK_ERROR : OTF2_CALLBACK_SUCCESS;
}

/* Returns 0 or -1 with *err (malloc'd). */
int weft__arc_open(weft__arc *a, const char *anchor, char **err)
{
    OTF2_GlobalDefReaderCallbacks *cb = NULL;
    OTF2_GlobalDefReader *gr;
    OTF2_ErrorCode orc;
    uint64_t n = 0;
    int rc = -1;

    memset(a, 0, sizeof *a);
    *err = NULL;
    OTF2_Error_RegisterCallback(otf2_error, NULL);
    otf2_last[0] = 0;
    /* libotf2 leaks what it allocated when the anchor cannot be read. */
    if (access(anchor, R_OK) != 0)
        return arc_err(err, "cannot open %s: %s", anchor, strerror(errno));
    a->reader = OTF2_Reader_Open(anchor);
    if (!a->reader)
        return arc_err(err, "cannot open %s: %s", anchor,
                       otf2_last[0] ? otf2_last : "not an OTF2 archive");
    if ((orc = OTF2_Reader_SetSerialCollectiveCallbacks(a->reader)) !=
        OTF2_SUCCESS)
        return arc_err(err, "%s: %s", anchor, OTF2_Error_GetDescription(orc));
    gr = OTF2_Reader_GetGlobalDefReader(a->reader);
    cb = OTF2_GlobalDefReaderCallbacks_New();
    if (!gr || !cb) {
        arc_err(err, "%s: cannot read the global definitions: %s", anchor,
                otf2_last);
        goto out;
    }
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, def_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, def_string);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, def_location);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, def_region);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, def_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, def_class);
    OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cb,
                                                            def_instance);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, def_attribute);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, def_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, def_intercomm);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, def_group);
    OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cb, def_parameter);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, def_rmawin);
    OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(cb,
                                                           def_regular_file);
    OTF2_GlobalDefReaderCallbacks_SetIoDirectoryCallback(cb, def_directory);
    OTF2_GlobalDefReaderCallbacks_SetIoHandleCallback(cb, def_handle);
    OTF2_GlobalDefReaderCallbacks_SetIoParadigmCallback(cb, def_paradigm);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
        cb, def_location_group);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, def_node);
    OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(
        cb, def_interrupt);
    OTF2_GlobalDefReaderCallbacks_SetCartTopologyCallback(cb, def_cart);
    OTF2_GlobalDefReaderCallbacks_SetCartDimensionCallback(cb,
                                                           def_dimension);
    OTF2_Reader_RegisterGlobalDefCallbacks(a->reader, gr, cb, a);
    orc = OTF2_Reader_ReadAllGlobalDefinitions(a->reader, gr, &n);
    if (orc != OTF2_SUCCESS) {
        arc_err(err, "%s: reading the global definitions failed after %"
                PRIu64 " definitions: %s", anchor, n,
                otf2_last[0] ? otf2_last : OTF2_Error_GetDescription(orc));
        goto out;
    }
    OTF2_Reader_CloseGlobalDefReader(a->reader, gr);
    rc = 0;
out:
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    return rc;
}

int weft__arc_open_events(weft__arc *a, char **err)
{
    OTF2_ErrorCode orc;

    *err = NULL;
    for (size_t i = 0; i < a->nlocs; i++)
        OTF2_Reader_SelectLocation(a->reader, a->locs[i].id);
    orc = OTF2_Reader_OpenEvtFiles(a->reader);
    if (orc != OTF2_SUCCESS)
        return arc_err(err, "cannot open the event files: %s",
                       OTF2_Error_GetDescription(orc));
    /* Without local definitions there are no ClockOffsets to apply. */
    a->defs_open = OTF2_Reader_OpenDefFiles(a->reader) == OTF2_SUCCESS;
    return 0;
}

/* Reads the local definitions of location i, so that libotf2 applies
 * its ClockOffsets to the timestamps of its events, as every OTF2 reader
 * does (a location without them keeps its times). */
static void read_local_defs(weft__arc *a, size_t i)
{
    OTF2_DefReader *dr;
    uint64_t n = 0;

    if (!a->defs_open ||
        !(dr = OTF2_Reader_GetDefReader(a->reader, a->locs[i].id)))
        return;
    OTF2_Reader_ReadAllLocalDefinitions(a->reader, dr, &n);
    OTF2_Reader_CloseDefReader(a->reader, dr);
}

int weft__arc_read_location(weft__arc *a, size_t i,
                            const OTF2_EvtReaderCallbacks *cbs, void *arg,
                            uint64_t *nread, char **err)
{
    OTF2_EvtReader *r;
    OTF2_ErrorCode orc;

    *nread = 0;
    *err = NULL;
    otf2_last[0] = 0;
    read_local_defs(a, i);
    r = OTF2_Reader_GetEvtReader(a->reader, a->locs[i].id);
    if (!r)
        return arc_err(err, "no event reader: %s",
                       otf2_last[0] ? otf2_last : "unknown error");
    OTF2_Reader_RegisterEvtCallbacks(a->reader, r, cbs, arg);
    orc = OTF2_Reader_ReadLocalEvents(a->reader, r, OTF2_UNDEFINED_UINT64,
                                      nread);
    OTF2_Reader_CloseEvtReader(a->reader, r);
    if (orc != OTF2_SUCCESS)
        return arc_err(err, "reading events failed after %" PRIu64
                       " events: %s", *nread,
                       otf2_last[0] ? otf2_last
                                    : OTF2_Error_GetDescription(orc));
    return 0;
}

void weft__arc_see(weft__arc_span *t, OTF2_TimeStamp ts)
{
    if (t->any && ts < t->last && !t->backwards++)
        t->back_at = ts;
    if (!t->any || ts < t->min)
        t->min = ts;
    if (!t->any || ts > t->max)
        t->max = ts;
    t->last = ts;
    t->any = 1;
}

/* One callback per event of the record table, each noting the time. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define WEFT_SCALAR(ctype, name, W, sel) , ctype name
#define WEFT_ARRAY(ctype, name, count, W, sel) , const ctype *name
#define WEFT_EVENT(id, Name, fields)                                         \
    static OTF2_CallbackCode time_##Name(OTF2_LocationRef loc,               \
                                         OTF2_TimeStamp t, uint64_t pos,     \
                                         void *ud,                           \
                                         OTF2_AttributeList *al fields)      \
    {                                                                        \
        weft__arc_see(ud, t);                                                \
        return OTF2_CALLBACK_SUCCESS;                                        \
    }
#include "weft_records.def"

OTF2_EvtReaderCallbacks *weft__arc_time_callbacks(void)
{
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();

    if (!cb)
        return NULL;
#define WEFT_EVENT(id, Name, fields)                                         \
    OTF2_EvtReaderCallbacks_Set##Name##Callback(cb, time_##Name);
#include "weft_records.def"
    return cb;
}
#undef WEFT_SCALAR
#undef WEFT_ARRAY
#pragma GCC diagnostic pop

static uint64_t dir_bytes(const char *dir, int depth)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    uint64_t n = 0;

    if (!dp)
        return 0;
    while ((de = readdir(dp)) != NULL) {
        char *p = NULL;
        struct stat st;
        if (de->d_name[0] == '.' || asprintf(&p, "%s/%s", dir, de->d_name) < 0)
            continue;
        if (lstat(p, &st) == 0) {
            if (S_ISREG(st.st_mode))
                n += (uint64_t)st.st_size;
            else if (S_ISDIR(st.st_mode) && depth < 4)
                n += dir_bytes(p, depth + 1);
        }
        free(p);
    }
    closedir(dp);
    return n;
}

uint64_t weft__arc_bytes(const char *dir)
{
    return dir_bytes(dir, 0);
}

const char *weft__arc_string(const weft__arc *a, OTF2_StringRef s)
{
    return s < a->nstrings && a->strings[s] ? a->strings[s] : "";
}

const char *weft__arc_name(const weft__arc *a, unsigned kind, uint64_t id)
{
    if (kind == WEFT_REF_LOCATION) {
        for (size_t i = 0; i < a->nlocs; i++)
            if (a->locs[i].id == id)
                return weft__arc_string(a, a->locs[i].name);
        return "";
    }
    if (kind >= WEFT_REF__COUNT || id >= a->nnames[kind])
        return "";
    return weft__arc_string(a, a->names[kind][id]);
}

const char *weft__arc_region_paradigm(const void *ctx, uint32_t id, char *buf)
{
    const weft__arc *a = ctx;

    if (id >= a->nregions || a->regions[id].paradigm < 0)
        return "";
    return weft_profile_paradigm_name((unsigned)a->regions[id].paradigm,
                                      (unsigned)a->regions[id].role, buf);
}

/* In a process tree member's name "PROGRAM (pid N)": where " (pid "
 * begins, and N; NULL when name is not such a name. */
static const char *tree_pid(const char *name, uint32_t *pid)
{
    const char *open = NULL, *p;
    size_t digits;

    for (p = strstr(name, " (pid "); p; p = strstr(p + 1, " (pid "))
        open = p;
    if (!open || open == name)
        return NULL;
    p = open + strlen(" (pid ");
    digits = strspn(p, "0123456789");
    if (*p < '1' || *p > '9' || digits > 10 || p[digits] != ')' ||
        p[digits + 1] != 0 || strtoull(p, NULL, 10) > UINT32_MAX)
        return NULL;
    *pid = (uint32_t)strtoull(p, NULL, 10);
    return open;
}

int weft__arc_tree_pids(const weft__arc *a, OTF2_LocationGroupRef group,
                        uint32_t *pid, uint32_t *parent_pid)
{
    *parent_pid = 0;
    if (!tree_pid(weft__arc_name(a, WEFT_REF_LOCATION_GROUP, group), pid))
        return 0;
    if (group < a->nlg_creator &&
        a->lg_creator[group] != OTF2_UNDEFINED_LOCATION_GROUP &&
        !tree_pid(weft__arc_name(a, WEFT_REF_LOCATION_GROUP,
                                 a->lg_creator[group]), parent_pid))
        *parent_pid = 0;
    return 1;
}

int weft__arc_members(const weft__arc *a, weft_member_row **members,
                      size_t *n, uint32_t **lg_rank)
{
    weft_member_row *m = calloc(a->nlg_type + 1, sizeof *m);
    uint32_t *r = malloc((a->nlg_type + 1) * sizeof *r);

    *n = 0;
    *members = NULL;
    *lg_rank = NULL;
    if (!m || !r) {
        free(m);
        free(r);
        return WEFT_ENOMEM;
    }
    for (size_t g = 0; g < a->nlg_type; g++) {
        r[g] = UINT32_MAX;
        if (a->lg_type[g] != OTF2_LOCATION_GROUP_TYPE_PROCESS)
            continue;
        r[g] = (uint32_t)*n;
        m[*n].rank = (uint32_t)*n;
        m[*n].host = (char *)weft__arc_name(
            a, WEFT_REF_SYSTEM_TREE_NODE,
            g < a->nlg ? a->lg_parent[g] : OTF2_UNDEFINED_SYSTEM_TREE_NODE);
        m[*n].state = (char *)WEFT_MEMBER_COMPLETE;
        weft__arc_tree_pids(a, (OTF2_LocationGroupRef)g, &m[*n].pid,
                            &m[*n].parent_pid);
        (*n)++;
    }
    *members = m;
    *lg_rank = r;
    return 0;
}

int weft__arc_tree_process(const weft__arc *a, OTF2_LocationGroupRef group,
                           const char **process, char **program)
{
    const char *name = weft__arc_name(a, WEFT_REF_LOCATION_GROUP, group);
    const char *open;
    uint32_t pid;

    *process = NULL;
    *program = NULL;
    if (!(open = tree_pid(name, &pid)))
        return 0;
    if (!(*program = strndup(name, (size_t)(open - name))))
        return WEFT_ENOMEM;
    *process = name;
    return 1;
}

static size_t view_count(const void *ctx, uint32_t type)
{
    const weft__arc *a = ctx;
    int k = kept_slot(type);

    return k < 0 ? 0 : a->nkept[k];
}

static const weft_record *view_get(const void *ctx, uint32_t type, size_t i)
{
    const weft__arc *a = ctx;
    int k = kept_slot(type);

    if (k < 0 || i >= a->nkept[k] || a->kept[k][i].type != type)
        return NULL;
    return &a->kept[k][i];
}

static const char *view_string(const void *ctx, uint32_t id)
{
    return weft__arc_string(ctx, id);
}

weft_defview weft__arc_view(const weft__arc *a)
{
    return (weft_defview){ a, view_count, view_get, view_string };
}

void weft__arc_close(weft__arc *a)
{
    if (a->reader && a->defs_open)
        OTF2_Reader_CloseDefFiles(a->reader);
    if (a->reader)
        OTF2_Reader_Close(a->reader);
    for (size_t i = 0; i < a->nstrings; i++)
        free(a->strings[i]);
    for (size_t i = 0; i < a->nclasses; i++)
        free(a->classes[i]);
    for (size_t i = 0; i < a->ngroups; i++)
        free(a->groups[i].members);
    for (size_t k = 0; k < WEFT_REF__COUNT; k++)
        free(a->names[k]);
    for (size_t k = 0; k < WEFT__ARC_KEPT; k++)
        free(a->kept[k]);
    free(a->strings);
    free(a->locs);
    free(a->classes);
    free(a->lg_parent);
    free(a->lg_type);
    free(a->lg_creator);
    free(a->regions);
    free(a->comm_group);
    free(a->groups);
    memset(a, 0, sizeof *a);
}

/* weft-demo-all.c - weft-demo --all-records (see weft-demo-all.h).
 *
 * Every record goes through one function: it is built as a weft_record,
 * written down as one JSON line by a printer driven by the record
 * descriptors, then handed to libweft's generated weft_def_<Name> /
 * weft_evt_<Name> through a switch generated from the record table (the
 * printer and the switch: weft-demo-all-table.c). Here are the records
 * and their values: the process's definitions, then each thread's events.
 *
 * Most kinds are built from their descriptor alone (generic()): twice,
 * every value at the low end of its type or OTF2 enum, then at the high
 * end, times now, references to the process's first definition of their
 * id space. So a record added to the table is sent without a line here.
 * Written by hand are the kinds whose values must be chosen: definitions
 * that others refer to or that carry names, keys, arrays, strings or
 * typed values, and the events that must nest (Enter, Leave, the
 * MeasurementOnOff pair, ProgramBegin and ProgramEnd) or agree with
 * their definitions (Metric); their values still hit boundaries: 0,
 * maxima, OTF2 undefined ids, empty and long strings, NaN and negative
 * doubles, every attribute type.
 *
 * Ids are process-local and numbered differently by odd and even ranks,
 * so that the archive is right only if weftd unifies them. References to
 * what weftd derives follow the table's conventions: locations as
 * rank << 32 | thread, location groups by rank, system tree nodes 0 (the
 * machine) and 1 (the host).
 */
#include "weft-demo-all.h"
#include "weft-demo-all-table.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft.h>

#include "record.h"

/* ---- the process's definitions ---------------------------------------------- */

static uint32_t g_rank, g_size, g_threads;
static FILE *g_deflog;
static uint64_t *g_defcounts;
static int g_error;
/* Per id space: the next process-local id (lid) and the first id defined
 * (what generic records refer to), g_have saying there is one. */
static uint32_t g_next[WEFT_REF__COUNT];
static uint64_t g_first[WEFT_REF__COUNT];
static uint8_t g_have[WEFT_REF__COUNT];

/* Process-local id i of an id space: even ranks count up from 0, odd
 * ranks down from 50000, so equal definitions have different ids. */
static uint32_t lid(uint32_t i)
{
    return (g_rank & 1) ? 50000 - i : i;
}

static uint64_t loc_id(uint32_t rank, uint32_t thread)
{
    return (uint64_t)rank << 32 | thread;
}

static void set_first(unsigned kind, uint64_t id)
{
    if (!g_have[kind]) {
        g_first[kind] = id;
        g_have[kind] = 1;
    }
}

/* Notes r's own id if it is the first of its id space. */
static void first_of_kind(const weft_record *r)
{
    const weft_rec_desc *d = weft_rec_desc_of(r->type);

    if (d->self_field >= 0)
        set_first(d->fields[d->self_field].ref,
                  weft_field_get(r, &d->fields[d->self_field]));
}

static void def(weft_record r)
{
    int kind, rc;

    if (g_error)
        return;
    if (g_deflog)
        demo__json_record(g_deflog, g_rank, -1, &r);
    rc = demo__send_record(NULL, &r);
    if (rc < 0) {
        fprintf(stderr, "weft-demo: rank %" PRIu32 ": weft_def_%s: %s\n",
                g_rank, weft_rec_desc_of(r.type)->name, weft_strerror(rc));
        g_error = rc;
        return;
    }
    kind = demo_kind(weft_rec_desc_of(r.type)->name);
    if (kind >= 0)
        g_defcounts[kind]++;
    first_of_kind(&r);
}

#define DEF(Name, ...)                                                       \
    def((weft_record){ .type = WEFT_REC_##Name, .u.Name = { __VA_ARGS__ } })

/* Strings, defined on first use. */
#define MAX_STRINGS 128
static struct { const char *text; OTF2_StringRef id; } strings[MAX_STRINGS];
static uint32_t nstrings;

static OTF2_StringRef sid(const char *text)
{
    OTF2_StringRef id;

    for (uint32_t i = 0; i < nstrings; i++)
        if (!strcmp(strings[i].text, text))
            return strings[i].id;
    if (nstrings == MAX_STRINGS) {
        fprintf(stderr, "weft-demo: too many strings\n");
        g_error = WEFT_ELIMIT;
        return OTF2_UNDEFINED_STRING;
    }
    id = lid(nstrings);
    strings[nstrings].text = text;
    strings[nstrings++].id = id;
    DEF(String, .self = id, .string = text);
    return id;
}

static char long_string[10001];

static OTF2_AttributeValue av_bits(uint64_t bits)
{
    OTF2_AttributeValue v;

    memcpy(&v, &bits, sizeof v);
    return v;
}

static uint64_t dbits(double d)
{
    uint64_t b;

    memcpy(&b, &d, sizeof b);
    return b;
}

#define QNAN_BITS 0x7ff8000000000000ull
#define FLOAT_NAN_BITS 0x7fc00000ull

/* ---- records from their descriptor ---------------------------------------- */

/* Plain value f at the low (hi 0) or high (hi 1) end of what it holds:
 * its OTF2 enum's first and last value (no flag and every flag), the
 * smallest and largest integer of its size, a negative double and NaN;
 * a timestamp is now. */
static uint64_t generic_value(const weft_field_desc *f, int hi)
{
    unsigned bits = 8 * f->size;

    if (f->enum_id >= 0)
        return hi ? weft_enum_last(f->enum_id) : weft_enum_first(f->enum_id);
    if (!strcmp(f->ctype, "OTF2_TimeStamp"))
        return weft_time();
    switch (f->wire) {
    case WEFT_WIRE_I: /* in `size` bytes, 1 << (bits - 1) is the minimum */
        return ((uint64_t)1 << (bits - 1)) - (uint64_t)hi;
    case WEFT_WIRE_D:
        return hi ? QNAN_BITS : dbits(-1.5);
    default:
        return !hi ? 0 : bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    }
}

/* Builds *r, an instance of d from its descriptor alone (see the top of
 * this file); a definition gets a new id of its own. 0, or -1 naming the
 * field on stderr when some field needs a value chosen by hand (strings,
 * arrays, typed or selected values, a reference to an id space this
 * process has not defined). */
static int generic(const weft_rec_desc *d, int hi, weft_record *r)
{
    memset(r, 0, sizeof *r);
    r->type = d->type;
    for (unsigned i = 0; i < d->nfields; i++) {
        const weft_field_desc *f = &d->fields[i];
        uint64_t v;
        if (f->is_array || f->wire == WEFT_WIRE_Z || f->wire == WEFT_WIRE_T ||
            f->sel_map != WEFT_SEL_NONE ||
            (f->ref && !f->is_self && !g_have[f->ref])) {
            fprintf(stderr, "weft-demo: %s.%s: no generic value; write the "
                    "record by hand in weft-demo-all.c\n", d->name, f->name);
            return -1;
        }
        if (f->is_self)
            v = lid(g_next[f->ref]++);
        else if (f->ref)
            v = g_first[f->ref];
        else
            v = generic_value(f, hi);
        weft_field_set(r, f, v);
    }
    return 0;
}

/* What the threads refer to, set by demo_all_define. */
static struct ids {
    OTF2_StringRef s_long, s_value, s_arg;
    OTF2_RegionRef r_main, r_compute, r_long;
    OTF2_AttributeRef attr[OTF2_TYPE_LOCATION_GROUP + 1];
    OTF2_GroupRef g_locations, g_comm_locations, g_world, g_self, g_regions,
        g_team, g_metrics;
    OTF2_MetricRef m_class, m_one, m_inst;
    OTF2_CommRef c_world, c_self, c_team;
    OTF2_ParameterRef p_string, p_int, p_uint;
    OTF2_RmaWinRef win;
    OTF2_SourceCodeLocationRef scl;
    OTF2_CallingContextRef cc_root, cc;
    OTF2_InterruptGeneratorRef ig;
    OTF2_IoFileRef file, dir;
    OTF2_IoHandleRef handle, handle2;
    OTF2_IoParadigmRef io_posix, io_mpi;
} I;

/* Every client definition kind not defined by hand above, from its
 * descriptor: low values, then high ones unless that would repeat the
 * record or a key (keyed definitions must agree). */
static void generic_definitions(void)
{
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);

    for (size_t i = 0; i < n && !g_error; i++) {
        const weft_rec_desc *d = all[i];
        weft_record lo, hi;
        if (d->is_event || d->is_pseudo ||
            (d->flags & (WEFT_DF_DAEMON | WEFT_DF_WEFT)) ||
            g_defcounts[demo_kind(d->name)] > 0)
            continue;
        if (generic(d, 0, &lo) < 0 || generic(d, 1, &hi) < 0) {
            g_error = WEFT_EINVAL;
            return;
        }
        def(lo);
        if (!d->is_keyed && memcmp(&lo, &hi, sizeof lo))
            def(hi);
    }
}

static const char *const type_names[] = {
    "none", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32",
    "int64", "float", "double", "string", "attribute", "location", "region",
    "group", "metric", "comm", "parameter", "rma_win", "source_code_location",
    "calling_context", "interrupt_generator", "io_file", "io_handle",
    "location_group",
};

int demo_all_define(uint32_t rank, uint32_t size, uint32_t threads,
                    FILE *log, uint64_t *counts)
{
    static char attr_names[OTF2_TYPE_LOCATION_GROUP + 1][32];
    uint64_t *members = NULL;

    g_rank = rank;
    g_size = size;
    g_threads = threads;
    g_deflog = log;
    g_defcounts = counts;
    memset(long_string, 'a' + (int)(rank % 26), sizeof long_string - 1);
    /* What weftd derives, by the table's conventions. */
    set_first(WEFT_REF_LOCATION, loc_id(rank, 0));
    set_first(WEFT_REF_LOCATION_GROUP, rank);
    set_first(WEFT_REF_SYSTEM_TREE_NODE, 1);

#define NEW(KIND) lid(g_next[WEFT_REF_##KIND]++)

    /* Strings that are not reached through sid(): the empty string and a
     * long one with a large id. */
    (void)sid("");
    I.s_long = 999999 - (rank & 1);
    DEF(String, .self = I.s_long, .string = long_string);
    I.s_value = sid("value \"quoted\" \t\n gr\xc3\xbc\xc3\x9f" "e \xe2\x9c\x93");
    I.s_arg = sid("--all-records");

    DEF(Paradigm, .paradigm = OTF2_PARADIGM_MPI, .name = sid("MPI"),
        .paradigmClass = OTF2_PARADIGM_CLASS_PROCESS);
    DEF(Paradigm, .paradigm = OTF2_PARADIGM_OPENMP, .name = sid("OpenMP"),
        .paradigmClass = OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN);
    DEF(Paradigm, .paradigm = OTF2_PARADIGM_KOKKOS, .name = sid(""),
        .paradigmClass = OTF2_PARADIGM_CLASS_ACCELERATOR);
    DEF(ParadigmProperty, .paradigm = OTF2_PARADIGM_MPI,
        .property = OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE,
        .type = OTF2_TYPE_STRING,
        .value = { .stringRef = sid("MPI_COMM_${id}") });
    DEF(ParadigmProperty, .paradigm = OTF2_PARADIGM_MPI,
        .property = OTF2_PARADIGM_PROPERTY_RMA_WIN_NAME_TEMPLATE,
        .type = OTF2_TYPE_STRING,
        .value = { .stringRef = sid("MPI_WIN_${id}") });
    DEF(ParadigmProperty, .paradigm = OTF2_PARADIGM_SHMEM,
        .property = OTF2_PARADIGM_PROPERTY_RMA_ONLY, .type = OTF2_TYPE_UINT8,
        .value = { .uint8 = 1 });

    {
        OTF2_IoParadigmProperty props[1] = { OTF2_IO_PARADIGM_PROPERTY_VERSION };
        OTF2_Type types[1] = { OTF2_TYPE_STRING };
        OTF2_AttributeValue values[1] = { { .stringRef = sid("2008") } };
        I.io_posix = 7;
        I.io_mpi = 0;
        DEF(IoParadigm, .self = I.io_posix, .identification = sid("POSIX"),
            .name = sid("POSIX I/O"), .ioParadigmClass =
            OTF2_IO_PARADIGM_CLASS_SERIAL, .ioParadigmFlags =
            OTF2_IO_PARADIGM_FLAG_OS, .numberOfProperties = 1,
            .properties = props, .types = types, .values = values);
        DEF(IoParadigm, .self = I.io_mpi, .identification = sid("MPI-IO"),
            .name = sid("MPI I/O"), .ioParadigmClass =
            OTF2_IO_PARADIGM_CLASS_PARALLEL, .ioParadigmFlags =
            OTF2_IO_PARADIGM_FLAG_NONE, .numberOfProperties = 0);
    }

    /* One attribute per type. */
    for (unsigned t = OTF2_TYPE_UINT8; t <= OTF2_TYPE_LOCATION_GROUP; t++) {
        snprintf(attr_names[t], sizeof attr_names[t], "a_%s", type_names[t]);
        I.attr[t] = NEW(ATTRIBUTE);
        DEF(Attribute, .self = I.attr[t], .name = sid(attr_names[t]),
            .description = t == OTF2_TYPE_UINT8 ? OTF2_UNDEFINED_STRING
                                                : sid("an attribute"),
            .type = (OTF2_Type)t);
    }

    I.r_main = NEW(REGION);
    DEF(Region, .self = I.r_main, .name = sid("main"),
        .canonicalName = sid("main"), .description = sid("the main function"),
        .regionRole = OTF2_REGION_ROLE_FUNCTION,
        .paradigm = OTF2_PARADIGM_USER, .regionFlags = OTF2_REGION_FLAG_NONE,
        .sourceFile = sid("weft-demo.c"), .beginLineNumber = 0,
        .endLineNumber = UINT32_MAX);
    I.r_compute = NEW(REGION);
    DEF(Region, .self = I.r_compute, .name = sid("compute"),
        .canonicalName = OTF2_UNDEFINED_STRING,
        .description = OTF2_UNDEFINED_STRING,
        .regionRole = OTF2_REGION_ROLE_LOOP,
        .paradigm = OTF2_PARADIGM_COMPILER,
        .regionFlags = OTF2_REGION_FLAG_DYNAMIC,
        .sourceFile = OTF2_UNDEFINED_STRING, .beginLineNumber = 10,
        .endLineNumber = 20);
    I.r_long = NEW(REGION);
    DEF(Region, .self = I.r_long, .name = I.s_long, .canonicalName = sid(""),
        .description = sid(""),
        .regionRole = OTF2_REGION_ROLE_FILE_IO_METADATA,
        .paradigm = OTF2_PARADIGM_KOKKOS,
        .regionFlags = OTF2_REGION_FLAG_DYNAMIC | OTF2_REGION_FLAG_PHASE,
        .sourceFile = sid(""), .beginLineNumber = UINT32_MAX,
        .endLineNumber = 0);

    {
        OTF2_CallpathRef root = NEW(CALLPATH), child = NEW(CALLPATH);
        OTF2_ParameterRef p;
        DEF(Callpath, .self = root, .parent = OTF2_UNDEFINED_CALLPATH,
            .region = I.r_main);
        DEF(Callpath, .self = child, .parent = root, .region = I.r_compute);

        I.p_string = NEW(PARAMETER);
        DEF(Parameter, .self = I.p_string, .name = sid("p_string"),
            .parameterType = OTF2_PARAMETER_TYPE_STRING);
        I.p_int = NEW(PARAMETER);
        DEF(Parameter, .self = I.p_int, .name = sid("p_int"),
            .parameterType = OTF2_PARAMETER_TYPE_INT64);
        I.p_uint = p = NEW(PARAMETER);
        DEF(Parameter, .self = p, .name = sid("p_uint"),
            .parameterType = OTF2_PARAMETER_TYPE_UINT64);
        DEF(CallpathParameter, .callpath = child, .parameter = I.p_int,
            .type = OTF2_TYPE_INT64, .value = { .int64 = INT64_MIN });
        DEF(CallpathParameter, .callpath = root, .parameter = I.p_string,
            .type = OTF2_TYPE_STRING, .value = { .stringRef = sid("arg") });
    }

    /* Groups: every location, the MPI ranks' locations, the ranks,
     * nobody, two regions, this process's threads. */
    members = calloc((size_t)size * threads + threads + 2, sizeof *members);
    if (!members) {
        fprintf(stderr, "weft-demo: out of memory\n");
        return -1;
    }
    for (uint32_t r = 0; r < size; r++)
        for (uint32_t t = 0; t < threads; t++)
            members[r * threads + t] = loc_id(r, t);
    I.g_locations = NEW(GROUP);
    DEF(Group, .self = I.g_locations, .name = sid("all locations"),
        .groupType = OTF2_GROUP_TYPE_LOCATIONS,
        .paradigm = OTF2_PARADIGM_UNKNOWN, .groupFlags = OTF2_GROUP_FLAG_NONE,
        .numberOfMembers = size * threads, .members = members);
    for (uint32_t r = 0; r < size; r++)
        members[r] = loc_id(r, 0);
    I.g_comm_locations = NEW(GROUP);
    DEF(Group, .self = I.g_comm_locations, .name = sid("MPI locations"),
        .groupType = OTF2_GROUP_TYPE_COMM_LOCATIONS,
        .paradigm = OTF2_PARADIGM_MPI, .groupFlags = OTF2_GROUP_FLAG_NONE,
        .numberOfMembers = size, .members = members);
    for (uint32_t r = 0; r < size; r++)
        members[r] = r;
    I.g_world = NEW(GROUP);
    DEF(Group, .self = I.g_world, .name = sid("world"),
        .groupType = OTF2_GROUP_TYPE_COMM_GROUP,
        .paradigm = OTF2_PARADIGM_MPI,
        .groupFlags = OTF2_GROUP_FLAG_GLOBAL_MEMBERS,
        .numberOfMembers = size, .members = members);
    I.g_self = NEW(GROUP);
    DEF(Group, .self = I.g_self, .name = sid("self"),
        .groupType = OTF2_GROUP_TYPE_COMM_SELF,
        .paradigm = OTF2_PARADIGM_MPI, .groupFlags = OTF2_GROUP_FLAG_NONE,
        .numberOfMembers = 0, .members = NULL);
    members[0] = I.r_main;
    members[1] = I.r_compute;
    I.g_regions = NEW(GROUP);
    DEF(Group, .self = I.g_regions, .name = sid("regions"),
        .groupType = OTF2_GROUP_TYPE_REGIONS,
        .paradigm = OTF2_PARADIGM_UNKNOWN, .groupFlags = OTF2_GROUP_FLAG_NONE,
        .numberOfMembers = 2, .members = members);
    /* OTF2 allows one COMM_LOCATIONS group per paradigm: the OpenMP one
     * lists every thread of every process (the same in all processes),
     * a process's team is its threads' indexes in it. */
    for (uint32_t r = 0; r < size; r++)
        for (uint32_t t = 0; t < threads; t++)
            members[r * threads + t] = loc_id(r, t);
    DEF(Group, .self = NEW(GROUP), .name = sid("threads"),
        .groupType = OTF2_GROUP_TYPE_COMM_LOCATIONS,
        .paradigm = OTF2_PARADIGM_OPENMP, .groupFlags = OTF2_GROUP_FLAG_NONE,
        .numberOfMembers = size * threads, .members = members);
    for (uint32_t t = 0; t < threads; t++)
        members[t] = rank * threads + t;
    I.g_team = NEW(GROUP);
    DEF(Group, .self = I.g_team, .name = sid("team"),
        .groupType = OTF2_GROUP_TYPE_COMM_GROUP,
        .paradigm = OTF2_PARADIGM_OPENMP, .groupFlags = OTF2_GROUP_FLAG_NONE,
        .numberOfMembers = threads, .members = members);

    {
        OTF2_MetricMemberRef mm[3] = { NEW(METRIC_MEMBER), NEW(METRIC_MEMBER),
                                       NEW(METRIC_MEMBER) };
        DEF(MetricMember, .self = mm[0], .name = sid("m_u64"),
            .description = sid("an unsigned counter"),
            .metricType = OTF2_METRIC_TYPE_PAPI,
            .metricMode = OTF2_METRIC_ACCUMULATED_START,
            .valueType = OTF2_TYPE_UINT64, .base = OTF2_BASE_BINARY,
            .exponent = INT64_MAX, .unit = sid("items"));
        DEF(MetricMember, .self = mm[1], .name = sid("m_i64"),
            .description = OTF2_UNDEFINED_STRING,
            .metricType = OTF2_METRIC_TYPE_RUSAGE,
            .metricMode = OTF2_METRIC_RELATIVE_NEXT,
            .valueType = OTF2_TYPE_INT64, .base = OTF2_BASE_DECIMAL,
            .exponent = INT64_MIN, .unit = sid(""));
        DEF(MetricMember, .self = mm[2], .name = sid("m_dbl"),
            .description = sid(""), .metricType = OTF2_METRIC_TYPE_USER,
            .metricMode = OTF2_METRIC_ABSOLUTE_POINT,
            .valueType = OTF2_TYPE_DOUBLE, .base = OTF2_BASE_DECIMAL,
            .exponent = -3, .unit = sid("s"));
        I.m_class = NEW(METRIC);
        DEF(MetricClass, .self = I.m_class, .numberOfMetrics = 3,
            .metricMembers = mm,
            .metricOccurrence = OTF2_METRIC_ASYNCHRONOUS,
            .recorderKind = OTF2_RECORDER_KIND_GPU);
        I.m_one = NEW(METRIC);
        DEF(MetricClass, .self = I.m_one, .numberOfMetrics = 1,
            .metricMembers = mm,
            .metricOccurrence = OTF2_METRIC_SYNCHRONOUS_STRICT,
            .recorderKind = OTF2_RECORDER_KIND_UNKNOWN);
    }
    I.m_inst = NEW(METRIC);
    DEF(MetricInstance, .self = I.m_inst, .metricClass = I.m_one,
        .recorder = loc_id(rank, 0), .metricScope = OTF2_SCOPE_LOCATION,
        .scope = loc_id(rank, 0));
    DEF(MetricInstance, .self = NEW(METRIC), .metricClass = I.m_one,
        .recorder = loc_id(rank, 0),
        .metricScope = OTF2_SCOPE_LOCATION_GROUP, .scope = rank);
    DEF(MetricInstance, .self = NEW(METRIC), .metricClass = I.m_class,
        .recorder = loc_id(rank, threads - 1),
        .metricScope = OTF2_SCOPE_SYSTEM_TREE_NODE, .scope = 1);
    DEF(MetricInstance, .self = NEW(METRIC), .metricClass = I.m_class,
        .recorder = loc_id(rank, 0), .metricScope = OTF2_SCOPE_GROUP,
        .scope = I.g_locations);
    members[0] = I.m_class;
    members[1] = I.m_inst;
    I.g_metrics = NEW(GROUP);
    DEF(Group, .self = I.g_metrics, .name = sid("metrics"),
        .groupType = OTF2_GROUP_TYPE_METRIC,
        .paradigm = OTF2_PARADIGM_UNKNOWN, .groupFlags = OTF2_GROUP_FLAG_NONE,
        .numberOfMembers = 2, .members = members);
    free(members);

    I.c_world = NEW(COMM);
    DEF(Comm, .self = I.c_world, .name = sid("MPI_COMM_WORLD"),
        .group = I.g_world, .parent = OTF2_UNDEFINED_COMM,
        .flags = OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS);
    I.c_self = NEW(COMM);
    DEF(Comm, .self = I.c_self, .name = sid("MPI_COMM_SELF"),
        .group = I.g_self, .parent = I.c_world, .flags = OTF2_COMM_FLAG_NONE);
    I.c_team = NEW(COMM);
    DEF(Comm, .self = I.c_team, .name = sid("team"), .group = I.g_team,
        .parent = OTF2_UNDEFINED_COMM, .flags = OTF2_COMM_FLAG_NONE);
    DEF(InterComm, .self = NEW(COMM), .name = sid("intercomm"),
        .groupA = I.g_world, .groupB = I.g_self,
        .commonCommunicator = I.c_world, .flags = OTF2_COMM_FLAG_NONE);

    I.win = NEW(RMA_WIN);
    DEF(RmaWin, .self = I.win, .name = sid("window"), .comm = I.c_world,
        .flags = OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS);

    DEF(SystemTreeNodeProperty, .systemTreeNode = 1, .name = sid("cpus"),
        .type = OTF2_TYPE_UINT32, .value = { .uint32 = UINT32_MAX });
    DEF(SystemTreeNodeProperty, .systemTreeNode = 0, .name = sid("site"),
        .type = OTF2_TYPE_STRING, .value = { .stringRef = sid("weft test") });
    DEF(LocationGroupProperty, .locationGroup = rank, .name = sid("rank"),
        .type = OTF2_TYPE_INT64,
        .value = { .int64 = rank ? -(int64_t)rank : INT64_MIN });
    DEF(LocationGroupProperty, .locationGroup = rank, .name = sid("next"),
        .type = OTF2_TYPE_LOCATION_GROUP,
        .value = { .locationGroupRef = (rank + 1) % size });
    DEF(LocationProperty, .location = loc_id(rank, 0), .name = sid("speed"),
        .type = OTF2_TYPE_DOUBLE, .value = av_bits(rank & 1 ? QNAN_BITS
                                                            : dbits(-0.0)));
    DEF(LocationProperty, .location = loc_id(rank, threads - 1),
        .name = sid("peer"), .type = OTF2_TYPE_LOCATION,
        .value = { .locationRef = loc_id((rank + 1) % size, 0) });
    /* A thread that never records: weftd must still make the location. */
    DEF(LocationProperty, .location = loc_id(rank, threads + 7),
        .name = sid("idle"), .type = OTF2_TYPE_UINT8, .value = { .uint8 = 0 });

    {
        OTF2_CartDimensionRef dims[2] = { NEW(CART_DIMENSION),
                                          NEW(CART_DIMENSION) };
        OTF2_CartTopologyRef topo = NEW(CART_TOPOLOGY);
        uint32_t coords[2] = { rank, UINT32_MAX };
        DEF(CartDimension, .self = dims[0], .name = sid("x"),
            .size = UINT32_MAX, .cartPeriodicity = OTF2_CART_PERIODIC_TRUE);
        DEF(CartDimension, .self = dims[1], .name = sid("y"), .size = 0,
            .cartPeriodicity = OTF2_CART_PERIODIC_FALSE);
        DEF(CartTopology, .self = topo, .name = sid("grid"),
            .communicator = I.c_world, .numberOfDimensions = 2,
            .cartDimensions = dims);
        DEF(CartCoordinate, .cartTopology = topo, .rank = rank,
            .numberOfDimensions = 2, .coordinates = coords);
    }

    I.scl = NEW(SOURCE_CODE_LOCATION);
    DEF(SourceCodeLocation, .self = I.scl, .file = sid("weft-demo.c"),
        .lineNumber = UINT32_MAX);
    DEF(SourceCodeLocation, .self = NEW(SOURCE_CODE_LOCATION),
        .file = sid(""), .lineNumber = 0);
    I.cc_root = NEW(CALLING_CONTEXT);
    DEF(CallingContext, .self = I.cc_root, .region = I.r_main,
        .sourceCodeLocation = I.scl, .parent = OTF2_UNDEFINED_CALLING_CONTEXT);
    I.cc = NEW(CALLING_CONTEXT);
    DEF(CallingContext, .self = I.cc, .region = I.r_compute,
        .sourceCodeLocation = OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
        .parent = I.cc_root);
    DEF(CallingContextProperty, .callingContext = I.cc, .name = sid("depth"),
        .type = OTF2_TYPE_UINT16, .value = { .uint16 = UINT16_MAX });
    DEF(CallingContextProperty, .callingContext = I.cc, .name = sid("caller"),
        .type = OTF2_TYPE_CALLING_CONTEXT,
        .value = { .callingContextRef = I.cc_root });
    I.ig = NEW(INTERRUPT_GENERATOR);
    DEF(InterruptGenerator, .self = I.ig, .name = sid("timer"),
        .interruptGeneratorMode = OTF2_INTERRUPT_GENERATOR_MODE_COUNT,
        .base = OTF2_BASE_BINARY, .exponent = INT64_MIN, .period = UINT64_MAX);

    I.file = NEW(IO_FILE);
    DEF(IoRegularFile, .self = I.file, .name = sid("/tmp/weft-demo.dat"),
        .scope = 1);
    I.dir = NEW(IO_FILE);
    DEF(IoDirectory, .self = I.dir, .name = sid("/tmp"), .scope = 0);
    DEF(IoFileProperty, .ioFile = I.file, .name = sid("size"),
        .type = OTF2_TYPE_UINT64, .value = { .uint64 = UINT64_MAX });
    DEF(IoFileProperty, .ioFile = I.dir, .name = sid("owner"),
        .type = OTF2_TYPE_STRING, .value = { .stringRef = sid("weft") });
    I.handle = NEW(IO_HANDLE);
    DEF(IoHandle, .self = I.handle, .name = sid("stdout"), .file = I.file,
        .ioParadigm = I.io_posix,
        .ioHandleFlags = OTF2_IO_HANDLE_FLAG_PRE_CREATED |
                         OTF2_IO_HANDLE_FLAG_ALL_PROXY,
        .comm = I.c_world, .parent = OTF2_UNDEFINED_IO_HANDLE);
    I.handle2 = NEW(IO_HANDLE);
    DEF(IoHandle, .self = I.handle2, .name = sid("duplicate"),
        .file = I.file, .ioParadigm = I.io_mpi,
        .ioHandleFlags = OTF2_IO_HANDLE_FLAG_NONE, .comm = OTF2_UNDEFINED_COMM,
        .parent = I.handle);

    /* A process's clock offsets; 0 keeps event times as recorded. */
    DEF(ClockOffset, .time = 0, .offset = 0,
        .standardDeviation = NAN);
    DEF(ClockOffset, .time = (uint64_t)1 << 62, .offset = 0,
        .standardDeviation = -1.5);
#undef NEW
    generic_definitions();
    return g_error ? -1 : 0;
}

/* ---- events, per thread ------------------------------------------------------ */

typedef struct attrs {
    uint32_t n;
    OTF2_AttributeRef ids[OTF2_TYPE_LOCATION_GROUP + 1];
    OTF2_Type types[OTF2_TYPE_LOCATION_GROUP + 1];
    OTF2_AttributeValue values[OTF2_TYPE_LOCATION_GROUP + 1];
} attrs;

typedef struct thread_state {
    FILE *log;
    uint64_t *counts;
    uint32_t thread;
    int error;
    const char *failed;
    weft_attribute_list *list;
} thread_state;

static void evt(thread_state *ts, const attrs *a, weft_record r)
{
    weft_record al;
    int rc, kind;

    if (ts->error)
        return;
    r.time = weft_time();
    if (a) {
        memset(&al, 0, sizeof al);
        al.type = WEFT_REC_AttributeList;
        al.u.AttributeList.numberOfAttributes = a->n;
        al.u.AttributeList.attributes = a->ids;
        al.u.AttributeList.types = a->types;
        al.u.AttributeList.values = a->values;
        r.attributes = &al;
        for (uint32_t i = 0; i < a->n && !ts->error; i++) {
            rc = weft_attribute_list_add(ts->list, a->ids[i], a->types[i],
                                         a->values[i]);
            if (rc < 0) {
                ts->error = rc;
                ts->failed = "weft_attribute_list_add";
            }
        }
    }
    if (ts->log)
        demo__json_record(ts->log, g_rank, ts->thread, &r);
    rc = demo__send_record(a ? ts->list : NULL, &r);
    if (rc < 0 && !ts->error) {
        ts->error = rc;
        ts->failed = weft_rec_desc_of(r.type)->name;
    }
    if (rc == 0 && (kind = demo_kind(weft_rec_desc_of(r.type)->name)) >= 0)
        ts->counts[kind]++;
}

#define EVT(a, Name, ...)                                                    \
    evt(ts, a, (weft_record){ .type = WEFT_REC_##Name,                       \
                              .u.Name = { __VA_ARGS__ } })

/* Every attribute type, with boundary values and defined references. */
static void attrs_full(attrs *a, uint32_t thread)
{
    memset(a, 0, sizeof *a);
    for (unsigned t = OTF2_TYPE_UINT8; t <= OTF2_TYPE_LOCATION_GROUP; t++) {
        OTF2_AttributeValue v;
        memset(&v, 0, sizeof v);
        switch (t) {
        case OTF2_TYPE_UINT8: v.uint8 = UINT8_MAX; break;
        case OTF2_TYPE_UINT16: v.uint16 = 0; break;
        case OTF2_TYPE_UINT32: v.uint32 = UINT32_MAX; break;
        case OTF2_TYPE_UINT64: v.uint64 = UINT64_MAX; break;
        case OTF2_TYPE_INT8: v.int8 = INT8_MIN; break;
        case OTF2_TYPE_INT16: v.int16 = -1; break;
        case OTF2_TYPE_INT32: v.int32 = INT32_MAX; break;
        case OTF2_TYPE_INT64: v.int64 = INT64_MIN; break;
        case OTF2_TYPE_FLOAT: v.float32 = -1.5f; break;
        case OTF2_TYPE_DOUBLE: v = av_bits(QNAN_BITS); break;
        case OTF2_TYPE_STRING: v.stringRef = I.s_value; break;
        case OTF2_TYPE_ATTRIBUTE: v.attributeRef = I.attr[t]; break;
        case OTF2_TYPE_LOCATION: v.locationRef = loc_id(g_rank, thread); break;
        case OTF2_TYPE_REGION: v.regionRef = I.r_long; break;
        case OTF2_TYPE_GROUP: v.groupRef = I.g_locations; break;
        case OTF2_TYPE_METRIC: v.metricRef = I.m_class; break;
        case OTF2_TYPE_COMM: v.commRef = I.c_world; break;
        case OTF2_TYPE_PARAMETER: v.parameterRef = I.p_uint; break;
        case OTF2_TYPE_RMA_WIN: v.rmaWinRef = I.win; break;
        case OTF2_TYPE_SOURCE_CODE_LOCATION:
            v.sourceCodeLocationRef = I.scl; break;
        case OTF2_TYPE_CALLING_CONTEXT: v.callingContextRef = I.cc; break;
        case OTF2_TYPE_INTERRUPT_GENERATOR:
            v.interruptGeneratorRef = I.ig; break;
        case OTF2_TYPE_IO_FILE: v.ioFileRef = I.dir; break;
        case OTF2_TYPE_IO_HANDLE: v.ioHandleRef = I.handle2; break;
        case OTF2_TYPE_LOCATION_GROUP: v.locationGroupRef = g_rank; break;
        }
        a->ids[a->n] = I.attr[t];
        a->types[a->n] = (OTF2_Type)t;
        a->values[a->n++] = v;
    }
}

/* Every attribute type again: zeros, a NaN float, undefined references. */
static void attrs_other(attrs *a)
{
    attrs_full(a, 0);
    for (uint32_t i = 0; i < a->n; i++) {
        unsigned kind = weft_sel_kind(WEFT_SEL_TYPE, a->types[i]);
        uint64_t v = 0;
        if (kind != WEFT_REF_NONE)
            v = weft_ref_kind_undefined(kind);
        else if (a->types[i] == OTF2_TYPE_FLOAT)
            v = FLOAT_NAN_BITS;
        else if (a->types[i] == OTF2_TYPE_DOUBLE)
            v = dbits(-1e300);
        else if (a->types[i] == OTF2_TYPE_INT64)
            v = (uint64_t)INT64_MAX;
        a->values[i] = av_bits(v);
    }
}

/* The events demo_all_events writes by hand. */
static int event_by_hand(uint32_t type)
{
    static const uint32_t by_hand[] = {
        WEFT_REC_ProgramBegin, WEFT_REC_ProgramEnd, WEFT_REC_MeasurementOnOff,
        WEFT_REC_Enter, WEFT_REC_Leave, WEFT_REC_Metric,
    };

    for (size_t i = 0; i < sizeof by_hand / sizeof by_hand[0]; i++)
        if (by_hand[i] == type)
            return 1;
    return 0;
}

/* Every other event kind, from its descriptor: low values without
 * attributes, then high values with every attribute type (full). */
static void generic_events(thread_state *ts, const attrs *full)
{
    size_t n;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    weft_record r;

    for (size_t i = 0; i < n && !ts->error; i++) {
        if (!all[i]->is_event || event_by_hand(all[i]->type))
            continue;
        for (int hi = 0; hi < 2 && !ts->error; hi++) {
            if (generic(all[i], hi, &r) < 0) {
                ts->error = WEFT_EINVAL;
                ts->failed = all[i]->name;
                return;
            }
            evt(ts, hi ? full : NULL, r);
        }
    }
}

int demo_all_events(FILE *log, uint64_t *counts, const char **failed)
{
    thread_state state = { log, counts, weft_location_index(), 0, NULL, NULL };
    thread_state *ts = &state;
    attrs full, other;
    OTF2_StringRef args[3] = { I.s_arg, I.s_long, I.s_value };
    OTF2_Type mtypes[3] = { OTF2_TYPE_UINT64, OTF2_TYPE_INT64,
                            OTF2_TYPE_DOUBLE };
    OTF2_MetricValue mvalues[3] = { { .unsigned_int = UINT64_MAX },
                                    { .signed_int = INT64_MIN },
                                    { .unsigned_int = QNAN_BITS } };
    OTF2_MetricValue mzero[1] = { { .unsigned_int = 0 } };
    uint32_t t = ts->thread;

    ts->list = weft_attribute_list_new();
    if (!ts->list) {
        *failed = "weft_attribute_list_new";
        return WEFT_ENOMEM;
    }
    attrs_full(&full, t);
    attrs_other(&other);

    EVT(&full, ProgramBegin, .programName = I.s_value,
        .numberOfArguments = 3, .programArguments = args);
    EVT(NULL, MeasurementOnOff, .measurementMode = OTF2_MEASUREMENT_ON);
    EVT(&full, Enter, .region = I.r_main);
    EVT(NULL, Enter, .region = I.r_compute);
    EVT(&other, Metric, .metric = I.m_class, .numberOfMetrics = 3,
        .typeIDs = mtypes, .metricValues = mvalues);
    EVT(NULL, Metric, .metric = I.m_inst, .numberOfMetrics = 1,
        .typeIDs = mtypes, .metricValues = mzero);
    EVT(NULL, Leave, .region = I.r_compute);
    EVT(NULL, Enter, .region = OTF2_UNDEFINED_REGION);
    EVT(NULL, Leave, .region = OTF2_UNDEFINED_REGION);

    generic_events(ts, &full);

    EVT(&other, Leave, .region = I.r_main);
    EVT(NULL, MeasurementOnOff, .measurementMode = OTF2_MEASUREMENT_OFF);
    EVT(NULL, ProgramEnd, .exitStatus = INT64_MIN);

    weft_attribute_list_free(ts->list);
    *failed = ts->failed;
    return ts->error;
}

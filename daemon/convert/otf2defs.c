/* otf2defs.c - the archive's global definitions (weft__otf2_write_global_defs,
 * otf2out.h): the clock, the strings, the system tree (root "weft", one
 * node per host), one location group per member ("Process R", or
 * "PROG (pid N)" created by its parent's group in a process tree; ids
 * are dense in rank order, so id = rank unless members are missing, as
 * readers refuse gaps), the locations (id = rank << 32 | thread), then
 * the unified definitions in first-seen order, which puts each after
 * what it references. Thread teams (Comms whose empty COMM_GROUP a
 * client could not fill) get groups of their own from the TeamMember
 * records, and their paradigm's empty COMM_LOCATIONS group its members:
 * new groups after the unified ones, each just before the first Comm
 * that refers to it, the unified groups after that Comm written before
 * it so that group ids stay in order (teams.c says how). Every one goes
 * through the record table's switch (weft__otf2_write_def); the
 * definitions weftd adds itself are built as weft_records first.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "otf2out.h"
#include "weft_errors.h"

/* The attribute (UINT8 1) of the Leaves and Enters weftd writes so that
 * every location nests; defined only in archives that have some. */
#define NEST_ATTRIBUTE "weft::nesting"
#define NEST_ATTRIBUTE_DESC "written by weftd, not recorded: regions open " \
    "at a measurement gap or at the end of a location are left there " \
    "(and entered again after the gap)"

/* The location group of ghost location c->ghosts[k], given that of the
 * one before (g; any for k = 0): one per rank, after the members'. */
static uint64_t ghost_group(const conv *c, size_t k, uint64_t g)
{
    if (k == 0)
        return c->nmems;
    return g + (c->ghosts[k] >> 32 != c->ghosts[k - 1] >> 32);
}

/* Global id of string s (added to the unifier if new). */
static int string_id(conv *c, const char *s, OTF2_StringRef *id)
{
    weft_record r;
    uint64_t gid;
    char msg[256];
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_String;
    r.u.String.string = s;
    rc = weft_unify_add_global(c->u, &r, &gid, msg, sizeof msg);
    if (rc < 0)
        return weft__conv_fail(c, rc, "adding string \"%s\": %s", s, msg);
    *id = (OTF2_StringRef)gid;
    return 0;
}

/* The names weftd gives: a member's location group and its threads. */
static void process_name(char *buf, size_t n, uint32_t rank)
{
    snprintf(buf, n, "Process %" PRIu32, rank);
}

/* See convert_internal.h. */
const char *weft__conv_group_name(const member *m, char *buf, size_t len)
{
    if (!m->tree)
        process_name(buf, len, m->rank);
    else
        snprintf(buf, len, "%.256s (pid %" PRIu32 ")",
                 m->program[0] ? m->program : "process", m->pid);
    return buf;
}

/* The location group (member index) that created member i of a process
 * tree: the member with its parent's pid on its host that joined last
 * before it (pids are reused); OTF2_UNDEFINED_LOCATION_GROUP for the
 * root, outside a tree, and when its parent is no member (an untraced
 * shell between them). */
static uint64_t creating_group(const conv *c, size_t i)
{
    const member *m = &c->mems[i];

    if (!m->tree || !m->parent_pid)
        return OTF2_UNDEFINED_LOCATION_GROUP;
    for (size_t k = i; k-- > 0;)
        if (c->mems[k].pid == m->parent_pid &&
            !strcmp(c->mems[k].hostname, m->hostname))
            return k;
    return OTF2_UNDEFINED_LOCATION_GROUP;
}

/* Also the name of the catalog's location rows (convert.c). */
void weft__otf2_thread_name(char *buf, size_t n, uint32_t thread)
{
    if (thread == 0)
        snprintf(buf, n, "Master thread");
    else
        snprintf(buf, n, "Thread %" PRIu32, thread);
}

/* Strings of the system tree's root. */
typedef struct tree_strings {
    OTF2_StringRef weft, machine, node;
} tree_strings;

static int put(conv *c, OTF2_GlobalDefWriter *gw, const weft_record *r)
{
    OTF2_ErrorCode orc = weft__otf2_write_def(gw, r);
    const weft_rec_desc *d;

    if (orc == OTF2_SUCCESS)
        return 0;
    d = weft_rec_desc_of(r->type);
    return weft__conv_fail(c, WEFT_EOTF2, "%s: writing global definition "
                           "%s: %s", c->in->archive_dir, d ? d->name : "?",
                           weft__otf2_msg(orc));
}

/* Wall clock (ns since the epoch) at trace time t, from m's Hello;
 * OTF2_UNDEFINED_TIMESTAMP when unknown or out of range. long double
 * holds 64 bits exactly, so nanoseconds survive. */
static uint64_t realtime_at(const member *m, uint64_t t, uint64_t res)
{
    long double ns;
    uint64_t at;

    if (!m->realtime_ns)
        return OTF2_UNDEFINED_TIMESTAMP;
    at = m->rescale ? weft_clock_ticks_to_ns(m->clock_at_realtime,
                                             m->timer_resolution)
                    : m->clock_at_realtime;
    at = weft__conv_corrected(m, at);
    ns = (long double)m->realtime_ns +
         ((long double)t - (long double)at) * 1e9L / (long double)res;
    if (ns < 0 || ns >= 18446744073709551615.0L)
        return OTF2_UNDEFINED_TIMESTAMP;
    return (uint64_t)(ns + 0.5L);
}

/* Defines NEST_ATTRIBUTE with the id pass 2 gave it. */
static int define_nest_attribute(conv *c)
{
    weft_record r;
    uint64_t gid;
    char msg[256];
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Attribute;
    if ((rc = string_id(c, NEST_ATTRIBUTE, &r.u.Attribute.name)) < 0 ||
        (rc = string_id(c, NEST_ATTRIBUTE_DESC,
                        &r.u.Attribute.description)) < 0)
        return rc;
    r.u.Attribute.type = OTF2_TYPE_UINT8;
    rc = weft_unify_add_global(c->u, &r, &gid, msg, sizeof msg);
    if (rc < 0)
        return weft__conv_fail(c, rc, "adding attribute " NEST_ATTRIBUTE
                               ": %s", msg);
    if (gid != c->nest_attr)  /* a member defined the very same one */
        return weft__conv_fail(c, WEFT_ECONFLICT, "attribute "
                               NEST_ATTRIBUTE " got id %" PRIu64 ", events "
                               "name %" PRIu32, gid, c->nest_attr);
    return 0;
}

/* The definitions weftd adds, before any string is written: they must be
 * in the unifier by then. Hosts got nodes 1.. in pass 1. */
static int add_own_definitions(conv *c, tree_strings *ts)
{
    int rc;

    if ((rc = string_id(c, "weft", &ts->weft)) < 0 ||
        (rc = string_id(c, "machine", &ts->machine)) < 0 ||
        (rc = string_id(c, "node", &ts->node)) < 0)
        return rc;
    if (c->added && (rc = define_nest_attribute(c)) < 0)
        return rc;
    return 0;
}

static int put_clock_properties(conv *c, OTF2_GlobalDefWriter *gw)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ClockProperties;
    r.u.ClockProperties.timerResolution = c->resolution;
    r.u.ClockProperties.globalOffset = c->any_event ? c->tmin : 0;
    r.u.ClockProperties.traceLength = c->any_event ? c->tmax - c->tmin + 1 : 1;
    /* The first member that knows its wall clock dates the trace. */
    r.u.ClockProperties.realtimeTimestamp = OTF2_UNDEFINED_TIMESTAMP;
    for (size_t i = 0; i < c->nmems; i++) {
        if (c->mems[i].realtime_ns) {
            r.u.ClockProperties.realtimeTimestamp =
                realtime_at(&c->mems[i], r.u.ClockProperties.globalOffset,
                            c->resolution);
            break;
        }
    }
    return put(c, gw, &r);
}

/* Every string, the names of the members and their threads included
 * (they need their strings before any string is written). */
static int put_strings(conv *c, OTF2_GlobalDefWriter *gw)
{
    int rc;

    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        char name[WEFT_CONV_GROUP_NAME];
        OTF2_StringRef sid;
        if ((rc = string_id(c, m->hostname, &sid)) < 0 ||
            (rc = string_id(c, weft__conv_group_name(m, name, sizeof name),
                            &sid)) < 0)
            return rc;
        for (size_t k = 0; k < m->nlocs; k++) {
            const char *s = weft__conv_loc_name(&m->locs[k], name,
                                                sizeof name);
            if ((rc = string_id(c, s, &sid)) < 0)
                return rc;
        }
    }
    for (size_t k = 0; k < c->nghosts; k++) {
        char name[64];
        OTF2_StringRef sid;
        process_name(name, sizeof name, (uint32_t)(c->ghosts[k] >> 32));
        if ((rc = string_id(c, name, &sid)) < 0)
            return rc;
        weft__otf2_thread_name(name, sizeof name, (uint32_t)c->ghosts[k]);
        if ((rc = string_id(c, name, &sid)) < 0)
            return rc;
    }
    for (size_t i = 0; i < weft_unify_count(c->u, WEFT_REC_String); i++)
        if ((rc = put(c, gw, weft_unify_get(c->u, WEFT_REC_String, i))) < 0)
            return rc;
    return 0;
}

/* The root, then one node per host. string_id() finds the strings
 * put_strings added. */
static int put_system_tree(conv *c, OTF2_GlobalDefWriter *gw,
                           const tree_strings *ts)
{
    weft_record r;
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_SystemTreeNode;
    r.u.SystemTreeNode.self = 0;
    r.u.SystemTreeNode.name = ts->weft;
    r.u.SystemTreeNode.className = ts->machine;
    r.u.SystemTreeNode.parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    if ((rc = put(c, gw, &r)) < 0)
        return rc;
    for (uint64_t node = 1; node < c->nodes; node++) {
        for (size_t i = 0; i < c->nmems; i++) {
            if (c->mems[i].node != node)
                continue;
            r.u.SystemTreeNode.self = (OTF2_SystemTreeNodeRef)node;
            if ((rc = string_id(c, c->mems[i].hostname,
                                &r.u.SystemTreeNode.name)) < 0)
                return rc;
            r.u.SystemTreeNode.className = ts->node;
            r.u.SystemTreeNode.parent = 0;
            if ((rc = put(c, gw, &r)) < 0)
                return rc;
            break;
        }
    }
    return 0;
}

/* Location group ids must be dense (otf2-print -Werror refuses gaps):
 * the member's index, which is its rank unless members are missing.
 * name: the group's; creator: the group that created it, or
 * OTF2_UNDEFINED_LOCATION_GROUP. */
static int put_location_group(conv *c, OTF2_GlobalDefWriter *gw,
                              uint64_t self, const char *name, uint64_t node,
                              uint64_t creator)
{
    weft_record r;
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_LocationGroup;
    r.u.LocationGroup.self = (OTF2_LocationGroupRef)self;
    if ((rc = string_id(c, name, &r.u.LocationGroup.name)) < 0)
        return rc;
    r.u.LocationGroup.locationGroupType = OTF2_LOCATION_GROUP_TYPE_PROCESS;
    r.u.LocationGroup.systemTreeParent = (OTF2_SystemTreeNodeRef)node;
    r.u.LocationGroup.creatingLocationGroup =
        (OTF2_LocationGroupRef)creator;
    return put(c, gw, &r);
}

/* One per member (id = its index), then one per rank of the ghost
 * locations (see conv), under the root of the system tree. */
static int put_location_groups(conv *c, OTF2_GlobalDefWriter *gw)
{
    char name[WEFT_CONV_GROUP_NAME];
    int rc;

    for (size_t i = 0; i < c->nmems; i++)
        if ((rc = put_location_group(
                 c, gw, i, weft__conv_group_name(&c->mems[i], name,
                                                 sizeof name),
                 c->mems[i].node, creating_group(c, i))) < 0)
            return rc;
    for (size_t k = 0, g = 0; k < c->nghosts; k++) {
        uint64_t next = ghost_group(c, k, g);
        process_name(name, sizeof name, (uint32_t)(c->ghosts[k] >> 32));
        if ((k == 0 || next != g) &&
            (rc = put_location_group(c, gw, next, name, 0,
                                     OTF2_UNDEFINED_LOCATION_GROUP)) < 0)
            return rc;
        g = next;
    }
    return 0;
}

/* Location self (of loc l, NULL for a ghost: its default name). */
static int put_location(conv *c, OTF2_GlobalDefWriter *gw, uint64_t self,
                        const loc *l, uint64_t events, uint64_t group)
{
    weft_record r;
    char name[64];
    const char *s = name;
    int rc;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Location;
    r.u.Location.self = self;
    if (l)
        s = weft__conv_loc_name(l, name, sizeof name);
    else
        weft__otf2_thread_name(name, sizeof name, (uint32_t)self);
    if ((rc = string_id(c, s, &r.u.Location.name)) < 0)
        return rc;
    r.u.Location.locationType = OTF2_LOCATION_TYPE_CPU_THREAD;
    r.u.Location.numberOfEvents = events;
    r.u.Location.locationGroup = (OTF2_LocationGroupRef)group;
    return put(c, gw, &r);
}

static int put_locations(conv *c, OTF2_GlobalDefWriter *gw)
{
    int rc;

    for (size_t i = 0; i < c->nmems; i++) {
        const member *m = &c->mems[i];
        for (size_t k = 0; k < m->nlocs; k++)
            if ((rc = put_location(c, gw, weft__loc_id(m, &m->locs[k]),
                                   &m->locs[k], m->locs[k].events, i)) < 0)
                return rc;
    }
    for (size_t k = 0, g = 0; k < c->nghosts; k++) {
        g = ghost_group(c, k, g);
        if ((rc = put_location(c, gw, c->ghosts[k], NULL, 0, g)) < 0)
            return rc;
    }
    return 0;
}

/* The members' definitions, first-seen order (dependency-safe), with
 * the groups of thread teams (teams.c). */
static int put_unified(conv *c, OTF2_GlobalDefWriter *gw)
{
    weft__team_defs td;
    size_t n;
    int rc;

    if ((rc = weft__teams_defs(c, &td)) < 0)
        return rc;
    n = td.v ? td.n : weft_unify_ndefs(c->u);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const weft_record *d = td.v ? td.v[i] : weft_unify_def(c->u, i);
        if (d->type != WEFT_REC_String)
            rc = put(c, gw, d);
    }
    weft__teams_defs_free(&td);
    return rc;
}

/* 0 or a WEFT_E* code. */
int weft__otf2_write_global_defs(conv *c)
{
    OTF2_GlobalDefWriter *gw;
    OTF2_ErrorCode orc;
    tree_strings ts;
    int rc;

    if ((rc = add_own_definitions(c, &ts)) < 0)
        return rc;
    gw = OTF2_Archive_GetGlobalDefWriter(c->archive);
    if (!gw)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: libotf2 gives no global "
                               "definition writer", c->in->archive_dir);
    if ((rc = put_clock_properties(c, gw)) < 0 ||
        (rc = put_strings(c, gw)) < 0 ||
        (rc = put_system_tree(c, gw, &ts)) < 0 ||
        (rc = put_location_groups(c, gw)) < 0 ||
        (rc = put_locations(c, gw)) < 0 || (rc = put_unified(c, gw)) < 0)
        return rc;
    orc = OTF2_Archive_CloseGlobalDefWriter(c->archive, gw);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: closing the global "
                               "definitions: %s", c->in->archive_dir,
                               weft__otf2_msg(orc));
    return 0;
}

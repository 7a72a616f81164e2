/* archive.h - reading an OTF2 archive back (archive.c): the global
 * definitions into arrays, then each location's events. Used by weft
 * verify, export and reindex. Not thread-safe: libotf2's error callback
 * is process-wide and its last message is kept in one buffer.
 */
#ifndef WEFT_CLI_ARCHIVE_H
#define WEFT_CLI_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "record.h"

typedef struct weft__arc_loc {
    OTF2_LocationRef id;
    OTF2_StringRef name;
    OTF2_LocationGroupRef group;
    uint64_t events;         /* numberOfEvents of the definition */
    int seen;                /* scratch for the commands */
} weft__arc_loc;

/* A Group definition (members owned). */
typedef struct weft__arc_group {
    OTF2_GroupType type;
    OTF2_Paradigm paradigm;
    uint32_t n;
    uint64_t *members;
} weft__arc_group;

/* The global definitions of one archive; all arrays owned. */
typedef struct weft__arc {
    OTF2_Reader *reader;
    int have_clock;
    int defs_open;           /* local definition files open (events) */
    uint64_t resolution, offset, length;   /* ClockProperties */
    char **strings;          /* by OTF2_StringRef; NULL where undefined */
    size_t nstrings;
    weft__arc_loc *locs;     /* in definition order */
    size_t nlocs;
    /* Names by id space (weft_ref_kind; not LOCATION: see locs) and id,
     * OTF2_UNDEFINED_STRING where a definition has none: regions,
     * metric members, attributes, comms, groups, parameters, RMA
     * windows, I/O files and handles, location groups, system tree
     * nodes, interrupt generators, I/O paradigms. */
    OTF2_StringRef *names[WEFT_REF__COUNT];
    size_t nnames[WEFT_REF__COUNT];
    OTF2_MetricMemberRef **classes;  /* metric id -> its members ([0]: n) */
    size_t nclasses;
    OTF2_SystemTreeNodeRef *lg_parent;  /* location group -> its node */
    size_t nlg;
    OTF2_GroupRef *comm_group;          /* comm -> its group */
    size_t ncomms;
    weft__arc_group *groups;            /* by group id; n 0 if undefined */
    size_t ngroups;
} weft__arc;

/* Opens ANCHOR (DIR/traces.otf2) and reads its global definitions.
 * Returns 0, or -1 with *err (malloc'd) saying what failed. */
int weft__arc_open(weft__arc *a, const char *anchor, char **err);
/* Reads every event of location a->locs[i] through cbs (may have no
 * callbacks set); *nread is the number of events read, also on failure.
 * Returns 0, or -1 with *err (malloc'd). Open the event files first with
 * weft__arc_open_events. */
int weft__arc_open_events(weft__arc *a, char **err);
int weft__arc_read_location(weft__arc *a, size_t i,
                            const OTF2_EvtReaderCallbacks *cbs, void *arg,
                            uint64_t *nread, char **err);
/* String s, or "" when undefined. */
const char *weft__arc_string(const weft__arc *a, OTF2_StringRef s);
/* The name of definition id of id space kind (weft_ref_kind), "" when it
 * has none or is undefined. */
const char *weft__arc_name(const weft__arc *a, unsigned kind, uint64_t id);
void weft__arc_close(weft__arc *a);

#endif

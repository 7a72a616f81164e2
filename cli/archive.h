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

#include "catalog.h"
#include "defview.h"
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

/* What the profile and the viewer say of a Region definition besides
 * its name. */
typedef struct weft__arc_region {
    int16_t paradigm;        /* OTF2_Paradigm; -1: undefined */
    int16_t role;            /* OTF2_RegionRole */
    OTF2_StringRef file;     /* its source file, OTF2_UNDEFINED_STRING
                                where none */
    uint32_t begin, end;     /* its source lines (0: unknown) */
} weft__arc_region;

/* The global definitions of one archive; all arrays owned. */
typedef struct weft__arc {
    OTF2_Reader *reader;
    int have_clock;
    int defs_open;           /* local definition files open (events) */
    uint64_t resolution, offset, length;   /* ClockProperties */
    uint64_t realtime;       /* ns since 1970 UTC at `offset`, or
                                OTF2_UNDEFINED_TIMESTAMP */
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
    OTF2_LocationGroupType *lg_type;    /* location group -> its type */
    size_t nlg_type;
    OTF2_LocationGroupRef *lg_creator;  /* location group -> the group
                                           that created it (a process
                                           tree: its parent process) */
    size_t nlg_creator;
    /* Definitions of a kind and id already defined (EZTrace writes
     * some): how many, and the first one, e.g. "Group 0". */
    uint64_t dups;
    char dup_first[96];
    weft__arc_region *regions;          /* by region id: its paradigm
                                           and role, -1 where undefined */
    size_t nregions;
    OTF2_GroupRef *comm_group;          /* comm -> its group */
    size_t ncomms;
    weft__arc_group *groups;            /* by group id; n 0 if undefined */
    size_t ngroups;
    /* The definitions the report's summaries read (weft__arc_view),
     * whole, by kind (Comm, Group, MetricMember, MetricClass,
     * MetricInstance, IoRegularFile, IoDirectory, IoHandle) and id; type
     * 0 where an id is undefined. Their arrays point into groups and
     * classes. */
#define WEFT__ARC_KEPT 8
    weft_record *kept[WEFT__ARC_KEPT];
    size_t nkept[WEFT__ARC_KEPT];
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
/* The time range of events and whether it ever went back, as the
 * callbacks of weft__arc_time_callbacks see it. */
typedef struct weft__arc_span {
    uint64_t min, max;       /* valid when any */
    uint64_t last;           /* the previous event's time */
    uint64_t backwards;      /* events earlier than the one before */
    uint64_t back_at;        /* the first of them: its time */
    int any;
} weft__arc_span;

/* Notes an event at ts in t. */
void weft__arc_see(weft__arc_span *t, OTF2_TimeStamp ts);
/* Event callbacks, one per event record of weft_records.def, that note
 * each event's time in the weft__arc_span their user data points to
 * (the first member of a caller's struct is fine); NULL when out of
 * memory. The caller may replace some (calling weft__arc_see itself)
 * and deletes them (OTF2_EvtReaderCallbacks_Delete). */
OTF2_EvtReaderCallbacks *weft__arc_time_callbacks(void);
/* Bytes of the regular files under dir (not following links, four
 * levels at most: an archive is ANCHOR, DEF and a directory of files). */
uint64_t weft__arc_bytes(const char *dir);

/* String s, or "" when undefined. */
const char *weft__arc_string(const weft__arc *a, OTF2_StringRef s);
/* The name of definition id of id space kind (weft_ref_kind), "" when it
 * has none or is undefined. */
const char *weft__arc_name(const weft__arc *a, unsigned kind, uint64_t id);
/* The paradigm of region id as the profile's rows say it
 * (weft_profile_paradigm_name; buf: room for it), "" when it is
 * undefined: a weft_profile_paradigm_fn of a (a const weft__arc *). */
const char *weft__arc_region_paradigm(const void *a, uint32_t id, char *buf);
/* Whether location group `group` is a process of a process tree, which
 * weftd names "PROGRAM (pid N)" (daemon/convert/otf2defs.c): 1 with
 * *process (its name, in a) and *program (malloc'd), 0 when not (both
 * NULL), WEFT_ENOMEM. */
int weft__arc_tree_process(const weft__arc *a, OTF2_LocationGroupRef group,
                           const char **process, char **program);
/* The members of archive a as a catalog has them: its PROCESS location
 * groups in id order, rank = their index, host = their system tree
 * node's name (a's), state complete, and a process tree's pid and
 * parent pid (weft__arc_tree_pids); no locations or events counted.
 * *lg_rank[g] is the rank of location group g, UINT32_MAX for other
 * groups. Both arrays malloc'd ((*n or a->nlg_type) + 1 entries); 0 or
 * WEFT_ENOMEM (both NULL). */
int weft__arc_members(const weft__arc *a, weft_member_row **members,
                      size_t *n, uint32_t **lg_rank);
/* The pid of process tree member `group` (named "PROGRAM (pid N)") and
 * of its parent (the group that created it, when also named so; else
 * 0): 1, or 0 when the group is no such member. */
int weft__arc_tree_pids(const weft__arc *a, OTF2_LocationGroupRef group,
                        uint32_t *pid, uint32_t *parent_pid);
/* a's definitions as weftd's summaries of messages, file I/O and
 * metrics read them (summary/defview.h): the ids are the archive's, the
 * definition of id i at i. Valid while a is open. */
weft_defview weft__arc_view(const weft__arc *a);
void weft__arc_close(weft__arc *a);

#endif

/* convert_internal.h - the state that the converter's files share:
 * convert.c (pass 1, clocks, the result, the whole run), convert_report.c
 * (what weft report draws), convert_tree.c (a process tree), replay.c
 * (pass 2 on worker threads, nesting), otf2out.c (libotf2: callbacks,
 * archive, definitions) and teams.c (the groups of thread teams).
 * profile.c stands alone (profile.h).
 *
 * One conversion is one `conv`, made and freed by weft_convert_trace on
 * the thread that calls it (a worker of weftd's loop, or a test); call it
 * the conversion's thread. Pass 1, what comes before pass 2 and all that
 * comes after it run on that thread alone. Pass 2 runs on up to
 * WEFT_CONVERT_MAX_THREADS threads (the conversion's and the workers
 * replay.c starts), each with its own copy of the conv: the fields marked
 * "own" are the copy's, the others are shared and read only during pass
 * 2, except that
 *   - a member (and its locations) is written by the one thread that
 *     replays it ("pass 2, its replayer");
 *   - the chunk budget has its own lock.
 * The short type names (conv, member, loc, chunk_budget) never leave the
 * converter's files; what they share across files is named weft__.
 */
#ifndef WEFT_CONVERT_INTERNAL_H
#define WEFT_CONVERT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "callcounts.h"
#include "clock.h"
#include "convert.h"
#include "journal.h"
#include "commsum.h"
#include "iosum.h"
#include "metricsum.h"
#include "profile.h"
#include "timeline.h"
#include "record.h"
#include "unify.h"

/* One location (thread) of a member. */
typedef struct loc {
    uint32_t thread;
    weft_profile_loc prof; /* pass 2, while the member is replayed; its
                              stack is the regions open in the archive */
    uint64_t last_seq;  /* last batch seq seen in the current pass */
    uint64_t events;    /* written (with those nesting adds) */
    uint64_t journaled; /* events in its journal entries (pass 1) */
    uint64_t replayed;  /* of those, read back in pass 2 */
    int said_goodbye;   /* a Goodbye named it: sent and dropped hold */
    uint64_t sent;      /* from the last Goodbye */
    uint64_t dropped;   /* from the last Goodbye */
    uint64_t refused;   /* events weftd refused (WEFT_JE_REFUSED) */
    uint64_t last_time; /* of the last event written */
    uint32_t *gap;      /* regions left at MeasurementOnOff OFF, outermost
                           first, entered again at ON (pass 2) */
    size_t ngap, gap_cap;
    int off;            /* between OFF and ON */
    OTF2_EvtWriter *w;  /* pass 2, while the member is replayed */
    uint32_t name_ref;  /* the string (local id + 1) its last ThreadName
                           gave it, 0: none (pass 1) */
    const char *name;   /* that string, owned by the unifier; NULL: the
                           default name (weft__conv_loc_name) */
    int has_timeline;   /* among the first WEFT_CONVERT_TIMELINES (pass 1) */
    weft_timeline tl;   /* pass 2 from its writer's opening: fed where its
                           Enters and Leaves are written */
    weft_iolive io;     /* pass 2: its I/O operations in flight */
    int has_metrics;    /* among the first WEFT_CONVERT_METRIC_LOCS */
    weft_metricloc ml;  /* pass 2: its metric values over time */
    int flushed;        /* a stream's: its writer flushed (libotf2 holds
                           its file buffer) */
} loc;

/* What a member's ids of one id space are in the trace's (by its id;
 * WEFT_UNIFY_NO_ID: none), made by its replayer (weft_unify_compose). */
typedef struct id_map {
    uint32_t *v;
    size_t n;
} id_map;

/* A TeamMember record read in pass 1 (teams.c): thread `location`
 * (rank << 32 | thread) is member `index` of thread team `comm`. */
typedef struct team_member {
    uint64_t location;
    uint64_t seq;       /* its place among those read: the first of a
                           (comm, index) is the one that counts */
    uint32_t comm;      /* the team's global Comm id (c->u's) */
    uint32_t index;     /* the thread's number in the team */
} team_member;

/* Why a remote member's events are lost (member.lost). */
enum {
    WEFT__LOST_NO_SUMS = 1,
    WEFT__LOST_ANEW = 2,
    WEFT__LOST_BAD_SUMS = 3,
    WEFT__LOST_NO_FILES = 4  /* aside.c */
};

/* One member (process): its journal rank-<R>.wj. Filled by pass 1 on the
 * conversion's thread; in pass 2 its replayer writes its locations and
 * the fields below "Pass 2". */
typedef struct member {
    uint32_t rank;
    char *path;
    int has_hello;
    int has_goodbye;    /* its journal holds a Goodbye */
    uint32_t size;      /* trace size from Hello */
    char *hostname;
    int tree;           /* a process of a process tree (Hello.tree) */
    uint32_t pid, parent_pid; /* from Hello (parent_pid: tree members) */
    char *program;      /* tree members: the basename of the command's
                           first word ("cc1"), "" when it has none */
    uint64_t timer_resolution;
    const char *clock;  /* its trace clock (Hello.clock; static) */
    uint64_t realtime_ns, clock_at_realtime;
    uint64_t defs_seq;  /* last definitions seq seen in the current pass */
    uint64_t good_end;  /* end of its journal's entries, from pass 1 */
    loc *locs;          /* sorted by thread */
    size_t nlocs, locs_cap;
    uint64_t node;      /* system tree node of its host, from pass 1 */
    weft_unifier *u;    /* pass 1: its definitions unified on their own,
                           in its own ids (the trace's are c->u's); pass 2
                           checks and sums its events in these */
    weft_record *local_defs; /* WEFT_DF_LOCAL records (scalars only) */
    size_t nlocal, local_cap;
    int rescale;        /* its ticks are scaled to the trace's ns */
    int each_time;      /* its corrected times may fall where its ticks
                           grow (offsets falling faster than time): the
                           time range is widened by every event, not by
                           a location's first and last (replay.c) */
    weft_clock_point *offsets; /* its ClockOffsets by time (trace ticks) */
    size_t noffsets;
    int adopted;        /* a stream replayed it (stream.c): pass 2 only
                           finishes its locations */
    struct weft__smember *st; /* a stream's own: how far it read its
                           journal and what it sums (stream.c); NULL in
                           a conversion */
    int remote;         /* a node's stream wrote its events (in->remote;
                           sums.c): it is adopted from its sums, or lost */
    int lost;           /* a remote member whose events are lost
                           (WEFT__LOST_*): its files are made empty */
    char *lost_why;     /* WEFT__LOST_BAD_SUMS: what was wrong (owned) */
    struct weft__sums *sums; /* a remote member's, decoded after pass 1
                           until it is adopted (sums.c) */
    /* Pass 2, set by the worker that replayed it: */
    id_map regions, metric_members, handles; /* its u's ids -> c->u's */
    weft_region_row *prows; /* its per-location profile rows (ticks) */
    weft_commsum sends; /* its MpiSend and MpiIsend by receiver world
                           rank */
    weft_iosum io;      /* its I/O operations by handle */
    size_t nprows;
    uint64_t nested;    /* Leaves and Enters nesting added to it */
    int rc;             /* 0, or why it failed with error (malloc'd) */
    char *error;
    /* Pass 1: its events weftd did not store, by why (WEFT_REFUSED_*):
     * max_user_spool_bytes, min_free_spool_bytes, a failed append (the
     * last one's errno) */
    uint64_t refused_quota, refused_reserve, refused_write;
    int write_errno;
} member;

/* Event chunks held by all writers of the archive (otf2out.c's memory
 * callbacks, on any thread that writes), and whether the conversion
 * failed (its flush callback then writes no more). */
typedef struct chunk_budget {
    pthread_mutex_t lock;
    size_t chunks;       /* under lock */
    int failed;          /* under lock */
    uint64_t writers;    /* event writers open, under lock */
    uint64_t writers_peak; /* the most at once, under lock */
    uint64_t room;       /* bytes flushes may still write before the file
                            system is asked again (otf2out.c's
                            pre_flush), under lock */
    unsigned unchecked;  /* flushes since it was last asked, under lock */
    uint64_t floor;      /* free bytes flushes leave besides what libotf2
                            needs: a stream's (weft_convert_budget), 0 */
} chunk_budget;

/* The state of one conversion (see the top of this file for who owns
 * what). */
typedef struct conv {
    const weft_convert_input *in;
    weft_convert_result *out; /* own: a worker's error goes to its own */
    member *mems;       /* sorted by rank */
    size_t nmems;
    weft_unifier *u;
    weft_unify_scratch scratch; /* own: events mapped to global ids */
    weft_unify_scratch wscratch; /* own: events as written (replay.c) */
    uint32_t *rev;      /* own: global region id -> local id + 1 of
                           member rev_of (replay.c's local_region) */
    size_t nrev;
    const member *rev_of;
    OTF2_Archive *archive;
    chunk_budget *pool; /* shared by the memory callbacks */
    uint64_t resolution;
    int tree;           /* pass 1: the Hellos read say tree (1) or not
                           (-1); 0 before the first */
    uint64_t tmin, tmax; /* own */
    int any_event;      /* own */
    uint64_t nodes;     /* system tree nodes: the root and one per host */
    OTF2_AttributeList *al; /* own; reused for every event with attributes */
    uint64_t *loc_refs; /* own; location ids referenced by records */
    size_t nloc_refs, loc_refs_cap;
    weft_profile prof;  /* the trace's: sums and rows in c->u's region
                           ids (after pass 1); a worker's own: the
                           member it replays, in that member's ids */
    weft_profile psum;  /* own, a worker's: the sums of the members it
                           replayed, in c->u's region ids */
    uint64_t anomalies; /* own */
    uint64_t added;     /* own: Leaves and Enters written for nesting */
    OTF2_AttributeList *nest_al; /* own; marks those (otf2out.c's
                                    weft::nesting attribute) */
    uint32_t nest_attr; /* global id of that attribute (after pass 1) */
    uint64_t unmatched; /* own: Leaves of regions not open, not written */
    size_t window;      /* locations a member's replayer writes per pass
                           over its journal (its share of
                           in->max_writers); 0: all */
    uint64_t passes;    /* own: journal passes of pass 2 */
    uint64_t *ghosts;   /* after pass 2: locations that records name, of
                           processes without a journal (a rank that never
                           came), sorted; each gets an empty location in a
                           location group of its own rank, after the
                           members' */
    size_t nghosts;
    uint64_t conflicts; /* pass 1: definitions left out because one of
                           the same key came first (unify.h) */
    char conflict[320]; /* pass 1: the first of those, said */
    uint64_t absent;    /* pass 1: definitions left out because they name
                           the location group of a rank without journal */
    char absent_def[320]; /* pass 1: the first of those, said */
    team_member *teams; /* pass 1: the TeamMember records read */
    size_t nteams, teams_cap;
    uint64_t teamless;  /* pass 1: TeamMember records left out because
                           their comm is no communicator of the trace */
    char teamless_def[320]; /* pass 1: the first of those, said */
    uint32_t tl_cap;    /* bins per location timeline (after pass 1) */
    uint64_t tl_width;  /* ticks of a timeline's first bins: 1 us */
    weft_commmap cmap;  /* own: comm rank -> world rank, of the member
                           being replayed (its ids) */
    weft_metricmap mmap; /* own: metric -> its class, of that member */
    weft_callcounts ccount; /* own: counted calls' members, of that
                               member */
    int general_only;   /* every Enter and Leave takes the general way of
                           replay.c (tests: weft__convert_trace) */
    int streaming;      /* a stream's (stream.c): no c->u, and a failure
                           is its member's, not the archive's */
    struct weft_convert_stream *stream; /* then, which */
    char *aside;        /* own: where the nodes' event files wait while
                           the archive is made anew (aside.c), or NULL */
} conv;

/* The id a member's events give the weft::nesting attribute of the
 * Enters and Leaves nesting adds (its mapping table says which global
 * one): past any id a member may define (max_definitions and the
 * unifier's max_ids are at most 2^24), so that it is known before the
 * member's definitions are all there. */
#define WEFT__NEST_LOCAL (OTF2_UNDEFINED_ATTRIBUTE - 1u)

/* The OTF2 location id of l: rank * 2^32 + thread. */
static inline uint64_t weft__loc_id(const member *m, const loc *l)
{
    return (uint64_t)m->rank << 32 | l->thread;
}

/* ---- convert.c -------------------------------------------------------- */

/* The distinct clocks of c's members (weft_clock_names order),
 * comma-separated, in buf; cut at len. */
/* Adds location id v to those records name (c's own list). 0 or
 * WEFT_ENOMEM (c failed). */
int weft__conv_note_location(conv *c, uint64_t v);
/* Frees what c holds (not c, not its archive). */
void weft__conv_free(conv *c);
/* Runs fn on the n elements of args (size bytes each): the first on
 * this thread, the others on threads started here and joined before it
 * returns; one that cannot start (or all, out of memory) leaves its
 * share to the others, so fn takes its work from a queue they share.
 * A conversion's own threads (replay.c, stream.c): no background work
 * of the loop (worker.h). */
void weft__conv_fan_out(void *(*fn)(void *), void *args, size_t size,
                        unsigned n);

/* Does r (or its attribute list) name an id of one of the id spaces in
 * `kinds` (bit k: weft_ref_kind k; not its own id, not an undefined
 * one)? */
int weft__conv_refers(const weft_record *r, uint32_t kinds);

/* Before pass 2: which locations get a timeline and a metric summary
 * (the first ones in rank order), with how many bins each and the first
 * bins' width (convert_report.c). */
void weft__conv_plan_timelines(conv *c);
/* After the archive is written: the timelines, their regions, the
 * message matrix, the file I/O and the metric series into c->out. 0 or
 * the code of a failure (convert_report.c). */
int weft__conv_report_result(conv *c);
/* Pass 1: a WEFT_JE_REFUSED entry e of m's thread l (convert_report.c). */
void weft__conv_refused(member *m, loc *l, const weft_journal_entry *e);
/* Why events were not stored (the members' refused entries), "" when
 * none, into buf; their sum. */
uint64_t weft__conv_refused_why(const conv *c, char *buf, size_t len);

/* ---- teams.c ----------------------------------------------------------- */

/* Pass 1: keeps TeamMember r of m, its comm mapped to the trace's id.
 * 0 (kept, or naming OTF2's undefined comm: nothing), 1 when its comm
 * is no communicator of the trace (nothing kept), or WEFT_ENOMEM (c
 * failed). */
int weft__teams_note(conv *c, const member *m, const weft_record *r);

/* The unified definitions (Strings aside) as the archive gets them, the
 * thread teams' groups made (teams.c's DESIGN): v[0..n-1], each owned
 * by the unifier or by this. v NULL when no team has its members: the
 * unifier's order, as they are. */
typedef struct weft__team_defs {
    const weft_record **v;
    size_t n;
    weft_record *own;   /* the records made or changed */
    uint64_t *members;  /* the member arrays of those */
} weft__team_defs;

/* After pass 2 (the locations known): fills *out, which the caller
 * frees with weft__teams_defs_free. 0 or WEFT_ENOMEM (c failed). */
int weft__teams_defs(conv *c, weft__team_defs *out);
void weft__teams_defs_free(weft__team_defs *out);

/* ---- convert_tree.c ---------------------------------------------------- */

struct Weft__Hello;
/* The basename of the first word of command, malloc'd ("" when it has
 * none); NULL when out of memory. */
char *weft__conv_program(const char *command);
/* Whether Hello h at offset off of m's journal fits the trace (rank,
 * size, tree or not as the Hellos before it; c->tree set). 0 or
 * WEFT_ECORRUPT (c failed). */
int weft__conv_check_hello(conv *c, member *m, const struct Weft__Hello *h,
                           uint64_t off);
/* The process and program of a location row of tree member m (malloc'd).
 * 0 or WEFT_ENOMEM. */
int weft__conv_tree_row(const member *m, weft_location_row *row);

/* The name of m's location group in buf: "Process R", or for a member
 * of a process tree "PROG (pid N)" (otf2defs.c; also the process of the
 * catalog's location rows). */
const char *weft__conv_group_name(const member *m, char *buf, size_t len);
/* Room for a group name (the program's name is cut to fit). */
#define WEFT_CONV_GROUP_NAME 320

/* The name of location l: the one its thread was given (ThreadName),
 * else "Master thread" / "Thread N" in buf. */
const char *weft__conv_loc_name(const loc *l, char *buf, size_t len);

/* The clocks the members read (weft_clock_names' order, comma-separated)
 * into buf (convclock.c). */
void weft__conv_clocks(const conv *c, char *buf, size_t len);

/* Whether a clock counting `rate` ticks per second is within 10 ppm of
 * res (an archive counting res keeps its ticks when ClockOffsets correct
 * the rest, convclock.c). */
int weft__conv_rate_near(uint64_t rate, uint64_t res);

/* Whether a member counting `rate` ticks per second is rescaled to ns
 * in a trace of fixed resolution `fixed` (weft_convert_input.resolution):
 * any other rate is, whatever its ClockOffsets (a stream knows only its
 * Hello when it decides). */
int weft__conv_rescaled(uint64_t rate, uint64_t fixed);

/* After pass 1: c->resolution, each member's rescale flag and its
 * ClockOffsets made ready for the archive (convclock.c). 0 or a WEFT_E*
 * code (c failed). */
int weft__conv_pick_resolution(conv *c);

/* Fails conversion c: out->error gets the message unless it holds one
 * (the first error stands), and libotf2 writes no more. Returns code. */
__attribute__((format(printf, 3, 4)))
int weft__conv_fail(conv *c, int code, const char *fmt, ...);

/* aside.c: an archive its nodes wrote into, made anew (no stream has
 * it: the head restarted, or its stream broke). After pass 1: the
 * directory goes aside (c->aside), each remote member missing a file is
 * lost, the new archive is opened (c->archive) and the others' files
 * are moved into it. 0 or a WEFT_E* code (c failed). */
int weft__aside_take(conv *c);
/* The archive done: what is left aside is removed. */
void weft__aside_drop(conv *c);

/* The location of thread t of m, added (keeping m->locs sorted) if create
 * is set; NULL when there is none, or out of memory. */
loc *weft__conv_loc(member *m, uint32_t t, int create);

/* Keeps a location definition (ClockOffset) r of m for its local files.
 * 0 or WEFT_ENOMEM (c failed). */
int weft__conv_keep_local_def(conv *c, member *m, const weft_record *r);

/* The member of rank, NULL when that rank has no journal. */
member *weft__conv_member(conv *c, uint32_t rank);

/* Remembers the location ids that record r (global ids) refers to in
 * c->loc_refs: they must be locations of the archive even if nothing was
 * recorded there. 0 or WEFT_ENOMEM (c failed). */
int weft__conv_note_locations(conv *c, const weft_record *r);

/* m's time t (trace ticks) on weftd's clock: t plus m's ClockOffset at t,
 * as readers apply it; 0 when that would be negative. */
uint64_t weft__conv_corrected(const member *m, uint64_t t);

/* What pass 2 does with an events entry of m's journal at offset off
 * that is no resend, for its location l. 0 or a WEFT_E* code (c failed). */
typedef int weft__replay_fn(conv *c, member *m, loc *l,
                            const weft_journal_entry *e, uint64_t off);

/* Reads m's journal, skipping resends. replay NULL is pass 1: Hello,
 * Goodbye and definitions are gathered, the events only counted; else
 * pass 2: each events entry goes to replay. Either pass fails c for what
 * cannot be read. 0 or a WEFT_E* code. */
int weft__conv_read_member(conv *c, member *m, weft__replay_fn *replay);

#endif

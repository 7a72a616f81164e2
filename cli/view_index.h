/* view_index.h - what `weft view` (view.c) serves of a trace: each
 * location's region visits (Enter .. Leave) by nesting depth, read once
 * from the archive, and the questions the viewer page asks of them.
 *
 * At one depth of one location visits never overlap (one would be
 * inside the other, a level deeper), so each depth is an array sorted
 * by start and by end alike: the visit at any time is a binary search
 * away, and a window of the timeline costs what it shows, whatever the
 * trace's size (see weft__view_window).
 */
#ifndef WEFT_CLI_VIEW_INDEX_H
#define WEFT_CLI_VIEW_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>

#include <jansson.h>

#include "archive.h"
#include "export.h"

/* Depths recorded per location; deeper visits are counted, not kept. */
#define WEFT__VIEW_DEPTH_MAX 256
/* Levels per depth at most (view_index.c's DESIGN). */
#define WEFT__VIEW_LEVEL_MAX 24
/* Pixel columns a window may ask for. */
#define WEFT__VIEW_PX_MAX 16384
/* Messages one window answer holds at most (it says when there were
 * more). */
#define WEFT__VIEW_MSG_MAX 20000
/* Visits per block of a depth's summary aggregates (view_summary.c's
 * DESIGN), unless weft__view.block says otherwise (the unit tests). */
#define WEFT__VIEW_BLOCK 4096
/* Call paths one api/summary answer lists at most (the heaviest; it
 * says how many more), and the bytes of an api/find text. */
#define WEFT__VIEW_CALLPATHS_MAX 2000
#define WEFT__VIEW_FIND_MAX 256

/* One region visit. Times are ticks since the trace's clock offset. */
typedef struct weft__vspan {
    uint64_t start, end;
    uint64_t children;       /* ticks spent in the visits inside it */
    uint32_t region;         /* the archive's Region id */
    uint32_t parent;         /* its index one depth up; UINT32_MAX at 0 */
} weft__vspan;

/* A coarser picture of one depth, for windows whose columns are at
 * least `width` ticks (see view_index.c's DESIGN): the visits at least
 * that long, and per bucket of `width` ticks the region of the first
 * shorter visit that starts in it. */
typedef struct weft__vlevel {
    uint64_t width, base;    /* bucket b: [base + b * width, + width) */
    weft__vspan *wide;
    size_t nwide;
    uint32_t *first;         /* WEFT__VIEW_NONE: none starts there */
    size_t nfirst;
} weft__vlevel;

#define WEFT__VIEW_NONE UINT32_MAX

/* What the visits of one block of a depth add up to on one call path
 * (view_summary.c's DESIGN): their number and their time. */
typedef struct weft__vagg {
    uint32_t path;           /* weft__view.paths index */
    uint32_t visits;
    uint64_t incl;           /* ticks */
} weft__vagg;

/* The times of one block of a depth: its first visit's start, its last
 * visit's end. */
typedef struct weft__vbtime {
    uint64_t start, end;
} weft__vbtime;

typedef struct weft__vdepth {
    weft__vspan *v;
    uint32_t *path;          /* [n]: each visit's call path */
    size_t n, cap;           /* cap 0: v, path, blk, bt and agg are in
                                the index file's map */
    weft__vlevel *lv;        /* finest first */
    unsigned nlv;
    uint32_t *blk;           /* [nblk + 1]: block b (visits b * block ..)
                                adds up to agg[blk[b] .. blk[b + 1]),
                                by path */
    weft__vbtime *bt;        /* [nblk] */
    size_t nblk;
    weft__vagg *agg;
    size_t nagg;
} weft__vdepth;

typedef struct weft__vloc {
    uint64_t loc;            /* OTF2_LocationRef */
    size_t count0, ncount;   /* its calls counted: counts[count0 ..] */
    size_t attr0, nattr;     /* its Enters' attributes: attrs[attr0 ..] */
    char *name, *group, *host;
    weft__vdepth *depth;     /* [ndepth] */
    unsigned ndepth;
    uint64_t first, last;    /* its first and last event (ticks), when
                                any: the span of weft profile's "outside
                                traced calls" */
    int any;
} weft__vloc;

/* One call path: region entered from path `parent` (WEFT__VIEW_NONE at
 * depth 0). A parent's id is below its children's. */
typedef struct weft__vpath {
    uint32_t parent, region, depth;
    uint32_t nested;         /* 1: region is also one of its ancestors' */
} weft__vpath;

/* One MPI point-to-point message: its send (MpiSend, MpiIsend) and its
 * receive (MpiRecv, MpiIrecv), matched as weft export matches them
 * (export.h: the n-th send of a channel with its n-th receive). */
typedef struct weft__vmsg {
    uint64_t send_t, recv_t;
    uint32_t send_loc, recv_loc;     /* indexes into locs */
    uint32_t comm, tag;
    uint64_t bytes;
} weft__vmsg;

/* A send or receive read, until the messages are matched. */
typedef struct weft__vend {
    weft__xchan_key k;
    uint32_t loc;
    int recv;
    uint64_t t, bytes, seq;          /* seq: the order read */
} weft__vend;

/* Marks (view_marks.c): the timeline's events that are not region
 * visits, by kind. */
enum {
    WEFT__VMARK_COLL = 1,    /* MPI collective: Begin .. End; op: its
                                OTF2_CollectiveOp, ref: comm, peer:
                                root, bytes: sent + received */
    WEFT__VMARK_RMA,         /* RmaPut, RmaGet, RmaAtomic (op 0, 1, 2 +
                                OTF2_RmaAtomicType): ref: window, peer:
                                the target's rank, bytes */
    WEFT__VMARK_RMA_SYNC,    /* RmaCollectiveBegin .. End (op: its
                                OTF2_CollectiveOp), RmaGroupSync (op
                                UINT32_MAX); ref: window */
    WEFT__VMARK_CREATE,      /* an arrow from ThreadCreate at loc to the
                                thread's ThreadBegin at `to`; ref: the
                                contingent comm, bytes: the sequence */
    WEFT__VMARK_JOIN,        /* an arrow from ThreadEnd at loc to the
                                ThreadWait at `to`; ref, bytes: as above */
    WEFT__VMARK_LOCK,        /* a lock held: ThreadAcquireLock ..
                                ThreadReleaseLock; op: the OTF2_Paradigm,
                                ref: the lock id */
    WEFT__VMARK_IO,          /* IoOperationBegin .. Complete; op: the
                                OTF2_IoOperationMode, ref: the handle,
                                bytes: the result's (requested when it
                                never completed) */
    WEFT__VMARK__KINDS
};

/* One mark. An arrow's end is at location `to`; everything else has
 * to == loc. end >= t but for an arrow across clocks that disagree. */
typedef struct weft__vmark {
    uint64_t t, end;         /* ticks */
    uint64_t bytes;
    uint32_t loc, to;        /* indexes into locs */
    uint32_t kind, op;
    uint32_t ref, peer;
} weft__vmark;

/* Marks (and messages) per block of their index (the latest time of
 * each block: a window skips the blocks that end before it). */
#define WEFT__VIEW_MARK_BLOCK 256
/* Marks a location may leave open at once per kind (I/O operations,
 * locks); more are counted as unmatched. */
#define WEFT__VIEW_MARK_OPEN 64

/* An Enter's attributes (view_attrs.c): its time and depth, and where
 * their JSON text is in the trace's pool. */
typedef struct weft__vattr {
    uint64_t t;
    uint32_t depth, len;
    uint64_t off;
} weft__vattr;

/* The longest attribute text kept for one Enter (bytes). */
#define WEFT__VIEW_ATTRS_MAX 65536

/* Calls counted, not recorded one by one (view_counts.c): at time t,
 * `calls` calls and `ticks` of time on call path `path`. */
typedef struct weft__vcount {
    uint64_t t, calls, ticks;
    uint32_t path, pad;
} weft__vcount;

/* The archive's counting Metric members (view_counts.c): by
 * MetricMember id the region counted + 1 (0: not a count) and whether
 * it counts ns rather than calls; the metrics' members (the archive's:
 * valid while it is open). */
typedef struct weft__vcountmap {
    uint32_t *region;
    uint8_t *is_time;
    size_t n;
    OTF2_MetricMemberRef *const *classes;
    size_t nclasses;
    uint64_t resolution;
} weft__vcountmap;

/* A ThreadCreate, ThreadBegin, ThreadEnd or ThreadWait (side 0 .. 3),
 * until they are paired into arrows. */
typedef struct weft__vtend {
    uint64_t seq, t;
    uint32_t comm, loc, side;
} weft__vtend;

typedef struct weft__vregion {
    char *name;
    char paradigm[32];       /* weft profile's: mpi, openmp, ... or "" */
    char *file;              /* its source file, "" where unknown */
    uint32_t begin, end;     /* its source lines, 0 where unknown */
} weft__vregion;

/* One trace as the viewer sees it; everything owned. */
typedef struct weft__view {
    char *name, *key;
    uint64_t resolution;     /* ticks per second */
    uint64_t offset;         /* the archive's global clock offset */
    uint64_t length;         /* ticks from the offset to the last event */
    weft__vloc *locs;
    size_t nlocs;
    weft__vregion *regions;  /* by Region id */
    size_t nregions;
    char **comms;            /* by Comm id: its name */
    size_t ncomms;
    weft__vmsg *msgs;        /* by send time */
    uint64_t *msg_hi;        /* [block]: the latest send or receive of
                                messages block * WEFT__VIEW_MARK_BLOCK .. */
    size_t nmsg_blk;
    size_t nmsgs;
    weft__vend *ends;        /* while loading */
    size_t nends, capends;
    uint64_t unmatched_msgs; /* sends or receives without their other end */
    weft__vmark *marks;      /* by the earlier of t and end */
    size_t nmarks, capmarks;
    uint64_t *mark_hi;       /* [block]: the latest t or end of marks
                                block * WEFT__VIEW_MARK_BLOCK .. */
    size_t nmark_blk;
    uint64_t mark_kinds[WEFT__VMARK__KINDS];    /* marks of each kind */
    uint64_t unmatched_marks;   /* begins without their end or the other
                                   way round, an arrow without its other
                                   end; open ones over the limit */
    weft__vcount *counts;    /* by location (weft__vloc's range), then
                                time */
    size_t ncounts, capcounts;
    uint64_t counted;        /* calls counted in all */
    weft__vattr *attrs;      /* by location (weft__vloc's range), then
                                time */
    size_t nattrs, capattrs;
    char *apool;             /* their texts */
    size_t napool, capapool;
    weft__vtend *tends;      /* while loading */
    size_t ntends, captends;
    char **handles;          /* by IoHandle id: its name */
    size_t nhandles;
    char **windows;          /* by RmaWin id: its name */
    size_t nwindows;
    void *map;               /* the index file, when mapped (view_file.c):
                                the visits, messages and marks are in it */
    size_t maplen;
    uint64_t visits;         /* kept */
    uint64_t too_deep;       /* visits deeper than WEFT__VIEW_DEPTH_MAX */
    uint64_t unmatched;      /* Leaves without an Enter, Enters never
                                left (closed at the location's end) */
    weft__vpath *paths;      /* the call paths met, by id */
    size_t npaths, cappaths; /* cappaths 0: in the map (or none) */
    uint32_t *path_child;    /* while building: a path's first child, */
    uint32_t *path_next;     /* and its next sibling (NONE: no more) */
    unsigned block;          /* visits per summary block; 0: the
                                default, WEFT__VIEW_BLOCK */
} weft__view;

/* What the event callbacks of one location need while a trace is read
 * (view_index.c, view_marks.c); the span first (see
 * weft__arc_time_callbacks). */
typedef struct weft__vloader {
    weft__arc_span span;
    weft__view *v;
    weft__xmpi *mpi;         /* NULL: the archive has no communicators */
    uint32_t self;           /* the location's group (its process) */
    size_t i;
    uint64_t offset;
    unsigned depth;
    int oom;
    const weft__vcountmap *cm;   /* NULL: no counts read */
    const weft__arc *arc;        /* NULL: no attributes read */
    /* marks begun and not ended yet (kind 0: none) */
    weft__vmark coll, rsync;
    weft__vmark io[WEFT__VIEW_MARK_OPEN];
    uint64_t io_match[WEFT__VIEW_MARK_OPEN];
    size_t nio;
    weft__vmark lock[WEFT__VIEW_MARK_OPEN];
    size_t nlock;
} weft__vloader;

/* Reads the archive a (opened, events too; anchor: its anchor file's
 * stat) into v. With `cache` (a file name) the index is kept in that
 * file: mapped from it when it was made from this archive, else made
 * there as the archive is read (*built 1); without, or when the file
 * cannot be written (*cache_err: why, malloc'd), it is kept in memory.
 * Returns 0, or -1 with *err (malloc'd) saying why. */
int weft__view_load(weft__view *v, weft__arc *a, const struct stat *anchor,
                    const char *cache, int *built, char **cache_err,
                    char **err);
void weft__view_free(weft__view *v);
/* Forgets every visit and message of v read so far (its names stay),
 * or location i's visits. */
void weft__view_forget(weft__view *v);
void weft__view_forget_location(weft__view *v, size_t i);

/* The index file being written (view_file.c). */
typedef struct weft__vfile {
    int fd;
    char *path, *tmp;
    uint64_t off;
    struct vlocent *locs;
    size_t nlocs, caplocs;
    struct ventry *entries;
    size_t nentries, capentries;
} weft__vfile;

/* Starts the file for `path` (under a temporary name); then each location
 * in order, written and its visits freed; then the end: the messages,
 * the tables, renamed to path. Each returns 0, or -1 with errno.
 * weft__vfile_free removes what was not finished. */
int weft__vfile_begin(weft__vfile *f, const char *path);
int weft__vfile_location(weft__vfile *f, weft__view *v, size_t i);
int weft__vfile_end(weft__vfile *f, const weft__view *v,
                    const struct stat *anchor);
void weft__vfile_free(weft__vfile *f);
/* Maps the index file path into v (its locations named, no visits yet):
 * 1 done, 0 when it is missing or not this archive's (anchor) or not
 * whole, -1 out of memory. */
int weft__vfile_map(weft__view *v, const char *path,
                    const struct stat *anchor);

/* Building by hand (weft__view_load and the unit tests): location i
 * of v (v->locs[i] set up, its depths empty) enters region at t, and
 * leaves the innermost visit at t. Return 0, or -1 out of memory. */
int weft__view_enter(weft__view *v, size_t i, uint32_t region, uint64_t t,
                     unsigned *depth);
int weft__view_leave(weft__view *v, size_t i, uint64_t t, unsigned *depth);
/* The levels of every depth of location i, once its visits are all in.
 * Returns 0, or -1 out of memory. */
int weft__view_levels(weft__view *v, size_t i);

/* Building by hand: a send (recv 0) or receive of channel k at location
 * index i, then, once all are in, the matching (and the messages'
 * blocks, as the marks'). Return 0, or -1 out of memory. */
int weft__view_msg_end(weft__view *v, const weft__xchan_key *k, int recv,
                       size_t i, uint64_t t, uint64_t bytes);
int weft__view_match(weft__view *v);

/* ---- marks (view_marks.c) ---- */

/* Sets the callbacks of the events that make marks (their arg: a
 * weft__vloader). */
void weft__view_mark_callbacks(OTF2_EvtReaderCallbacks *cbs);
/* Once a location is read (ld): what it left open ends at its last
 * event, counted as unmatched. Returns 0, or -1 out of memory. */
int weft__view_marks_location_end(weft__vloader *ld);
/* Makes room for `need` elements of `size` bytes in the array *pp (a
 * T ** passed as void *) of capacity *cap: at least doubled, `first` at
 * the start. Returns 0, or -1 out of memory (the array as it was). */
int weft__view_grow(void *pp, size_t *cap, size_t need, size_t size,
                    size_t first);
/* Building by hand (and the callbacks): a mark whole, or one end of a
 * thread's arrow (side 0 create, 1 begin, 2 end, 3 wait) at location
 * index i. Return 0, or -1 out of memory. */
int weft__view_mark(weft__view *v, const weft__vmark *m);
int weft__view_thread_end(weft__view *v, uint32_t comm, uint64_t seq,
                          unsigned side, size_t i, uint64_t t);
/* Once every location is read: the arrows paired, the marks sorted and
 * their blocks made. Returns 0, or -1 out of memory. */
int weft__view_marks_done(weft__view *v);
/* The latest time per block of n things whose latest time `hi` gives
 * (of thing k of base, each size bytes): *out (malloc'd), *nblk. 0, or
 * -1 out of memory. */
int weft__view_block_his(const void *base, size_t n, size_t size,
                         uint64_t (*hi)(const void *), uint64_t **out,
                         size_t *nblk);
size_t weft__view_nblocks(size_t n);
/* The marks part of a window (weft__view_window) into o: "marks", as
 * [kind, location id, t, end, other location id, op, ref, peer, bytes],
 * every mark overlapping [t0, t1) with an end at one of the locations:
 * those at least a column wide all, of narrower ones the first per
 * location, kind and column; at most WEFT__VIEW_MSG_MAX ("marks_more":
 * how many more). Returns 0, or -1 out of memory. */
int weft__view_window_marks(const weft__view *v, uint64_t t0, uint64_t t1,
                            unsigned px, const uint8_t *in, json_t *o);
/* The marks' names in api/traces: "handles", "windows", and per kind
 * "marks": {kind name: count}. Returns 0, or -1 out of memory. */
int weft__view_describe_marks(const weft__view *v, json_t *o);
void weft__view_marks_forget(weft__view *v);

/* api/traces' object for v (index: its place among the served ones). */
json_t *weft__view_describe(const weft__view *v, size_t index);

/* The window [t0, t1) drawn on px pixel columns: for each location
 * (locs: indexes into v->locs, NULL for all of them, n of them), the
 * visits at least a column wide that overlap it, exactly, as
 * [start, end, region, depth], and for the narrower ones a bin
 * [column, depth, region] per column and depth that has any (the first
 * such visit there). At most 2 * px visits and px bins per depth. And
 * "messages": the messages in flight during the window with an end at
 * one of the locations, as [send location id, send time, receive
 * location id, receive time, tag, bytes, comm] (at most
 * WEFT__VIEW_MSG_MAX, the earliest sent; "messages_more": how many
 * more). NULL when out of memory. Arguments are checked by the
 * caller. */
json_t *weft__view_window(const weft__view *v, uint64_t t0, uint64_t t1,
                          unsigned px, const size_t *locs, size_t n);

/* The visit at depth `depth` of location index i covering time t:
 * region, times, inclusive and exclusive time, call path, source (the
 * region definition's file and lines, or null), and its Enter's
 * attributes where it had any; NULL when
 * there is none (*missing 1) or out of memory (*missing 0). */
json_t *weft__view_span(const weft__view *v, size_t i, unsigned depth,
                        uint64_t t, int *missing);

/* Index of the visit at depth d of location l covering t, or SIZE_MAX. */
size_t weft__view_at(const weft__vloc *l, unsigned d, uint64_t t);
/* The first message of v sent at t or later (v->nmsgs if none). */
size_t weft__view_sent_from(const weft__view *v, uint64_t t);
/* The first visit of d from `from` on that ends after t (d->n if none). */
size_t weft__view_ending_after(const weft__vdepth *d, size_t from,
                               uint64_t t);

/* ---- calls counted (view_counts.c) ---- */

/* The counting members of archive a, whose regions v has read. 0, or -1
 * out of memory (weft__view_countmap_free frees cm either way). */
int weft__view_countmap(weft__vcountmap *cm, const weft__arc *a,
                        const weft__view *v);
void weft__view_countmap_free(weft__vcountmap *cm);
/* Sets the callback of the Metric events that carry counts (its arg: a
 * weft__vloader whose cm is set). */
void weft__view_count_callbacks(OTF2_EvtReaderCallbacks *cbs);
/* Building by hand (and the callback): calls and ticks counted at
 * location index i at time t on path (locations one after the other,
 * each in time order). 0, or -1 out of memory. */
int weft__view_count(weft__view *v, size_t i, uint64_t t, uint32_t path,
                     uint64_t calls, uint64_t ticks);
/* The id of the path entering region from path parent (WEFT__VIEW_NONE:
 * from none), made when new; WEFT__VIEW_NONE out of memory. */
uint32_t weft__view_path(weft__view *v, uint32_t parent, uint32_t region);
/* Calls add(ctx, path, calls, ticks) for each count of location l in
 * [t0, t1), in time order. */
void weft__view_counts_walk(const weft__view *v, const weft__vloc *l,
                            uint64_t t0, uint64_t t1,
                            void (*add)(void *, uint32_t, uint64_t,
                                        uint64_t),
                            void *ctx);

/* ---- attributes (view_attrs.c) ---- */

/* The Enter at t, depth `depth`, of loader ld's location has the
 * attribute list al (may be NULL or empty): kept when it has any. 0, or
 * -1 out of memory. */
int weft__view_attrs_enter(weft__vloader *ld, OTF2_AttributeList *al,
                           uint64_t t, unsigned depth);
/* Building by hand (and the above): the Enter at t, depth `depth`, of
 * location index i has the attributes of JSON text json (locations one
 * after the other, each in time order). 0, or -1 out of memory. */
int weft__view_attrs(weft__view *v, size_t i, uint64_t t, unsigned depth,
                     const char *json);
/* The attributes of the Enter at t, depth `depth`, of location index i:
 * [[name, type, value], ...], or NULL when it has none. */
json_t *weft__view_attrs_of(const weft__view *v, size_t i, unsigned depth,
                            uint64_t t);

/* ---- the index files in the user's cache (view_cache.c) ---- */

/* Index files unused this long are removed; so are temporary ones this
 * old (a build that never ended). */
#define WEFT__VIEW_CACHE_DAYS 30
#define WEFT__VIEW_CACHE_TMP_S 86400
/* --cache-max's default. */
#define WEFT__VIEW_CACHE_MAX (4ull << 30)

typedef struct weft__vcache_pruned {
    uint64_t files, bytes;   /* removed */
    uint64_t kept;           /* the index files' bytes left */
} weft__vcache_pruned;

/* The user's cache directory of index files ($XDG_CACHE_HOME/weft/view,
 * else ~/.cache/weft/view; made if missing), malloc'd; NULL without a
 * home or when it cannot be made (the index is then kept in memory). */
char *weft__view_cache_dir(void);
/* The index file of the trace of key `key` in dir, malloc'd (NULL out of
 * memory). The key's characters other than letters, digits, '.', '-'
 * and '_' become '_' (a file made from another archive is never used:
 * view_file.c checks). */
char *weft__view_cache_file(const char *dir, const char *key);
/* Notes that the index file was used now (its modification time). */
void weft__view_cache_used(const char *file);
/* Prunes dir (view_cache.c's DESIGN): the index files keep[] (paths)
 * stay, the others go when unused for WEFT__VIEW_CACHE_DAYS or, least
 * recently used first, while they add up to more than max bytes. *out
 * says what went. 0, or -1 when dir cannot be read (or out of
 * memory). */
int weft__view_cache_prune(const char *dir, uint64_t max, char *const *keep,
                           size_t nkeep, weft__vcache_pruned *out);

/* ---- summaries (view_summary.c) ---- */

/* Visits per block of v. */
unsigned weft__view_block(const weft__view *v);
/* The summary blocks of every depth of location i, once its visits are
 * all in (weft__view_levels calls it). Returns 0, or -1 out of
 * memory. */
int weft__view_blocks(weft__view *v, size_t i);

/* api/summary: what the locations (indexes, NULL: all, n of them) did
 * during [t0, t1) (t0 < t1), every visit overlapping it (ending after
 * t0, starting before t1) counted, its time clipped to it: per call
 * path (at most WEFT__VIEW_CALLPATHS_MAX, the most inclusive time
 * first) and per region (the most exclusive first) visits, inclusive
 * and exclusive ticks; per location the exclusive ticks per paradigm
 * and outside any visit (view_summary.c's DESIGN); the messages sent
 * then from the locations, in all and per pair of locations. NULL when
 * out of memory. */
json_t *weft__view_summary(const weft__view *v, uint64_t t0, uint64_t t1,
                           const size_t *locs, size_t n);

/* api/find: the regions whose name holds q (ASCII case aside) and
 * their visits overlapping [t0, t1) at the locations, in all and per
 * location. NULL with *bad (a static message) when q is empty, longer
 * than WEFT__VIEW_FIND_MAX bytes or not UTF-8, NULL without when out of
 * memory. */
json_t *weft__view_find(const weft__view *v, const char *q, uint64_t t0,
                        uint64_t t1, const size_t *locs, size_t n,
                        const char **bad);
/* api/find's next (dir 1) or previous (dir -1) visit of such a region
 * at the locations, anywhere in the trace, in the order of start time,
 * then location index, then depth: the first after the cursor (t, ci,
 * cd), or the last before it; ci SIZE_MAX: the cursor is t itself (the
 * first starting after t, the last starting before t). {"q", "hit":
 * {loc, depth, start, end, region} or null}. NULL as weft__view_find. */
json_t *weft__view_find_next(const weft__view *v, const char *q, uint64_t t,
                             size_t ci, unsigned cd, int dir,
                             const size_t *locs, size_t n, const char **bad);

#endif

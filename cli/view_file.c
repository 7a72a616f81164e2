/* view_file.c - weft view's index kept in a file (see view_index.h): the
 * visits of every location by depth and the matched messages, written
 * once as the archive is read, then mapped, so that a trace is read
 * from its events only the first time it is viewed and the viewer's
 * memory is what a window touches, not the trace's size.
 *
 * DESIGN
 * The file: each location's depths, one array of weft__vspan after the
 * other, each followed by its visits' call path ids, its summary blocks,
 * their times and their aggregates (view_summary.c) and its levels (the long
 * visits, the buckets, a vlevel record for each), written as soon as the
 * location is read (the building holds one location's visits at a
 * time); then the messages (weft__vmsg, by send time) and the marks
 * (weft__vmark, view_marks.c), each followed by their blocks' latest
 * times, the counts (weft__vcount, view_counts.c), the Enters'
 * attributes (weft__vattr and their texts, view_attrs.c) and the call
 * paths (weft__vpath); then the tables (per location: its first depth entry,
 * its depths and its events' span; per depth entry: offsets and counts)
 * and a fixed tail that
 * says where all of it is and which archive it was made from (the
 * anchor file's device, inode, size and modification time): a file made
 * from another archive, or by another format version, or cut short, is
 * not used but made again. It lives in the user's cache (view.c), is the
 * user's alone (0600), and is written to a temporary name and renamed.
 * Everything is in this machine's byte order: the file is a cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "view_index.h"

#define VIEW_MAGIC "weftvw09"

typedef struct vtail {
    char magic[8];
    uint64_t dev, ino, size, mtime_ns;     /* the anchor's */
    uint64_t nlocs, nentries, nmsgs;
    uint64_t locs_off, entries_off, msgs_off;
    uint64_t length, visits, too_deep, unmatched, unmatched_msgs;
    uint64_t msg_hi_off;
    uint64_t counts_off, ncounts, counted;
    uint64_t attrs_off, nattrs, apool_off, napool;
    uint64_t marks_off, nmarks, mark_hi_off, unmatched_marks;
    uint64_t mark_kinds[WEFT__VMARK__KINDS];
    uint64_t paths_off, npaths, block;     /* last (test_view_index) */
} vtail;

typedef struct ventry {
    uint64_t off, n;         /* the visits */
    uint64_t lv_off, nlv;    /* its levels' vlevel records */
    uint64_t path_off;       /* the visits' paths (n) */
    uint64_t blk_off, nblk;  /* the summary blocks (nblk + 1 places) */
    uint64_t bt_off;         /* their times (nblk) */
    uint64_t agg_off, nagg;  /* and their aggregates */
} ventry;

typedef struct vlevel {
    uint64_t width, base, wide_off, nwide, first_off, nfirst;
} vlevel;

typedef struct vlocent {
    uint64_t first, ndepth;
    uint64_t t_first, t_last, any;   /* its events' span (weft__vloc) */
    uint64_t count0, ncount;         /* its counts (weft__vloc) */
    uint64_t attr0, nattr;           /* its attributes (weft__vloc) */
} vlocent;

static uint64_t mtime_ns(const struct stat *st)
{
    return (uint64_t)st->st_mtim.tv_sec * 1000000000u +
           (uint64_t)st->st_mtim.tv_nsec;
}

/* Writes n bytes at the file's end (f->off). */
static int put(weft__vfile *f, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t w = write(f->fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
        f->off += (uint64_t)w;
    }
    return 0;
}

int weft__vfile_begin(weft__vfile *f, const char *path)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    if (asprintf(&f->tmp, "%s.%ld.tmp", path, (long)getpid()) < 0) {
        f->tmp = NULL;
        return -1;
    }
    f->path = strdup(path);
    if (!f->path)
        return -1;
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    return f->fd < 0 ? -1 : 0;
}

int weft__vfile_location(weft__vfile *f, weft__view *v, size_t i)
{
    weft__vloc *l = &v->locs[i];
    vlocent le = { .first = f->nentries, .ndepth = l->ndepth,
                   .t_first = l->first, .t_last = l->last,
                   .any = (uint64_t)l->any, .count0 = l->count0,
                   .ncount = l->ncount, .attr0 = l->attr0,
                   .nattr = l->nattr };
    static const char pad[8];

    if (weft__view_grow(&f->entries, &f->capentries,
                        f->nentries + l->ndepth, sizeof *f->entries, 16) < 0 ||
        weft__view_grow(&f->locs, &f->caplocs, f->nlocs + 1, sizeof *f->locs,
                        64) < 0)
        return -1;
    for (unsigned d = 0; d < l->ndepth; d++) {
        weft__vdepth *dv = &l->depth[d];
        ventry *e = &f->entries[f->nentries++];
        vlevel rec[WEFT__VIEW_LEVEL_MAX];

        e->off = f->off;
        e->n = dv->n;
        if (put(f, dv->v, dv->n * sizeof *dv->v) < 0)
            return -1;
        e->path_off = f->off;
        if (put(f, dv->path, dv->n * sizeof *dv->path) < 0 ||
            put(f, pad, (8 - f->off % 8) % 8) < 0)
            return -1;
        e->blk_off = f->off;
        e->nblk = dv->blk ? dv->nblk : 0;
        if (dv->blk && put(f, dv->blk, (dv->nblk + 1) * sizeof *dv->blk) < 0)
            return -1;
        if (put(f, pad, (8 - f->off % 8) % 8) < 0)
            return -1;
        e->bt_off = f->off;
        if (dv->blk && put(f, dv->bt, dv->nblk * sizeof *dv->bt) < 0)
            return -1;
        e->agg_off = f->off;
        e->nagg = dv->blk ? dv->nagg : 0;
        if (put(f, dv->agg, e->nagg * sizeof *dv->agg) < 0)
            return -1;
        for (unsigned k = 0; k < dv->nlv; k++) {
            const weft__vlevel *lv = &dv->lv[k];
            rec[k] = (vlevel){ .width = lv->width, .base = lv->base,
                               .wide_off = f->off, .nwide = lv->nwide };
            if (put(f, lv->wide, lv->nwide * sizeof *lv->wide) < 0)
                return -1;
            rec[k].first_off = f->off;
            rec[k].nfirst = lv->nfirst;
            if (put(f, lv->first, lv->nfirst * sizeof *lv->first) < 0 ||
                put(f, pad, (8 - f->off % 8) % 8) < 0)
                return -1;
        }
        e->lv_off = f->off;
        e->nlv = dv->nlv;
        if (put(f, rec, dv->nlv * sizeof *rec) < 0)
            return -1;
    }
    weft__view_forget_location(v, i);
    l->depth = NULL;
    l->ndepth = 0;
    f->locs[f->nlocs++] = le;
    return 0;
}

int weft__vfile_end(weft__vfile *f, const weft__view *v,
                    const struct stat *anchor)
{
    vtail t = {
        .dev = anchor->st_dev, .ino = anchor->st_ino,
        .size = (uint64_t)anchor->st_size, .mtime_ns = mtime_ns(anchor),
        .nlocs = f->nlocs, .nentries = f->nentries, .nmsgs = v->nmsgs,
        .length = v->length, .visits = v->visits, .too_deep = v->too_deep,
        .unmatched = v->unmatched, .unmatched_msgs = v->unmatched_msgs,
    };

    memcpy(t.magic, VIEW_MAGIC, sizeof t.magic);
    t.msgs_off = f->off;
    if (put(f, v->msgs, v->nmsgs * sizeof *v->msgs) < 0)
        return -1;
    t.msg_hi_off = f->off;
    if (put(f, v->msg_hi, v->nmsg_blk * sizeof *v->msg_hi) < 0)
        return -1;
    t.marks_off = f->off;
    t.nmarks = v->nmarks;
    t.unmatched_marks = v->unmatched_marks;
    memcpy(t.mark_kinds, v->mark_kinds, sizeof t.mark_kinds);
    if (put(f, v->marks, v->nmarks * sizeof *v->marks) < 0)
        return -1;
    t.mark_hi_off = f->off;
    if (put(f, v->mark_hi, v->nmark_blk * sizeof *v->mark_hi) < 0)
        return -1;
    t.counts_off = f->off;
    t.ncounts = v->ncounts;
    t.counted = v->counted;
    if (put(f, v->counts, v->ncounts * sizeof *v->counts) < 0)
        return -1;
    t.attrs_off = f->off;
    t.nattrs = v->nattrs;
    if (put(f, v->attrs, v->nattrs * sizeof *v->attrs) < 0)
        return -1;
    t.apool_off = f->off;
    t.napool = v->napool;
    if (put(f, v->apool, v->napool) < 0 ||
        put(f, "\0\0\0\0\0\0\0", (8 - f->off % 8) % 8) < 0)
        return -1;
    t.paths_off = f->off;
    t.npaths = v->npaths;
    t.block = weft__view_block(v);
    if (put(f, v->paths, v->npaths * sizeof *v->paths) < 0)
        return -1;
    t.locs_off = f->off;
    if (put(f, f->locs, f->nlocs * sizeof *f->locs) < 0)
        return -1;
    t.entries_off = f->off;
    if (put(f, f->entries, f->nentries * sizeof *f->entries) < 0 ||
        put(f, &t, sizeof t) < 0 || close(f->fd) < 0) {
        f->fd = -1;
        return -1;
    }
    f->fd = -1;
    return rename(f->tmp, f->path);
}

void weft__vfile_free(weft__vfile *f)
{
    if (f->fd >= 0) {
        close(f->fd);
        unlink(f->tmp);
    }
    free(f->tmp);
    free(f->path);
    free(f->locs);
    free(f->entries);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

/* Is [off, off + n * size) inside the first `end` bytes, 8-aligned? */
static int inside(uint64_t off, uint64_t n, size_t size, uint64_t end)
{
    return off % 8 == 0 && off <= end && n <= (end - off) / size;
}

/* Are the paths of the file whole: each one's parent made before it,
 * one depth up? (Then walking up a path ends.) */
static int paths_ok(const void *map, const vtail *t)
{
    const weft__vpath *p = (const weft__vpath *)((const char *)map +
                                                 t->paths_off);

    for (uint64_t k = 0; k < t->npaths; k++)
        if (p[k].parent == WEFT__VIEW_NONE ? p[k].depth != 0
                                           : p[k].parent >= k ||
                                                 p[k].depth !=
                                                     p[p[k].parent].depth + 1)
            return 0;
    return 1;
}

/* Are the summary blocks of entry e whole: none, or one per bsize
 * visits, their aggregates' places rising within theirs? (Their paths
 * are checked as they are read.) */
static int blocks_ok(const void *map, const ventry *e, uint64_t bsize,
                     uint64_t end)
{
    const uint32_t *blk = (const uint32_t *)((const char *)map + e->blk_off);

    if (!e->nblk)
        return 1;
    if (e->nblk != (e->n + bsize - 1) / bsize || e->nagg > UINT32_MAX ||
        !inside(e->blk_off, e->nblk + 1, sizeof *blk, end) ||
        !inside(e->bt_off, e->nblk, sizeof(weft__vbtime), end) ||
        !inside(e->agg_off, e->nagg, sizeof(weft__vagg), end) ||
        blk[0] != 0 || blk[e->nblk] != e->nagg)
        return 0;
    for (uint64_t b = 0; b < e->nblk; b++)
        if (blk[b] > blk[b + 1])
            return 0;
    return 1;
}

/* 1 when the tail t of a file whose tables end at `end` is this
 * archive's (anchor), of v's locations, and names tables inside it. */
static int tail_ok(const void *map, const vtail *t, const weft__view *v,
                   const struct stat *anchor, uint64_t end)
{
    return memcmp(t->magic, VIEW_MAGIC, sizeof t->magic) == 0 &&
           t->dev == (uint64_t)anchor->st_dev &&
           t->ino == (uint64_t)anchor->st_ino &&
           t->size == (uint64_t)anchor->st_size &&
           t->mtime_ns == mtime_ns(anchor) && t->nlocs == v->nlocs &&
           inside(t->msgs_off, t->nmsgs, sizeof(weft__vmsg), end) &&
           inside(t->locs_off, t->nlocs, sizeof(vlocent), end) &&
           inside(t->entries_off, t->nentries, sizeof(ventry), end) &&
           inside(t->paths_off, t->npaths, sizeof(weft__vpath), end) &&
           inside(t->marks_off, t->nmarks, sizeof(weft__vmark), end) &&
           inside(t->mark_hi_off, weft__view_nblocks(t->nmarks),
                  sizeof(uint64_t), end) &&
           inside(t->msg_hi_off, weft__view_nblocks(t->nmsgs),
                  sizeof(uint64_t), end) &&
           inside(t->counts_off, t->ncounts, sizeof(weft__vcount), end) &&
           inside(t->attrs_off, t->nattrs, sizeof(weft__vattr), end) &&
           inside(t->apool_off, t->napool, 1, end) &&
           t->npaths <= WEFT__VIEW_NONE && t->block != 0 &&
           t->block <= UINT32_MAX && paths_ok(map, t);
}

/* 1 when every location's depths, levels and blocks lie inside the file. */
static int depths_ok(const void *map, const vtail *t, const vlocent *le,
                     const ventry *en, size_t nlocs, uint64_t end)
{
    for (size_t i = 0; i < nlocs; i++) {
        if (le[i].ndepth > WEFT__VIEW_DEPTH_MAX ||
            le[i].first > t->nentries ||
            le[i].ndepth > t->nentries - le[i].first ||
            le[i].count0 > t->ncounts ||
            le[i].ncount > t->ncounts - le[i].count0 ||
            le[i].attr0 > t->nattrs ||
            le[i].nattr > t->nattrs - le[i].attr0)
            return 0;
        for (uint64_t d = 0; d < le[i].ndepth; d++) {
            const ventry *e = &en[le[i].first + d];
            const vlevel *lv = (const vlevel *)((const char *)map + e->lv_off);
            if (!inside(e->off, e->n, sizeof(weft__vspan), end) ||
                e->nlv > WEFT__VIEW_LEVEL_MAX ||
                !inside(e->lv_off, e->nlv, sizeof *lv, end) ||
                !inside(e->path_off, e->n, sizeof(uint32_t), end) ||
                !blocks_ok(map, e, t->block, end))
                return 0;
            for (uint64_t k = 0; k < e->nlv; k++)
                if (!lv[k].width ||
                    !inside(lv[k].wide_off, lv[k].nwide, sizeof(weft__vspan),
                            end) ||
                    !inside(lv[k].first_off, lv[k].nfirst, sizeof(uint32_t),
                            end))
                    return 0;
        }
    }
    return 1;
}

/* Points depth dv at entry e's tables in the map (checked). 0, or -1 out
 * of memory. */
static int map_depth(char *map, const ventry *e, weft__vdepth *dv)
{
    const vlevel *lv = (const vlevel *)(map + e->lv_off);

    /* cap 0: in the map, not to be freed */
    dv->v = (weft__vspan *)(map + e->off);
    dv->path = (uint32_t *)(map + e->path_off);
    dv->n = (size_t)e->n;
    if (e->nblk) {
        dv->blk = (uint32_t *)(map + e->blk_off);
        dv->bt = (weft__vbtime *)(map + e->bt_off);
        dv->nblk = (size_t)e->nblk;
        dv->agg = (weft__vagg *)(map + e->agg_off);
        dv->nagg = (size_t)e->nagg;
    }
    if (e->nlv && !(dv->lv = calloc(e->nlv, sizeof *dv->lv)))
        return -1;
    dv->nlv = (unsigned)e->nlv;
    for (unsigned k = 0; k < dv->nlv; k++)
        dv->lv[k] = (weft__vlevel){
            .width = lv[k].width,
            .base = lv[k].base,
            .wide = (weft__vspan *)(map + lv[k].wide_off),
            .nwide = (size_t)lv[k].nwide,
            .first = (uint32_t *)(map + lv[k].first_off),
            .nfirst = (size_t)lv[k].nfirst,
        };
    return 0;
}

/* Points v at the trace-wide tables of the mapped file map (len bytes,
 * tail t, checked): messages, marks, counts, attributes, call paths,
 * freeing those the building made in memory. */
static void map_tables(weft__view *v, void *map, size_t len, const vtail *t)
{
    if (!v->map) {          /* the ones the building made */
        free(v->marks);
        free(v->mark_hi);
        free(v->msg_hi);
        free(v->counts);
        free(v->attrs);
        free(v->apool);
    }
    v->attrs = (weft__vattr *)((char *)map + t->attrs_off);
    v->nattrs = (size_t)t->nattrs;
    v->capattrs = 0;
    v->apool = (char *)map + t->apool_off;
    v->napool = (size_t)t->napool;
    v->capapool = 0;
    v->counts = (weft__vcount *)((char *)map + t->counts_off);
    v->ncounts = (size_t)t->ncounts;
    v->capcounts = 0;
    v->counted = t->counted;
    v->map = map;
    v->maplen = len;
    v->marks = (weft__vmark *)((char *)map + t->marks_off);
    v->nmarks = (size_t)t->nmarks;
    v->capmarks = 0;
    v->mark_hi = (uint64_t *)((char *)map + t->mark_hi_off);
    v->nmark_blk = weft__view_nblocks((size_t)t->nmarks);
    v->msg_hi = (uint64_t *)((char *)map + t->msg_hi_off);
    v->nmsg_blk = weft__view_nblocks((size_t)t->nmsgs);
    v->unmatched_marks = t->unmatched_marks;
    memcpy(v->mark_kinds, t->mark_kinds, sizeof v->mark_kinds);
    v->msgs = (weft__vmsg *)((char *)map + t->msgs_off);
    v->nmsgs = (size_t)t->nmsgs;
    v->length = t->length;
    v->visits = t->visits;
    v->too_deep = t->too_deep;
    v->unmatched = t->unmatched;
    v->unmatched_msgs = t->unmatched_msgs;
    if (v->cappaths)        /* the ones the building made */
        free(v->paths);
    free(v->path_child);
    free(v->path_next);
    v->path_child = v->path_next = NULL;
    v->paths = (weft__vpath *)((char *)map + t->paths_off);
    v->npaths = (size_t)t->npaths;
    v->cappaths = 0;        /* in the map */
    v->block = (unsigned)t->block;
}

int weft__vfile_map(weft__view *v, const char *path,
                    const struct stat *anchor)
{
    struct stat st;
    const vtail *t;
    const vlocent *le;
    const ventry *en;
    uint64_t end;
    void *map;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < sizeof *t ||
        (uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return 0;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    /* a window reads a few scattered pages: no read-ahead, and no
     * neighbours mapped with each page read (they would stay resident) */
    madvise(map, (size_t)st.st_size, MADV_RANDOM);
    end = (uint64_t)st.st_size - sizeof *t;
    t = (const vtail *)((const char *)map + end);
    if (!tail_ok(map, t, v, anchor, end))
        goto stale;
    le = (const vlocent *)((const char *)map + t->locs_off);
    en = (const ventry *)((const char *)map + t->entries_off);
    if (!depths_ok(map, t, le, en, v->nlocs, end))
        goto stale;
    for (size_t i = 0; i < v->nlocs; i++) {
        weft__vloc *l = &v->locs[i];
        l->first = le[i].t_first;
        l->last = le[i].t_last;
        l->any = le[i].any != 0;
        l->count0 = (size_t)le[i].count0;
        l->ncount = (size_t)le[i].ncount;
        l->attr0 = (size_t)le[i].attr0;
        l->nattr = (size_t)le[i].nattr;
        l->ndepth = (unsigned)le[i].ndepth;
        if (l->ndepth && !(l->depth = calloc(l->ndepth, sizeof *l->depth)))
            goto oom;
        for (unsigned d = 0; d < l->ndepth; d++)
            if (map_depth(map, &en[le[i].first + d], &l->depth[d]) < 0)
                goto oom;
    }
    map_tables(v, map, (size_t)st.st_size, t);
    return 1;
oom:
    for (size_t i = 0; i < v->nlocs; i++)
        weft__view_forget_location(v, i);   /* (cap 0: frees no visits) */
    munmap(map, (size_t)st.st_size);
    return -1;
stale:
    munmap(map, (size_t)st.st_size);
    return 0;
}

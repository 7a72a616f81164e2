/* iosum.c - file I/O per IoHandle (iosum.h). */
#include "iosum.h"

#include <otf2/OTF2_Events.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "weft_errors.h"

/* 0 or WEFT_ENOMEM (l unchanged). */
int weft_iosum_begin(weft_iolive *l, uint32_t handle, uint8_t mode,
                     uint64_t matching, uint64_t t)
{
    if (!l->v && !(l->v = malloc(WEFT_IOSUM_PENDING * sizeof *l->v)))
        return WEFT_ENOMEM;
    if (l->n == WEFT_IOSUM_PENDING)
        return 0;  /* not counted (iosum.h) */
    l->v[l->n++] = (weft_iopending){ handle, mode, matching, t };
    return 0;
}

/* The cell of handle in s, made when new; NULL when out of memory. */
static weft_iosum_cell *cell(weft_iosum *s, uint32_t handle)
{
    return weft_hashtab_get(&s->t, handle + 1, sizeof(weft_iosum_cell));
}

/* 0 or WEFT_ENOMEM. */
int weft_iosum_end(weft_iosum *s, weft_iolive *l, uint32_t handle,
                   uint64_t matching, uint64_t bytes, int cancelled,
                   uint64_t t)
{
    weft_iosum_cell *c;
    weft_iopending p;
    size_t i = l->n;

    /* The latest Begin first: operations nest or follow each other. */
    while (i > 0 && (l->v[i - 1].handle != handle ||
                     l->v[i - 1].matching != matching))
        i--;
    if (i == 0 || handle + 1 == 0)
        return 0;
    p = l->v[i - 1];
    memmove(&l->v[i - 1], &l->v[i], (l->n - i) * sizeof *l->v);
    l->n--;
    if (!(c = cell(s, handle)))
        return WEFT_ENOMEM;
    c->operations++;
    c->ticks += t > p.begin ? t - p.begin : 0;
    if (!cancelled && bytes != OTF2_UNDEFINED_UINT64) {
        if (p.mode == OTF2_IO_OPERATION_MODE_READ)
            c->bytes_read += bytes;
        else if (p.mode == OTF2_IO_OPERATION_MODE_WRITE)
            c->bytes_written += bytes;
    }
    return 0;
}

/* 0 or WEFT_ENOMEM. */
int weft_iosum_add(weft_iosum *s, const weft_iosum *a)
{
    return weft_iosum_add_mapped(s, a, NULL, 0);
}

/* map NULL: every handle is itself. */
int weft_iosum_add_mapped(weft_iosum *s, const weft_iosum *a,
                          const uint32_t *map, size_t nmap)
{
    for (size_t i = 0; i < a->t.ncells; i++) {
        const weft_iosum_cell *x = weft_hashtab_at(&a->t, i, sizeof *x);
        uint32_t h = x ? x->key - 1 : 0;
        weft_iosum_cell *c;
        if (!x || (map && (h >= nmap || map[h] == UINT32_MAX)))
            continue;
        if (!(c = cell(s, map ? map[h] : h)))
            return WEFT_ENOMEM;
        c->bytes_read += x->bytes_read;
        c->bytes_written += x->bytes_written;
        c->operations += x->operations;
        c->ticks += x->ticks;
    }
    return 0;
}

void weft_iolive_free(weft_iolive *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

void weft_iosum_free(weft_iosum *s)
{
    weft_hashtab_free(&s->t);
}

/* The names of defs' files (IoRegularFile, IoDirectory) by global id, in
 * a malloc'd array of *n; NULL when out of memory or none. */
static const char **file_names(const weft_defview *defs, size_t *n)
{
    static const uint32_t types[] = { WEFT_REC_IoRegularFile,
                                      WEFT_REC_IoDirectory };
    const char **v;

    *n = weft_defview_count(defs, types[0]) +
         weft_defview_count(defs, types[1]);
    if (!*n || !(v = calloc(*n, sizeof *v)))
        return NULL;
    for (size_t k = 0; k < 2; k++) {
        size_t nk = weft_defview_count(defs, types[k]);
        for (size_t i = 0; i < nk; i++) {
            const weft_record *f = weft_defview_get(defs, types[k], i);
            if (f && f->u.IoRegularFile.self < *n)
                v[f->u.IoRegularFile.self] =
                    weft_defview_string(defs, f->u.IoRegularFile.name);
        }
    }
    return v;
}

/* The name of the file of handle id (its parents' file for a handle
 * without one), else the handle's name. */
static const char *handle_file(const weft_defview *defs,
                               const char **files, size_t nfiles, uint32_t id)
{
    const weft_record *h = weft_defview_get(defs, WEFT_REC_IoHandle, id);

    if (!h || h->u.IoHandle.self != id)
        return "";
    for (int depth = 0; depth < 8; depth++) {
        const weft_record *p;
        uint32_t f = h->u.IoHandle.file;
        if (f < nfiles && files[f] && *files[f])
            return files[f];
        p = weft_defview_get(defs, WEFT_REC_IoHandle, h->u.IoHandle.parent);
        if (h->u.IoHandle.parent == OTF2_UNDEFINED_IO_HANDLE || !p ||
            p->u.IoHandle.self != h->u.IoHandle.parent)
            break;
        h = p;
    }
    h = weft_defview_get(defs, WEFT_REC_IoHandle, id);
    return weft_defview_string(defs, h->u.IoHandle.name);
}

typedef struct named {
    const char *name;
    weft_iosum_cell sum;
} named;

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

static int cmp_time(const void *a, const void *b)
{
    const named *x = a, *y = b;

    if (x->sum.ticks != y->sum.ticks)
        return x->sum.ticks < y->sum.ticks ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* 0 or WEFT_ENOMEM (*rows NULL then). */
int weft_iosum_files(const weft_iosum *s, const weft_defview *defs,
                     uint64_t resolution, size_t max,
                     weft_io_file_row **rows, size_t *n)
{
    named *v = s->t.used ? malloc(s->t.used * sizeof *v) : NULL;
    size_t nv = 0, k = 0, nrows;
    double res = resolution ? (double)resolution : 1.0;
    weft_io_file_row *out = NULL;
    size_t nfiles = 0;
    const char **files = file_names(defs, &nfiles);

    *rows = NULL;
    *n = 0;
    if (!s->t.used || !v || (nfiles && !files)) {
        free(v);
        free(files);
        return s->t.used ? WEFT_ENOMEM : 0;
    }
    for (size_t i = 0; i < s->t.ncells; i++) {
        const weft_iosum_cell *c = weft_hashtab_at(&s->t, i, sizeof *c);
        if (c)
            v[nv++] = (named){ handle_file(defs, files, nfiles, c->key - 1),
                               *c };
    }
    qsort(v, nv, sizeof *v, cmp_name);
    for (size_t i = 0; i < nv; i++) {  /* one per name */
        if (k && strcmp(v[k - 1].name, v[i].name) == 0) {
            v[k - 1].sum.bytes_read += v[i].sum.bytes_read;
            v[k - 1].sum.bytes_written += v[i].sum.bytes_written;
            v[k - 1].sum.operations += v[i].sum.operations;
            v[k - 1].sum.ticks += v[i].sum.ticks;
        } else {
            v[k++] = v[i];
        }
    }
    nv = k;
    qsort(v, nv, sizeof *v, cmp_time);
    nrows = nv > max ? max + 1 : nv;
    if (!(out = calloc(nrows, sizeof *out)))
        goto oom;
    for (size_t i = 0; i < nv; i++) {
        weft_io_file_row *r = &out[i < max ? i : max];
        if (i < max && !(r->name = strdup(v[i].name)))
            goto oom;
        if (i >= max && !r->name && !(r->name = strdup("")))
            goto oom;
        r->others += i >= max;
        r->bytes_read += v[i].sum.bytes_read;
        r->bytes_written += v[i].sum.bytes_written;
        r->operations += v[i].sum.operations;
        r->time_s += (double)v[i].sum.ticks / res;
    }
    free(v);
    free(files);
    *rows = out;
    *n = nrows;
    return 0;
oom:
    for (size_t i = 0; out && i < nrows; i++)
        free(out[i].name);
    free(out);
    free(v);
    free(files);
    return WEFT_ENOMEM;
}

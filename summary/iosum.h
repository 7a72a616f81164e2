/* iosum.h - file I/O per IoHandle (issue #17): the bytes read and
 * written, the operations and the time in them, gathered while the
 * converter writes the IoOperationBegin, IoOperationComplete and
 * IoOperationCancelled events, for `weft report`'s table of files.
 *
 * An operation is an IoOperationBegin and the IoOperationComplete or
 * IoOperationCancelled of the same handle and matchingId on the same
 * location (OTF2's matching); its time is from the one to the other, its
 * bytes the Complete's bytesResult (none when undefined: a failed call),
 * read or written as the Begin's mode says. Each location keeps its
 * operations in flight (weft_iolive, WEFT_IOSUM_PENDING at most: a Begin
 * beyond that is not counted); each member sums its own by handle id
 * (weft_iosum, owned by its replayer; weftd's conversion sums a member
 * in its own ids and adds it to the trace's with weft_iosum_add_mapped). Sums do not depend on the
 * order members are replayed in; weft_iosum_files names and orders the
 * result.
 */
#ifndef WEFT_IOSUM_H
#define WEFT_IOSUM_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "defview.h"
#include "hashtab.h"

/* Operations in flight on one location, at most. */
#define WEFT_IOSUM_PENDING 64

typedef struct weft_iopending {
    uint32_t handle;
    uint8_t mode;           /* OTF2_IoOperationMode */
    uint64_t matching;
    uint64_t begin;         /* time of the Begin */
} weft_iopending;

/* The operations in flight of one location (its replayer's). */
typedef struct weft_iolive {
    weft_iopending *v;      /* malloc'd at the first Begin */
    size_t n;
} weft_iolive;

/* What one handle did. key: handle + 1; 0: empty. */
typedef struct weft_iosum_cell {
    uint32_t key;
    uint64_t bytes_read, bytes_written, operations, ticks;
} weft_iosum_cell;

/* What one member's handles did (cells: weft_iosum_cell). */
typedef struct weft_iosum {
    weft_hashtab t;
} weft_iosum;

/* An IoOperationBegin of handle at t. 0 or WEFT_ENOMEM. */
int weft_iosum_begin(weft_iolive *l, uint32_t handle, uint8_t mode,
                     uint64_t matching, uint64_t t);
/* The IoOperationComplete (cancelled 0, bytes its bytesResult) or
 * IoOperationCancelled (cancelled 1) of handle and matching at t: the
 * operation is added to s. One without a Begin is not counted. 0 or
 * WEFT_ENOMEM. */
int weft_iosum_end(weft_iosum *s, weft_iolive *l, uint32_t handle,
                   uint64_t matching, uint64_t bytes, int cancelled,
                   uint64_t t);
/* Adds the sums of a to s (merging). 0 or WEFT_ENOMEM. */
int weft_iosum_add(weft_iosum *s, const weft_iosum *a);
/* Adds a's handle h to s's handle map[h] (h < nmap, map[h] not
 * UINT32_MAX; else h is left out): a process's handles, summed in its
 * own ids, added to the trace's. 0 or WEFT_ENOMEM. */
int weft_iosum_add_mapped(weft_iosum *s, const weft_iosum *a,
                          const uint32_t *map, size_t nmap);
void weft_iolive_free(weft_iolive *l);
void weft_iosum_free(weft_iosum *s);

/* The files of s: the handles' sums by the name of their file (the
 * IoRegularFile or IoDirectory the IoHandle names, else the handle's own
 * name; defs holds the definitions), the max of most time first (then by
 * name), and when there are more, an "others" row (others: how many
 * files it sums; "" as name). times in seconds of `resolution` ticks.
 * *rows malloc'd, names malloc'd. 0 or WEFT_ENOMEM. */
int weft_iosum_files(const weft_iosum *s, const weft_defview *defs,
                     uint64_t resolution, size_t max,
                     weft_io_file_row **rows, size_t *n);

#endif

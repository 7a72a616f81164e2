/* import.h - the rows of an imported OTF2 archive (weft import) as they
 * travel from a user's weft command to weftd, and into the catalog.
 *
 * DESIGN (who reads what): the catalog is weftd's alone, the archive is
 * the user's. So the weft command, running as the user, reads the
 * archive with libotf2 and computes every row (cli/import.c); an
 * ordinary user's weft sends them as an ImportTrace frame after a
 * Query{IMPORT} on weftd's Unix socket (ask.c), where the kernel names
 * the asker (SO_PEERCRED). weftd checks every field here, reserves a
 * key (SPOOL/traces/KEY, empty: the trace's place in the spool) and
 * stores the rows with owner = the asker and the archive path as sent.
 * weftd never opens, stats or removes the path: a user cannot make it
 * read a file they cannot read themselves (what they claim of a file is
 * theirs to see only, as any of their traces). The request is one
 * frame of at most max_frame bytes (weftd.conf), counted as its bytes
 * arrive; the counts below bound what it may hold. Pure functions but
 * weft_import_store; no libuv.
 */
#ifndef WEFT_IMPORT_H
#define WEFT_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "metricsum.h"
#include "summary.h"
#include "timeline.h"
#include "weft.pb-c.h"

/* Bounds of one ImportTrace (besides max_frame). */
#define WEFT_IMPORT_MAX_MEMBERS (1u << 20)
#define WEFT_IMPORT_MAX_LOCATIONS (1u << 20)
#define WEFT_IMPORT_MAX_REGIONS (1u << 22)   /* profile rows */
#define WEFT_IMPORT_MAX_TIMELINES WEFT_CONVERT_TIMELINES
#define WEFT_IMPORT_MAX_BINS WEFT_TIMELINE_BINS
#define WEFT_IMPORT_MAX_TAGS 64
#define WEFT_IMPORT_MAX_TAG_KEY 64
#define WEFT_IMPORT_MAX_STRING 4096          /* names, hosts, the path */
#define WEFT_IMPORT_MAX_PARADIGM 64          /* a profile row's paradigm */
#define WEFT_IMPORT_MAX_ERROR 1024
#define WEFT_IMPORT_MAX_MESSAGES WEFT_CONVERT_MESSAGE_ROWS
#define WEFT_IMPORT_MAX_IO_FILES (WEFT_CONVERT_IO_FILES + 1) /* + others */
#define WEFT_IMPORT_MAX_METRICS WEFT_CONVERT_METRIC_SERIES
#define WEFT_IMPORT_MAX_POINTS (3 * WEFT_METRICSUM_BINS)

/* A trace's rows: what weft_catalog_trace_finish_detail takes. */
typedef struct weft_import_rows {
    weft_trace_row row;
    weft_trace_detail detail;
    uint64_t charged;    /* what it costs its owner's quota besides the
                            archive's bytes (weft_catalog_trace_charge) */
} weft_import_rows;

/* What an import of `packed` bytes (its ImportTrace) costs its owner's
 * max_user_spool_bytes besides the archive it names: its rows in the
 * catalog (with their indexes, about twice their packed size) and its
 * directory in the spool. */
#define WEFT_IMPORT_CHARGE(packed) (2 * (uint64_t)(packed) + 4096)

/* Checks every field of m: lengths, counts, strings (no control
 * characters but in the path's bytes none either), numbers that must
 * agree (events, locations of members). 0, or WEFT_EINVAL / WEFT_ELIMIT
 * with err naming the field. */
int weft_import_check(const Weft__ImportTrace *m, char *err, size_t errlen);
/* m (checked) as rows pointing into m (freed by weft_import_rows_free,
 * not m's strings). 0 or WEFT_ENOMEM. */
int weft_import_from_msg(const Weft__ImportTrace *m, weft_import_rows *r);
/* rows r as a message pointing into r (freed by weft_import_msg_free,
 * not r's strings). 0 or WEFT_ENOMEM. */
int weft_import_to_msg(const weft_import_rows *r, Weft__ImportTrace *m);
void weft_import_rows_free(weft_import_rows *r);
void weft_import_msg_free(Weft__ImportTrace *m);
/* Stores r as a new trace of owner uid in the catalog at path: reserves
 * its key and directory in spool (weft_spool_reserve) unless *key is
 * one reserved already, sets r->row's key, uid, created, finished and
 * (when NULL) its command, "weft import PATH/traces.otf2", and writes
 * every row in one transaction. 0 with *key (malloc'd), or a WEFT_E*
 * code with err (a directory it reserved is removed again). */
int weft_import_store(const char *catalog, const char *spool, uint32_t uid,
                      weft_import_rows *r, char **key, char *err,
                      size_t errlen);

#endif

/* catrow.h - what the catalog says about a trace: the rows of
 * store/catalog.h built from a weft_trace, its members and the result of
 * its conversion. Pure: no catalog access, no libuv; the jobs that write
 * the rows are trace.c's. Called on the loop thread for a recording trace
 * (its members may change afterwards: the row is a copy) and on the
 * conversion's worker thread for a finished one (which that job owns).
 *
 * Schema 2: a trace's hosts are its members' distinct hosts; its command,
 * job id and protocol version are rank 0's, else the lowest rank's that
 * joined; its tags are the union of its members' tags, the lowest rank's
 * value winning for a key two members give differently; after
 * conversion every member that joined has a row, those that did not say
 * goodbye as missing. A rank that never came has no row (the trace row's
 * `members` says how many were expected; readers list the ranks between
 * rows as missing), so that a trace costs what joined, whatever size its
 * Hello announced.
 */
#ifndef WEFT_CATROW_H
#define WEFT_CATROW_H

#include <stddef.h>

#include "catalog.h"
#include "convert.h"
#include "trace.h"

/* The row of t while it records (state recording, no figures yet), with
 * every string a malloc'd copy: free it with weft_catalog_trace_free.
 * *tags (malloc'd, strings too: weft_catrow_free_tags) are the trace's
 * tags; NULL and *ntags 0 when it has none or out of memory (the row goes
 * without them). Returns 0, or WEFT_ENOMEM with row half filled (free it
 * all the same). */
int weft_catrow_recording(const weft_trace *t, weft_trace_row *row,
                          weft_tag **tags, size_t *ntags);

/* The final rows of finished trace t converted into res: the trace row
 * (figures from res; state, finished, path and error left for the caller
 * to set), its detail (locations, regions from res; members; tags). */
typedef struct weft_catrow_final {
    weft_trace_row row;        /* strings point into t, except hosts */
    weft_trace_detail detail;  /* points into res and the fields below */
    weft_member_row *members;  /* one per member that joined, by rank;
                                  strings point into t */
    weft_tag *tags;            /* strings point into t's members */
} weft_catrow_final;

/* Fills *out (zeroed first) for t and res; valid while both live. Returns
 * 0, or WEFT_ENOMEM. Free with weft_catrow_final_free in either case. */
int weft_catrow_final_make(const weft_trace *t, const weft_convert_result *res,
                           weft_catrow_final *out);
void weft_catrow_final_free(weft_catrow_final *f);

/* A member's state for the catalog: WEFT_MEMBER_MISSING (m NULL, or no
 * Goodbye), _ABORTED (its Goodbye says it ended abnormally) or _COMPLETE. */
const char *weft_catrow_member_state(const weft_member *m);
/* Why t is not complete after a conversion with result res, in buf ("" if
 * it is): members that never came, ended without goodbye (their process
 * is gone), did not say goodbye or ended abnormally (how), and threads whose events differ from what their
 * Goodbye reported. */
void weft_catrow_partial_reason(const weft_trace *t,
                                const weft_convert_result *res, char *buf,
                                size_t len);

/* Frees n tags and their strings (NULL is fine). */
void weft_catrow_free_tags(weft_tag *tags, size_t n);

/* Loop thread: records t in the catalog as recording, off the loop
 * (weft_catjob_queue), with what its members who joined so far say
 * (hosts, command, job id, tags), so that a recording trace is found by
 * tag and host. A failure is logged. */
void weft_catrow_queue_begin(weft_trace *t);

#endif

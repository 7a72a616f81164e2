/* defview.h - the global definitions of a trace as the report's
 * summaries read them (commsum.h, iosum.h, metricsum.h): how many of a
 * record type, the one of a global id, the text of a String. weftd's
 * conversion reads them from its unifier (weft_unify_view), weft import
 * from the archive it reads (cli/archive.h, weft__arc_view), so the
 * summaries are computed by one code for both.
 *
 * get(type, i) returns the i-th definition of type `type` (0 <= i <
 * count(type)), with global ids, or NULL. The unifier counts in
 * first-seen order; an archive's view puts the definition of id i at i
 * (NULL where an id is not defined). Either way callers that look a
 * definition up by id check its own id. The records and strings are
 * the view's owner's, valid while it lives.
 */
#ifndef WEFT_DEFVIEW_H
#define WEFT_DEFVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

typedef struct weft_defview {
    const void *ctx;
    size_t (*count)(const void *ctx, uint32_t type);
    const weft_record *(*get)(const void *ctx, uint32_t type, size_t i);
    const char *(*string)(const void *ctx, uint32_t id);  /* "" if none */
} weft_defview;

static inline size_t weft_defview_count(const weft_defview *d, uint32_t type)
{
    return d->count(d->ctx, type);
}

static inline const weft_record *weft_defview_get(const weft_defview *d,
                                                  uint32_t type, size_t i)
{
    return d->get(d->ctx, type, i);
}

static inline const char *weft_defview_string(const weft_defview *d,
                                              uint32_t id)
{
    return d->string(d->ctx, id);
}

#endif

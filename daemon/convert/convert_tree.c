/* convert_tree.c - what the converter knows of a process tree (issue
 * #32: `weft run` of a shell or make is one trace, every process it
 * starts a member): the checks of a member's Hello, tree or not (pass 1,
 * convert.c), its program, and its location rows' process and program.
 * The location groups (named "PROG (pid N)", created by the parent's)
 * are otf2defs.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "convert_internal.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

/* The basename of the first word of command (malloc'd; "" when it has
 * none), NULL when out of memory. */
char *weft__conv_program(const char *command)
{
    const char *p = command ? command : "", *end, *base;

    p += strspn(p, " ");
    end = p + strcspn(p, " ");
    base = p;
    for (const char *q = p; q < end; q++)
        if (*q == '/' && q + 1 < end)
            base = q + 1;
    return strndup(base, (size_t)(end - base));
}

/* Whether Hello h (at off in m's journal) fits the trace: its rank, its
 * size (0 for a process tree, which has as many members as joined) and
 * tree or not as the Hellos before it. 0 or WEFT_ECORRUPT (c failed). */
int weft__conv_check_hello(conv *c, member *m, const Weft__Hello *h,
                           uint64_t off)
{
    uint32_t expect = c->in->members;

    if (c->tree && (c->tree > 0) != !!h->tree)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 ": Hello of %s, the Hellos before it "
                               "%s", m->path, off,
                               h->tree ? "a process tree's member"
                                       : "a fixed-size trace's member",
                               h->tree ? "are not" : "of a process tree's");
    c->tree = h->tree ? 1 : -1;
    if (!expect && !h->tree && c->nmems && c->mems[0].has_hello)
        expect = c->mems[0].size;
    if (h->rank != m->rank)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 ": Hello of rank %" PRIu32 " in the "
                               "journal of rank %" PRIu32, m->path, off,
                               h->rank, m->rank);
    if (h->tree && h->size != 0)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 ": Hello of a process tree says the "
                               "trace has %" PRIu32 " members, expected 0",
                               m->path, off, h->size);
    /* A tree's ranks may pass its members: a rank whose join failed
     * is not given again (daemon/traces/tree.c). */
    if (h->tree)
        return 0;
    if (expect && h->size != expect)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 ": Hello says the trace has %" PRIu32
                               " members, expected %" PRIu32, m->path, off,
                               h->size, expect);
    if (h->rank >= h->size)
        return weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                               PRIu64 ": rank %" PRIu32 " outside a trace of %"
                               PRIu32 " members", m->path, off, h->rank,
                               h->size);
    return 0;
}

/* The process and program of a location row of tree member m.
 * 0 or WEFT_ENOMEM. */
int weft__conv_tree_row(const member *m, weft_location_row *row)
{
    char group[WEFT_CONV_GROUP_NAME];

    row->process = strdup(weft__conv_group_name(m, group, sizeof group));
    row->program = strdup(m->program);
    return row->process && row->program ? 0 : WEFT_ENOMEM;
}

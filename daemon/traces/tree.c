/* tree.c - a process tree as one trace (trace.h, Hello.tree): `weft run`
 * of a program that starts others (a shell, make) makes every process of
 * the tree a member of one trace, whatever their number.
 *
 * weftd gives each new member its rank, 0, 1, 2 ... in the order they
 * join, within max_members; the trace's size is the members that joined.
 * It is done when every member that joined is done (said goodbye, or its
 * process is gone) and no process it waits for is still to come. Such a
 * process is one a member named in its Goodbye: a child still running as
 * it ended (a shell's background job, a daemon it started), or itself
 * going on as another program (an exec). Each is waited for until it
 * joins, until weftd sees its process end (when it watches the member's
 * process: procwatch.h), or at most abort_grace_period: a traced process
 * joins within milliseconds of its start, and one that does not (a
 * statically linked program, an exec that failed, a fork that never
 * execs) never will.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "procwatch.h"
#include "trace_internal.h"
#include "weft_errors.h"

/* At most this many processes a tree waits for at once: more are not
 * waited for. A process left running when its parent ends is rare (a
 * shell's background job, a daemon), and each costs a look at /proc. */
#define WEFT_TREE_MAX_EXPECTED 64u

int weft__tree_rank(const weft_trace *t, const Weft__Hello *h,
                    uint32_t *rank, enum weft_limit *limit, char *err,
                    size_t errlen)
{
    const weft_daemon *d = t->d;

    if (h->rank != UINT32_MAX)
        return weft__fail(err, errlen, WEFT_EINVAL, "rank %u of process "
                          "tree '%s' was never given (a new member asks "
                          "for rank %u)", h->rank, t->name, UINT32_MAX);
    if (t->joined >= d->cfg.max_members || t->next_rank == UINT32_MAX) {
        *limit = WEFT_LIMIT_MAX_MEMBERS;
        return weft__fail(err, errlen, WEFT_ELIMIT, "process tree '%s' "
                          "has %u members: max_members is %" PRIu64,
                          t->name, t->joined, d->cfg.max_members);
    }
    *rank = t->next_rank;
    return 0;
}

/* Stops waiting for expected process i of t. */
static void drop(weft_trace *t, uint32_t i)
{
    t->expected[i] = t->expected[--t->nexpected];
}

void weft__tree_joined(weft_trace *t, const weft_memberin *in)
{
    assert(t->tree);
    if (in->rank >= t->next_rank)
        t->next_rank = in->rank + 1;
    t->size = t->joined;
    /* Without room, a child of this member may be waited for in vain
     * (abort_grace_period at most). */
    (void)weft_idset_put(&t->pids, in->pid, 1);
    for (uint32_t i = 0; i < t->nexpected;)
        if (t->expected[i].pid == in->pid)
            drop(t, i);
        else
            i++;
}

/* t waits for process pid (started at `start`, 0: not watched) to join,
 * unless it is gone already. 0, or -1 when t cannot wait for more. */
static int expect(weft_trace *t, uint32_t pid, uint64_t start)
{
    weft_daemon *d = t->d;
    weft_expected *e;

    if (t->nexpected >= WEFT_TREE_MAX_EXPECTED)
        return -1;
    if (start && weft_proc_gone(pid, start))
        return 0;
    if (t->nexpected == t->expected_cap) {
        uint32_t cap = t->expected_cap ? 2 * t->expected_cap : 8;
        weft_expected *v = realloc(t->expected, cap * sizeof *v);
        if (!v)
            return -1;
        t->expected = v;
        t->expected_cap = cap;
    }
    e = &t->expected[t->nexpected++];
    e->pid = pid;
    e->start = start;
    e->until = uv_now(d->loop) + d->cfg.abort_grace_period * 1000;
    return 0;
}

void weft__tree_left(weft_trace *t, const weft_memberin *in)
{
    size_t skipped = 0;

    assert(t->tree && in->said_goodbye);
    if (in->execs && expect(t, in->pid, in->watched ? in->proc_start : 0))
        skipped++;
    for (size_t i = 0; i < in->nchildren; i++) {
        uint32_t pid = in->children[i];
        if (pid && pid != in->pid && !weft_idset_has(&t->pids, pid) &&
            expect(t, pid, in->watched ? weft_proc_start(pid) : 0) < 0)
            skipped++;
    }
    /* Not waited for: they may find the trace ended, and run untraced. */
    if (skipped)
        weft_tlog(t, WEFT_LOG_WARNING, "trace '%s' rank %u: not waiting for "
                  "%zu of the processes it left running (waiting for %u "
                  "already, at most %u)", t->name, in->rank, skipped,
                  t->nexpected, WEFT_TREE_MAX_EXPECTED);
}

int weft__tree_check(weft_trace *t)
{
    uint64_t now = uv_now(t->d->loop);
    int dropped = 0;

    for (uint32_t i = 0; i < t->nexpected;) {
        const weft_expected *e = &t->expected[i];
        if (now >= e->until || (e->start && weft_proc_gone(e->pid, e->start))) {
            weft_tlog(t, WEFT_LOG_DEBUG, "trace '%s': process %u %s", t->name,
                      e->pid, now >= e->until ? "did not join in time"
                                              : "ended without joining");
            drop(t, i);
            dropped = 1;
        } else {
            i++;
        }
    }
    return dropped;
}

void weft__tree_free(weft_trace *t)
{
    free(t->expected);
    t->expected = NULL;
    t->nexpected = t->expected_cap = 0;
    weft_idset_free(&t->pids);
}

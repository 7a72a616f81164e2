/* tasks.c - explicit tasks (GOMP_task): their creation, and their
 * execution on whatever thread of the team runs them (see om.h).
 *
 * The creating thread records ThreadTaskCreate inside "!$omp create task
 * @file:line" (TASK_CREATE); the thread that runs the task records
 * ThreadTaskSwitch to it, the task's region "!$omp task @file:line"
 * (TASK, or TASK_UNTIED), ThreadTaskComplete, and ThreadTaskSwitch back
 * to the task it had suspended (its implicit task, or a task it was
 * running when it took this one: at a taskwait, a barrier). A task is
 * named by its team, its creating thread (the creator's number in that
 * team) and that thread's generation number (1, 2, ...); a thread's
 * implicit task has generation 0.
 *
 * To see a task run, libgomp is given a trampoline in place of the
 * task's function and a block that starts with a tag (the function, the
 * task's name), its data after it at the alignment the program asked
 * for: libgomp copies the block into the task with our copy function,
 * which copies the tag and then the program's data as the program's copy
 * function would (or memcpy). The task's function gets its data where
 * it expects it. (GOMP_taskloop writes the loop bounds into the first
 * fields of each task's data: its tasks are not wrapped yet.)
 */
#include <dlfcn.h>
#include <stdalign.h>
#include <string.h>

#include "om.h"

/* libgomp's GOMP_task flags (gomp-constants.h). */
#define OM_TASK_FLAG_UNTIED 1u

/* Tasks one thread may be running at once, nested (taken at a taskwait
 * or barrier while running another), that it switches back from. */
#define OM_TASKS_NEST_MAX 256

typedef struct om_task_tag {
    void (*fn)(void *);
    OTF2_CommRef team;
    OTF2_RegionRef region;
    uint32_t creator, gen;
    size_t off;                 /* where the program's data starts */
    /* the creator's copy only, for the copy function: */
    void (*cpyfn)(void *, void *);
    const void *src;
    size_t size;
} om_task_tag;

/* The tasks this thread runs (innermost last), below them its implicit
 * task; and the generation number of the last task it created. */
static __thread struct {
    uint32_t creator[OM_TASKS_NEST_MAX], gen[OM_TASKS_NEST_MAX];
    unsigned n;
} running OM_TLS;
static __thread uint32_t generation OM_TLS;

static void (*real_GOMP_task)(void (*)(void *), void *,
                              void (*)(void *, void *), long, long, bool,
                              unsigned, void **, int, void *);

/* The task this thread goes back to now: the innermost it runs, else
 * its implicit task. */
static void resumed(uint32_t *creator, uint32_t *gen)
{
    if (running.n > 0 && running.n <= OM_TASKS_NEST_MAX) {
        *creator = running.creator[running.n - 1];
        *gen = running.gen[running.n - 1];
    } else {
        *creator = om_thread_num();
        *gen = 0;
    }
}

/* What libgomp runs in place of a task's function. */
static void task_run(void *arg)
{
    const om_task_tag *tag = arg;
    int recording = 0;
    weft__rguard g;
    uint32_t c, n;
    uint64_t t;

    if (tag->region != OTF2_UNDEFINED_REGION && om_begin(&g)) {
        t = weft_time();
        weft_evt_ThreadTaskSwitch(NULL, t, tag->team, tag->creator, tag->gen);
        weft_evt_Enter(NULL, t, tag->region);
        if (running.n < OM_TASKS_NEST_MAX) {
            running.creator[running.n] = tag->creator;
            running.gen[running.n] = tag->gen;
        }
        running.n++;
        recording = 1;
        weft__recorder_end(&g);
    }
    tag->fn((char *)arg + tag->off);
    if (recording && weft__recorder_begin(&g)) {
        t = weft_time();
        weft_evt_Leave(NULL, t, tag->region);
        weft_evt_ThreadTaskComplete(NULL, t, tag->team, tag->creator,
                                    tag->gen);
        running.n--;
        resumed(&c, &n);
        weft_evt_ThreadTaskSwitch(NULL, t, tag->team, c, n);
        weft__recorder_end(&g);
    }
}

/* libgomp's copy of a task's block: the tag, then the program's data. */
static void task_copy(void *dst, void *src)
{
    const om_task_tag *tag = src;
    char *data = (char *)dst + tag->off;

    memcpy(dst, tag, sizeof *tag);
    if (tag->cpyfn)
        tag->cpyfn(data, (void *)tag->src);
    else if (tag->size > 0)
        memcpy(data, tag->src, tag->size);
}

OM_EXPORT void GOMP_task(void (*fn)(void *), void *data,
                         void (*cpyfn)(void *, void *), long arg_size,
                         long arg_align, bool if_clause, unsigned flags,
                         void **depend, int priority, void *detach);

/* GOMP_task of libgomp 11 and later (a detach argument; an older
 * compiler's call leaves it unset, and libgomp reads it only with the
 * detach flag, which such a compiler never sets). */
OM_EXPORT void GOMP_task(void (*fn)(void *), void *data,
                         void (*cpyfn)(void *, void *), long arg_size,
                         long arg_align, bool if_clause, unsigned flags,
                         void **depend, int priority, void *detach)
{
    OTF2_RegionRef create = OTF2_UNDEFINED_REGION;
    om_task_tag tag;
    weft__rguard g;
    size_t align;
    uint64_t t;

    if (!real_GOMP_task)
        return;
    if (!fn || arg_size < 0 ||
        atomic_load_explicit(&om_ompt, memory_order_relaxed) ||
        !om_begin(&g)) {
        real_GOMP_task(fn, data, cpyfn, arg_size, arg_align, if_clause,
                       flags, depend, priority, detach);
        return;
    }
    memset(&tag, 0, sizeof tag);
    tag.fn = fn;
    tag.team = om_team_now();
    tag.creator = om_thread_num();
    tag.gen = ++generation;
    tag.region = om_region((flags & OM_TASK_FLAG_UNTIED) ? OM_TASK_UNTIED
                                                         : OM_TASK,
                           (const char *)(uintptr_t)fn + 1, NULL);
    create = om_region(OM_TASK_CREATE, OM_CALLER, NULL);
    t = weft_time();
    if (create != OTF2_UNDEFINED_REGION)
        weft_evt_Enter(NULL, t, create);
    if (tag.region != OTF2_UNDEFINED_REGION &&
        tag.team != OTF2_UNDEFINED_COMM)
        weft_evt_ThreadTaskCreate(NULL, t, tag.team, tag.creator, tag.gen);
    else
        tag.region = OTF2_UNDEFINED_REGION; /* runs unrecorded */
    weft__recorder_end(&g);
    align = arg_align > 0 ? (size_t)arg_align : 1;
    tag.off = (sizeof tag + align - 1) / align * align;
    tag.cpyfn = cpyfn;
    tag.src = data;
    tag.size = (size_t)arg_size;
    if (align < alignof(om_task_tag))
        align = alignof(om_task_tag);
    real_GOMP_task(task_run, &tag, task_copy, (long)(tag.off + tag.size),
                   (long)align, if_clause, flags, depend, priority, detach);
    if (create != OTF2_UNDEFINED_REGION && weft__recorder_begin(&g)) {
        weft_evt_Leave(NULL, weft_time(), create);
        weft__recorder_end(&g);
    }
}

/* See om.h. */
void om_tasks_resolve(void)
{
    void *p = dlsym(RTLD_NEXT, "GOMP_task");

    memcpy(&real_GOMP_task, &p, sizeof p);
}

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
 * it expects it.
 *
 * A taskloop (GOMP_taskloop) is a region "!$omp taskloop" around the
 * call on the encountering thread, which creates the loop's tasks (and
 * waits for them, unless nogroup). libgomp writes each task's bounds
 * into the first two fields of its data, so there the tag goes behind
 * the data, OM_TL_STEP-aligned; the trampoline of a task whose data
 * takes k steps is the k-th of a table (a function cannot be told where
 * else to look), up to OM_TL_STEPS steps; a taskloop of more data runs
 * its tasks unrecorded. libgomp copies each task's data on the
 * encountering thread before any runs: the copy function records its
 * creation (a generation number each).
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
    OTF2_RegionRef create;      /* a taskloop's: its tasks' creation */
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

/* Runs the task of tag, whose function takes data, recording it. */
static void task_body(const om_task_tag *tag, void *data)
{
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
    tag->fn(data);
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

/* What libgomp runs in place of a task's function. */
static void task_run(void *arg)
{
    const om_task_tag *tag = arg;

    task_body(tag, (char *)arg + tag->off);
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

/* ---- taskloops ----------------------------------------------------------- */

/* A taskloop task's tag follows its data at a multiple of OM_TL_STEP
 * bytes, up to OM_TL_STEPS - 1 of them (see the top of the file). */
#define OM_TL_STEP 16
#define OM_TL_STEPS 64
#define OM_TL_EACH(X)                                                        \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)     \
    X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25)  \
    X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34) X(35) X(36) X(37)  \
    X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) X(48) X(49)  \
    X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61)  \
    X(62) X(63)

#define X(k)                                                                 \
    static void loop_task_##k(void *arg)                                     \
    {                                                                        \
        task_body((const om_task_tag *)((char *)arg + (k) * OM_TL_STEP),     \
                  arg);                                                      \
    }
OM_TL_EACH(X)
#undef X

/* The trampolines, by the steps the data takes. */
static void (*const loop_task[OM_TL_STEPS])(void *) = {
#define X(k) [k] = loop_task_##k,
    OM_TL_EACH(X)
#undef X
};

/* libgomp's copy of a taskloop task's block: the program's data, the
 * tag behind it (src is the tag); records the task's creation. */
static void loop_copy(void *dst, void *src)
{
    const om_task_tag *from = src;
    om_task_tag *tag = (om_task_tag *)((char *)dst + from->off);
    weft__rguard g;
    uint64_t t;

    if (from->cpyfn)
        from->cpyfn(dst, (void *)from->src);
    else
        memcpy(dst, from->src, from->size);
    memcpy(tag, from, sizeof *tag);
    tag->gen = ++generation;
    if (tag->region == OTF2_UNDEFINED_REGION || !weft__recorder_begin(&g))
        return;
    t = weft_time();
    weft_evt_Enter(NULL, t, from->create);
    weft_evt_ThreadTaskCreate(NULL, t, tag->team, tag->creator, tag->gen);
    weft_evt_Leave(NULL, t, from->create);
    weft__recorder_end(&g);
}

/* The taskloop entry points: T the type of the loop's bounds. */
#define OM_TASKLOOP(name, T)                                                 \
    static void (*real_##name)(void (*)(void *), void *,                     \
                               void (*)(void *, void *), long, long,         \
                               unsigned, unsigned long, int, T, T, T);       \
    OM_EXPORT void name(void (*fn)(void *), void *data,                      \
                        void (*cpyfn)(void *, void *), long arg_size,        \
                        long arg_align, unsigned flags,                      \
                        unsigned long num_tasks, int priority, T start,      \
                        T end, T step);                                      \
    OM_EXPORT void name(void (*fn)(void *), void *data,                      \
                        void (*cpyfn)(void *, void *), long arg_size,        \
                        long arg_align, unsigned flags,                      \
                        unsigned long num_tasks, int priority, T start,      \
                        T end, T step)                                       \
    {                                                                        \
        OTF2_RegionRef loop;                                                 \
        om_task_tag tag;                                                     \
        size_t align;                                                        \
                                                                             \
        if (!real_##name)                                                    \
            return;                                                          \
        if (!loop_begin(&tag, &loop, fn, data, cpyfn, arg_size, flags,       \
                        OM_CALLER)) {                                        \
            real_##name(fn, data, cpyfn, arg_size, arg_align, flags,         \
                        num_tasks, priority, start, end, step);              \
            return;                                                          \
        }                                                                    \
        align = arg_align > 0 ? (size_t)arg_align : 1;                       \
        if (align < alignof(om_task_tag))                                    \
            align = alignof(om_task_tag);                                    \
        if (loop_task[tag.off / OM_TL_STEP])                                 \
            real_##name(loop_task[tag.off / OM_TL_STEP], &tag, loop_copy,    \
                        (long)(tag.off + sizeof tag), (long)align, flags,    \
                        num_tasks, priority, start, end, step);              \
        else /* data too large: tasks unrecorded */                          \
            real_##name(fn, data, cpyfn, arg_size, arg_align, flags,         \
                        num_tasks, priority, start, end, step);              \
        loop_end(loop);                                                      \
    }

/* Enters a taskloop's region (*loop) at pc and fills tag for its tasks
 * (tag.off: where it goes behind their data, a multiple of OM_TL_STEP
 * that has a trampoline if it is below OM_TL_STEPS of them). 0 when
 * nothing is recorded (then the real call gets the program's own
 * arguments). */
static int loop_begin(om_task_tag *tag, OTF2_RegionRef *loop,
                      void (*fn)(void *), void *data,
                      void (*cpyfn)(void *, void *), long arg_size,
                      unsigned flags, const void *pc)
{
    weft__rguard g;

    if (!fn || arg_size <= 0 ||
        (size_t)arg_size > (OM_TL_STEPS - 1) * OM_TL_STEP ||
        atomic_load_explicit(&om_ompt, memory_order_relaxed) ||
        !om_begin(&g))
        return 0;
    *loop = om_region(OM_TASKLOOP, pc, NULL);
    memset(tag, 0, sizeof *tag);
    tag->fn = fn;
    tag->team = om_team_now();
    tag->creator = om_thread_num();
    tag->region = om_region((flags & OM_TASK_FLAG_UNTIED) ? OM_TASK_UNTIED
                                                          : OM_TASK,
                            (const char *)(uintptr_t)fn + 1, NULL);
    tag->create = om_region(OM_TASK_CREATE, pc, NULL);
    if (tag->team == OTF2_UNDEFINED_COMM ||
        tag->create == OTF2_UNDEFINED_REGION)
        tag->region = OTF2_UNDEFINED_REGION; /* run unrecorded */
    tag->off = ((size_t)arg_size + OM_TL_STEP - 1) / OM_TL_STEP * OM_TL_STEP;
    tag->cpyfn = cpyfn;
    tag->src = data;
    tag->size = (size_t)arg_size;
    if (*loop != OTF2_UNDEFINED_REGION)
        weft_evt_Enter(NULL, weft_time(), *loop);
    weft__recorder_end(&g);
    return 1;
}

/* Leaves a taskloop's region (loop_begin's). */
static void loop_end(OTF2_RegionRef loop)
{
    weft__rguard g;

    if (loop != OTF2_UNDEFINED_REGION && weft__recorder_begin(&g)) {
        weft_evt_Leave(NULL, weft_time(), loop);
        weft__recorder_end(&g);
    }
}

OM_TASKLOOP(GOMP_taskloop, long)
OM_TASKLOOP(GOMP_taskloop_ull, unsigned long long)

/* See om.h. */
void om_tasks_resolve(void)
{
    void *p = dlsym(RTLD_NEXT, "GOMP_task");

    memcpy(&real_GOMP_task, &p, sizeof p);
    p = dlsym(RTLD_NEXT, "GOMP_taskloop");
    memcpy(&real_GOMP_taskloop, &p, sizeof p);
    p = dlsym(RTLD_NEXT, "GOMP_taskloop_ull");
    memcpy(&real_GOMP_taskloop_ull, &p, sizeof p);
}

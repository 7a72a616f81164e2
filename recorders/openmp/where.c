/* where.c - the regions of OpenMP constructs, named after the construct
 * and its source line (see om.h).
 *
 * A region is looked up by (construct, code address, lock) in a table
 * without a lock: keys are published with a release store once their
 * entry is filled and never change; a miss takes the table's spin lock
 * (an atomic flag: nothing a recorder wraps), names the construct from
 * the program's debug information with libdw, defines the region and
 * inserts it. Each thread keeps its last hit in front of the table. A
 * full table (more construct sites than WHERE_SLOTS * 3/4) names the
 * rest by construct alone.
 *
 * The code address is a wrapper's return address (the call is the
 * instruction before it) or, for a parallel region, its outlined
 * function's address + 1 (parallel.c), so that the instruction before
 * it is the function's first: both are looked up at address - 1.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "om.h"
#include "symbol.h"

#define WHERE_SLOTS 8192u /* a power of 2 */

typedef struct where_slot {
    _Atomic uintptr_t pc;   /* 0: free; published last */
    const void *lock;
    uint32_t region;
    uint8_t cons;
} where_slot;

static struct {
    where_slot slot[WHERE_SLOTS];
    uint32_t used;                  /* under busy */
    atomic_flag busy;
    Dwfl *dwfl;                     /* under busy */
    int dwfl_failed;
} W = { .busy = ATOMIC_FLAG_INIT };

static __thread struct {
    uintptr_t pc;
    const void *lock;
    uint32_t region;
    uint8_t cons;
} last OM_TLS;

static const struct {
    const char *name;
    OTF2_RegionRole role;
    int located;            /* named with its source line */
} constructs[OM__NCONSTRUCTS] = {
    [OM_PARALLEL] = { "!$omp parallel", OTF2_REGION_ROLE_PARALLEL, 1 },
    [OM_IMPLICIT_BARRIER] = { "!$omp implicit barrier",
                              OTF2_REGION_ROLE_IMPLICIT_BARRIER, 1 },
    [OM_BARRIER] = { "!$omp barrier", OTF2_REGION_ROLE_BARRIER, 1 },
    [OM_LOOP] = { "!$omp for", OTF2_REGION_ROLE_LOOP, 1 },
    [OM_SECTIONS] = { "!$omp sections", OTF2_REGION_ROLE_SECTIONS, 1 },
    [OM_SINGLE] = { "!$omp single", OTF2_REGION_ROLE_SINGLE, 1 },
    [OM_CRITICAL] = { "!$omp critical", OTF2_REGION_ROLE_CRITICAL, 1 },
    [OM_ATOMIC] = { "!$omp atomic", OTF2_REGION_ROLE_ATOMIC, 1 },
    [OM_ORDERED] = { "!$omp ordered", OTF2_REGION_ROLE_ORDERED, 1 },
    [OM_TASKWAIT] = { "!$omp taskwait", OTF2_REGION_ROLE_TASK_WAIT, 1 },
    [OM_TASKGROUP] = { "!$omp taskgroup", OTF2_REGION_ROLE_TASK_WAIT, 1 },
    [OM_SET_LOCK] = { "omp_set_lock", OTF2_REGION_ROLE_FUNCTION, 0 },
    [OM_UNSET_LOCK] = { "omp_unset_lock", OTF2_REGION_ROLE_FUNCTION, 0 },
    [OM_TEST_LOCK] = { "omp_test_lock", OTF2_REGION_ROLE_FUNCTION, 0 },
    [OM_SET_NEST_LOCK] = { "omp_set_nest_lock", OTF2_REGION_ROLE_FUNCTION,
                           0 },
    [OM_UNSET_NEST_LOCK] = { "omp_unset_nest_lock",
                             OTF2_REGION_ROLE_FUNCTION, 0 },
    [OM_TEST_NEST_LOCK] = { "omp_test_nest_lock", OTF2_REGION_ROLE_FUNCTION,
                            0 },
    [OM_TASK] = { "!$omp task", OTF2_REGION_ROLE_TASK, 1 },
    [OM_TASK_UNTIED] = { "!$omp task untied", OTF2_REGION_ROLE_TASK_UNTIED,
                         1 },
    [OM_TASK_CREATE] = { "!$omp create task", OTF2_REGION_ROLE_TASK_CREATE,
                         1 },
    [OM_WORKSHARE] = { "!$omp workshare", OTF2_REGION_ROLE_WORKSHARE, 1 },
    [OM_TASKLOOP] = { "!$omp taskloop", OTF2_REGION_ROLE_LOOP, 1 },
    /* a task scheduling point, where the thread may run other tasks, as
     * at a taskwait */
    [OM_TASKYIELD] = { "!$omp taskyield", OTF2_REGION_ROLE_TASK_WAIT, 1 },
    /* OTF2 has no role for cancellation: a piece of code */
    [OM_CANCEL] = { "!$omp cancel", OTF2_REGION_ROLE_CODE, 1 },
    [OM_CANCELLATION_POINT] = { "!$omp cancellation point",
                                OTF2_REGION_ROLE_CODE, 1 },
    /* the stand-alone ordered directives of a doacross loop */
    [OM_DOACROSS_POST] = { "!$omp ordered depend(source)",
                           OTF2_REGION_ROLE_ORDERED, 1 },
    [OM_DOACROSS_WAIT] = { "!$omp ordered depend(sink)",
                           OTF2_REGION_ROLE_ORDERED, 1 },
    /* a worksharing construct of OpenMP 5.1 */
    [OM_SCOPE] = { "!$omp scope", OTF2_REGION_ROLE_WORKSHARE, 1 },
    /* one team's body on the host; no fork (libgomp runs the teams one
     * after another on the encountering thread): no PARALLEL role */
    [OM_TEAMS] = { "!$omp teams", OTF2_REGION_ROLE_CODE, 1 },
};

/* The module of address a, (re)reading the process's modules once when
 * it is not known yet (a library loaded since). busy held. */
static Dwfl_Module *module_of(uintptr_t a)
{
    Dwfl_Module *m = NULL;

    if (W.dwfl_failed)
        return NULL;
    for (int pass = 0; pass < 2 && !m; pass++) {
        if (pass == 1 || !W.dwfl) {
            if (!W.dwfl && !(W.dwfl = dwfl_begin(&weft__dwfl_self)))
                break;
            dwfl_report_begin(W.dwfl);
            if (dwfl_linux_proc_report(W.dwfl, getpid()) != 0 ||
                dwfl_report_end(W.dwfl, NULL, NULL) != 0) {
                W.dwfl_failed = 1;
                return NULL;
            }
        }
        m = dwfl_addrmodule(W.dwfl, a);
    }
    return m;
}

/* " (NAME)" of a named critical section whose lock is the symbol
 * .gomp_critical_user_NAME (GCC) or .gomp_critical_user_NAME.var
 * (clang), into buf; "" when not known or unnamed (clang's unnamed one
 * is .gomp_critical_user_.var). busy held. */
static void critical_name(const void *lock, char *buf, size_t len)
{
    static const char prefix[] = ".gomp_critical_user_";
    Dwfl_Module *m = module_of((uintptr_t)lock);
    const char *sym = m ? dwfl_module_addrname(m, (uintptr_t)lock) : NULL;
    size_t n;

    buf[0] = '\0';
    if (!sym || strncmp(sym, prefix, sizeof prefix - 1) != 0)
        return;
    sym += sizeof prefix - 1;
    n = strlen(sym);
    if (n >= 4 && strcmp(sym + n - 4, ".var") == 0)
        n -= 4;
    if (n > 0)
        snprintf(buf, len, " (%.*s)", (int)n, sym);
}

/* The source file and line of the instruction at a, from the DWARF of
 * its module; NULL when unknown. Through the address ranges of the
 * compilation units (.debug_aranges), else (clang emits none) by looking
 * at each unit. busy held. */
static const char *source_of(uintptr_t a, int *line)
{
    Dwfl_Module *m = module_of(a);
    Dwfl_Line *l = m ? dwfl_module_getsrc(m, a) : NULL;
    Dwarf_Die *cu = NULL;
    Dwarf_Addr bias;

    if (l)
        return dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL);
    while (m && (cu = dwfl_module_nextcu(m, cu, &bias)) != NULL) {
        Dwarf_Line *dl;
        if (dwarf_haspc(cu, a - bias) <= 0 ||
            !(dl = dwarf_getsrc_die(cu, a - bias)) ||
            dwarf_lineno(dl, line) != 0)
            continue;
        return dwarf_linesrc(dl, NULL, NULL);
    }
    return NULL;
}

/* Defines the region of cons at pc (lock). busy held. */
static OTF2_RegionRef define(enum om_construct cons, uintptr_t pc,
                             const void *lock)
{
    char name[600], label[200] = "", at[300] = "";
    weft__region_src src = { 0 };
    const char *file = NULL;
    int line = 0;

    if (cons == OM_CRITICAL && lock)
        critical_name(lock, label, sizeof label);
    if (constructs[cons].located && pc)
        file = source_of(pc - 1, &line);
    if (file && line > 0) {
        const char *base = strrchr(file, '/');
        snprintf(at, sizeof at, " @%s:%d", base ? base + 1 : file, line);
        src.file = file;
        src.begin_line = src.end_line = (uint32_t)line;
    }
    snprintf(name, sizeof name, "%s%s%s", constructs[cons].name, label, at);
    return weft__recorder_region_src(name, constructs[cons].role,
                                     OTF2_PARADIGM_OPENMP, &src);
}

static unsigned slot_of(enum om_construct cons, uintptr_t pc,
                        const void *lock)
{
    uint64_t h = (pc ^ ((uint64_t)cons << 56) ^ (uintptr_t)lock) *
                 0x9e3779b97f4a7c15ull;

    return (unsigned)(h >> 40) & (WHERE_SLOTS - 1);
}

/* The slot of the key, or the free slot where it would go. */
static where_slot *probe(enum om_construct cons, uintptr_t pc,
                         const void *lock)
{
    unsigned i = slot_of(cons, pc, lock);

    for (;;) {
        where_slot *s = &W.slot[i];
        uintptr_t k = atomic_load_explicit(&s->pc, memory_order_acquire);
        if (k == 0 || (k == pc && s->cons == cons && s->lock == lock))
            return s;
        i = (i + 1) & (WHERE_SLOTS - 1);
    }
}

/* See om.h. */
OTF2_RegionRef om_region(enum om_construct cons, const void *pcp,
                         const void *lock)
{
    uintptr_t pc = constructs[cons].located ? (uintptr_t)pcp : 1;
    OTF2_RegionRef r;
    where_slot *s;

    if (OM_LIKELY(last.pc == pc && last.cons == cons && last.lock == lock))
        return last.region;
    s = probe(cons, pc, lock);
    if (atomic_load_explicit(&s->pc, memory_order_acquire) != 0) {
        r = s->region;
    } else {
        while (atomic_flag_test_and_set_explicit(&W.busy,
                                                 memory_order_acquire))
            sched_yield();
        s = probe(cons, pc, lock);
        if (atomic_load_explicit(&s->pc, memory_order_relaxed) != 0) {
            r = s->region;
        } else if (W.used >= WHERE_SLOTS / 4 * 3) {
            r = define(cons, 0, lock); /* full: by construct alone */
        } else if ((r = define(cons, pc, lock)) != OTF2_UNDEFINED_REGION) {
            s->lock = lock;
            s->cons = (uint8_t)cons;
            s->region = r;
            atomic_store_explicit(&s->pc, pc, memory_order_release);
            W.used++;
        }
        atomic_flag_clear_explicit(&W.busy, memory_order_release);
    }
    if (r != OTF2_UNDEFINED_REGION) {
        last.pc = pc;
        last.cons = (uint8_t)cons;
        last.lock = lock;
        last.region = r;
    }
    return r;
}

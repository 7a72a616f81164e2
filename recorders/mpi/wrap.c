/* wrap.c - the MPI_<Name> wrappers of calls.def, their regions and the
 * one recursion guard (see wm.h).
 */
#include <errno.h>
#include <stdatomic.h>

#include "recorder.h"
#include "weft.h"
#include "wm.h"

/* Raised while this thread is inside a recorded MPI call: MPI calls made
 * from there (by MPI itself, by the hooks) are not recorded. wm_t: see
 * wm.h. */
__thread int wm_depth __attribute__((tls_model("initial-exec")));
__thread uint64_t wm_t __attribute__((tls_model("initial-exec")));

typedef struct wm_call {
    const char *name;
    OTF2_RegionRole role;
    OTF2_CollectiveOp op;
} wm_call;

#define OTF2_COLLECTIVE_OP_NONE 0
static const wm_call calls[WM__COUNT] = {
#define WM(Name, role_, op_, hook, params, args)                             \
    [WM_##Name] = { "MPI_" #Name, OTF2_REGION_ROLE_##role_,                  \
                    OTF2_COLLECTIVE_OP_##op_ },
#define WMC(Name, role_, op_, hook, params, args) WM(Name, role_, op_, hook, params, args)
#define WMK(Name, role_, op_, params, args, bytes) WM(Name, role_, op_, _, params, args)
#define WMKN(Name, role_, op_, params, args, bytes) WM(Name, role_, op_, _, params, args)
#include "calls.def"
    [WM_Init] = { "MPI_Init", OTF2_REGION_ROLE_ARTIFICIAL, 0 },
    [WM_Init_thread] = { "MPI_Init_thread", OTF2_REGION_ROLE_ARTIFICIAL, 0 },
    [WM_Finalize] = { "MPI_Finalize", OTF2_REGION_ROLE_ARTIFICIAL, 0 },
    [WM_Abort] = { "MPI_Abort", OTF2_REGION_ROLE_FUNCTION, 0 },
};

/* Each call's region (weft__recorder_region_once). */
static _Atomic uint32_t regions[WM__COUNT];

/* See wm.h. */
const char *wm_call_name(unsigned call)
{
    return calls[call].name;
}

/* See wm.h. */
OTF2_CollectiveOp wm_call_op(unsigned call)
{
    return calls[call].op;
}

/* See wm.h. */
OTF2_RegionRef wm_region(unsigned call)
{
    return weft__recorder_region_once(&regions[call], calls[call].name,
                                      calls[call].role, OTF2_PARADIGM_MPI);
}

/* See wm.h. */
int wm_begin(wm_frame *f, unsigned call)
{
    if (wm_depth || weft__inside || !wm_active())
        return 0;
    wm_depth++;
    weft__inside++; /* MPI's work and ours: other recorders keep out */
    f->saved_errno = errno;
    f->call = call;
    f->region = wm_region(call);
    wm_t = weft_time();
    weft_evt_Enter(NULL, wm_t, f->region);
    errno = f->saved_errno;
    return 1;
}

/* See wm.h. */
void wm_end(wm_frame *f)
{
    weft_evt_Leave(NULL, wm_t, f->region);
    weft__inside--;
    wm_depth--;
    errno = f->saved_errno;
}

/* See wm.h. */
uint64_t wm_bytes(int count, MPI_Datatype type)
{
    int size = 0;

    if (count <= 0 || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* ---- the wrappers ---------------------------------------------------- */

#define WM(Name, role, op, hook, params, args)                               \
    WM_WRAPPER(Name, params, args, wm_pre_##hook(&f_, WM_UNPAREN args),      \
               WM_PMPI(&f_, PMPI_##Name args),                               \
               wm_post_##hook(&f_, rc_, WM_UNPAREN args))
#define WMC(Name, role, op, hook, params, args)                              \
    WM_WRAPPER(Name, params, args, (void)0,                                  \
               wm_do_##hook(&f_, WM_UNPAREN args), (void)0)
#include "calls.def"
